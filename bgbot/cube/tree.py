"""The cube layer of a cubeful n-ply search, as GNU Backgammon's ``EvaluatePositionCubeful4`` (eval.c) builds it: cube
states at a node, Janowski's cubeful value of a leaf for each state, the side on roll's choice between No double and
Double at a node, and the cube decision at the root from the searched values. Pure numbers, no boards; the search
itself (rolls, plays, evaluations) is :mod:`bgbot.arena.cubesearch`.

Units ("absolute" values): money values are points for a root cube of 1, i.e. the cube value times Janowski's
normalised equity (:func:`bgbot.cube.janowski.money_cubeful`), so states with different cube values compare directly;
match values are match winning chances. Every value is seen from the side on roll at its node.

Public API::

    opponent_view(cube, match) -> (CubeState, MatchState)      # the same state seen by the other side
    double_states(cube, match, top) -> (CubeState, CubeState | None)   # No double, and Double/Take if allowed
    leaf_values(p (N, 5), x (N,), cube, match, met=None) -> (N,) float64
    double_pass_value(cube, match, met=None) -> float
    choose(nd (N,), dt (N,) | None, dp) -> (N,) float64          # gnubg GetECF3
    decide_from_values(nd, dt, cube, match, gammon_possible, efficiency, met=None) -> CubeDecision

Sources (GNU Backgammon 1.07 eval.c, read and re-expressed, not copied): ``EvaluatePositionCubeful4`` (the recursion:
at an inner node the cube states are turned to the opponent's side and the values of the 21 rolls averaged; at a leaf
each state gets ``Cl2CfMoney``/``Cl2CfMatch`` of the 0-ply probabilities), ``MakeCubePos`` (each state spawns No
double and, where the side on roll may double and the node is not the root, Double/Take), ``GetECF3`` (the side on
roll doubles where both Double/Take and Double/Pass are at least No double; its value is then the smaller of the two).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bgbot.cube.decision import CubeDecision, decision_from_values
from bgbot.cube.janowski import MatchScore, match_cubeful_mwc, money_cubeful
from bgbot.cube.met import MatchEquityTable, kazaross_xg2_extended
from bgbot.rules.outcomes import check_probabilities
from bgbot.rules.state import CubeState, MatchState, Owner, may_double

_FLIP: dict[str, Owner] = {"centre": "centre", "me": "opponent", "opponent": "me"}


def opponent_view(cube: CubeState, match: MatchState) -> tuple[CubeState, MatchState]:
    """The cube and match seen by the other side (owner and score swapped; the other settings kept)."""
    return CubeState(cube.value, _FLIP[cube.owner]), replace(match, score=(match.score[1], match.score[0]))


def double_states(cube: CubeState, match: MatchState, top: bool) -> tuple[CubeState, CubeState | None]:
    """The states a node values for one cube state (gnubg MakeCubePos): No double (the cube as it is) and Double/Take
    (twice the value, owned by the opponent), the latter None at the root (``top``: the decision being made compares
    them itself) or where the side on roll may not double (:func:`bgbot.rules.state.may_double`)."""
    if top or not may_double(cube, match):
        return cube, None
    return cube, CubeState(2 * cube.value, "opponent")


def _score(cube: CubeState, match: MatchState, met: MatchEquityTable | None) -> MatchScore:
    away = match.away
    return MatchScore(away[0], away[1], cube.value, match.crawford, met or kazaross_xg2_extended())


def leaf_values(
    probabilities: np.ndarray,
    efficiency: np.ndarray,
    cube: CubeState,
    match: MatchState,
    met: MatchEquityTable | None = None,
) -> np.ndarray:
    """Janowski's cubeful value of leaves for the side on roll, cube state ``cube`` (gnubg Cl2CfMoney / Cl2CfMatch).

    Args:
        probabilities: ``(N, 5)`` cumulative probabilities of the side on roll (a network's float32 rounding is
            repaired; backgammons count as gammons where ``match.backgammons`` is False).
        efficiency: ``(N,)`` cube efficiency of each leaf (:func:`bgbot.evaluation.classes.cube_efficiencies`).
        cube, match: seen from the side on roll.

    Returns:
        ``(N,)`` float64: money, points for a root cube of 1 (``cube.value`` times the normalised equity); match,
        match winning chance.
    """
    p = check_probabilities(np.asarray(probabilities).reshape(-1, 5), match.backgammons, repair=True)
    x = np.asarray(efficiency, dtype=np.float64)
    if match.is_money:
        return cube.value * money_cubeful(p, cube.owner_code, match.jacoby, x)  # type: ignore[arg-type]
    return match_cubeful_mwc(p, _score(cube, match, met), cube.owner_code, x)  # type: ignore[arg-type]


def double_pass_value(cube: CubeState, match: MatchState, met: MatchEquityTable | None = None) -> float:
    """What the doubler gets when its double of ``cube`` is passed: ``cube.value`` points (money) or the match winning
    chance after winning ``cube.value`` points (gnubg GetDPEq)."""
    if match.is_money:
        return float(cube.value)
    return _score(cube, match, met).mwc_if(0, cube.value)


def choose(nd: np.ndarray, dt: np.ndarray | None, dp: float) -> np.ndarray:
    """The side on roll's value after its own cube decision (gnubg GetECF3): Double where Double/Take and Double/Pass
    are both at least No double, worth the smaller of the two; No double otherwise, or where ``dt`` is None (no
    double possible). ``nd``, ``dt`` ``(N,)``, ``dp`` a scalar, all in the same unit -> ``(N,)`` float64."""
    nd = np.asarray(nd, dtype=np.float64)
    if dt is None:
        return nd
    dt = np.asarray(dt, dtype=np.float64)
    doubles = (dt >= nd) & (dp >= nd)
    return np.where(doubles, np.minimum(dt, dp), nd)


def decide_from_values(
    nd: float,
    dt: float,
    cube: CubeState,
    match: MatchState,
    gammon_possible: bool,
    efficiency: float,
    met: MatchEquityTable | None = None,
) -> CubeDecision:
    """The root's cube decision from searched values of No double and Double/Take (in :func:`leaf_values`' units).

    Equities are reported as :func:`bgbot.cube.decision.decide` reports them: money normalised to the current cube
    (Double/Pass = +1), match in match winning chance; the action by the same rule (GNU Backgammon's
    FindBestCubeDecision, compared in normalised money equity at a match score). ``take_point`` is NaN (a searched
    value has no single take point). Where the side on roll may not double the action is "No double (cube not
    available)" or, in match play with the cube centred or its own, GNU Backgammon's "dead cube" wording, and
    Double/Take and Double/Pass are given as No double except where the opponent owns the cube.
    """
    dp = double_pass_value(cube, match, met)
    if match.is_money:
        nd, dt, dp = nd / cube.value, dt / cube.value, 1.0
    return decision_from_values((nd, dt, dp), cube, match, gammon_possible, efficiency, float("nan"), met)
