"""Cube decisions by cubeful n-ply search, as GNU Backgammon makes them at n-ply (eval.c ``EvaluatePositionCubeful4``).

At 0-ply the decision is Janowski's formula on the position's own probabilities (:func:`bgbot.cube.decision.decide`).
At n-ply the side on roll's No double and Double/Take states are each valued by looking ahead: for each of the 21
rolls the mover's best play (by its 0-ply cubeless equity, as :mod:`bgbot.evaluation.search` chooses replies; GNU
Backgammon uses its 0-ply cubeful equity there), then the opponent, on roll with the cube turned to its side, makes its
own cube decision (No double, or Double where Double/Take and Double/Pass are both at least No double:
:func:`bgbot.cube.tree.choose`) on its (n-1)-ply values; at the leaves (0-ply) every cube state gets Janowski's
cubeful value of that leaf's probabilities with the leaf's cube efficiency (:func:`bgbot.cube.tree.leaf_values`). The
values of the 21 rolls are averaged (weights 1/36, 2/36). This is not the root's cubeless n-ply probabilities put
through Janowski once (``bgbot cube --ply N``): the cube's value is read where each line of play ends.

Differences from GNU Backgammon: replies are chosen by cubeless equity; positions of the two-sided bear-off class are
valued by Janowski's formula from their exact cubeless probabilities inside the search (GNU Backgammon reads exact
cubeful equities there in money play); no search cache.

Public API::

    searched_values(evaluator, positions (N, 26), cube, match, plies, met=None) -> (N, 2) float64   # ND, DT
    decide_searched(evaluator, positions (N, 26), cube, match, plies, met=None) -> list[CubeDecision]
"""

from __future__ import annotations

import numpy as np

from bgbot.cube.decision import CubeDecision
from bgbot.cube.met import MatchEquityTable
from bgbot.cube.tree import choose, decide_from_values, double_pass_value, double_states, leaf_values, opponent_view
from bgbot.errors import BgbotError
from bgbot.evaluation.classes import cube_efficiencies
from bgbot.evaluation.evaluator import PositionEvaluator, afterstate_probabilities, for_cube, position_probabilities
from bgbot.evaluation.search import check_ply
from bgbot.evaluation.selection import segment_argmax
from bgbot.rules.board import game_result
from bgbot.rules.movegen import ROLL_WEIGHTS, generate_all_rolls
from bgbot.rules.outcomes import equity, flip_probabilities
from bgbot.rules.state import CubeState, MatchState, check_cube


class CubeSearchError(BgbotError):
    """A cube search that cannot be made: plies out of range, a finished game, an impossible cube state."""


def _state_values(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    probs: np.ndarray | None,
    states: list[CubeState],
    match: MatchState,
    plies: int,
    met: MatchEquityTable | None,
) -> np.ndarray:
    """Values ``(K, S)`` of ``positions`` ``(K, 26)`` (side on roll) for each cube state in ``states`` when the side
    on roll has made its cube decision and rolls now. ``probs`` ``(K, 5)``: their 0-ply probabilities if known."""
    k = len(positions)
    out = np.empty((k, len(states)), dtype=np.float64)
    leaf = game_result(positions) != 0 if plies > 0 else np.ones(k, dtype=bool)
    if leaf.any():
        rows = np.flatnonzero(leaf)
        p = position_probabilities(evaluator, positions[rows]) if probs is None else probs[rows]
        x = cube_efficiencies(positions[rows])
        for s, cube in enumerate(states):
            out[rows, s] = leaf_values(p, x, cube, match, met)
    if leaf.all():
        return out
    rows = np.flatnonzero(~leaf)
    plays, _ = generate_all_rolls(positions[rows])  # parent i * 21 + j: position rows[i], roll j
    mover = afterstate_probabilities(evaluator, plays.afterstates)  # (M, 5) the mover's side
    best = segment_argmax(equity(mover), plays.parent)  # (len(rows) * 21,)
    children = plays.afterstates[best]  # the opponent on roll, its view
    child_probs = flip_probabilities(mover[best])
    views = [opponent_view(cube, match) for cube in states]
    child_match = views[0][1]
    child = _decided_values(evaluator, children, child_probs, [c for c, _ in views], child_match, plies - 1, met)
    mine = -child if match.is_money else 1.0 - child  # (len(rows) * 21, S) back to the side on roll
    out[rows] = np.einsum("krs,r->ks", mine.reshape(len(rows), len(ROLL_WEIGHTS), len(states)), ROLL_WEIGHTS)
    return out


def _decided_values(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    probs: np.ndarray | None,
    states: list[CubeState],
    match: MatchState,
    plies: int,
    met: MatchEquityTable | None,
) -> np.ndarray:
    """Values ``(K, S)`` for each cube state after the side on roll's own cube decision there (No double, or Double
    with the opponent's best answer; :func:`bgbot.cube.tree.choose`)."""
    expanded: list[CubeState] = []
    index: list[tuple[int, int | None]] = []
    for cube in states:
        nd, dt = double_states(cube, match, top=False)
        i_nd = len(expanded)
        expanded.append(nd)
        if dt is not None:
            expanded.append(dt)
        index.append((i_nd, None if dt is None else i_nd + 1))
    values = _state_values(evaluator, positions, probs, expanded, match, plies, met)
    out = np.empty((len(positions), len(states)), dtype=np.float64)
    for s, (i_nd, i_dt) in enumerate(index):
        dt_values = None if i_dt is None else values[:, i_dt]
        out[:, s] = choose(values[:, i_nd], dt_values, double_pass_value(states[s], match, met))
    return out


def searched_values(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    cube: CubeState,
    match: MatchState,
    plies: int,
    met: MatchEquityTable | None = None,
) -> np.ndarray:
    """Cubeful n-ply values of No double and Double/Take for the side on roll of each position (before rolling).

    Args:
        evaluator: a :class:`bgbot.evaluation.evaluator.PositionEvaluator`; the search reads its cube nets where it
            has them (:func:`bgbot.evaluation.evaluator.for_cube`), at the leaves and for the plays inside.
        positions: ``(N, 26)`` int8, side on roll, games not finished.
        cube, match: the cube and the match, seen from the side on roll, the same for every position.
        plies: 0 .. :data:`bgbot.evaluation.search.MAX_PLIES`.
        met: match equity table (default Kazaross-XG2).

    Returns:
        ``(N, 2)`` float64: column 0 No double (the cube as it is), column 1 Double/Take (twice the cube, owned by the
        opponent). Money: points for a cube of 1 (divide by ``cube.value`` for GNU Backgammon's normalised equity);
        match: match winning chance.

    Raises:
        bgbot.evaluation.search.SearchError: ``plies`` out of range (:func:`bgbot.evaluation.search.check_ply`).
        CubeSearchError: a finished game. bgbot.rules.state.CubeStateError: an impossible cube.
    """
    check_ply(plies)
    check_cube(cube, match)
    positions = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    if (game_result(positions) != 0).any():
        raise CubeSearchError("a cube decision needs a game in progress; a position given is finished")
    doubled = CubeState(2 * cube.value, "opponent")
    return _state_values(for_cube(evaluator), positions, None, [cube, doubled], match, int(plies), met)


def decide_searched(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    cube: CubeState,
    match: MatchState,
    plies: int,
    met: MatchEquityTable | None = None,
) -> list[CubeDecision]:
    """The cube decision of each position's side on roll from :func:`searched_values`
    (:func:`bgbot.cube.tree.decide_from_values`); ``efficiency`` of each decision is its root's cube efficiency
    (the leaves use their own). Raises as :func:`searched_values`."""
    positions = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    values = searched_values(evaluator, positions, cube, match, plies, met)
    probs = position_probabilities(for_cube(evaluator), positions)
    x = cube_efficiencies(positions)
    return [
        decide_from_values(values[i, 0], values[i, 1], cube, match, bool(probs[i, 1] > 0.0), float(x[i]), met)
        for i in range(len(positions))
    ]
