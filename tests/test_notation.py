"""Play notation: GNU Backgammon's spelling, format -> parse round trips, forgiving parsing, and errors."""

from __future__ import annotations

import doctest
import random

import gnubg_nn
import numpy as np
import pytest

import bgbot.formats.notation
from bgbot.formats.notation import NO_PLAY, IllegalPlayError, PlaySyntaxError, format_no_play, format_play, parse_play
from bgbot.formats.positionid import encode
from bgbot.rules.board import flip, starting_position
from bgbot.rules.movegen_scalar import Play, legal_plays
from tests.gnubg_oracle import from_gnubg_after, to_gnubg
from tests.positions import make_positions, position

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


def formats(p, d1, d2) -> set[str]:
    return {format_play(p, play) for play in legal_plays(p, d1, d2)}


def test_doctests():
    assert doctest.testmod(bgbot.formats.notation).failed == 0


START = starting_position()
BLOT_ON_18 = START.copy()
BLOT_ON_18[18] = -1
BLOT_ON_18[17] = -2  # one of the three checkers on their 8-point moved to their 7-point (my 18)
BAR_VS_BLOT = position({25: 1, 13: 5, 8: 3, 6: 5, 24: 1}, {22: 1, 19: 5, 17: 3, 12: 5, 1: 1})
OPEN_18_19 = position({24: 2, 13: 5, 6: 8}, {18: 1, 12: 14})
LAST = position({4: 1}, {20: 15})
BEAR_OFF = position({6: 2, 5: 3, 4: 2}, {20: 10, 19: 5})


@pytest.mark.parametrize(
    "p, dice, expected",
    [
        (START, (6, 2), "24/18 13/11"),
        (START, (6, 5), "24/13"),
        (START, (3, 3), "8/5(2) 6/3(2)"),
        (START, (3, 1), "8/5 6/5"),
        (START, (3, 3), "24/15 24/21"),
        (START, (6, 6), "24/18(2) 13/7(2)"),
        (START, (4, 1), "24/23 13/9"),
        (BLOT_ON_18, (6, 5), "24/18*/13"),
        (OPEN_18_19, (6, 5), "24/13"),  # via the 19: no hit
        (OPEN_18_19, (6, 5), "24/18*/13"),
        (BLOT_ON_18, (6, 6), "24/18*(2) 13/7(2)"),
        (BLOT_ON_18, (6, 3), "24/18*/15"),
        (BAR_VS_BLOT, (3, 1), "bar/22* 6/5"),
        (BAR_VS_BLOT, (3, 1), "bar/21"),
        (BEAR_OFF, (6, 5), "6/off 5/off"),
        (BEAR_OFF, (6, 6), "6/off(2) 5/off(2)"),
        (BEAR_OFF, (2, 1), "6/4 5/4"),
        (BEAR_OFF, (4, 4), "6/2(2) 4/off(2)"),
    ],
)
def test_gnu_spellings(p, dice, expected):
    assert expected in formats(p, *dice)
    play = parse_play(p, dice, expected)
    assert format_play(p, play) == expected


def test_format_against_gnubg_nn_steps():
    """Each gnubg-nn play, formatted from gnubg-nn's own steps, reads the same as ours for that position."""
    rng = random.Random(3)
    for p in make_positions()[::10]:
        d1, d2 = rng.choice(ROLLS)
        ours = {bytes(flip(play.afterstate)): format_play(p, play) for play in legal_plays(p, d1, d2)}
        for key, steps in gnubg_nn.moves(to_gnubg(p), d1, d2, 1):
            after = flip(from_gnubg_after(gnubg_nn.board_from_position_key(key)))
            theirs = format_play(p, Play(tuple(tuple(s) for s in steps), (), after))
            assert ours[bytes(flip(after))] == theirs, (p.tolist(), d1, d2)


def _plain(play: Play, rng: random.Random, bar: str, off: str) -> str:
    """The play's single steps, shuffled, with other names for bar and off, without hit marks."""
    names = {25: bar, 0: off}
    words = [f"{names.get(a, a)}/{names.get(b, b)}" for a, b in play.steps]
    rng.shuffle(words)
    return " ".join(words)


def test_format_parse_round_trip_and_other_spellings():
    rng = random.Random(5)
    for i, p in enumerate(make_positions()[::50]):
        d1, d2 = ROLLS[i % 21]
        plays = legal_plays(p, d1, d2)
        for play in rng.sample(plays, min(len(plays), 6)):
            text = format_play(p, play)
            back = parse_play(p, (d1, d2), text)  # the same play; its steps may take the other route
            assert back.afterstate.tolist() == play.afterstate.tolist() and format_play(p, back) == text
            assert parse_play(p, (d2, d1), text.upper()).afterstate.tolist() == play.afterstate.tolist()
            other = _plain(play, rng, rng.choice(["bar", "b", "25"]), rng.choice(["off", "0", "o"]))
            assert np.array_equal(parse_play(p, (d1, d2), other).afterstate, play.afterstate), (p.tolist(), other)


@pytest.mark.parametrize(
    "p, dice, text, expected",
    [
        (START, (6, 5), "13/7/2", "13/2"),
        (START, (6, 5), "24/18/13", "24/13"),
        (START, (6, 5), "24/18 18/13", "24/13"),
        (START, (6, 5), "13/8, 24/18", "24/18 13/8"),
        (START, (6, 5), "24-13", "24/13"),
        (START, (3, 3), "6/3 6/3 8/5 8/5", "8/5(2) 6/3(2)"),
        (START, (3, 1), "8/5* 6/5", None),
        (BLOT_ON_18, (6, 5), "24/18/13", "24/18*/13"),
        (OPEN_18_19, (6, 5), "24/19/13", "24/13"),
        (OPEN_18_19, (6, 5), "24/13", "24/13"),
        (OPEN_18_19, (6, 5), "24/18/13", "24/18*/13"),
        (OPEN_18_19, (6, 5), "13/8 24/18", "24/18* 13/8"),
        (BAR_VS_BLOT, (3, 1), "b/22 6/5", "bar/22* 6/5"),
        (BAR_VS_BLOT, (3, 1), "25/22* 6/5", "bar/22* 6/5"),
        (BAR_VS_BLOT, (3, 1), "bar/22 22/21", "bar/22*/21"),
        (LAST, (2, 2), "4/off", "4/off"),
        (LAST, (3, 1), "4/1/off", "4/off"),
        (LAST, (3, 1), "4/0", "4/off"),
        (BEAR_OFF, (2, 2), "4/0 6/4(2)", "6/off 6/4"),  # GNU joins 6/4 4/2 2/off into one checker's path
        (BEAR_OFF, (6, 5), "6/0 5/o", "6/off 5/off"),
    ],
)
def test_parse_forgiving(p, dice, text, expected):
    if expected is None:
        with pytest.raises(IllegalPlayError, match="no blot to hit on 5"):
            parse_play(p, dice, text)
    else:
        assert format_play(p, parse_play(p, dice, text)) == expected


@pytest.mark.parametrize("text", ["hello", "24/", "/18", "13/x", "8/5(9)", "8/5(0)", "24 18", "24//18", "26/20"])
def test_syntax_errors(text):
    with pytest.raises(PlaySyntaxError) as info:
        parse_play(START, (6, 5), text)
    assert not isinstance(info.value, IllegalPlayError)


@pytest.mark.parametrize("text", ["24/20", "24/18", "13/11 13/8", "6/off", "18/24", "24/18 13/7", "bar/20", "pass"])
def test_illegal_plays(text):
    with pytest.raises(IllegalPlayError) as info:
        parse_play(START, (6, 5), text)
    message = str(info.value)
    assert encode(START) in message and "6-5" in message
    assert not isinstance(info.value, PlaySyntaxError)


def test_ambiguous_play_is_refused():
    p = START.copy()
    p[18], p[19], p[17] = -1, -1, -1  # blots on my 18 and 19 (their 7 and 6): 24/13 must hit on one of them
    p[12] = -4
    with pytest.raises(IllegalPlayError, match="ambiguous"):
        parse_play(p, (6, 5), "24/13")
    assert format_play(p, parse_play(p, (6, 5), "24/18*/13")) == "24/18*/13"


def test_no_legal_play():
    closed = position({25: 2, 6: 13}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 3})
    assert format_no_play() == NO_PLAY == "(no play)"
    for text in ["", NO_PLAY, "no play", "Cannot move", "pass"]:
        play = parse_play(closed, (6, 5), text)
        assert play.steps == () and np.array_equal(play.afterstate, closed)
        assert format_play(closed, play) == NO_PLAY
    with pytest.raises(IllegalPlayError, match="no play is legal"):
        parse_play(closed, (6, 5), "bar/19")


@pytest.mark.parametrize(
    "position,dice,text,why",
    [
        (
            "4HPwATDgc/ABMA",
            (3, 1),
            "24/18",
            "24/18 is not a move with 3-1 in position 4HPwATDgc/ABMA (play '24/18'): 6 pips",
        ),
        ("4HPwATDgc/ABMA", (3, 1), "7/4 6/5", "no checkers of yours on the 7 point"),
        ("4HPwATDgc/ABMA", (6, 1), "13/12 8/2", "the 12 point is blocked (5 opposing checkers): 13/12 cannot"),
        ("4HPwATDgc/ABMA", (6, 1), "6/off 6/5", "cannot bear off while 10 checkers are outside your home board"),
        ("4HPwATDgc/ABMA", (3, 1), "6/5", "a legal play uses both dice"),
        ("4HPwATDgc/ABUA", (3, 1), "8/5 6/5", "1 checker on the bar: enter it before moving any other checker"),
        ("8P9hAAD/PwAAIA", (6, 2), "24/22", "only one die can be played, so it must be the larger, 6 (e.g. '24/18')"),
        ("8P9hAAD/PwAAIA", (6, 2), "24/16", "the 16 point is blocked (2 opposing checkers)"),
    ],
)
def test_illegal_play_explained(position, dice, text, why):
    """An illegal play says which checker cannot move where and why (docs/RULES.md: enter first, blocked points, bearing off
    with all checkers home, use both dice or the larger die)."""
    from bgbot.formats.positionid import decode

    with pytest.raises(IllegalPlayError) as err:
        parse_play(decode(position), dice, text)
    assert why in str(err.value) and "\n" not in str(err.value)
