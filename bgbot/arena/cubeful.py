"""Cubeful games for tournaments: money sessions with the doubling cube, and matches to N points.

The games advance by :func:`bgbot.arena.engine.play_ply` with its cube phase (the engine's module docstring gives the
cube decisions: each player's own cubeless probabilities, Janowski's cubeful equities (:func:`bgbot.cube.decision.batch_values`),
GNU Backgammon's proper action from :func:`bgbot.cube.decision.doubles`, so a double is offered exactly when
:attr:`bgbot.cube.decision.CubeDecision.kind` of :func:`bgbot.cube.decision.decide` doubles; tests/test_cubeful.py checks the
agreement). Checker play: cubeless money equity in money play (a backgammon worth 2 when backgammons count as
gammons); in matches a net player ranks its plays by match winning chance at the score and cube
(:meth:`bgbot.arena.players.Player.choose_at`, as ``bgbot move`` does). This module keeps the sessions and matches:
scores, the Crawford rule, the next game of a match (their statistics are in :mod:`bgbot.arena.stats`).

**Scoring.** A game scores 1, 2 or 3 times the cube value (a backgammon 2 times when backgammons count as gammons,
:attr:`CubeRules.backgammons`). Money: the Jacoby rule (when on) makes gammons and backgammons single while the cube
is centred, automatic doubles included (they leave it centred: the rule applies until a player doubles). Automatic
doubles (money, :attr:`CubeRules.auto_doubles` N): each tied opening roll doubles the centred cube, at most N times a
game (:func:`bgbot.arena.engine.start_games`); the summary gives the distribution of starting cubes. Match (``match_length`` N): a game's points go to the winner's score
(the full points are written in the ``.mat`` file, as GNU Backgammon does); the first to reach N wins the match.
Crawford rule: the game after a side first reaches N - 1 is the Crawford game (no doubling); later games are
post-Crawford. Jacoby and automatic doubles do not apply in match play.

**Dice.** :class:`bgbot.arena.engine.DuplicateDice`: game 0 of every slot uses exactly the dice of cubeless play
(:func:`bgbot.rules.dice.pair_dice`, opening by :func:`bgbot.rules.dice.opening_dice`); game ``k`` of a match uses
the same functions with the pairing key ``pairing + k * 2**24``. Both matches of a duplicate pair (seats swapped)
therefore get the same dice for their ``k``-th game; the dice never depend on the batch or the worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgbot.arena.engine import (
    GAME_KEY,
    MAX_PLIES,
    CubePhase,
    CubeRules,
    DuplicateDice,
    EngineError,
    Table,
    cube_values,
    efficiencies,
    offers_double,
    play_ply,
)
from bgbot.formats import matfile

__all__ = [
    "GAME_KEY",
    "MAX_GAMES",
    "CubeRules",
    "CubefulError",
    "CubefulChunk",
    "play_games",
    "cube_values",
    "efficiencies",
    "offers_double",
]

MAX_GAMES = 1000
"""A match longer than this is a bug."""

A_DOUBLES, A_TAKES, A_PASSES = 0, 1, 2
"""Columns of the cube-action counts ``(2, 3)``: row 0 = player A, row 1 = player B."""

CubefulError = EngineError
"""Bad cubeful settings (negative match length) or a game/match that ran away (the engine's error)."""


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
    ``start_cube`` ``(2P,)`` money: the cube value the game started with (automatic doubles).
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
    start_cube: np.ndarray = field(default_factory=lambda: np.ones(0, dtype=np.int64))


def play_games(
    player_a,
    player_b,
    seed: int,
    pairing: int,
    start: int,
    stop: int,
    rules: CubeRules,
    record: bool = False,
) -> CubefulChunk:
    """Play the cubeful duplicate pairs ``start .. stop - 1`` of a pairing (games or matches), all advancing together
    (each ply by :func:`bgbot.arena.engine.play_ply` with its cube phase).

    Args:
        player_a, player_b: :class:`bgbot.arena.players.Player` objects (``choose`` and ``probabilities``).
        seed, pairing: select the dice (module docstring).
        start, stop: the pair range.
        rules: :class:`CubeRules`.
        record: also return the games as :class:`bgbot.formats.matfile.Game` lists (left column = A), with cube lines.

    Raises:
        CubefulError: a game or match that does not end (a game past :data:`bgbot.arena.engine.MAX_PLIES` plies).
    """
    pairs = np.arange(start, stop)
    n = 2 * len(pairs)
    money = rules.is_money
    length = rules.match_length
    a_seat = np.tile([0, 1], len(pairs))
    table = Table.create(n, seats=np.column_stack([a_seat, 1 - a_seat]), record=record)
    dice = DuplicateDice(seed, pairing, np.repeat(pairs, 2), rules)
    phase = CubePhase(rules, np.zeros((n, 2), dtype=np.int64), np.zeros(n, dtype=bool))
    score, crawford_now = phase.score, phase.crawford
    assert score is not None and crawford_now is not None
    crawford_done = np.zeros(n, dtype=bool)
    points_a = np.zeros(n, dtype=np.int64)
    kind = np.zeros(n, dtype=np.int8)
    final_cube = np.ones(n, dtype=np.int64)
    start_cube = np.ones(n, dtype=np.int64)
    plies = np.zeros(n, dtype=np.int64)
    counts = np.zeros((2, 3), dtype=np.int64)
    done_slot = np.zeros(n, dtype=bool)
    game_cubes: list[list[int]] = [[] for _ in range(n)]
    slot_games: list[list] = [[] for _ in range(n)]

    def on_end(t: Table, idx: np.ndarray, winner_seat: np.ndarray, pts: np.ndarray, how: np.ndarray) -> None:
        win_col = t.seats[idx, winner_seat]
        for j, g in enumerate(idx):
            game_cubes[g].append(int(t.cube[g]))
            if t.log is not None:
                slot_games[g].append(matfile.Game(tuple(t.log[g]), int(win_col[j]), int(pts[j])))
        if money:
            points_a[idx] = np.where(win_col == 0, pts, -pts)
            kind[idx] = how
            final_cube[idx] = t.cube[idx]
            start_cube[idx] = dice.start_cube[idx]
            done_slot[idx] = True
            return
        score[idx, winner_seat] += pts
        over = score[idx].max(axis=1) >= length
        done = idx[over]
        points_a[done] = np.where(win_col[over] == 0, 1, -1)
        done_slot[done] = True
        go = idx[~over]
        crawford_done[go] |= crawford_now[go]
        crawford_now[go] = ~crawford_done[go] & (score[go] == length - 1).any(axis=1)
        dice.game_no[go] += 1
        if len(go) and dice.game_no[go].max() >= MAX_GAMES:
            raise CubefulError(f"a match of pairing {pairing} ran past {MAX_GAMES} games")
        dice.start(t, go)

    dice.start(table, np.arange(n))
    players = (player_a, player_b)
    while table.active.any():
        try:
            ply = play_ply(table, dice, players, phase, on_end, MAX_PLIES)
        except EngineError as e:
            raise CubefulError(f"pairing {pairing}, pair range {start}..{stop}: {e}") from e
        plies[ply.idx] += 1
        np.add.at(counts[:, A_DOUBLES], ply.doubler, 1)
        taker = 1 - ply.doubler
        np.add.at(counts[:, A_TAKES], taker[ply.taken], 1)
        np.add.at(counts[:, A_PASSES], taker[~ply.taken], 1)
    return CubefulChunk(
        pairing,
        start,
        stop,
        points_a,
        kind,
        final_cube,
        _by_column(score, a_seat),
        dice.game_no + 1,
        plies,
        counts,
        table.positions,
        game_cubes,
        slot_games if record else [],
        start_cube,
    )


def _by_column(score: np.ndarray, a_seat: np.ndarray) -> np.ndarray:
    """Scores by seat ``(G, 2)`` -> by player (A, B)."""
    out = score.copy()
    swap = a_seat == 1
    out[swap] = score[swap][:, ::-1]
    return out


# -------------------------------------------------------------------------------------------------- statistics
