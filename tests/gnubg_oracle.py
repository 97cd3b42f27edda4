"""Conversions between bgbot positions and gnubg-nn boards, for oracle tests only.

gnubg-nn's board is ``[opp, me]``: two lists of 25 ints, each in its owner's numbering (index i = point i+1,
index 24 = bar); ``board[1]`` is the side on roll. See ../shared/GNUBG_NN.md.
"""

from __future__ import annotations

import numpy as np


def to_gnubg(position: np.ndarray) -> list[list[int]]:
    """A bgbot position ``(26,)`` int8 -> gnubg-nn board ``[opp, me]``."""
    p = np.asarray(position, dtype=np.int64)
    me = [int(max(p[i], 0)) for i in range(1, 25)] + [int(p[25])]
    opp = [int(max(-p[25 - q], 0)) for q in range(1, 25)] + [int(-p[0])]
    return [opp, me]


def from_gnubg(board) -> np.ndarray:
    """A gnubg-nn board ``[opp, me]`` -> bgbot position ``(26,)`` int8 (side on roll = ``board[1]``)."""
    opp, me = board
    p = np.zeros(26, dtype=np.int8)
    for i in range(24):
        p[i + 1] += me[i]
        p[24 - i] -= opp[i]
    p[25] = me[24]
    p[0] = -opp[24]
    return p


def from_gnubg_after(board) -> np.ndarray:
    """A board returned by ``gnubg_nn.moves`` (still ``[opp, mover]``) -> the bgbot afterstate seen by the
    opponent, i.e. already flipped, ``(26,)`` int8, as ``movegen.generate_plays`` returns it."""
    opp, me = board
    return from_gnubg([me, opp])
