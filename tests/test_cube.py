"""Tests for bgbot.cube.decision and bgbot.cube.janowski: exact positions, Janowski's fixed values, and GNU Backgammon's own numbers
(tests/data/gnubg_cube_cases.json, made by scripts/gnubg_cube_cases.py; no gnubg needed here)."""

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.cube.decision import (
    CubeAction,
    TakeAction,
    action_text,
    batch_values,
    cubeful_values,
    cubeless_mwc,
    decide,
    doubles,
    janowski_take_point,
    proper_actions,
    to_json,
)
from bgbot.evaluation.classes import classify, cube_efficiency, efficiency_for
from bgbot.rules import board
from bgbot.rules.outcomes import ProbabilityError
from bgbot.rules.state import CubeState, CubeStateError, MatchState

CASES = json.loads((Path(__file__).parent / "data" / "gnubg_cube_cases.json").read_text())["cube"]


def _states(case):
    match = MatchState(
        case["length"], tuple(case["score"]), case["crawford"], jacoby=case["jacoby"] if case["length"] == 0 else False
    )
    return CubeState(case["cube"], case["owner"]), match


@pytest.mark.parametrize("case", CASES, ids=[f"{c['position_id']}:{c['match_id']}" for c in CASES])
def test_matches_gnubg(case):
    cube, match = _states(case)
    x = cube_efficiency(np.array(case["position"], dtype=np.int8))
    d = decide(case["probabilities"], cube, match, x)
    for key, value in case["equities"].items():
        assert d.equities[key] == pytest.approx(value, abs=0.005)
        assert d.equities[key] == pytest.approx(value, abs=1e-4)  # in fact within gnubg's float32 rounding
    assert d.action == case["action"]


def test_gnubg_cases_cover_the_brief():
    assert len(CASES) >= 30
    money = [c for c in CASES if c["length"] == 0]
    assert {c["jacoby"] for c in money} == {True, False}
    assert any(c["length"] and 1 in (c["length"] - c["score"][0], c["length"] - c["score"][1]) for c in CASES)
    assert len({(c["length"], tuple(c["score"])) for c in CASES if c["length"]}) >= 5


def test_last_roll_certain_single_win_is_double_pass():
    d = decide([1, 0, 0, 0, 0], efficiency=0.6)
    assert d.action == "Double, pass"
    assert d.equities == {"no_double": 1.0, "double_take": 2.0, "double_pass": 1.0}


def test_certain_gammon_jacoby_off_is_too_good():
    d = decide([1, 1, 0, 0, 0], CubeState(), MatchState(jacoby=False), 0.6)
    assert d.action == "Too good to double, pass"
    assert d.equities["no_double"] == 2.0 and d.equities["double_pass"] == 1.0
    assert d.errors["double"] == pytest.approx(1.0)


def test_certain_gammon_jacoby_on_is_double_pass():
    assert decide([1, 1, 0, 0, 0], CubeState(), MatchState(jacoby=True), 0.6).action == "Double, pass"


def test_redouble_wording():
    assert decide([1, 1, 0, 0, 0], CubeState(2, "me"), MatchState(), 0.6).action == "Too good to redouble, pass"
    assert decide([0.75, 0, 0, 0, 0], CubeState(2, "me"), MatchState(), 0.68).action == "Redouble, take"


@pytest.mark.parametrize("x,expected", [(0.0, 0.25), (1.0, 0.20), (0.68, 0.2137)])
def test_janowski_take_point(x, expected):
    assert janowski_take_point(1, 1, x) == pytest.approx(expected, abs=1e-4)
    assert decide([0.6, 0, 0, 0, 0], efficiency=x).take_point == pytest.approx(expected, abs=1e-3)


def test_hand_computed_equities():
    # No gammons, w = 0.7, centred cube, x = 0.68: TP = 1/5, CP = 4/5; live = -1 + 2 (0.7 - 0.2) / 0.6 = 2/3;
    # dead = 0.4; ND = 0.32 * 0.4 + 0.68 * 2/3. DT: opponent owns the cube at 2: live = -1 + 2 (0.5 / 0.8) = 0.25,
    # DT = 2 (0.32 * 0.4 + 0.68 * 0.25).
    d = decide([0.7, 0, 0, 0, 0], efficiency=0.68)
    assert d.equities["no_double"] == pytest.approx(0.32 * 0.4 + 0.68 * 2 / 3)
    assert d.equities["double_take"] == pytest.approx(2 * (0.32 * 0.4 + 0.68 * 0.25))
    assert d.action == "Double, take"
    # Dead cube (x = 0): the cubeless equity; under the Jacoby rule (centred cube) gammons count single.
    assert decide([0.3, 0.1, 0, 0.2, 0], efficiency=0.0).equities["no_double"] == pytest.approx(-0.4)
    assert decide([0.3, 0.1, 0, 0.2, 0], match=MatchState(jacoby=False), efficiency=0.0).equities[
        "no_double"
    ] == pytest.approx(2 * 0.3 - 1 + 0.1 - 0.2)


def test_crawford_game_has_no_cube():
    d = decide([0.9, 0.3, 0, 0, 0], CubeState(), MatchState(5, (3, 4), crawford=True), 0.68)
    assert not d.cube_available and d.action == "Never double, take (dead cube)"


def test_post_crawford_leader_cannot_double_but_trailer_can():
    assert not decide([0.9, 0, 0, 0, 0], CubeState(), MatchState(5, (4, 2)), 0.68).cube_available
    assert decide([0.6, 0, 0, 0, 0], CubeState(), MatchState(5, (2, 4)), 0.68).cube_available


def test_opponent_owned_cube_not_available():
    assert decide([0.5, 0, 0, 0, 0], CubeState(2, "opponent")).action == "No double (cube not available)"


def test_bad_probabilities():
    with pytest.raises(ProbabilityError, match="1.2"):
        decide([1.2, 0, 0, 0, 0])
    with pytest.raises(ProbabilityError, match="inconsistent"):
        decide([0.3, 0.4, 0, 0, 0])
    with pytest.raises(ValueError):
        CubeState(3)
    with pytest.raises(CubeStateError):
        MatchState(5, (5, 0))


def test_classify():
    start = board.starting_position()
    assert classify(start) == "contact" and cube_efficiency(start) == 0.68
    race = np.zeros(26, dtype=np.int8)
    race[[6, 8]] = [10, 5]
    race[[20, 15]] = [-10, -5]
    assert classify(race) == "race"
    assert cube_efficiency(race) == efficiency_for("race", int(board.pip_counts(race)[0]))
    home = np.zeros(26, dtype=np.int8)
    home[[1, 2]] = [7, 8]
    home[[24, 23]] = [-7, -8]
    assert classify(home) == "bearoff-one-sided" and cube_efficiency(home) == 0.6
    assert efficiency_for("race", 200) == 0.7 and efficiency_for("race", 10) == 0.6


def test_vectorised_values_agree_with_rows():
    rng = np.random.default_rng(1)
    w = rng.uniform(0.05, 0.95, 50)
    p = np.column_stack([w, w * 0.3, w * 0.02, (1 - w) * 0.25, (1 - w) * 0.01])
    for match in (MatchState(), MatchState(7, (2, 3), jacoby=False), MatchState(5, (2, 4))):
        values = cubeful_values(p, CubeState(), match, 0.68)
        for i in (0, 17, 49):
            assert values[i] == pytest.approx(decide(p[i], CubeState(), match, 0.68).equities["no_double"])
    mwc = cubeless_mwc(p, CubeState(), MatchState(7, (2, 3)))
    assert np.all((mwc > 0) & (mwc < 1)) and np.all(np.diff(mwc[np.argsort(w)]) > -0.05)


def test_to_json_shape():
    cube, match = CubeState(), MatchState(7, (1, 2))
    d = decide([0.6, 0.2, 0.01, 0.1, 0.005], cube, match, 0.68)
    j = to_json(d, [0.6, 0.2, 0.01, 0.1, 0.005], cube, match)
    assert set(j) >= {"action", "equities", "unit", "probabilities", "cube", "match"}
    assert j["unit"] == "mwc" and set(j["equities"]) == {"no_double", "double_take", "double_pass"}
    json.dumps(j)


def test_states_refuse_values_of_the_wrong_type():

    for bad in (lambda: CubeState("2"), lambda: CubeState(2.0), lambda: CubeState(True)):
        with pytest.raises(CubeStateError):
            bad()
    for bad in (
        lambda: MatchState(2.5),
        lambda: MatchState(5, (1, "a")),
        lambda: MatchState(5, (1,)),
        lambda: MatchState(65),
        lambda: MatchState(3, beavers=True),
        lambda: MatchState(max_cube=3),
    ):
        with pytest.raises(CubeStateError):
            bad()
    assert CubeState(np.int64(4)).value == 4 and type(CubeState(np.int64(4)).value) is int


def test_typed_actions_name_the_same_action_as_gnubgs_wording():
    kinds = {
        "No double": CubeAction.NO_DOUBLE,
        "No redouble": CubeAction.NO_DOUBLE,
        "Never double": CubeAction.NO_DOUBLE,
        "Never redouble": CubeAction.NO_DOUBLE,
        "Double, take": CubeAction.DOUBLE_TAKE,
        "Redouble, take": CubeAction.DOUBLE_TAKE,
        "Optional double, take": CubeAction.DOUBLE_TAKE,
        "Double, pass": CubeAction.DOUBLE_PASS,
        "Redouble, pass": CubeAction.DOUBLE_PASS,
        "Optional double, pass": CubeAction.DOUBLE_PASS,
        "Too good to double, take": CubeAction.TOO_GOOD_TAKE,
        "Too good to redouble, take": CubeAction.TOO_GOOD_TAKE,
        "Too good to double, pass": CubeAction.TOO_GOOD_PASS,
        "Too good to redouble, pass": CubeAction.TOO_GOOD_PASS,
    }
    seen = set()
    for case in CASES:
        cube, match = _states(case)
        d = decide(case["probabilities"], cube, match, cube_efficiency(np.array(case["position"], dtype=np.int8)))
        prefix = next(k for k in sorted(kinds, key=len, reverse=True) if d.action.startswith(k))
        assert d.kind is kinds[prefix], d.action
        eq = d.equities
        assert d.answer is (TakeAction.TAKE if eq["double_take"] <= eq["double_pass"] else TakeAction.PASS)
        seen.add(d.kind)
    assert seen == set(CubeAction) - {CubeAction.TOO_GOOD_TAKE}  # GNU Backgammon's cases hold every other kind
    # ND above DP above DT (a double would be taken, at a loss to the taker) with a gammon possible
    assert action_text(1.2, 0.9, 1.0, True, True, False) == (CubeAction.TOO_GOOD_TAKE, "Too good to double, take")
    assert action_text(1.2, 0.9, 1.0, False, False, True) == (CubeAction.NO_DOUBLE, "No redouble, take")
    beaver = decide([0.3, 0.0, 0.0, 0.0, 0.0], CubeState(), MatchState(beavers=True), 0.68)
    assert beaver.action == "No double, beaver" and beaver.kind is CubeAction.NO_DOUBLE
    assert beaver.answer is TakeAction.BEAVER and beaver.answer.takes


def test_batched_actions_equal_one_at_a_time():
    rng = np.random.default_rng(3)
    values = rng.normal(0.0, 0.3, (2000, 3))
    values[::5, 1] = values[::5, 0]  # ties, where an optional double is
    values[1::5, 2] = values[1::5, 0]
    gammon = rng.random(2000) < 0.5
    kinds = proper_actions(values, gammon)
    for row, g, kind in zip(values, gammon, kinds):
        assert action_text(*row, bool(g), True, False)[0] is kind
    assert (doubles(values, gammon) == [k.doubles for k in kinds]).all()


def test_an_optional_double_is_a_double_for_every_player(monkeypatch):
    """The engine always counted "Optional double" as a double; the external player, the terminal game and the UBGI
    engine did not (they read the text's prefix "Double"/"Redouble"). Now all read CubeAction.doubles."""
    import io

    from bgbot.api import Bot
    from bgbot.arena import engine
    from bgbot.protocols import external, play, ubgi

    optional = decide([0.5, 0.0, 0.0, 0.0, 0.0], efficiency=0.0)  # ND = DT = 0 (dead cube, no gammons), DP = 1
    assert optional.action == "Optional double, take" and optional.kind is CubeAction.DOUBLE_TAKE
    vals = batch_values(np.array([[0.5, 0, 0, 0, 0]]), np.array([0]), np.array([0.0]), jacoby=True)
    assert engine.offers_double(vals, np.array([[0.5, 0, 0, 0, 0]]), np.array([0]), engine.CubeRules(0, True))[0]

    bot = Bot.load()
    monkeypatch.setattr(Bot, "cube_action", lambda self, *a, **k: optional)
    owned = "board:gnubg:root:3:0:0:-1:-1:2:0:2:0:5:1:0:0:0:0:-3:4:-1:0:0:-4:0:-5:0:0:0:0:1:0:-1:0:0:0:0:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:1"
    assert external.answer_line(bot, owned) == "double"
    e = ubgi.Engine(bot)
    e.handle("ubgi")
    e.handle("position gnubgid 4HPwATDgc/ABMA")
    assert e.handle("go role cube")[-1] == "bestcube double"
    out = io.StringIO()
    session = play.Session(bot, stdin=io.StringIO("pass\n"), stdout=out)
    game = play._Game(pos=[board.starting_position(), board.starting_position()])
    assert session.before_roll(game, play.BOT) == (play.BOT, 1)  # bgbot doubled, you passed
    assert "bgbot doubles to 2" in out.getvalue()
