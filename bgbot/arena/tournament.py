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

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from bgbot.arena import cubeful, stats
from bgbot.arena.engine import DuplicateDice, EngineError, Table, play_ply
from bgbot.arena.players import Player, display_name, make_player
from bgbot.errors import BgbotError
from bgbot.formats import matfile

CHUNK_PAIRS = 250
"""Duplicate pairs (2 games each) per work unit."""
MAX_ATTEMPTS = 3
"""How often a chunk is started before a dying worker is reported as an error."""
MAX_PLIES = 5000
"""A game longer than this is a bug in a player or the rules (real games last about 60 plies)."""
MAX_GAMES = 10_000_000
"""Most games (or matches) per pairing: results are held in memory (about 40 bytes a game), and at a few hundred games
a second this is already days of play; more is refused up front."""
MIN_GAMES = 4
"""Fewest games per pairing (money play): two duplicate pairs, the fewest a t-interval of ppg can be computed from.
Matches need two (one duplicate pair): their interval is Wilson's, over matches."""
MAX_SEED = 2**63 - 1
"""Seeds are 0 .. 2**63 - 1 (they are hashed as 64-bit words)."""
MAX_WORKERS = 1024
"""Most worker processes."""
CRASH_ENV = "BGBOT_TEST_CRASH_ONCE"
"""Test hook: when this names a file that does not exist, the first pool worker to start a chunk creates it and
exits abruptly (``os._exit``), as a killed worker would."""


class TournamentError(BgbotError):
    """A tournament that cannot run: fewer than two players, an odd or out-of-range game count, a seed or worker
    count out of range, a chunk that kept dying."""


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
    """Play the duplicate pairs ``start .. stop - 1`` of a pairing, all games advancing together (each ply by
    :func:`bgbot.arena.engine.play_ply`, dice by :class:`bgbot.arena.engine.DuplicateDice`).

    Args:
        player_a, player_b: the two players (``choose`` is called once per ply for each, batched).
        seed, pairing: select the dice (see :func:`bgbot.rules.dice.pair_dice`).
        start, stop: the pair range.
        record: also return each game as a :class:`bgbot.formats.matfile.Game` (left column = A).

    Raises:
        TournamentError: a game ran past :data:`MAX_PLIES`.
    """
    pairs = np.arange(start, stop)
    n = 2 * len(pairs)
    a_seat = np.tile([0, 1], len(pairs))  # (G,) A sits in seat 0 in even games
    table = Table.create(n, seats=np.column_stack([a_seat, 1 - a_seat]), record=record)
    dice = DuplicateDice(seed, pairing, np.repeat(pairs, 2))
    dice.start(table, np.arange(n))
    points_a = np.zeros(n, dtype=np.int8)
    games: list = [None] * n

    def on_end(t: Table, idx: np.ndarray, winner_seat: np.ndarray, pts: np.ndarray, kind: np.ndarray) -> None:
        a_won = t.seats[idx, winner_seat] == 0
        points_a[idx] = np.where(a_won, pts, -pts)
        if t.log is not None:
            for j, g in enumerate(idx):
                games[g] = matfile.Game(tuple(t.log[g]), 0 if a_won[j] else 1, int(pts[j]))

    while table.active.any():
        try:
            play_ply(table, dice, (player_a, player_b), on_end=on_end, max_plies=MAX_PLIES)
        except EngineError as e:
            raise TournamentError(f"pairing {pairing}, pair range {start}..{stop}: {e}") from e
    return ChunkResult(
        pairing, start, stop, points_a, table.turn.astype(np.int32), table.positions, games if record else []
    )


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
    """One torch thread and one BLAS thread per worker process: the workers are the parallelism. torch itself is not
    imported here (seconds per worker): a worker imports it only when a net player is built (:func:`_one_thread`)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    threadpool_limits(1, user_api="blas")


def _one_thread() -> None:
    """One torch thread in this worker, where torch was imported (by a net player)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


Chunk = ChunkResult | cubeful.CubefulChunk
"""What a work unit returns: a cubeless :class:`ChunkResult` or a :class:`bgbot.arena.cubeful.CubefulChunk`."""


def _run_chunk(task: tuple) -> Chunk:
    spec_a, spec_b, seed, pairing, start, stop, record, rules = task
    marker = os.environ.get(CRASH_ENV)
    if marker and multiprocessing.parent_process() is not None and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(17)
    a, b = _player(spec_a, seed), _player(spec_b, seed)
    if multiprocessing.parent_process() is not None:
        _one_thread()
    if rules is None:
        return play_games(a, b, seed, pairing, start, stop, record)
    return cubeful.play_games(a, b, seed, pairing, start, stop, rules, record, max_plies=MAX_PLIES)


def _run_tasks(
    tasks: list[tuple], workers: int, progress: bool = False, ray: str | None = None
) -> tuple[list[Chunk], int]:
    """Run chunk tasks in this process (``workers <= 1``), a spawn pool, or on Ray (``ray``: an address or ``"local"``,
    :mod:`bgbot.arena.distributed`, which re-runs the chunk of a worker that dies) -> (results in task order, pool
    restarts). ``progress``: a tqdm bar of games played on stderr. Each chunk's final positions are dropped (bounded
    memory)."""
    total = sum(2 * (t[5] - t[4]) for t in tasks)
    bar = tqdm(total=total, unit="game", file=sys.stderr, disable=not progress, leave=False, dynamic_ncols=True)

    def done(r: Chunk) -> Chunk:
        r.final = r.final[:0]
        bar.update(2 * (r.stop - r.start))
        return r

    try:
        if ray is not None:
            from bgbot.arena import distributed

            return distributed.run_tasks(_run_chunk, tasks, ray=ray, on_result=done), 0
        if workers <= 1:
            import torch  # lazily: a tournament of pubeval and random players needs no torch

            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return [done(_run_chunk(t)) for t in tasks], 0
            finally:
                torch.set_num_threads(threads)
        results: dict[int, Chunk] = {}
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
                        results[futures[fut]] = done(fut.result())
                except BrokenProcessPool:
                    restarts += 1
                    for fut, i in futures.items():
                        if i not in results and fut.done() and not fut.cancelled() and fut.exception() is None:
                            results[i] = done(fut.result())
        return [results[i] for i in range(len(tasks))], restarts
    finally:
        bar.close()


# -- tournaments --------------------------------------------------------------------------------------------------


def _name(spec) -> str:
    return spec.name if isinstance(spec, Player) else display_name(spec)


def check_settings(
    players: list, games: int, seed: int, workers: int, out_dir: str | Path | None, match_length: int = 0
) -> None:
    """Refuse settings a tournament cannot run with, before anything is played.

    Raises:
        TournamentError: fewer than two players; ``games`` not an even integer in :data:`MIN_GAMES` ..
            :data:`MAX_GAMES` (2 .. for matches); ``seed`` outside 0 .. :data:`MAX_SEED`; ``workers`` outside 1 .. :data:`MAX_WORKERS`;
            an empty ``out_dir``; ``match_length`` not an integer >= 0.
    """
    if len(players) < 2:
        raise TournamentError(f"a tournament needs at least two players, got {players!r}")

    def is_int(v) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

    least = 2 if is_int(match_length) and match_length > 0 else MIN_GAMES
    if not is_int(games) or games < least or games % 2:
        raise TournamentError(
            f"games per pairing must be an even number >= {least} (duplicate pairs"
            + ("; two pairs at least for a confidence interval of ppg" if least > 2 else "")
            + f"), got {games!r}"
        )
    if games > MAX_GAMES:
        raise TournamentError(
            f"games per pairing must be at most {MAX_GAMES:,} (results are held in memory), got {games}"
        )
    if not is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise TournamentError(f"the seed must be an integer in 0 .. 2**63 - 1, got {seed!r}")
    if not is_int(workers) or not 1 <= workers <= MAX_WORKERS:
        raise TournamentError(f"workers must be an integer in 1 .. {MAX_WORKERS}, got {workers!r}")
    if out_dir is not None and not str(out_dir).strip():
        raise TournamentError("the output directory is empty; give a directory name (or leave --out out)")
    if not is_int(match_length) or match_length < 0:
        raise TournamentError(f"the match length must be an integer >= 0 (0 = money play), got {match_length!r}")


class OutputError(TournamentError):
    """Some ``.mat`` files could not be written (the results were computed and are kept in ``results``)."""

    def __init__(self, message: str, results: dict, not_written: list[str]) -> None:
        super().__init__(message)
        self.results = results
        self.not_written = not_written


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
    progress: bool = False,
    ray: str | None = None,
) -> dict:
    """Round robin of every pairing of ``players``, ``games`` duplicate games (or matches) each; then, with
    ``out_dir``, the games written as ``.mat`` files (:func:`play` then :func:`write_files`).

    Raises:
        OutputError: files that could not be written (the results ride on the error); :func:`play`'s errors.
    """
    results, files = play(
        players, games, seed, workers, out_dir, chunk_pairs, cube, match_length, jacoby, progress, ray
    )
    write_files(results, files)
    return results


def play(
    players: list,
    games: int,
    seed: int = 0,
    workers: int = 1,
    out_dir: str | Path | None = None,
    chunk_pairs: int = CHUNK_PAIRS,
    cube: bool = False,
    match_length: int = 0,
    jacoby: bool = True,
    progress: bool = False,
    ray: str | None = None,
) -> tuple[dict, list[tuple[Path, str]]]:
    """Round robin of every pairing of ``players``, ``games`` duplicate games (or matches) each, writing nothing.

    Args:
        players: spec strings (see :func:`bgbot.arena.players.make_player`) or :class:`Player` objects (picklable for
            ``workers > 1``), at least two. In pairing (i, j), i < j, player i is A.
        games: games per pairing, even (``games / 2`` duplicate pairs), :data:`MIN_GAMES` .. :data:`MAX_GAMES`.
        seed: selects the dice (and the random player's choices), 0 .. :data:`MAX_SEED`.
        workers: processes, 1 .. :data:`MAX_WORKERS`; 1 plays in this process.
        out_dir: when given, the games are recorded and each pairing's ``.mat`` file is planned as
            ``out_dir/NN_A_vs_B.mat`` (returned as (path, text) for :func:`write_files`).
        chunk_pairs: pairs per work unit (results do not depend on it only when players are deterministic functions
            of their input batch; keep the default to compare runs).
        cube: play cubeful money games (:mod:`bgbot.arena.cubeful`; ``jacoby`` sets the Jacoby rule).
        match_length: > 0 plays matches to that many points (cubeful, Crawford rule); ``games`` then counts matches
            and the ``.mat`` output is one file per match, ``out_dir/NN_A_vs_B_MMMM.mat``.
        progress: show a tqdm progress bar on stderr.
        ray: run the chunks on Ray (an address or ``"local"``; :mod:`bgbot.arena.distributed`) instead of the
            process pool; the results are the same (apart from timing and the ``ray`` field).

    Returns:
        ``(results, files)``. ``results`` is a JSON-able dict: ``players`` (names), ``specs``, ``seed``, ``games``,
        ``pairings`` (one dict per pairing: ``a``, ``b``, :func:`bgbot.arena.stats.summarize`'s fields,
        ``mean_plies``, ``mat_file``), ``ranking`` (:func:`bgbot.arena.stats.ranking`), ``elapsed_s``,
        ``games_per_s``, ``worker_restarts``. Cubeful: also ``cube`` (the rules); each pairing has
        :func:`bgbot.arena.cubeful.summarize_money`'s or :func:`bgbot.arena.cubeful.summarize_matches`' fields
        (match-win rate instead of ppg) and ranks by that value. ``files``: ``(path, text)`` of each ``.mat`` file.

    Raises:
        TournamentError: bad settings (:func:`check_settings`); :class:`bgbot.arena.players.PlayerSpecError`.
    """
    check_settings(players, games, seed, workers, out_dir, match_length)
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
    if ray is not None:
        from bgbot.arena import distributed

        distributed.connect_ray(ray)  # an unreachable address fails before any game is played
    chunks, restarts = _run_tasks(tasks, workers, progress, ray)
    elapsed = time.perf_counter() - t0
    rows = []
    files: list[tuple[Path, str]] = []
    for k, (i, j) in enumerate(pairings):
        mine = [c for c in chunks if c.pairing == k]
        row: dict = {"a": names[i], "b": names[j], "spec_a": _spec_str(players[i]), "spec_b": _spec_str(players[j])}
        if rules is None:
            cubeless = [c for c in mine if isinstance(c, ChunkResult)]
            points = np.concatenate([c.points_a for c in cubeless])
            mean_plies = float(np.concatenate([c.plies for c in cubeless]).mean())
            row |= {**stats.summarize(points), "mean_plies": mean_plies}
        elif rules.is_money:
            row |= cubeful.summarize_money([c for c in mine if isinstance(c, cubeful.CubefulChunk)])
        else:
            row |= cubeful.summarize_matches([c for c in mine if isinstance(c, cubeful.CubefulChunk)])
        if record and out_dir is not None:
            games_mat = [g for c in mine for g in c.games_mat]
            if rules is None or rules.is_money:
                games_mat = [g for slot in games_mat for g in slot] if rules is not None else games_mat
                jac = None if rules is None else rules.jacoby
                path = _mat_path(Path(out_dir), k, names[i], names[j])
                files.append((path, _mat_text(names[i], names[j], games_mat, jacoby=jac)))
                row["mat_file"] = str(path)
            else:
                row["mat_files"] = []
                for no, m in enumerate(games_mat, 1):
                    path = _mat_path(Path(out_dir), k, names[i], names[j], no)
                    files.append((path, _mat_text(names[i], names[j], m, rules.match_length)))
                    row["mat_files"].append(str(path))
        for c in mine:  # the games are in ``files`` now
            c.games_mat = []
        rows.append(row)
    key = "match_win_rate" if rules is not None and not rules.is_money else "ppg"
    out = {
        "players": names,
        "specs": [_spec_str(s) for s in players],
        "seed": int(seed),
        "games": int(games),
        "workers": int(workers),
        "pairings": rows,
        "ranking": stats.ranking(names, pairings, rows, key),
        "elapsed_s": elapsed,
        "games_per_s": games * len(pairings) / elapsed if elapsed > 0 else float("inf"),
        "worker_restarts": restarts,
    }
    if ray is not None:
        out["ray"] = ray
    if rules is not None:
        out["cube"] = {
            "match_length": rules.match_length,
            "jacoby": rules.jacoby if rules.is_money else False,
            "crawford": not rules.is_money,
        }
    return out, files


def _spec_str(spec) -> str:
    return spec.name if isinstance(spec, Player) else str(spec)


def _mat_names(a: str, b: str) -> tuple[str, str]:
    names = (matfile.safe_name(a), matfile.safe_name(b))
    return (names[0] + "-A", names[1] + "-B") if names[0] == names[1] else names


def _mat_path(out_dir: Path, k: int, a: str, b: str, match_no: int | None = None) -> Path:
    names = _mat_names(a, b)
    suffix = "" if match_no is None else f"_{match_no:04d}"
    return out_dir / f"{k + 1:02d}_{names[0]}_vs_{names[1]}{suffix}.mat"


def _mat_text(a: str, b: str, games: list, match_length: int = 0, jacoby: bool | None = None) -> str:
    return matfile.match_text(_mat_names(a, b), games, match_length, jacoby=jacoby)


def write_files(results: dict, files: list[tuple[Path, str]]) -> None:
    """Write each planned file atomically (:func:`bgbot.formats.matfile.write_atomic`), going on past failures.

    Raises:
        OutputError: the files not written and why (``results`` kept on the error).
    """
    failed: list[str] = []
    first = ""
    for path, text in files:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            matfile.write_atomic(path, text)
        except OSError as e:
            failed.append(str(path))
            first = first or f"{e.strerror or e}"
    if failed:
        written = len(files) - len(failed)
        raise OutputError(
            f"{len(failed)} of {len(files)} .mat file(s) not written ({first}), first {failed[0]!r}; "
            f"{written} written; the results above are complete",
            results,
            failed,
        )
