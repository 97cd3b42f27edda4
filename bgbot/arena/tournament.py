"""Bot-vs-bot tournaments with duplicate dice, confidence intervals, parallel workers and ``.mat`` output.

**Duplicate dice.** Games come in pairs. Both games of pair ``k`` of a pairing use the same dice, a pure function of
``(seed, pairing, k, turn)`` (a counter-based hash, :func:`pair_dice`), so results do not depend on how games are split
between workers or batched. Game ``2k`` seats player A in seat 0, game ``2k + 1`` seats player B there. The opening
follows the rules: each seat rolls one die (ties are rolled again), the higher die moves first with both dice, so the
opening play is never a double; seat 0's die stays with seat 0, so the opening roll goes to A in one game and to B in
the other, and every later roll one player got in the first game the other gets in the second. A pair of equal players
sums to exactly 0 (tests/test_tournament.py checks pubeval against itself).

**Scoring.** Cubeless money: 1 point a single game, 2 a gammon, 3 a backgammon (2 with ``backgammon_value`` 2,
backgammons counted as gammons). Points per game (ppg) of A is the mean
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
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from itertools import combinations
from pathlib import Path

import numpy as np

from bgbot.arena import cubeful, stats
from bgbot.arena.chunks import (
    CRASH_ENV,
    MAX_PLIES,
    Chunk,
    ChunkResult,
    TournamentError,
    _player,
    play_games,
    run_chunk,
    worker_init,
)
from bgbot.arena.engine import CubeRules
from bgbot.arena.players import Player, display_name
from bgbot.arena.report import format_table
from bgbot.formats import matfile
from bgbot.progress import progress_bar

__all__ = [
    "CHUNK_PAIRS",
    "CRASH_ENV",
    "MAX_PLIES",
    "MAX_GAMES",
    "MIN_GAMES",
    "MAX_SEED",
    "MAX_WORKERS",
    "TournamentError",
    "OutputError",
    "ChunkResult",
    "play_games",
    "check_settings",
    "run",
    "play",
    "write_files",
    "format_table",
]

CHUNK_PAIRS = 250
"""Duplicate pairs (2 games each) per work unit."""
MAX_ATTEMPTS = 3
"""How often a chunk is started before a dying worker is reported as an error."""
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


def _run_tasks(
    tasks: list[tuple], workers: int, progress: bool = False, ray: str | None = None
) -> tuple[list[Chunk], int]:
    """Run chunk tasks in this process (``workers <= 1``), a spawn pool, or on Ray (``ray``: an address or ``"local"``,
    :mod:`bgbot.arena.distributed`, which re-runs the chunk of a worker that dies) -> (results in task order, restarts:
    pool restarts or deaths of Ray workers). ``progress``: a tqdm bar of games played on stderr. Each chunk's final
    positions are dropped (bounded memory)."""
    total = sum(2 * (t[5] - t[4]) for t in tasks)
    bar = progress_bar(total=total, unit="game", enabled=progress, leave=False, dynamic_ncols=True)

    def done(r: Chunk) -> Chunk:
        r.final = r.final[:0]
        bar.update(2 * (r.stop - r.start))
        return r

    try:
        if ray is not None:
            from bgbot.arena import distributed

            deaths: list[None] = []  # one per Ray worker that died (its chunk was run again), as pool restarts
            chunks = distributed.run_tasks(
                run_chunk, tasks, ray=ray, on_result=done, on_restart=lambda: deaths.append(None)
            )
            return chunks, len(deaths)
        if workers <= 1:
            import torch  # lazily: a tournament of pubeval and random players needs no torch

            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return [done(run_chunk(t)) for t in tasks], 0
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
            with ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx, initializer=worker_init) as pool:
                futures = {pool.submit(run_chunk, tasks[i]): i for i in todo}
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
    players: list,
    games: int,
    seed: int,
    workers: int,
    out_dir: str | Path | None,
    match_length: int = 0,
    cube: bool = False,
    auto_doubles: int = 0,
    backgammon_value: int = 3,
) -> None:
    """Refuse settings a tournament cannot run with, before anything is played.

    Raises:
        TournamentError: fewer than two players; ``games`` not an even integer in :data:`MIN_GAMES` ..
            :data:`MAX_GAMES` (2 .. for matches); ``seed`` outside 0 .. :data:`MAX_SEED`; ``workers`` outside 1 .. :data:`MAX_WORKERS`;
            an empty ``out_dir``; ``match_length`` not an integer >= 0; ``backgammon_value`` not 2 or 3;
            ``auto_doubles`` not an integer >= 0, or > 0 in match play or without the cube.
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
    check_variants(auto_doubles, backgammon_value, match_length)
    if auto_doubles and not cube:
        raise TournamentError("automatic doubles need the cube: add --cube (cubeful money games)")


def check_variants(auto_doubles: int, backgammon_value: int, match_length: int = 0) -> None:
    """Refuse a backgammon value other than 2 or 3, automatic doubles that are not an integer >= 0, and automatic
    doubles in match play (they do not apply there), as :class:`TournamentError` (the chouette checks the same)."""
    if not isinstance(backgammon_value, (int, np.integer)) or backgammon_value not in (2, 3):
        raise TournamentError(
            f"the backgammon value must be 3 (the standard) or 2 (backgammons count as gammons), got {backgammon_value!r}"
        )
    if not isinstance(auto_doubles, (int, np.integer)) or isinstance(auto_doubles, bool) or auto_doubles < 0:
        raise TournamentError(
            f"automatic doubles must be an integer >= 0 (0 = off, 1 = the usual), got {auto_doubles!r}"
        )
    if auto_doubles and match_length:
        raise TournamentError("automatic doubles apply to money play only, not to matches (drop --auto-doubles)")


class OutputError(TournamentError):
    """Some ``.mat`` files could not be written (the results were computed and are kept in ``results``)."""

    def __init__(self, message: str, results: dict, not_written: list[str]) -> None:
        super().__init__(message)
        self.results = results
        self.not_written = not_written


def run(players: list, games: int, *args, **kwargs) -> dict:
    """Round robin of every pairing of ``players``, ``games`` duplicate games (or matches) each; then, with
    ``out_dir``, the games written as ``.mat`` files: :func:`play` (the same arguments) then :func:`write_files`.

    Raises:
        OutputError: files that could not be written (the results ride on the error); :func:`play`'s errors.
    """
    results, files = play(players, games, *args, **kwargs)
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
    auto_doubles: int = 0,
    backgammon_value: int = 3,
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
        auto_doubles: money games with the cube only: the most automatic doubles a game may have (an opening tie
            doubles the centred cube), 0 = off.
        backgammon_value: 3, or 2 (backgammons count as gammons: scoring, cube decisions, checker play).

    Returns:
        ``(results, files)``. ``results`` is a JSON-able dict: ``players`` (names), ``specs``, ``seed``, ``games``,
        ``pairings`` (one dict per pairing: ``a``, ``b``, :func:`bgbot.arena.stats.summarize`'s fields,
        ``mean_plies``, ``mat_file``), ``ranking`` (:func:`bgbot.arena.stats.ranking`), ``elapsed_s``,
        ``games_per_s``, ``worker_restarts``. Cubeful: also ``cube`` (the rules); each pairing has
        :func:`bgbot.arena.stats.summarize_money`'s or :func:`bgbot.arena.stats.summarize_matches`' fields
        (match-win rate instead of ppg) and ranks by that value. ``files``: ``(path, text)`` of each ``.mat`` file.

    Raises:
        TournamentError: bad settings (:func:`check_settings`); :class:`bgbot.arena.players.PlayerSpecError`.
    """
    check_settings(players, games, seed, workers, out_dir, match_length, cube, auto_doubles, backgammon_value)
    doubling = bool(cube or match_length)
    backgammons = backgammon_value == 3
    rules: CubeRules | None = None
    if doubling:
        rules = CubeRules(int(match_length), bool(jacoby), backgammons, int(auto_doubles))
    elif not backgammons:
        rules = CubeRules(0, False, backgammons)
    for spec in players:  # fail fast, in this process, on a bad spec
        _player(spec, seed)
    names = [_name(s) for s in players]
    names = [n if names.count(n) == 1 else f"{n}#{names[: i + 1].count(n)}" for i, n in enumerate(names)]  # unique
    pairings = list(combinations(range(len(players)), 2))
    n_pairs = games // 2
    record = out_dir is not None
    tasks = [
        (players[i], players[j], seed, k, s, min(s + chunk_pairs, n_pairs), record, rules, doubling)
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
        if not doubling:
            cubeless = [c for c in mine if isinstance(c, ChunkResult)]
            points = np.concatenate([c.points_a for c in cubeless])
            mean_plies = float(np.concatenate([c.plies for c in cubeless]).mean())
            row |= {**stats.summarize(points), "mean_plies": mean_plies}
        elif rules is not None and rules.is_money:
            row |= stats.summarize_money([c for c in mine if isinstance(c, cubeful.CubefulChunk)])
        else:
            row |= stats.summarize_matches([c for c in mine if isinstance(c, cubeful.CubefulChunk)])
        if record and out_dir is not None:
            games_mat = [g for c in mine for g in c.games_mat]
            if rules is None or rules.is_money:
                games_mat = [g for slot in games_mat for g in slot] if doubling else games_mat
                jac = rules.jacoby if doubling and rules is not None else None
                path = _mat_path(Path(out_dir), k, names[i], names[j])
                files.append((path, _mat_text(names[i], names[j], games_mat, 0, jac, rules)))
                row["mat_file"] = str(path)
            else:
                row["mat_files"] = []
                for no, m in enumerate(games_mat, 1):
                    path = _mat_path(Path(out_dir), k, names[i], names[j], no)
                    files.append(
                        (path, _mat_text(names[i], names[j], m, rules.match_length if rules else 0, None, rules))
                    )
                    row["mat_files"].append(str(path))
        for c in mine:  # the games are in ``files`` now
            c.games_mat = []
        rows.append(row)
    key = "match_win_rate" if rules is not None and not rules.is_money else "ppg"
    variants = {"backgammon_value": int(backgammon_value)}
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
        **variants,
    }
    if ray is not None:
        out["ray"] = ray
    if doubling and rules is not None:
        out["cube"] = {
            "match_length": rules.match_length,
            "jacoby": rules.jacoby if rules.is_money else False,
            "crawford": not rules.is_money,
            "auto_doubles": rules.auto_doubles,
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


def _mat_text(
    a: str, b: str, games: list, match_length: int = 0, jacoby: bool | None = None, rules: CubeRules | None = None
) -> str:
    return matfile.match_text(
        _mat_names(a, b),
        games,
        match_length,
        jacoby=jacoby,
        backgammon_value=rules.backgammon_value if rules else 3,
        auto_doubles=rules.auto_doubles if rules else 0,
    )


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
