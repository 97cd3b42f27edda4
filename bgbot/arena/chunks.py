"""One work unit of a tournament: a chunk of duplicate pairs of one pairing, played in this process or in a pool
worker (:func:`run_chunk`). Kept apart from :mod:`bgbot.arena.tournament` so that a spawned worker imports only what
plays games (the engine, the players, the cubeful rules), not the statistics (scipy) or the reports: pool start-up
is most of a small tournament's time.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bgbot.arena import cubeful
from bgbot.arena.engine import MAX_PLIES, CubePhase, CubeRules, DuplicateDice, EngineError, Table, play_ply
from bgbot.arena.players import Player, make_player
from bgbot.errors import BgbotError
from bgbot.formats import matfile

__all__ = [
    "MAX_PLIES",
    "Task",
    "CRASH_ENV",
    "TournamentError",
    "ChunkResult",
    "Chunk",
    "play_games",
    "run_chunk",
    "worker_init",
]

CRASH_ENV = "BGBOT_TEST_CRASH_ONCE"
"""Test hook: when this names a file that does not exist, the first pool worker to start a chunk creates it and
exits abruptly (``os._exit``), as a killed worker would."""


class TournamentError(BgbotError):
    """A tournament that cannot run: fewer than two players, an odd or out-of-range game count, a seed or worker
    count out of range, a chunk that kept dying."""


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
    player_a: Player,
    player_b: Player,
    seed: int,
    pairing: int,
    start: int,
    stop: int,
    record: bool = False,
    rules: CubeRules | None = None,
) -> ChunkResult:
    """Play the duplicate pairs ``start .. stop - 1`` of a pairing, all games advancing together (each ply by
    :func:`bgbot.arena.engine.play_ply`, dice by :class:`bgbot.arena.engine.DuplicateDice`).

    Args:
        player_a, player_b: the two players (``choose`` is called once per ply for each, batched).
        seed, pairing: select the dice (see :func:`bgbot.rules.dice.pair_dice`).
        start, stop: the pair range.
        record: also return each game as a :class:`bgbot.formats.matfile.Game` (left column = A).
        rules: how games score without a cube (backgammons as gammons: a :class:`CubePhase` that never doubles);
            ``None``: 1, 2, 3 points.

    Raises:
        TournamentError: a game ran past :data:`MAX_PLIES`.
    """
    pairs = np.arange(start, stop)
    n = 2 * len(pairs)
    a_seat = np.tile([0, 1], len(pairs))  # (G,) A sits in seat 0 in even games
    table = Table.create(n, seats=np.column_stack([a_seat, 1 - a_seat]), record=record)
    dice = DuplicateDice(seed, pairing, np.repeat(pairs, 2))
    dice.start(table, np.arange(n))
    phase = None if rules is None else CubePhase(rules, doubling=False)
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
            play_ply(table, dice, (player_a, player_b), phase, on_end=on_end, max_plies=MAX_PLIES)
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


def worker_init() -> None:
    """One torch thread and one BLAS thread per worker process: the workers are the parallelism. torch itself is not
    imported here (seconds per worker): a worker imports it only when a net player is built (:func:`_one_thread`).
    The worker ends as soon as its parent is gone (:func:`bgbot.arena.distributed.watch_parent`)."""
    from bgbot.arena.distributed import watch_parent

    watch_parent()
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


@dataclass(frozen=True)
class Task:
    """One work unit of a tournament: the duplicate pairs ``start .. stop - 1`` of pairing ``pairing``.

    Attributes:
        player_a, player_b: spec strings (built once per process) or :class:`Player` objects (picklable for a pool).
        seed: selects the dice and the random player's choices.
        pairing: the pairing's number (it selects the dice with ``seed``).
        start, stop: the pair range.
        record: also return the games as :class:`bgbot.formats.matfile.Game` lists.
        rules: how games score (and, with ``doubling``, the cube rules); ``None``: cubeless, 1, 2, 3 points.
        doubling: cubeful games (:func:`bgbot.arena.cubeful.play_games`), else cubeless (:func:`play_games`).
    """

    player_a: Player | str
    player_b: Player | str
    seed: int
    pairing: int
    start: int
    stop: int
    record: bool
    rules: CubeRules | None
    doubling: bool

    @property
    def games(self) -> int:
        """The games of this unit (two a pair)."""
        return 2 * (self.stop - self.start)


def run_chunk(task: Task) -> Chunk:
    """Play one :class:`Task`: cubeless (scored by its ``rules`` when given) unless ``doubling``, else
    :func:`bgbot.arena.cubeful.play_games`."""
    seed, pairing, start, stop, record, rules = task.seed, task.pairing, task.start, task.stop, task.record, task.rules
    marker = os.environ.get(CRASH_ENV)
    if marker and multiprocessing.parent_process() is not None and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(17)
    a, b = _player(task.player_a, seed), _player(task.player_b, seed)
    if multiprocessing.parent_process() is not None:
        _one_thread()
    if not task.doubling:
        return play_games(a, b, seed, pairing, start, stop, record, rules)
    assert rules is not None
    return cubeful.play_games(a, b, seed, pairing, start, stop, rules, record)
