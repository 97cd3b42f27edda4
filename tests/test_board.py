"""Positions: the starting position, flips, pip counts, borne-off counts, game results, validation."""

from __future__ import annotations

import numpy as np
import pytest

from bgbot.rules import board
from tests.positions import position


def test_starting_position_by_hand():
    start = board.starting_position()
    expected = np.zeros(26, dtype=np.int8)
    expected[[6, 8, 13, 24]] = [5, 3, 5, 2]  # mine: 5 on the 6, 3 on the 8, 5 on the 13, 2 on the 24
    expected[[19, 17, 12, 1]] = [-5, -3, -5, -2]  # theirs, on my points 25 - 6, 25 - 8, 25 - 13, 25 - 24
    assert start.dtype == np.int8 and np.array_equal(start, expected)
    assert np.array_equal(board.flip(start), start)
    assert board.pip_counts(start).tolist() == [167, 167]
    assert board.off_counts(start).tolist() == [0, 0]
    assert board.game_result(start) == 0


def test_flip_and_pips_of_an_asymmetric_position():
    p = position({25: 1, 6: 4, 1: 2}, {0: 2, 20: 3, 3: 1})  # 8 of mine off, 9 of theirs off
    assert board.pip_counts(p).tolist() == [25 + 24 + 2, 2 * 25 + 3 * 5 + 22]
    assert board.off_counts(p).tolist() == [8, 9]
    q = board.flip(p)
    assert q[0] == -1 and q[24] == -2 and q[19] == -4 and q[25] == 2 and q[5] == 3 and q[22] == 1
    assert board.pip_counts(q).tolist() == board.pip_counts(p).tolist()[::-1]
    assert np.array_equal(board.flip(q), p)


@pytest.mark.parametrize(
    "mine, theirs, expected",
    [
        ({}, {5: 10}, 1),  # I have borne off all 15, they have 5 off: single
        ({}, {12: 15}, 2),  # none of theirs off: gammon
        ({}, {12: 14, 3: 1}, 3),  # none off and one in my home board: backgammon
        ({}, {12: 14, 0: 1}, 3),  # none off and one on the bar: backgammon
        ({12: 15}, {}, -2),  # they have borne off all 15, none of mine off: I lost a gammon
        ({20: 1, 1: 14}, {}, -3),  # ... with a checker in their home board (my 19..24): a backgammon
    ],
)
def test_game_results(mine, theirs, expected):
    assert board.game_result(position(mine, theirs)) == expected


def test_validate_rejects_bad_positions():
    with pytest.raises(board.PositionError, match="shape"):
        board.validate(np.zeros(25, dtype=np.int8))
    with pytest.raises(board.PositionError, match="more than 15"):
        board.validate(position({6: 16}, {}))
    with pytest.raises(board.PositionError, match="bar"):
        board.validate(position({}, {}) + np.eye(26, dtype=np.int8)[0])  # a checker of mine on their bar index
    assert np.array_equal(board.validate(board.starting_position().astype(np.int64)), board.starting_position())


def test_extremes_read_each_row_directly():
    """The bit-mask and byte-sum reading of :func:`board.extremes` against a plain per-row reading, over varied
    positions (bar, bear-off, primes), finished games and empty sides."""
    from tests.positions import make_positions

    empty_mine = position({}, {12: 15})
    empty_theirs = position({20: 1, 1: 14}, {})
    on_bars = position({25: 2, 6: 13}, {0: 3, 19: 12})
    p = np.concatenate([make_positions(400, seed=3), np.stack([empty_mine, empty_theirs, on_bars])])
    e = board.extremes(p)
    for i, row in enumerate(p):
        mine, theirs = np.flatnonzero(row > 0), np.flatnonzero(row < 0)
        assert e.n_mine[i] == row[row > 0].sum() and e.n_theirs[i] == -row[row < 0].sum()
        assert e.my_back[i] == (mine.max() if len(mine) else 25)
        assert e.their_back[i] == (theirs.min() if len(theirs) else 0)
        assert e.mine_bits[i] == sum(1 << int(k) for k in mine)
        assert e.theirs_bits[i] == sum(1 << int(k) for k in theirs)
