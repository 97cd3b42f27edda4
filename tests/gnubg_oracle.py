"""Conversions between bgbot positions and gnubg-nn boards, for oracle tests only.

gnubg-nn's board is ``[opp, me]``: two lists of 25 ints, each in its owner's numbering (index i = point i+1,
index 24 = bar); ``board[1]`` is the side on roll; borne-off checkers are implicit (15 minus those on the board).
"""

from __future__ import annotations

import numpy as np

from bgbot.arena.players import from_gnubg, to_gnubg

__all__ = ["from_gnubg", "from_gnubg_after", "to_gnubg"]


def from_gnubg_after(board) -> np.ndarray:
    """A board returned by ``gnubg_nn.moves`` (still ``[opp, mover]``) -> the bgbot afterstate seen by the
    opponent, i.e. already flipped, ``(26,)`` int8, as ``movegen.generate_plays`` returns it."""
    opp, me = board
    return from_gnubg([me, opp])
