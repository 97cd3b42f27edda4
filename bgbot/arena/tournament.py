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

**Stopping and resuming.** With an output directory, each chunk's games are saved there as soon as the chunk finishes
(``OUT/chunks/``). SIGINT or SIGTERM (under :func:`bgbot.arena.distributed.interrupt_signals`), a player that fails
(an external engine that dies or plays an illegal move) or a chunk that keeps killing its worker stops the run with
:class:`TournamentStopped`, whose results count the finished chunks only (whole duplicate pairs); ``resume`` then
plays only the chunks not saved, and since a chunk's games depend only on its seed and pair range the totals are
those of an uninterrupted run. Once every chunk has finished and the ``.mat`` files are written, the results are
kept in ``OUT/results.json`` and the saved chunks removed (:func:`finish_saved`); ``resume`` of that directory then
answers with :class:`TournamentComplete`, which carries those results.
"""

from __future__ import annotations

import json
import pickle
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from bgbot.arena import cubeful, stats
from bgbot.arena.chunks import (
    CRASH_ENV,
    MAX_PLIES,
    Chunk,
    ChunkResult,
    Task,
    TournamentError,
    _player,
    play_games,
    run_chunk,
    worker_init,
)
from bgbot.arena.distributed import Interrupted
from bgbot.arena.engine import CubeRules
from bgbot.arena.players import Player, display_name
from bgbot.arena.report import format_table
from bgbot.errors import BgbotError, is_int
from bgbot.files import write_atomic
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
    "TournamentSettings",
    "Task",
    "OutputError",
    "TournamentStopped",
    "resume_settings",
    "discard_saved",
    "finish_saved",
    "RESULTS_FILE",
    "TournamentComplete",
    "ChunkResult",
    "play_games",
    "check_settings",
    "FORCE_WITH_RESUME",
    "claim_out_dir",
    "tournament_files",
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
FORCE_WITH_RESUME = (
    "--force (delete an earlier tournament's files and start afresh) cannot be used with --resume (finish the "
    "tournament saved there): give one of them"
)
"""Why ``force`` and ``resume`` are refused together (by :class:`TournamentSettings` and the command line)."""


@dataclass(frozen=True)
class TournamentSettings:
    """How a tournament is played (:func:`play`), checked when it is made (every field's range below).

    Attributes:
        games: games per pairing, even (``games / 2`` duplicate pairs), :data:`MIN_GAMES` .. :data:`MAX_GAMES`
            (matches: 2 ..).
        seed: selects the dice (and the random player's choices), 0 .. :data:`MAX_SEED`.
        workers: processes, 1 .. :data:`MAX_WORKERS`; 1 plays in this process.
        out_dir: when given, the games are recorded and each pairing's ``.mat`` file is planned as
            ``out_dir/NN_A_vs_B.mat``; each work unit's games are saved in ``out_dir/chunks/`` as they finish.
        chunk_pairs: pairs per work unit, default :data:`CHUNK_PAIRS` (results do not depend on it only when players
            are deterministic functions of their input batch; keep the default to compare runs).
        cube: play cubeful money games (:mod:`bgbot.arena.cubeful`; ``jacoby`` sets the Jacoby rule).
        match_length: > 0 plays matches to that many points (cubeful, Crawford rule); ``games`` then counts matches
            and the ``.mat`` output is one file per match, ``out_dir/NN_A_vs_B_MMMM.mat``.
        jacoby: the Jacoby rule in cubeful money games.
        auto_doubles: money games with the cube only: the most automatic doubles a game may have (an opening tie
            doubles the centred cube), 0 = off.
        backgammon_value: 3, or 2 (backgammons count as gammons: scoring, cube decisions, checker play).
        ray: run the work units on Ray (an address or ``"local"``; :mod:`bgbot.arena.distributed`) instead of the
            process pool; the results are the same (apart from timing and the ``ray`` field).
        resume: take the units already saved in ``out_dir`` (the settings must be those saved there); needs
            ``out_dir``.
        progress: show a tqdm progress bar on stderr.
        force: a fresh tournament may use an ``out_dir`` that holds another tournament's files, which are deleted
            (:func:`claim_out_dir`; other files are kept); needs ``out_dir``, and not with ``resume``.

    Raises:
        TournamentError: ``games`` not an even integer in :data:`MIN_GAMES` .. :data:`MAX_GAMES` (2 .. for
            matches); ``seed`` outside 0 .. :data:`MAX_SEED`; ``workers`` outside 1 .. :data:`MAX_WORKERS`; an
            empty ``out_dir``; ``chunk_pairs`` not None or an integer >= 1; ``match_length`` not an integer >= 0;
            ``backgammon_value`` not 2 or 3; ``auto_doubles`` not an integer >= 0, or > 0 in match play or without
            the cube; ``resume`` or ``force`` without ``out_dir``; ``force`` with ``resume``.
    """

    games: int
    seed: int = 0
    workers: int = 1
    out_dir: str | Path | None = None
    chunk_pairs: int | None = None
    cube: bool = False
    match_length: int = 0
    jacoby: bool = True
    auto_doubles: int = 0
    backgammon_value: int = 3
    ray: str | None = None
    resume: bool = False
    progress: bool = False
    force: bool = False

    def __post_init__(self) -> None:
        games, match_length, out_dir = self.games, self.match_length, self.out_dir
        if not is_int(match_length) or match_length < 0:
            raise TournamentError(f"the match length must be an integer >= 0 (0 = money play), got {match_length!r}")
        least = 2 if match_length > 0 else MIN_GAMES
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
        if not is_int(self.seed) or not 0 <= self.seed <= MAX_SEED:
            raise TournamentError(f"the seed must be an integer in 0 .. 2**63 - 1, got {self.seed!r}")
        if not is_int(self.workers) or not 1 <= self.workers <= MAX_WORKERS:
            raise TournamentError(f"workers must be an integer in 1 .. {MAX_WORKERS}, got {self.workers!r}")
        if out_dir is not None and not str(out_dir).strip():
            raise TournamentError("the output directory is empty; give a directory name (or leave --out out)")
        if self.chunk_pairs is not None and (not is_int(self.chunk_pairs) or self.chunk_pairs < 1):
            raise TournamentError(
                f"chunk_pairs (duplicate pairs per work unit) must be an integer >= 1, got {self.chunk_pairs!r}"
            )
        check_variants(self.auto_doubles, self.backgammon_value, match_length)
        if self.auto_doubles and not self.cube:
            raise TournamentError("automatic doubles need the cube: add --cube (cubeful money games)")
        if self.resume and out_dir is None:
            raise TournamentError("resume finishes the tournament saved in an output directory: give its directory")
        if self.force and self.resume:
            raise TournamentError(FORCE_WITH_RESUME)
        if self.force and out_dir is None:
            raise TournamentError("--force deletes an earlier tournament's files in the output directory: give --out")


def _run_tasks(
    tasks: list[Task],
    workers: int,
    progress: bool = False,
    ray: str | None = None,
    on_chunk: Callable[[Chunk], object] | None = None,
) -> tuple[list[Chunk], int]:
    """Run chunk tasks in this process (``workers <= 1``), a spawn pool, or on Ray (``ray``: an address or ``"local"``,
    :mod:`bgbot.arena.distributed`, which re-runs the chunk of a worker that dies) -> (results in task order, restarts:
    pool restarts or deaths of Ray workers). ``progress``: a tqdm bar of games played on stderr. Each chunk's final
    positions are dropped (bounded memory); ``on_chunk`` is called with each chunk as it finishes."""
    total = sum(t.games for t in tasks)
    bar = progress_bar(total=total, unit="game", enabled=progress, leave=False, dynamic_ncols=True)

    def done(r: Chunk) -> Chunk:
        r.final = r.final[:0]
        bar.update(2 * (r.stop - r.start))
        if on_chunk is not None:  # as each chunk finishes: saved at once (resume), kept when the run stops early
            on_chunk(r)
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
        from bgbot.arena import distributed

        def too_many(i: int) -> TournamentError:
            t = tasks[i]
            return TournamentError(
                f"pairs {t.start}..{t.stop} of pairing {t.pairing} failed {MAX_ATTEMPTS} times "
                "(a worker process died each time)"
            )

        results, restarts = distributed.run_pool(
            run_chunk, tasks, workers, lambda i, r: done(r), initializer=worker_init, too_many=too_many
        )
        return results, restarts
    finally:
        bar.close()


# -- tournaments --------------------------------------------------------------------------------------------------


def _name(spec) -> str:
    return spec.name if isinstance(spec, Player) else display_name(spec)


def check_settings(players: list, settings: TournamentSettings) -> None:
    """Refuse players a tournament cannot run with, before anything is played (the settings were checked when they
    were made, :class:`TournamentSettings`).

    Raises:
        TournamentError: fewer than two players; ``settings`` not a :class:`TournamentSettings`.
    """
    if len(players) < 2:
        raise TournamentError(f"a tournament needs at least two players, got {players!r}")
    if not isinstance(settings, TournamentSettings):
        raise TournamentError(f"the settings must be a TournamentSettings, got {type(settings).__name__}")


def check_variants(auto_doubles: int, backgammon_value: int, match_length: int = 0) -> None:
    """Refuse a backgammon value other than 2 or 3, automatic doubles that are not an integer >= 0, and automatic
    doubles in match play (they do not apply there), as :class:`TournamentError` (the chouette checks the same)."""
    if not isinstance(backgammon_value, (int, np.integer)) or backgammon_value not in (2, 3):
        raise TournamentError(
            f"the backgammon value must be 3 (the standard) or 2 (backgammons count as gammons), got {backgammon_value!r}"
        )
    if not is_int(auto_doubles) or auto_doubles < 0:
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


def run(players: list, settings: TournamentSettings) -> dict:
    """Round robin of every pairing of ``players``, ``settings.games`` duplicate games (or matches) each; then, with
    ``settings.out_dir``, the games written as ``.mat`` files: :func:`play`, :func:`write_files`, then
    :func:`finish_saved`.

    Raises:
        OutputError: files that could not be written (the results ride on the error); :func:`play`'s errors.
    """
    results, files = play(players, settings)
    write_files(results, files)
    if settings.out_dir is not None:
        finish_saved(settings.out_dir, results)
    return results


def play(players: list, settings: TournamentSettings) -> tuple[dict, list[tuple[Path, str]]]:
    """Round robin of every pairing of ``players``, ``settings.games`` duplicate games (or matches) each, writing no
    ``.mat`` file (they are returned as (path, text) for :func:`write_files`). With ``settings.out_dir``, each work
    unit's games are saved in ``out_dir/chunks/`` as soon as they finish (:class:`_ChunkStore`), and
    ``settings.resume`` plays only the units not saved there: the totals are those of an uninterrupted run.

    Args:
        players: spec strings (see :func:`bgbot.arena.players.make_player`) or :class:`Player` objects (picklable for
            ``workers > 1``), at least two. In pairing (i, j), i < j, player i is A.
        settings: :class:`TournamentSettings`.

    Returns:
        ``(results, files)``. ``results`` is a JSON-able dict: ``players`` (names), ``specs``, ``seed``, ``games``,
        ``pairings`` (one dict per pairing: ``a``, ``b``, :func:`bgbot.arena.stats.summarize`'s fields,
        ``mean_plies``, ``mat_file``), ``ranking`` (:func:`bgbot.arena.stats.ranking`), ``elapsed_s``,
        ``games_per_s``, ``worker_restarts``. Cubeful: also ``cube`` (the rules); each pairing has
        :func:`bgbot.arena.stats.summarize_money`'s or :func:`bgbot.arena.stats.summarize_matches`' fields
        (match-win rate instead of ppg) and ranks by that value. ``files``: ``(path, text)`` of each ``.mat`` file.

    Raises:
        TournamentError: bad settings (:func:`check_settings`); :class:`bgbot.arena.players.PlayerSpecError`; a
            ``resume`` whose settings differ from those saved.
        TournamentStopped: SIGINT or SIGTERM (under :func:`bgbot.arena.distributed.interrupt_signals`) or a failing
            player or worker before every unit finished: the results of the whole duplicate pairs finished ride on it.
    """
    check_settings(players, settings)
    games, seed, workers, out_dir, ray = settings.games, settings.seed, settings.workers, settings.out_dir, settings.ray
    cube, match_length, jacoby = settings.cube, settings.match_length, settings.jacoby
    auto_doubles, backgammon_value = settings.auto_doubles, settings.backgammon_value
    chunk_pairs = CHUNK_PAIRS if settings.chunk_pairs is None else settings.chunk_pairs
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
        Task(players[i], players[j], seed, k, s, min(s + chunk_pairs, n_pairs), record, rules, doubling)
        for k, (i, j) in enumerate(pairings)
        for s in range(0, n_pairs, chunk_pairs)
    ]
    t0 = time.perf_counter()
    if ray is not None:
        from bgbot.arena import distributed

        distributed.connect_ray(ray)  # an unreachable address fails before any game is played
    saved = {
        "players": [_spec_str(p) for p in players],
        "games": int(games),
        "seed": int(seed),
        "cube": bool(cube),
        "match_length": int(match_length),
        "jacoby": bool(jacoby),
        "auto_doubles": int(auto_doubles),
        "backgammon_value": int(backgammon_value),
        "chunk_pairs": int(chunk_pairs),
    }
    if out_dir is not None and not settings.resume:
        claim_out_dir(out_dir, settings.force)
    store = _ChunkStore(Path(out_dir), saved, tasks, settings.resume) if out_dir is not None else None
    finished: dict[int, Chunk] = {} if store is None else store.saved
    index = {(t.pairing, t.start): i for i, t in enumerate(tasks)}

    def on_chunk(r: Chunk) -> None:
        i = index[(r.pairing, r.start)]
        finished[i] = r
        if store is not None:
            store.save(i, r)

    todo = [t for i, t in enumerate(tasks) if i not in finished]
    stopped: BaseException | None = None
    restarts = 0
    try:
        _, restarts = _run_tasks(todo, workers, settings.progress, ray, on_chunk)
    except (Interrupted, BgbotError) as e:  # keep what finished: SIGINT/SIGTERM, a failing player or worker
        stopped = e
    elapsed = time.perf_counter() - t0
    chunks = [finished[i] for i in sorted(finished)]
    rows = []
    files: list[tuple[Path, str]] = []
    played: list[tuple[int, int]] = []
    pairs_played = 0
    for k, (i, j) in enumerate(pairings):
        mine = [c for c in chunks if c.pairing == k]
        pairs_done = sum(c.stop - c.start for c in mine)
        if stopped is not None and pairs_done < (1 if match_length else 2):
            continue  # too few whole duplicate pairs for any statistic
        played.append((i, j))
        pairs_played += pairs_done
        row: dict = {"a": names[i], "b": names[j], "spec_a": _spec_str(players[i]), "spec_b": _spec_str(players[j])}
        row["pairs_done"] = pairs_done
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
        "ranking": stats.ranking(names, played, rows, key) if rows else [],
        "elapsed_s": elapsed,
        "games_per_s": 2 * pairs_played / elapsed if elapsed > 0 else float("inf"),
        "worker_restarts": restarts,
        **variants,
        "complete": stopped is None,
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
    if stopped is not None:
        out["pairs_done"] = pairs_played
        out["pairs_total"] = n_pairs * len(pairings)
        resumable = store is not None and store.error is None
        raise TournamentStopped(out, files, stopped, store.dir.parent if resumable and store is not None else None)
    return out, files


class TournamentStopped(TournamentError):
    """A tournament stopped before every work unit finished (:func:`play`): ``results`` and ``files`` as
    :func:`play` returns them, over the whole duplicate pairs finished (pairings with too few left out);
    ``cause`` the :class:`bgbot.arena.distributed.Interrupted` or the error; ``resume_dir`` the directory to give
    ``--resume`` (None without an output directory)."""

    def __init__(self, results: dict, files: list, cause: BaseException, resume_dir: Path | None) -> None:
        done, total = results["pairs_done"], results["pairs_total"]
        why = (
            f"interrupted ({signal.Signals(cause.signum).name})"
            if isinstance(cause, Interrupted)
            else f"stopped: {cause}"
        )
        how = (
            f"; finish it with: bgbot tournament --resume {resume_dir}"
            if resume_dir is not None
            else " (give --out DIR to keep them for --resume DIR)"
        )
        super().__init__(f"{why}; {done} of {total} duplicate pairs finished, kept{how}")
        self.results = results
        self.files = files
        self.cause = cause
        self.resume_dir = resume_dir

    @property
    def exit_status(self) -> int:
        """128 + the signal's number when interrupted, else 1."""
        return self.cause.exit_status if isinstance(self.cause, Interrupted) else 1


CHUNKS_DIR = "chunks"
"""Where a tournament with an output directory saves its finished work units (``OUT/chunks/``)."""


class _ChunkStore:
    """The finished work units of a tournament, saved in ``out_dir/chunks/`` as each finishes (``unit-NNNNNN.pkl``,
    pickles of :data:`bgbot.arena.chunks.Chunk` with their games, written atomically), with the settings in
    ``tournament.json``. A fresh run starts in a directory :func:`claim_out_dir` cleared; a resumed one checks the settings and loads the units
    (pickles: resume only directories this program wrote). A directory that cannot be written (read-only, a full
    disk) does not stop the tournament: saving stops, :attr:`error` holds why, and the run's results and ``.mat``
    files are handled as without it.

    Raises:
        TournamentError: resuming a directory without ``tournament.json``, with other settings, or an unreadable unit.
    """

    def __init__(self, out_dir: Path, settings: dict, tasks: list[Task], resume: bool) -> None:
        self.dir = out_dir / CHUNKS_DIR
        self.saved: dict[int, Chunk] = {}
        self.error: OSError | None = None
        manifest = self.dir / "tournament.json"
        if resume:
            saved = resume_settings(out_dir)
            if saved != settings:
                diff = sorted(k for k in settings if saved.get(k) != settings[k])
                raise TournamentError(f"{out_dir} holds a tournament with other settings ({', '.join(diff)})")
            for path in sorted(self.dir.glob("unit-*.pkl")):
                try:
                    i = int(path.stem.split("-")[1])
                    chunk = pickle.loads(path.read_bytes())
                    t = tasks[i]
                    ok = (chunk.pairing, chunk.start, chunk.stop) == (t.pairing, t.start, t.stop)
                except (OSError, ValueError, IndexError, EOFError, pickle.UnpicklingError, AttributeError) as e:
                    raise TournamentError(f"cannot read the saved games in {path}: {e}") from e
                if not ok:
                    raise TournamentError(f"{path} holds other games than its name says")
                self.saved[i] = chunk
            return
        try:  # a fresh run: no earlier tournament's files are here (claim_out_dir)
            self.dir.mkdir(parents=True, exist_ok=True)
            write_atomic(manifest, json.dumps(settings, indent=2) + "\n")
        except OSError as e:
            self.error = e
            discard_saved(out_dir)

    def save(self, i: int, chunk: Chunk) -> None:
        """Save a finished unit; after a failed write nothing more is saved and the directory is removed (it could
        not resume the run)."""
        if self.error is not None:
            return
        try:
            write_atomic(self.dir / f"unit-{i:06d}.pkl", pickle.dumps(chunk))
        except OSError as e:
            self.error = e
            discard_saved(self.dir.parent)


RESULTS_FILE = "results.json"
"""A finished tournament's results in its output directory (``OUT/results.json``, :func:`play`'s results dict),
written by :func:`finish_saved`; ``resume`` of that directory answers with them (:class:`TournamentComplete`)."""


def discard_saved(out_dir: str | Path) -> None:
    """Remove the saved work units of a tournament (``out_dir/chunks/``): nothing is left to resume."""
    import shutil

    shutil.rmtree(Path(out_dir) / CHUNKS_DIR, ignore_errors=True)


def finish_saved(out_dir: str | Path, results: dict) -> None:
    """A tournament in ``out_dir`` has finished and its ``.mat`` files are written: record its ``results`` in
    ``out_dir/results.json`` (atomically), then remove its saved work units (:func:`discard_saved`).

    Raises:
        OSError: ``results.json`` cannot be written (the work units are then kept).
    """
    write_atomic(Path(out_dir) / RESULTS_FILE, json.dumps(results, indent=2) + "\n")
    discard_saved(out_dir)


class TournamentComplete(TournamentError):
    """``resume`` of a directory whose tournament has finished: there is nothing left to play. ``results`` holds
    its results as recorded in ``results.json`` (None when the directory predates that file), ``path`` the file."""

    def __init__(self, out_dir: str | Path, results: dict | None) -> None:
        self.path = Path(out_dir) / RESULTS_FILE
        self.results = results
        where = f"its results are in {self.path}" if results is not None else "its .mat files are all it kept"
        super().__init__(f"{out_dir} holds a finished tournament, so there is nothing to resume: {where}")


def resume_settings(out_dir: str | Path) -> dict:
    """The settings of the tournament saved in ``out_dir`` (``chunks/tournament.json``): ``players`` (specs),
    ``games``, ``seed``, ``cube``, ``match_length``, ``jacoby``, ``auto_doubles``, ``backgammon_value``,
    ``chunk_pairs``.

    Raises:
        TournamentComplete: the tournament in ``out_dir`` has finished (its ``results.json``, or its ``.mat`` files
            without saved work units).
        TournamentError: no such file, or not one this program wrote.
    """
    path = Path(out_dir) / CHUNKS_DIR / "tournament.json"
    if not path.exists():
        _refuse_finished(Path(out_dir))
        raise TournamentError(f"{out_dir} holds no tournament to resume (no {path})")
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise TournamentError(f"cannot read {path}: {e}") from e
    keys = ("players", "games", "seed", "cube", "match_length", "jacoby", "auto_doubles", "backgammon_value")
    if not isinstance(saved, dict) or any(k not in saved for k in (*keys, "chunk_pairs")):
        raise TournamentError(f"{path} is not a tournament's settings file")
    return saved


def _refuse_finished(out_dir: Path) -> None:
    """Raise :class:`TournamentComplete` when ``out_dir`` holds a finished tournament (its ``results.json``, or
    ``.mat`` files alone); return otherwise.

    Raises:
        TournamentError: ``results.json`` is unreadable or not a tournament's results.
    """
    done = out_dir / RESULTS_FILE
    if done.is_file():
        try:
            results = json.loads(done.read_text())
        except (OSError, ValueError) as e:
            raise TournamentError(f"cannot read {done}: {e}") from e
        if not isinstance(results, dict) or "pairings" not in results:
            raise TournamentError(f"{done} is not a tournament's results file")
        raise TournamentComplete(out_dir, results)
    if any(out_dir.glob("*.mat")):
        raise TournamentComplete(out_dir, None)


_MAT_NAME = re.compile(r"\d{2,}_.+_vs_.+\.mat")
"""The name of a tournament's ``.mat`` file (:func:`_mat_path`): ``NN_A_vs_B.mat``, ``NN_A_vs_B_MMMM.mat``."""


def tournament_files(out_dir: str | Path) -> list[Path]:
    """What a tournament wrote in ``out_dir`` that is there now, sorted: its ``.mat`` files (named
    ``NN_A_vs_B[_MMMM].mat``), :data:`RESULTS_FILE` and the :data:`CHUNKS_DIR` directory. Empty when ``out_dir`` is
    not a directory."""
    d = Path(out_dir)
    if not d.is_dir():
        return []
    return sorted(
        p
        for p in d.iterdir()
        if p.name == RESULTS_FILE or p.name == CHUNKS_DIR or (_MAT_NAME.fullmatch(p.name) and p.is_file())
    )


def claim_out_dir(out_dir: str | Path, force: bool = False) -> None:
    """Make ``out_dir`` the output directory of a new tournament: refuse it while it holds another tournament's files
    (:func:`tournament_files`), unless ``force``, which deletes those files (and only those; a user's other files stay).

    Raises:
        TournamentError: ``out_dir`` exists and is not a directory; another tournament's files are there and ``force``
            is off.
        OSError: one of them cannot be deleted.
    """
    import shutil

    if Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise TournamentError(f"--out {out_dir} exists and is not a directory: give a directory for the .mat files")
    found = tournament_files(out_dir)
    if found and not force:
        names = [p.name + ("/" if p.is_dir() else "") for p in found]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        unfinished = any(p.name == CHUNKS_DIR for p in found)
        raise TournamentError(
            f"{out_dir} holds another tournament's files ({shown}): give another --out"
            + (f", --resume {out_dir} to finish that tournament" if unfinished else "")
            + ", or --force to delete them (other files are kept)"
        )
    for p in found:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


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
