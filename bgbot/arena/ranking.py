"""The one way from positions to ranked plays and cube decisions, batched: what the API, the players, the HTTP
server and the protocols all ask.

Public API::

    rank(evaluator, positions (N, 26) int8, dice (N, 2), ply=0, states=None, named=False) -> Ranking
    Ranking: plays (afterstates (M, 26) int8, parent (M,)), probabilities (M, 5), values (M,), equities (M,),
        searched (M,), classes (M,), order (M,), best (N,), names [M] | None, ply
    decide_cubes(evaluator, positions (N, 26) int8, states, ply=0) -> CubeDecisions
    CubeDecisions: probabilities (N, 5), classes (N,), decisions [CubeDecision]

Positions are seen from the side on roll (:mod:`bgbot.rules.board`); ``states`` holds one ``(CubeState, MatchState)``
pair per position, seen by the side on roll. Each request generates its plays once
(:func:`bgbot.rules.movegen.generate_plays`) and calls the evaluator once per ply: the 0-ply values of every play,
then one call per level of the search for the move filter's candidates (:func:`bgbot.evaluation.search.afterstate_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from bgbot.cube import decision as cube_lib
from bgbot.evaluation import bearoff, search
from bgbot.evaluation.classes import BEAROFF_TS, CLASS_NAMES, classify_batch, cube_efficiencies, cube_efficiency
from bgbot.evaluation.evaluator import PositionEvaluator, class_dispatch, classified_probabilities, for_cube
from bgbot.evaluation.selection import segment_argmax
from bgbot.formats.plays import name_plays
from bgbot.rules.movegen import Plays, generate_plays
from bgbot.rules.outcomes import equity, flip_probabilities
from bgbot.rules.state import CubeState, MatchState

__all__ = ["Ranking", "rank", "CubeDecisions", "decide_cubes"]

State = tuple[CubeState, MatchState]


@dataclass(frozen=True, eq=False)
class Ranking:
    """Every legal play of a batch of positions, valued and ordered.

    Attributes:
        plays: the legal plays (:class:`bgbot.rules.movegen.Plays`: afterstates ``(M, 26)`` int8 with the opponent
            on roll, ``parent`` ``(M,)`` int64 ascending), in the generator's order, or in notation order when named
            at 0 ply (the order they are evaluated in: a network's output for a row may differ in its last bits with
            the row's place in the batch, and the answers keep the values of that order).
        probabilities: ``(M, 5)`` float32, the mover's cubeless probabilities after each play: at ``ply`` where
            ``searched``, else at 0 ply.
        values: ``(M,)`` float64, what ranks the plays for the mover: :func:`bgbot.cube.decision.play_values` at
            each position's state (money equity, backgammons counted as the state says; the match winning chance at a
            match score), or the cubeless money equity when no states are given.
        equities: ``(M,)`` float64, the cubeless money equity for the mover (``values`` in money play).
        searched: ``(M,)`` bool, the plays valued at ``ply`` (the move filter's candidates; every play at 0 ply).
        classes: ``(M,)`` int8, the class of each afterstate, which says what valued it
            (:data:`bgbot.evaluation.classes.CLASS_NAMES`).
        order: ``(M,)`` int64 rows, position by position, best first: searched plays before the others, then by
            ``values`` (by the search's cubeless equity at ``ply`` >= 1 in money play with backgammons, and without
            states), ties in the order of ``plays`` at 0 ply, in the search's order at ``ply`` >= 1 (cubeless
            equity, then generator order).
        best: ``(N,)`` int64, each position's chosen row: the searched play with the highest ``values``, ties to the
            first generated (what the players play).
        names: GNU Backgammon's notation of each play (:func:`bgbot.formats.plays.name_plays`) when asked for.
        ply: the lookahead of the searched plays.
    """

    plays: Plays
    probabilities: np.ndarray
    values: np.ndarray
    equities: np.ndarray
    searched: np.ndarray
    classes: np.ndarray
    order: np.ndarray
    best: np.ndarray
    names: list[str] | None
    ply: int

    def rows(self, i: int) -> np.ndarray:
        """The rows of position ``i`` in ``order``, best first: ``(M_i,)`` int64."""
        starts = self.plays.offsets(len(self.best))
        return self.order[int(starts[i]) : int(starts[i + 1])]


def rank(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    dice: np.ndarray,
    ply: int = 0,
    states: Sequence[State] | None = None,
    named: bool = False,
) -> Ranking:
    """Rank every legal play of every position.

    At 0 ply each afterstate gets the evaluator's own probabilities (GNU Backgammon's 0-ply; exact where its class
    allows); at ``ply`` N >= 1 the move filter's candidates (:func:`bgbot.evaluation.search.filter_candidates` of the
    0-ply cubeless equities) get the N-ply lookahead and the others keep their 0-ply values.

    Args:
        evaluator: a :class:`bgbot.evaluation.evaluator.PositionEvaluator`.
        positions: ``(N, 26)`` int8, side on roll; ``dice``: ``(N, 2)`` ints 1..6.
        ply: search depth, 0 .. :data:`bgbot.evaluation.search.MAX_PLIES`.
        states: one ``(CubeState, MatchState)`` per position, seen by the mover, or None: cubeless money play.
        named: also give each play's notation; at 0 ply the plays are then in notation order.

    Raises:
        bgbot.evaluation.search.SearchError: ``ply`` out of range. bgbot.rules.movegen.DiceError,
        bgbot.rules.board.PositionError: malformed dice or positions.
    """
    ply = search.check_ply(ply)
    positions = np.asarray(positions, dtype=np.int8)
    plays = generate_plays(positions, dice)
    names = None
    if named:
        names, notation_rank = name_plays(positions, dice, plays)
        if ply == 0:  # listed and evaluated in notation order, ties kept in it
            rows = np.lexsort((notation_rank, plays.parent))
            plays = Plays(plays.afterstates[rows], plays.parent[rows])
            names = [names[i] for i in rows.tolist()]
    probs, codes = classified_probabilities(evaluator, plays.afterstates)
    mine = flip_probabilities(probs)  # (M, 5) float32, the mover's
    searched = np.ones(len(plays), dtype=bool)
    if ply > 0:
        searched = search.filter_candidates(equity(mine), plays.parent)
        mine[searched] = search.afterstate_values(evaluator, plays.afterstates[searched], ply)
    cubeless = equity(mine).astype(np.float64)  # (M,) as the search ranks
    if states is None:
        values = equities = key = cubeless
    else:
        values, equities, key = _state_values(plays, mine, states, ply, cubeless)
    m = np.arange(len(plays))
    if ply == 0:
        tie = m
    else:
        tie = np.empty(len(plays), dtype=np.int64)
        tie[np.lexsort((m, -cubeless, ~searched, plays.parent))] = m  # the search's order
    order = np.lexsort((tie, -key, ~searched, plays.parent)).astype(np.int64)
    best = segment_argmax(np.where(searched, values, -np.inf), plays.parent)
    return Ranking(plays, mine, values, equities, searched, codes, order, best, names, ply)


def _state_values(
    plays: Plays, mine: np.ndarray, states: Sequence[State], ply: int, cubeless: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, equities, key)`` ``(M,)`` float64 each: :func:`bgbot.cube.decision.play_values` at each play's state
    (one call per distinct state), the cubeless equity shown, and what :attr:`Ranking.order` sorts by."""
    values = np.empty(len(plays))
    equities = np.empty(len(plays))
    key = np.empty(len(plays))
    index: dict[State, int] = {}
    codes = np.array([index.setdefault(s, len(index)) for s in states], dtype=np.int64)[plays.parent]  # (M,)
    for k, (cube, match) in enumerate(index):
        rows = np.flatnonzero(codes == k)
        x = 0.0 if match.is_money else cube_efficiencies(plays.afterstates[rows])
        values[rows] = cube_lib.play_values(mine[rows], x, cube, match)
        equities[rows] = values[rows] if match.is_money else equity(mine[rows].astype(np.float64))
        key[rows] = cubeless[rows] if ply > 0 and match.is_money and match.backgammons else values[rows]
    return values, equities, key


@dataclass(frozen=True, eq=False)
class CubeDecisions:
    """The cube decisions of a batch of positions, before the roll.

    Attributes:
        probabilities: ``(N, 5)`` float64, the side on roll's cubeless probabilities the decisions were made from
            (at the requested ply; at 0 ply, exact, in the two-sided bear-off class).
        classes: ``(N,)`` int8, each position's class (:data:`bgbot.evaluation.classes.CLASS_NAMES`).
        decisions: one :class:`bgbot.cube.decision.CubeDecision` per position, its ``evaluator`` the class name.
    """

    probabilities: np.ndarray
    classes: np.ndarray
    decisions: list[cube_lib.CubeDecision]


def decide_cubes(
    evaluator: PositionEvaluator, positions: np.ndarray, states: Sequence[State], ply: int = 0
) -> CubeDecisions:
    """The cube action of the side on roll of each position (:func:`bgbot.cube.decision.decide`, Janowski's model
    with the position's cube efficiency), from the evaluator's cubeless probabilities at ``ply``.

    In money play a position of the two-sided bear-off class (with the class dispatch on) takes its action from the
    database's exact cubeful equities (:func:`bgbot.cube.decision.decide_from_money_equities`) at any ``ply``, as GNU
    Backgammon does. The evaluator is called once at 0 ply, and only at ``ply`` N >= 1 for the N levels of the
    lookahead (:func:`bgbot.evaluation.search.afterstate_values`: the position as the opponent's afterstate).

    Args:
        evaluator: a :class:`bgbot.evaluation.evaluator.PositionEvaluator`; its cube nets answer where it has them
            (:func:`bgbot.evaluation.evaluator.for_cube`), the lookahead's plays included.
        positions: ``(N, 26)`` int8, side on roll; ``states``: one ``(CubeState, MatchState)`` per position.
        ply: lookahead of the cubeless probabilities, 0 .. :data:`bgbot.evaluation.search.MAX_PLIES`.

    Raises:
        bgbot.evaluation.search.SearchError: ``ply`` out of range.
    """
    ply = search.check_ply(ply)
    positions = np.asarray(positions, dtype=np.int8)
    evaluator = for_cube(evaluator)
    if ply == 0:
        probs, codes = classified_probabilities(evaluator, positions)
    else:  # the two-sided bear-off class keeps its exact 0-ply values
        codes = classify_batch(positions)
        exact = codes == BEAROFF_TS
        probs = np.empty((len(positions), 5), dtype=np.float32)
        if exact.any():
            probs[exact] = classified_probabilities(evaluator, positions[exact])[0]
        if not exact.all():
            probs[~exact] = flip_probabilities(search.afterstate_values(evaluator, positions[~exact], ply))
    probs = probs.astype(np.float64)
    decisions = []
    for i, (cube, match) in enumerate(states):
        source = CLASS_NAMES[int(codes[i])]
        if codes[i] == BEAROFF_TS and match.is_money and class_dispatch():
            db = bearoff.two_sided_equities(positions[i])
            decision = cube_lib.decide_from_money_equities(db["own"], db["centre"], db["opp"], cube, match)
        else:
            decision = cube_lib.decide(probs[i], cube, match, cube_efficiency(positions[i]))
        decisions.append(replace(decision, evaluator=source))
    return CubeDecisions(probs, codes, decisions)
