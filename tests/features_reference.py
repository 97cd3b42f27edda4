"""The vectorised GNU Backgammon-class features as first shipped (``bgbot.evaluation.features`` before its rewrite for
speed), kept verbatim as the reference that pins the fast version's values: trained v2 nets depend on them.

Only ``tests/`` imports this (``tests/test_features.py``) and ``scripts/bench_features.py`` (the speed reference).
"""

from __future__ import annotations

import numpy as np

from bgbot.evaluation.features import (
    _CONNECT,
    _WAY_INTER_MASK,
    COL,
    ENTER_LOSS,
    ESCAPES,
    ESCAPES1,
    N_SIDE,
    ROLL_DOUBLE,
    ROLL_WAYS,
    ROLL_WEIGHT,
    WAY_DIRECT,
    WAY_PIPS,
    WAYS,
    gnubg_halves,
)

_IDX = np.arange(25, dtype=np.int32)  # (25,)
_BITS = (1 << np.arange(25, dtype=np.int32)).astype(np.float64)


def _mask(cond: np.ndarray) -> np.ndarray:
    """Rows of ``(N, 25)`` bool -> ``(N,)`` int32 with bit k = column k (a float matmul packs them exactly)."""
    return (cond.astype(np.float64) @ _BITS).astype(np.int32)


def _top(bits: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of ``(...)`` int32 values < 2**53, -1 for 0."""
    return np.frexp(bits.astype(np.float64))[1].astype(np.int32) - 1


def _last(cond: np.ndarray) -> np.ndarray:
    """Last column where ``(N, C)`` bool is true, -1 where none: ``(N,)`` int32."""
    c = cond.shape[1]
    idx = c - 1 - np.argmax(cond[:, ::-1], axis=1)
    return np.where(cond.any(axis=1), idx, -1)


def _escapes(blocked: np.ndarray, n: np.ndarray, table: np.ndarray = ESCAPES) -> np.ndarray:
    """Escapes of a checker on index ``n`` (broadcastable int32) past ``blocked`` (int32 bitmask of the other side's
    made points in ITS numbering, bit x = its index x): bit i of the window = its index 24 + i - n."""
    n = np.asarray(n)
    m = np.clip(n, 0, 12)
    af = (blocked >> np.clip(24 - n, 0, 24)) & ((1 << m) - 1)
    return table[af]


def side_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The ``N_SIDE`` features of one side for a batch: ``a`` ``(N, 25)`` its checkers, ``b`` ``(N, 25)`` the other
    side's, each in its owner's numbering (index k = point k + 1, 24 = bar), non-negative ints -> ``(N, N_SIDE)``
    float32. See the module docstring; :func:`side_features_scalar` is the reference."""
    a = a.astype(np.int32)
    b = b.astype(np.int32)
    n = len(a)
    f = np.zeros((n, N_SIDE), dtype=np.float64)
    total = a.sum(axis=1)
    off = 15 - total
    f[:, 0] = np.minimum(off, 5) / 5
    f[:, 1] = np.clip(off - 5, 0, 5) / 5
    f[:, 2] = np.clip(off - 10, 0, 5) / 5
    ob = 23 - _last(b > 0)  # (N,)
    idx = _IDX[None, :]
    f[:, COL["break_contact"]] = (a * (idx + 1 - ob[:, None]) * (idx > ob[:, None])).sum(axis=1) / 167.0
    f[:, COL["freepip"]] = (a * (idx + 1) * (idx < ob[:, None])).sum(axis=1) / 100.0
    # timing
    outfield = (idx >= 12) & (idx <= 23) & (idx > ob[:, None])  # (N, 25) the "first loop" points
    excess = np.where(a > 2, a - 2, np.where(a == 1, 1, 0))
    counted = np.where(outfield, excess, np.where((idx >= 6) & (idx <= 23), a, 0))
    t = 24 * a[:, 24] + (counted * idx).sum(axis=1)
    no = a[:, 24] + counted.sum(axis=1)
    for i in range(5, -1, -1):
        ai = a[:, i]
        over = ai > 2
        t = t + np.where(over, i * (ai - 2), 0)
        no = no + np.where(over, ai - 2, 0)
        need = 2 - ai
        fill = (ai < 2) & (no >= need)
        t = t - np.where(fill, i * need, 0)
        no = no - np.where(fill, need, 0)
    f[:, COL["timing"]] = np.maximum(t, 0) / 100.0
    back = _last(a > 0)
    f[:, COL["back_chequer"]] = back / 24.0
    start = np.where(back == 24, 23, back)
    made = a >= 2
    anchor = _last(made[:, :24] & (_IDX[None, :24] <= start[:, None]))
    f[:, COL["back_anchor"]] = anchor / 24.0
    in_home = made[:, 18:24] & (_IDX[None, 18:24] <= anchor[:, None])  # (N, 6) indices 18..23
    first = 18 + np.argmax(in_home, axis=1)
    outer = _last(made[:, 12:18])  # (N,) 0..5 -> index 12..17
    fwd = np.where(in_home.any(axis=1), 24 - first, np.where(outer >= 0, 24 - (12 + outer), 0))
    f[:, COL["forward_anchor"]] = np.where(fwd == 0, 2.0, fwd / 6.0)
    f[:, COL["piploss"]], f[:, COL["p1"]], f[:, COL["p2"]] = _hits(a, b)
    a_made = _mask(made)
    back_n = 23 - ob
    f[:, COL["backescapes"]] = _escapes(a_made, back_n) / 36.0
    f[:, COL["backrescapes"]] = _escapes(a_made, back_n, ESCAPES1) / 36.0
    pts = np.arange(15, 25, dtype=np.int32)  # (10,)
    esc = _escapes(a_made[:, None], pts[None, :])  # (N, 10) escapes from indices 15..24
    acont = np.where(pts[None, :] < (24 - ob)[:, None], esc, 36).min(axis=1)
    f[:, COL["acontain"]] = (36 - acont) / 36.0
    f[:, COL["acontain2"]] = f[:, COL["acontain"]] ** 2
    f[:, COL["contain"]] = (36 - esc[:, :9].min(axis=1)) / 36.0
    f[:, COL["contain2"]] = f[:, COL["contain"]] ** 2
    mob_pts = np.arange(6, 25, dtype=np.int32)
    mob_esc = _escapes(_mask(b >= 2)[:, None], mob_pts[None, :])  # (N, 19)
    f[:, COL["mobility"]] = ((mob_pts - 5)[None, :] * a[:, 6:25] * mob_esc).sum(axis=1) / 3600.0
    s = (a * idx).sum(axis=1)
    mean = np.where(total > 0, -(-s // np.maximum(total, 1)), 0)
    behind = idx > mean[:, None]
    j2 = (a * behind).sum(axis=1)
    k = (a * behind * (idx - mean[:, None]) ** 2).sum(axis=1)
    f[:, COL["moment2"]] = np.where(j2 > 0, -(-k // np.maximum(j2, 1)), 0) / 400.0
    closed_bits = b[:, :6] > 1
    closed = (closed_bits * (1 << np.arange(6))).sum(axis=1)
    loss = ENTER_LOSS[closed, (a[:, 24] > 1).astype(np.int32)]
    f[:, COL["enter"]] = np.where(a[:, 24] > 0, loss / (36.0 * 49.0 / 6.0), 0.0)
    nc = closed_bits.sum(axis=1)
    f[:, COL["enter2"]] = (36 - (nc - 6) ** 2) / 36.0
    pts23 = made[:, 1:24]  # (N, 23) indices 1..23
    pa = _last(pts23) + 1  # (N,) highest made point in 1..23, 0 if none
    others = pts23 & (_IDX[None, 1:24] < pa[:, None])  # (N, 23)
    cnt = others.sum(axis=1)
    dist = np.clip(pa[:, None] - _IDX[None, 1:24], 0, 24)
    w = (others * _CONNECT[dist]).sum(axis=1)
    f[:, COL["backbone"]] = np.where(cnt > 0, 1.0 - w / (np.maximum(cnt, 1) * 11.0), 0.0)
    n_ac = made[:, 18:24].sum(axis=1)
    tot = a[:, 18:25].sum(axis=1)
    f[:, COL["backg"]] = np.where(n_ac > 1, (tot - 3) / 4.0, 0.0)
    f[:, COL["backg1"]] = np.where(n_ac == 1, tot / 8.0, 0.0)
    return f.astype(np.float32)


def _hits(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(piploss, p1, p2) ``(N,)`` each, vectorised over positions and the 21 rolls (see :func:`_hits_scalar`).

    Bitmasks in OUR numbering (bit x = our index x): the other side's blot on its index i is on our index 23 - i, its
    made point on its index i blocks our index 23 - i.
    """
    n = len(a)
    rev = b[:, 23::-1]  # (N, 24) the other side's counts at our indices 0..23
    n_board = (a[:, :6] > 0).sum(axis=1)
    low_ok = np.where(n_board > 2, 0, 2)  # blots considered from our index 0 (or 2)
    blot_ok = (rev == 1) & (_IDX[None, :24] >= low_ok[:, None])
    blots = _mask(np.pad(blot_ok, ((0, 0), (0, 1))))
    all_blots = _mask(np.pad(rev == 1, ((0, 0), (0, 1))))
    open_ = _mask(np.pad(rev <= 1, ((0, 0), (0, 1)), constant_values=True))
    hitters = _mask((a > 0) & ~((_IDX[None, :] < 6) & (a == 2)))
    a_hit = np.zeros((len(WAYS), n), dtype=np.int32)
    for r, (all_req, inter, faces, pips) in enumerate(WAYS):
        h = hitters & (blots << pips)  # bit j: hitter on j, blot on j - pips
        if faces > 1:
            ok = [open_ << (pips - m) for m in inter]  # bit j: our index j - pips + m open
            if all_req:
                for o in ok:
                    h &= o
            else:
                h &= ok[0] | ok[1]
        a_hit[r] = h & ((1 << 25) - 1)
    bar = a[:, 24]
    n_pips = np.zeros((21, n), dtype=np.int32)
    n_ch = np.zeros((21, n), dtype=np.int32)
    some = (a_hit != 0).any(axis=0)  # (N,) rows without any hit keep zeros
    for case, fn in ((bar == 0, _rolls_off_bar), (bar == 1, _rolls_one_on_bar), (bar >= 2, _rolls_two_on_bar)):
        rows = np.flatnonzero(case & some)
        if len(rows):
            n_pips[:, rows], n_ch[:, rows] = fn(a_hit[:, rows], a[rows], b[rows], all_blots[rows])
    w = ROLL_WEIGHT[:, None]
    piploss = (n_pips * w).sum(axis=0) / (12.0 * 36.0)
    p1 = ((n_ch > 0) * w).sum(axis=0) / 36.0
    p2 = ((n_ch > 1) * w).sum(axis=0) / 36.0
    return piploss, p1, p2


def _rolls_off_bar(
    a_hit: np.ndarray, a: np.ndarray, b: np.ndarray, all_blots: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rolls when the side has no checker on the bar: ``(nPips, nChequers)`` ``(21, N)`` per roll, from the ways' hitter masks ``(39, N)``."""
    n = len(a)
    double = ROLL_DOUBLE[:, None]
    n_pips = np.zeros((21, n), dtype=np.int32)
    n_ch = np.zeros((21, n), dtype=np.int32)
    # not on the bar
    used = np.full((21, n), -1, dtype=np.int32)
    p0, c0 = n_pips, n_ch
    a_pad = np.concatenate([a, np.zeros((n, 1), dtype=np.int32)], axis=1)  # index -1 -> 0
    for slot in range(4):
        r = ROLL_WAYS[:, slot]  # (21,)
        exists = (r >= 0)[:, None]
        hits = np.where(exists, a_hit[np.maximum(r, 0)], 0)  # (21, N)
        pips = WAY_PIPS[np.maximum(r, 0)][:, None]
        direct = WAY_DIRECT[np.maximum(r, 0)][:, None]
        # direct: the highest bit among 1..23
        k = _top(hits & 0xFFFFFE)
        found = direct & (k >= 1)
        a_k = np.take_along_axis(a_pad, np.where(found, k, -1).T, axis=1).T  # (21, N)
        c0 = c0 + (found & ((used != k) | (a_k > 1)))
        used = np.where(found, k, used)
        p0 = np.where(found, np.maximum(p0, k - pips + 1), p0)
        c0 = c0 + (found & double & ((hits & ~(1 << np.maximum(k, 0))) != 0))
        # combination shots
        ind = ~direct & (hits != 0)
        kk = _top(hits)
        c0 = np.where(ind, np.maximum(c0, 1), c0)
        p0 = np.where(ind, np.maximum(p0, kk - pips + 1), p0)
        # a blot on the way: bit kk - m of all_blots for an intermediate m, i.e. bit 24 - m after a shift
        on_way = ((all_blots << np.clip(24 - kk, 0, 25)) & _WAY_INTER_MASK[np.maximum(r, 0)][:, None]) != 0
        c0 = c0 + (ind & on_way)
    return p0, c0


def _rolls_one_on_bar(
    a_hit: np.ndarray, a: np.ndarray, b: np.ndarray, all_blots: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rolls with one checker on the bar: ``(nPips, nChequers)`` ``(21, N)`` per roll, from the ways' hitter masks ``(39, N)``."""
    n = len(a)
    n_pips = np.zeros((21, n), dtype=np.int32)
    n_ch = np.zeros((21, n), dtype=np.int32)
    # one on the bar
    p1_, c1 = np.zeros_like(n_pips), np.zeros_like(n_ch)
    entered = np.zeros((21, n), dtype=bool)
    rev_closed = b[:, :6] > 1  # (N, 6) the other side's home points, entering die d blocked when [d - 1]
    for slot in range(4):
        r = ROLL_WAYS[:, slot]
        exists = (r >= 0)[:, None]
        hits = np.where(exists, a_hit[np.maximum(r, 0)], 0)
        pips = WAY_PIPS[np.maximum(r, 0)][:, None]
        direct = WAY_DIRECT[np.maximum(r, 0)][:, None]
        from_bar = ((hits >> 24) & 1) == 1
        dbar = direct & from_bar
        c1 = c1 + dbar
        p1_ = np.where(dbar, np.maximum(p1_, 25 - pips), p1_)
        k = _top(hits & 0xFFFFFE)
        if slot < 2:
            other_way = ROLL_WAYS[:, 1 - slot]
            other = np.where(ROLL_DOUBLE, WAY_PIPS[np.maximum(ROLL_WAYS[:, 0], 0)], WAY_PIPS[other_way])  # (21,)
            enters = ~rev_closed[:, other - 1].T  # (21, N)
        else:
            enters = np.zeros((21, n), dtype=bool)
        also = direct & (k >= 1) & ~entered & enters
        c1 = c1 + also
        p1_ = np.where(also, np.maximum(p1_, k - pips + 1), p1_)
        entered = entered | also
        ind = ~direct & from_bar
        c1 = np.where(ind, np.maximum(c1, 1), c1)
        p1_ = np.where(ind, np.maximum(p1_, 25 - pips), p1_)
        on_way = (all_blots & _WAY_INTER_MASK[np.maximum(r, 0)][:, None]) != 0  # landing 24 - m from the bar
        c1 = c1 + (ind & on_way)
    return p1_, c1


def _rolls_two_on_bar(
    a_hit: np.ndarray, a: np.ndarray, b: np.ndarray, all_blots: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rolls with two or more checkers on the bar: ``(nPips, nChequers)`` ``(21, N)`` per roll, from the ways' hitter masks ``(39, N)``."""
    n = len(a)
    n_pips = np.zeros((21, n), dtype=np.int32)
    n_ch = np.zeros((21, n), dtype=np.int32)
    # two or more on the bar
    p2_, c2 = np.zeros_like(n_pips), np.zeros_like(n_ch)
    for slot in range(2):
        r = ROLL_WAYS[:, slot]
        hits = a_hit[r]
        pips = WAY_PIPS[r][:, None]
        dbar = WAY_DIRECT[r][:, None] & (((hits >> 24) & 1) == 1)
        c2 = c2 + dbar
        p2_ = np.where(dbar, np.maximum(p2_, 25 - pips), p2_)
    return p2_, c2


def features(positions: np.ndarray) -> np.ndarray:
    """Both sides' features, ``(N, 26)`` int8 (side on roll) -> ``(N, 2 * N_SIDE)`` float32 (the original code)."""
    mine, theirs = gnubg_halves(positions)
    return np.concatenate([side_features(mine, theirs), side_features(theirs, mine)], axis=1)
