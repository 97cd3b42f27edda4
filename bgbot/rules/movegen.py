"""Vectorised move generation: every legal play of many positions at once.

Positions use the layout of :mod:`bgbot.rules.board` (``(N, 26)`` int8, side on roll, index 25 = my bar, index 0 = the
opponent's bar). :func:`generate_plays` returns every distinct resulting position (afterstate) of every legal play,
already flipped so that the opponent is on roll, with the row of the position it came from.

How it works (all steps are array operations over the whole batch; there is no Python loop over positions or
checkers, only over the at most four dice of a roll):

1. :func:`_sources` lists the checkers that may move (bar first) and :func:`_apply_die` moves each by one die: landing
   not blocked, bear-off only with every checker home, a higher die bearing off only from the highest point. Children
   are built lazily (:class:`_Step`): a row of the parent plus the moves, with their keys updated incrementally.
2. Non-doubles: in positions with no checker on the bar and two or more outside the home board, every play is a pair
   of one high-die and one low-die move of the position itself, or one checker going on
   (:func:`_plays_two_checkers_apart`); other positions expand both orders. Doubles expand the same die four times
   with non-increasing sources, which lists each multiset of checker moves once.
3. Maximum-usage and higher-die rules are a filter on the expanded candidates: per parent, keep the candidates of
   the best rank (both dice > only the higher die > only the lower die > none; for doubles, the most dice used).
4. Equal resulting positions of the same parent are merged: each row is packed exactly into two ``uint64`` keys
   (:func:`position_keys`) and ``(parent, key)`` are de-duplicated with one value sort (:func:`_unique_rows`); only
   the surviving rows are materialised, already flipped.

The scalar twin :mod:`bgbot.rules.movegen_scalar` implements the same rules checker by checker and is the reference the
tests compare against, together with GNU Backgammon (``gnubg_nn.moves``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgbot.rules.board import PositionError, flip
from bgbot.rules.dice import DiceError

_SOURCES = np.arange(1, 26, dtype=np.int8)  # (25,) source indices: points 1..24 and the bar (25)


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
_UNIT = np.uint64(1) << _SHIFT  # (26,) uint64: key increment for one more checker on each index
_UNIT0 = np.where(_HALF == 0, _UNIT, np.uint64(0))  # (26,) key increments falling in word 0
_UNIT1 = np.where(_HALF == 1, _UNIT, np.uint64(0))  # (26,) and in word 1


def _key_delta_table() -> np.ndarray:
    """``(2, 26 * 26 * 3)`` uint64: the change of each key word when a checker of mine leaves index ``src`` and index
    ``dest`` gains ``inc`` (0 off, 1, or 2 when it hits a blot, which adds one to the opponent's bar, index 0)."""
    grid = np.meshgrid(np.arange(26), np.arange(26), np.arange(3), indexing="ij")
    src, dest, inc = grid[0].ravel(), grid[1].ravel(), grid[2].ravel().astype(np.uint64)
    hit = (inc == 2).astype(np.uint64)
    with np.errstate(over="ignore"):
        word0 = _UNIT0[dest] * inc - _UNIT0[src] + hit
        word1 = _UNIT1[dest] * inc - _UNIT1[src]
    return np.stack([word0, word1])


_KEY_DELTA = _key_delta_table()
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def position_keys(positions: np.ndarray) -> np.ndarray:
    """Pack positions exactly into two integers each: ``(M, 26)`` int8 -> ``(M, 2)`` uint64.

    Points 1..24 take 5 bits each (count + 15, in 0..30), the two bars 4 bits each (0..15): 128 bits in all, so
    equal keys mean equal positions. The packing is linear in the counts, so moving a checker changes the key by
    adding and subtracting :data:`_UNIT` entries, which is how :func:`_apply_die` keeps keys up to date.
    """
    counts = positions.astype(np.int64)
    counts[:, 1:25] += 15  # points: count + 15 in 0..30
    counts[:, 0] *= -1  # the opponent's bar is stored negative
    v = counts.astype(np.uint64) << _SHIFT
    return np.stack([v[:, 0:13].sum(axis=1), v[:, 13:26].sum(axis=1)], axis=1)


def _unique_rows(keys: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct ``(parent, position)``, ordered by parent.

    ``keys`` ``(M, 2)`` uint64 from :func:`position_keys`, ``parent`` ``(M,)`` int64 -> ``(K,)`` int64 indices.

    One plain ``np.sort`` of 64-bit words ``parent | hash of the key | candidate index`` (a value sort is several
    times faster than an argsort). Equal hashes within a parent are confirmed against the exact keys; the few
    candidates whose hash collides with a different position are de-duplicated exactly with a lexsort.
    """
    m = len(parent)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    idx_bits = max(int(m - 1).bit_length(), 1)
    par_bits = max(int(parent.max()).bit_length(), 1)
    hash_bits = 64 - idx_bits - par_bits
    if hash_bits < 8:  # enormous batch: exact lexsort
        return _unique_exact(keys, parent)
    with np.errstate(over="ignore"):
        mix = keys[:, 0] * _MIX[0] + keys[:, 1] * _MIX[1]
    word = (
        (parent.astype(np.uint64) << np.uint64(64 - par_bits))
        | ((mix >> np.uint64(64 - hash_bits)) << np.uint64(idx_bits))
        | np.arange(m, dtype=np.uint64)
    )
    word.sort()
    order = (word & np.uint64((1 << idx_bits) - 1)).astype(np.int64)
    group = word >> np.uint64(idx_bits)  # parent and hash
    same_group = group[1:] == group[:-1]
    pair = np.flatnonzero(same_group)  # neighbours with equal (parent, hash): compare their exact keys
    a, b = keys[order[pair + 1]], keys[order[pair]]
    same_key = (a[:, 0] == b[:, 0]) & (a[:, 1] == b[:, 1])
    first = np.ones(m, dtype=bool)
    first[pair[same_key] + 1] = False
    collide = np.zeros(m - 1, dtype=bool)
    collide[pair[~same_key]] = True
    if not collide.any():
        return order[first]
    # A hash collision inside a parent: redo the groups concerned exactly.
    keep = np.zeros(m, dtype=bool)
    keep[order[first]] = True
    sub = order[np.isin(group, group[1:][collide])]
    keep[sub] = False
    keep[sub[_unique_exact(keys[sub], parent[sub])]] = True
    return order[keep[order]]


def _unique_exact(keys: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Like :func:`_unique_rows`, exactly, with a three-key lexsort (the slow path for rare cases)."""
    order = np.lexsort((keys[:, 1], keys[:, 0], parent))
    k0, k1, par = keys[order, 0], keys[order, 1], parent[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (k0[1:] != k0[:-1]) | (k1[1:] != k1[:-1]) | (par[1:] != par[:-1])
    return order[first]


@dataclass
class _Move:
    """One checker move per row: ``src`` ``(K,)`` the source index (25 = bar), ``dest`` ``(K,)`` the landing index
    (0 when borne off), ``inc`` ``(K,)`` int8 what the landing index gains (1; 2 when hitting a blot, whose checker
    goes to index 0; 0 when bearing off), ``hit`` ``(K,)`` bool."""

    src: np.ndarray
    dest: np.ndarray
    inc: np.ndarray
    hit: np.ndarray

    def take(self, index: np.ndarray) -> _Move:
        """The moves of rows ``index``."""
        return _Move(self.src[index], self.dest[index], self.inc[index], self.hit[index])

    def key_delta(self) -> tuple[np.ndarray, np.ndarray]:
        """What the move adds to each of the two :func:`position_keys` words, ``(K,)`` uint64 each (mod 2**64).

        One lookup in :data:`_KEY_DELTA` by (source, landing index, what it gains): a hit is exactly a gain of 2.
        """
        at = (self.src * 26 + self.dest) * 3 + self.inc
        return _KEY_DELTA[0, at], _KEY_DELTA[1, at]


@dataclass
class _Step:
    """Candidate positions, built lazily: rows ``row`` ``(K,)`` int64 of ``base`` ``(M, 26)`` int8 with the
    :class:`_Move` s ``moves`` applied in order (none: the position itself); ``keys`` ``(K, 2)`` uint64 their
    :func:`position_keys`."""

    base: np.ndarray
    row: np.ndarray
    moves: tuple
    keys: np.ndarray

    @property
    def last(self) -> _Move:
        """The last move of each row."""
        return self.moves[-1]

    def children(self, select: np.ndarray | None = None, flipped: bool = False) -> np.ndarray:
        """The resulting positions ``(K, 26)`` int8 (or of the rows ``select`` only).

        With ``flipped`` they are returned as the opponent sees them (:func:`bgbot.rules.board.flip`), built from the
        flipped base rows so that the large output is written once.
        """
        row = self.row if select is None else self.row[select]
        out = np.take(flip(self.base) if flipped else self.base, row, axis=0)
        flat = out.reshape(-1)
        at = np.arange(0, flat.size, 26)
        for move in self.moves:
            m = move if select is None else move.take(select)
            if flipped:  # flip(x)[i] == -x[25 - i]
                flat[at + 25 - m.src] += 1
                flat[at + 25 - m.dest] -= m.inc
                flat[at + 25] += m.hit.astype(np.int8)
            else:
                flat[at + m.src] -= 1
                flat[at + m.dest] += m.inc
                flat[at] -= m.hit.astype(np.int8)
        return out


def _sources(positions, max_source=None, exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """Candidate ``(row, source)`` pairs, ``(P,)`` int64 each: a checker of mine that may move, bar first.

    Args:
        positions: ``(M, 26)`` int8, side on roll.
        max_source: optional ``(M,)`` int8: only sources up to this index (doubles move checkers in
            non-increasing order of source, which lists each multiset of checker moves once).
        exclude: optional ``(M, 26)`` bool: sources not to move from (see :func:`_plays_non_double`).
    """
    movable = positions[:, 1:26] > 0  # (M, 25) my checkers on sources 1..25
    on_bar = positions[:, 25] > 0  # (M,)
    if on_bar.any():  # checkers on the bar enter first
        movable[on_bar, :24] = False
    if max_source is not None:
        movable &= _SOURCES[None, :] <= max_source[:, None]
    if exclude is not None:
        movable &= ~exclude[:, 1:26]
    rows, cols = np.divmod(np.flatnonzero(movable), 25)  # several times faster than a 2-D np.nonzero
    return rows, cols + 1


def _outside(positions: np.ndarray) -> np.ndarray:
    """My checkers not yet home (points 7..24 and the bar), ``(M, 26)`` int8 -> ``(M,)`` int64."""
    return np.maximum(positions[:, 7:26], 0).sum(axis=1)


def _apply_die(positions, keys, die, sources, outside=None) -> _Step:
    """Every way to move one checker by one die.

    Args:
        positions: ``(M, 26)`` int8, side on roll.
        keys: ``(M, 2)`` uint64, :func:`position_keys` of ``positions``.
        die: ``(M,)`` int8, the die each row plays (1..6).
        sources: ``(rows, sources)`` from :func:`_sources`, the checkers that may move.
        outside: optional ``(M,)`` :func:`_outside` of ``positions`` (computed when needed if not given).
    """
    rows, src = sources
    t = src - die[rows]  # (P,) <= 0 means bearing off
    # What lies on the landing point; meaningless (a cell of this or the previous row) where t <= 0, and unused there.
    landing = positions.reshape(-1)[rows * 26 + t]
    legal = (t >= 1) & (landing >= -1)
    off = np.flatnonzero(t <= 0)
    if len(off):  # bearing off: only with every checker home; a higher die only from the highest point
        all_home = (_outside(positions) if outside is None else outside) == 0  # (M,)
        off = off[all_home[rows[off]]]
        bearing = np.take(positions, rows[off], axis=0)  # (B, 26) rows that may bear off
        highest = 6 - np.argmax(bearing[:, 6:0:-1] > 0, axis=1)  # highest occupied home point
        legal[off] = (t[off] == 0) | (src[off] == highest)
    keep = np.flatnonzero(legal)
    rows, src, t, landing = rows[keep], src[keep], t[keep], landing[keep]
    lands = t >= 1
    hit = lands & (landing == -1)
    move = _Move(src, np.maximum(t, 0), lands.astype(np.int8) + hit, hit)
    word0, word1 = move.key_delta()
    child_keys = np.take(keys, rows, axis=0)  # (K, 2) uint64 copy
    with np.errstate(over="ignore"):
        child_keys[:, 0] += word0
        child_keys[:, 1] += word1
    return _Step(positions, rows, (move,), child_keys)


def _no_play(positions, keys) -> _Step:
    """The positions themselves as a :class:`_Step` that moves nothing (rank 0: no die can be played)."""
    return _Step(positions, np.arange(len(positions), dtype=np.int64), (), keys)


def _segment_pairs(n_a: np.ndarray, n_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of the ``n_a[i]`` and ``n_b[i]`` items of each row ``i``: ``(row, index in a, index in b)``, each
    ``(sum(n_a * n_b),)`` int64, the indices into the row-sorted concatenations of the items."""
    start_a = np.cumsum(n_a) - n_a
    start_b = np.cumsum(n_b) - n_b
    count = n_a * n_b
    row = np.repeat(np.arange(len(count)), count)
    local = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    width = n_b[row]
    return row, start_a[row] + local // width, start_b[row] + local % width


def _continue(positions, first: _Step, die) -> _Step:
    """The checker each row of ``first`` (one move from ``positions``) just moved goes on by ``die`` ``(M,)``.

    For positions where no checker is on the bar and at least two are outside the home board (so that neither die can
    bear off): the landing point is blocked only if it was in ``positions``.
    """
    move = first.last
    t = move.dest - die[first.row]
    landing = positions.reshape(-1)[first.row * 26 + np.maximum(t, 1)]
    ok = np.flatnonzero((t >= 1) & (landing >= -1))
    hit = landing[ok] == -1
    second = _Move(move.dest[ok], t[ok], (1 + hit).astype(np.int8), hit)
    word0, word1 = second.key_delta()
    keys = first.keys[ok]
    with np.errstate(over="ignore"):
        keys[:, 0] += word0
        keys[:, 1] += word1
    return _Step(positions, first.row[ok], (move.take(ok), second), keys)


def _plays_two_checkers_apart(positions, keys, hi, lo, one_hi: _Step, one_lo: _Step) -> list[_Step]:
    """Both dice played, for positions with no checker on the bar and at least two outside the home board.

    Then one die's move cannot change which moves the other die has, except that (a) the same checker may go on
    (:func:`_continue`, in both orders), (b) the other die may not move a checker from a point the first move
    emptied, and (c) a checker landing where the first one hit a blot hits nothing. So every play is a high-die move
    of the position with a low-die move of the position (all pairs, minus (b), corrected for (c)), or a checker going
    on. The low-then-high order adds nothing else: those plays are also high-then-low.
    """
    n = len(positions)
    pair_row, a, b = _segment_pairs(np.bincount(one_hi.row, minlength=n), np.bincount(one_lo.row, minlength=n))
    first, second = one_hi.last.take(a), one_lo.last.take(b)
    ok = np.flatnonzero(~((first.src == second.src) & (positions.reshape(-1)[pair_row * 26 + first.src] == 1)))
    first, second, a, b, pair_row = first.take(ok), second.take(ok), a[ok], b[ok], pair_row[ok]
    both_hit = first.hit & second.hit & (first.dest == second.dest)  # (c): the second lands on my checker
    second = _Move(second.src, second.dest, second.inc - both_hit, second.hit & ~both_hit)
    pair_keys = one_hi.keys[a]
    with np.errstate(over="ignore"):
        pair_keys += one_lo.keys[b]
        pair_keys -= keys[pair_row]
        pair_keys[:, 0] -= _UNIT0[second.dest] * both_hit + both_hit
        pair_keys[:, 1] -= _UNIT1[second.dest] * both_hit
    pairs = _Step(positions, pair_row, (first, second), pair_keys)
    return [pairs, _continue(positions, one_hi, lo), _continue(positions, one_lo, hi)]


def _restrict(step: _Step, rows: np.ndarray, base: np.ndarray, new_row: np.ndarray) -> _Step:
    """The candidates of ``step`` whose row is in the mask ``rows`` ``(M,)``, on ``base`` (those rows' positions),
    renumbered by ``new_row`` ``(M,)``."""
    sel = np.flatnonzero(rows[step.row])
    return _Step(base, new_row[step.row[sel]], tuple(m.take(sel) for m in step.moves), step.keys[sel])


def _plays_non_double(positions, keys, dice, parent):
    """Candidates and ranks for rows whose dice differ.

    Rank: 3 both dice played, 2 only the higher die, 1 only the lower die, 0 none.
    Returns a list of ``(step, parent (K,), rank)`` parts.

    Most positions (no checker on the bar, two or more outside the home board) take the shortcut of
    :func:`_plays_two_checkers_apart`. The others expand both orders, but the low-then-high order skips a second
    checker move that was already legal in the starting position (other than the same checker going on): those plays
    are the same as playing the high die first, which the first order lists.
    """
    hi = dice.max(axis=1)
    lo = dice.min(axis=1)
    sources = _sources(positions)  # the same checkers may move first whichever die goes first
    one_hi = _apply_die(positions, keys, hi, sources)
    one_lo = _apply_die(positions, keys, lo, sources)
    parts = [(_no_play(positions, keys), parent, 0), (one_hi, parent[one_hi.row], 2), (one_lo, parent[one_lo.row], 1)]
    outside = (np.maximum(positions[:, 7:25], 0)).sum(axis=1)  # (M,) my checkers on points 7..24
    simple = (positions[:, 25] == 0) & (outside >= 2)  # (M,)
    if simple.any():
        idx = np.flatnonzero(simple)
        sub_positions, sub_row = positions[idx], np.cumsum(simple) - 1  # (S, 26), row -> row among them
        firsts = [_restrict(step, simple, sub_positions, sub_row) for step in (one_hi, one_lo)]
        for step in _plays_two_checkers_apart(sub_positions, keys[idx], hi[idx], lo[idx], *firsts):
            parts.append((step, parent[idx[step.row]], 3))
    if (~simple).any():
        rest_hi, rest_lo = (_restrict(step, ~simple, positions, np.arange(len(positions))) for step in (one_hi, one_lo))
        children = rest_hi.children()
        two_hi = _apply_die(children, rest_hi.keys, lo[rest_hi.row], _sources(children))
        hi_legal = np.zeros((len(positions), 26), dtype=bool)  # (M, 26): high die playable from each source
        hi_legal[rest_hi.row, rest_hi.last.src] = True
        exclude = hi_legal[rest_lo.row]
        goes_on = rest_lo.last.inc > 0  # the checker that moved is still on the board and may go on
        exclude[np.flatnonzero(goes_on), rest_lo.last.dest[goes_on]] = False
        children = rest_lo.children()
        two_lo = _apply_die(children, rest_lo.keys, hi[rest_lo.row], _sources(children, exclude=exclude))
        parts += [(two_hi, parent[rest_hi.row[two_hi.row]], 3), (two_lo, parent[rest_lo.row[two_lo.row]], 3)]
    return parts


def _plays_double(positions, keys, dice, parent):
    """Candidates and ranks (number of dice played, 0..4) for rows rolling a double; same shape as above."""
    parts = [(_no_play(positions, keys), parent, 0)]
    cur, cur_keys, cur_par, cur_die = positions, keys, parent, dice[:, 0]
    max_source = np.full(len(parent), 25, np.int8)
    outside = _outside(positions)  # kept up to date move by move instead of recounted
    for used in range(1, 5):
        step = _apply_die(cur, cur_keys, cur_die, _sources(cur, max_source), outside)
        move = step.last
        cur_par, cur_die, max_source = cur_par[step.row], cur_die[step.row], move.src
        outside = outside[step.row] - (move.src >= 7) + (move.dest >= 7)
        parts.append((step, cur_par, used))
        if used < 4:
            cur, cur_keys = step.children(), step.keys
    return parts


def generate_plays(positions: np.ndarray, dice: np.ndarray) -> Plays:
    """Every legal play of every position, each distinct resulting position once.

    Args:
        positions: ``(N, 26)`` int8 positions, side on roll (layout in :mod:`bgbot.rules.board`). Positions are trusted
            to be valid (see :func:`bgbot.rules.board.validate` for user input).
        dice: ``(N, 2)`` integers in 1..6, the roll of each position (order does not matter).

    Returns:
        :class:`Plays`: afterstates ``(M, 26)`` int8 flipped to the opponent's view, parent ``(M,)`` int64
        ascending. Each position has at least one row; with no legal play the row is the position itself, flipped.

    Raises:
        DiceError: dice of the wrong shape or outside 1..6.
        bgbot.rules.board.PositionError: positions not of shape ``(N, 26)``.
    """
    positions = np.asarray(positions)
    if positions.ndim != 2 or positions.shape[1] != 26:
        raise PositionError(f"positions must have shape (N, 26), got {positions.shape}")
    positions = np.ascontiguousarray(positions, dtype=np.int8)
    n = len(positions)
    dice = check_dice(dice, n)
    index = np.arange(n, dtype=np.int64)
    is_double = dice[:, 0] == dice[:, 1]
    keys = position_keys(positions)
    parts = []
    for mask, expand in ((~is_double, _plays_non_double), (is_double, _plays_double)):
        if mask.any():
            parts += expand(positions[mask], keys[mask], dice[mask], index[mask])
    best = np.zeros(n, dtype=np.int8)
    for _, par, rank in parts:  # a part's rank is the same for all its rows
        best = np.maximum(best, rank * (np.bincount(par, minlength=n) > 0)).astype(np.int8)
    selected = [(step, np.flatnonzero(best[par] == rank)) for step, par, rank in parts]
    kept = [(step, sel, par[sel]) for (step, sel), (_, par, _) in zip(selected, parts) if len(sel)]
    cand_keys = np.concatenate([step.keys if len(sel) == len(step.keys) else step.keys[sel] for step, sel, _ in kept])
    cand_par = np.concatenate([par for _, _, par in kept])
    first = _unique_rows(cand_keys, cand_par)  # (M,) indices into the concatenated candidates, by parent
    sizes = np.array([len(sel) for _, sel, _ in kept])
    starts = np.cumsum(sizes) - sizes
    part = np.repeat(np.arange(len(kept), dtype=np.int8), sizes)[first]  # (M,) the part each play comes from
    by_part = np.argsort(part, kind="stable")  # output rows grouped by part
    bounds = np.searchsorted(part[by_part], np.arange(len(kept) + 1))
    out = np.empty((len(first), 26), dtype=np.int8)
    for p, (step, sel, _) in enumerate(kept):
        mine = by_part[bounds[p] : bounds[p + 1]]
        out[mine] = step.children(sel[first[mine] - starts[p]], flipped=True)
    return Plays(afterstates=out, parent=cand_par[first])


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
