"""The vectorised move generator against gnubg-nn (the oracle), its scalar twin, and classic traps."""

from __future__ import annotations

from pathlib import Path

import gnubg_nn
import numpy as np
import pytest

from bgbot.formats import positionid
from bgbot.rules import movegen
from bgbot.rules.board import PositionError, flip, starting_position
from bgbot.rules.movegen import ROLLS, DiceError, generate_plays, position_keys
from bgbot.rules.movegen_scalar import legal_plays
from tests.gnubg_oracle import to_gnubg
from tests.positions import make_positions, position
from tests.test_movegen_scalar import gnubg_keys

SELFPLAY_FILE = Path(__file__).parent / "data" / "gnubg_selfplay_positions.txt"


def selfplay_positions() -> np.ndarray:
    """The committed GNU Backgammon self-play positions, ``(n, 26)`` int8."""
    ids = [s for s in SELFPLAY_FILE.read_text().split() if not s.startswith("#") and len(s) == 14]
    return np.stack([positionid.decode(s) for s in ids])


def oracle_keys(p: np.ndarray, d1: int, d2: int) -> set[str]:
    """gnubg-nn's resulting positions of one position and roll, as gnubg-nn keys (``[opp, mover]`` boards)."""
    return set(gnubg_nn.moves(to_gnubg(p), d1, d2))


def differences(positions: np.ndarray, dice: np.ndarray) -> list[tuple[str, tuple[int, int]]]:
    """(Position ID, dice) of every pair whose play set differs from gnubg-nn's (empty = all agree)."""
    plays = generate_plays(positions, dice)
    off = plays.offsets(len(positions))
    unflipped = flip(plays.afterstates)  # mover still on roll: gnubg-nn's [opp, mover] boards
    keys = gnubg_keys(unflipped)
    bad = []
    for i, (p, (d1, d2)) in enumerate(zip(positions, dice.tolist())):
        ours = keys[off[i] : off[i + 1]]
        theirs = oracle_keys(p, d1, d2)
        if not theirs:  # no legal play: we list the position itself, once
            ok = off[i + 1] - off[i] == 1 and np.array_equal(unflipped[off[i]], p)
        else:
            ok = len(ours) == len(set(ours)) and set(ours) == theirs
        if not ok:
            bad.append((positionid.encode(p), (d1, d2)))
    return bad


@pytest.mark.parametrize("part", range(4))
def test_agrees_with_gnubg_on_20000_diverse_position_rolls(part):
    # 5,000 positions (self-play, random play, bar-heavy, bear-off, closed boards) x 4 rolls each, in 4 parts.
    positions = make_positions(5000)
    rng = np.random.default_rng(part)
    block = np.repeat(positions[part * 1250 : (part + 1) * 1250], 4, axis=0)
    dice = ROLLS[rng.integers(0, 21, len(block))]
    assert differences(block, dice) == []


def test_agrees_with_gnubg_on_all_rolls_of_selfplay_positions():
    positions = selfplay_positions()[::12]  # 500 GNU Backgammon self-play positions x 21 rolls
    block = np.repeat(positions, 21, axis=0)
    dice = np.tile(ROLLS, (len(positions), 1))
    assert differences(block, dice) == []


def test_agrees_with_scalar_twin():
    positions = make_positions(5000)[::25]  # 200 diverse positions x 21 rolls
    block = np.repeat(positions, 21, axis=0)
    dice = np.tile(ROLLS, (len(positions), 1))
    plays = generate_plays(block, dice)
    off = plays.offsets(len(block))
    for i, (p, (d1, d2)) in enumerate(zip(block, dice.tolist())):
        ours = {bytes(a) for a in plays.afterstates[off[i] : off[i + 1]]}
        twin = {bytes(flip(play.afterstate)) for play in legal_plays(p, d1, d2)} or {bytes(flip(p))}
        assert ours == twin, (positionid.encode(p), d1, d2)


def test_contract_parents_sorted_each_position_has_a_row_dice_order_irrelevant():
    positions = make_positions(5000)[:300]
    dice = ROLLS[np.random.default_rng(3).integers(0, 21, len(positions))]
    a = generate_plays(positions, dice)
    b = generate_plays(positions, dice[:, ::-1])
    assert np.all(np.diff(a.parent) >= 0)
    assert np.all(a.counts(len(positions)) >= 1)
    assert a.afterstates.dtype == np.int8 and a.afterstates.shape == (len(a.parent), 26)
    for i in range(len(positions)):
        rows_a = {bytes(r) for r in a.afterstates[a.parent == i]}
        rows_b = {bytes(r) for r in b.afterstates[b.parent == i]}
        assert rows_a == rows_b


def test_starting_position_play_counts():
    start = starting_position()
    rolls = np.array([(6, 5), (3, 1), (6, 6), (3, 3), (1, 1), (2, 1)])
    plays = generate_plays(np.repeat(start[None], len(rolls), axis=0), rolls)
    assert plays.counts(len(rolls)).tolist() == [7, 16, 11, 73, 42, 15]


@pytest.mark.parametrize(
    "mine, theirs, dice, expected",
    [
        # both dice must be played: bar/22 would strand the 6, so only bar/19 8/5
        ({25: 1, 8: 1, 1: 13}, {16: 2, 2: 2, 12: 11}, (6, 3), ["bar/19 8/5"]),
        # only one die can be played: the higher one
        ({10: 1, 1: 14}, {2: 2, 20: 13}, (6, 2), ["10/4"]),
        # the higher die is blocked: the lower one
        ({10: 1, 1: 14}, {4: 2, 2: 2, 20: 11}, (6, 2), ["10/8"]),
        # a double that can be played only partly
        ({24: 2, 1: 13}, {12: 2, 5: 13}, (6, 6), ["24/18(2)"]),
        # bear-off with dice larger than the highest point
        ({4: 1, 2: 1}, {20: 15}, (6, 5), ["4/off 2/off"]),
        ({4: 1, 2: 1}, {20: 15}, (6, 1), ["4/off", "4/off 2/1"]),
        # two on the bar, only one point open
        ({25: 2, 6: 13}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 1: 5}, (6, 1), ["bar/24"]),
    ],
)
def test_classic_traps(mine, theirs, dice, expected):
    from bgbot.formats.notation import format_play

    p = position(mine, theirs)
    plays = generate_plays(p[None], np.array([dice]))
    twin = {bytes(flip(play.afterstate)): format_play(p, play) for play in legal_plays(p, *dice)}
    assert sorted(twin[bytes(a)] for a in plays.afterstates) == expected
    assert {bytes(a) for a in plays.afterstates} == set(twin)


def test_hitting_during_the_bear_off():
    p = position({5: 2, 4: 3, 1: 10}, {3: 1, 20: 14})
    plays = generate_plays(p[None], np.array([(2, 1)]))
    hits = flip(plays.afterstates)[:, 0] == -1  # the opponent's blot went to its bar
    assert hits.sum() == 6
    assert {bytes(a) for a in plays.afterstates} == {bytes(flip(x.afterstate)) for x in legal_plays(p, 2, 1)}


def test_closed_board_no_legal_play_gives_the_position_itself():
    p = position({25: 2, 6: 13}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 3})
    block = np.repeat(p[None], 21, axis=0)
    plays = generate_plays(block, ROLLS)
    assert plays.counts(21).tolist() == [1] * 21
    assert np.array_equal(plays.afterstates, np.repeat(flip(p)[None], 21, axis=0))


def test_position_keys_are_exact():
    positions = np.concatenate([make_positions(5000), flip(make_positions(5000))])
    unique_rows = {bytes(r) for r in positions}
    unique_keys = {tuple(k) for k in position_keys(positions).tolist()}
    assert len(unique_keys) == len(unique_rows)


def test_position_keys_pack_the_documented_fields():
    """Each key word is the documented fields side by side (index ``i`` at bit ``_SHIFT[i]``: the opponent's bar
    negated, each point's count + 15, the bar as it is), packed here one field at a time with Python integers."""
    positions = np.concatenate([make_positions(500), flip(make_positions(500))])
    keys = position_keys(positions)
    for p, k in zip(positions.tolist(), keys.tolist()):
        fields = [-p[0]] + [c + 15 for c in p[1:25]] + [p[25]]
        packed = [
            sum(f << int(movegen._SHIFT[i]) for i, f in enumerate(fields) if movegen._HALF[i] == h) for h in (0, 1)
        ]
        assert k == packed


@pytest.mark.parametrize("fallback", ["colliding hash", "no room for a hash"])
def test_hash_collisions_fall_back_to_exact_deduplication(monkeypatch, fallback):
    # With a mixing function that maps everything to 0, every candidate collides; with no bits left for the hash
    # (an enormous batch), everything goes to the exact lexsort: results must not change.
    positions = make_positions(5000)[:200]
    dice = ROLLS[np.random.default_rng(5).integers(0, 21, len(positions))]
    expected = generate_plays(positions, dice)
    if fallback == "colliding hash":
        monkeypatch.setattr(movegen, "_HASH", movegen._hash_tables(np.zeros(2, dtype=np.uint64)))
    else:
        monkeypatch.setattr(movegen, "_MIN_HASH_BITS", 64)
    got = generate_plays(positions, dice)
    assert np.array_equal(got.parent, expected.parent)
    for i in range(len(positions)):
        assert {bytes(r) for r in got.afterstates[got.parent == i]} == {
            bytes(r) for r in expected.afterstates[expected.parent == i]
        }


def _mix(positions: np.ndarray) -> np.ndarray:
    """The documented order key: position_keys @ _MIX (mod 2**64), ``(M, 26)`` -> ``(M,)`` uint64."""
    keys = position_keys(positions)
    with np.errstate(over="ignore"):
        return keys[:, 0] * movegen._MIX[0] + keys[:, 1] * movegen._MIX[1]


def test_plays_of_a_position_are_ordered_by_the_mix_of_their_keys():
    # The order callers see (ties in best-play selection go to the first row): by parent, then by the mix of the
    # unflipped afterstate's keys, ascending.
    positions = make_positions(5000)[::10]
    block = np.repeat(positions, 21, axis=0)
    plays = generate_plays(block, np.tile(ROLLS, (len(positions), 1)))
    mix = _mix(flip(plays.afterstates))
    same_parent = plays.parent[1:] == plays.parent[:-1]
    assert same_parent.sum() > 10000
    assert np.all(mix[1:][same_parent] > mix[:-1][same_parent])
    weights, base, _ = movegen._HASH  # the incremental form: linear in the counts
    with np.errstate(over="ignore"):
        assert np.array_equal(block.astype(np.uint64) @ weights + base, _mix(block))


@pytest.mark.parametrize("dice", [[[0, 3]], [[7, 1]], [[1, 2, 3]], [[2.5, 3]]])
def test_bad_dice_raise(dice):
    with pytest.raises(DiceError):
        generate_plays(starting_position()[None], np.array(dice))


def test_bad_positions_raise():
    with pytest.raises(PositionError):
        generate_plays(np.zeros((2, 25), dtype=np.int8), np.array([[1, 2], [3, 4]]))
