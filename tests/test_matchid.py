"""Tests for bgbot.formats.matchid against Match IDs printed by GNU Backgammon (tests/data/gnubg_cube_cases.json)."""

import base64
import json
from pathlib import Path

import pytest

from bgbot.formats.matchid import MatchID, MatchIDError
from bgbot.rules.state import CubeState, MatchState

DATA = json.loads((Path(__file__).parent / "data" / "gnubg_cube_cases.json").read_text())
ALL_IDS = sorted({c["match_id"] for key in ("matchid", "xgid", "cube") for c in DATA[key]})


@pytest.mark.parametrize("text", ALL_IDS)
def test_round_trip(text):
    m = MatchID.from_string(text)
    assert m.to_string() == text
    assert eval(repr(m)) == m


def _expected(commands):
    """Fields that the gnubg commands set (scores are player 0, player 1)."""
    exp = {"length": 0, "score": (0, 0), "cube_value": 1, "cube_owner": None, "dice": (0, 0), "crawford": False}
    for c in commands:
        w = c.split()
        if w[:2] == ["new", "match"]:
            exp["length"] = int(w[2])
        elif w[:2] == ["set", "score"]:
            exp["score"] = (int(w[2]), int(w[3]))
        elif w[:2] == ["set", "turn"]:
            exp["on_roll"] = int(w[2])
        elif w[:3] == ["set", "cube", "value"]:
            exp["cube_value"] = int(w[3])
        elif w[:3] == ["set", "cube", "owner"]:
            exp["cube_owner"] = int(w[3])
        elif w[:2] == ["set", "dice"]:
            exp["dice"] = (int(w[2]), int(w[3]))
        elif w[:2] == ["set", "crawford"]:
            exp["crawford"] = True
        elif w == ["double"]:
            exp["double_offered"] = True
    return exp


@pytest.mark.parametrize("case", DATA["matchid"], ids=[c["match_id"] for c in DATA["matchid"]])
def test_fields_match_gnubg_commands(case):
    m = MatchID.from_string(case["match_id"])
    for key, value in _expected(case["commands"]).items():
        assert getattr(m, key) == value, key
    if "double" in case["commands"]:
        assert m.turn != m.on_roll


def test_encode_known():
    assert MatchID(on_roll=1, jacoby=True).to_string() == "cAkAAAAAAAAA"
    assert MatchID(on_roll=1, length=7, score=(3, 4), jacoby=False).to_string() == "cAngADAAIAAE"


def test_states_round_trip():
    cube, match = CubeState(4, "me"), MatchState(9, (4, 8), jacoby=False)
    m = MatchID.from_states(cube, match, on_roll=1)
    assert m.to_states() == (cube, match)
    assert m.score == (8, 4) and m.cube_owner == 1


@pytest.mark.parametrize("bad", ["", "cAkAAAAAAAA", "cAkAAAAAAAA!", "////////////", 123])
def test_malformed(bad):
    with pytest.raises(MatchIDError):
        MatchID.from_string(bad)


def test_cube_above_gnubgs_limit_refused():
    """GNU Backgammon plays cubes up to 4096 (MAX_CUBE); the field's 4 bits could say 32768. Money play and a match."""
    assert MatchID.from_string(MatchID(cube_value=4096, cube_owner=0).to_string()).cube_value == 4096
    for log in (13, 14, 15):
        for length in (0, 7):
            bits = log | (0 << 4) | (1 << 8) | (length << 21)  # owner 0, playing, money or a 7-point match
            text = base64.b64encode(bits.to_bytes(9, "little")).decode()
            with pytest.raises(MatchIDError, match="up to 4096"):
                MatchID.from_string(text)
