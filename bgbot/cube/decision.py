"""Cube decisions for money and match play, from cubeless probabilities, as GNU Backgammon makes them at 0 ply.

Public API::

    CubeAction: NO_DOUBLE | DOUBLE_TAKE | DOUBLE_PASS | TOO_GOOD_TAKE | TOO_GOOD_PASS   (.doubles -> bool)
    TakeAction: TAKE | PASS | BEAVER                                                    (.takes -> bool)
    CubeDecision: action (GNU Backgammon's text), kind (CubeAction), answer (TakeAction), equities {no_double,
        double_take, double_pass}, unit "equity" | "mwc", take_point, errors {no_double, double, take, pass},
        cube_available, efficiency, evaluator
    decide(probabilities, cube, match, efficiency, met=None) -> CubeDecision
    decide_from_money_equities(own, centre, opp, cube, match) -> CubeDecision    # exact cubeful values (bear-off db)
    batch_values(p (N, 5), owner (N,), efficiency (N,), *, jacoby, away, cube, met) -> (N, 3) ND, DT, DP  # batched
    proper_actions(values (N, 3), gammon_possible (N,)) -> [CubeAction];  doubles(...) -> (N,) bool
    action_text(nd, dt, dp, gammon_possible, optional_pass, recube) -> (CubeAction, str)
    take_action(double_take, double_pass, taker_gains, beavers) -> TakeAction
    cubeful_values(probabilities (N, 5), cube, match, efficiency, met=None) -> (N,) float64
    play_values(probabilities (M, 5), efficiency (M,), cube, match) -> (M,) float64        # rank plays
    cubeless_mwc(probabilities (N, 5), cube, match, met=None) -> (N,) float64
    normalised_equity(mwc (N,), cube, match, met=None) -> (N,) float64                     # gnubg's mwc2eq
    janowski_take_point(W, L, x) -> float
    take_answer(decision, match) -> dict;  options(equities, emg, available) -> [dict]  # the CLI's cube answer
    to_json(decision, probabilities, cube, match) -> dict;  match_json(match) -> dict   # the CLI's --json shape

The states (:class:`~bgbot.rules.state.CubeState`, :class:`~bgbot.rules.state.MatchState`, ``may_double``) live in
:mod:`bgbot.rules.state`, the errors (``ProbabilityError``, ``CubeStateError``) in :mod:`bgbot.rules.outcomes` and
:mod:`bgbot.rules.state`; a position's cube efficiency (``cube_efficiency``, ``efficiency_for``) in
:mod:`bgbot.evaluation.classes`; the formulas in :mod:`bgbot.cube.janowski`.

Perspective: everything is seen from the side on roll, who is considering a double before rolling. Money equities
are normalised to the current cube value (as GNU Backgammon shows them: Double/Pass = +1.0); match values are match
winning chances (0..1) from the Kazaross-XG2 table (extended past 25 points to 64 as GNU Backgammon extends it,
:func:`bgbot.cube.met.kazaross_xg2_extended`) unless another :class:`~bgbot.cube.met.MatchEquityTable` is given.

The proper action follows GNU Backgammon's FindBestCubeDecision (eval.c), comparing No double (ND), Double/Take
(DT), Double/Pass (DP) from the doubler's side; for match play the comparison is made in normalised money equity,
as gnubg does. "Too good" only where a gammon is still possible; "Redouble" wording when the doubler owns the cube;
"Optional double" when ND and DP are equal within 1e-5 and a gammon is possible (not under the Jacoby rule with a
centred cube) or when ND and DT are equal. Where the side on roll may not double: "Never double, take (dead cube)"
in match play with the cube centred or mine (Crawford game, dead cube, leader post-Crawford), else
"No double (cube not available)". The typed action (:class:`CubeAction`) counts an optional double as a double
(doubling loses nothing there), and so does every player in bgbot: the arena's, the terminal game, the external
player and the UBGI engine all double exactly where :attr:`CubeAction.doubles` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from bgbot.cube.janowski import MatchScore, emg_from_mwc, match_cubeful_mwc, match_cubeless_mwc, money_cubeful
from bgbot.cube.met import MatchEquityTable, kazaross_xg2_extended
from bgbot.rules.outcomes import ProbabilityError, check_probabilities, equity, flip_probabilities
from bgbot.rules.state import CubeState, CubeStateError, MatchState, Owner, may_double

NOT_AVAILABLE = "No double (cube not available)"


class CubeAction(Enum):
    """The doubler's proper cube action, as GNU Backgammon classifies it (eval.c FindBestCubeDecision), without its
    wording's variants: "Redouble" for "Double" (the doubler owns the cube), "Optional" (doubling and not doubling are
    worth the same within 1e-5: a double, which loses nothing), the taker's beaver and a cube the side on roll may not
    turn are all kept beside it (:attr:`CubeDecision.action`, :attr:`CubeDecision.cube_available`).

    Members (value: the short name):
        NO_DOUBLE: not doubling is right and the opponent would take ("No double, take/beaver"), or the side on roll
            may not double.
        DOUBLE_TAKE, DOUBLE_PASS: doubling is right; the opponent's right answer is take / pass.
        TOO_GOOD_TAKE, TOO_GOOD_PASS: not doubling is right because the side on roll does better playing on for a
            gammon; a double would be taken / passed (too good to double).
    """

    NO_DOUBLE = "no_double"
    DOUBLE_TAKE = "double_take"
    DOUBLE_PASS = "double_pass"
    TOO_GOOD_TAKE = "too_good_take"
    TOO_GOOD_PASS = "too_good_pass"

    @property
    def doubles(self) -> bool:
        """The side on roll doubles (Double, Redouble and Optional double alike)."""
        return self in (CubeAction.DOUBLE_TAKE, CubeAction.DOUBLE_PASS)


class TakeAction(Enum):
    """The taker's answer to a double: take, pass, or (money with beavers allowed, when taking is worth more than 0
    to the taker) beaver, which takes and redoubles at once. The value is GNU Backgammon's word."""

    TAKE = "Take"
    PASS = "Pass"
    BEAVER = "Beaver"

    @property
    def takes(self) -> bool:
        """The taker keeps playing (take or beaver)."""
        return self is not TakeAction.PASS


_ACTIONS = tuple(CubeAction)  # in code order: 0 no double, 1 double/take, 2 double/pass, 3 too good/take, 4 /pass


def _action_codes(values: np.ndarray, gammon_possible: np.ndarray) -> np.ndarray:
    """Index into :data:`_ACTIONS` of each row's proper action, ``(N, 3)`` ND, DT, DP and ``(N,)`` bool -> ``(N,)``
    int64. The branches of GNU Backgammon's FindBestCubeDecision (eval.c): a double when neither DT nor DP is below
    ND; where ND is above DT or DP, too good where a gammon is possible, else a double that is passed when DP is the
    lower of DT and DP, no double when DT is."""
    v = np.asarray(values, dtype=np.float64).reshape(-1, 3)
    nd, dt, dp = v[:, 0], v[:, 1], v[:, 2]
    gammon = np.asarray(gammon_possible, dtype=bool).reshape(-1)
    double = (dt >= nd) & (dp >= nd)
    code = np.where(dp > dt, 1, 2)  # DOUBLE_TAKE or DOUBLE_PASS
    # not doubling beats one of the answers: the opponent answers with the lower of DT and DP
    passes = dt > dp
    code_not = np.where(passes, np.where(gammon, 4, 2), np.where(gammon & (nd > dp), 3, 0))
    return np.where(double, code, code_not)


def proper_actions(values, gammon_possible) -> list[CubeAction]:
    """The proper cube action of each row (batched).

    Args:
        values: ``(N, 3)`` float64 No double, Double/Take, Double/Pass for the side on roll, in comparable units
            (money equity normalised to the cube, or GNU Backgammon's normalised equity of match winning chances:
            :func:`batch_values`).
        gammon_possible: ``(N,)`` bool, the side on roll can still win a gammon (else it is never too good).

    Returns:
        ``N`` :class:`CubeAction` (the side on roll may double; where it may not, the action is
        :attr:`CubeAction.NO_DOUBLE` whatever the values).
    """
    return [_ACTIONS[int(c)] for c in _action_codes(values, gammon_possible)]


def doubles(values, gammon_possible) -> np.ndarray:
    """Whether the side on roll doubles, ``(N,)`` bool: :attr:`CubeAction.doubles` of :func:`proper_actions`
    (vectorised; the same arguments)."""
    return np.isin(_action_codes(values, gammon_possible), (1, 2))


def take_action(double_take: float, double_pass: float, taker_gains: float, beavers: bool) -> TakeAction:
    """The taker's answer: take when Double/Take is no better than Double/Pass for the doubler (``double_take <=
    double_pass``, either unit), beaver instead where ``beavers`` (money) and taking is worth ``taker_gains`` > 0 to
    the taker, else pass."""
    if double_take > double_pass:
        return TakeAction.PASS
    return TakeAction.BEAVER if beavers and taker_gains > 0.0 else TakeAction.TAKE


def batch_values(
    p,
    owner,
    efficiency,
    *,
    jacoby: bool = True,
    away=None,
    cube=None,
    met: MatchEquityTable | None = None,
) -> np.ndarray:
    """No double, Double/Take, Double/Pass of the side on roll before rolling, in comparable units, batched.

    Args:
        p: ``(N, 5)`` float64 cubeless probabilities of the side on roll (consistent:
            :func:`bgbot.rules.outcomes.check_probabilities`).
        owner: ``(N,)`` int, 0 cube centred, +1 the side on roll owns it (the opponent's cube is never doubled).
        efficiency: ``(N,)`` float64 cube efficiencies.
        jacoby: money play: the Jacoby rule (gammons count single while the cube is centred).
        away, cube: match play (both given): ``(N, 2)`` int points still needed by (side on roll, opponent) and
            ``(N,)`` int cube values; not the Crawford game (the cube is dead there). ``None``: money play.
        met: the match equity table (default Kazaross-XG2 extended).

    Returns:
        ``(N, 3)`` float64. Money: Janowski's cubeful equities normalised to the cube (ND with the cube as it is, DT
        twice the equity with the cube on the opponent's side, DP +1); match: GNU Backgammon's normalised equity
        (mwc2eq) of the match winning chances, the units :func:`decide` compares them in.
    """
    p = np.asarray(p, dtype=np.float64)
    x = np.asarray(efficiency, dtype=np.float64)
    owner = np.asarray(owner)
    out = np.empty((len(p), 3), dtype=np.float64)
    if away is None or cube is None:
        for o in (0, 1):
            m = owner == o
            if m.any():
                out[m, 0] = money_cubeful(p[m], o, jacoby, x[m])
                out[m, 1] = 2.0 * money_cubeful(p[m], -1, jacoby, x[m])
        out[:, 2] = 1.0
        return out
    table = met or kazaross_xg2_extended()
    keys = np.column_stack([away, cube, owner]).astype(np.int64)
    for key in np.unique(keys, axis=0):
        m = (keys == key).all(axis=1)
        score = MatchScore(int(key[0]), int(key[1]), int(key[2]), False, table)
        nd = match_cubeful_mwc(p[m], score, int(key[3]), x[m])
        dt = match_cubeful_mwc(p[m], score.doubled(), -1, x[m])
        dp = np.full(int(m.sum()), score.mwc_if(0, score.cube))
        out[m] = np.column_stack([emg_from_mwc(v, score) for v in (nd, dt, dp)])
    return out


@dataclass(frozen=True)
class CubeDecision:
    """The cube action of the side on roll and its numbers.

    Attributes:
        action: GNU Backgammon's wording, e.g. "No double, take", "Double, pass", "Too good to redouble, pass"
            (text to show; programs read :attr:`kind` and :attr:`answer`).
        equities: {"no_double", "double_take", "double_pass"}: money equity normalised to the current cube, or match
            winning chance, for the side on roll.
        unit: "equity" (money) or "mwc" (match).
        take_point: the opponent's minimum winning chance to take (live cube, its gammon ratios as given).
        errors: {"no_double", "double", "take", "pass"}: what each action costs against the best one, >= 0, in
            ``unit`` (doubler's cost for no_double/double, taker's cost for take/pass).
        cube_available: the side on roll may double.
        efficiency: the cube efficiency x used.
        evaluator: what gave the numbers (``bgbot.api.EVALUATORS``; "" when the caller did not say).
        kind: the doubler's proper action (:class:`CubeAction`; ``NO_DOUBLE`` where the cube is not available).
        answer: the taker's answer to a double (:class:`TakeAction`, from the same equities).
    """

    action: str
    equities: dict[str, float]
    unit: str
    take_point: float
    errors: dict[str, float] = field(default_factory=dict)
    cube_available: bool = True
    efficiency: float = 0.68
    evaluator: str = field(default="", compare=False)
    kind: CubeAction = CubeAction.NO_DOUBLE
    answer: TakeAction = TakeAction.TAKE


# ----------------------------------------------------------------------------------------------- probabilities


def _match_score(cube: CubeState, match: MatchState, met: MatchEquityTable | None) -> MatchScore:
    a_me, a_opp = match.away
    return MatchScore(a_me, a_opp, cube.value, match.crawford, met or kazaross_xg2_extended())


def cubeful_values(
    probabilities, cube: CubeState, match: MatchState, efficiency: float, met: MatchEquityTable | None = None
) -> np.ndarray:
    """Cubeful value of positions for the side on roll, cube not turned: ``(N, 5)`` -> ``(N,)`` float64.

    Money: equity normalised to the cube value; match: match winning chance. Use it to rank plays at a match score
    (evaluate each play's resulting position from the opponent's side, then take ``1 - mwc`` or ``-equity`` with the
    cube owner seen from that side). ``efficiency`` 0 gives the cubeless value.
    """
    p = check_probabilities(probabilities, match.backgammons)
    if match.is_money:
        return money_cubeful(p, cube.owner_code, match.jacoby, efficiency)
    return match_cubeful_mwc(p, _match_score(cube, match, met), cube.owner_code, efficiency)


def _opponent_view(cube: CubeState, match: MatchState) -> tuple[CubeState, MatchState]:
    """The cube and match seen by the other side."""
    owner: Owner = {"centre": "centre", "me": "opponent", "opponent": "me"}[cube.owner]  # type: ignore[assignment]
    return CubeState(cube.value, owner), replace(match, score=(match.score[1], match.score[0]))


def play_values(probabilities, efficiency, cube: CubeState, match: MatchState) -> np.ndarray:
    """What checker play ranks plays by, for the mover: ``(M, 5)`` -> ``(M,)`` float64, higher is better.

    Args:
        probabilities: ``(M, 5)`` the mover's cubeless probabilities after each play (consistent).
        efficiency: ``(M,)`` or a scalar: the cube efficiency of each resulting position, seen by the opponent (who
            is on roll there).
        cube, match: before the play, seen by the mover.

    Returns:
        Money: cubeless money equity (a backgammon worth a gammon when ``match.backgammons`` is False). Match: the
        mover's match winning chance, ``1 -`` the opponent's :func:`cubeful_values` (Janowski's cubeful MWC where
        the cube is alive) with the cube and score seen from the opponent's side.
    """
    p = check_probabilities(probabilities, match.backgammons)
    if match.is_money:
        return equity(p)
    opp_cube, opp_match = _opponent_view(cube, match)
    x = np.broadcast_to(np.asarray(efficiency, dtype=np.float64), (len(p),))
    return 1.0 - cubeful_values(flip_probabilities(p), opp_cube, opp_match, x)  # type: ignore[arg-type]


def cubeless_mwc(probabilities, cube: CubeState, match: MatchState, met: MatchEquityTable | None = None) -> np.ndarray:
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


def action_text(
    nd: float, dt: float, dp: float, gammon_possible: bool, optional_pass: bool, recube: bool
) -> tuple[CubeAction, str]:
    """The proper cube action from ND, DT, DP (the doubler's side, comparable units) and GNU Backgammon's wording of
    it (eval.c FindBestCubeDecision, GetCubeActionSz): "Redouble" where ``recube`` (the doubler owns the cube);
    "Optional double, take" where DT equals ND within 1e-5; "Optional double, pass" where DP equals ND within 1e-5
    and ``optional_pass`` (a gammon is possible and it is not money with a centred cube under the Jacoby rule).

    Returns:
        ``(kind, text)``, e.g. ``(CubeAction.TOO_GOOD_PASS, "Too good to redouble, pass")``.
    """
    kind = proper_actions([[nd, dt, dp]], [gammon_possible])[0]
    d = "Redouble" if recube else "Double"
    tg = "Too good to redouble" if recube else "Too good to double"
    nod = "No redouble" if recube else "No double"
    optional = (dt >= nd and dp >= nd) and (
        abs(dt - nd) <= 1e-5 if dp > dt else (abs(nd - dp) <= 1e-5 and optional_pass)
    )
    text = {
        CubeAction.NO_DOUBLE: f"{nod}, take",
        CubeAction.DOUBLE_TAKE: f"Optional {d.lower()}, take" if optional else f"{d}, take",
        CubeAction.DOUBLE_PASS: f"Optional {d.lower()}, pass" if optional else f"{d}, pass",
        CubeAction.TOO_GOOD_TAKE: f"{tg}, take",
        CubeAction.TOO_GOOD_PASS: f"{tg}, pass",
    }[kind]
    return kind, text


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


def decide(
    probabilities,
    cube: CubeState = CubeState(),
    match: MatchState = MatchState(),
    efficiency: float = 0.68,
    met: MatchEquityTable | None = None,
) -> CubeDecision:
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
    if match.is_money:
        nd = float(money_cubeful(p, cube.owner_code, match.jacoby, efficiency)[0])

        def dt_of(rows):
            return 2.0 * money_cubeful(rows, -1, match.jacoby, efficiency)

        dt, dp = float(dt_of(p)[0]), 1.0
    else:
        score = _match_score(cube, match, met)
        nd = float(match_cubeful_mwc(p, score, cube.owner_code, efficiency)[0])

        def dt_of(rows):
            return match_cubeful_mwc(rows, score.doubled(), -1, efficiency)

        dt, dp = float(dt_of(p)[0]), score.mwc_if(0, cube.value)
    take_point = _take_point(dt_of, dp, p) if available else float("nan")
    return decision_from_values((nd, dt, dp), cube, match, bool(p[0, 1] > 0.0), efficiency, take_point, met)


def decision_from_values(
    values: tuple[float, float, float],
    cube: CubeState,
    match: MatchState,
    gammon_possible: bool,
    efficiency: float,
    take_point: float = float("nan"),
    met: MatchEquityTable | None = None,
) -> CubeDecision:
    """The cube decision of the side on roll from its No double, Double/Take and Double/Pass values, however they were
    found (Janowski at the root: :func:`decide`; a cubeful search: :func:`bgbot.cube.tree.decide_from_values`).

    Args:
        values: ``(ND, DT, DP)``: money, equity normalised to the current cube (DP = +1); match, match winning chance
            of the side on roll.
        cube, match: the cube and the match/session, seen from the side on roll.
        gammon_possible: the side on roll can still win a gammon (GNU Backgammon's optional pass needs one).
        efficiency: the cube efficiency x the values were made with (recorded in the decision).
        take_point: the opponent's take point, when the caller has one (NaN otherwise).
        met: match equity table (default Kazaross-XG2), to compare match values in normalised money equity.

    Returns:
        :class:`CubeDecision`: the action by GNU Backgammon's rule (eval.c FindBestCubeDecision, compared in
        normalised money equity at a match score), its wording, the taker's answer and each action's error. Where
        the side on roll may not double: "No double (cube not available)" or, in match play with the cube centred or
        its own, GNU Backgammon's "dead cube" wording, with Double/Take and Double/Pass given as No double except where
        the opponent owns the cube.
    """
    nd, dt, dp = (float(v) for v in values)
    available = may_double(cube, match)
    recube = cube.owner == "me"
    if match.is_money:
        unit = "equity"
        cmp = (nd, dt, dp)
    else:
        unit = "mwc"
        emg = emg_from_mwc(np.array([nd, dt, dp]), _match_score(cube, match, met))
        cmp = (float(emg[0]), float(emg[1]), float(emg[2]))
        if not available and cube.owner != "opponent":
            dt = dp = nd
    equities = {"no_double": nd, "double_take": dt, "double_pass": dp}
    answer = _answer(dt, dp, unit, match)
    if not available:
        action = (
            "Never double, take (dead cube)"
            if not match.is_money and cube.owner == "centre"
            else ("Never redouble, take (dead cube)" if not match.is_money and recube else NOT_AVAILABLE)
        )
        return CubeDecision(
            action,
            equities,
            unit,
            float("nan"),
            {"no_double": 0.0, "double": 0.0, "take": 0.0, "pass": 0.0},
            False,
            efficiency,
            answer=answer,
        )
    optional_pass = gammon_possible and (not match.is_money or cube.owner != "centre" or not match.jacoby)
    kind, action = action_text(*cmp, gammon_possible, optional_pass, recube)
    taken = kind in (CubeAction.NO_DOUBLE, CubeAction.DOUBLE_TAKE, CubeAction.TOO_GOOD_TAKE)
    if match.is_money and match.beavers and taken and dt < 0.0:
        action = action[: -len("take")] + "beaver"  # gnubg's NODOUBLE_BEAVER / NO_REDOUBLE_BEAVER
    double = min(dt, dp)
    best = max(nd, double)
    errors = {"no_double": best - nd, "double": best - double, "take": max(dt - dp, 0.0), "pass": max(dp - dt, 0.0)}
    return CubeDecision(action, equities, unit, take_point, errors, True, efficiency, kind=kind, answer=answer)


def _answer(dt: float, dp: float, unit: str, match: MatchState) -> TakeAction:
    """:func:`take_action` of the doubler's Double/Take and Double/Pass in ``unit`` ("equity" or "mwc")."""
    return take_action(dt, dp, 1.0 - dt if unit == "mwc" else -dt, match.is_money and match.beavers)


def decide_from_money_equities(
    own: float, centre: float, opp: float, cube: CubeState = CubeState(), match: MatchState = MatchState()
) -> CubeDecision:
    """The money cube decision from exact cubeful equities, as GNU Backgammon takes it from its two-sided bear-off
    database: ``own``, ``centre``, ``opp`` are the side on roll's equities normalised to the cube, before its own
    cube decision, with the cube owned by it, centred, or owned by the opponent (each with optimal cube play
    afterwards; :mod:`bgbot.evaluation.bearoff`). ND = the one for the cube as it is, DT = 2 x ``opp``, DP = +1.
    No gammons are possible in that database, so "Too good" and the Jacoby rule never apply. ``take_point`` is NaN
    (no model of the taker's chances is involved).

    Raises:
        CubeStateError: not money play.
    """
    if not match.is_money:
        raise CubeStateError("exact cubeful bear-off equities are money equities; this is a match")
    nd = {"me": own, "centre": centre, "opponent": opp}[cube.owner]
    dt, dp = 2.0 * opp, 1.0
    equities = {"no_double": float(nd), "double_take": float(dt), "double_pass": dp}
    nan = float("nan")
    answer = _answer(dt, dp, "equity", match)
    if not may_double(cube, match):
        zero = {"no_double": 0.0, "double": 0.0, "take": 0.0, "pass": 0.0}
        return CubeDecision(NOT_AVAILABLE, equities, "equity", nan, zero, False, 0.0, answer=answer)
    kind, action = action_text(nd, dt, dp, False, False, cube.owner == "me")
    double = min(dt, dp)
    best = max(nd, double)
    errors = {"no_double": best - nd, "double": best - double, "take": max(dt - dp, 0.0), "pass": max(dp - dt, 0.0)}
    return CubeDecision(action, equities, "equity", nan, errors, True, 0.0, kind=kind, answer=answer)


def normalised_equity(mwc, cube: CubeState, match: MatchState, met: MatchEquityTable | None = None) -> np.ndarray:
    """GNU Backgammon's normalised equity (``mwc2eq``, eval.c) of match winning chances: the linear map that sends
    the MWC of losing the current cube value (a single game) to -1 and of winning it to +1; in money-equity units.

    Args:
        mwc: ``(N,)`` match winning chances of the side on roll.
        cube, match: the cube and the match, seen from the side on roll (match play).

    Returns:
        ``(N,)`` float64.
    """
    return emg_from_mwc(np.asarray(mwc, dtype=np.float64), _match_score(cube, match, met))


def take_answer(decision: CubeDecision, match: MatchState) -> dict:
    """The taker's answer to a double that awaits it (GNU Backgammon's ``hint`` while a double is pending).

    Returns:
        ``{"action": "Take" | "Pass" | "Beaver", "take": value, "pass": value}`` from the taker's side, in the
        decision's unit: money equity normalised to the cube before the double (Pass = -1.0), or the taker's match
        winning chance. "Beaver" where beavers are allowed (money) and taking is worth more than 0 to the taker.
    """
    dt, dp = decision.equities["double_take"], decision.equities["double_pass"]
    if decision.unit == "mwc":
        take, drop = 1.0 - dt, 1.0 - dp
    else:
        take, drop = -dt, -dp
    action = _answer(dt, dp, decision.unit, match)
    return {"action": action.value, "take": round(take, 6), "pass": round(drop, 6)}


def match_json(match: MatchState) -> dict:
    """A match state as the CLI's JSON shows it (``bgbot cube`` and ``bgbot move`` alike); ``"beavers"`` and
    ``"max_cube"`` appear only when set (an XGID's beaver bit and maximum cube)."""
    out = {
        "length": match.length,
        "score": list(match.score),
        "crawford": match.crawford,
        "post_crawford": match.post_crawford,
        "jacoby": match.jacoby,
        "backgammons": match.backgammons,
    }
    if match.beavers:
        out["beavers"] = True
    if match.max_cube is not None:
        out["max_cube"] = match.max_cube
    return out


def to_json(decision: CubeDecision, probabilities, cube: CubeState, match: MatchState) -> dict:
    """The CLI's ``--json`` object: action, equities, unit, probabilities, cube, match (plain JSON types)."""
    w, wg, wbg, lg, lbg = (round(float(v), 6) for v in np.asarray(probabilities, dtype=np.float64).reshape(5))
    out = {
        "action": decision.action,
        "equities": {k: round(v, 6) for k, v in decision.equities.items()},
        "unit": decision.unit,
        "probabilities": {"win": w, "win_gammon": wg, "win_backgammon": wbg, "lose_gammon": lg, "lose_backgammon": lbg},
        "cube": {
            "value": cube.value,
            "owner": cube.owner,
            "efficiency": decision.efficiency,
            "available": decision.cube_available,
        },
        "match": match_json(match),
        "take_point": None if np.isnan(decision.take_point) else round(decision.take_point, 6),
        "errors": {k: round(v, 6) for k, v in decision.errors.items()},
    }
    if decision.evaluator:
        out["evaluator"] = decision.evaluator
    return out


OPTION_NAMES = {"no_double": "No double", "double_take": "Double, take", "double_pass": "Double, pass"}


def options(equities: dict[str, float], emg: dict[str, float] | None, available: bool = True) -> list[dict]:
    """The cube options in GNU Backgammon's order (its ``hint``): the proper action first. When doubling is right,
    the double with the right answer (the lower of Double/Take and Double/Pass for the doubler), then the other
    double, then No double; when not doubling is right (also "too good"), No double, then the two doubles from the
    higher value down. Checked against gnubg 1.07 for every kind of action. Only No double where the side on roll
    may not double. Each ``{"option", "name", "value", "diff"[, "emg"]}``, ``diff`` from the first, in the unit of
    the equities.
    """
    nd, dt, dp = equities["no_double"], equities["double_take"], equities["double_pass"]
    right, wrong = ("double_take", "double_pass") if dt <= dp else ("double_pass", "double_take")
    if not available:
        order = ["no_double"]
    elif min(dt, dp) >= nd:
        order = [right, wrong, "no_double"]
    else:
        order = ["no_double", *sorted(("double_take", "double_pass"), key=lambda k: -equities[k])]
    first = equities[order[0]]
    out = []
    for key in order:
        item = {"option": key, "name": OPTION_NAMES[key], "value": round(equities[key], 6)}
        item["diff"] = round(equities[key] - first, 6)
        if emg is not None:
            item["emg"] = emg[key]
        out.append(item)
    return out
