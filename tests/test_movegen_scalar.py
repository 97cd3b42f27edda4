"""The scalar move generator against gnubg-nn (the oracle) and against hand-written classic situations."""

from __future__ import annotations

from collections import Counter

import gnubg_nn
import numpy as np
import pytest

from bgbot.formats.notation import format_play
from bgbot.rules.board import PositionError, flip, starting_position
from bgbot.rules.movegen_scalar import DiceError, legal_plays, play_step
from tests.gnubg_oracle import from_gnubg_after, to_gnubg
from tests.positions import make_positions, position

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]  # the 21 distinct rolls


def oracle_afterstates(position: np.ndarray, d1: int, d2: int) -> set[bytes]:
    """gnubg-nn's resulting positions, flipped (opponent on roll), as bytes."""
    keys = gnubg_nn.moves(to_gnubg(position), d1, d2)
    return {bytes(from_gnubg_after(gnubg_nn.board_from_position_key(k))) for k in keys}


def mine_afterstates(position: np.ndarray, d1: int, d2: int) -> list[bytes]:
    return [bytes(flip(p.afterstate)) for p in legal_plays(position, d1, d2)]


def gnubg_keys(afterstates: np.ndarray) -> list[str]:
    """gnubg-nn keys of ``(M, 26)`` afterstates NOT flipped (board ``[opp, mover]``, as ``moves`` returns them)."""
    a = np.asarray(afterstates, dtype=np.int64).reshape(-1, 26)
    me = np.maximum(a[:, 1:26], 0)
    opp = np.concatenate([np.maximum(-a[:, 24:0:-1], 0), -a[:, :1]], axis=1)
    return [gnubg_nn.key_of_board([o.tolist(), m.tolist()]) for o, m in zip(opp, me)]


def agrees_with_gnubg(position: np.ndarray, d1: int, d2: int) -> bool:
    """Same set of resulting positions as gnubg-nn, each listed once (compared as gnubg-nn keys, which is fast)."""
    plays = legal_plays(position, d1, d2)
    mine = gnubg_keys([p.afterstate for p in plays]) if plays else []
    return len(mine) == len(set(mine)) and set(mine) == set(gnubg_nn.moves(to_gnubg(position), d1, d2))


def formats(p: np.ndarray, d1: int, d2: int) -> list[str]:
    return sorted(format_play(p, play) for play in legal_plays(p, d1, d2))


@pytest.mark.parametrize("part", range(4))
def test_agrees_with_gnubg_on_test_positions(part):
    """Every test position with two rolls (all 21 rolls used evenly): the same set of resulting positions."""
    positions = make_positions()[part::4]
    failures: Counter = Counter()
    examples = []
    for i, p in enumerate(positions):
        for k in range(2):
            d1, d2 = ROLLS[(2 * i + k + part) % 21]
            if k == 1:
                d1, d2 = d2, d1  # the dice order must not matter
            if not agrees_with_gnubg(p, d1, d2):
                failures[f"{d1}-{d2}"] += 1
                examples.append((p.tolist(), d1, d2))
    assert not failures, f"disagreements per roll {dict(failures)}, e.g. {examples[:3]}"


def test_agrees_with_gnubg_on_all_rolls_of_a_sample():
    for p in make_positions()[::50]:
        for d1, d2 in ROLLS:
            assert agrees_with_gnubg(p, d1, d2), (p.tolist(), d1, d2)


def test_oracle_conversions_agree():
    """The fast key comparison and the documented conversion (from_gnubg_after vs flip) say the same."""
    for p in make_positions()[::100]:
        for d1, d2 in ((6, 5), (3, 3)):
            assert agrees_with_gnubg(p, d1, d2)
            assert sorted(mine_afterstates(p, d1, d2)) == sorted(oracle_afterstates(p, d1, d2))


def test_steps_and_hits_replay_to_the_afterstate():
    for p in make_positions()[::20]:
        for d1, d2 in ((6, 5), (4, 4), (2, 1)):
            plays = legal_plays(p, d1, d2)
            assert len({len(play.steps) for play in plays}) <= 1  # every play uses the same number of dice
            for play in plays:
                board = [int(x) for x in p]
                dice = Counter([d1] * 4 if d1 == d2 else [d1, d2])
                assert len(play.hits) == len(play.steps)
                for (src, to), hit in zip(play.steps, play.hits):
                    die = next(d for d in sorted(dice) if dice[d] and play_step(board, src, d) == (to, hit))
                    dice[die] -= 1
                    board[src] -= 1
                    if hit:
                        board[to], board[0] = 0, board[0] - 1
                    if to:
                        board[to] += 1
                assert board == play.afterstate.tolist()


def test_starting_position_counts():
    start = starting_position()
    counts = {roll: len(legal_plays(start, *roll)) for roll in [(6, 5), (3, 1), (6, 6), (3, 3), (1, 1)]}
    assert counts == {(6, 5): 7, (3, 1): 16, (6, 6): 11, (3, 3): 73, (1, 1): 42}
    assert formats(start, 6, 5) == ["13/2", "13/7 8/3", "13/8 13/7", "24/13", "24/18 13/8", "24/18 8/3", "8/3 8/2"]


def test_entering_with_one_number_would_strand_the_other():
    # bar/22 (the 3) leaves the 6 unplayable (22/16 and 8/2 blocked); bar/19 then 8/5 plays both dice.
    p = position({25: 1, 8: 1, 1: 13}, {16: 2, 2: 2, 12: 11})
    assert formats(p, 6, 3) == ["bar/19 8/5"]


def test_higher_die_when_only_one_can_be_played():
    # 10/4 or 10/8 but never both (point 2 is blocked): the 6 must be played.
    p = position({10: 1, 1: 14}, {2: 2, 20: 13})
    assert formats(p, 6, 2) == ["10/4"]
    assert formats(p, 2, 6) == ["10/4"]


def test_smaller_die_when_the_higher_cannot_be_played():
    p = position({10: 1, 1: 14}, {4: 2, 2: 2, 20: 11})  # the 6 (10/4) is blocked, 10/8 then 8/2 too
    assert formats(p, 6, 2) == ["10/8"]


def test_partly_playable_double():
    p = position({24: 2, 1: 13}, {12: 2, 5: 13})
    assert formats(p, 6, 6) == ["24/18(2)"]
    assert all(len(play.steps) == 2 for play in legal_plays(p, 6, 6))


def test_bear_off_with_a_die_larger_than_the_highest_point():
    p = position({4: 1, 2: 1}, {20: 15})
    assert formats(p, 6, 5) == ["4/off 2/off"]
    # a 6 may not bear off from the 2 while the 4 is occupied: with 6-1 the 6 takes the 4.
    assert formats(p, 6, 1) == ["4/off", "4/off 2/1"]  # 4/off is also 4/3/off: one checker left on the 2


def test_hitting_during_the_bear_off():
    p = position({5: 2, 4: 3, 1: 10}, {3: 1, 20: 14})
    plays = legal_plays(p, 2, 1)
    hits = [play for play in plays if play.afterstate[0] == -1]
    assert {format_play(p, play) for play in hits} == {
        "4/3* 4/2",
        "4/3*/1",
        "5/3* 1/off",
        "5/3* 4/3",
        "5/3*/2",
        "5/4 5/3*",
    }


def test_no_bear_off_with_a_checker_on_the_bar():
    p = position({25: 1, 6: 4, 5: 4, 4: 6}, {19: 2, 3: 1, 10: 12})
    for d1, d2 in ROLLS:
        for play in legal_plays(p, d1, d2):
            assert all(to != 0 for _, to in play.steps)


def test_closed_board_has_no_legal_play():
    p = position({25: 2, 6: 13}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 3})
    for d1, d2 in ROLLS:
        assert legal_plays(p, d1, d2) == []
        assert oracle_afterstates(p, d1, d2) == set()


def test_two_on_the_bar_one_can_enter():
    p = position({25: 2, 6: 13}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 1: 5})  # only the 1 (point 24) is open
    assert formats(p, 6, 1) == ["bar/24"]
    assert formats(p, 1, 1) == ["bar/24(2) 6/4", "bar/24(2) 6/5(2)"]  # 24/23 is blocked


@pytest.mark.parametrize("dice", [(0, 3), (7, 1), (2.0, 3), (True, 2), (3, "4")])
def test_bad_dice_raise(dice):
    with pytest.raises(DiceError, match="a die is an integer from 1 to 6"):
        legal_plays(starting_position(), *dice)
    assert issubclass(DiceError, ValueError)


def test_bad_position_raises():
    with pytest.raises(PositionError):
        legal_plays(np.zeros(25, dtype=np.int8), 3, 1)
    bad = starting_position()
    bad[13] = 9
    with pytest.raises(PositionError):
        legal_plays(bad, 3, 1)


def test_play_is_immutable_and_hashable():
    start = starting_position()
    plays = legal_plays(start, 6, 5)
    again = legal_plays(start, 6, 5)
    assert plays == again and len(set(plays) | set(again)) == len(plays)
    with pytest.raises(ValueError):
        plays[0].afterstate[1] = 3
    assert start.tolist() == starting_position().tolist()  # the input is untouched
