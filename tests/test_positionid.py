"""GNU Backgammon Position IDs: known IDs, agreement with gnubg-nn, round trips and malformed input."""

from __future__ import annotations

import base64
import doctest

import gnubg_nn
import numpy as np
import pytest

import bgbot.formats.positionid
from bgbot.formats.positionid import PositionIDError, decode, encode
from bgbot.rules.board import PositionError, flip, starting_position
from tests.gnubg_oracle import from_gnubg, to_gnubg
from tests.positions import make_positions


def test_doctests():
    assert doctest.testmod(bgbot.formats.positionid).failed == 0


def test_starting_position():
    assert encode(starting_position()) == "4HPwATDgc/ABMA"
    assert np.array_equal(decode("4HPwATDgc/ABMA"), starting_position())


def test_checker_on_the_bar_belongs_to_the_side_on_roll():
    p = starting_position()
    p[24], p[25] = 1, 1  # one back checker of the side on roll on the bar instead of the 24-point
    assert encode(p) == "4HPwATDgc/ABUA"
    assert np.array_equal(decode("4HPwATDgc/ABUA"), p)
    # The same for the side NOT on roll changes the first half of the key instead.
    q = starting_position()
    q[1], q[0] = -1, -1
    assert encode(q) != "4HPwATDgc/ABUA" and np.array_equal(decode(encode(q)), q)


def test_agrees_with_gnubg_and_round_trips():
    positions = make_positions()[::2]
    for p in np.concatenate([positions, flip(positions)]):
        pid = encode(p)
        assert pid == gnubg_nn.position_id(to_gnubg(p))
        assert np.array_equal(decode(pid), p)
        assert np.array_equal(from_gnubg(gnubg_nn.board_from_position_id(pid)), p)


def test_whitespace_is_ignored():
    assert np.array_equal(decode("  4HPwATDgc/ABMA\n"), starting_position())


def _id_from_bits(bits: list[int]) -> str:
    key = bytearray(10)
    for i, bit in enumerate(bits):
        key[i // 8] |= bit << (i % 8)
    return base64.b64encode(bytes(key)).decode()[:14]


@pytest.mark.parametrize(
    "pid, message",
    [
        ("4HPwATDgc/AB", "has 14 characters"),
        ("4HPwATDgc/ABMAA", "has 14 characters"),
        ("4HPwATDgc/AB=A", "only the characters"),
        ("4HPwATDgc/AB!A", "only the characters"),
        ("4HPwATDgc/ABMB", "bits left over"),
        ("//////////////"[:13] + "w", "too many checkers"),
        (_id_from_bits([1] * 16 + [0] * 49), "too many checkers"),  # 16 checkers for the side not on roll
        (_id_from_bits([0] * 50 + [1]), "bits left over"),
        (_id_from_bits([0] * 23 + [1, 0, 0] + [1, 0]), "both sides"),  # both on my point 1 (their 24)
    ],
)
def test_malformed_ids_raise(pid, message):
    with pytest.raises(PositionIDError, match=message) as info:
        decode(pid)
    assert repr(pid) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_not_a_string_raises():
    with pytest.raises(PositionIDError):
        decode(b"4HPwATDgc/ABMA")


def test_encode_rejects_invalid_positions():
    with pytest.raises(PositionError):
        encode(np.zeros(24, dtype=np.int8))


def test_random_keys_decode_or_raise():
    rng = np.random.default_rng(7)
    for _ in range(3000):
        bits = [0] * 80
        for i in rng.choice(80, size=int(rng.integers(0, 31)), replace=False):
            bits[i] = 1
        pid = _id_from_bits(bits)
        try:
            p = decode(pid)
        except PositionIDError:
            continue
        assert encode(p) == pid
