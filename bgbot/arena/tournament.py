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
player for every game where it is on roll. A chunk whose worker dies is replayed (up to
:data:`bgbot.arena.distributed.MAX_ATTEMPTS` times, then :class:`TournamentError`), so no game is lost silently.

**Stopping and resuming.** With an output directory, each chunk's games are saved there as soon as the chunk finishes
(``OUT/chunks/``). SIGINT or SIGTERM (under :func:`bgbot.arena.distributed.interrupt_signals`), a player that fails
(an external engine that dies or plays an illegal move) or a chunk that keeps killing its worker stops the run with
:class:`TournamentStopped`, whose results count the finished chunks only (whole duplicate pairs); ``resume`` then
plays only the chunks not saved, and since a chunk's games depend only on its seed and pair range the totals are
those of an uninterrupted run. Once every chunk has finished and the ``.mat`` files are written, the results are
kept in ``OUT/results.json`` and the saved chunks removed (:func:`finish_saved`); ``resume`` of that directory then
answers with :class:`TournamentComplete`, which carries those results.

**Modules.** This module plays a tournament (:func:`play`, :func:`run`) and re-exports the public names of its parts,
so that ``bgbot.arena.tournament`` is the one name callers import: :mod:`bgbot.arena.tournament_settings` (the
settings and their checks), :mod:`bgbot.arena.tournament_runner` (where the work units run),
:mod:`bgbot.arena.tournament_store` (the saved work units, ``--resume``, ``results.json``, claiming ``--out``) and
:mod:`bgbot.arena.tournament_mat` (the ``.mat`` files). A work unit itself is :mod:`bgbot.arena.chunks`.
"""

from __future__ import annotations

import signal
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from bgbot.arena import cubeful, distributed, stats
from bgbot.arena.chunks import (
    CRASH_ENV,
    MAX_PLIES,
    Chunk,
    ChunkResult,
    Task,
    TournamentError,
    _player,
    play_games,
)
from bgbot.arena.distributed import Interrupted
from bgbot.arena.engine import CubeRules
from bgbot.arena.players import Player, display_name
from bgbot.arena.report import format_table
from bgbot.arena.tournament_mat import OutputError, mat_path, mat_text, write_files
from bgbot.arena.tournament_runner import run_chunks
from bgbot.arena.tournament_settings import (
    FORCE_WITH_RESUME,
    MAX_GAMES,
    MAX_SEED,
    MAX_WORKERS,
    MIN_GAMES,
    TournamentSettings,
    check_settings,
    check_variants,
)
from bgbot.arena.tournament_store import (
    CHUNKS_DIR,
    RESULTS_FILE,
    ChunkStore,
    TournamentComplete,
    claim_out_dir,
    discard_saved,
    finish_saved,
    resume_settings,
    tournament_files,
)
from bgbot.errors import BgbotError

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
    "check_variants",
    "CHUNKS_DIR",
    "FORCE_WITH_RESUME",
    "claim_out_dir",
    "tournament_files",
    "run",
    "play",
    "write_files",
    "format_table",
]

CHUNK_PAIRS = 250
"""Duplicate pairs (2 games each) per work unit: the default of :attr:`TournamentSettings.chunk_pairs`, read by
:func:`play` when it is called."""


def _name(spec) -> str:
    return spec.name if isinstance(spec, Player) else display_name(spec)


def _spec_str(spec) -> str:
    return spec.name if isinstance(spec, Player) else str(spec)


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
    unit's games are saved in ``out_dir/chunks/`` as soon as they finish
    (:class:`bgbot.arena.tournament_store.ChunkStore`), and ``settings.resume`` plays only the units not saved there:
    the totals are those of an uninterrupted run.

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
    store = ChunkStore(Path(out_dir), saved, tasks, settings.resume) if out_dir is not None else None
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
        _, restarts = run_chunks(todo, workers, settings.progress, ray, on_chunk)
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
                path = mat_path(Path(out_dir), k, names[i], names[j])
                files.append((path, mat_text(names[i], names[j], games_mat, 0, jac, rules)))
                row["mat_file"] = str(path)
            else:
                row["mat_files"] = []
                for no, m in enumerate(games_mat, 1):
                    path = mat_path(Path(out_dir), k, names[i], names[j], no)
                    files.append(
                        (path, mat_text(names[i], names[j], m, rules.match_length if rules else 0, None, rules))
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
