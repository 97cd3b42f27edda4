"""Tests for bgbot.formats.xgid against positions and Match IDs GNU Backgammon shows after `set xgid`."""

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.formats.matchid import MatchID
from bgbot.formats.xgid import XGID, XGIDError
from bgbot.rules import board
from bgbot.rules.state import CubeState, MatchState

DATA = json.loads((Path(__file__).parent / "data" / "gnubg_cube_cases.json").read_text())["xgid"]
START = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def test_start_decodes_to_start():
    x = XGID.from_string(START)
    assert np.array_equal(x.on_roll_position(), board.starting_position())
    cube, match = x.to_states()
    assert cube == CubeState() and match.is_money and not match.jacoby
    assert x.to_string() == START


@pytest.mark.parametrize("case", DATA, ids=[c["xgid"] for c in DATA])
def test_agrees_with_gnubg(case):
    x = XGID.from_string(case["xgid"])
    assert x.to_string() == case["xgid"]
    assert np.array_equal(x.on_roll_position(), np.array(case["position"], dtype=np.int8))
    gnubg_cube, gnubg_match = MatchID.from_string(case["match_id"]).to_states()
    cube, match = x.to_states()
    assert cube == gnubg_cube
    assert (match.length, match.score, match.crawford) == (gnubg_match.length, gnubg_match.score, gnubg_match.crawford)
    if match.is_money:
        assert match.jacoby == gnubg_match.jacoby
    m = MatchID.from_string(case["match_id"])
    if x.dice is not None:
        assert sorted(x.dice) == sorted(m.dice)


def test_from_states_round_trip():
    pos = board.flip(board.starting_position()).astype(np.int8)
    pos[[3, 4]] = [1, 1]
    pos[[6]] -= 2
    cube, match = CubeState(2, "opponent"), MatchState(7, (5, 1), jacoby=False, max_cube=1024)
    for turn in (1, -1):
        x = XGID.from_states(pos, cube, match, turn=turn, dice=(5, 2))
        y = XGID.from_string(x.to_string())
        assert y == x and np.array_equal(y.on_roll_position(), pos) and y.to_states() == (cube, match)


@pytest.mark.parametrize(
    "bad", ["XGID=", START.replace("-b", "-z"), START[:-3], START.replace(":00:", ":7x:"), START.replace("B-:", "P-:")]
)
def test_malformed(bad):
    with pytest.raises(XGIDError, match="XGID"):
        XGID.from_string(bad)


def test_beaver_read_in_money_play():
    """A beaver or raccoon ("B"/"R" in the dice field) is read in money play whether or not the Crawford/Jacoby field's
    beaver bit is set (it says the beaver was played); in a match it is refused."""
    for cj in (0, 1, 3):
        text = f"XGID=-b----E-C---eE---c-e----B-:1:-1:1:B:0:0:{cj}:0:10"
        x = XGID.from_string(text)
        assert x.cube_action == "B" and x.cube_value == 2 and x.cube_owner == -1 and x.dice is None
        assert x.to_string() == text
    assert XGID.from_string("XGID=-b----E-C---eE---c-e----B-:2:1:-1:R:0:0:1:0:10").cube_action == "R"
    with pytest.raises(XGIDError, match="money play only"):
        XGID.from_string("XGID=-b----E-C---eE---c-e----B-:1:-1:1:B:0:0:0:7:10")
