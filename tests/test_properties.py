"""Property tests (hypothesis): round trips of the text formats and invariants of the rules on random valid positions.

The position strategy draws every checker's place: 15 per side, each on a point, the bar or off, no point shared by
both sides, so every drawn position passes :func:`bgbot.rules.board.validate` (checked). A second strategy crowds the
checkers into the home boards, where bearing off and its special cases happen.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.formats import positionid
from bgbot.formats.matchid import MatchID
from bgbot.formats.notation import NO_PLAY, format_play, parse_play
from bgbot.formats.xgid import XGID
from bgbot.rules import board, movegen
from bgbot.rules.movegen_scalar import legal_plays

FAST = settings(max_examples=200, deadline=None)
MOVEGEN = settings(max_examples=150, deadline=None)

_MY_PLACE = st.integers(0, 25) | st.integers(0, 6)  # 0 off, 1..24 points, 25 my bar; the second: home board
_OPP_PLACE = st.integers(-1, 24) | st.integers(18, 24)  # -1 off, 0 the opponent's bar, 1..24 points (my numbering)
_MY_HOME = st.integers(0, 6)  # a bear-off: every checker of mine home or off
_OPP_HOME = st.sampled_from([-1, 19, 20, 21, 22, 23, 24])


@st.composite
def positions(draw) -> np.ndarray:
    """A valid ``(26,)`` int8 position, side on roll (bgbot layout, :mod:`bgbot.rules.board`); half of them bear-offs
    (for one or both sides)."""
    mine, theirs = draw(st.sampled_from([(_MY_PLACE, _OPP_PLACE), (_MY_HOME, _OPP_PLACE), (_MY_HOME, _OPP_HOME)]))
    pos = np.zeros(26, dtype=np.int8)
    for place in draw(st.lists(mine, min_size=15, max_size=15)):
        if place:
            pos[place] += 1
    for place in draw(st.lists(theirs, min_size=15, max_size=15)):
        if place == -1 or (1 <= place <= 24 and pos[place] > 0):
            continue  # borne off, or a point I hold: the checker is off too (points are never shared)
        pos[place] -= 1
    return board.validate(pos)


DICE = st.tuples(st.integers(1, 6), st.integers(1, 6))


@FAST
@given(positions())
def test_position_id_round_trip(pos):
    pid = positionid.encode(pos)
    assert len(pid) == 14
    back = positionid.decode(pid)
    assert back.dtype == np.int8 and np.array_equal(back, pos)


@FAST
@given(positions())
def test_flip_is_an_involution_and_keeps_positions_valid(pos):
    flipped = board.flip(pos)
    board.validate(flipped)
    assert np.array_equal(board.flip(flipped), pos)
    assert np.array_equal(board.off_counts(flipped), board.off_counts(pos)[::-1])
    assert np.array_equal(board.pip_counts(flipped), board.pip_counts(pos)[::-1])


@st.composite
def match_ids(draw) -> MatchID:
    dice = draw(st.just((0, 0)) | DICE)
    return MatchID(
        cube_value=1 << draw(st.integers(0, 12)),  # GNU Backgammon's limit, 4096
        cube_owner=draw(st.sampled_from([None, 0, 1])),
        on_roll=draw(st.integers(0, 1)),
        crawford=draw(st.booleans()),
        game_state=draw(st.integers(0, 4)),
        turn=draw(st.sampled_from([None, 0, 1])),
        double_offered=draw(st.booleans()),
        resignation=draw(st.integers(0, 3)),
        dice=dice,
        length=draw(st.integers(0, 2**15 - 1)),
        score=(draw(st.integers(0, 2**15 - 1)), draw(st.integers(0, 2**15 - 1))),
        jacoby=draw(st.booleans()),
    )


@FAST
@given(match_ids())
def test_match_id_round_trip(mid):
    text = mid.to_string()
    assert len(text) == 12
    back = MatchID.from_string(text)
    assert back == mid  # field by field (dataclass equality)
    assert back.to_string() == text


@st.composite
def xgids(draw) -> XGID:
    """Valid XGIDs: the cube at most the maximum cube, Crawford 0/1 in a match, a beaver or raccoon only in money play."""
    length = draw(st.sampled_from([0, 0, draw(st.integers(1, 10**6))]))
    cj = draw(st.integers(0, 1 if length else 3))
    actions = ["", "", "D"] + (["B", "R"] if not length else [])
    action = draw(st.sampled_from(actions))
    cube_log = draw(st.integers(0, 12))
    return XGID(
        position=draw(positions()),
        cube_value=1 << cube_log,
        cube_owner=draw(st.integers(-1, 1)),
        turn=draw(st.sampled_from([-1, 1])),
        dice=None if action else draw(st.none() | DICE),
        cube_action=action,
        score=(draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6))),
        crawford_jacoby=cj,
        length=length,
        max_cube=1 << draw(st.integers(cube_log, 12)),
    )


@FAST
@given(xgids())
def test_xgid_round_trip(xg):
    back = XGID.from_string(xg.to_string())
    assert np.array_equal(back.position, xg.position)  # XGID's own equality compares the text, so check each field
    for f in dataclasses.fields(XGID):
        if f.name != "position":
            assert getattr(back, f.name) == getattr(xg, f.name), f.name


@MOVEGEN
@given(positions(), DICE)
def test_notation_format_parse_round_trip(pos, dice):
    plays = legal_plays(pos, *dice)
    if not plays:
        assert np.array_equal(parse_play(pos, dice, NO_PLAY).afterstate, pos)
        return
    texts = [format_play(pos, p) for p in plays]
    assert len(set(texts)) == len(texts)  # distinct plays are written differently
    step = max(1, len(plays) // 12)  # parsing is a legal-play search each time: a spread of at most ~12 plays
    for play, text in list(zip(plays, texts))[::step]:
        back = parse_play(pos, dice, text)
        assert np.array_equal(back.afterstate, play.afterstate), text
        assert format_play(pos, back) == text


@MOVEGEN
@given(st.lists(st.tuples(positions(), DICE), min_size=1, max_size=6))
def test_vectorised_move_generator_agrees_with_the_scalar_twin(cases):
    """A batch of positions: per parent, the same set of flipped afterstates as the scalar generator, each once."""
    batch = np.stack([p for p, _ in cases])
    dice = np.array([d for _, d in cases])
    found = movegen.generate_plays(batch, dice)
    assert found.afterstates.dtype == np.int8 and np.all(np.diff(found.parent) >= 0)
    for i, (pos, (d1, d2)) in enumerate(cases):
        mine = [bytes(a) for a in found.afterstates[found.parent == i]]
        scalar = [bytes(board.flip(p.afterstate)) for p in legal_plays(pos, d1, d2)] or [bytes(board.flip(pos))]
        assert len(mine) == len(set(mine))
        assert set(mine) == set(scalar), (positionid.encode(pos), d1, d2)


@MOVEGEN
@given(st.lists(st.tuples(positions(), DICE), min_size=1, max_size=4))
def test_named_plays_are_the_scalar_twins_in_its_order(cases):
    """The notation of the batched generator's plays (:func:`bgbot.formats.plays.name_plays`) and its order are the
    scalar search's: each afterstate written as the scalar twin's steps write it, in the order it first finds them."""
    from bgbot.formats.plays import name_plays

    batch = np.stack([p for p, _ in cases])
    dice = np.array([d for _, d in cases])
    found = movegen.generate_plays(batch, dice)
    texts, rank = name_plays(batch, dice, found)
    for i, (pos, (d1, d2)) in enumerate(cases):
        rows = np.flatnonzero(found.parent == i)
        ours = [(texts[r], bytes(found.afterstates[r])) for r in rows[np.argsort(rank[rows])]]
        scalar = legal_plays(pos, d1, d2)
        expected = [(format_play(pos, p), bytes(board.flip(p.afterstate))) for p in scalar] or [
            (NO_PLAY, bytes(board.flip(pos)))
        ]
        assert ours == expected, (positionid.encode(pos), d1, d2)
