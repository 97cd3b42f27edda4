"""``bgbot analyse FILE.mat``: every checker play and cube decision of a match compared with the bot's best.

Each game of a Jellyfish ``.mat`` file (:func:`bgbot.formats.matfile.read_match`) is replayed from the starting
position (:func:`bgbot.formats.matfile.replay`, which checks every play against the legal set) and every decision is
valued at the match score:

* checker play: the bot's ranking of the legal plays (:meth:`bgbot.api.Bot.rank_plays` at ``ply``); the error is the
  best play's value minus the played one's, in cubeless money equity for money play and, at a match score, in
  normalised equity (EMG: the match-winning-chance difference scaled by ``2 / (MWC(win cube) - MWC(lose cube))``,
  GNU Backgammon's ``mwc2eq``);
* cube: the decision before a roll where the player could double (rolling instead of doubling is the decision
  "no double"), a double, a take and a pass, by :meth:`bgbot.api.Bot.cube_action` from the ``ply``-ply cubeless
  probabilities (as ``bgbot cube --ply N``; exact in the two-sided bear-off class); errors are those of
  :class:`bgbot.cube.decision.CubeDecision` (normalised money equity, or MWC turned into EMG as above).

Marks follow GNU Backgammon 1.07's default analysis thresholds: an error of at least 0.030 is doubtful, 0.060 bad,
0.120 very bad. The summary per player gives, for checker play, cube and overall, the number of decisions, the total
error and the error rate (mean error per decision x 1000, GNU Backgammon's "mEMG"), and the count of each mark.
Counted decisions are GNU Backgammon's (``analysis.c``, ``updateStatcontext``): checker plays with more than one legal
play ("unforced moves"), and its "close or actual" cube decisions: every double, take and pass, and each roll where
the player could have doubled (not the game's first roll) with ``OPTIMAL - min(D/T, 1) < 0.16`` in normalised equity,
OPTIMAL being the best of No double and the taker's answer (``isCloseCubedecision`` in ``eval.c``).

Each decision carries its position as a GNU Backgammon Position ID and as an XGID (the right-hand player of the file is
XG's X, as in GNU Backgammon's text board; while a take or pass is decided, the doubler is on roll with the double
offered, ``:D:``), so a flagged decision can be looked up in either program.

Luck (GNU Backgammon's ``LuckAnalysis``): a roll's luck is the value of the best play with the roll drawn minus the mean
of that value over the 36 rolls (over the 30 non-doubles for a game's opening roll), in normalised equity; per player
the total and the rate (per roll x 1000), and GNU Backgammon's luck rating of the rate (per roll above +0.06 "Go to Las
Vegas", +0.03 "Good dice, man!", below -0.03 "Bad dice, man!", -0.06 "Go to bed", else "None"). bgbot values each roll
by its checker-play ranking (cubeless in money play, cubeful MWC turned into EMG at a match score); GNU Backgammon uses
its 0-ply cubeful equity, so the figures are close, not equal.

Rating (GNU Backgammon's ``GetRating``): the error rate per counted decision below 0.002 "Supernatural", 0.005 "World
class", 0.008 "Expert", 0.012 "Advanced", 0.018 "Intermediate", 0.026 "Casual player", 0.035 "Beginner", else "Awful!".

A file that breaks (cut short, or an unreadable or illegal action) is analysed up to the break, with a warning that says
where; a game without its result line is analysed as far as it goes, with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bgbot.api import Bot
from bgbot.cube.decision import normalised_equity, play_values
from bgbot.cube.janowski import MatchScore
from bgbot.cube.met import kazaross_xg2_extended
from bgbot.errors import BgbotError
from bgbot.evaluation.classes import cube_efficiencies
from bgbot.evaluation.evaluator import classified_probabilities
from bgbot.evaluation.selection import segment_argmax
from bgbot.files import unreadable
from bgbot.formats import matfile, positionid
from bgbot.formats.figures import figure
from bgbot.formats.xgid import XGID
from bgbot.rules.movegen import ROLL_WEIGHTS, ROLLS, generate_all_rolls
from bgbot.rules.outcomes import flip_probabilities
from bgbot.rules.state import CubeState, MatchState

__all__ = [
    "THRESHOLDS",
    "AnalysisError",
    "analyse_file",
    "analyse_text",
    "close_or_actual",
    "format_report",
    "luck_rating",
    "rating",
]

THRESHOLDS = (("very bad", 0.120), ("bad", 0.060), ("doubtful", 0.030))
"""GNU Backgammon 1.07's default analysis thresholds (``show analysis``), largest first."""
MARKS = ("doubtful", "bad", "very bad")
CLOSE_CUBE = 0.16
"""GNU Backgammon's ``isCloseCubedecision`` threshold (eval.c): a no-double counts when doubling costs less."""
RATINGS = (
    (0.002, "Supernatural"),
    (0.005, "World class"),
    (0.008, "Expert"),
    (0.012, "Advanced"),
    (0.018, "Intermediate"),
    (0.026, "Casual player"),
    (0.035, "Beginner"),
)
"""GNU Backgammon 1.07's ``arThrsRating`` (analysis.c): the rating of an error rate (per decision) below each bound."""
LUCK_RATINGS = ((-0.06, "Go to bed"), (-0.03, "Bad dice, man!"), (0.03, "None"), (0.06, "Good dice, man!"))
"""GNU Backgammon 1.07's ``getLuckRating`` (``Luck(rate * 10)`` against its 0.3/0.6 luck levels): the rating of a luck
rate (per roll) up to each bound, "Go to Las Vegas" above the last."""


class AnalysisError(BgbotError):
    """A match file that cannot be read or replayed."""


def mark(error: float) -> str | None:
    """The mark of an error (>= 0): "very bad", "bad", "doubtful" or None."""
    for name, threshold in THRESHOLDS:
        if error >= threshold - 1e-9:
            return name
    return None


def rating(error_rate: float) -> str:
    """GNU Backgammon's rating of an error rate (mean error per decision, normalised equity, >= 0), e.g. "Expert"."""
    return next((name for bound, name in RATINGS if error_rate < bound), "Awful!")


def luck_rating(luck_rate: float) -> str:
    """GNU Backgammon's luck rating of a luck rate (mean luck per roll, normalised equity), e.g. "None"."""
    return next((name for bound, name in LUCK_RATINGS if luck_rate <= bound), "Go to Las Vegas")


def _results(cube: CubeState, match: MatchState) -> tuple[float, float]:
    """The side on roll's MWC after winning and after losing the cube's value (cubeless), at a match score."""
    away_me, away_opp = match.away
    score = MatchScore(away_me, away_opp, cube.value, match.crawford, kazaross_xg2_extended())
    (w1, _, _), (l1, _, _) = score.results()
    return w1, l1


def _emg_scale(cube: CubeState, match: MatchState) -> float:
    """Factor turning an MWC difference into normalised equity (EMG) at this score and cube; 1 for money play."""
    if match.is_money:
        return 1.0
    w1, l1 = _results(cube, match)
    return 2.0 / (w1 - l1)


def _emg(values, cube: CubeState, match: MatchState) -> np.ndarray:
    """Values of the side on roll in normalised equity: money equity as it is, an MWC as GNU Backgammon's ``mwc2eq``
    (:func:`bgbot.cube.decision.normalised_equity`)."""
    return np.asarray(values, dtype=np.float64) if match.is_money else normalised_equity(values, cube, match)


@dataclass
class _Decision:
    game: int
    action: int
    side: int
    kind: str  # "checker" or "cube"
    what: str  # move, no_double, double, take, pass
    dice: tuple[int, int] | None
    played: str
    best: str
    error: float
    counted: bool
    position_id: str
    xgid: str
    luck: float | None = None

    def to_json(self, names) -> dict:
        return {
            "game": self.game,
            "action": self.action,
            "player": names[self.side],
            "side": self.side,
            "kind": self.kind,
            "decision": self.what,
            "dice": list(self.dice) if self.dice else None,
            "played": self.played,
            "best": self.best,
            "error": round(self.error, 6),
            "mark": mark(self.error),
            "counted": self.counted,
            "position_id": self.position_id,
            "xgid": self.xgid,
            "luck": None if self.luck is None else round(self.luck, 6),
        }


def close_or_actual(decision: str, nd: float, dt: float, dp: float) -> bool:
    """Whether a cube decision is one of GNU Backgammon's "close or actual" cube decisions (``updateStatcontext``).

    Args:
        decision: "no_double" (rolled where doubling was possible), "double", "take" or "pass".
        nd, dt, dp: No double, Double/take and Double/pass, the doubler's normalised equity (money: in cubes).

    Returns:
        True for every double, take and pass; a no-double when ``OPTIMAL - min(dt, 1) < 0.16`` with ``OPTIMAL =
        max(nd, min(dt, dp))`` (``isCloseCubedecision``, eval.c).
    """
    if decision != "no_double":
        return True
    return max(nd, min(dt, dp)) - min(dt, 1.0) < CLOSE_CUBE


def _ids(d: matfile.Decision) -> tuple[str, str]:
    """The decision's Position ID and XGID (the right-hand player is X; a take or pass: the double offered)."""
    on_roll = 1 - d.side if d.kind in ("take", "pass") else d.side
    xgid = XGID.from_states(d.position, d.cube, d.match, turn=1 if on_roll == 1 else -1, dice=d.dice)
    if d.kind in ("take", "pass"):
        xgid = replace(xgid, cube_action="D")
    return positionid.encode(d.position), xgid.to_string()


def _roll_values(bot: Bot, d: matfile.Decision) -> np.ndarray:
    """``(21,)`` float64: the value (normalised equity) of the best play with each roll of :data:`ROLLS`, for the side
    on roll of the decision's position, as :meth:`bgbot.api.Bot.rank_plays` at 0 ply values plays."""
    plays, _ = generate_all_rolls(d.position[None, :])  # row j: roll ROLLS[j]
    probs, _ = classified_probabilities(bot.evaluator, plays.afterstates)  # (M, 5), the opponent on roll
    x = 0.0 if d.match.is_money else cube_efficiencies(plays.afterstates)
    values = play_values(flip_probabilities(probs), x, d.cube, d.match)  # (M,) money equity or the mover's MWC
    return _emg(values[segment_argmax(values, plays.parent)], d.cube, d.match)


def _luck(bot: Bot, d: matfile.Decision, opening: bool) -> float:
    """GNU Backgammon's luck of the roll of a move decision: its best play's value minus the mean over the rolls."""
    assert d.dice is not None
    values = _roll_values(bot, d)
    weights = ROLL_WEIGHTS * (ROLLS[:, 0] != ROLLS[:, 1]) if opening else ROLL_WEIGHTS
    drawn = int(np.flatnonzero((ROLLS[:, 0] == min(d.dice)) & (ROLLS[:, 1] == max(d.dice)))[0])
    return float(values[drawn] - np.dot(values, weights) / weights.sum())


def _checker(bot: Bot, d: matfile.Decision, ply: int) -> tuple[str, str, float, bool]:
    assert d.dice is not None and d.afterstate is not None
    ranked = bot.rank_plays(d.position, d.dice, d.cube, d.match, ply=ply)
    target = bytes(np.asarray(d.afterstate, dtype=np.int8))
    chosen = next(r for r in ranked if bytes(r.afterstate) == target)
    best = ranked[0]
    if d.match.is_money:
        error = best.equity - chosen.equity
    else:
        assert best.mwc is not None and chosen.mwc is not None
        error = (best.mwc - chosen.mwc) * _emg_scale(d.cube, d.match)
    counted = len(ranked) > 1  # a choice between two plays or more
    return chosen.play, best.play, max(float(error), 0.0), counted


def _cube(bot: Bot, d: matfile.Decision, ply: int) -> tuple[str, str, float, bool]:
    if ply == 0 or bot.evaluate_with_class(d.position)[1] == "bearoff-two-sided":  # exact where the class allows
        decision = bot.cube_action(d.position, d.cube, d.match)
    else:  # the N-ply cubeless probabilities through the same formula, as `bgbot cube --ply N`
        probabilities = bot.cube_probabilities(d.position, ply=ply).to_array()
        decision = bot.cube_action(d.position, d.cube, d.match, probabilities=probabilities)
    scale = 1.0 if decision.unit == "equity" else _emg_scale(d.cube, d.match)
    errors = {k: v * scale for k, v in decision.errors.items()}
    if d.kind in ("no_double", "double"):
        error = errors["no_double" if d.kind == "no_double" else "double"]
        best = "double" if errors["no_double"] > errors["double"] else "no double"
        eq = decision.equities
        nd, dt, dp = _emg([eq["no_double"], eq["double_take"], eq["double_pass"]], d.cube, d.match)
        counted = close_or_actual(d.kind, float(nd), float(dt), float(dp))
        return ("no double" if d.kind == "no_double" else "double"), best, error, counted
    error = errors[d.kind]
    best = "take" if errors["take"] <= errors["pass"] else "pass"
    return d.kind, best, error, True


def _replayed(match: matfile.Match, jacoby: bool, source: str, warnings: list[str]) -> list[tuple[int, list]]:
    """Each game's number and decisions, up to the first action that cannot be replayed (then a warning)."""
    out = []
    for g in match.games:
        try:
            decisions = matfile.replay(g, match.length, jacoby, source=f"{source}, game {g.number}")
        except matfile.ReplayError as err:
            out.append((g.number, err.done))
            warnings.append(f"analysed up to where the match breaks: {err}")
            break
        out.append((g.number, decisions))
        if g.game.winner < 0:
            warnings.append(f"{source}, game {g.number}: no result line; analysed as far as it goes")
    return out


def analyse_match(
    bot: Bot,
    match: matfile.Match,
    ply: int = 0,
    jacoby: bool = True,
    source: str = "match",
    warnings: list[str] | None = None,
) -> dict:
    """Analyse a read match: ``{"names", "match_length", "ply", "thresholds", "warnings", "decisions": [...],
    "players": [...]}``.

    A game that breaks (an illegal play, a take without a double, ...) is analysed up to its last good action and the
    games after it are left out, with a warning in ``"warnings"`` (``warnings`` given are kept in front).

    Raises:
        AnalysisError: the first game breaks at its first action: nothing to analyse.
    """
    warnings = list(warnings or [])
    decisions: list[_Decision] = []
    for number, replayed in _replayed(match, jacoby, source, warnings):
        for d in replayed:
            pid, xgid = _ids(d)
            if d.kind == "move":
                played, best, error, counted = _checker(bot, d, ply)
                luck = _luck(bot, d, opening=d.turn == 0)
                decisions.append(
                    _Decision(
                        number,
                        d.turn + 1,
                        d.side,
                        "checker",
                        "move",
                        d.dice,
                        played,
                        best,
                        error,
                        counted,
                        pid,
                        xgid,
                        luck,
                    )
                )
            else:
                played, best, error, counted = _cube(bot, d, ply)
                decisions.append(
                    _Decision(number, d.turn + 1, d.side, "cube", d.kind, None, played, best, error, counted, pid, xgid)
                )
    if not decisions:
        raise AnalysisError(f"{source}: nothing to analyse: {'; '.join(warnings) or 'no decisions'}")
    players = []
    for side in (0, 1):
        entry: dict = {"name": match.names[side]}
        for group, kinds in (("checker", ("checker",)), ("cube", ("cube",)), ("overall", ("checker", "cube"))):
            mine = [d for d in decisions if d.side == side and d.kind in kinds and d.counted]
            total = float(sum(d.error for d in mine))
            entry[group] = {
                "decisions": len(mine),
                "error_total": round(total, 6),
                "error_rate": round(1000.0 * total / len(mine), 3) if mine else 0.0,
                "rating": rating(total / len(mine)) if mine else "N/A",
                "marks": {m: sum(mark(d.error) == m for d in mine) for m in MARKS},
            }
        rolls = [d.luck for d in decisions if d.side == side and d.luck is not None]
        luck = float(sum(rolls))
        entry["luck"] = {
            "rolls": len(rolls),
            "total": round(luck, 6),
            "rate": round(1000.0 * luck / len(rolls), 3) if rolls else 0.0,
            "rating": luck_rating(luck / len(rolls)) if rolls else "N/A",
        }
        players.append(entry)
    return {
        "names": list(match.names),
        "match_length": match.length,
        "games": len({d.game for d in decisions}),
        "ply": ply,
        "unit": "equity" if match.length == 0 else "emg",
        "thresholds": {name: t for name, t in THRESHOLDS},
        "warnings": warnings,
        "decisions": [d.to_json(match.names) for d in decisions],
        "players": players,
    }


def analyse_text(bot: Bot, text: str, ply: int = 0, source: str = "match") -> dict:
    """:func:`analyse_match` of ``.mat`` text; a file that cannot be read past some line is analysed up to that line,
    with a warning. Raises AnalysisError, bgbot.formats.matfile.MatFileError (nothing readable)."""
    warnings: list[str] = []
    try:
        match = matfile.read_match(text, source)
    except matfile.MatFileError as err:
        if err.line is None or err.line <= 1:
            raise
        try:
            match = matfile.read_match("\n".join(text.splitlines()[: err.line - 1]), source)
        except matfile.MatFileError:  # nothing readable before the break (no game yet): the break is the error
            raise err from None
        warnings.append(f"analysed up to where the file breaks: {err}")
    return analyse_match(bot, match, ply, source=source, warnings=warnings)


def analyse_file(bot: Bot, path: str | Path, ply: int = 0) -> dict:
    """:func:`analyse_text` of a file, with ``"file"`` added.

    Raises:
        AnalysisError: the file cannot be read (missing, a directory: :func:`bgbot.files.unreadable`'s message) or
            replayed.
        MatFileError: the text is not a match file.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise AnalysisError(unreadable("FILE.mat", path, err, "the .mat file's name")) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    result = analyse_text(bot, text, ply, source=str(path))
    return {"file": str(path), **result}


def format_report(result: dict) -> str:
    """The readable report: warnings, a summary per player, then every decision marked bad or very bad with its
    Position ID and XGID."""
    unit = "EMG" if result["unit"] == "emg" else "equity"
    kind = f"{result['match_length']}-point match" if result["match_length"] else "money session"
    lines = [f"warning: {w}" for w in result.get("warnings", [])]
    lines += [
        f"{result.get('file', 'match')}: {kind}, {result['games']} game(s), {result['names'][0]} vs "
        f"{result['names'][1]}; bgbot {result['ply']}-ply; errors in normalised {unit}",
        "",
        f"{'':24}" + "".join(f"{p['name'][:22]:>24}" for p in result["players"]),
    ]
    for group, title in (("checker", "Checker play"), ("cube", "Cube"), ("overall", "Overall")):
        lines.append(title)
        rows = [
            ("  decisions" if group != "cube" else "  close or actual", lambda s: f"{s['decisions']}"),
            ("  error total", lambda s: f"{s['error_total']:.3f}"),
            ("  error rate (x1000)", lambda s: f"{s['error_rate']:.1f}"),
            ("  rating", lambda s: s["rating"]),
        ] + [(f"  marked {m}", lambda s, m=m: f"{s['marks'][m]}") for m in MARKS]
        for label, fmt in rows:
            lines.append(f"{label:<24}" + "".join(f"{fmt(p[group]):>24}" for p in result["players"]))
    lines.append("Luck")
    for label, key, spec in (
        ("  rolls", "rolls", None),
        ("  luck total", "total", "+.3f"),
        ("  luck rate (x1000)", "rate", "+.1f"),
        ("  luck rating", "rating", None),
    ):
        cells = (p["luck"][key] for p in result["players"])
        lines.append(f"{label:<24}" + "".join(f"{str(v) if spec is None else figure(v, spec):>24}" for v in cells))
    flagged = [d for d in result["decisions"] if d["mark"] in ("bad", "very bad")]
    lines += ["", f"Decisions marked bad or very bad ({len(flagged)}):"]
    for d in flagged:
        dice = f" {max(d['dice'])}{min(d['dice'])}" if d["dice"] else ""
        lines.append(
            f"  game {d['game']:>2} action {d['action']:>3}  {d['player'][:16]:<16} {d['decision']:<9}{dice:<4} "
            f"played {d['played']!r}, best {d['best']!r}: -{d['error']:.3f} ({d['mark']})"
        )
        lines.append(f"      Position ID {d['position_id']}  {d['xgid']}")
    return "\n".join(lines)
