"""The evaluation core shared by `bgbot move`, self-play training, n-ply search and the tournament players.

Anything with ``evaluate(positions (M, 26) int8) -> (M, 5) float32`` (the side on roll's cumulative probabilities
``(win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)``) is a *position evaluator*:
:class:`bgbot.evaluation.network.Evaluator` is one. This module turns it into values of afterstates for the side that just
moved, with finished games scored exactly instead of by the net, and picks the best play per position.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from bgbot.evaluation.selection import segment_argmax
from bgbot.rules.board import game_result
from bgbot.rules.movegen import Plays, generate_plays
from bgbot.rules.outcomes import equity, flip_probabilities


class PositionEvaluator(Protocol):
    """Evaluates positions for the side on roll: ``(M, 26)`` int8 -> ``(M, 5)`` float32 cumulative probabilities."""

    def evaluate(self, positions: np.ndarray) -> np.ndarray: ...


def terminal_probabilities(result: np.ndarray) -> np.ndarray:
    """Exact probabilities of finished games for the side on roll: ``(M,)`` int8 results -> ``(M, 5)`` float32.

    ``result`` is :func:`bgbot.rules.board.game_result`: +1/+2/+3 the side on roll has won a single game / gammon /
    backgammon, -1/-2/-3 it has lost one; 0 is not a finished game (and gets zeros: callers mask those rows).
    """
    r = np.asarray(result)
    out = np.zeros((len(r), 5), dtype=np.float32)
    out[:, 0] = r > 0
    out[:, 1] = r >= 2
    out[:, 2] = r >= 3
    out[:, 3] = r <= -2
    out[:, 4] = r <= -3
    return out


def position_probabilities(evaluator: PositionEvaluator, positions: np.ndarray) -> np.ndarray:
    """Probabilities ``(M, 5)`` float32 for the side on roll of ``positions`` ``(M, 26)`` int8.

    Finished games get their exact result; only the others go to the evaluator (one batched call).
    """
    positions = np.asarray(positions, dtype=np.int8)
    over = np.flatnonzero((positions.max(axis=1) <= 0) | (positions.min(axis=1) >= 0))  # a side has none left
    if len(over) == 0:
        return evaluator.evaluate(positions)
    out = np.empty((len(positions), 5), dtype=np.float32)
    out[over] = terminal_probabilities(game_result(positions[over]))
    live = np.ones(len(positions), dtype=bool)
    live[over] = False
    if live.any():
        out[live] = evaluator.evaluate(positions[live])
    return out


def afterstate_probabilities(evaluator: PositionEvaluator, afterstates: np.ndarray) -> np.ndarray:
    """Probabilities ``(M, 5)`` float32 for the side that just moved, of afterstates ``(M, 26)`` int8 as
    :func:`bgbot.rules.movegen.generate_plays` returns them (opponent on roll). This is 0-ply in GNU Backgammon's sense."""
    return flip_probabilities(position_probabilities(evaluator, afterstates))


def best_plays(
    evaluator: PositionEvaluator, positions: np.ndarray, dice: np.ndarray
) -> tuple[Plays, np.ndarray, np.ndarray]:
    """The 0-ply best play of every position, by cubeless money equity.

    Args:
        evaluator: a :class:`PositionEvaluator`.
        positions: ``(N, 26)`` int8, side on roll.
        dice: ``(N, 2)`` ints in 1..6.

    Returns:
        ``(plays, chosen, probabilities)``: all legal plays (:class:`bgbot.rules.movegen.Plays`), ``chosen`` ``(N,)``
        int64 rows of ``plays.afterstates`` (ties go to the first row), and ``probabilities`` ``(M, 5)`` float32 of
        every afterstate for the side that moved.

    Raises:
        bgbot.rules.movegen.DiceError, bgbot.rules.board.PositionError: on malformed input.
    """
    plays = generate_plays(positions, dice)
    probs = afterstate_probabilities(evaluator, plays.afterstates)
    chosen = segment_argmax(equity(probs), plays.parent)
    return plays, chosen, probs
