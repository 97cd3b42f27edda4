"""POSITION and DICE arguments: Position ID, GNUbg ID (PositionID:MatchID), XGID, dice text, their errors.

Match IDs below were written by GNU Backgammon 1.07 (`gnubg -t -q`); see tests/data/gnubg_cube_cases.json.
"""

import numpy as np
import pytest

from bgbot.formats.context import (
    Context,
    ContextError,
    DiceMismatchError,
    DiceSyntaxError,
    PositionSyntaxError,
    parse_dice,
    parse_position,
    resolve,
)
from bgbot.rules.board import starting_position
from bgbot.rules.state import CubeState, MatchState

START = "4HPwATDgc/ABMA"


@pytest.mark.parametrize("text", ["31", "3-1", "3 1", " 3,1 ", (3, 1), [3, 1], (np.int64(3), np.int8(1))])
def test_dice_spellings(text):
    assert parse_dice(text) == (3, 1)


def test_dice_keep_order_and_doubles():
    assert parse_dice("13") == (1, 3)
    assert parse_dice("6-6") == (6, 6)


@pytest.mark.parametrize("text", ["71", "0-3", "3", "", "abc", "3-1-2", "66x", (3,), (3, 7), (True, 2), 31, "3.1"])
def test_impossible_dice_rejected_with_input_quoted(text):
    with pytest.raises(DiceSyntaxError) as err:
        parse_dice(text)
    assert repr(text) in str(err.value) or str(text) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_position_id_alone_is_money_centred_jacoby_no_dice():
    c = parse_position(START)
    assert np.array_equal(c.position, starting_position())
    assert c.dice is None
    assert c.cube == CubeState(1, "centre")
    assert c.match == MatchState(length=0, jacoby=True)
    assert c.position_id == START


def test_gnubg_id_with_dice_from_gnubg():
    # gnubg: new session, O (player 0) on roll after the opening roll 3-2.
    c = parse_position(START + ":MIEJAAAAAAAA")
    assert c.dice == (3, 2)
    assert c.match.is_money and c.match.jacoby


def test_gnubg_id_match_score_seen_from_side_on_roll():
    # gnubg: new match 7, set score 3 4, set turn 1 -> player 1 (score 4) is on roll.
    c = parse_position(START + ":cAngADAAIAAE")
    assert c.match == MatchState(length=7, score=(4, 3), crawford=False, jacoby=False)
    assert c.dice is None


def test_gnubg_id_double_offered_position_stays_with_the_doubler():
    # gnubg: set turn 0, set board 4HPwATDgc/ABUA (O has a checker on the bar), O doubles: the Position ID is
    # unchanged, the Match ID's turn goes to X but on_roll stays O. The position is the doubler's view.
    c = parse_position("4HPwATDgc/ABUA:MBkAAAAAAAAA")
    assert c.position[25] == 1
    assert c.dice is None
    assert c.cube == CubeState(1, "centre")


def test_xgid_start_and_fields():
    c = parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:0:10")
    assert np.array_equal(c.position, starting_position())
    assert c.dice is None and c.match.jacoby and c.match.is_money
    c = parse_position("XGID=-b----E-C---eE---c-e----B-:1:1:-1:52:2:4:0:7:10")
    assert c.dice == (5, 2)
    assert c.cube == CubeState(2, "opponent")
    assert c.match == MatchState(length=7, score=(4, 2), jacoby=False, max_cube=1024)


def test_dice_argument_against_position_dice():
    assert resolve(START + ":MIEJAAAAAAAA", "32").dice == (3, 2)
    assert resolve(START + ":MIEJAAAAAAAA", "2-3").dice == (3, 2)
    assert resolve(START + ":MIEJAAAAAAAA").dice == (3, 2)
    assert resolve(START, "3-1").dice == (3, 1)
    with pytest.raises(DiceMismatchError, match="'31'"):
        resolve(START + ":MIEJAAAAAAAA", "31")


@pytest.mark.parametrize(
    "text",
    [
        "garbage",
        "4HPwATDgc/AB",
        "4HPwATDgc/ABMA:zzz",
        "XGID=-b--",
        "",
        ":",
        "4HPwATDgc/ABMA:cAkAAAAAAAA!",
        "////////////AA",
    ],
)
def test_garbage_positions_rejected_with_input_quoted(text):
    with pytest.raises(PositionSyntaxError) as err:
        parse_position(text)
    assert repr(text) in str(err.value)


def test_jacoby_override():
    assert not parse_position(START).with_jacoby(False).match.jacoby
    with pytest.raises(ContextError, match="money play only"):
        parse_position(START + ":cAngADAAIAAE").with_jacoby(True)


def test_context_is_immutable_and_hashable():
    c = parse_position(START)
    with pytest.raises(ValueError):
        c.position[1] = 3
    assert c == Context(starting_position()) and hash(c) == hash(Context(starting_position()))
    assert "4HPwATDgc/ABMA" in repr(c)


# --- states a Match ID or XGID can carry: refused, or analysed as GNU Backgammon's hint does ---------------
# Match IDs built with bgbot.formats.matchid.MatchID (fields per GNU Backgammon's manual) from the start position.


@pytest.mark.parametrize(
    "match_id, error, words",
    [
        ("cAoAAAAAAAAA", "GameOverError", "the game is over"),  # game state 2
        ("MAAAAAAAAAAA", "NotAnalysableError", "no game is in progress"),  # game state 0
        ("MAMAAAAAAAAA", "GameOverError", "resignation"),  # game state 3
        ("MAQAAAAAAAAA", "GameOverError", "dropped double"),  # game state 4
        ("MCkAAAAAAAAA", "NotAnalysableError", r"resignation \(a single game\) awaits"),  # resignation pending
        ("cJEFAAAAAAAA", "PositionSyntaxError", "dice rolled while a double awaits"),  # dice 3-1 and a double
        ("gQHgAGAAGAAA", "PositionSyntaxError", "Crawford game"),  # 7-point match, Crawford, cube 2
        ("DwFgAAAAAAAA", "PositionSyntaxError", "up to 4096"),  # 3-point match, cube 32768
        ("EwEgAAAAAAAA", "PositionSyntaxError", "cube 8 cannot occur"),  # 1-point match, cube 8
    ],
)
def test_match_id_states_refused(match_id, error, words):
    import bgbot.formats.context as context

    with pytest.raises(getattr(context, error), match=words):
        parse_position(START + ":" + match_id)


def test_cube_rule_in_match_play():
    from bgbot.formats.matchid import MatchID
    from bgbot.rules.state import CubeStateError, check_cube

    check_cube(CubeState(4, "me"), MatchState(3, (0, 0)))  # 3-away doubler could turn 2 -> 4
    with pytest.raises(CubeStateError):
        check_cube(CubeState(8, "me"), MatchState(3, (0, 0)))
    check_cube(CubeState(2, "opponent"), MatchState(5, (0, 4)))  # the trailer (post-Crawford) doubled
    with pytest.raises(CubeStateError):
        check_cube(CubeState(2, "me"), MatchState(5, (0, 4)))  # the leader at 1-away cannot have doubled
    # money play: a centred cube above 1 is valid (automatic doubles); gnubg writes such IDs
    c = parse_position("4PPgASTgc/ABMA:cQkAAAAAAAAA")
    assert c.cube == CubeState(2, "centre") and c.match.is_money
    m = MatchID(length=40, score=(3, 1), cube_value=32, cube_owner=0).to_string()  # long matches are fine
    assert parse_position(START + ":" + m).match.length == 40


def test_pending_double_is_kept_and_a_roll_refused():
    from bgbot.formats.context import ContextError

    c = parse_position("4HPwATDgc/ABUA:MBkAAAAAAAAA")  # written by gnubg: O doubled
    assert c.double_offered and c.dice is None
    with pytest.raises(ContextError, match="double awaits"):
        c.with_dice("31")
    x = parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:1:0:10")
    assert x.double_offered


def test_xgid_max_cube_and_beaver_bit():
    from bgbot.cube.decision import may_double
    from bgbot.formats.context import NotAnalysableError

    at_max = parse_position("XGID=-b----E-C---eE---c-e----B-:3:1:1:00:0:0:1:0:3")  # cube 8 mine, max cube 8
    assert at_max.match.max_cube == 8 and not may_double(at_max.cube, at_max.match)
    below = parse_position("XGID=-b----E-C---eE---c-e----B-:2:1:1:00:0:0:1:0:3")
    assert may_double(below.cube, below.match)
    with pytest.raises(PositionSyntaxError, match="maximum cube"):
        parse_position("XGID=-b----E-C---eE---c-e----B-:4:1:1:00:0:0:1:0:3")
    beavers = parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10")
    assert beavers.match.beavers and beavers.match.jacoby
    assert not parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:0:10").match.beavers
    with pytest.raises(NotAnalysableError, match="beaver"):
        parse_position("XGID=-b----E-C---eE---c-e----B-:1:-1:1:B:0:0:3:0:10")
    with pytest.raises(NotAnalysableError, match="a beaver awaits"):  # read: the beaver says beavers are played
        parse_position("XGID=-b----E-C---eE---c-e----B-:1:-1:1:B:0:0:1:0:10")
    with pytest.raises(PositionSyntaxError, match="money play only"):
        parse_position("XGID=-b----E-C---eE---c-e----B-:1:-1:1:B:0:0:0:7:10")
