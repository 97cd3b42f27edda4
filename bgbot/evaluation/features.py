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
#
# Layout: checkers point-major, ``(25, M)`` int8 (row k = index k of every position: each row a contiguous vector), both
# sides stacked (``M = 2N``: the side on roll's view, then the opponent's), so every step is a short chain of cheap
# operations on ``(M,)`` vectors. Point sets are ``(M,)`` uint32 bitmasks (bit k = index k). The other side's masks are
# the same masks with the halves swapped (and bit-reversed for "its points in our numbering"). Values are built as
# small integers and divided once (a float32 quotient of two integers below 2**24 is the float64 quotient rounded to
# float32: double rounding is innocuous for division when 53 >= 2 * 24 + 2) or read from float32 tables computed in
# float64, so every value equals the plain definitions'.

_U = np.uint32
_FULL24, _FULL25 = _U((1 << 24) - 1), _U((1 << 25) - 1)


def _popcount_index_sum() -> np.ndarray:
    """``(4096,)`` int16: sum of the bit positions set in a 12-bit mask."""
    return np.array([sum(i for i in range(12) if m >> i & 1) for m in range(4096)], dtype=np.int16)


_BITSUM12 = _popcount_index_sum()
_POP12 = np.array([bin(m).count("1") for m in range(4096)], dtype=np.int16)
_TIMING_HI = 2 * (_BITSUM12 + 12 * _POP12)
"""``(4096,)`` int16 by our made points on indices 12..23 above the other side's back checker (bit i = index 12 + i):
the pips timing does not count (2 checkers of each such point, index i + 12 each)."""
_TWICE_POP12 = 2 * _POP12
_ANCHORS16 = 16 * np.minimum(_POP12[:64], 2).astype(np.intp)  # by a 6-bit mask: min(points, 2) * 16
_BACK_SHIFT = np.array([min(max(24 - tb, 0), 24) for tb in range(-1, 25)], dtype=np.uint32)
_BACK_WINDOW = np.array([(1 << min(max(tb, 0), 12)) - 1 for tb in range(-1, 25)], dtype=np.uint32)
"""By the other side's rearmost index + 1 (0..25): the shift and the mask of our made points ahead of it (at most 12)."""
_ESC8 = ESCAPES.astype(np.int8)  # (4096,) escapes <= 36
_ESC_F = (ESCAPES / 36.0).astype(np.float32)
_ESC1_F = (ESCAPES1 / 36.0).astype(np.float32)
_ESC4 = sum(ESCAPES[(np.arange(1 << 15) >> j) & 4095] << (8 * j) for j in range(4)).astype("<u4")
"""``(32768,)`` by a 15-bit window ``x``: the escapes of the 12-bit windows ``x >> j``, ``j = 0..3``, in byte ``j``."""
_MOB_W = np.arange(1, 20, dtype=np.int16)  # (19,) mobility's weights i - 5 of indices i = 6..24
_CONTAIN_F = ((36 - np.arange(37)) / 36.0).astype(np.float32)  # by the minimum escapes 0..36
_CONTAIN2_F = (((36 - np.arange(37)) / 36.0) ** 2).astype(np.float32)


def _forward_table() -> np.ndarray:
    """``(4096,)`` float32: forward_anchor by the 12-bit made-point mask of indices 12..23 (the anchor search)."""
    out = np.empty(4096, dtype=np.float32)
    for m in range(4096):
        home = [j for j in range(6) if m >> (6 + j) & 1]  # indices 18..23: the lowest
        outer = [j for j in range(6) if m >> j & 1]  # indices 12..17: the highest
        fwd = 24 - (18 + home[0]) if home else (24 - (12 + outer[-1]) if outer else 0)
        out[m] = 2.0 if fwd == 0 else fwd / 6.0
    return out


_FORWARD = _forward_table()
_ENTER_F = np.concatenate([np.zeros((64, 1)), ENTER_LOSS / (36.0 * 49.0 / 6.0)], axis=1).astype(np.float32).ravel()
"""``(64 * 3,)`` float32 by ``closed * 3 + min(bar, 2)``: enter (0 with no checker on the bar)."""
_ENTER2_F = np.array([(36 - (bin(c).count("1") - 6) ** 2) / 36.0 for c in range(64)], dtype=np.float32)
_BACKBONE_W = np.array(
    [sum(int(_CONNECT[y + 1]) for y in range(11) if m >> y & 1) for m in range(2048)], dtype=np.int16
)  # (2048,) connectivity of the 11 points below the front point: bit y = distance y + 1
_BACKBONE_F = np.array(
    [[1.0 - w / (c * 11.0) if c > 0 else 0.0 for w in range(128)] for c in range(24)], dtype=np.float32
).ravel()  # (24 * 128,) by cnt * 128 + w
_BACKG_F = np.array(
    [[(t - 3) / 4.0 if k > 1 else 0.0 for t in range(16)] for k in range(3)], dtype=np.float32
).ravel()  # (3 * 16,) by min(anchors, 2) * 16 + checkers
_BACKG1_F = np.array([[t / 8.0 if k == 1 else 0.0 for t in range(16)] for k in range(3)], dtype=np.float32).ravel()
_NON_DOUBLES = tuple((d1, d2) for d2 in range(1, 7) for d1 in range(1, d2))  # 15 rolls, weight 2
_DIVIDE = {  # column -> denominator of its integer numerator
    "off1": 5.0,
    "off2": 5.0,
    "off3": 5.0,
    "break_contact": 167.0,
    "back_chequer": 24.0,
    "back_anchor": 24.0,
    "piploss": 12.0 * 36.0,
    "p1": 36.0,
    "p2": 36.0,
    "mobility": 3600.0,
    "moment2": 400.0,
    "timing": 100.0,
    "freepip": 100.0,
}


def _divide_runs() -> list[tuple[int, int, np.ndarray]]:
    """:data:`_DIVIDE` as runs of consecutive columns: ``(first, end, denominators (end - first, 1) float32)``."""
    cols = sorted(COL[name] for name in _DIVIDE)
    runs: list[list[int]] = []
    for c in cols:
        if runs and runs[-1][-1] == c - 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    dens = {COL[name]: den for name, den in _DIVIDE.items()}
    return [(r[0], r[-1] + 1, np.array([[dens[c]] for c in r], dtype=np.float32)) for r in runs]


_DIVIDE_RUNS = _divide_runs()


def _top(x: np.ndarray) -> np.ndarray:
    """Highest set bit of ``(M,)`` uint32 masks below 2**24 (exact in float32: its exponent), -1 for 0: int32."""
    # (converted as int32: numpy converts uint32 to float32 several times slower)
    return np.maximum((x.view(np.int32).astype(np.float32).view(np.int32) >> 23) - 127, -1)


def _top25(x: np.ndarray) -> np.ndarray:
    """Highest set bit of ``(M,)`` uint32 masks below 2**25, -1 for 0: int32."""
    return np.where(x >> 24 != 0, 24, _top(x & _FULL24))


FEW_COLUMNS = 256
"""Columns (positions of both sides) up to which :func:`_pack` and :func:`_sides` work along the rows of a small batch
with one ``np.packbits`` / ``np.cumsum`` each, instead of a numpy call per row: several times faster for the few
afterstates of a rollout's last games in flight; over more columns the strided passes are slower. The same bits and
integers either way."""


def _pack(rows: np.ndarray) -> np.ndarray:
    """Up to 32 rows ``(K, M)`` bool (``M`` a multiple of 8) -> ``(M,)`` uint32, bit k = row k.

    A byte of 8 rows at a time, 8 positions per operation: on the rows viewed as uint64 (each byte 0 or 1), a shift by
    ``k < 8`` moves every byte's bit 0 to its bit k without crossing into the next byte. The 4 bytes of a position
    are read as one little-endian uint32 (numpy's native order on the platforms bgbot runs on)."""
    k_rows, m = rows.shape
    out = np.zeros((m, 4), dtype=np.uint8)
    if m <= FEW_COLUMNS:  # byte g of a column: bit k = row 8g + k, as below
        out[:, : (k_rows + 7) // 8] = np.packbits(rows, axis=0, bitorder="little").T
        return out.view("<u4")[:, 0].astype(_U, copy=False)
    u = rows.view(np.uint8)
    for g in range(0, k_rows, 8):
        byte = u[g].view(np.uint64).copy()
        for k in range(1, min(8, k_rows - g)):
            byte |= u[g + k].view(np.uint64) << np.uint64(k)
        out[:, g // 8] = byte.view(np.uint8)
    return out.view("<u4")[:, 0].astype(_U, copy=False)


def _masks(a: np.ndarray) -> dict[str, np.ndarray]:
    """Point-set masks of checkers ``(25, M)`` int8 (index-major, ``M`` a multiple of 8): each ``(M,)`` uint32.

    ``nz`` (>= 1, bit 24 the bar), ``one`` (exactly 1), ``made`` (>= 2), ``two6`` (exactly 2, indices 0..5), and
    ``rone``/``rmade``: ``one``/``made`` of indices 0..23 bit-reversed (bit 23 - k = index k), i.e. as the other side
    numbers them.
    """
    one, made = _pack(a == 1), _pack(a >= 2)
    return {
        "nz": one | made,
        "one": one,
        "made": made,
        "two6": _pack(a[:6] == 2),
        "rone": _reverse24(one),
        "rmade": _reverse24(made),
    }


_REV12 = np.array([int(f"{i:012b}"[::-1], 2) for i in range(1 << 12)], dtype=_U)  # 12-bit reversal


def _reverse24(x: np.ndarray) -> np.ndarray:
    """Bits 0..23 of ``(M,)`` uint32 masks reversed (bit k -> bit 23 - k; bit 24 dropped)."""
    out = _REV12.take((x & _U(4095)).astype(np.intp))
    out <<= _U(12)
    out |= _REV12.take(((x >> _U(12)) & _U(4095)).astype(np.intp))
    return out


_SWAPPED = ("made", "rone", "rmade")
"""The other side's masks that :func:`_sides` reads when the batch is stacked."""


def _swap(x: np.ndarray, n: int) -> np.ndarray:
    """``(2n, ...)`` -> its halves swapped (the other side's view of a stacked batch)."""
    return np.concatenate([x[n:], x[:n]])


def _point_major(positions: np.ndarray) -> tuple[np.ndarray, int]:
    """Positions ``(N, 26)`` int8 -> both sides' checkers ``(25, 2H)`` int8 in gnubg's layout (index k = point k + 1,
    24 = the bar) and ``H``: ``N`` rounded up to a multiple of 4 (padding columns are empty boards). Columns ``0..N-1``
    the side on roll, ``H..H+N-1`` the opponent."""
    x = np.asarray(positions, dtype=np.int8)  # (N, 26), read transposed by the ufuncs: no transposing copy
    n = len(x)
    h = -(-n // 4) * 4
    a = np.zeros((25, 2 * h), dtype=np.int8) if h != n else np.empty((25, 2 * h), dtype=np.int8)
    np.maximum(x[:, 1:26].T, 0, out=a[:, :n])
    np.minimum(x[:, 24::-1].T, 0, out=a[:, h : h + n])
    np.negative(a[:, h : h + n], out=a[:, h : h + n])
    return a, h


def _escapes_by_index(made: np.ndarray) -> np.ndarray:
    """Escapes past the points ``made`` ``(M,)`` uint32 (bit k = index k of the side that holds them) of a checker of
    the other side on its index ``i = 6..24`` (the 12 points ahead of it, fewer near the end): ``(19, M)`` int8, row
    ``i - 6`` (a view with reversed rows).

    Window ``i`` is ``(made >> (24 - i)) & 4095`` of the 24 point bits; four consecutive windows are read at once from
    :data:`_ESC4` by a 15-bit window, five reads for the 19."""
    m24 = made & _FULL24
    packed = np.empty((5, len(made)), dtype="<u4")
    for g in range(5):
        np.take(_ESC4, ((m24 >> _U(4 * g)) & _U(0x7FFF)).astype(np.intp), out=packed[g])
    by_shift = packed.view(np.int8).reshape(5, len(made), 4).transpose(0, 2, 1).reshape(20, len(made))  # row = shift
    return by_shift[18::-1]


def _sides(
    a: np.ndarray,
    ma: dict[str, np.ndarray],
    mb: dict[str, np.ndarray],
    half: int | None = None,
    off_out: np.ndarray | None = None,
    skip: int = 0,
) -> np.ndarray:
    """The ``N_SIDE`` features ``(N_SIDE, M)`` float32 of sides ``a`` ``(25, M)`` int8 (index-major, gnubg layout),
    given ``a``'s masks ``ma`` and the other side's ``mb`` (:func:`_masks`). ``half``: when the batch is stacked (the
    other side of column ``c`` is column ``c + half`` modulo ``M``, as :func:`_point_major` lays it out), ``half``, so
    that what the sides share is computed once; else ``None``. ``off_out``, if given, ``(M,)`` int16, receives each
    column's borne-off count. ``skip``: rows ``0..skip-1`` are left undefined (not computed)."""
    m = a.shape[1]
    out = np.empty((N_SIDE, m), dtype=np.float32)
    num = np.empty((N_SIDE, m), dtype=np.int16)  # integer numerators of the _DIVIDE columns
    # Suffix sums over indices: s0[k] = sum_{i >= k} a_i, t0[k] = sum_{j >= k} s0[j] = sum_{i >= k} (i - k + 1) a_i,
    # u0[k] = sum_{j >= k} t0[j] = sum_{i >= k} (i - k + 1)(i - k + 2) / 2 a_i (zero rows past the end): every
    # weighted count below is a combination of them at one index.
    s0 = np.zeros((27, m), dtype=np.int8)
    t0 = np.zeros((27, m), dtype=np.int16)
    u0 = np.zeros((27, m), dtype=np.int16)
    if m <= FEW_COLUMNS:  # three running sums down the reversed rows (the same integers)
        np.cumsum(a[::-1], axis=0, dtype=np.int8, out=s0[24::-1])
        np.cumsum(s0[24::-1], axis=0, dtype=np.int16, out=t0[24::-1])
        np.cumsum(t0[24::-1], axis=0, dtype=np.int16, out=u0[24::-1])
    else:
        for k in range(24, -1, -1):
            np.add(s0[k + 1], a[k], out=s0[k])
            np.add(t0[k + 1], s0[k], out=t0[k])
            np.add(u0[k + 1], t0[k], out=u0[k])
    s0f, t0f, u0f = s0.ravel(), t0.ravel(), u0.ravel()
    total = s0[0].astype(np.int16)
    off = 15 - total
    if off_out is not None:
        off_out[:] = off
    if skip < 3:
        np.minimum(off, 5, out=num[COL["off1"]])
        np.clip(off - 5, 0, 5, out=num[COL["off2"]])
        np.clip(off - 10, 0, 5, out=num[COL["off3"]])
    made, nz = ma["made"], ma["nz"]
    back = _top25(nz)
    # the other side's rearmost index in its numbering: ob = 23 - their_back
    their_back = _top25(mb["nz"]) if half is None else _swap(back, half)
    ob = 23 - their_back  # -1..24
    cols = np.arange(m)
    # break contact: sum over i >= k = ob + 1 of (i - k + 2) a_i; free pips: sum over i < ob of (i + 1) a_i, i.e.
    # t0[0] less sum over i >= ob' of (i + 1) a_i = t0[ob'] + ob' s0[ob']
    k1 = (ob + 1) * m + cols
    num[COL["break_contact"]] = t0f.take(k1) + s0f.take(k1)
    ob0 = np.maximum(ob, 0)
    k0 = ob0 * m + cols
    num[COL["freepip"]] = t0[0] - t0f.take(k0) - ob0.astype(np.int16) * s0f.take(k0)
    # timing: every checker on 6..24 counts i pips, less 2 checkers of each point 12..23 above ob made by us
    above = made & (_FULL24 << np.clip(ob + 1, 0, 24).astype(_U)) & _U(0xFFF000)
    hi = (above >> _U(12)).astype(np.intp)
    t = 6 * s0[6].astype(np.int16) + t0[7] - _TIMING_HI.take(hi)
    no = s0[6] - _TWICE_POP12.take(hi)
    for i in range(5, -1, -1):  # the home board, highest point first: spares fill the gaps
        e = a[i] - np.int16(2)
        e *= (no + e) >= 0
        no += e
        if i:
            t += e * np.int16(i)
    np.maximum(t, 0, out=num[COL["timing"]])
    num[COL["back_chequer"]] = back
    anchor = _top(made & _FULL24)
    num[COL["back_anchor"]] = anchor  # made points never lie behind the rearmost checker
    out[COL["forward_anchor"]] = _FORWARD.take(((made >> _U(12)) & _U(4095)).astype(np.intp))
    _hits(a, ma, mb, num)
    # escapes of the other side's rearmost checker (index their_back in its numbering) past our points
    tb1 = (their_back + 1).astype(np.intp)
    win = ((made >> _BACK_SHIFT.take(tb1)) & _BACK_WINDOW.take(tb1)).astype(np.intp)
    out[COL["backescapes"]] = _ESC_F.take(win)
    out[COL["backrescapes"]] = _ESC1_F.take(win)
    # escapes past our points of a checker of the other side on its index i = 6..24 (row i - 6; its window of up to
    # 12 points ahead): the containment of the other side's checkers (rows 15..24) and, the halves of a stacked batch
    # swapped, the other side's mobility
    esc = _escapes_by_index(made)  # (19, m) int8
    # containment: the least escapes from indices 15..23 (and 15..their_back); runs[k] = least over 15..14 + k
    runs = np.empty((11, m), dtype=np.int8)
    runs[0] = 36
    for k in range(1, 11):
        np.minimum(runs[k - 1], esc[k + 8], out=runs[k])
    ai = runs.ravel().take(np.clip(their_back - 14, 0, 10) * m + cols).astype(np.intp)
    ci = runs[9].astype(np.intp)
    out[COL["acontain"]], out[COL["acontain2"]] = _CONTAIN_F.take(ai), _CONTAIN2_F.take(ai)
    out[COL["contain"]], out[COL["contain2"]] = _CONTAIN_F.take(ci), _CONTAIN2_F.take(ci)
    # mobility: checkers on 6..24 weighted by (i - 5) and their escapes past the other side's points
    esc_b = _escapes_by_index(mb["made"]) if half is None else np.concatenate([esc[:, half:], esc[:, :half]], axis=1)
    prod = np.multiply(a[6:25], esc_b, dtype=np.int16)  # (19, m): at most 15 * 36
    np.einsum("i,ij->j", _MOB_W, prod, out=num[COL["mobility"]])  # at most 19 * 15 * 36: int16
    # second moment behind the mean (integer ceilings): with k = mean + 1, sum over i >= k of a_i (i - k + 1)^2 is
    # 2 u0[k] - t0[k]; the sum of i a_i is t0[1]
    # (ceilings of quotients of integers up to 8640 by 1..15: exact in float32, the gap to an integer at least 1/15)
    mean = t0[1].astype(np.float32)
    mean /= np.maximum(total, 1).astype(np.float32)
    km = np.ceil(mean, out=mean).astype(np.intp)
    km += 1
    km *= m
    km += cols
    j2 = np.maximum(s0f.take(km), 1).astype(np.float32)
    sq = (2 * u0f.take(km) - t0f.take(km)).astype(np.float32)
    sq /= j2
    num[COL["moment2"]] = np.ceil(sq, out=sq)
    # entering
    closed = (mb["made"] & _U(63)).astype(np.intp)
    out[COL["enter"]] = _ENTER_F.take(closed * 3 + np.minimum(a[24], 2))
    out[COL["enter2"]] = _ENTER2_F.take(closed)
    # backbone: connectivity of our points 1..23 behind the most advanced one; in the reversed mask (bit 23 - i =
    # index i) the 11 indices below the front point pa are bits 24 - pa .. 34 - pa (bit y: distance y + 1); pa is
    # the back anchor but where that is index 0 (then no point counts: the window shifted by 24 is empty either way)
    rpts = ma["rmade"] & _U(0x7FFFFF)
    window = ((rpts >> (24 - np.maximum(anchor, 0)).astype(_U)) & _U(0x7FF)).astype(np.intp)
    below = np.maximum(np.bitwise_count(rpts).astype(np.intp) - 1, 0)
    out[COL["backbone"]] = _BACKBONE_F.take(below * 128 + _BACKBONE_W.take(window))
    # back games: anchors in the other side's home board and our checkers there and on the bar
    kb = _ANCHORS16.take(((made >> _U(18)) & _U(63)).astype(np.intp)) + s0[18]
    out[COL["backg"]] = _BACKG_F.take(kb)
    out[COL["backg1"]] = _BACKG1_F.take(kb)
    for lo, hi, den in _DIVIDE_RUNS:
        lo = max(lo, skip)
        if lo < hi:
            np.divide(num[lo:hi], den[lo - hi :], out=out[lo:hi])
    return out


def _two_on_bar_table() -> np.ndarray:
    """``(64, 3)`` int16 by the other side's blots on our indices 18..23 (bit 6 - d = index 24 - d): (pips, p1, p2)
    numerators with two or more of our checkers on the bar (only direct shots from the bar count)."""
    out = np.zeros((64, 3), dtype=np.int16)
    for code in range(64):
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                dice = (d1,) if d1 == d2 else (d1, d2)
                hits = [d for d in dice if code >> (6 - d) & 1]
                w = 1 if d1 == d2 else 2
                out[code] += (max((25 - d for d in hits), default=0) * w, (len(hits) > 0) * w, (len(hits) > 1) * w)
    return out


_TWO_ON_BAR = _two_on_bar_table()


_OFF_BAR_CHUNK = 4096
"""Rows :func:`_off_bar` takes at a time: its ``(24, R)`` uint32 blocks stay within a core's L2 cache."""


def _hits(a: np.ndarray, ma: dict[str, np.ndarray], mb: dict[str, np.ndarray], num: np.ndarray) -> None:
    """Numerators of piploss (pips x rolls out of 36), p1 and p2 (rolls out of 36) into ``num`` (see
    :func:`_hits_scalar`; the rules are restated here on bitmasks).

    Masks in OUR numbering: ``hit`` our checkers that may hit (home points with exactly two excluded), ``blots`` the
    other side's blots we may aim at (not on our 1- and 2-points while we have fewer than three home points), ``blot_all``
    all its blots, ``open_`` points it has not made (the bar, bit 24, open).
    """
    hit = ma["nz"] & ~ma["two6"]
    blot_all = mb["rone"]
    n_board = np.bitwise_count(ma["nz"] & _U(63))
    blots = np.where(n_board > 2, blot_all, blot_all & _U(~3 & 0xFFFFFF))
    open_ = ~mb["rmade"] & _FULL25
    bar = a[24]
    low_blot = blots & (~blots + _U(1))  # the lowest blot's bit (0 for none)
    some = (blots != 0) & (hit >= (low_blot << _U(1)))  # a hitter above the lowest blot: else nothing can hit
    pips, one, two = num[COL["piploss"]], num[COL["p1"]], num[COL["p2"]]
    pips[:] = 0
    one[:] = 0
    two[:] = 0
    rows_all = np.flatnonzero(some & (bar == 0))
    for lo in range(0, len(rows_all), _OFF_BAR_CHUNK):  # (K, R) blocks that stay in cache
        rows = rows_all[lo : lo + _OFF_BAR_CHUNK]
        pips[rows], one[rows], two[rows] = _off_bar(
            hit[rows], blots[rows], blot_all[rows], open_[rows], ma["one"][rows]
        )
    rows = np.flatnonzero(some & (bar == 1))
    if len(rows):
        pips[rows], one[rows], two[rows] = _one_on_bar(hit[rows], blots[rows], blot_all[rows], open_[rows])
    rows = np.flatnonzero(some & (bar > 1))
    if len(rows):
        t = _TWO_ON_BAR[((blots[rows] >> _U(18)) & _U(63)).astype(np.intp)]
        pips[rows], one[rows], two[rows] = t[:, 0], t[:, 1], t[:, 2]


def _rowsum(x: np.ndarray) -> np.ndarray:
    """``(K, R)`` int16 or bool (``K < 256``) -> ``(R,)`` the sum of the rows, int16 or uint8 (summed in that width:
    numpy's default would widen to int64, several times slower)."""
    if x.dtype == bool:
        return np.add.reduce(x.view(np.uint8), axis=0, dtype=np.uint8)
    return np.add.reduce(x, axis=0, dtype=np.int16)


def _wsum(x: np.ndarray) -> np.ndarray:
    """``(21, R)`` bool or non-negative int32 by roll (15 non-doubles, then 6 doubles) -> ``(R,)`` the sum weighted by
    the rolls' chances out of 36 (2 and 1): uint8 from bool (at most 36), else int32. (Sums in the operand's own
    width: numpy's default would widen to int64, several times slower.)"""
    if x.dtype == bool:
        u = x.view(np.uint8)
        out = np.add.reduce(u[:15], axis=0, dtype=np.uint8)
        out <<= 1
        out += np.add.reduce(u[15:], axis=0, dtype=np.uint8)
        return out
    out = np.add.reduce(x[:15], axis=0, dtype=np.int32)
    out <<= 1
    out += np.add.reduce(x[15:], axis=0, dtype=np.int32)
    return out


_DIST24 = np.arange(1, 25, dtype=_U)[:, None]  # (24, 1) the distances 1..24
_DIST18 = _DIST24[:18]
_D6 = _DIST24[:6]  # (6, 1) the dice


def _off_bar(hit, blots, blot_all, open_, single):
    """No checker on the bar: (pips, p1, p2) numerators ``(R,)`` from ``(R,)`` uint32 masks.

    For a roll ``d1 d2`` the blots hit are those ``d1`` or ``d2`` below a hitter, or ``d1 + d2`` below one with the
    point ``d1`` or ``d2`` above the blot open (doubles: ``k d`` below with every point ``j d`` above open); the pips
    lost are those of the highest blot hit (its index + 1). Two checkers are hit when the two direct shots' highest
    hitters differ (or are one point with company), when a double's direct shot has two hitters, or when a
    combination's highest hitter passes a blot on the way. "The highest bit of ``x`` lies in ``y`` (a subset)" is
    ``y > x ^ y``.

    Rolls are rows of ``(K, R)`` blocks (fewer, larger numpy calls): ``hb`` row ``s - 1`` the hitters with a blot ``s``
    below (``s = 1..24``), so that a double's ``k d`` for ``d = 1..6`` is the strided view ``hb[k - 1 : 6 k : k]``; the
    non-doubles go by their larger die ``d2`` (the smaller ``d1 = 1..d2 - 1`` a slice of the six dice's rows). The hit
    sets ``(21, R)`` (15 non-doubles, then 6 doubles) are tallied at once.
    """
    r = len(hit)
    hb = hit & (blots << _DIST24)  # (24, R) bit j: a hitter on j, a blot s below
    ol = open_ << _DIST18  # (18, R) row s - 1: the point s above each index open
    al = blot_all << _DIST18  # (18, R) the same for a blot
    hb6 = hb[:6]
    direct = hb6 >> _D6  # (6, R) blots hit directly by a d
    ex = hb6.view(np.int32).astype(np.float32).view(np.int32) >> 23  # 127 + the highest hitter of a direct d, or 0
    hits = ex > 0
    lone = hb6 & single
    company = lone <= (hb6 ^ lone)  # the highest hitter of a direct d has company (not alone on its point)
    h_all = np.empty((21, r), dtype=_U)
    two_all = np.empty((21, r), dtype=bool)
    row = 0
    for d2 in range(2, 7):
        k = d2 - 1  # rolls d1 d2, d1 = 1..k
        h, two = h_all[row : row + k], two_all[row : row + k]
        c = hb[d2 : 2 * d2 - 1] & (ol[:k] | ol[k])  # combination hitters (s = d1 + d2 = d2 + 1 .. 2 d2 - 1)
        np.bitwise_or(direct[:k], direct[k], out=h)
        h |= c >> _DIST24[d2 : 2 * d2 - 1]
        np.bitwise_and(hits[:k], hits[k], out=two)
        two &= (ex[:k] != ex[k]) | company[:k]  # two direct shots, two checkers
        way = c & (al[:k] | al[k])
        two |= way > (c ^ way)
        row += k
    h, two = h_all[15:], two_all[15:]
    h[:] = direct
    np.not_equal(hb6 & (hb6 - _U(1)), 0, out=two)
    need, on_way = ol[:6], al[:6]
    for k in range(2, 5):
        if k > 2:
            need = need & ol[k - 2 : 6 * k - 6 : k - 1]  # (k - 1) d above
            on_way = on_way | al[k - 2 : 6 * k - 6 : k - 1]
        c = hb[k - 1 : 6 * k : k] & need
        h |= c >> (_D6 * _U(k))
        way = c & on_way
        two |= way > (c ^ way)
    e = h_all.view(np.int32).astype(np.float32).view(np.int32)  # the hit sets lie below 2**24: exact
    e >>= 23  # 127 + the highest blot hit, 0 for none
    n1 = _wsum(h_all != 0)  # rolls hitting
    pips = _wsum(e)
    pips -= 126 * n1.astype(np.int32)  # sum of weight x (highest bit + 1) over hitting rolls
    return pips, n1, _wsum(two_all)


def _bits(mask: np.ndarray) -> np.ndarray:
    """``(R,)`` uint32 -> ``(32, R)`` bool, row k = bit k."""
    return np.unpackbits(mask.view(np.uint8).reshape(-1, 4).T, axis=0, bitorder="little").view(bool)


_ND1 = np.array([d1 for d1, _ in _NON_DOUBLES])  # (15,) the smaller die of each non-double
_ND2 = np.array([d2 for _, d2 in _NON_DOUBLES])
_D = np.arange(1, 7)  # (6,) the doubles' die


_P1 = (25 - _ND1)[:, None].astype(np.int16)  # (15, 1) pips lost entering on a blot with the smaller die
_P2 = (25 - _ND2)[:, None].astype(np.int16)  # the same with the larger die
_P12 = (25 - _ND1 - _ND2)[:, None].astype(np.int16)  # with both dice
_PK = [(25 - k * _D)[:, None].astype(np.int16) for k in range(5)]  # (6, 1) a double's k steps from the bar


def _one_on_bar(hit, blots, blot_all, open_):
    """One checker on the bar: (pips, p1, p2) numerators ``(R,)`` from ``(R,)`` uint32 masks, all rolls at once
    (``(15, R)`` non-doubles, ``(6, R)`` doubles: few rows have one checker on the bar).

    Direct shots from the bar (blots on 24 - d); a direct shot elsewhere (the highest hitter, the first die that has
    one) when the other die enters; combinations from the bar (every intermediate open, a second checker when one of
    them is a blot).
    """
    r = len(hit)
    bb, bo, ba = _bits(blots), _bits(open_), _bits(blot_all)
    xs = (hit & _U(0xFFFFFE)) & (blots << _D.astype(_U)[:, None])  # (6, R) direct hitters off the bar, by die
    xnz = xs != 0
    top = np.maximum(_top(xs) - _D[:, None] + 1, 0).astype(np.int16)  # pips lost to the direct shot elsewhere
    # non-doubles
    e1, e2 = 24 - _ND1, 24 - _ND2
    b1, b2, o1, o2 = bb[e1], bb[e2], bo[e1], bo[e2]
    also0 = xnz[_ND1 - 1] & o2
    also1 = xnz[_ND2 - 1] & ~also0 & o1
    b3 = bb[24 - _ND1 - _ND2] & (o1 | o2)
    c = b1.astype(np.int8) + b2 + also0 + also1
    pp = np.maximum(b1 * _P1, b2 * _P2)
    pp = np.maximum(pp, also0 * top[_ND1 - 1])
    pp = np.maximum(pp, also1 * top[_ND2 - 1])
    pp = np.maximum(pp, b3 * _P12)
    n1 = (c > 0) | b3
    n2 = (c > 1) | (b3 & (ba[e1] | ba[e2]))
    # doubles
    b = bb[24 - _D]
    also0 = xnz & bo[24 - _D]
    ppd = np.maximum(b * _PK[1], also0 * top)
    n1d = b | also0
    n2d = b & also0
    need = np.ones((6, r), dtype=bool)
    on_way = np.zeros((6, r), dtype=bool)
    for k in range(2, 5):
        need &= bo[24 - (k - 1) * _D]
        on_way |= ba[24 - (k - 1) * _D]
        bk = bb[24 - k * _D] & need
        ppd = np.maximum(ppd, bk * _PK[k])
        n1d |= bk
        n2d |= bk & on_way
    pips = 2 * _rowsum(pp) + _rowsum(ppd)
    return pips, 2 * _rowsum(n1) + _rowsum(n1d), 2 * _rowsum(n2) + _rowsum(n2d)


def side_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The ``N_SIDE`` features of one side for a batch: ``a`` ``(N, 25)`` its checkers, ``b`` ``(N, 25)`` the other
    side's, each in its owner's numbering (index k = point k + 1, 24 = bar), non-negative ints -> ``(N, N_SIDE)``
    float32. See the module docstring; :func:`side_features_scalar` is the reference."""
    n = len(a)
    m = -(-n // 8) * 8
    at = np.zeros((25, m), dtype=np.int8)
    bt = np.zeros((25, m), dtype=np.int8)
    at[:, :n] = np.asarray(a).T
    bt[:, :n] = np.asarray(b).T
    return np.ascontiguousarray(_sides(at, _masks(at), _masks(bt))[:, :n].T)


def gnubg_halves(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' counts in gnubg's layout from positions ``(N, 26)`` int8 (side on roll): ``(mine, theirs)`` each
    ``(N, 25)`` int16, index k = that side's point k + 1, 24 = its bar."""
    p = np.asarray(positions).astype(np.int16)
    mine = np.maximum(p[:, 1:26], 0)
    theirs = np.maximum(-p[:, 24::-1], 0)  # their point q is our index 25 - q; their bar is our index 0
    return mine, theirs


def features_t(positions: np.ndarray) -> np.ndarray:
    """:func:`features` feature-major: ``(N, 26)`` int8 -> ``(2 * N_SIDE, N)`` float32 (row k = column k of
    :func:`features`); its transpose is what a first layer multiplies, without a transposing copy."""
    return features_t_and_masks(positions)[0]


def features_t_and_masks(positions: np.ndarray, skip: int = 0) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """:func:`features_t` and the point-set masks that :func:`bgbot.evaluation.encoding.sparse_encode` would compute
    for the same positions (its ``masks`` argument, see :func:`_encoding_masks`), from the masks computed here: encoding
    v2's two parts share one pass over the checkers.

    ``skip``: leave out each side's first ``skip`` features (rows ``0..skip-1`` and ``N_SIDE..N_SIDE+skip-1``):
    ``(2 * (N_SIDE - skip), N)`` float32. The evaluators fold the borne-off features (``skip=3``) into the first
    layer's table, by the borne-off counts (``bgbot.evaluation.specialists.EvaluatorV2``)."""
    f_t, masks, _ = v2_parts(positions, skip)
    return f_t, masks


def v2_parts(positions: np.ndarray, skip: int = 0) -> tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray]:
    """:func:`features_t_and_masks` and both sides' borne-off counts ``(N, 2)`` int32 (the side on roll's, the
    opponent's): what :func:`bgbot.evaluation.encoding.sparse_encode` takes as ``masks`` and ``off``."""
    n = len(positions)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros((2 * (N_SIDE - skip), 0), dtype=np.float32), (empty,) * 7, np.zeros((0, 2), dtype=np.int32)
    a, h = _point_major(positions)
    ma = _masks(a)
    mb = {k: _swap(ma[k], h) for k in _SWAPPED}
    off = np.empty(2 * h, dtype=np.int16)
    f = _sides(a, ma, mb, h, off, skip)  # (N_SIDE, 2H)
    offs = np.empty((n, 2), dtype=np.int32)
    offs[:, 0], offs[:, 1] = off[:n], off[h : h + n]
    return np.concatenate([f[skip:, :n], f[skip:, h : h + n]]), _encoding_masks(ma, h, n), offs


OFF_VALUES = np.array(
    [[min(n, 5) / 5, min(max(n - 5, 0), 5) / 5, min(max(n - 10, 0), 5) / 5] for n in range(16)], dtype=np.float32
)
"""``(16, 3)`` float32: off1, off2, off3 (the first three features of a side) by its borne-off count 0..15, the values
:func:`features` gives."""


def _encoding_masks(ma: dict[str, np.ndarray], h: int, n: int) -> tuple[np.ndarray, ...]:
    """The masks of ``bgbot.evaluation.encoding._expert_counts`` (bit k = index k of the ``(N, 26)`` position, int64):
    ``(mine, theirs, mine2, theirs2, r_mine, r_theirs, r_mine2)`` (``r_`` = bit-reversed over 26 bits, as the
    opponent numbers them), from :func:`_masks` of a stacked batch (columns ``0..n-1`` the side on roll, ``h..h+n-1``
    the opponent; gnubg index k of a side = its point k + 1, 24 its bar).

    The side on roll's index k is the position's index k + 1; the opponent's index k is the position's 24 - k (its bar,
    k = 24, the position's index 0). The reversed 24-bit masks ``rone | rmade`` (bit 23 - k = index k) shifted up by
    one put index k < 24 at bit 24 - k; the bar goes to bit 0."""

    def part(key: str, lo: int) -> np.ndarray:
        return ma[key][lo : lo + n].astype(np.int64)

    nz_me, nz_op, made_me, made_op = part("nz", 0), part("nz", h), part("made", 0), part("made", h)
    rnz_me = part("rone", 0) | part("rmade", 0)
    rnz_op = part("rone", h) | part("rmade", h)
    mine, mine2, r_theirs = nz_me << 1, made_me << 1, nz_op << 1
    theirs = (rnz_op << 1) | (nz_op >> 24)
    theirs2 = (part("rmade", h) << 1) | (made_op >> 24)
    r_mine = (rnz_me << 1) | (nz_me >> 24)
    r_mine2 = (part("rmade", 0) << 1) | (made_me >> 24)
    return mine, theirs, mine2, theirs2, r_mine, r_theirs, r_mine2


def features(positions: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Both sides' features, ``(N, 26)`` int8 (side on roll) -> ``(N, 2 * N_SIDE)`` float32: the side on roll's, then
    the opponent's (so encoding ``board.flip(x)`` swaps the halves).

    ``out``, if given, is a ``(N, 2 * N_SIDE)`` float32 array (a view into a wider input matrix is fine) that receives
    the features and is returned. Both sides are computed in one pass (:func:`_sides` on the stacked batch).
    """
    n = len(positions)
    if out is None:
        out = np.empty((n, 2 * N_SIDE), dtype=np.float32)
    if n == 0:
        return out
    a, h = _point_major(positions)
    ma = _masks(a)
    mb = {k: _swap(ma[k], h) for k in _SWAPPED}
    f = _sides(a, ma, mb, h)  # (N_SIDE, 2H)
    out[:, :N_SIDE] = f[:, :n].T
    out[:, N_SIDE:] = f[:, h : h + n].T
    return out
