"""Bot-vs-bot tournaments with duplicate dice, confidence intervals, parallel workers and ``.mat`` output.

**Duplicate dice.** Games come in pairs. Both games of pair ``k`` of a pairing use the same dice, a pure function of
``(seed, pairing, k, turn)`` (a counter-based hash, :func:`pair_dice`), so results do not depend on how games are split
between workers or batched. Game ``2k`` seats player A in seat 0, game ``2k + 1`` seats player B there. The opening
follows the rules: each seat rolls one die (ties are rolled again), the higher die moves first with both dice, so the
opening play is never a double; seat 0's die stays with seat 0, so the opening roll goes to A in one game and to B in
the other, and every later roll one player got in the first game the other gets in the second. A pair of equal players
sums to exactly 0 (tests/test_tournament.py checks pubeval against itself).

**Scoring.** Cubeless money: 1 point a single game, 2 a gammon, 3 a backgammon. Points per game (ppg) of A is the mean
over pairs of (A's points in both games) / 2, with a 95% Student-t interval over the pair means: the two games of a
pair are strongly (negatively) correlated, so the pairs, not the games, are the independent samples.

**Parallel play.** A pairing's pairs are cut into chunks of :data:`CHUNK_PAIRS` (a constant, not a function of the
worker count: the batches a net sees, hence its floating-point results, are the same for any ``workers``). Chunks run
in a spawn-started process pool; inside a chunk all games advance together: each ply, one batched ``choose`` call per
player for every game where it is on roll. A chunk whose worker dies is replayed (up to :data:`MAX_ATTEMPTS` times, then
:class:`TournamentError`), so no game is lost silently.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from bgbot.arena import cubeful
from bgbot.arena.players import Player, display_name, make_player
from bgbot.arena.stats import summarize
from bgbot.errors import BgbotError
from bgbot.formats import matfile
from bgbot.rules.board import game_result, starting_position
from bgbot.rules.dice import opening_dice, pair_dice

CHUNK_PAIRS = 250
"""Duplicate pairs (2 games each) per work unit."""
MAX_ATTEMPTS = 3
"""How often a chunk is started before a dying worker is reported as an error."""
MAX_PLIES = 5000
"""A game longer than this is a bug in a player or the rules (real games last about 60 plies)."""
CRASH_ENV = "BGBOT_TEST_CRASH_ONCE"
"""Test hook: when this names a file that does not exist, the first pool worker to start a chunk creates it and
exits abruptly (``os._exit``), as a killed worker would."""


class TournamentError(BgbotError):
    """A tournament that cannot run: fewer than two players, an odd or non-positive game count, a chunk that
    kept dying."""


# -- dice ---------------------------------------------------------------------------------------------------------


# -- one chunk of games -------------------------------------------------------------------------------------------


@dataclass
class ChunkResult:
    """Outcome of the games of pairs ``start .. stop - 1`` of one pairing.

    ``points_a`` ``(2 * P,)`` int8: A's points in each game (game ``2k`` A in seat 0, ``2k + 1`` B in seat 0);
    ``plies`` ``(2 * P,)`` int32; ``final`` ``(2 * P, 26)`` int8 each game's last position, seen by the loser (the
    side that would be on roll); ``games_mat`` the games as :class:`bgbot.formats.matfile.Game` when recording, else empty.
    """

    pairing: int
    start: int
    stop: int
    points_a: np.ndarray
    plies: np.ndarray
    final: np.ndarray
    games_mat: list = field(default_factory=list)


def play_games(
    player_a: Player, player_b: Player, seed: int, pairing: int, start: int, stop: int, record: bool = False
) -> ChunkResult:
    """Play the duplicate pairs ``start .. stop - 1`` of a pairing, all games advancing together.

    Args:
        player_a, player_b: the two players (``choose`` is called once per ply for each, batched).
        seed, pairing: select the dice (see :func:`pair_dice`).
        start, stop: the pair range.
        record: also return each game as a :class:`bgbot.formats.matfile.Game` (left column = A).

    Raises:
        TournamentError: a game ran past :data:`MAX_PLIES`.
    """
    pairs = np.arange(start, stop)
    n = 2 * len(pairs)
    pair = np.repeat(pairs, 2)  # (G,) dice key of each game
    a_seat = np.tile([0, 1], len(pairs))  # (G,) A sits in seat 0 in even games
    opening = np.repeat(opening_dice(seed, pairing, pairs), 2, axis=0)  # (G, 2) dice of seat 0, seat 1
    seat = (opening[:, 1] > opening[:, 0]).astype(np.int64)  # (G,) seat on roll: the higher die starts
    pos = np.tile(starting_position(), (n, 1))  # (G, 26) from the side on roll
    turn = np.zeros(n, dtype=np.int64)
    points_a = np.zeros(n, dtype=np.int8)
    plies = np.zeros(n, dtype=np.int32)
    active = np.ones(n, dtype=bool)
    log: list[tuple] = []
    while active.any():
        idx = np.flatnonzero(active)
        if turn[idx].max() >= MAX_PLIES:
            raise TournamentError(f"a game of pairing {pairing}, pair range {start}..{stop} ran past {MAX_PLIES} plies")
        dice = np.where((turn[idx] == 0)[:, None], opening[idx], pair_dice(seed, pairing, pair[idx], turn[idx]))
        before = pos[idx]
        after = np.empty_like(before)
        a_to_move = seat[idx] == a_seat[idx]
        for player, mask in ((player_a, a_to_move), (player_b, ~a_to_move)):
            if mask.any():
                after[mask] = player.choose(before[mask], dice[mask])
        if record:
            log.append((idx, dice, before, after, a_to_move))
        pos[idx] = after
        result = game_result(after)  # (K,) from the opponent's side: negative = the mover won
        done = result != 0
        won = -result[done].astype(np.int8)
        points_a[idx[done]] = np.where(a_to_move[done], won, -won)
        plies[idx] = turn[idx] + 1
        active[idx[done]] = False
        seat[idx] ^= 1
        turn[idx] += 1
    games = _record_games(log, points_a, n) if record else []
    return ChunkResult(pairing, start, stop, points_a, plies, pos, games)


def _record_games(log, points_a: np.ndarray, n: int) -> list:
    """Turn the ply log into one :class:`bgbot.formats.matfile.Game` per game (left column = player A)."""
    turns: list[list] = [[] for _ in range(n)]
    for idx, dice, before, after, a_to_move in log:
        for j, g in enumerate(idx):
            steps = matfile.play_steps(before[j], dice[j], after[j])
            turns[g].append(matfile.Turn(0 if a_to_move[j] else 1, (int(dice[j, 0]), int(dice[j, 1])), steps))
    return [matfile.Game(tuple(turns[g]), 0 if points_a[g] > 0 else 1, abs(int(points_a[g]))) for g in range(n)]


# -- worker side --------------------------------------------------------------------------------------------------

_PLAYERS: dict = {}


def _player(spec, seed: int) -> Player:
    """A player from a spec string (built once per process) or a ready :class:`Player`."""
    if isinstance(spec, Player):
        return spec
    key = (spec, seed)
    if key not in _PLAYERS:
        _PLAYERS[key] = make_player(spec, seed=seed)
    return _PLAYERS[key]


def _worker_init() -> None:
    """One torch thread and one BLAS thread per worker process: the workers are the parallelism."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1, user_api="blas")


def _run_chunk(task: tuple):
    spec_a, spec_b, seed, pairing, start, stop, record, rules = task
    marker = os.environ.get(CRASH_ENV)
    if marker and multiprocessing.parent_process() is not None and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(17)
    a, b = _player(spec_a, seed), _player(spec_b, seed)
    if rules is None:
        return play_games(a, b, seed, pairing, start, stop, record)
    return cubeful.play_games(a, b, seed, pairing, start, stop, rules, record, max_plies=MAX_PLIES)


def _run_tasks(tasks: list[tuple], workers: int) -> tuple[list[ChunkResult], int]:
    """Run chunk tasks in this process (``workers <= 1``) or a spawn pool -> (results in task order, pool restarts)."""
    if workers <= 1:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return [_run_chunk(t) for t in tasks], 0
        finally:
            torch.set_num_threads(threads)
    results: dict[int, ChunkResult] = {}
    attempts = dict.fromkeys(range(len(tasks)), 0)
    restarts = 0
    ctx = multiprocessing.get_context("spawn")
    while len(results) < len(tasks):
        todo = [i for i in range(len(tasks)) if i not in results]
        for i in todo:
            attempts[i] += 1
            if attempts[i] > MAX_ATTEMPTS:
                t = tasks[i]
                raise TournamentError(
                    f"pairs {t[4]}..{t[5]} of pairing {t[3]} failed {MAX_ATTEMPTS} times "
                    "(a worker process died each time)"
                )
        with ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx, initializer=_worker_init) as pool:
            futures = {pool.submit(_run_chunk, tasks[i]): i for i in todo}
            try:
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
            except BrokenProcessPool:
                restarts += 1
                for fut, i in futures.items():
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        results[i] = fut.result()
    return [results[i] for i in range(len(tasks))], restarts


# -- statistics ---------------------------------------------------------------------------------------------------


# -- tournaments --------------------------------------------------------------------------------------------------


def _name(spec) -> str:
    return spec.name if isinstance(spec, Player) else display_name(spec)


def run(
    players: list,
    games: int,
    seed: int = 0,
    workers: int = 1,
    out_dir: str | Path | None = None,
    chunk_pairs: int = CHUNK_PAIRS,
    cube: bool = False,
    match_length: int = 0,
    jacoby: bool = True,
) -> dict:
    """Round robin of every pairing of ``players``, ``games`` duplicate games (or matches) each.

    Args:
        players: spec strings (see :func:`bgbot.arena.players.make_player`) or :class:`Player` objects (picklable for
            ``workers > 1``), at least two. In pairing (i, j), i < j, player i is A.
        games: games per pairing, even (``games / 2`` duplicate pairs), >= 2.
        seed: selects the dice (and the random player's choices).
        workers: processes; 1 plays in this process.
        out_dir: when given, each pairing's games are written to ``out_dir/NN_A_vs_B.mat``.
        chunk_pairs: pairs per work unit (results do not depend on it only when players are deterministic functions
            of their input batch; keep the default to compare runs).
        cube: play cubeful money games (:mod:`bgbot.arena.cubeful`; ``jacoby`` sets the Jacoby rule).
        match_length: > 0 plays matches to that many points (cubeful, Crawford rule); ``games`` then counts matches
            and the ``.mat`` output is one file per match, ``out_dir/NN_A_vs_B_MMMM.mat``.

    Returns:
        A JSON-able dict: ``players`` (names), ``specs``, ``seed``, ``games``, ``pairings`` (one dict per pairing:
        ``a``, ``b``, :func:`summarize`'s fields, ``mean_plies``, ``mat_file``), ``ranking`` (players by mean ppg over
        their pairings, best first, with a 95% normal half-width), ``elapsed_s``, ``games_per_s``, ``worker_restarts``.
        Cubeful: also ``cube`` (the rules); each pairing has :func:`bgbot.arena.cubeful.summarize_money`'s or
        :func:`bgbot.arena.cubeful.summarize_matches`' fields (match-win rate instead of ppg) and ranks by that value.

    Raises:
        TournamentError: fewer than two players, or a bad game count; :class:`bgbot.arena.players.PlayerSpecError`.
    """
    if len(players) < 2:
        raise TournamentError(f"a tournament needs at least two players, got {players!r}")
    if not isinstance(games, (int, np.integer)) or games < 2 or games % 2:
        raise TournamentError(f"games per pairing must be an even number >= 2 (duplicate pairs), got {games!r}")
    rules = cubeful.CubeRules(int(match_length), bool(jacoby)) if (cube or match_length) else None
    for spec in players:  # fail fast, in this process, on a bad spec
        _player(spec, seed)
    names = [_name(s) for s in players]
    names = [n if names.count(n) == 1 else f"{n}#{names[: i + 1].count(n)}" for i, n in enumerate(names)]  # unique
    pairings = list(combinations(range(len(players)), 2))
    n_pairs = games // 2
    record = out_dir is not None
    tasks = [
        (players[i], players[j], seed, k, s, min(s + chunk_pairs, n_pairs), record, rules)
        for k, (i, j) in enumerate(pairings)
        for s in range(0, n_pairs, chunk_pairs)
    ]
    t0 = time.perf_counter()
    chunks, restarts = _run_tasks(tasks, workers)
    elapsed = time.perf_counter() - t0
    rows = []
    for k, (i, j) in enumerate(pairings):
        mine = [c for c in chunks if c.pairing == k]
        row = {"a": names[i], "b": names[j], "spec_a": _spec_str(players[i]), "spec_b": _spec_str(players[j])}
        if rules is None:
            points = np.concatenate([c.points_a for c in mine])
            row |= {**summarize(points), "mean_plies": float(np.concatenate([c.plies for c in mine]).mean())}
        elif rules.is_money:
            row |= cubeful.summarize_money(mine)
        else:
            row |= cubeful.summarize_matches(mine)
        if record and (rules is None or rules.is_money):
            games_mat = [g for c in mine for g in c.games_mat]
            games_mat = [g for slot in games_mat for g in slot] if rules is not None else games_mat
            row["mat_file"] = str(
                _write_mat(
                    Path(out_dir), k, names[i], names[j], games_mat, jacoby=None if rules is None else rules.jacoby
                )
            )
        elif record:
            matches = [slot for c in mine for slot in c.games_mat]
            row["mat_files"] = [
                str(_write_mat(Path(out_dir), k, names[i], names[j], m, rules.match_length, n))
                for n, m in enumerate(matches, 1)
            ]
        rows.append(row)
    key = "match_win_rate" if rules is not None and not rules.is_money else "ppg"
    out = {
        "players": names,
        "specs": [_spec_str(s) for s in players],
        "seed": int(seed),
        "games": int(games),
        "workers": int(workers),
        "pairings": rows,
        "ranking": _ranking(names, pairings, rows, key),
        "elapsed_s": elapsed,
        "games_per_s": games * len(pairings) / elapsed if elapsed > 0 else float("inf"),
        "worker_restarts": restarts,
    }
    if rules is not None:
        out["cube"] = {
            "match_length": rules.match_length,
            "jacoby": rules.jacoby if rules.is_money else False,
            "crawford": not rules.is_money,
        }
    return out


def _spec_str(spec) -> str:
    return spec.name if isinstance(spec, Player) else str(spec)


def _ranking(names, pairings, rows, key: str = "ppg") -> list[dict]:
    """Each player's mean ``key`` over its pairings (its own side: B's ppg is -ppg, its match-win rate 1 - rate), with
    a 95% normal half-width, best first; ``value`` repeats the mean under a fixed name."""
    out = []
    for p, name in enumerate(names):
        vals, ses = [], []
        for (i, j), row in zip(pairings, rows):
            if p in (i, j):
                v = row[key]
                vals.append(v if p == i else (1.0 - v if key == "match_win_rate" else -v))
                ses.append(row["stderr"])
        k = len(vals)
        half = 1.959964 * math.sqrt(sum(s * s for s in ses)) / k
        mean = float(np.mean(vals))
        out.append({"player": name, key: mean, "value": mean, "ci_half_width": half, "pairings": k})
    return sorted(out, key=lambda r: -r["value"])


def _write_mat(
    out_dir: Path,
    k: int,
    a: str,
    b: str,
    games: list,
    match_length: int = 0,
    match_no: int | None = None,
    jacoby: bool | None = None,
) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    names = (matfile.safe_name(a), matfile.safe_name(b))
    if names[0] == names[1]:
        names = (names[0] + "-A", names[1] + "-B")
    suffix = "" if match_no is None else f"_{match_no:04d}"
    path = out_dir / f"{k + 1:02d}_{names[0]}_vs_{names[1]}{suffix}.mat"
    path.write_text(matfile.match_text(names, games, match_length, jacoby=jacoby))
    return path


def format_table(results: dict) -> str:
    """The printed report: one line per pairing (ppg of A with its 95% CI, win, gammon and backgammon rates of each
    side as fractions of all games) and the ranking; cubeful results: :func:`bgbot.arena.cubeful.format_table`."""
    if "cube" in results:
        return cubeful.format_table(results)
    w = max(len(n) for n in results["players"] + ["player"])
    lines = [
        f"{results['games']} games per pairing (duplicate dice, seed {results['seed']}); "
        f"{results['games_per_s']:.1f} games/s with {results['workers']} worker(s)",
        "",
        f"{'A':<{w}}  {'B':<{w}}  {'ppg(A)':>7}  {'95% CI':>18}  {'winA':>6}  {'gamA':>6}  {'bgA':>5}"
        f"  {'gamB':>6}  {'bgB':>5}",
    ]
    for r in results["pairings"]:
        a, b = r["stats_a"], r["stats_b"]
        lines.append(
            f"{r['a']:<{w}}  {r['b']:<{w}}  {r['ppg']:+7.3f}  [{r['ci_low']:+7.3f}, {r['ci_high']:+7.3f}]"
            f"  {a['win_rate']:6.1%}  {a['gammon_rate']:6.1%}  {a['backgammon_rate']:5.1%}"
            f"  {b['gammon_rate']:6.1%}  {b['backgammon_rate']:5.1%}"
        )
    lines += ["", "Ranking (mean ppg over its pairings, 95% CI half-width):"]
    for k, r in enumerate(results["ranking"], 1):
        lines.append(f"{k:2d}. {r['player']:<{w}}  {r['ppg']:+7.3f} ± {r['ci_half_width']:.3f}")
    if results.get("worker_restarts"):
        lines.append(f"(a worker died {results['worker_restarts']} time(s); its games were replayed)")
    return "\n".join(lines)
