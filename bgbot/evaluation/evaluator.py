"""The evaluation core shared by `bgbot move`, self-play training, n-ply search and the tournament players.

Anything with ``evaluate(positions (M, 26) int8) -> (M, 5) float32`` (the side on roll's cumulative probabilities
``(win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)``) is a *position evaluator*:
:class:`bgbot.evaluation.network.Evaluator` is one. This module turns it into values of positions and afterstates, and
picks the best play per position.

**Dispatch by class** (:mod:`bgbot.evaluation.classes`), in one batched call: finished games (``over``) get their
exact result; bear-offs get exact values from the databases (:mod:`bgbot.evaluation.bearoff`: ``bearoff-two-sided``
from the two-sided database, ``bearoff-one-sided`` from the one-sided distributions); only ``race``, ``crashed`` and
``contact`` positions go to the evaluator, and its probabilities are then made to respect what can still happen
(:func:`bgbot.rules.outcomes.constrain_probabilities`: no gammon for or against a side that can no longer win or lose
one, no backgammon where it is impossible, cumulative values consistent). Self-play training, n-ply search, the
tournament players and the CLI all come through here, so training targets are exact wherever a database or the rules
decide. :func:`set_class_dispatch` turns the dispatch off (only finished games exact, the net's probabilities
unconstrained: bgbot before classes), for benchmarks.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from bgbot.evaluation import bearoff, classes
from bgbot.evaluation.selection import segment_argmax
from bgbot.rules.board import extremes, game_result
from bgbot.rules.movegen import Plays, generate_plays
from bgbot.rules.outcomes import (
    constrain_probabilities,
    equity,
    flip_probabilities,
    possible_outcomes,
    terminal_probabilities,
)

_DISPATCH = [True]


def set_class_dispatch(enabled: bool) -> bool:
    """Turn the dispatch by position class on (the default) or off for this process; returns the previous setting."""
    previous = _DISPATCH[0]
    _DISPATCH[0] = bool(enabled)
    return previous


def class_dispatch() -> bool:
    """Whether positions are evaluated by class (see the module docstring)."""
    return _DISPATCH[0]


class PositionEvaluator(Protocol):
    """Evaluates positions for the side on roll: ``(M, 26)`` int8 -> ``(M, 5)`` float32 cumulative probabilities."""

    def evaluate(self, positions: np.ndarray) -> np.ndarray: ...


def for_cube(evaluator: PositionEvaluator) -> PositionEvaluator:
    """The evaluator whose values the cube decisions read: the model's separate cube nets where it has them
    (``evaluator.cube_evaluator``, :func:`bgbot.evaluation.specialists.attach_cube_nets`), else ``evaluator`` itself.

    Every cube decision (doubling, taking, at any ply, in cubeful games, rollout trials, analysis, the engines and
    servers) reads its cubeless probabilities through this; checker plays and :meth:`bgbot.api.Bot.evaluate`
    use ``evaluator``. Wrappers that delegate their attributes (the move filter's ``PrunedEvaluator``) pass it through.
    """
    return getattr(evaluator, "cube_evaluator", None) or evaluator


def position_probabilities(evaluator: PositionEvaluator, positions: np.ndarray) -> np.ndarray:
    """Probabilities ``(M, 5)`` float32 for the side on roll of ``positions`` ``(M, 26)`` int8.

    Exact where the rules or a bear-off database decide, the evaluator (one batched call) with outcome constraints
    elsewhere; see the module docstring and :func:`classified_probabilities`.
    """
    return classified_probabilities(evaluator, positions)[0]


def classified_probabilities(evaluator: PositionEvaluator, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities ``(M, 5)`` float32 for the side on roll of ``positions`` ``(M, 26)`` int8, and the class code of
    each position ``(M,)`` int8 (:data:`bgbot.evaluation.classes.CLASS_NAMES`), which says what answered.

    With the dispatch off (:func:`set_class_dispatch`) the codes are still the classes, but only ``over`` rows are
    exact and the others are the evaluator's output as it is. Either way the positions are classified once: an
    evaluator that dispatches by class itself (the specialists' ``evaluate_classified``) is handed the codes.
    """
    positions = np.asarray(positions, dtype=np.int8)
    ext = extremes(positions)  # read once, for the classes and the outcome constraints
    codes = classes.classify_batch(positions, ext)
    if not _DISPATCH[0]:
        return _legacy_probabilities(evaluator, positions, codes), codes
    over = codes == classes.OVER
    exact = (codes == classes.BEAROFF_TS) | (codes == classes.BEAROFF_OS)
    net = ~(over | exact)
    if net.all():
        return constrain_probabilities(_evaluate(evaluator, positions, codes), possible_outcomes(positions, ext)), codes
    out = np.empty((len(positions), 5), dtype=np.float32)
    if over.any():
        out[over] = terminal_probabilities(game_result(positions[over]))
    if exact.any():
        out[exact] = bearoff.bearoff_probabilities(positions[exact], codes[exact] == classes.BEAROFF_TS)
    if net.any():
        rows = positions[net]
        out[net] = constrain_probabilities(
            _evaluate(evaluator, rows, codes[net]), possible_outcomes(positions, ext)[net]
        )
    return out, codes


BLOCK_ROWS = 8192
"""Positions handed to the evaluator at once: a block's inputs (the encodings' many temporaries) and hidden layer stay
in a core's cache, which makes a large batch about a third faster than one call over it all
(``scripts/bench_search.py``; a 2-ply search evaluates tens of thousands of positions at a time)."""


def _evaluate(evaluator: PositionEvaluator, positions: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``evaluator.evaluate(positions)`` in equal blocks of at most :data:`BLOCK_ROWS`, handing the class codes to an
    evaluator that takes them (the specialists' ``evaluate_classified``) instead of letting it classify again."""
    by_class = getattr(evaluator, "evaluate_classified", None)

    def block(rows: slice) -> np.ndarray:
        return by_class(positions[rows], codes[rows]) if by_class is not None else evaluator.evaluate(positions[rows])

    if len(positions) <= BLOCK_ROWS:
        return block(slice(None))
    out = np.empty((len(positions), 5), dtype=np.float32)
    size = -(-len(positions) // -(-len(positions) // BLOCK_ROWS))  # equal blocks of at most BLOCK_ROWS
    for i in range(0, len(positions), size):
        out[i : i + size] = block(slice(i, i + size))
    return out


def _legacy_probabilities(evaluator: PositionEvaluator, positions: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Finished games exact, the evaluator's output unchanged elsewhere (the dispatch off): one evaluator call over
    the live rows, as they are (not in blocks), handed their class ``codes`` ``(M,)`` int8 when it takes them."""
    by_class = getattr(evaluator, "evaluate_classified", None)

    def net(rows: np.ndarray, row_codes: np.ndarray) -> np.ndarray:
        return by_class(rows, row_codes) if by_class is not None else evaluator.evaluate(rows)

    over_mask = codes == classes.OVER
    over = np.flatnonzero(over_mask)
    if len(over) == 0:
        return net(positions, codes)
    out = np.empty((len(positions), 5), dtype=np.float32)
    out[over] = terminal_probabilities(game_result(positions[over]))
    live = ~over_mask
    if live.any():
        out[live] = net(positions[live], codes[live])
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
        every afterstate for the side that moved. An evaluator with a ``move_filter``
        (:class:`bgbot.evaluation.prune.PrunedEvaluator`) evaluates only the filter's candidates: the best play is the
        best of those, and the other rows of ``probabilities`` are NaN.

    Raises:
        bgbot.rules.movegen.DiceError, bgbot.rules.board.PositionError: on malformed input.
    """
    plays = generate_plays(positions, dice)
    move_filter = getattr(evaluator, "move_filter", None)
    if move_filter is not None:
        keep = move_filter.candidates(np.asarray(positions, dtype=np.int8), plays)
        if not keep.all():
            rows = np.flatnonzero(keep)  # (K,) every position keeps at least one row, in order
            kept = afterstate_probabilities(evaluator, plays.afterstates[rows])
            probs = np.full((len(keep), 5), np.nan, dtype=np.float32)
            probs[rows] = kept
            # the best of each position's kept rows (their order kept: ties still go to the first row)
            return plays, rows[segment_argmax(equity(kept), plays.parent[rows])], probs
    probs = afterstate_probabilities(evaluator, plays.afterstates)
    chosen = segment_argmax(equity(probs), plays.parent)
    return plays, chosen, probs
