"""Cube decisions by cubeful search (bgbot.arena.cubesearch, bgbot.cube.tree): 0-ply equals Janowski's decision,
1-ply equals a slow per-roll reference built from the scalar decision, and last-roll positions get their exact values."""

import json

import numpy as np
import pytest

from bgbot import cli
from bgbot.api import Bot
from bgbot.arena import cubesearch
from bgbot.cube.decision import decide
from bgbot.evaluation.classes import cube_efficiency
from bgbot.evaluation.evaluator import for_cube, position_probabilities
from bgbot.evaluation.search import SearchError
from bgbot.formats import positionid
from bgbot.rules.board import game_result
from bgbot.rules.movegen import ROLL_WEIGHTS, ROLLS, generate_plays
from bgbot.rules.outcomes import equity, flip_probabilities
from bgbot.rules.state import CubeState, MatchState
from tests.positions import position

# contact positions where no roll ends the game: the start, a blitz, a prime against an anchor, a race
IDS = ["4HPwATDgc/ABMA", "ds8BANC2bUAQCA", "sM/gASTga/ABUA", "2wYAAMAGAAAAAA"]
STATES = [
    (CubeState(), MatchState(jacoby=False)),
    (CubeState(), MatchState()),
    (CubeState(2, "me"), MatchState(jacoby=False)),
    (CubeState(2, "opponent"), MatchState(jacoby=False)),
    (CubeState(), MatchState(7, (2, 4))),
    (CubeState(2, "me"), MatchState(7, (0, 3))),
    (CubeState(), MatchState(5, (4, 2), crawford=True)),
]


@pytest.fixture(scope="module")
def bot():
    return Bot.load()


@pytest.fixture(scope="module")
def positions():
    return np.stack([positionid.decode(i) for i in IDS])


@pytest.mark.parametrize("cube,match", STATES)
def test_zero_ply_is_janowski_at_the_root(bot, positions, cube, match):
    searched = cubesearch.decide_searched(bot.evaluator, positions, cube, match, 0)
    probs = position_probabilities(for_cube(bot.evaluator), positions).astype(np.float64)  # the model's cube nets
    for i, s in enumerate(searched):
        d = decide(probs[i], cube, match, cube_efficiency(positions[i]))
        assert s.action == d.action, IDS[i]
        assert s.cube_available == d.cube_available
        for k in d.equities:
            assert s.equities[k] == pytest.approx(d.equities[k], abs=1e-6), (IDS[i], k)


def _reference(bot, pos, cube, match):
    """One-ply No double and Double/Take values by loops: each of the 21 rolls, the best play by 0-ply cubeless equity
    (one evaluation per play), the opponent's own cube decision there by :func:`decide` (Janowski), back to my side;
    every value from the model's cube nets (the search reads them: :func:`bgbot.evaluation.evaluator.for_cube`)."""
    states = [cube, CubeState(2 * cube.value, "opponent")]
    flip = {"centre": "centre", "me": "opponent", "opponent": "me"}
    opp_match = MatchState(match.length, (match.score[1], match.score[0]), match.crawford, match.jacoby)
    total = np.zeros(2)
    for (d1, d2), w in zip(ROLLS, ROLL_WEIGHTS):
        after = generate_plays(pos[None], np.array([[d1, d2]])).afterstates
        eq = [float(equity(flip_probabilities(bot.cube_probabilities(a).to_array()[None]))[0]) for a in after]
        child = after[int(np.argmax(eq))]
        assert game_result(child[None])[0] == 0, "the reference handles unfinished games only"
        p = bot.cube_probabilities(child).to_array()
        for k, s in enumerate(states):
            d = decide(p, CubeState(s.value, flip[s.owner]), opp_match, cube_efficiency(child))  # type: ignore[arg-type]
            e = d.equities
            opp = max(e["no_double"], min(e["double_take"], e["double_pass"])) if d.cube_available else e["no_double"]
            total[k] += w * (-s.value * opp if match.is_money else 1.0 - opp)
    return total


@pytest.mark.parametrize("cube,match", [STATES[0], STATES[1], STATES[2], STATES[4], STATES[5]])
def test_one_ply_equals_a_slow_reference(bot, positions, cube, match):
    got = cubesearch.searched_values(bot.evaluator, positions[:3], cube, match, 1)
    for i in range(3):
        np.testing.assert_allclose(got[i], _reference(bot, positions[i], cube, match), atol=2e-5, err_msg=IDS[i])


@pytest.mark.parametrize(
    "mine,wins,action",
    [
        ({6: 2}, 4, "No double, take"),  # 33, 44, 55, 66 bear both off
        ({5: 1, 1: 1}, 23, "Double, take"),  # any 5 or 6, 22, 33, 44
        ({2: 2}, 26, "Double, take"),  # all but the ten rolls with a single 1
        ({1: 2}, 36, "Double, pass"),
    ],
)
@pytest.mark.parametrize("plies", [1, 2])
def test_last_roll_is_exact(bot, mine, wins, action, plies):
    """My last two checkers against the opponent's last one on its 1-point (it bears off on its next roll): I win
    exactly with the rolls that bear both off, so No double = 2p - 1 and Double/Take = 2(2p - 1) for a cube of 1."""
    pos = position(mine, {24: 1})
    for cube in (CubeState(), CubeState(2, "me")):
        money = MatchState(jacoby=False)
        values = cubesearch.searched_values(bot.evaluator, pos[None], cube, money, plies)[0]
        p = wins / 36
        np.testing.assert_allclose(values, [cube.value * (2 * p - 1), 2 * cube.value * (2 * p - 1)], atol=1e-9)
        d = cubesearch.decide_searched(bot.evaluator, pos[None], cube, money, plies)[0]
        expected = (
            action.replace("Double", "Redouble").replace("No double", "No redouble") if cube.owner == "me" else action
        )
        assert d.action == expected
        assert d.equities["no_double"] == pytest.approx(2 * p - 1)


def test_errors(bot, positions):
    with pytest.raises(SearchError, match=r"ply must be a whole number 0 \.\. 2 \(the search depth\), got 3"):
        cubesearch.searched_values(bot.evaluator, positions, CubeState(), MatchState(), 3)
    over = position({}, {24: 1})
    with pytest.raises(cubesearch.CubeSearchError, match="finished"):
        cubesearch.searched_values(bot.evaluator, over[None], CubeState(), MatchState(), 1)


def test_cli_cube_search(capsys, bot, positions):
    status = cli.main(["cube", IDS[1], "--cube-search", "--ply", "1", "--jacoby", "off", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    got = json.loads(out)
    d = cubesearch.decide_searched(bot.evaluator, positions[1:2], CubeState(), MatchState(jacoby=False), 1)[0]
    assert got["cube_search"] is True and got["ply"] == 1 and got["action"] == d.action
    assert got["equities"]["double_take"] == pytest.approx(d.equities["double_take"], abs=1e-6)
    status = cli.main(["cube", IDS[1], "--cube-search", "--probabilities", "0.7,0.2,0,0.1,0"])
    assert status == 2 and "cannot be used with --cube-search" in capsys.readouterr().err
