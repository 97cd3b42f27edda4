"""GNU Backgammon Position IDs: a position as the 14-character base64 form of an 80-bit key.

The key lists 50 slots, each written as one 1-bit per checker followed by a 0-bit: first the 25 slots of the player
NOT on roll, then the 25 of the player on roll, each in its owner's numbering (its points 1..24, then its bar).
Bits fill the 10 bytes from the least significant bit of byte 0 upwards; the bytes are written in standard base64
without the ``==`` padding. Unused bits at the end are 0. This is exactly what GNU Backgammon writes (``PositionID``
in its ``positionid.c``), checked against gnubg-nn in ``tests/test_positionid.py``.

Positions use :mod:`bgbot.rules.board`'s ``(26,)`` int8 layout, from the side on roll: index 1..24 my points, 25 my bar,
0 the opponent's bar (stored negative).
"""

from __future__ import annotations

import base64
import binascii
import re

import numpy as np

from bgbot.errors import BgbotError
from bgbot.rules.board import BAR, NUM_CHECKERS, OPP_BAR, PositionError, validate

__all__ = ["PositionIDError", "encode", "encode_many", "decode"]

_ID_RE = re.compile(r"[A-Za-z0-9+/]{14}")


class PositionIDError(BgbotError):
    """A malformed Position ID (wrong length or characters, too many checkers, bits left over, ...)."""


def _slots(position: np.ndarray) -> list[int]:
    """The 50 checker counts in key order: the opponent's points 1..24 and bar, then mine."""
    p = [int(x) for x in position]
    opp = [max(-p[25 - q], 0) for q in range(1, 25)] + [-p[OPP_BAR]]
    me = [max(p[q], 0) for q in range(1, 25)] + [p[BAR]]
    return opp + me


def encode(position: np.ndarray) -> str:
    """The GNU Backgammon Position ID of a position.

    Args:
        position: ``(26,)`` integer array, from the side on roll (see :mod:`bgbot.rules.board`).

    Returns:
        14 characters of ``[A-Za-z0-9+/]``.

    Raises:
        bgbot.rules.board.PositionError: an invalid position.

    >>> from bgbot.rules.board import starting_position
    >>> encode(starting_position())
    '4HPwATDgc/ABMA'
    """
    bits = []
    for count in _slots(validate(position)):
        bits += [1] * count + [0]
    key = bytearray(10)
    for i, bit in enumerate(bits):
        key[i // 8] |= bit << (i % 8)
    return base64.b64encode(bytes(key)).decode("ascii")[:14]


def encode_many(positions: np.ndarray) -> list[str]:
    """:func:`encode` of many positions at once, vectorised (for servers answering many requests).

    Args:
        positions: ``(N, 26)`` integer array of valid positions (not checked: validate them first).

    Returns:
        N Position IDs.

    >>> from bgbot.rules.board import starting_position
    >>> encode_many(np.stack([starting_position(), -starting_position()[::-1]]))
    ['4HPwATDgc/ABMA', '4HPwATDgc/ABMA']
    """
    p = np.asarray(positions, dtype=np.int64).reshape(-1, 26)
    n = len(p)
    opp = np.concatenate([np.maximum(-p[:, 24:0:-1], 0), -p[:, OPP_BAR : OPP_BAR + 1]], axis=1)  # (N, 25)
    me = np.concatenate([np.maximum(p[:, 1:25], 0), p[:, BAR : BAR + 1]], axis=1)  # (N, 25)
    counts = np.concatenate([opp, me], axis=1)  # (N, 50) slot counts in key order
    ends = np.cumsum(counts + 1, axis=1) - 1  # (N, 50) index of each slot's 0-bit
    bits = (np.arange(80)[None, :] < ends[:, -1:] + 1).astype(np.uint8)  # (N, 80) ones up to the last 0-bit
    np.put_along_axis(bits, ends, 0, axis=1)
    keys = np.packbits(bits.reshape(n, 10, 8), axis=2, bitorder="little").reshape(n, 10)  # (N, 10) uint8
    return [base64.b64encode(k.tobytes()).decode("ascii")[:14] for k in keys]


def decode(pid: str) -> np.ndarray:
    """The position a GNU Backgammon Position ID describes, from the side on roll.

    Args:
        pid: 14 characters of ``[A-Za-z0-9+/]``; surrounding whitespace is ignored.

    Returns:
        ``(26,)`` int8 position (see :mod:`bgbot.rules.board`).

    Raises:
        PositionIDError: not a string, wrong length, characters outside base64, more than 15 checkers for a side,
            both sides on one point, or 1-bits left over after the 50 slots.

    >>> decode('4HPwATDgc/ABMA').tolist()
    [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
    >>> int(decode('4HPwATDgc/ABUA')[25])  # one checker of the side on roll on the bar
    1
    >>> decode('4HPwATDgc/AB')
    Traceback (most recent call last):
    ...
    bgbot.formats.positionid.PositionIDError: a Position ID has 14 characters, got 12: '4HPwATDgc/AB'
    """
    if not isinstance(pid, str):
        raise PositionIDError(f"a Position ID is a string, got {pid!r}")
    text = pid.strip()
    if len(text) != 14:
        raise PositionIDError(f"a Position ID has 14 characters, got {len(text)}: {pid!r}")
    if not _ID_RE.fullmatch(text):
        raise PositionIDError(f"a Position ID uses only the characters A-Z a-z 0-9 + /, got {pid!r}")
    try:
        key = base64.b64decode(text + "==", validate=True)
    except binascii.Error as e:  # pragma: no cover - the pattern above already excludes this
        raise PositionIDError(f"not base64: {pid!r} ({e})") from None
    if text[-1] not in "AQgw":  # the last character carries 2 bits of byte 9 and 4 padding bits that must be 0
        raise PositionIDError(f"bits left over after the 80-bit key in Position ID {pid!r}")
    bits = [(key[i // 8] >> (i % 8)) & 1 for i in range(80)]
    counts: list[int] = []
    run, pos = 0, 0
    while len(counts) < 50 and pos < 80:
        if bits[pos]:
            run += 1
        else:
            counts.append(run)
            run = 0
        pos += 1
    if len(counts) < 50:
        raise PositionIDError(f"too many checkers in Position ID {pid!r}: the key ends inside a slot")
    if any(bits[pos:]):
        raise PositionIDError(f"bits left over after the 50 slots in Position ID {pid!r}")
    opp, me = counts[:25], counts[25:]
    if sum(opp) > NUM_CHECKERS or sum(me) > NUM_CHECKERS:
        raise PositionIDError(
            f"too many checkers in Position ID {pid!r}: {sum(me)} for the side on roll, {sum(opp)} for the other"
        )
    position = np.zeros(26, dtype=np.int8)
    for q in range(1, 25):
        if me[q - 1] and opp[24 - q]:
            raise PositionIDError(f"both sides have checkers on the side on roll's point {q} in Position ID {pid!r}")
        position[q] = me[q - 1] - opp[24 - q]
    position[BAR] = me[24]
    position[OPP_BAR] = -opp[24]
    try:
        return validate(position)
    except PositionError as e:  # pragma: no cover - the checks above cover validate's
        raise PositionIDError(f"invalid position in Position ID {pid!r}: {e}") from None
