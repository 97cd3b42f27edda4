"""Vectorised move generation: every legal play of many positions at once.

Positions use the layout of :mod:`bgbot.rules.board` (``(N, 26)`` int8, side on roll, index 25 = my bar, index 0 = the
opponent's bar). :func:`generate_plays` returns every distinct resulting position (afterstate) of every legal play,
already flipped so that the opponent is on roll, with the row of the position it came from.

How it works (all steps are array operations over the whole batch; there is no Python loop over positions or
checkers, only over the at most four dice of a roll and the rounds of :func:`_expand`):

1. Each position is summarised by 32-bit masks, bit ``p`` for index ``p``: my checkers, my single checkers, the points
   not blocked, the opponent's blots. :func:`_legal` gives the sources one die can move from with a few bit
   operations (the bar first; bearing off only with every checker home, a higher die only from the highest point) and
   :func:`_moves` lists them, one entry per set bit, as move codes ``(source, landing, hit)``. A child's masks follow
   from its parent's without building its board, except for doubles, whose children are built to read how many
   checkers a source kept.
2. Non-doubles expand every single-die move by the other die, high die first and low die first; the low-die-first
   order skips the plays the other order lists (:func:`_plays_non_double`). Doubles play the die up to four times with
   non-increasing sources, which lists each multiset of checker moves once (:func:`_plays_double`). The
   maximum-usage and higher-die rules keep, per position, the candidates of the best rank (both dice > only the higher
   die > only the lower die > none; for doubles, the most dice played).
3. A candidate is a row already built (the position, or a child, flipped) plus one more move, and the mix of its
   position's :func:`position_keys` (a hash, linear in the counts, so kept up to date with one addition per move).
   One value sort of ``parent | mix | index`` orders the plays of each position by mix and brings equal ones together
   (:func:`_unique_plays`); equal neighbours are confirmed on their rows, so the result is exact. Only the surviving
   rows are built: one 26-byte gather and one addition each.

The scalar twin :mod:`bgbot.rules.movegen_scalar` implements the same rules checker by checker and is the reference the
tests compare against, together with GNU Backgammon (``gnubg_nn.moves``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bgbot.rules.board import PositionError
from bgbot.rules.dice import DiceError


@dataclass(frozen=True)
class Plays:
    """The legal plays of a batch of positions.

    Attributes:
        afterstates: ``(M, 26)`` int8, each distinct resulting position once, seen by the opponent (already
            flipped: the opponent is on roll). A position with no legal play has exactly one row, its own flip.
        parent: ``(M,)`` int64, the row of the input position each afterstate came from, ascending.
    """

    afterstates: np.ndarray
    parent: np.ndarray

    def __len__(self) -> int:
        return len(self.parent)

    def counts(self, n_positions: int) -> np.ndarray:
        """Number of distinct plays per input position, ``(n_positions,)`` int64 (at least 1 each)."""
        return np.bincount(self.parent, minlength=n_positions)

    def offsets(self, n_positions: int) -> np.ndarray:
        """Start row of each input position's plays, ``(n_positions + 1,)`` int64 (last entry = ``M``)."""
        out = np.zeros(n_positions + 1, dtype=np.int64)
        np.cumsum(self.counts(n_positions), out=out[1:])
        return out


def check_dice(dice: np.ndarray, n: int) -> np.ndarray:
    """Validate dice for ``n`` positions and return them as ``(n, 2)`` int8.

    Raises:
        DiceError: wrong shape or a value outside 1..6.
    """
    d = np.asarray(dice)
    if d.shape != (n, 2):
        raise DiceError(f"dice must have shape ({n}, 2), got {d.shape}")
    if not np.issubdtype(d.dtype, np.integer) or d.size and (d.min() < 1 or d.max() > 6):
        bad = d[(d < 1) | (d > 6)] if np.issubdtype(d.dtype, np.number) else d
        raise DiceError(f"dice are integers 1..6, got {np.unique(bad).tolist()[:6]}")
    return d.astype(np.int8)


_SHIFT = np.array([0] + [4 + 5 * i for i in range(12)] + [5 * i for i in range(12)] + [60], dtype=np.uint64)
_HALF = np.array([0] * 13 + [1] * 13, dtype=np.intp)  # which of the two key words holds each index


def position_keys(positions: np.ndarray) -> np.ndarray:
    """Pack positions exactly into two integers each: ``(M, 26)`` int8 -> ``(M, 2)`` uint64.

    Points 1..24 take 5 bits each (count + 15, in 0..30), the two bars 4 bits each (0..15): 128 bits in all, so
    equal keys mean equal positions. The packing is linear in the counts, so each word is one product with
    :data:`_KEY_WEIGHTS` plus :data:`_KEY_BASE` (mod 2**64; the fields never overlap, so nothing carries).
    """
    x = np.asarray(positions)
    out = np.empty((len(x), 2), dtype=np.uint64)
    for start in range(0, len(x), _KEY_CHUNK):  # the uint64 copy stays in cache: a whole one is 208 bytes a row
        u = x[start : start + _KEY_CHUNK].astype(np.uint64)  # negative counts wrap mod 2**64, as the weights do
        np.matmul(u[:, 0:13], _KEY_WEIGHTS[0:13], out=out[start : start + _KEY_CHUNK, 0])
        np.matmul(u[:, 13:26], _KEY_WEIGHTS[13:26], out=out[start : start + _KEY_CHUNK, 1])
    out += _KEY_BASE
    return out


_KEY_CHUNK = 4096
"""Rows of :func:`position_keys` packed at a time (a variance-reduced rollout packs millions of afterstates at once;
in chunks of this size it runs 2 to 5 times faster, with the same keys)."""


def _key_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(weights (26,) uint64, base (2,) uint64)`` of :func:`position_keys`: index ``i`` adds ``count << shift``
    (the opponent's bar, stored negative, ``-count << shift``) and each point ``15 << shift`` once."""
    mask = (1 << 64) - 1
    w = [((-1 if i == 0 else 1) << int(s)) & mask for i, s in enumerate(_SHIFT)]
    base = [sum(15 << int(_SHIFT[i]) for i in range(1, 25) if _HALF[i] == h) & mask for h in (0, 1)]
    return np.array(w, dtype=np.uint64), np.array(base, dtype=np.uint64)


_KEY_WEIGHTS, _KEY_BASE = _key_tables()


# --- Checker moves as codes ----------------------------------------------------------------------------------------
# A move of one checker is the code (src * 26 + dest) * 3 + inc: src 1..25 (25 = my bar), dest the landing index
# (0 when borne off) and inc what dest gains (0 borne off, 1, 2 when hitting a blot, whose checker goes to index 0).
# _NULL is "no move": every table indexed by code holds zeros there.

_NULL = 26 * 26 * 3


def _code_table() -> np.ndarray:
    """``(_NULL + 1, 26)`` int8: what each move adds to a position seen by the opponent (:func:`flip`'s layout:
    column ``25 - i`` holds minus index ``i``)."""
    out = np.zeros((_NULL + 1, 26), dtype=np.int8)
    src, rest = np.divmod(np.arange(_NULL), 78)
    dest, inc = np.divmod(rest, 3)
    rows = np.arange(_NULL)
    np.add.at(out, (rows, 25 - src), 1)
    np.add.at(out, (rows, 25 - dest), -inc)
    np.add.at(out, (rows, np.full(_NULL, 25)), (inc == 2).astype(np.int8))
    return out


_MOVE_ITEMS = _code_table().view("V26").reshape(-1)  # the rows as 26-byte items, for np.take

# Source-and-die tables, index s * 8 + d (s the source 0..25, d the die 1..6): the landing index, the code of the move
# when it hits nothing (a hit is that code + 1) and the landing index as a bit (0 when borne off).
_SD = np.arange(26 * 8)
_SD_DEST = np.maximum((_SD >> 3) - (_SD & 7), 0)
_SD_CODE = (((_SD >> 3) * 26 + _SD_DEST) * 3 + (_SD_DEST > 0)).astype(np.int64)
_SD_LAND = np.where(_SD_DEST > 0, np.int64(1) << _SD_DEST, 0).astype(np.int32)

# --- Hashing -------------------------------------------------------------------------------------------------------
# Plays are ordered and de-duplicated by ``mix = key0 * _MIX[0] + key1 * _MIX[1] (mod 2**64)`` of their
# :func:`position_keys`. The packing is linear in the counts, so ``mix`` is too: it is ``position . weights + base``
# and a move adds a constant per code. Each candidate's mix is kept up to date with one addition per move (numpy's
# integer arrays wrap around silently, which is the arithmetic mod 2**64 wanted here).

_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F], dtype=np.uint64)


def _hash_tables(mix: np.ndarray) -> tuple[np.ndarray, np.uint64, np.ndarray]:
    """``(weights (26,) uint64, base, delta (_NULL + 1,) uint64)`` for the mixing constants ``mix`` ``(2,)``:
    the mix of a position is ``sum(position * weights) + base`` and a move adds ``delta[code]`` (mod 2**64)."""
    mask = (1 << 64) - 1
    unit = [(1 << int(s)) * int(mix[h]) for s, h in zip(_SHIFT, _HALF)]
    w = [(-u if i == 0 else u) & mask for i, u in enumerate(unit)]  # the opponent's bar is packed negated
    base = sum(15 * unit[i] for i in range(1, 25)) & mask
    delta = []
    for code in range(_NULL):
        s, t, c = code // 78, code // 3 % 26, code % 3
        delta.append((-w[s] + c * w[t] - (c == 2) * w[0]) & mask)
    return np.array(w, dtype=np.uint64), np.uint64(base), np.array(delta + [0], dtype=np.uint64)


_HASH = _hash_tables(_MIX)


# --- Bit masks -----------------------------------------------------------------------------------------------------
# Bit p of an int32 mask stands for index p of a position (1..24 my points, 25 my bar).


def _where(mask: np.ndarray) -> np.ndarray:
    """Indices of the nonzero entries of a 1-D array, ``(K,)`` int64 (``np.flatnonzero`` without its wrappers: this
    module calls it a hundred times per batch)."""
    return mask.nonzero()[0]


_BAR_BIT = 1 << 25
_POINT_BITS = (1 << 25) - 2  # points 1..24
_SOURCE_BITS = (1 << 26) - 2  # points 1..24 and the bar
_OUTSIDE_BITS = (1 << 26) - (1 << 7)  # points 7..24 and the bar: a checker there is not home
_HIGHEST = np.array([0] + [1 << (i.bit_length() - 1) for i in range(1, 128)], dtype=np.int32)  # highest bit of 0..127


def _bitmask(cells: np.ndarray) -> np.ndarray:
    """``(K, 32)`` bool -> ``(K,)`` int32 masks with bit ``p`` set where ``cells[:, p]`` (mask the top bits off
    where ``cells`` is true on columns 26..31)."""
    return np.packbits(cells.reshape(-1), bitorder="little").view("<i4")


def _legal(mine: np.ndarray, open_from: np.ndarray, die_bit: np.ndarray) -> np.ndarray:
    """The sources from which one checker can move by one die, as masks ``(K,)`` int32.

    Args:
        mine: ``(K,)`` int32, bit p set where I have a checker on index p (25 = bar).
        open_from: ``(K,)`` int32, the points not blocked (at most one of the opponent's checkers) shifted up by the
            die: bit s set where source s lands on an open point.
        die_bit: ``(K,)`` int32, ``1 << die``.

    A checker on the bar must enter first; bearing off needs every checker home, and a die higher than the highest
    occupied point bears off from that point only.
    """
    src = np.where(mine >= _BAR_BIT, _BAR_BIT, mine)  # bit 25 is the highest: on the bar only the bar may move
    legal = src & open_from
    home = _where((mine & _OUTSIDE_BITS) == 0)
    if len(home):
        m, db = mine[home], die_bit[home]
        legal[home] |= (m & db) | np.where(m < db, _HIGHEST[m & 127], 0)
    return legal


_DENSE = 4096  # masks left at which _expand lists the remaining bits in one dense pass instead of more rounds


def _expand(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One entry per set bit: ``(K,)`` int32 masks -> ``(node (P,) int64, bit (P,) int32)``, ``bit`` a power of two.

    Peels the lowest set bit off every mask at once, round after round; once at most :data:`_DENSE` masks still have
    bits, their bits are unpacked and listed in one go (fewer numpy calls for small batches)."""
    node = _where(masks)
    b = masks[node]
    nodes, bits = [], []
    while len(node) > _DENSE:
        low = b & -b
        nodes.append(node)
        bits.append(low)
        b ^= low
        keep = _where(b)
        if len(keep) < len(node):
            node, b = node[keep], b[keep]
    if len(node):
        at = np.unpackbits(b.astype("<i4", copy=False).view(np.uint8), bitorder="little").view(bool).nonzero()[0]
        nodes.append(node[at >> 5])
        bits.append(np.left_shift(1, at & 31, dtype=np.int32))
    if not nodes:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    return np.concatenate(nodes), np.concatenate(bits)


def _moves(masks: np.ndarray, hit_from: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every move of the sources in ``masks`` ``(K,)`` int32; ``hit_from`` ``(K,)`` int32 (:func:`_hit_from`) holds
    the die in bits 27..29 and masks the sources whose landing point holds a blot of the opponent's.

    Returns ``(node, source bit, sd, code)``, each ``(P,)``: the node each move starts from (int64), its source as a
    bit (int32), its source-and-die index ``s * 8 + d`` (int64, for the ``_SD_*`` tables) and its code (int64).
    """
    node, src_bit = _expand(masks)
    hits = hit_from[node]
    # s * 8 + d, s the bit count below the source bit (s <= 25: s * 8 fits the uint8 count)
    sd = np.add(np.bitwise_count(src_bit - 1) << 3, hits >> 27, dtype=np.int64)
    code = _SD_CODE[sd] + ((hits & src_bit) != 0)  # a hit is the next code
    return node, src_bit, sd, code


def _hit_from(blot: np.ndarray, die: np.ndarray) -> np.ndarray:
    """The blots ``(K,)`` int32 shifted up by the die ``(K,)`` int32 (bit s: source s lands on a blot), with the die
    itself in bits 27..29, for :func:`_moves`."""
    return ((blot << die) & _SOURCE_BITS) | (die << 27)


class _Rows:
    """Flipped rows ``(K, 26)`` int8 built along the way, addressed by one running index: the parents first, then
    every block of children; :meth:`stack` concatenates them."""

    def __init__(self, first: np.ndarray) -> None:
        self.blocks = [first]
        self.size = len(first)

    def add(self, block: np.ndarray) -> np.ndarray:
        """Append ``block`` ``(K, 26)`` int8; returns its running indices ``(K,)`` int64."""
        start = self.size
        self.blocks.append(block)
        self.size += len(block)
        return np.arange(start, self.size, dtype=np.int64)

    def stack(self) -> np.ndarray:
        """All rows so far, ``(R, 26)`` int8, in running-index order."""
        return self.blocks[0] if len(self.blocks) == 1 else np.concatenate(self.blocks)


def _child_rows(base: np.ndarray, rows: np.ndarray, code: np.ndarray) -> np.ndarray:
    """``base[rows]`` ``(R, 26)`` int8 with the moves ``code`` ``(K,)`` applied: ``(K, 26)`` int8 flipped rows.

    The rows are gathered as 26-byte items (``np.take`` of a void view copies each row in one go)."""
    out = np.take(base.view("V26").reshape(-1), rows).view(np.int8).reshape(len(rows), 26)
    out += np.take(_MOVE_ITEMS, code).view(np.int8).reshape(len(rows), 26)
    return out


# A candidate play is (parent row, row of `_Rows` it starts from, one more move code, mix of the result), each (K,).
_Part = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
# The masks of the input positions, (N,) int32 each: mine, open points, the opponent's blots, my single checkers.
_Masks = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _plays_non_double(
    flipped: np.ndarray, mix: np.ndarray, rows: np.ndarray, masks: _Masks, dice: np.ndarray, store: _Rows
) -> list[_Part]:
    """Candidates of the rows ``rows`` ``(n,)`` whose dice ``(n, 2)`` differ, after the maximum-usage rules.

    Each single-die move is expanded by the other die, high die first, then low die first (both orders in one set of
    arrays: entry ``i < n`` is row ``i`` high die first, entry ``n + i`` low die first). The low-die-first order
    skips plays that the high-die-first order also lists: a second move from a source that was already legal for the
    high die in the position itself (the two moves then commute), and the moved checker going on when the same checker
    could go the other way round with the same hits (neither intermediate point holds a blot and the final one is on
    the board). The child's masks follow from the parent's, with no board built: the source empties if it held one
    checker, the landing point becomes mine, a blot hit there is gone.

    ``flipped`` ``(N, 26)`` int8 and ``mix`` ``(N,)`` uint64 are the whole batch's positions (flipped) and their mixes,
    ``masks`` its :data:`_Masks`; ``rows`` index the batch; the children built go to ``store``.
    """
    n = len(rows)
    mine, open_, blot, single = (np.tile(m[rows], 2) for m in masks)
    hi = np.maximum(dice[:, 0], dice[:, 1]).astype(np.int32)
    lo = np.minimum(dice[:, 0], dice[:, 1]).astype(np.int32)
    die, other = np.concatenate([hi, lo]), np.concatenate([lo, hi])
    legal = _legal(mine, open_ << die, np.int32(1) << die)
    legal_hi = np.tile(legal[:n], 2)  # the high die's sources in the position itself
    node, src, sd, code = _moves(legal, _hit_from(blot, die))
    land = _SD_LAND[sd]
    first_mix = np.tile(mix[rows], 2)[node] + _HASH[2][code]
    other_node, blot_node, hi_node = other[node], blot[node], legal_hi[node]
    child_mine = (mine[node] & ~(single[node] & src)) | land
    second = _legal(child_mine, open_[node] << other_node, np.int32(1) << other_node)
    # Low die first: drop what high die first lists. The same checker high die first: legal, no blot either way,
    # lands on the board (not borne off).
    low_first = node >= n
    same = (hi_node & src) != 0
    same &= (blot_node & ((src >> other_node) | land)) == 0
    same &= (src >> (other_node + die[node])) > 1
    second &= ~np.where(low_first, hi_node | np.where(same, land, 0), 0)
    child_blot = blot_node & ~land
    two, _, _, two_code = _moves(second, _hit_from(child_blot, other_node))
    row = node % n  # (P,) the row among `rows` of each single move
    has_two = np.zeros(n, dtype=bool)
    has_two[row[two]] = True
    parts = []
    if len(two):
        kids = store.add(_child_rows(flipped, rows[row], code))
        parts.append((rows[row[two]], kids[0] + two, two_code, first_mix[two] + _HASH[2][two_code]))
    # one die only: the high die if it can be played, else the low die
    sel = _where(~has_two[row] & (~low_first | (hi_node == 0)))
    parts.append((rows[row[sel]], rows[row[sel]], code[sel], first_mix[sel]))
    none = _where(~has_two & (legal[:n] == 0) & (legal[n:] == 0))
    parts.append((rows[none], rows[none], np.full(len(none), _NULL, np.int64), mix[rows[none]]))
    return parts


def _plays_double(
    flipped: np.ndarray, mix: np.ndarray, rows: np.ndarray, masks: _Masks, dice: np.ndarray, store: _Rows
) -> list[_Part]:
    """Candidates of the rows ``rows`` ``(n,)`` rolling a double, after the maximum-usage rule.

    The die is played up to four times with non-increasing sources, which lists each multiset of checker moves once.
    After each move but the fourth, the children are built (flipped rows) to read how many checkers the source kept.
    Arguments as :func:`_plays_non_double`'s.
    """
    n = len(rows)
    mine, open_, blot = (m[rows] for m in masks[:3])
    die = dice[:, 0].astype(np.int32)
    die_bit = np.int32(1) << die
    open_from = open_ << die
    node_row = np.arange(n)  # row among `rows` of each node
    node_at = rows  # the node's row in `store`
    node_mix, node_mine = mix[rows], mine
    node_hit = _hit_from(blot, die)  # sources whose landing point holds a blot
    allowed = np.full(n, (1 << 26) - 1, dtype=np.int32)  # sources not above the previous one
    base = flipped
    best = np.zeros(n, dtype=np.int8)
    levels = []
    for used in range(1, 5):
        legal = _legal(node_mine, open_from[node_row], die_bit[node_row]) & allowed
        j, src, sd, code = _moves(legal, node_hit)
        if not len(j):
            break
        row = node_row[j]
        best[row] = used
        child_mix = node_mix[j] + _HASH[2][code]
        levels.append((row, node_at[j], code, child_mix))
        if used < 4:
            base = _child_rows(base, node_at[j] if used == 1 else j, code)
            node_at = store.add(base)
            # the source keeps its bit while a checker is left there (column 25 - s holds minus its count)
            left = base.reshape(-1)[np.arange(25, 26 * len(j), 26) - (sd >> 3)]
            node_mine = (node_mine[j] & ~np.where(left == 0, src, 0)) | _SD_LAND[sd]
            node_hit = node_hit[j] & ~src  # a blot hit is gone
            node_row, node_mix, allowed = row, child_mix, (src << 1) - 1
    parts = []
    for used, (row, at, code, child_mix) in enumerate(levels, start=1):
        if used == len(levels):  # the most dice any row could play: every candidate is one
            parts.append((rows[row], at, code, child_mix))
            continue
        sel = _where(best[row] == used)
        parts.append((rows[row[sel]], at[sel], code[sel], child_mix[sel]))
    none = _where(best == 0)
    parts.append((rows[none], rows[none], np.full(len(none), _NULL, np.int64), mix[rows[none]]))
    return parts


_MIN_HASH_BITS = 8  # fewer bits of hash left beside the parent and the index: de-duplicate exactly instead


def _unique_plays(
    mix: np.ndarray, parent: np.ndarray, n: int, rows_of: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Indices of the first occurrence of each distinct ``(parent, position)``, ordered by parent, then by mix.

    Args:
        mix: ``(M,)`` uint64 mix of each candidate's position; ``parent`` ``(M,)`` int64 in ``0..n-1``.
        rows_of: function of candidate indices ``(K,)`` -> their positions ``(K, 26)`` int8, to confirm equality.

    One plain ``np.sort`` of 64-bit words ``parent | top bits of mix | candidate index`` (a value sort is several
    times faster than an argsort). Equal words but for the index are confirmed against the positions; the few
    candidates whose truncated mix collides with a different position's are de-duplicated exactly with a lexsort.
    """
    m = len(parent)
    idx_bits = max(int(m - 1).bit_length(), 1)
    par_bits = max(int(n - 1).bit_length(), 1)
    hash_bits = 64 - idx_bits - par_bits
    if hash_bits < _MIN_HASH_BITS:  # enormous batch: exact lexsort
        return _unique_exact(position_keys(rows_of(np.arange(m))), parent)
    word = parent.astype(np.uint64)
    word <<= np.uint64(64 - par_bits)
    word |= (mix >> np.uint64(64 - hash_bits)) << np.uint64(idx_bits)
    word |= np.arange(m, dtype=np.uint64)
    word.sort()
    order = (word & np.uint64((1 << idx_bits) - 1)).astype(np.int64)
    group = word >> np.uint64(idx_bits)  # parent and hash
    pair = _where(group[1:] == group[:-1])  # neighbours with equal (parent, hash): compare their positions
    first = np.ones(m, dtype=bool)
    if not len(pair):
        return order
    same = (rows_of(order[pair + 1]) == rows_of(order[pair])).all(axis=1)
    first[pair[same] + 1] = False
    if same.all():
        return order[first]
    collide = np.zeros(m - 1, dtype=bool)
    collide[pair[~same]] = True
    # A hash collision inside a parent: redo the groups concerned exactly.
    keep = np.zeros(m, dtype=bool)
    keep[order[first]] = True
    sub = order[np.isin(group, group[1:][collide])]
    keep[sub] = False
    keep[sub[_unique_exact(position_keys(rows_of(sub)), parent[sub])]] = True
    return order[keep[order]]


def _unique_exact(keys: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Like :func:`_unique_plays`, exactly, for :func:`position_keys` ``(K, 2)`` uint64 (the slow path for rare
    cases: a three-key lexsort)."""
    order = np.lexsort((keys[:, 1], keys[:, 0], parent))
    k0, k1, par = keys[order, 0], keys[order, 1], parent[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (k0[1:] != k0[:-1]) | (k1[1:] != k1[:-1]) | (par[1:] != par[:-1])
    return order[first]


def generate_plays(positions: np.ndarray, dice: np.ndarray) -> Plays:
    """Every legal play of every position, each distinct resulting position once.

    Args:
        positions: ``(N, 26)`` int8 positions, side on roll (layout in :mod:`bgbot.rules.board`). Positions are trusted
            to be valid (see :func:`bgbot.rules.board.validate` for user input).
        dice: ``(N, 2)`` integers in 1..6, the roll of each position (order does not matter).

    Returns:
        :class:`Plays`: afterstates ``(M, 26)`` int8 flipped to the opponent's view, parent ``(M,)`` int64
        ascending; the plays of one position are in a fixed order (by a hash of the afterstate). Each position has at
        least one row; with no legal play the row is the position itself, flipped.

    Raises:
        DiceError: dice of the wrong shape or outside 1..6.
        bgbot.rules.board.PositionError: positions not of shape ``(N, 26)``.
    """
    positions = np.asarray(positions)
    if positions.ndim != 2 or positions.shape[1] != 26:
        raise PositionError(f"positions must have shape (N, 26), got {positions.shape}")
    positions = np.asarray(positions, dtype=np.int8)
    n = len(positions)
    dice = check_dice(dice, n)
    if n == 0:
        return Plays(afterstates=np.zeros((0, 26), dtype=np.int8), parent=np.zeros(0, dtype=np.int64))
    weights, base, _ = _HASH
    mix = positions.astype(np.uint64) @ weights + base  # (N,) uint64, mod 2**64
    padded = np.zeros((n, 32), dtype=np.int8)  # 32 columns: one row packs into one 32-bit mask
    padded[:, :26] = positions
    masks = (
        _bitmask(padded > 0),  # mine: bit p where I have a checker on index p
        _bitmask(padded >= -1) & _POINT_BITS,  # open: at most one of the opponent's checkers
        _bitmask(padded == -1) & _POINT_BITS,  # blot: exactly one of the opponent's checkers
        _bitmask(padded == 1),  # single: exactly one of mine
    )
    flipped = np.negative(positions[:, ::-1], order="C")
    store = _Rows(flipped)
    is_double = dice[:, 0] == dice[:, 1]
    parts: list[_Part] = []
    for mask, expand in ((~is_double, _plays_non_double), (is_double, _plays_double)):
        rows = _where(mask)
        if len(rows):
            parts += expand(flipped, mix, rows, masks, dice[rows], store)
    parent = np.concatenate([p[0] for p in parts])
    at = np.concatenate([p[1] for p in parts])
    code = np.concatenate([p[2] for p in parts])
    cand_mix = np.concatenate([p[3] for p in parts])
    table = store.stack()

    def rows_of(i: np.ndarray) -> np.ndarray:
        return _child_rows(table, at[i], code[i])

    first = _unique_plays(cand_mix, parent, n, rows_of)
    return Plays(afterstates=rows_of(first), parent=parent[first])


def generate_all_rolls(positions: np.ndarray) -> tuple[Plays, np.ndarray]:
    """Plays of every position for each of the 21 distinct rolls.

    Args:
        positions: ``(N, 26)`` int8.

    Returns:
        ``(plays, dice)``: plays of the ``(N * 21)`` position×roll pairs, row ``i * 21 + j`` being position ``i``
        with roll ``ROLLS[j]``; ``dice`` ``(N * 21, 2)`` int8.
    """
    positions = np.asarray(positions, dtype=np.int8)
    n = len(positions)
    rep = np.repeat(positions, len(ROLLS), axis=0)
    dice = np.tile(ROLLS, (n, 1))
    return generate_plays(rep, dice), dice


ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int8)
"""``(21, 2)`` int8: the 21 distinct rolls, ``(a, b)`` with ``a <= b``."""
ROLL_WEIGHTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 1.0, 2.0) / 36.0
"""``(21,)`` float64: probability of each roll in :data:`ROLLS` (1/36 for doubles, 2/36 otherwise)."""
