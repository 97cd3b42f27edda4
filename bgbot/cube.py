"""Cube decisions for money and match play, from cubeless probabilities, as GNU Backgammon makes them at 0 ply.

Public API::

    CubeState(value=1, owner="centre")                    # owner: "centre" | "me" | "opponent" (me = side on roll)
    MatchState(length=0, score=(0, 0), crawford=False, jacoby=True, backgammons=True, automatic_doubles=0)
        .is_money, .post_crawford, .away -> (int, int)
    CubeDecision: action, equities {no_double, double_take, double_pass}, unit "equity" | "mwc", take_point,
        errors {no_double, double, take, pass}, cube_available, efficiency
    classify(position) -> "over" | "bearoff" | "race" | "contact"
    cube_efficiency(position) -> float;  efficiency_for(position_class, pips_on_roll) -> float
    decide(probabilities, cube, match, efficiency, met=None) -> CubeDecision
    cubeful_values(probabilities (N, 5), cube, match, efficiency, met=None) -> (N,) float64  # rank plays
    janowski_take_point(W, L, x) -> float
    to_json(decision, probabilities, cube, match) -> dict                                   # the CLI's --json shape
    ProbabilityError(ValueError), CubeStateError(ValueError)

Perspective: everything is seen from the side on roll, who is considering a double before rolling. Money equities
are normalised to the current cube value (as GNU Backgammon shows them: Double/Pass = +1.0); match values are match
winning chances (0..1) from the Kazaross-XG2 table unless another :class:`~bgbot.met.MatchEquityTable` is given.

The proper action follows GNU Backgammon's FindBestCubeDecision (eval.c), comparing No double (ND), Double/Take
(DT), Double/Pass (DP) from the doubler's side; for match play the comparison is made in normalised money equity,
as gnubg does. "Too good" only where a gammon is still possible; "Redouble" wording when the doubler owns the cube;
"Optional double" when ND and DP are equal within 1e-5 and a gammon is possible (not under the Jacoby rule with a
centred cube) or when ND and DT are equal. Where the side on roll may not double: "Never double, take (dead cube)"
in match play with the cube centred or mine (Crawford game, dead cube, leader post-Crawford), else
"No double (cube not available)".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from bgbot import board
from bgbot.janowski import (MatchScore, emg_from_mwc, match_cubeful_mwc, match_cubeless_mwc, money_cubeful)
from bgbot.met import MatchEquityTable, kazaross_xg2

Owner = Literal["centre", "me", "opponent"]
_OWNER_CODE = {"centre": 0, "me": 1, "opponent": -1}
NOT_AVAILABLE = "No double (cube not available)"


class ProbabilityError(ValueError):
    """Probabilities outside [0, 1] or inconsistent (a gammon chance above the win chance, ...)."""


class CubeStateError(ValueError):
    """A cube or match state that cannot occur (cube not a power of 2, score past the match length, ...)."""


@dataclass(frozen=True)
class CubeState:
    """The doubling cube: its value (1, 2, 4, ...) and owner seen from the side on roll."""

    value: int = 1
    owner: Owner = "centre"

    def __post_init__(self) -> None:
        if self.value < 1 or self.value & (self.value - 1):
            raise CubeStateError(f"cube value must be a power of 2, got {self.value!r}")
        if self.owner not in _OWNER_CODE:
            raise CubeStateError(f"cube owner must be 'centre', 'me' or 'opponent', got {self.owner!r}")

    @property
    def owner_code(self) -> int:
        """0 centred, +1 the side on roll owns it, -1 the opponent does."""
        return _OWNER_CODE[self.owner]


@dataclass(frozen=True)
class MatchState:
    """Match or money session settings, seen from the side on roll.

    Attributes:
        length: match length in points; 0 = money play.
        score: (side on roll, opponent) points so far.
        crawford: this game is the Crawford game (no doubling).
        jacoby: money only; gammons count single while the cube is centred.
        backgammons: backgammons count triple (False: as gammons).
        automatic_doubles: money only; how many automatic doubles a game may have (0 = off). Bookkeeping for the
            game loop; the cube decision itself only sees the cube value.
    """

    length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = True
    backgammons: bool = True
    automatic_doubles: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", (int(self.score[0]), int(self.score[1])))
        if self.length < 0 or min(self.score) < 0:
            raise CubeStateError(f"match length and scores must be >= 0, got {self.length!r}, {self.score!r}")
        if self.length and max(self.score) >= self.length:
            raise CubeStateError(f"score {self.score!r} has already won a {self.length}-point match")
        if self.crawford and (not self.length or self.length - 1 not in self.score):
            raise CubeStateError(f"a Crawford game needs a side at {self.length}-1 points, got score {self.score!r}")

    @property
    def is_money(self) -> bool:
        """True for money play (length 0)."""
        return self.length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points still needed by (side on roll, opponent); match play only."""
        return self.length - self.score[0], self.length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        """A game after the Crawford game: a side is 1-away and this is not the Crawford game."""
        return bool(self.length) and not self.crawford and self.length - 1 in self.score


@dataclass(frozen=True)
class CubeDecision:
    """The cube action of the side on roll and its numbers.

    Attributes:
        action: GNU Backgammon's wording, e.g. "No double, take", "Double, pass", "Too good to redouble, pass".
        equities: {"no_double", "double_take", "double_pass"}: money equity normalised to the current cube, or match
            winning chance, for the side on roll.
        unit: "equity" (money) or "mwc" (match).
        take_point: the opponent's minimum winning chance to take (live cube, its gammon ratios as given).
        errors: {"no_double", "double", "take", "pass"}: what each action costs against the best one, >= 0, in
            ``unit`` (doubler's cost for no_double/double, taker's cost for take/pass).
        cube_available: the side on roll may double.
        efficiency: the cube efficiency x used.
    """

    action: str
    equities: dict[str, float]
    unit: str
    take_point: float
    errors: dict[str, float] = field(default_factory=dict)
    cube_available: bool = True
    efficiency: float = 0.68


# ------------------------------------------------------------------------------------------ position class, x

def classify(position: np.ndarray) -> str:
    """GNU Backgammon's position class, as far as it matters for the cube efficiency, ``(26,)`` -> str.

    "over": a side has no checkers left; "contact": some checker of one side still has to pass a checker of the other
    (gnubg's CLASS_CONTACT and CLASS_CRASHED, same efficiency); "bearoff": no contact and every checker of both sides
    in its home board (gnubg's one-sided bear-off classes; gnubg's small two-sided databases value their positions
    exactly instead, which 0-ply Janowski cannot reproduce); "race": no contact otherwise.
    """
    p = board.validate(position).astype(np.int16)
    mine, theirs = np.maximum(p, 0), np.maximum(-p, 0)
    if mine.sum() == 0 or theirs.sum() == 0:
        return "over"
    my_back = int(np.nonzero(mine)[0].max())          # my farthest checker, my numbering (25 = bar)
    their_back = int(np.nonzero(theirs)[0].min())     # their farthest checker, in my numbering (0 = their bar)
    if my_back > their_back:
        return "contact"
    return "bearoff" if my_back <= 6 and their_back >= 19 else "race"


def efficiency_for(position_class: str, pips_on_roll: int = 0) -> float:
    """Cube efficiency x of gnubg's defaults: contact/crashed 0.68; race 0.55 + 0.00125 * pips of the side on roll
    clamped to [0.6, 0.7]; bear-off 0.6; game over 0 (eval.c EvalEfficiency)."""
    if position_class == "contact":
        return 0.68
    if position_class == "race":
        return float(min(max(0.55 + 0.00125 * pips_on_roll, 0.6), 0.7))
    if position_class == "bearoff":
        return 0.6
    if position_class == "over":
        return 0.0
    raise ValueError(f"unknown position class {position_class!r}")


def cube_efficiency(position: np.ndarray) -> float:
    """Cube efficiency of a position ``(26,)`` int8 seen from the side on roll (:func:`classify`,
    :func:`efficiency_for`)."""
    return efficiency_for(classify(position), int(board.pip_counts(np.asarray(position))[0]))


# ----------------------------------------------------------------------------------------------- probabilities

def check_probabilities(probabilities, backgammons: bool = True) -> np.ndarray:
    """Validate cumulative probabilities and return them ``(N, 5)`` float64 (a single row becomes N = 1).

    With ``backgammons`` False backgammons count as gammons: the backgammon columns are zeroed.

    Raises:
        ProbabilityError: wrong shape, a value outside [0, 1], or wbg > wg > w, lbg > lg > 1 - w broken
            (1e-6 slack for float32 rounding).
    """
    p = np.array(probabilities, dtype=np.float64)
    if p.ndim == 1:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 5:
        raise ProbabilityError(f"probabilities are (w, wg, wbg, lg, lbg) rows, got shape {p.shape}: {probabilities!r}")
    tol = 1e-6
    if not np.all(np.isfinite(p)) or np.any(p < -tol) or np.any(p > 1 + tol):
        raise ProbabilityError(f"probabilities must lie in [0, 1]: {probabilities!r}")
    w, wg, wbg, lg, lbg = p.T
    if np.any(wg > w + tol) or np.any(wbg > wg + tol) or np.any(lg > 1 - w + tol) or np.any(lbg > lg + tol):
        raise ProbabilityError("inconsistent probabilities (need wbg <= wg <= w and lbg <= lg <= 1 - w): "
                               f"{probabilities!r}")
    p = np.clip(p, 0.0, 1.0)
    if not backgammons:
        p[:, 2] = 0.0
        p[:, 4] = 0.0
    return p


def _match_score(cube: CubeState, match: MatchState, met: MatchEquityTable | None) -> MatchScore:
    a_me, a_opp = match.away
    return MatchScore(a_me, a_opp, cube.value, match.crawford, met or kazaross_xg2())


def cubeful_values(probabilities, cube: CubeState, match: MatchState, efficiency: float,
                   met: MatchEquityTable | None = None) -> np.ndarray:
    """Cubeful value of positions for the side on roll, cube not turned: ``(N, 5)`` -> ``(N,)`` float64.

    Money: equity normalised to the cube value; match: match winning chance. Use it to rank plays at a match score
    (evaluate each play's resulting position from the opponent's side, then take ``1 - mwc`` or ``-equity`` with the
    cube owner seen from that side). ``efficiency`` 0 gives the cubeless value.
    """
    p = check_probabilities(probabilities, match.backgammons)
    if match.is_money:
        return money_cubeful(p, cube.owner_code, match.jacoby, efficiency)
    return match_cubeful_mwc(p, _match_score(cube, match, met), cube.owner_code, efficiency)


def cubeless_mwc(probabilities, cube: CubeState, match: MatchState,
                 met: MatchEquityTable | None = None) -> np.ndarray:
    """Cubeless match winning chance of the side on roll, ``(N, 5)`` -> ``(N,)`` float64 (gnubg eq2mwc(Utility))."""
    if match.is_money:
        raise CubeStateError("match winning chance needs a match (length > 0)")
    p = check_probabilities(probabilities, match.backgammons)
    return match_cubeless_mwc(p, _match_score(cube, match, met))


# ------------------------------------------------------------------------------------------------ decision

def janowski_take_point(W: float, L: float, x: float) -> float:
    """Janowski's take point (L - 1/2) / (W + L + x/2): the taker's minimum winning chance, where W and L are the
    taker's average win and loss (in cubes) and x the cube efficiency. 0.25 at x = 0, 0.2 at x = 1 for W = L = 1."""
    return (L - 0.5) / (W + L + 0.5 * x)


def may_double(cube: CubeState, match: MatchState) -> bool:
    """The side on roll may double now (gnubg GetDPEq): cube centred or mine; in match play also not the Crawford
    game and the current cube does not already win me the match (which also bars the post-Crawford leader)."""
    if cube.owner == "opponent":
        return False
    if match.is_money:
        return True
    return not match.crawford and match.away[0] > cube.value


def _action(nd: float, dt: float, dp: float, gammon_possible: bool, optional_pass: bool, recube: bool) -> str:
    """GNU Backgammon's proper cube action from ND, DT, DP (doubler's side, comparable units)."""
    d = "Redouble" if recube else "Double"
    tg = "Too good to redouble" if recube else "Too good to double"
    nod = "No redouble" if recube else "No double"
    if dt >= nd and dp >= nd:
        if dp > dt:
            return f"Optional {d.lower()}, take" if abs(dt - nd) <= 1e-5 else f"{d}, take"
        return f"Optional {d.lower()}, pass" if (abs(nd - dp) <= 1e-5 and optional_pass) else f"{d}, pass"
    if nd > dt:
        if dt > dp:
            return f"{tg}, pass" if gammon_possible else f"{d}, pass"
        if nd > dp:
            return f"{tg}, take" if gammon_possible else f"{nod}, take"
        return f"{nod}, take"
    return f"{tg}, pass" if gammon_possible else f"{d}, pass"


def _take_point(values_dt, dp: float, p: np.ndarray) -> float:
    """The opponent's winning chance at which Double/Take equals Double/Pass, gammon ratios held fixed."""
    w = p[0, 0]
    g = np.array([p[0, 1], p[0, 2]]) / w if w > 0 else np.zeros(2)
    l = np.array([p[0, 3], p[0, 4]]) / (1 - w) if w < 1 else np.zeros(2)
    grid = np.linspace(0.0, 1.0, 4001)
    rows = np.column_stack([grid, grid * g[0], grid * g[1], (1 - grid) * l[0], (1 - grid) * l[1]])
    dt = values_dt(rows)
    above = np.nonzero(dt >= dp)[0]
    if len(above) == 0:
        return 0.0
    k = int(above[0])
    if k == 0:
        return 1.0
    w_cross = np.interp(dp, [dt[k - 1], dt[k]], [grid[k - 1], grid[k]])
    return float(1.0 - w_cross)


def decide(probabilities, cube: CubeState = CubeState(), match: MatchState = MatchState(),
           efficiency: float = 0.68, met: MatchEquityTable | None = None) -> CubeDecision:
    """The cube decision of the side on roll before rolling, from its cubeless probabilities.

    Args:
        probabilities: (w, wg, wbg, lg, lbg), cumulative, of the side on roll (a sequence of 5 or a (1, 5) array).
        cube, match: the cube and the match/session, seen from the side on roll.
        efficiency: cube efficiency x, e.g. :func:`cube_efficiency` of the position.
        met: match equity table (default Kazaross-XG2).

    Returns:
        :class:`CubeDecision`. Money: ND = Janowski equity with the cube as it is, DT = 2 x Janowski equity with the
        cube at twice the value on the opponent's side, DP = +1. Match: the same in match winning chance
        (MWC of winning the current cube value for DP), compared in normalised money equity as gnubg does.

    Raises:
        ProbabilityError: bad probabilities. CubeStateError: an impossible state.
    """
    p = check_probabilities(probabilities, match.backgammons)
    if p.shape[0] != 1:
        raise ProbabilityError(f"decide takes one row of probabilities, got {p.shape[0]}")
    available = may_double(cube, match)
    recube = cube.owner == "me"
    if match.is_money:
        nd = float(money_cubeful(p, cube.owner_code, match.jacoby, efficiency)[0])

        def dt_of(rows):
            return 2.0 * money_cubeful(rows, -1, match.jacoby, efficiency)

        dt, dp, unit = float(dt_of(p)[0]), 1.0, "equity"
        cmp = (nd, dt, dp)
    else:
        score = _match_score(cube, match, met)
        nd = float(match_cubeful_mwc(p, score, cube.owner_code, efficiency)[0])

        def dt_of(rows):
            return match_cubeful_mwc(rows, score.doubled(), -1, efficiency)

        dt, dp, unit = float(dt_of(p)[0]), score.mwc_if(0, cube.value), "mwc"
        cmp = tuple(float(v) for v in emg_from_mwc(np.array([nd, dt, dp]), score))
        if not available and cube.owner != "opponent":
            dt = dp = nd
    equities = {"no_double": nd, "double_take": dt, "double_pass": dp}
    if not available:
        action = "Never double, take (dead cube)" if not match.is_money and cube.owner == "centre" else (
            "Never redouble, take (dead cube)" if not match.is_money and recube else NOT_AVAILABLE)
        return CubeDecision(action, equities, unit, float("nan"),
                            {"no_double": 0.0, "double": 0.0, "take": 0.0, "pass": 0.0}, False, efficiency)
    gammon_possible = bool(p[0, 1] > 0.0)
    optional_pass = gammon_possible and (not match.is_money or cube.owner != "centre" or not match.jacoby)
    action = _action(*cmp, gammon_possible, optional_pass, recube)
    double = min(dt, dp)
    best = max(nd, double)
    errors = {"no_double": best - nd, "double": best - double, "take": max(dt - dp, 0.0), "pass": max(dp - dt, 0.0)}
    return CubeDecision(action, equities, unit, _take_point(dt_of, dp, p), errors, True, efficiency)


def match_json(match: MatchState) -> dict:
    """A match state as the CLI's JSON shows it (``bgbot cube`` and ``bgbot move`` alike)."""
    return {"length": match.length, "score": list(match.score), "crawford": match.crawford,
            "post_crawford": match.post_crawford, "jacoby": match.jacoby, "backgammons": match.backgammons}


def to_json(decision: CubeDecision, probabilities, cube: CubeState, match: MatchState) -> dict:
    """The CLI's ``--json`` object: action, equities, unit, probabilities, cube, match (plain JSON types)."""
    w, wg, wbg, lg, lbg = (round(float(v), 6) for v in np.asarray(probabilities, dtype=np.float64).reshape(5))
    return {
        "action": decision.action,
        "equities": {k: round(v, 6) for k, v in decision.equities.items()},
        "unit": decision.unit,
        "probabilities": {"win": w, "win_gammon": wg, "win_backgammon": wbg, "lose_gammon": lg,
                          "lose_backgammon": lbg},
        "cube": {"value": cube.value, "owner": cube.owner, "efficiency": decision.efficiency,
                 "available": decision.cube_available},
        "match": match_json(match),
        "take_point": None if np.isnan(decision.take_point) else round(decision.take_point, 6),
        "errors": {k: round(v, 6) for k, v in decision.errors.items()},
    }
