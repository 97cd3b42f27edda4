"""Cubeful games for tournaments: money sessions with the doubling cube, and matches to N points.

The loop of :func:`bgbot.arena.tournament.play_games`, with a cube phase before every roll (after the opening roll, which
both sides throw). Everything stays batched over the games in flight:

1. **Cube phase.** For each player, the games where it is on roll and may double (:func:`bgbot.cube.decision.may_double`'s
   rule, vectorised: cube centred or its own; in match play not the Crawford game and not when the current cube
   already wins it the match) are evaluated in one call of :meth:`bgbot.arena.players.Player.probabilities` (its cubeless
   probabilities of the position before the roll; ``None`` = the player never doubles). The cube efficiency is
   :func:`bgbot.evaluation.classes.cube_efficiency` of each position; No double, Double/Take and Double/Pass come from the
   vectorised Janowski functions of :mod:`bgbot.cube.janowski` (money: normalised equity; match: match winning chance
   compared as normalised money equity, as :func:`bgbot.cube.decision.decide` does), and the proper action from
   :func:`bgbot.cube.decision._action`, GNU Backgammon's rule, so a double is offered exactly when :func:`bgbot.cube.decision.decide`
   says "Double", "Redouble" or "Optional double" (tests/test_cubeful.py checks the agreement). The opponent then
   decides with *its own* probabilities of the same position: it takes when Double/Take <= Double/Pass for the
   doubler (a player whose ``probabilities`` is ``None`` always takes). A take doubles the cube and gives it to the
   taker; a pass ends the game, the doubler scoring the cube value before the double.
2. **Roll and move**, exactly as in cubeless play; checker play stays cubeless (0-ply or the player's lookahead by
   cubeless money equity, also at a match score).

**Scoring.** A game scores 1, 2 or 3 times the cube value. Money: the Jacoby rule (when on) makes gammons and
backgammons single while the cube is centred. Match (``match_length`` N): a game's points go to the winner's score
(the full points are written in the ``.mat`` file, as GNU Backgammon does); the first to reach N wins the match.
Crawford rule: the game after a side first reaches N - 1 is the Crawford game (no doubling); later games are
post-Crawford. Jacoby and automatic doubles do not apply in match play; automatic doubles are not played at all.

**Dice.** Game 0 of every slot uses exactly the dice of cubeless play (:func:`bgbot.rules.dice.pair_dice`, opening
by :func:`bgbot.rules.dice.opening_dice`); game ``k`` of a match uses the same functions with the pairing key
``pairing + k * 2**24``. Both matches of a duplicate pair (seats swapped) therefore get the same dice for their
``k``-th game; the dice never depend on the batch or the worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgbot.cube import decision as cubemod
from bgbot.cube.janowski import MatchScore, emg_from_mwc, match_cubeful_mwc, money_cubeful
from bgbot.cube.met import kazaross_xg2
from bgbot.errors import BgbotError
from bgbot.evaluation.classes import cube_efficiency
from bgbot.formats import matfile
from bgbot.rules.board import game_result, starting_position

GAME_KEY = 1 << 24
"""The dice of game ``k`` of a match use the pairing key ``pairing + k * GAME_KEY``."""
MAX_GAMES = 1000
"""A match longer than this is a bug."""

A_DOUBLES, A_TAKES, A_PASSES = 0, 1, 2
"""Columns of the cube-action counts ``(2, 3)``: row 0 = player A, row 1 = player B."""


class CubefulError(BgbotError):
    """Bad cubeful settings (negative match length) or a game/match that ran away."""


@dataclass(frozen=True)
class CubeRules:
    """How cubeful games are played: ``match_length`` 0 = money session, else matches to that many points;
    ``jacoby`` (money only): gammons count single while the cube is centred."""

    match_length: int = 0
    jacoby: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.match_length, (int, np.integer)) or self.match_length < 0:
            raise CubefulError(f"match length must be an integer >= 0 (0 = money), got {self.match_length!r}")
        if self.match_length > kazaross_xg2().max_length:
            raise CubefulError(
                f"match length {self.match_length} is beyond the match equity table "
                f"({kazaross_xg2().max_length} points)"
            )

    @property
    def is_money(self) -> bool:
        return self.match_length == 0


# ------------------------------------------------------------------------------------------ batched cube decisions


def sanitize(probabilities) -> np.ndarray:
    """Net outputs -> consistent cumulative probabilities ``(N, 5)`` float64 (clipped to [0, 1], then
    wbg <= wg <= w and lbg <= lg <= 1 - w enforced), so tiny float32 inconsistencies never raise."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64).reshape(-1, 5), 0.0, 1.0)
    p[:, 1] = np.minimum(p[:, 1], p[:, 0])
    p[:, 2] = np.minimum(p[:, 2], p[:, 1])
    p[:, 3] = np.minimum(p[:, 3], 1.0 - p[:, 0])
    p[:, 4] = np.minimum(p[:, 4], p[:, 3])
    return p


def efficiencies(positions: np.ndarray) -> np.ndarray:
    """:func:`bgbot.evaluation.classes.cube_efficiency` of each position ``(N, 26)`` -> ``(N,)`` float64."""
    return np.array([cube_efficiency(p) for p in positions], dtype=np.float64)


def cube_values(
    p: np.ndarray,
    owner: np.ndarray,
    x: np.ndarray,
    rules: CubeRules,
    away: np.ndarray | None = None,
    cube: np.ndarray | None = None,
) -> np.ndarray:
    """No double, Double/Take, Double/Pass for the side on roll, in comparable units, ``(N, 3)`` float64.

    Args:
        p: ``(N, 5)`` cubeless probabilities of the side on roll (see :func:`sanitize`).
        owner: ``(N,)`` 0 cube centred, +1 the side on roll owns it (the opponent's cube is never asked about).
        x: ``(N,)`` cube efficiencies.
        rules: money (equity normalised to the cube) or match.
        away, cube: match only, ``(N, 2)`` points still needed by (side on roll, opponent) and ``(N,)`` cube values.

    Returns:
        Money: cubeful equities; match: normalised money equity of the match winning chances (gnubg's mwc2eq), the
        units :func:`bgbot.cube.decision.decide` compares them in.
    """
    n = len(p)
    out = np.empty((n, 3), dtype=np.float64)
    owner = np.asarray(owner)
    if rules.is_money:
        for o in (0, 1):
            m = owner == o
            if m.any():
                out[m, 0] = money_cubeful(p[m], o, rules.jacoby, x[m])
                out[m, 1] = 2.0 * money_cubeful(p[m], -1, rules.jacoby, x[m])
        out[:, 2] = 1.0
        return out
    met = kazaross_xg2()
    keys = np.column_stack([away, cube, owner]).astype(np.int64)
    for key in np.unique(keys, axis=0):
        m = (keys == key).all(axis=1)
        score = MatchScore(int(key[0]), int(key[1]), int(key[2]), False, met)
        nd = match_cubeful_mwc(p[m], score, int(key[3]), x[m])
        dt = match_cubeful_mwc(p[m], score.doubled(), -1, x[m])
        dp = np.full(int(m.sum()), score.mwc_if(0, score.cube))
        out[m] = np.column_stack([emg_from_mwc(v, score) for v in (nd, dt, dp)])
    return out


def offers_double(values: np.ndarray, p: np.ndarray, owner: np.ndarray, rules: CubeRules) -> np.ndarray:
    """Whether the side on roll doubles, ``(N,)`` bool: GNU Backgammon's proper action (:func:`bgbot.cube.decision._action`)
    from :func:`cube_values` is a double, redouble or optional double."""
    out = np.zeros(len(values), dtype=bool)
    nd, dt, dp = values[:, 0], values[:, 1], values[:, 2]
    gammon = p[:, 1] > 0.0
    # _action doubles only where DT >= ND, or where ND > DT > DP and no gammon is possible ("the double wins").
    for i in np.flatnonzero((dt >= nd) | ((dt > dp) & ~gammon)):
        optional_pass = bool(gammon[i]) and (not rules.is_money or owner[i] != 0 or not rules.jacoby)
        action = cubemod._action(
            float(nd[i]), float(dt[i]), float(dp[i]), bool(gammon[i]), optional_pass, bool(owner[i] == 1)
        )
        out[i] = action.startswith(("Double", "Redouble", "Optional"))
    return out


# -------------------------------------------------------------------------------------------------- game loop


@dataclass
class CubefulChunk:
    """Outcome of the slots (games for money, matches for match play) of pairs ``start .. stop - 1``.

    Per slot ``(2 * P,)`` (slot ``2k`` A in seat 0, ``2k + 1`` B in seat 0):
    money: ``points_a`` A's points in the game (cube and Jacoby included), ``kind`` 1/2/3 single/gammon/backgammon
    as played out (0 = ended by a pass), ``cube`` the final cube value; match: ``points_a`` +1 A won the match, -1 B
    won, ``score`` ``(2P, 2)`` final score (A, B), ``games`` games played. ``plies`` plies of checker play (all games
    of the slot). ``counts`` ``(2, 3)`` int64: doubles, takes, passes of A (row 0) and B (row 1).
    ``final`` ``(2P, 26)`` last position of each slot's last game (seen by the side that would be on roll; after a
    pass, the position the double was offered in). ``game_cubes`` per slot, the final cube value of each game.
    ``games_mat`` one list of :class:`bgbot.formats.matfile.Game` per slot when recording.
    """

    pairing: int
    start: int
    stop: int
    points_a: np.ndarray
    kind: np.ndarray
    cube: np.ndarray
    score: np.ndarray
    games: np.ndarray
    plies: np.ndarray
    counts: np.ndarray
    final: np.ndarray
    game_cubes: list = field(default_factory=list)
    games_mat: list = field(default_factory=list)


def play_games(
    player_a,
    player_b,
    seed: int,
    pairing: int,
    start: int,
    stop: int,
    rules: CubeRules,
    record: bool = False,
    max_plies: int = 5000,
) -> CubefulChunk:
    """Play the cubeful duplicate pairs ``start .. stop - 1`` of a pairing (games or matches), all advancing together.

    Args:
        player_a, player_b: :class:`bgbot.arena.players.Player` objects (``choose`` and ``probabilities``).
        seed, pairing: select the dice (module docstring).
        start, stop: the pair range.
        rules: :class:`CubeRules`.
        record: also return the games as :class:`bgbot.formats.matfile.Game` lists (left column = A), with cube lines.
        max_plies: a single game longer than this raises.

    Raises:
        CubefulError: a game or match that does not end.
    """
    from bgbot.rules.dice import opening_dice, pair_dice

    pairs = np.arange(start, stop)
    n = 2 * len(pairs)
    money = rules.is_money
    length = rules.match_length
    pair = np.repeat(pairs, 2)
    a_seat = np.tile([0, 1], len(pairs))
    players = (player_a, player_b)
    game_no = np.zeros(n, dtype=np.int64)
    opening = np.empty((n, 2), dtype=np.int8)
    seat = np.zeros(n, dtype=np.int64)
    pos = np.tile(starting_position(), (n, 1))
    turn = np.zeros(n, dtype=np.int64)
    cube = np.ones(n, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)  # -1 centred, else the seat that owns it
    score = np.zeros((n, 2), dtype=np.int64)  # by seat
    crawford_now = np.zeros(n, dtype=bool)
    crawford_done = np.zeros(n, dtype=bool)
    points_a = np.zeros(n, dtype=np.int64)
    kind = np.zeros(n, dtype=np.int8)
    final_cube = np.ones(n, dtype=np.int64)
    plies = np.zeros(n, dtype=np.int64)
    counts = np.zeros((2, 3), dtype=np.int64)
    active = np.ones(n, dtype=bool)
    game_cubes: list[list[int]] = [[] for _ in range(n)]
    turns: list[list] = [[] for _ in range(n)]
    slot_games: list[list] = [[] for _ in range(n)]

    def new_games(idx: np.ndarray) -> None:
        if len(idx) == 0:
            return
        opening[idx] = opening_dice(seed, (pairing + game_no[idx] * GAME_KEY)[:, None], pair[idx])
        seat[idx] = (opening[idx, 1] > opening[idx, 0]).astype(np.int64)
        pos[idx] = starting_position()
        turn[idx] = 0
        cube[idx] = 1
        owner[idx] = -1

    def side_of(idx: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Column (0 = A, 1 = B) of seat ``s`` in slots ``idx``."""
        return (s != a_seat[idx]).astype(np.int64)

    def finish(idx: np.ndarray, winner_seat: np.ndarray, pts: np.ndarray, how: np.ndarray) -> None:
        """Games in slots ``idx`` are over: ``winner_seat`` scores ``pts``; ``how`` 0 pass, 1..3 played out."""
        if len(idx) == 0:
            return
        win_col = side_of(idx, winner_seat)
        for j, g in enumerate(idx):
            game_cubes[g].append(int(cube[g]))
            if record:
                slot_games[g].append(matfile.Game(tuple(turns[g]), int(win_col[j]), int(pts[j])))
                turns[g] = []
        if money:
            points_a[idx] = np.where(win_col == 0, pts, -pts)
            kind[idx] = how
            final_cube[idx] = cube[idx]
            active[idx] = False
            return
        score[idx, winner_seat] += pts
        over = score[idx].max(axis=1) >= length
        done = idx[over]
        points_a[done] = np.where(side_of(done, winner_seat[over]) == 0, 1, -1)
        active[done] = False
        go = idx[~over]
        crawford_done[go] |= crawford_now[go]
        crawford_now[go] = ~crawford_done[go] & (score[go] == length - 1).any(axis=1)
        game_no[go] += 1
        if len(go) and game_no[go].max() >= MAX_GAMES:
            raise CubefulError(f"a match of pairing {pairing} ran past {MAX_GAMES} games")
        new_games(go)

    new_games(np.arange(n))
    while active.any():
        # -- cube phase: before the roll, after the opening
        idx = np.flatnonzero(active & (turn > 0) & ((owner == -1) | (owner == seat)))
        if not money and len(idx):
            ok = ~crawford_now[idx] & (length - score[idx, seat[idx]] > cube[idx])
            idx = idx[ok]
        if len(idx):
            roller_col = side_of(idx, seat[idx])
            doubled = np.zeros(len(idx), dtype=bool)
            own = (owner[idx] == seat[idx]).astype(np.int64)
            away = (
                None if money else np.column_stack([length - score[idx, seat[idx]], length - score[idx, 1 - seat[idx]]])
            )
            for col in (0, 1):
                m = roller_col == col
                if not m.any():
                    continue
                probs = players[col].probabilities(pos[idx[m]])
                if probs is None:
                    continue
                p = sanitize(probs)
                vals = cube_values(
                    p, own[m], efficiencies(pos[idx[m]]), rules, None if money else away[m], cube[idx[m]]
                )
                doubled[m] = offers_double(vals, p, own[m], rules)
            if doubled.any():
                d_idx = idx[doubled]
                d_col = roller_col[doubled]
                take = np.ones(len(d_idx), dtype=bool)
                for col in (0, 1):
                    m = d_col == col  # doubler's column; the taker is the other player
                    if not m.any():
                        continue
                    counts[col, A_DOUBLES] += int(m.sum())
                    probs = players[1 - col].probabilities(pos[d_idx[m]])
                    if probs is not None:
                        p = sanitize(probs)
                        vals = cube_values(
                            p,
                            (owner[d_idx[m]] == seat[d_idx[m]]).astype(np.int64),
                            efficiencies(pos[d_idx[m]]),
                            rules,
                            None if money else away[doubled][m],
                            cube[d_idx[m]],
                        )
                        take[m] = vals[:, 1] <= vals[:, 2]
                    counts[1 - col, A_TAKES] += int(take[m].sum())
                    counts[1 - col, A_PASSES] += int((~take[m]).sum())
                if record:
                    for j, g in enumerate(d_idx):
                        turns[g].append(matfile.CubeAction(int(d_col[j]), "double", int(2 * cube[g])))
                        turns[g].append(matfile.CubeAction(1 - int(d_col[j]), "take" if take[j] else "pass"))
                t_idx = d_idx[take]
                cube[t_idx] *= 2
                owner[t_idx] = 1 - seat[t_idx]
                p_idx = d_idx[~take]
                finish(p_idx, seat[p_idx].copy(), cube[p_idx].copy(), np.zeros(len(p_idx), dtype=np.int8))
        # -- roll and move
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        if turn[idx].max() >= max_plies:
            raise CubefulError(f"a game of pairing {pairing}, pair range {start}..{stop} ran past {max_plies} plies")
        dice = np.where(
            (turn[idx] == 0)[:, None],
            opening[idx],
            pair_dice(seed, pairing + game_no[idx] * GAME_KEY, pair[idx], turn[idx]),
        )
        before = pos[idx]
        after = np.empty_like(before)
        mover_col = side_of(idx, seat[idx])
        for col in (0, 1):
            m = mover_col == col
            if m.any():
                after[m] = players[col].choose(before[m], dice[m])
        if record:
            for j, g in enumerate(idx):
                steps = matfile.play_steps(before[j], dice[j], after[j])
                turns[g].append(matfile.Turn(int(mover_col[j]), (int(dice[j, 0]), int(dice[j, 1])), steps))
        pos[idx] = after
        plies[idx] += 1
        result = game_result(after)  # negative: the mover won
        done = result != 0
        d_idx = idx[done]
        won = -result[done].astype(np.int64)
        if money and rules.jacoby:
            won = np.where(owner[d_idx] == -1, 1, won)
        mover_seat = seat[d_idx].copy()
        seat[idx] ^= 1
        turn[idx] += 1
        finish(d_idx, mover_seat, won * cube[d_idx], (-result[done]).astype(np.int8))
    return CubefulChunk(
        pairing,
        start,
        stop,
        points_a,
        kind,
        final_cube,
        _by_column(score, a_seat),
        game_no + 1,
        plies,
        counts,
        pos,
        game_cubes,
        slot_games if record else [],
    )


def _by_column(score: np.ndarray, a_seat: np.ndarray) -> np.ndarray:
    """Scores by seat ``(G, 2)`` -> by player (A, B)."""
    out = score.copy()
    swap = a_seat == 1
    out[swap] = score[swap][:, ::-1]
    return out


# -------------------------------------------------------------------------------------------------- statistics


def _actions(counts: np.ndarray) -> dict:
    """``(2, 3)`` counts -> ``{"a": {"doubles", "takes", "passes"}, "b": {...}}``."""
    return {
        s: {"doubles": int(counts[r, A_DOUBLES]), "takes": int(counts[r, A_TAKES]), "passes": int(counts[r, A_PASSES])}
        for r, s in ((0, "a"), (1, "b"))
    }


def summarize_money(chunks: list[CubefulChunk]) -> dict:
    """Statistics of a pairing's cubeful money games: :func:`bgbot.arena.stats.summarize`'s ppg and 95% t-interval
    over duplicate pairs (points include the cube), each side's win / gammon / backgammon rates (games played out to
    a gammon or backgammon, whatever the cube) and pass-win rate, the cube actions of each player and the mean final
    cube value."""
    from bgbot.arena.stats import summarize

    points = np.concatenate([c.points_a for c in chunks])
    kind = np.concatenate([c.kind for c in chunks])
    cubes = np.concatenate([c.cube for c in chunks])
    out = summarize(points)

    def side(s: int) -> dict:
        won = s * points > 0
        return {
            "win_rate": float(won.mean()),
            "gammon_rate": float((won & (kind >= 2)).mean()),
            "backgammon_rate": float((won & (kind >= 3)).mean()),
            "won_by_pass_rate": float((won & (kind == 0)).mean()),
        }

    counts = sum(c.counts for c in chunks)
    return {
        **out,
        "stats_a": side(1),
        "stats_b": side(-1),
        "cube_actions": _actions(counts),
        "mean_final_cube": float(cubes.mean()),
        "max_cube": int(cubes.max()),
        "mean_plies": float(np.concatenate([c.plies for c in chunks]).mean()),
    }


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (95% by default) -> (low, high)."""
    if n == 0:
        return float("nan"), float("nan")
    ph = k / n
    den = 1 + z * z / n
    centre = (ph + z * z / (2 * n)) / den
    half = z * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return float(centre - half), float(centre + half)


def summarize_matches(chunks: list[CubefulChunk]) -> dict:
    """Statistics of a pairing's matches: A's match-win rate with a 95% t-interval over duplicate match pairs
    (``ci_low``, ``ci_high``; the two matches of a pair share their dice) and, treating matches as independent,
    the Wilson interval (``wilson_low``, ``wilson_high``); games per match; cube actions; mean cube value of the
    games played."""
    from scipy import stats

    won = np.concatenate([c.points_a for c in chunks]) > 0
    pair_means = (won[0::2].astype(np.float64) + won[1::2]) / 2.0
    n = len(pair_means)
    rate = float(won.mean())
    se = float(pair_means.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    half = float(stats.t.ppf(0.975, n - 1) * se) if n > 1 else float("nan")
    lo, hi = wilson(int(won.sum()), len(won))
    games = np.concatenate([c.games for c in chunks])
    cubes = [v for c in chunks for g in c.game_cubes for v in g]
    counts = sum(c.counts for c in chunks)
    return {
        "matches": int(len(won)),
        "pairs": n,
        "match_win_rate": rate,
        "stderr": se,
        "ci_low": rate - half,
        "ci_high": rate + half,
        "ci_half_width": half,
        "wilson_low": lo,
        "wilson_high": hi,
        "wins_a": int(won.sum()),
        "wins_b": int((~won).sum()),
        "games_played": int(games.sum()),
        "mean_games_per_match": float(games.mean()),
        "cube_actions": _actions(counts),
        "mean_cube": float(np.mean(cubes)),
        "max_cube": int(max(cubes)),
        "final_scores": np.concatenate([c.score for c in chunks]).tolist(),
    }


def format_table(results: dict) -> str:
    """The printed report of a cubeful tournament (money: ppg with its 95% CI; match: match-win rate with its 95% CI),
    cube actions of each side (D/T/P = doubles offered, takes, passes) and the ranking."""
    rules = results["cube"]
    w = max(len(n) for n in results["players"] + ["player"])
    acts = "D/T/P(A)  D/T/P(B)"
    if rules["match_length"]:
        lines = [
            f"{results['games']} {rules['match_length']}-point matches per pairing (duplicate dice per match "
            f"pair, seed {results['seed']}, Crawford rule); {results['games_per_s']:.2f} matches/s with "
            f"{results['workers']} worker(s)",
            "",
            f"{'A':<{w}}  {'B':<{w}}  {'win(A)':>6}  {'95% CI':>16}  {'Wilson':>16}  {'games':>5}  {acts}  {'cube':>5}",
        ]
        for r in results["pairings"]:
            a, b = r["cube_actions"]["a"], r["cube_actions"]["b"]
            lines.append(
                f"{r['a']:<{w}}  {r['b']:<{w}}  {r['match_win_rate']:6.1%}  "
                f"[{r['ci_low']:6.1%}, {r['ci_high']:6.1%}]  [{r['wilson_low']:6.1%}, {r['wilson_high']:6.1%}]"
                f"  {r['mean_games_per_match']:5.2f}  {_dtp(a):>8}  {_dtp(b):>8}  {r['mean_cube']:5.2f}"
            )
        head = "Ranking (mean match-win rate over its pairings, 95% CI half-width):"
        fmt = "{:6.1%} ± {:.1%}"
    else:
        lines = [
            f"{results['games']} cubeful money games per pairing (duplicate dice, seed {results['seed']}, Jacoby "
            f"{'on' if rules['jacoby'] else 'off'}); {results['games_per_s']:.1f} games/s with "
            f"{results['workers']} worker(s)",
            "",
            f"{'A':<{w}}  {'B':<{w}}  {'ppg(A)':>7}  {'95% CI':>18}  {'winA':>6}  {'gamA':>6}  {'gamB':>6}"
            f"  {acts}  {'cube':>5}",
        ]
        for r in results["pairings"]:
            a, b = r["cube_actions"]["a"], r["cube_actions"]["b"]
            lines.append(
                f"{r['a']:<{w}}  {r['b']:<{w}}  {r['ppg']:+7.3f}  [{r['ci_low']:+7.3f}, {r['ci_high']:+7.3f}]"
                f"  {r['stats_a']['win_rate']:6.1%}  {r['stats_a']['gammon_rate']:6.1%}"
                f"  {r['stats_b']['gammon_rate']:6.1%}  {_dtp(a):>8}  {_dtp(b):>8}"
                f"  {r['mean_final_cube']:5.2f}"
            )
        head = "Ranking (mean ppg over its pairings, 95% CI half-width):"
        fmt = "{:+7.3f} ± {:.3f}"
    cube_note = "mean cube value of the games played" if rules["match_length"] else "mean final cube value"
    lines += ["", f"D/T/P = doubles offered / takes / passes by that player; cube = {cube_note}", "", head]
    for k, r in enumerate(results["ranking"], 1):
        lines.append(f"{k:2d}. {r['player']:<{w}}  " + fmt.format(r["value"], r["ci_half_width"]))
    if results.get("worker_restarts"):
        lines.append(f"(a worker died {results['worker_restarts']} time(s); its games were replayed)")
    return "\n".join(lines)


def _dtp(a: dict) -> str:
    return f"{a['doubles']}/{a['takes']}/{a['passes']}"
