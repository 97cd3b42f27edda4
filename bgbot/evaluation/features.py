"""GNU Backgammon-class hand-crafted inputs, vectorised over ``(N, 26)`` int8 positions, each with a scalar twin.

Definitions follow GNU Backgammon's contact/crashed net inputs (gnubg ``eval.c``, ``CalculateHalfInputs`` and
``menOffAll``; the comments there credit Berliner for most of them); this is an independent implementation, written
from those definitions. For one side ("the side", its checkers ``a`` and the other side's ``b``, both in their owner's
own numbering, gnubg's 0-based layout: ``a[k]`` = checkers on point ``k + 1``, ``a[24]`` = bar):

=================  =====================================================================================================
name               definition (``ob`` = 23 - index of the other side's rearmost checker, its back checker "in our
                   numbering": checkers of ours above ``ob`` are still in contact)
=================  =====================================================================================================
off1, off2, off3   checkers borne off ``n``: ``min(n, 5) / 5``, ``clip(n - 5, 0, 5) / 5``, ``clip(n - 10, 0, 5) / 5``
break_contact      pips needed to break contact: sum over our checkers on index ``i > ob`` of ``i + 1 - ob``, / 167
back_chequer       index of our rearmost checker / 24
back_anchor        index of our rearmost point with >= 2 checkers (not the bar) / 24, -1/24 if none
forward_anchor     our most advanced anchor in the other side's home board (indices 18..back anchor; the lowest),
                   else in 12..17 (the highest): ``(24 - index) / 6``; 2.0 when there is none
piploss            mean over the 36 rolls of the pips the other side loses to our best hit, / 12
p1, p2             rolls (/ 36) that hit at least one / at least two of the other side's checkers
backescapes        rolls (/ 36) with which the other side's rearmost checker escapes past our points
backrescapes       the same counting only rolls that reach past our furthest blocking point (gnubg's ``Escapes1``)
acontain           1 - (min over points 15 .. 23 - ob' of the escapes of a checker there) / 36 (our prime around the
                   other side's back checkers); ``acontain2`` its square
contain            the same minimum over points 15..23; ``contain2`` its square
mobility           sum over our checkers on index ``i >= 6`` of ``(i - 5) * escapes(i past the other side's points)``,
                   / 3600
moment2            one-sided second moment of our checkers behind their mean (integer ceilings as gnubg), / 400
enter              when we have checkers on the bar: mean pips lost per roll to the other side's closed home points,
                   / (36 * 49 / 6); 0 otherwise
enter2             ``(36 - (6 - closed)^2) / 36``: ``closed`` = points the other side holds in its home board
timing             pips we can spend before we must break our home board (gnubg's timing count), / 100
backbone           1 - mean connectivity of our points behind our most advanced outfield anchor (11 within 6 pips,
                   13 - distance up to 11, else 0) / 11; 0 when fewer than two points
backg, backg1      two or more anchors in the other side's home: (checkers there and on the bar - 3) / 4; exactly one:
                   those checkers / 8
freepip            pips of our checkers already past all of the other side's checkers / 100
=================  =====================================================================================================

The hit inputs (piploss, p1, p2) use gnubg's table of the 39 ways to hit at a distance (direct 1..6, combinations of
two to four dice faces, each with its intermediate points) and its rules for a roll: not on the bar, the most
advanced blot a direct shot reaches counts (and a second blot for doubles), a combination counts one checker and one
more if it hits a blot on the way; one checker on the bar: shots from the bar, plus one direct shot elsewhere if the
other die enters (for doubles, the same die); two or more on the bar: direct shots from the bar only. Two of gnubg's
details are deliberately not copied: from the bar, a combination's intermediate blot is looked for where the checker
actually lands, and for doubles with one checker on the bar the entering die is the double's own die.

:func:`side_features` is the vectorised version; :func:`side_features_scalar` its plain-Python twin (the test
compares them on thousands of positions).
"""

from __future__ import annotations

import numpy as np

N_SIDE = 25
"""Features per side."""

NAMES: tuple[str, ...] = (
    "off1",
    "off2",
    "off3",
    "break_contact",
    "back_chequer",
    "back_anchor",
    "forward_anchor",
    "piploss",
    "p1",
    "p2",
    "backescapes",
    "acontain",
    "acontain2",
    "contain",
    "contain2",
    "mobility",
    "moment2",
    "enter",
    "enter2",
    "timing",
    "backbone",
    "backg",
    "backg1",
    "freepip",
    "backrescapes",
)
"""Names of the ``N_SIDE`` features, in column order."""
COL = {n: i for i, n in enumerate(NAMES)}

# --- tables -----------------------------------------------------------------------------------------------------


def _escape_tables() -> tuple[np.ndarray, np.ndarray]:
    """Escapes over 12-bit masks of blocked points (bit i = distance i + 1): all rolls, and rolls past the nearest
    blocked point."""
    esc = np.zeros(1 << 12, dtype=np.int64)
    esc1 = np.zeros(1 << 12, dtype=np.int64)
    for mask in range(1 << 12):
        low = (mask & -mask).bit_length() - 1 if mask else -1
        for n0 in range(6):
            for n1 in range(n0 + 1):
                if not mask & (1 << (n0 + n1 + 1)) and not (mask & (1 << n0) and mask & (1 << n1)):
                    w = 1 if n0 == n1 else 2
                    esc[mask] += w
                    if mask and n0 + n1 + 1 > low:
                        esc1[mask] += w
    return esc, esc1


ESCAPES, ESCAPES1 = _escape_tables()

# The 39 ways to hit: (all intermediates required?, intermediate distances, dice faces used, pips). gnubg's table.
WAYS: tuple[tuple[bool, tuple[int, ...], int, int], ...] = (
    (True, (), 1, 1),
    (True, (), 1, 2),
    (True, (1,), 2, 2),
    (True, (), 1, 3),
    (False, (1, 2), 2, 3),
    (True, (1, 2), 3, 3),
    (True, (), 1, 4),
    (False, (1, 3), 2, 4),
    (True, (2,), 2, 4),
    (True, (1, 2, 3), 4, 4),
    (True, (), 1, 5),
    (False, (1, 4), 2, 5),
    (False, (2, 3), 2, 5),
    (True, (), 1, 6),
    (False, (1, 5), 2, 6),
    (False, (2, 4), 2, 6),
    (True, (3,), 2, 6),
    (True, (2, 4), 3, 6),
    (False, (1, 6), 2, 7),
    (False, (2, 5), 2, 7),
    (False, (3, 4), 2, 7),
    (False, (2, 6), 2, 8),
    (False, (3, 5), 2, 8),
    (True, (4,), 2, 8),
    (True, (2, 4, 6), 4, 8),
    (False, (3, 6), 2, 9),
    (False, (4, 5), 2, 9),
    (True, (3, 6), 3, 9),
    (False, (4, 6), 2, 10),
    (True, (5,), 2, 10),
    (False, (5, 6), 2, 11),
    (True, (6,), 2, 12),
    (True, (4, 8), 3, 12),
    (True, (3, 6, 9), 4, 12),
    (True, (5, 10), 3, 15),
    (True, (4, 8, 12), 4, 16),
    (True, (6, 12), 3, 18),
    (True, (5, 10, 15), 4, 20),
    (True, (6, 12, 18), 4, 24),
)
# The 21 rolls (11, 21, 22, 31, 32, 33, ...) and the ways each hits, -1 padded; their weights out of 36.
ROLL_WAYS = np.array(
    [
        [0, 2, 5, 9],
        [0, 1, 4, -1],
        [1, 8, 17, 24],
        [0, 3, 7, -1],
        [1, 3, 12, -1],
        [3, 16, 27, 33],
        [0, 6, 11, -1],
        [1, 6, 15, -1],
        [3, 6, 20, -1],
        [6, 23, 32, 35],
        [0, 10, 14, -1],
        [1, 10, 19, -1],
        [3, 10, 22, -1],
        [6, 10, 26, -1],
        [10, 29, 34, 37],
        [0, 13, 18, -1],
        [1, 13, 21, -1],
        [3, 13, 25, -1],
        [6, 13, 28, -1],
        [10, 13, 30, -1],
        [13, 31, 36, 38],
    ],
    dtype=np.int32,
)
ROLL_DOUBLE = ROLL_WAYS[:, 3] >= 0  # (21,)
ROLL_WEIGHT = np.where(ROLL_DOUBLE, 1, 2)  # (21,)
WAY_PIPS = np.array([w[3] for w in WAYS], dtype=np.int32)  # (39,)
WAY_DIRECT = np.array([w[2] == 1 for w in WAYS])  # (39,)
_WAY_INTER_MASK = np.array([sum(1 << (24 - m) for m in w[1]) for w in WAYS], dtype=np.int32)  # bit 24 - m


def _enter_loss(closed: int, two: bool) -> int:
    """Pips lost over the 36 rolls entering against the closed home points ``closed`` (bit i = point i + 1)."""
    loss = 0
    for i in range(6):
        if closed >> i & 1:
            loss += 4 * (i + 1)
            for j in range(i + 1, 6):
                if closed >> j & 1:
                    loss += 2 * (i + j + 2)
                elif two:
                    loss += 2 * (i + 1)
        elif two:
            for j in range(i + 1, 6):
                if closed >> j & 1:
                    loss += 2 * (j + 1)
    return loss


ENTER_LOSS = np.array([[_enter_loss(c, t) for t in (False, True)] for c in range(64)], dtype=np.float64)  # (64, 2)
_CONNECT = np.array([11 if d <= 6 else (13 - d if d <= 11 else 0) for d in range(25)], dtype=np.float64)  # by distance


# --- scalar twin ------------------------------------------------------------------------------------------------


def _escapes_scalar(blockers: list[int], n: int, table: np.ndarray = ESCAPES) -> int:
    """Escapes of a checker on index ``n`` (distance ``n`` ... from the end) past points ``blockers`` (25 counts of the
    other side, in ITS numbering: bit i of the mask = its index 24 + i - n)."""
    m = min(n, 12)
    af = 0
    for i in range(max(m, 0)):
        if blockers[24 + i - n] >= 2:
            af |= 1 << i
    return int(table[af])


def side_features_scalar(a: list[int], b: list[int]) -> list[float]:
    """The ``N_SIDE`` features of one side: ``a`` its 25 counts, ``b`` the other side's, each in its owner's numbering
    (gnubg layout: index k = point k + 1, 24 = bar). Plain Python; the reference for :func:`side_features`."""
    f = [0.0] * N_SIDE
    off = 15 - sum(a)
    f[0], f[1], f[2] = min(off, 5) / 5, min(max(off - 5, 0), 5) / 5, min(max(off - 10, 0), 5) / 5
    opp_back = max([k for k in range(25) if b[k]], default=-1)
    ob = 23 - opp_back
    f[COL["break_contact"]] = sum((i + 1 - ob) * a[i] for i in range(ob + 1, 25) if i >= 0) / 167.0
    f[COL["freepip"]] = sum((i + 1) * a[i] for i in range(0, min(ob, 25))) / 100.0
    # timing
    t, no = 24 * a[24], a[24]
    for i in range(23, 5, -1):
        if i >= 12 and i > ob:
            if a[i] and a[i] != 2:
                n = a[i] - 2 if a[i] > 2 else 1
                no += n
                t += i * n
        elif a[i]:
            no += a[i]
            t += i * a[i]
    for i in range(5, -1, -1):
        if a[i] > 2:
            t += i * (a[i] - 2)
            no += a[i] - 2
        elif a[i] < 2:
            n = 2 - a[i]
            if no >= n:
                t -= i * n
                no -= n
    f[COL["timing"]] = max(t, 0) / 100.0
    back = max([k for k in range(25) if a[k]], default=-1)
    f[COL["back_chequer"]] = back / 24.0
    start = 23 if back == 24 else back
    anchor = max([k for k in range(0, start + 1) if a[k] >= 2], default=-1)
    f[COL["back_anchor"]] = anchor / 24.0
    fwd = next((24 - j for j in range(18, anchor + 1) if a[j] >= 2), 0)
    if fwd == 0:
        fwd = next((24 - j for j in range(17, 11, -1) if a[j] >= 2), 0)
    f[COL["forward_anchor"]] = 2.0 if fwd == 0 else fwd / 6.0
    f[COL["piploss"]], f[COL["p1"]], f[COL["p2"]] = _hits_scalar(a, b)
    f[COL["backescapes"]] = _escapes_scalar(a, 23 - ob) / 36.0
    f[COL["backrescapes"]] = _escapes_scalar(a, 23 - ob, ESCAPES1) / 36.0
    n = 36
    for i in range(15, 24 - ob):
        n = min(n, _escapes_scalar(a, i))
    f[COL["acontain"]] = (36 - n) / 36.0
    f[COL["acontain2"]] = f[COL["acontain"]] ** 2
    n = min(_escapes_scalar(a, i) for i in range(15, 24))
    f[COL["contain"]] = (36 - n) / 36.0
    f[COL["contain2"]] = f[COL["contain"]] ** 2
    f[COL["mobility"]] = sum((i - 5) * a[i] * _escapes_scalar(b, i) for i in range(6, 25)) / 3600.0
    j = sum(a)
    s = sum(i * a[i] for i in range(25))
    mean = -(-s // j) if j else 0
    j2 = sum(a[i] for i in range(mean + 1, 25))
    k = sum(a[i] * (i - mean) ** 2 for i in range(mean + 1, 25))
    f[COL["moment2"]] = (-(-k // j2) if j2 else 0) / 400.0
    closed = sum(1 << i for i in range(6) if b[i] > 1)
    f[COL["enter"]] = _enter_loss(closed, a[24] > 1) / (36.0 * 49.0 / 6.0) if a[24] > 0 else 0.0
    nc = bin(closed).count("1")
    f[COL["enter2"]] = (36 - (nc - 6) ** 2) / 36.0
    points = [p for p in range(23, 0, -1) if a[p] >= 2]
    if len(points) >= 2:
        pa = points[0]
        w = sum(_CONNECT[pa - p] for p in points[1:])
        f[COL["backbone"]] = 1.0 - w / ((len(points) - 1) * 11.0)
    n_ac = sum(1 for i in range(18, 24) if a[i] > 1)
    tot = sum(a[18:25])
    f[COL["backg"]] = (tot - 3) / 4.0 if n_ac > 1 else 0.0
    f[COL["backg1"]] = tot / 8.0 if n_ac == 1 else 0.0
    return f


def _hits_scalar(a: list[int], b: list[int]) -> tuple[float, float, float]:
    """(piploss, p1, p2) of one side, plain Python (see the module docstring)."""
    n_board = sum(1 for i in range(6) if a[i])
    a_hit = [0] * len(WAYS)
    for i in range(23 if n_board > 2 else 21, -1, -1):  # the other side's blot on its index i = our index 23 - i
        if b[i] != 1:
            continue
        for j in range(24 - i, 25):  # our hitter on index j, distance j - 23 + i
            if not a[j] or (j < 6 and a[j] == 2):
                continue
            for r, (all_req, inter, faces, pips) in enumerate(WAYS):
                if pips != j - 23 + i:
                    continue
                blocked = [b[i - m] > 1 for m in inter]
                if faces > 1 and (any(blocked) if all_req else all(blocked)):
                    continue
                a_hit[r] |= 1 << j
    n_pips = [0] * 21
    n_ch = [0] * 21
    for ri in range(21):
        ways = [r for r in ROLL_WAYS[ri] if r >= 0]
        double = bool(ROLL_DOUBLE[ri])
        if a[24] == 0:
            used = -1
            for r in ways:
                if not a_hit[r]:
                    continue
                pips = WAYS[r][3]
                if WAYS[r][2] == 1:
                    ks = [k for k in range(23, 0, -1) if a_hit[r] >> k & 1]
                    if ks:
                        k = ks[0]
                        if used != k or a[k] > 1:
                            n_ch[ri] += 1
                        used = k
                        n_pips[ri] = max(n_pips[ri], k - pips + 1)
                        if double and a_hit[r] & ~(1 << k):
                            n_ch[ri] += 1
                else:
                    n_ch[ri] = max(n_ch[ri], 1)
                    k = max(k for k in range(25) if a_hit[r] >> k & 1)
                    n_pips[ri] = max(n_pips[ri], k - pips + 1)
                    if any(b[23 - k + m] == 1 for m in WAYS[r][1]):
                        n_ch[ri] += 1
        elif a[24] == 1:
            entered = False
            for slot, r in enumerate(ways):
                if not a_hit[r]:
                    continue
                pips = WAYS[r][3]
                if WAYS[r][2] == 1:
                    for k in range(24, 0, -1):
                        if not a_hit[r] >> k & 1:
                            continue
                        if entered and k != 24:
                            break
                        if k != 24:
                            other = pips if double else WAYS[ways[1 - slot]][3]
                            if b[other - 1] > 1:
                                break
                            entered = True
                        n_ch[ri] += 1
                        n_pips[ri] = max(n_pips[ri], k - pips + 1)
                else:
                    if not a_hit[r] >> 24 & 1:
                        continue
                    n_ch[ri] = max(n_ch[ri], 1)
                    n_pips[ri] = max(n_pips[ri], 25 - pips)
                    if any(b[m - 1] == 1 for m in WAYS[r][1]):
                        n_ch[ri] += 1
        else:
            for r in ways[:2]:
                if WAYS[r][2] == 1 and a_hit[r] >> 24 & 1:
                    n_ch[ri] += 1
                    n_pips[ri] = max(n_pips[ri], 25 - WAYS[r][3])
    w = ROLL_WEIGHT
    np_ = sum(int(n_pips[i]) * int(w[i]) for i in range(21))
    n1 = sum(int(w[i]) for i in range(21) if n_ch[i] > 0)
    n2 = sum(int(w[i]) for i in range(21) if n_ch[i] > 1)
    return np_ / (12.0 * 36.0), n1 / 36.0, n2 / 36.0


# --- vectorised -------------------------------------------------------------------------------------------------

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


def gnubg_halves(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' counts in gnubg's layout from positions ``(N, 26)`` int8 (side on roll): ``(mine, theirs)`` each
    ``(N, 25)`` int16, index k = that side's point k + 1, 24 = its bar."""
    p = np.asarray(positions).astype(np.int16)
    mine = np.maximum(p[:, 1:26], 0)
    theirs = np.maximum(-p[:, 24::-1], 0)  # their point q is our index 25 - q; their bar is our index 0
    return mine, theirs


def features(positions: np.ndarray) -> np.ndarray:
    """Both sides' features, ``(N, 26)`` int8 (side on roll) -> ``(N, 2 * N_SIDE)`` float32: the side on roll's, then
    the opponent's (so encoding ``board.flip(x)`` swaps the halves)."""
    mine, theirs = gnubg_halves(positions)
    return np.concatenate([side_features(mine, theirs), side_features(theirs, mine)], axis=1)
