"""``bgbot analyse FILE.mat``: every checker play and cube decision of a match compared with the bot's best.

Each game of a Jellyfish ``.mat`` file (:func:`bgbot.formats.matfile.read_match`) is replayed from the starting
position (:func:`bgbot.formats.matfile.replay`, which checks every play against the legal set) and every decision is
valued at the match score:

* checker play: the bot's ranking of the legal plays (:meth:`bgbot.api.Bot.rank_plays` at ``ply``); the error is the
  best play's value minus the played one's, in cubeless money equity for money play and, at a match score, in
  normalised equity (EMG: the match-winning-chance difference scaled by ``2 / (MWC(win cube) - MWC(lose cube))``,
  GNU Backgammon's ``mwc2eq``);
* cube: the decision before a roll where the player could double (rolling instead of doubling is the decision
  "no double"), a double, a take and a pass, by :meth:`bgbot.api.Bot.cube_action`; errors are those of
  :class:`bgbot.cube.decision.CubeDecision` (normalised money equity, or MWC turned into EMG as above).

Marks follow GNU Backgammon 1.07's default analysis thresholds: an error of at least 0.030 is doubtful, 0.060 bad,
0.120 very bad. The summary per player gives, for checker play, cube and overall, the number of decisions, the total
error and the error rate (mean error per decision x 1000, GNU Backgammon's "mEMG"), and the count of each mark.
Counted decisions: checker plays with more than one legal play; doubles, takes, passes, and "no double" decisions
where doubling was at most a very bad error away (GNU Backgammon's "close or actual" cube decisions are similar).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot.api import Bot
from bgbot.cube.janowski import MatchScore
from bgbot.cube.met import kazaross_xg2
from bgbot.errors import BgbotError
from bgbot.formats import matfile
from bgbot.rules.movegen_scalar import legal_plays
from bgbot.rules.state import CubeState, MatchState

__all__ = ["THRESHOLDS", "AnalysisError", "analyse_file", "analyse_text", "format_report"]

THRESHOLDS = (("very bad", 0.120), ("bad", 0.060), ("doubtful", 0.030))
"""GNU Backgammon 1.07's default analysis thresholds (``show analysis``), largest first."""
MARKS = ("doubtful", "bad", "very bad")


class AnalysisError(BgbotError):
    """A match file that cannot be read or replayed."""


def mark(error: float) -> str | None:
    """The mark of an error (>= 0): "very bad", "bad", "doubtful" or None."""
    for name, threshold in THRESHOLDS:
        if error >= threshold - 1e-9:
            return name
    return None


def _emg_scale(cube: CubeState, match: MatchState) -> float:
    """Factor turning an MWC difference into normalised equity (EMG) at this score and cube; 1 for money play."""
    if match.is_money:
        return 1.0
    away_me, away_opp = match.away
    score = MatchScore(away_me, away_opp, cube.value, match.crawford, kazaross_xg2())
    (w1, _, _), (l1, _, _) = score.results()
    return 2.0 / (w1 - l1)


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
        }


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
    counted = len(legal_plays(d.position, *d.dice)) > 1
    return chosen.play, best.play, max(float(error), 0.0), counted


def _cube(bot: Bot, d: matfile.Decision) -> tuple[str, str, float, bool]:
    decision = bot.cube_action(d.position, d.cube, d.match)
    scale = 1.0 if decision.unit == "equity" else _emg_scale(d.cube, d.match)
    errors = {k: v * scale for k, v in decision.errors.items()}
    if d.kind in ("no_double", "double"):
        error = errors["no_double" if d.kind == "no_double" else "double"]
        best = "double" if errors["no_double"] > errors["double"] else "no double"
        counted = d.kind == "double" or errors["double"] < THRESHOLDS[0][1]
        return ("no double" if d.kind == "no_double" else "double"), best, error, counted
    error = errors[d.kind]
    best = "take" if errors["take"] <= errors["pass"] else "pass"
    return d.kind, best, error, True


def analyse_match(bot: Bot, match: matfile.Match, ply: int = 0, jacoby: bool = True, source: str = "match") -> dict:
    """Analyse a read match: ``{"names", "match_length", "ply", "thresholds", "decisions": [...], "players": [...]}``.

    Raises:
        AnalysisError: a game that cannot be replayed (illegal play, a take without a double, ...).
    """
    decisions: list[_Decision] = []
    for g in match.games:
        try:
            replayed = matfile.replay(g, match.length, jacoby, source=f"{source}, game {g.number}")
        except matfile.MatFileError as err:
            raise AnalysisError(str(err)) from None
        for d in replayed:
            if d.kind == "move":
                played, best, error, counted = _checker(bot, d, ply)
                decisions.append(
                    _Decision(g.number, d.turn + 1, d.side, "checker", "move", d.dice, played, best, error, counted)
                )
            else:
                played, best, error, counted = _cube(bot, d)
                decisions.append(
                    _Decision(g.number, d.turn + 1, d.side, "cube", d.kind, None, played, best, error, counted)
                )
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
                "marks": {m: sum(mark(d.error) == m for d in mine) for m in MARKS},
            }
        players.append(entry)
    return {
        "names": list(match.names),
        "match_length": match.length,
        "games": len(match.games),
        "ply": ply,
        "unit": "equity" if match.length == 0 else "emg",
        "thresholds": {name: t for name, t in THRESHOLDS},
        "decisions": [d.to_json(match.names) for d in decisions],
        "players": players,
    }


def analyse_text(bot: Bot, text: str, ply: int = 0, source: str = "match") -> dict:
    """:func:`analyse_match` of ``.mat`` text. Raises AnalysisError, bgbot.formats.matfile.MatFileError."""
    return analyse_match(bot, matfile.read_match(text, source), ply, source=source)


def analyse_file(bot: Bot, path: str | Path, ply: int = 0) -> dict:
    """:func:`analyse_text` of a file, with ``"file"`` added. Raises OSError, AnalysisError, MatFileError."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    result = analyse_text(bot, text, ply, source=str(path))
    return {"file": str(path), **result}


def format_report(result: dict) -> str:
    """The readable report: a summary per player, then every decision marked bad or very bad."""
    unit = "EMG" if result["unit"] == "emg" else "equity"
    kind = f"{result['match_length']}-point match" if result["match_length"] else "money session"
    lines = [
        f"{result.get('file', 'match')}: {kind}, {result['games']} game(s), {result['names'][0]} vs "
        f"{result['names'][1]}; bgbot {result['ply']}-ply; errors in normalised {unit}",
        "",
        f"{'':24}" + "".join(f"{p['name'][:22]:>24}" for p in result["players"]),
    ]
    for group, title in (("checker", "Checker play"), ("cube", "Cube"), ("overall", "Overall")):
        lines.append(title)
        rows = [
            ("  decisions", lambda s: f"{s['decisions']}"),
            ("  error total", lambda s: f"{s['error_total']:.3f}"),
            ("  error rate (x1000)", lambda s: f"{s['error_rate']:.1f}"),
        ] + [(f"  marked {m}", lambda s, m=m: f"{s['marks'][m]}") for m in MARKS]
        for label, fmt in rows:
            lines.append(f"{label:<24}" + "".join(f"{fmt(p[group]):>24}" for p in result["players"]))
    flagged = [d for d in result["decisions"] if d["mark"] in ("bad", "very bad")]
    lines += ["", f"Decisions marked bad or very bad ({len(flagged)}):"]
    for d in flagged:
        dice = f" {d['dice'][0]}{d['dice'][1]}" if d["dice"] else ""
        lines.append(
            f"  game {d['game']:>2} action {d['action']:>3}  {d['player'][:16]:<16} {d['decision']:<9}{dice:<4} "
            f"played {d['played']!r}, best {d['best']!r}: -{d['error']:.3f} ({d['mark']})"
        )
    return "\n".join(lines)
