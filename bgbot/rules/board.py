"""Positions, the starting position, pip counts and game results.

One perspective everywhere: a position is stored from the side on roll ("me").

A position is a ``(26,)`` ``int8`` array, a batch of them ``(N, 26)`` ``int8``:

* index ``p`` for ``p`` in 1..24: my point ``p`` (my home board is 1..6, I move from 24 towards 1 and
  bear off past point 1). A positive count is my checkers, a negative count the opponent's checkers.
* index 25: my bar, a count >= 0 (a checker there has 25 pips to go).
* index 0: the opponent's bar, a count <= 0 (stored negative like every opponent checker).
* Borne-off checkers are implicit: 15 minus the checkers on the board, for each side.

The opponent's point ``q`` (their own numbering) is my point ``25 - q``, so :func:`flip` -- the same position
seen by the other side -- reverses the array and negates it. (This is wildbg's layout.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from bgbot.errors import BgbotError

NUM_CHECKERS = 15
BAR = 25
"""Index of the bar of the side on roll."""
OPP_BAR = 0
"""Index of the bar of the side not on roll (its count is stored negative)."""

#: Result values, from the winner's side, in points for a cube of 1.
SINGLE, GAMMON, BACKGAMMON = 1, 2, 3

STARTING_POSITION = np.zeros(26, dtype=np.int8)
STARTING_POSITION[[24, 13, 8, 6]] = [2, 5, 3, 5]
STARTING_POSITION[[1, 12, 17, 19]] = [-2, -5, -3, -5]
STARTING_POSITION.setflags(write=False)


class PositionError(BgbotError):
    """A position array that breaks the rules of the board (wrong shape, counts, both sides on one point)."""


def starting_position() -> np.ndarray:
    """The starting position, ``(26,)`` int8: 2 on the 24-point, 5 on 13, 3 on 8, 5 on 6 for both sides."""
    return STARTING_POSITION.copy()


def flip(positions: np.ndarray) -> np.ndarray:
    """The same position(s) seen from the other side: ``(..., 26)`` int8 -> ``(..., 26)`` int8."""
    return -positions[..., ::-1]


def off_counts(positions: np.ndarray) -> np.ndarray:
    """Borne-off checkers, ``(..., 26)`` -> ``(..., 2)`` int16: ``[..., 0]`` mine, ``[..., 1]`` the opponent's."""
    p = positions.astype(np.int16)
    mine = NUM_CHECKERS - np.maximum(p, 0).sum(axis=-1)
    theirs = NUM_CHECKERS + np.minimum(p, 0).sum(axis=-1)
    return np.stack([mine, theirs], axis=-1)


_PIP_WEIGHTS = np.arange(26, dtype=np.int16)


def pip_counts(positions: np.ndarray) -> np.ndarray:
    """Pip counts, ``(..., 26)`` -> ``(..., 2)`` int16 in pips: ``[..., 0]`` mine, ``[..., 1]`` the opponent's.

    A checker on my point ``p`` has ``p`` pips to go (bar: 25); the opponent's checker on my point ``p`` has
    ``25 - p`` (its bar, index 0: 25).
    """
    p = positions.astype(np.int16)
    mine = (np.maximum(p, 0) * _PIP_WEIGHTS).sum(axis=-1)
    theirs = (-np.minimum(p, 0) * (25 - _PIP_WEIGHTS)).sum(axis=-1)
    return np.stack([mine, theirs], axis=-1)


def validate(position: np.ndarray) -> np.ndarray:
    """Check one position and return it as a ``(26,)`` int8 array.

    Raises:
        PositionError: wrong shape, more than 15 checkers for a side, a checker of mine on the opponent's bar
            index or the reverse. (A finished game, one side with 15 off, is a valid position.)
    """
    a = np.asarray(position)
    if a.shape != (26,):
        raise PositionError(f"a position has shape (26,), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise PositionError(f"a position holds integer checker counts, got dtype {a.dtype}")
    if np.any(np.abs(a.astype(np.int64)) > NUM_CHECKERS):
        raise PositionError(f"more than {NUM_CHECKERS} checkers on one point: {a.tolist()}")
    a = a.astype(np.int8)
    if a[BAR] < 0:
        raise PositionError(f"index 25 is my bar and holds my checkers (>= 0), got {int(a[BAR])}")
    if a[OPP_BAR] > 0:
        raise PositionError(f"index 0 is the opponent's bar and holds their checkers (<= 0), got {int(a[OPP_BAR])}")
    off = off_counts(a)
    if off[0] < 0 or off[1] < 0:
        raise PositionError(f"more than {NUM_CHECKERS} checkers for one side: {a.tolist()}")
    return a


class Extremes(NamedTuple):
    """What position classes and outcome constraints read off a batch of positions, computed once
    (:func:`extremes`). Shapes for ``M`` positions; "mine" is the side on roll."""

    mine_bits: np.ndarray  # (M,) int64: bit i set where index i holds my checkers (points 1..24, my bar 25)
    theirs_bits: np.ndarray  # (M,) int64: bit i set where index i holds the opponent's (points, their bar 0)
    n_mine: np.ndarray  # (M,) int16: my checkers on the board (bar included)
    n_theirs: np.ndarray  # (M,) int16: the opponent's
    my_back: np.ndarray  # (M,) int64: my farthest-back checker, my numbering (25 = my bar; 25 when I have none)
    their_back: np.ndarray  # (M,) int64: theirs, in my numbering (0 = their bar; 0 when they have none)


_BYTE_SUM = np.uint64(0x0101010101010101)
"""Multiplying a word of 8 bytes by this puts the sum of its bytes (mod 256) in the top byte."""


def _top_bit(bits: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of ``(M,)`` positive int64 below 2**53 (exact in float64: its exponent)."""
    return (bits.astype(np.float64).view(np.int64) >> 52) - 1023


def extremes(positions: np.ndarray) -> Extremes:
    """:class:`Extremes` of positions ``(M, 26)`` int8 (no checking: see :func:`validate`; the counts are exact for
    valid positions, at most 15 checkers a side). There is contact while ``my_back > their_back`` (GNU Backgammon's
    ``ClassifyPosition`` test).

    Batched without per-row reductions: each row padded to 32 bytes, split into its positive and negative parts
    (``p & ~(p >> 7)`` and that minus ``p``), whose occupied indices pack into one bit mask each
    (``np.packbits``) and whose byte sums come from the four 64-bit words of the row (at most 15 per byte lane: no
    carries) times :data:`_BYTE_SUM`. The farthest-back checkers are the highest set bit of my mask and the lowest
    of theirs, read off the float64 exponent."""
    p = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    m = len(p)
    padded = np.zeros((m, 32), dtype=np.int8)
    padded[:, :26] = p
    pos = padded & ~(padded >> 7)  # max(p, 0)
    neg = pos - padded  # max(-p, 0)
    mine = np.packbits((pos != 0).reshape(-1), bitorder="little").view("<u4").astype(np.int64)
    theirs = np.packbits((neg != 0).reshape(-1), bitorder="little").view("<u4").astype(np.int64)
    wp, wn = pos.view(np.uint64), neg.view(np.uint64)
    with np.errstate(over="ignore"):  # the multiply wraps around by design
        n_mine = (((wp[:, 0] + wp[:, 1] + wp[:, 2] + wp[:, 3]) * _BYTE_SUM) >> np.uint64(56)).astype(np.int16)
        n_theirs = (((wn[:, 0] + wn[:, 1] + wn[:, 2] + wn[:, 3]) * _BYTE_SUM) >> np.uint64(56)).astype(np.int16)
    my_back = np.where(mine == 0, 25, _top_bit(mine))
    their_back = np.where(theirs == 0, 0, _top_bit(theirs & -theirs))  # the lowest set bit alone
    return Extremes(mine, theirs, n_mine, n_theirs, my_back, their_back)


def game_result(positions: np.ndarray) -> np.ndarray:
    """Value of finished games for the side that has borne off all its checkers, ``(..., 26)`` -> ``(...,)`` int8.

    Looks at the side on roll's opponent as the possible loser *and* at the side on roll, and returns, for the side
    that has all 15 checkers off: 1 single, 2 gammon (the loser has none off), 3 backgammon (none off and a checker on
    the bar or in the winner's home board). Positive when the side on roll has won, negative when the opponent has,
    0 while the game goes on. Backgammons always count 3 here; the caller applies a "backgammons count as gammons"
    setting or the Jacoby rule.
    """
    p = positions.astype(np.int16)
    off = off_counts(p)
    i_won = off[..., 0] == NUM_CHECKERS
    opp_won = off[..., 1] == NUM_CHECKERS
    # The opponent lost: gammon when it has none off; backgammon when it also has a checker in my home board
    # (my points 1..6) or on its bar (index 0).
    opp_in_my_home = (np.minimum(p[..., 0:7], 0) < 0).any(axis=-1)
    me_in_opp_home = (np.maximum(p[..., 19:26], 0) > 0).any(axis=-1)
    my_value = np.where(off[..., 1] > 0, SINGLE, np.where(opp_in_my_home, BACKGAMMON, GAMMON))
    opp_value = np.where(off[..., 0] > 0, SINGLE, np.where(me_in_opp_home, BACKGAMMON, GAMMON))
    return np.where(i_won, my_value, np.where(opp_won, -opp_value, 0)).astype(np.int8)


def apply_steps(position: np.ndarray, steps) -> np.ndarray:
    """Play checker steps ``(from, to)`` in our indices (25 = bar, 0 = off) on ``position`` ``(26,)`` -> a new
    ``(26,)`` int8 position, NOT flipped. A step landing on an opponent's blot hits it (to index 0). The one
    "apply checker steps" of the library (GNU Backgammon's moves, test positions); the move generators apply whole
    batches their own way."""
    p = np.array(position, dtype=np.int8)
    for src, dst in steps:
        p[src] -= 1
        if dst > 0:
            if p[dst] == -1:
                p[dst] = 0
                p[0] -= 1
            p[dst] += 1
    return p


def move_checker(board: list[int], src: int, to: int, hit: bool) -> list[int]:
    """A copy of ``board`` (26 Python ints) with one checker moved from ``src`` to ``to`` (0 = off), hitting the
    opponent's blot there (to the opponent's bar) when ``hit``: the step :func:`play_step` allows."""
    new = board.copy()
    new[src] -= 1
    if to:
        if hit:
            new[to] = 0
            new[OPP_BAR] -= 1
        new[to] += 1
    return new


def play_step(board: list[int], src: int, die: int) -> tuple[int, bool] | None:
    """Where one checker from ``src`` goes with one die, or None when that is illegal; ``board`` is not changed.
    The rule of a single checker step, shared by the scalar move generator and the notation of plays.

    Args:
        board: a position as a list of 26 Python ints (layout of :mod:`bgbot.rules.board`).
        src: the source index, 1..25 (25 = my bar).
        die: 1..6.

    Returns:
        ``(to, hit)``: ``to`` in 1..24, or 0 for borne off; ``hit`` when an opponent's blot stands on ``to``.
    """
    if board[src] <= 0 or (board[BAR] > 0 and src != BAR):
        return None  # no checker there, or a checker on the bar must enter first
    to = src - die
    if to >= 1:
        if board[to] <= -2:
            return None  # blocked
        return to, board[to] == -1
    # Bearing off: every checker of mine must be in the home board (points 1..6; the bar is index 25).
    if any(board[p] > 0 for p in range(7, 26)):
        return None
    if to == 0:
        return 0, False
    # A die larger than needed bears off only from the highest occupied point.
    if any(board[p] > 0 for p in range(src + 1, 7)):
        return None
    return 0, False


@dataclass(frozen=True, eq=False)
class Play:
    """One legal play: a representative sequence of single-die checker steps and the position it leads to.

    Attributes:
        steps: ``(from, to)`` per die played, in our indices: ``from`` in 1..25 (25 = my bar), ``to`` in 1..24 or
            0 = borne off. Empty when no die can be played.
        hits: one flag per step, True when that step hit an opponent's blot (sent it to index 0).
        afterstate: ``(26,)`` int8, read-only, the resulting position NOT flipped (the mover is still on roll).

    Two plays are equal when their steps and afterstates are equal; plays are hashable.
    """

    steps: tuple[tuple[int, int], ...]
    hits: tuple[bool, ...]
    afterstate: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        a = np.array(self.afterstate, dtype=np.int8)
        a.setflags(write=False)
        object.__setattr__(self, "afterstate", a)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Play):
            return NotImplemented
        return self.steps == other.steps and bytes(self.afterstate) == bytes(other.afterstate)

    def __hash__(self) -> int:
        return hash((self.steps, bytes(self.afterstate)))
