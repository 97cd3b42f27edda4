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
_A, _B = (np.array(v, dtype=np.int64) for v in zip(*_NON_DOUBLES))  # (15,) the dice of the 15 non-doubles
_D = np.arange(1, 7, dtype=np.int64)  # (6,) doubles
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


_I32_A, _I32_B, _I32_D = _A[:, None].astype(np.int32), _B[:, None].astype(np.int32), _D[:, None].astype(np.int32)


def _shot_counts(k: np.ndarray, mine: np.ndarray, theirs: np.ndarray, theirs2: np.ndarray) -> np.ndarray:
    """Rolls out of 36 with which the side on roll hits an opponent blot -> ``(M,)`` int32 in 0..36: the
    positions without a checker of the side on the bar by :func:`_shot_counts_free` (most of them), the others by
    :func:`_shot_counts_general`. Arguments as :func:`_shot_counts_general`'s."""
    k = np.asarray(k)
    i32 = np.int32  # every mask fits in 26 bits
    theirs2 = theirs2.astype(i32)
    others = mine.astype(i32) & _PTS
    blots, opened = theirs.astype(i32) & ~theirs2 & _PTS, ~theirs2 & _PTS
    on_bar = np.flatnonzero(k)
    if len(on_bar) == 0:
        return _shot_counts_free(others, blots, opened)
    out = _shot_counts_free(others, blots, opened, k == 0)
    out[on_bar] = _shot_counts_general(k[on_bar], mine[on_bar], theirs[on_bar], theirs2[on_bar])
    return out


_FREE_DISTANCES = sorted({a + b for a, b in _NON_DOUBLES} | {k * d for d in range(1, 7) for k in range(1, 5)})
"""Distances a roll hits at with no checker on the bar: the dice, their sums, a double's 2, 3 and 4 steps."""
_FREE_PATHS = sorted(set(range(1, 7)) | {k * d for d in range(1, 7) for k in (2, 3)})
"""Distances of the landing points a combination passes: a die, a double's 2 and 3 steps."""


def _shot_counts_free(
    others: np.ndarray, blots: np.ndarray, opened: np.ndarray, free: np.ndarray | None = None
) -> np.ndarray:
    """:func:`_shot_counts_general` for positions with no checker of the side on roll on the bar, from int32 bitmasks
    of its checkers on points, the opponent's blots and the points open to it: a blot at t is hit by a roll (a, b) from
    t + a, t + b, or t + a + b through an open t + a or t + b; by a double d from t + i*d (i <= 4) with t + d ..
    t + (i-1)*d open.

    ``free``, if given, ``(M,)`` bool: only those positions are counted (the others get 0). Only the positions with a
    checker above the lowest blot can hit; for those, one pass per roll over ``(R,)`` vectors: ``hit[s]``, the blots
    with a checker ``s`` pips behind, for each distance ``s`` a roll hits at."""
    out = np.zeros(len(others), dtype=np.int32)
    lowest = blots & -blots
    can = (blots != 0) & (others > lowest)  # no point holds both sides' checkers
    rows = np.flatnonzero(can if free is None else can & free)
    if len(rows) == 0:
        return out
    others, blots, opened = others[rows], blots[rows], opened[rows]
    hit = {s: (others >> s) & blots for s in _FREE_DISTANCES}
    path = {s: opened >> s for s in _FREE_PATHS}
    direct = {d: hit[d] != 0 for d in range(1, 7)}
    plain = np.zeros(len(rows), dtype=np.int8)  # non-doubles that hit
    for a, b in _NON_DOUBLES:
        combo = path[a] | path[b]
        combo &= hit[a + b]
        any_hit = combo != 0
        any_hit |= direct[a]
        any_hit |= direct[b]
        plain += any_hit
    doubles = np.zeros(len(rows), dtype=np.int8)
    for d in range(1, 7):
        on_path = path[d]
        reach = hit[2 * d] & on_path
        for i in (3, 4):
            on_path = on_path & path[(i - 1) * d]
            reach |= hit[i * d] & on_path
        any_hit = reach != 0
        any_hit |= direct[d]
        doubles += any_hit
    out[rows] = 2 * plain.astype(np.int32) + doubles
    return out


def _shot_counts_general(k: np.ndarray, mine: np.ndarray, theirs: np.ndarray, theirs2: np.ndarray) -> np.ndarray:
    """Rolls out of 36 with which the side on roll hits an opponent blot -> ``(M,)`` int32 in 0..36.

    Args: ``k`` ``(M,)`` the side's checkers on its bar; bitmasks ``(M,)`` int64 of the indices where the side has
    checkers (bar included), where the opponent has checkers, and where it has two or more (:func:`_masks`).

    Bitmasks over the indices (bit t = index t), shifted by each die distance d: bit t of ``mask >> d`` is index
    ``t + d``, d pips behind t. With ``k`` checkers on the bar: a roll whose entry point is blocked does nothing; after
    entering, a non-double's other die moves any checker only when ``k == 1``; a double has ``4 - k`` moves left.
    """
    i32 = np.int32  # every mask fits in 26 bits: int32 halves the memory traffic of int64
    k = k.astype(i32)
    others = (mine & _PTS).astype(i32)  # (M,) my checkers on points 1..24
    bar = (mine & (1 << BAR)).astype(i32)  # (M,) bit 25 when I have a checker on the bar
    blots = (theirs & ~theirs2 & _PTS).astype(i32)  # (M,) opponent blots on points 1..24
    opened = (~theirs2 & _PTS).astype(i32)  # (M,) points I may land on
    free, one = -(k == 0).astype(i32), -(k == 1).astype(i32)  # (M,) all bits set where true

    def enter(d):  # all bits where my entry point 25 - d is open
        return -((opened >> (BAR - d)) & 1)

    a, b = _A[:, None].astype(i32), _B[:, None].astype(i32)  # (15, 1) the dice of the non-doubles
    direct = (bar >> a) | (bar >> b)  # (15, M) entering with either die
    direct = direct | ((others >> a) & (free | one & enter(b))) | ((others >> b) & (free | one & enter(a)))
    combo = (((others & free) | (bar & one)) >> (a + b)) & ((opened >> a) | (opened >> b))
    plain = blots & (direct | combo)  # (15, M)
    d = _D[:, None].astype(i32)  # (6, 1)
    j_bar = np.minimum(5 - np.minimum(k, 4), 4) * (k > 0)  # (M,) moves of a double the entering checker can make
    j_other = 4 - np.minimum(k, 4)  # (M,) moves of a double left for the checkers already in play
    reach = np.zeros((6, len(k)), dtype=i32)  # (6, M) targets reached with a double
    path_open = np.full((6, len(k)), -1, dtype=i32)  # all landing points before the i-th move are open
    for i in range(1, 5):
        movers = (bar & -(j_bar >= i).astype(i32)) | (others & -(j_other >= i).astype(i32))
        reach |= (movers >> (i * d)) & path_open
        path_open &= opened >> (i * d)
    doubles = blots & reach & (free | enter(d))  # (6, M)
    return (plain != 0).sum(axis=0, dtype=i32) * 2 + (doubles != 0).sum(axis=0, dtype=i32)


def _escape_counts(mine: np.ndarray, theirs2: np.ndarray) -> np.ndarray:
    """gnubg escapes (rolls out of 36) of the rearmost checker of the side on roll, ``(M,)`` int32, from the bitmasks
    of its checkers and of the opponent's points held (:func:`_masks`)."""
    rear = np.maximum(_highest_bit(mine), 1)  # (M,) index 1..25 (1 when all are off)
    blocked = (theirs2 & _PTS) << 12  # (M,) bit k+12: the opponent holds point k
    return _ESCAPE_COUNTS_BY_WINDOW[(blocked >> rear) & 0xFFF]  # bit j: point rear - 12 + j held, distance 12 - j


def _highest_bit(bits: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of each ``(M,)`` int64 (< 2**26), -1 for 0."""
    return np.frexp(bits.astype(np.float64))[1] - 1


def _expert_counts(x: np.ndarray, masks: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    """The race flag and the shot and escape counts as integers, ``(M, 26)`` int positions -> ``(M, 5)`` int32:
    race (0/1), my shots, the opponent's shots, my escapes, the opponent's escapes (rolls out of 36, each side from
    its own numbering). The opponent's masks are mine bit-reversed: no flipped copy of the board.

    ``masks``, if given, are the positions' ``(mine, theirs, mine2, theirs2)`` of :func:`_masks` followed by the first
    three bit-reversed (:func:`_reverse`), each ``(M,)`` int64, computed elsewhere (encoding v2's features have them)."""
    if masks is None:
        mine, theirs, mine2, theirs2 = _masks(x)
        r_mine, r_theirs, r_mine2 = _reverse(mine), _reverse(theirs), _reverse(mine2)
    else:
        mine, theirs, mine2, theirs2, r_mine, r_theirs, r_mine2 = masks
    out = np.empty((len(x), 5), dtype=np.int32)
    out[:, 0] = _is_race(mine, theirs)
    out[:, 1] = _shot_counts(x[:, BAR], mine, theirs, theirs2)
    out[:, 2] = _shot_counts(-x[:, 0], r_theirs, r_mine, r_mine2)  # the opponent's view: its checkers are "mine"
    out[:, 3] = _escape_counts(mine, theirs2)
    out[:, 4] = _escape_counts(r_theirs, r_mine2)
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
    np.add(x, _BOARD_BASE, out=out[:, :26])
    tail = out[:, 26:]
    if off is None:
        total, spread = x.sum(axis=1, dtype=np.int32), np.abs(x).sum(axis=1, dtype=np.int32)
        tail[:, 0] = NUM_CHECKERS - (spread + total) // 2  # on the board: (|x| + x) / 2 mine, (|x| - x) / 2 theirs
        tail[:, 1] = NUM_CHECKERS - (spread - total) // 2
    else:
        tail[:, :2] = off
    tail[:, 2:] = _expert_counts(x, masks)
    tail += _DENSE_TAIL
    return out


def dense_inputs(positions: np.ndarray) -> np.ndarray:
    """The inputs of :data:`DENSE_COLUMNS`, ``(M, 26)`` int8 -> ``(M, len(DENSE_COLUMNS))`` float32 (generic: through
    :func:`encode`; an encoding with dense columns computes just those)."""
    return encode(positions)[:, list(DENSE_COLUMNS)]
