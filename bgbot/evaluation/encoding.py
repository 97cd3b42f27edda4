"""Network inputs: positions ``(M, 26)`` int8 (side on roll) -> ``(M, N_FEATURES)`` float32, vectorised.

Encoding ``ENCODING_VERSION`` = ``"tesauro196+expert7/v1"``, 203 inputs. Every input is computed for one side from that
side's own numbering, so encoding ``board.flip(x)`` swaps the "mine" and "opponent" inputs (a test proves it).

* 0..97, the side on roll ("mine"); 98..195, the opponent (in its own numbering) -- Tesauro's TD-Gammon inputs
  (G. Tesauro, "Practical issues in temporal difference learning", 1992; the 198-unit layout described in
  Sutton & Barto, "Reinforcement Learning", 2nd ed., section 16.1): for points 1..24, four units each, point-major,
  ``[n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n > 3]`` for the side's ``n`` checkers there; then checkers on the
  bar / 2; then checkers borne off / 15.
  Tesauro's two "whose turn" units are left out: we always encode from the side on roll, so they would be constant.
* 196, 197: pip counts / 100, mine and the opponent's (the race-strength measure every player counts; gnubg's race
  inputs use pip-based features too).
* 198: 1.0 when there is no contact left (a pure race), else 0.0 (GNU Backgammon's CLASS_RACE vs CLASS_CONTACT split,
  gnubg eval.c ``ClassifyPosition``).
* 199, 200: shots -- the fraction of the 36 rolls with which the side (199: me, on roll; 200: the opponent, were it on
  roll) can hit at least one blot of the other side. Direct and combination shots (the intermediate landing points of
  a combination, including 3x and 4x of a double, must not be blocked by two or more of the other side's checkers).
  Checkers on the bar must enter first (see ``_shot_counts``). It ignores only the rule that a play must use as much of
  the roll as possible. Source: the shot-counting every player does; gnubg's ``I_P1`` input is a related measure.
* 201, 202: escapes of the rearmost checker of each side (201: mine, 202: the opponent's) / 36, GNU Backgammon's
  ``I_ESCAPES`` measure (gnubg eval.c ``ComputeTable0`` / ``Escapes``): with the 12 points in front of the checker
  marked blocked when the other side holds them, the number of rolls whose full distance (up to 12 pips, doubles
  counted as 2x) lands on an open point with at least one of the single-die points open.
"""

from __future__ import annotations

import numpy as np

from bgbot.errors import BgbotError
from bgbot.rules.board import BAR, NUM_CHECKERS, flip

ENCODING_VERSION = "tesauro196+expert7/v1"

N_TESAURO_SIDE = 98
I_PIPS, I_RACE, I_SHOTS, I_ESCAPES = 196, 198, 199, 201
N_FEATURES = 203


def _side_names(side: str) -> list[str]:
    units = [f"{side}_p{p}_{u}" for p in range(1, 25) for u in ("ge1", "ge2", "ge3", "over3")]
    return units + [f"{side}_bar", f"{side}_off"]


FEATURE_NAMES: tuple[str, ...] = tuple(
    _side_names("my")
    + _side_names("opp")
    + ["my_pips", "opp_pips", "race", "my_shots", "opp_shots", "my_escapes", "opp_escapes"]
)
"""Name of each input, for inspection and model cards."""


class EncodingError(BgbotError):
    """Positions that cannot be encoded (wrong shape or dtype)."""


def _escape_table() -> np.ndarray:
    """gnubg's ``anEscapes``: for each 12-bit mask of blocked points (bit i = distance i+1), rolls out of 36."""
    table = np.zeros(1 << 12, dtype=np.float32)
    for mask in range(1 << 12):
        c = 0
        for n0 in range(6):
            for n1 in range(n0 + 1):
                if not mask & (1 << (n0 + n1 + 1)) and not (mask & (1 << n0) and mask & (1 << n1)):
                    c += 1 if n0 == n1 else 2
        table[mask] = c
    return table


_ESCAPE_COUNTS_BY_WINDOW = _escape_table().astype(np.int32)[[int(f"{w:012b}"[::-1], 2) for w in range(1 << 12)]]
"""gnubg's escapes (rolls out of 36) indexed by the 12 points in front with bit j = distance 12 - j (gnubg's mask
bit-reversed)."""
_BITS = 2.0 ** np.arange(26)  # (26,) float64, bit k for index k: a float matmul packs a row of bools exactly
_NON_DOUBLES = [(a, b) for a in range(1, 7) for b in range(a + 1, 7)]
_UNITS = np.array([[n >= 1, n >= 2, n >= 3, max(n - 3, 0) / 2] for n in range(16)], dtype=np.float32)  # (16, 4)
_POINTS = np.r_[False, np.ones(24, dtype=bool), False]  # (26,) indices 1..24
_PIPS_MINE = np.arange(26, dtype=np.float32)  # a checker of mine on index p has p pips to go
_PIPS_THEIRS = np.arange(26, dtype=np.float32) - 25  # one of theirs (stored negative) on index p has 25 - p


def _bitmask(cond: np.ndarray) -> np.ndarray:
    """Rows of ``(M, 26)`` bool as integers, bit k = column k: ``(M,)`` int64."""
    return (cond.astype(np.float64) @ _BITS).astype(np.int64)


def _tesauro_side(p: np.ndarray, out: np.ndarray) -> None:
    """Write one side's 98 Tesauro units into ``out`` (M, 98) float32, from ``p`` (M, 26) int16 seen by that side."""
    n = np.maximum(p[:, 1:BAR], 0)  # (M, 24) my checkers on points 1..24
    out[:, :96] = np.take(_UNITS, n, axis=0).reshape(len(p), 96)
    out[:, 96] = p[:, BAR] * 0.5
    out[:, 97] = (NUM_CHECKERS - np.maximum(p, 0).sum(axis=1)) / NUM_CHECKERS


_LOW26 = (1 << 26) - 1
_PTS = _LOW26 & ~1 & ~(1 << BAR)  # bits 1..24: the points
_REV13 = np.array([int(f"{i:013b}"[::-1], 2) for i in range(1 << 13)], dtype=np.int64)  # 13-bit reversal


def _masks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Four bitmasks of positions ``(M, 26)`` int (bit k = index k), each ``(M,)`` int64: indices where the side on roll
    has a checker (``> 0``), the opponent has one (``< 0``), the side on roll has two or more (``>= 2``), the opponent
    two or more (``<= -2``)."""
    return _bitmask(x > 0), _bitmask(x < 0), _bitmask(x >= 2), _bitmask(x <= -2)


def _reverse(bits: np.ndarray) -> np.ndarray:
    """Bit k -> bit 25 - k of ``(M,)`` int64 26-bit masks: a mask of indices seen from the other side (``board.flip``)."""
    return (_REV13[bits & 0x1FFF] << 13) | _REV13[bits >> 13]


def _packed_masks(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """The masks :func:`_expert_counts` reads, ``(M, 26)`` int positions -> six ``(M,)`` int32 (bit k = index k):
    ``mine, theirs, theirs2`` of :func:`_masks` and ``r_mine, r_theirs, r_mine2``, :func:`_reverse` of ``mine, theirs,
    mine2``. Each row is laid in bits 6..31 of 32 (one bool per index, padded in front), so that ``np.packbits`` of the
    flat array packs whole rows into 32-bit words: little-endian bit order puts index k at bit k + 6, big-endian
    (byte-swapped) at bit 31 - (k + 6) = 25 - k, the reversed mask."""
    padded = np.zeros((len(x), 32), dtype=x.dtype)
    padded[:, 6:] = x

    def forward(cond: np.ndarray) -> np.ndarray:
        return (np.packbits(cond.reshape(-1), bitorder="little").view("<u4") >> 6).view(np.int32)

    def reverse(cond: np.ndarray) -> np.ndarray:
        return np.packbits(cond.reshape(-1), bitorder="big").view(">u4").astype("<u4").view(np.int32)

    mine, theirs = padded > 0, padded < 0
    return forward(mine), forward(theirs), forward(padded <= -2), reverse(mine), reverse(theirs), reverse(padded >= 2)


_D6 = np.arange(1, 7, dtype=np.int32)[:, None]  # (6, 1) the die of each double, a column to broadcast over rows
_D6_2, _D6_3, _D6_4 = 2 * _D6, 3 * _D6, 4 * _D6
_ENTRY = BAR - _D6  # (6, 1) index of the entry point of die d
_PA, _PB = (np.array(v) - 1 for v in zip(*_NON_DOUBLES))  # (15,) rows of each non-double's dice in (6, R) arrays
_PS = (_PA + _PB + 2).astype(np.int32)[:, None]  # (15, 1) each non-double's sum


def _k_table(f) -> np.ndarray:
    """``(6,)`` int32 bit masks by the number ``k`` of checkers on the bar, indexed by ``clip(k, -1, 4)``: 0..3, 4 or
    more, and (last) a negative count (not a position; handled as the scalar rules would: no checker moves first)."""
    return np.array([f(k) for k in (0, 1, 2, 3, 4, -1)], dtype=np.int64).astype(np.int32)


_BAR_BIT = 1 << BAR
_MOVERS = np.stack(
    [_k_table(lambda k, i=i: (_PTS if k <= 4 - i else 0) | (_BAR_BIT if i <= 5 - min(k, 4) else 0)) for i in range(5)]
)
"""``(5, 6)`` int32, ``_MOVERS[i, k]``: the indices whose checkers can make the i-th move (i = 1..4) of a double with
k checkers on the bar: those on points once all have entered (i <= 4 - k), the one on the bar its entering move and
what is left of the four after the others entered (i <= 5 - min(k, 4))."""
_COMBO_MOVERS = _k_table(lambda k: _PTS if k == 0 else _BAR_BIT if k == 1 else 0)
"""Checkers that can move both dice of a non-double: any on a point with none on the bar, the one on the bar alone."""
_ALL_OPEN = _k_table(lambda k: -1 if k == 0 else 0)
"""All bits where no checker is on the bar: or'ed into the open points, every "entry point" reads open."""
_ONE_ON_BAR = _k_table(lambda k: -1 if k == 1 else 0)


def _combination_hits(
    ob: np.ndarray, op: np.ndarray, mc: np.ndarray, m2: np.ndarray, m3: np.ndarray, m4: np.ndarray, hits: np.ndarray
) -> None:
    """The hits that pass an intermediate point, into ``hits`` ``(21, R)`` bool (rows 0..14 the non-doubles, 15..20
    the doubles; overwritten): a non-double's sum by a checker of ``mc`` through either die's point, a double's 2, 3
    or 4 steps by a checker of ``m2``/``m3``/``m4`` (those that can make that many moves) through open points.
    ``ob`` ``(6, R)``: the blots with the point d pips behind open; ``op`` ``(1, R)`` the open points; the movers
    ``(1, R)`` int32 masks."""
    c = ob.take(_PA, axis=0)
    c |= ob.take(_PB, axis=0)
    c &= mc >> _PS
    np.not_equal(c, 0, out=hits[:15])
    x = (m4 >> _D6_4) & (op >> _D6_3)
    x |= m3 >> _D6_3
    x &= op >> _D6_2
    x |= m2 >> _D6_2
    x &= ob
    np.not_equal(x, 0, out=hits[15:])


def _shot_counts(k: np.ndarray, mine: np.ndarray, theirs: np.ndarray, theirs2: np.ndarray) -> np.ndarray:
    """Rolls out of 36 with which the side on roll hits an opponent blot -> ``(M,)`` int32 in 0..36.

    Args: ``k`` ``(M,)`` ints, the side's checkers on its bar (0..15); bitmasks ``(M,)`` (int32 or int64) of the
    indices where the side has checkers (bar included), where the opponent has checkers, and where it has two or more
    (:func:`_masks`).

    Bitmasks over the indices (bit t = index t), shifted by each die distance d: bit t of ``mask >> d`` is index
    ``t + d``, d pips behind t. A blot at t is hit by a non-double (a, b) from t + a or t + b directly, or from
    t + a + b through an open t + a or t + b; by a double d from t + i*d (i <= 4) with t + d .. t + (i-1)*d open.
    With ``k`` checkers on the bar: a roll whose entry point is blocked does nothing; after entering, a non-double's
    other die moves any checker only when ``k == 1``; a double has ``4 - k`` moves left.

    Only the positions with a checker (bar included) above the lowest blot can hit; for those, every roll at once over
    ``(rolls, R)`` arrays: the 15 non-doubles' and 6 doubles' hits as booleans, counted per position.
    """
    i32 = np.int32  # every mask fits in 26 bits: int32 halves the memory traffic of int64
    out = np.zeros(len(k), dtype=i32)
    mine = mine.astype(i32, copy=False)
    theirs2 = theirs2.astype(i32, copy=False)
    blots = theirs.astype(i32, copy=False) & ~theirs2
    blots &= _PTS
    can = blots != 0
    can &= mine > (blots & -blots)  # no point holds both sides' checkers
    rows = np.flatnonzero(can)
    if len(rows) == 0:
        return out
    mine, blots, opened = mine[rows], blots[rows], ~theirs2[rows] & _PTS
    k = np.maximum(np.minimum(np.asarray(k)[rows], 4), -1).astype(np.intp)  # _k_table's index (intp: faster)
    m, b, op = mine[None], blots[None], opened[None]
    ob = (op >> _D6) & b  # (6, R) blots with the point d pips behind them open
    hits = np.empty((21, len(rows)), dtype=bool)  # rows 0..14 the non-doubles (a < b), 15..20 the doubles 1..6
    if not k.any():  # no checker on the bar: every checker moves freely
        do = ((m >> _D6) & b) != 0  # (6, R) hit directly with a d
        h = hits[:15]
        _combination_hits(ob, op, m, m, m, m, hits)
        h |= do.take(_PA, axis=0)
        h |= do.take(_PB, axis=0)
        hits[15:] |= do
    else:
        on_bar = mine & _BAR_BIT
        others = (mine & _PTS)[None]
        # (6, R): die d may be played, the other die entering a checker first (all dice when none is on the bar)
        enters = ((opened | _ALL_OPEN[k]) >> _ENTRY) & 1 != 0
        after = ((((opened & _ONE_ON_BAR[k]) | _ALL_OPEN[k]) >> _ENTRY) & 1) != 0  # other die played, then d
        db = ((on_bar[None] >> _D6) & b) != 0  # (6, R) hit entering with a d
        do = ((others >> _D6) & b) != 0  # (6, R) hit directly with a d by a checker on a point
        mc = (mine & _COMBO_MOVERS[k])[None]
        movers = _MOVERS.take(k, axis=1)  # (5, R) row i: the checkers that can make the i-th move
        movers &= mine
        h = hits[:15]
        _combination_hits(ob, op, mc, movers[2:3], movers[3:4], movers[4:], hits)
        h |= db.take(_PA, axis=0)
        h |= db.take(_PB, axis=0)
        h |= do.take(_PA, axis=0) & after.take(_PB, axis=0)
        h |= do.take(_PB, axis=0) & after.take(_PA, axis=0)
        hits[15:] |= ((movers[1:2] >> _D6) & b) != 0
        hits[15:] &= enters
    n = np.add.reduce(hits[:15].view(np.uint8), axis=0, dtype=np.uint8).astype(i32)
    n *= 2
    n += np.add.reduce(hits[15:].view(np.uint8), axis=0, dtype=np.uint8)
    out[rows] = n
    return out


def _escape_counts(mine: np.ndarray, theirs2: np.ndarray) -> np.ndarray:
    """gnubg escapes (rolls out of 36) of the rearmost checker of the side on roll, ``(M,)`` int32, from the bitmasks
    of its checkers and of the opponent's points held (:func:`_masks`; int32 or int64)."""
    rear = np.maximum(_highest_bit(mine), 1)  # (M,) index 1..25 (1 when all are off)
    blocked = (theirs2 & _PTS).astype(np.int64) << 12  # (M,) bit k+12: the opponent holds point k
    return _ESCAPE_COUNTS_BY_WINDOW[(blocked >> rear) & 0xFFF]  # bit j: point rear - 12 + j held, distance 12 - j


def _highest_bit(bits: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of each ``(M,)`` int32 or int64 (< 2**26), -1 for 0."""
    return np.frexp(bits.astype(np.float64))[1] - 1


def _expert_counts(
    x: np.ndarray, masks: tuple[np.ndarray, ...] | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The race flag and the shot and escape counts as integers, ``(M, 26)`` int positions -> ``(M, 5)`` int32:
    race (0/1), my shots, the opponent's shots, my escapes, the opponent's escapes (rolls out of 36, each side from
    its own numbering). The opponent's masks are mine bit-reversed: no flipped copy of the board.

    ``masks``, if given, are the positions' ``(mine, theirs, mine2, theirs2)`` of :func:`_masks` followed by the first
    three bit-reversed (:func:`_reverse`), each ``(M,)`` int64 (or int32), computed elsewhere (encoding v2's features
    have them); else computed here (:func:`_packed_masks`). Both sides' shots and escapes are counted in one pass over
    the rows of both stacked. ``out``, if given, is a ``(M, 5)`` int32 array (a view into a wider one is fine) that
    receives the counts."""
    if masks is None:
        mine, theirs, theirs2, r_mine, r_theirs, r_mine2 = _packed_masks(x)
    else:
        mine, theirs, _, theirs2, r_mine, r_theirs, r_mine2 = masks
    if out is None:
        out = np.empty((len(x), 5), dtype=np.int32)
    n = len(x)
    out[:, 0] = _is_race(mine, theirs)

    def both(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # (2M,) int32: the side on roll's rows, then the opponent's
        return np.concatenate((a, b), dtype=np.int32, casting="unsafe")  # masks < 2**26: exact

    # the opponent's view: its checkers are "mine" (the reversed masks); both sides in one pass
    mine_2, theirs2_2 = both(mine, r_theirs), both(theirs2, r_mine2)
    shots = _shot_counts(both(x[:, BAR], -x[:, 0]), mine_2, both(theirs, r_mine), theirs2_2)
    escapes = _escape_counts(mine_2, theirs2_2)
    out[:, 1], out[:, 2] = shots[:n], shots[n:]
    out[:, 3], out[:, 4] = escapes[:n], escapes[n:]
    return out


def is_race(positions: np.ndarray) -> np.ndarray:
    """No contact left, ``(..., 26)`` int -> ``(...,)`` bool: every checker of the side on roll (bar included) is past
    every opponent checker (its bar included). Symmetric in the sides: ``is_race(flip(x)) == is_race(x)``."""
    p = np.asarray(positions)
    flat = p.reshape(-1, 26)
    return _is_race(_bitmask(flat > 0), _bitmask(flat < 0)).reshape(p.shape[:-1])


def _is_race(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Race test on bitmasks of my and the opponent's checkers (bit k = index k): all of mine below their lowest."""
    return (mine < (theirs & -theirs)) | (theirs == 0)


def encode(positions: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Network inputs, ``(M, 26)`` int8 positions from the side on roll -> ``(M, N_FEATURES)`` float32.

    ``out``, if given, is a ``(M, N_FEATURES)`` float32 array (a view into a wider input matrix is fine) that receives
    the inputs and is returned.

    Raises:
        EncodingError: ``positions`` is not a 2-D integer array with 26 columns.
    """
    x = np.asarray(positions)
    if x.ndim != 2 or x.shape[1] != 26 or not np.issubdtype(x.dtype, np.integer):
        raise EncodingError(f"positions are (M, 26) integer arrays, got shape {x.shape} dtype {x.dtype}")
    mine = x.astype(np.int16)
    theirs = flip(mine)
    if out is None:
        out = np.empty((len(x), N_FEATURES), dtype=np.float32)
    _tesauro_side(mine, out[:, :N_TESAURO_SIDE])
    _tesauro_side(theirs, out[:, N_TESAURO_SIDE : 2 * N_TESAURO_SIDE])
    # pip counts / 100 (board.pip_counts): exact integer sums in float32, then one division, alike for both sides
    out[:, I_PIPS] = np.maximum(mine, 0).astype(np.float32) @ _PIPS_MINE
    out[:, I_PIPS + 1] = np.minimum(mine, 0).astype(np.float32) @ _PIPS_THEIRS
    out[:, I_PIPS : I_PIPS + 2] /= 100.0
    counts = _expert_counts(x)  # (M, 5) int32: race, shots, escapes
    out[:, I_RACE] = counts[:, 0]
    out[:, I_SHOTS : I_SHOTS + 4] = counts[:, 1:] / np.float32(36.0)
    return out


# -- the sparse form: each position's inputs as a sum of a few fixed rows ------------------------------------------
#
# Every input above is a sum, over a few "slots" of the position, of a vector that depends only on that slot's value:
# index j of the board (a point or a bar) with its signed count v (Tesauro's units of whichever side is there and that
# side's pips, j * v or (25 - j) * -v, / 100), each side's borne-off count, the race flag, and each side's shot and
# escape counts (integers out of 36). So the first layer of a net, W @ x + b, is a sum of N_SLOTS rows of the table
# SPARSE_ROWS @ W.T: an embedding-bag, about 33 * H additions per position instead of 203 * H multiply-adds.

_V = 31  # signed counts -15..15 of a board index
_R_OFF = 26 * _V  # my borne-off count 0..15, then the opponent's
_R_RACE = _R_OFF + 32  # race flag 0/1
_R_SHOTS = _R_RACE + 2  # my shot count 0..36, then the opponent's
_R_ESCAPES = _R_SHOTS + 2 * 37  # my escape count 0..36, then the opponent's
N_SPARSE_ROWS = _R_ESCAPES + 2 * 37
"""Rows of :data:`SPARSE_ROWS`."""
N_SLOTS = 26 + 2 + 1 + 2 + 2
"""Rows summed per position: the 26 board indices, 2 off counts, race, 2 shot and 2 escape counts."""
OFF_SLOT = 26
"""Column of :func:`sparse_encode` holding my borne-off count's row: every position has exactly one (a first layer's
bias can be folded into those rows)."""
DENSE_COLUMNS: tuple[int, ...] = ()
"""Input columns that the sparse rows leave out (continuous inputs a later encoding version may add): a first layer
over :func:`sparse_encode` adds ``dense_inputs(x) @ W1[:, DENSE_COLUMNS].T``. Empty in this version: every input
is in the rows."""
_BOARD_BASE = (np.arange(26, dtype=np.int32) * _V + 15)[None]  # (1, 26)
_DENSE_TAIL = np.array([_R_OFF, _R_OFF + 16, _R_RACE, _R_SHOTS, _R_SHOTS + 37, _R_ESCAPES, _R_ESCAPES + 37], np.int32)
_SLOT_BASE = np.concatenate([_BOARD_BASE[0], _DENSE_TAIL])  # (N_SLOTS,) the row of each slot's value 0


def _sparse_rows() -> np.ndarray:
    """The input vector each sparse row stands for: ``(N_SPARSE_ROWS, N_FEATURES)`` float64."""
    rows = np.zeros((N_SPARSE_ROWS, N_FEATURES))
    units = _UNITS.astype(np.float64)
    for j in range(26):
        for v in range(-15, 16):
            r = rows[j * _V + v + 15]
            if v > 0 and j != 0:  # my checkers on my point j (or my bar, j = 25)
                if j == BAR:
                    r[96] = v * 0.5
                else:
                    r[(j - 1) * 4 : j * 4] = units[v]
                r[I_PIPS] = j * v / 100.0
            elif v < 0 and j != BAR:  # the opponent's checkers on its point 25 - j (its bar when j = 0)
                q = 25 - j
                if q == BAR:
                    r[N_TESAURO_SIDE + 96] = -v * 0.5
                else:
                    r[N_TESAURO_SIDE + (q - 1) * 4 : N_TESAURO_SIDE + q * 4] = units[-v]
                r[I_PIPS + 1] = q * -v / 100.0
    for n in range(16):
        rows[_R_OFF + n, 97] = rows[_R_OFF + 16 + n, N_TESAURO_SIDE + 97] = n / NUM_CHECKERS
    rows[_R_RACE + 1, I_RACE] = 1.0
    for k in range(37):
        rows[_R_SHOTS + k, I_SHOTS] = rows[_R_ESCAPES + k, I_ESCAPES] = k / 36.0
        rows[_R_SHOTS + 37 + k, I_SHOTS + 1] = rows[_R_ESCAPES + 37 + k, I_ESCAPES + 1] = k / 36.0
    return rows


SPARSE_ROWS = _sparse_rows()
SPARSE_ROWS.setflags(write=False)
"""``(N_SPARSE_ROWS, N_FEATURES)`` float64: ``encode(x)[i] == SPARSE_ROWS[sparse_encode(x)[i]].sum(axis=0)`` (up to
float32 rounding of the pip inputs)."""


def sparse_encode(
    positions: np.ndarray, masks: tuple[np.ndarray, ...] | None = None, off: np.ndarray | None = None
) -> np.ndarray:
    """The rows of :data:`SPARSE_ROWS` whose sum is each position's input vector: ``(M, 26)`` int8 positions from the
    side on roll -> ``(M, N_SLOTS)`` int32 in 0 .. N_SPARSE_ROWS - 1 (see the comment above :data:`N_SPARSE_ROWS`).
    ``masks``: the positions' point-set masks if already computed (see :func:`_expert_counts`;
    :func:`bgbot.evaluation.features.features_t_and_masks` gives them), else computed here; ``off``: the borne-off
    counts ``(M, 2)`` ints (the side on roll's, the opponent's) if already computed
    (:func:`bgbot.evaluation.features.v2_parts` gives them and the masks), else counted here.

    Raises:
        EncodingError: ``positions`` is not a 2-D integer array with 26 columns.
    """
    x = np.asarray(positions)
    if x.ndim != 2 or x.shape[1] != 26 or not np.issubdtype(x.dtype, np.integer):
        raise EncodingError(f"positions are (M, 26) integer arrays, got shape {x.shape} dtype {x.dtype}")
    out = np.empty((len(x), N_SLOTS), dtype=np.int32)
    if off is None:  # checkers on the board: (|x| + x) / 2 mine, (|x| - x) / 2 theirs (einsum: no per-row loop)
        total = np.einsum("ij->i", x, dtype=np.int32, casting="unsafe")
        spread = np.einsum("ij->i", np.abs(x), dtype=np.int32, casting="unsafe")
        out[:, OFF_SLOT] = NUM_CHECKERS - (spread + total) // 2
        out[:, OFF_SLOT + 1] = NUM_CHECKERS - (spread - total) // 2
    else:
        out[:, OFF_SLOT : OFF_SLOT + 2] = off
    _expert_counts(x, masks, out[:, OFF_SLOT + 2 :])
    out[:, :26] = x
    out += _SLOT_BASE  # every slot's first row, in one pass over the contiguous array
    return out


def dense_inputs(positions: np.ndarray) -> np.ndarray:
    """The inputs of :data:`DENSE_COLUMNS`, ``(M, 26)`` int8 -> ``(M, len(DENSE_COLUMNS))`` float32 (generic: through
    :func:`encode`; an encoding with dense columns computes just those)."""
    return encode(positions)[:, list(DENSE_COLUMNS)]
