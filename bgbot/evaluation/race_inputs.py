"""GNU Backgammon's race-net inputs that encoding v2 lacks, vectorised over ``(M, 26)`` int8 positions, with a scalar
twin.

Source: GNU Backgammon's race net inputs (gnubg ``eval.c``, ``CalculateRaceInputs`` and the ``RI_OFF`` /
``RI_NCROSS`` input layout; the same in gnubg 0.14 to 1.x). Per side, in that side's own numbering, gnubg's race net
reads 107 inputs:

* 92 point units, points 1..23, four each: ``n == 1``, ``n == 2``, ``n >= 3``, ``(n - 3) / 2`` if ``n > 3``. Encoding
  v1's Tesauro units ``n >= 1``, ``n >= 2``, ``n >= 3``, ``(n - 3) / 2`` span the same space (``[n == 1] = [n >= 1] -
  [n >= 2]``, ``[n == 2] = [n >= 2] - [n >= 3]``) and cover all 24 points: nothing is missing there.
* ``RI_OFF + k``, k = 0..13: 1.0 when exactly ``k + 1`` checkers of the side are borne off, else 0.0. Encoding v2 has
  the borne-off count only through piecewise-linear units (``off / 15``; off1..off3 with knots at 5 and 10): the
  one-hot units are new.
* ``RI_NCROSS``: the side's crossovers by outside checkers, / 10: the sum over its checkers on points 7..24 of the
  quarters (of six points) each must still cross to reach its home board: 1 on points 7..12, 2 on 13..18, 3 on
  19..24. Checkers on the bar are not counted. Linear in v1's point units, but not one of v2's inputs.

So the inputs here, :data:`N_SIDE` = 15 per side, the side on roll's then the opponent's (its own numbering), are:

=================  =====================================================================================================
name               definition (``n_off`` = 15 - the side's checkers on the board and bar)
=================  =====================================================================================================
off_eq1 .. off_eq14  ``1.0`` if ``n_off == k`` (k = 1..14) else ``0.0``
crossovers         ``sum over points p = 7..24 of checkers(p) * ((p - 1) // 6)``, / 10
=================  =====================================================================================================

They are defined for every position (not only races); encoding v3 (:mod:`bgbot.evaluation.specialists`) appends them to
v2's 253 inputs for the race net. :func:`race_inputs` is the vectorised version, :func:`race_inputs_scalar` its
plain-Python twin (the tests compare them on thousands of positions).
"""

from __future__ import annotations

import numpy as np

from bgbot.evaluation.encoding import EncodingError
from bgbot.rules.board import NUM_CHECKERS

N_OFF = 14
"""One-hot borne-off units per side: exactly 1 .. 14 checkers off."""
N_SIDE = N_OFF + 1
"""Inputs per side: the borne-off units, then crossovers."""
CROSSOVER_SCALE = 10.0
"""Crossovers are divided by this (gnubg's scale)."""

NAMES: tuple[str, ...] = tuple(
    f"{side}_{name}" for side in ("my", "opp") for name in [f"off_eq{k}" for k in range(1, N_OFF + 1)] + ["crossovers"]
)
"""Name of each of the ``2 * N_SIDE`` inputs, in column order."""

_QUARTER = np.array([0] + [(p - 1) // 6 for p in range(1, 25)] + [0], dtype=np.int32)
"""``(26,)`` quarters to cross of a checker of the side on roll on index p (points 1..24; 0 on both bars)."""
_QUARTER_THEIRS = np.array([0] + [(24 - j) // 6 for j in range(1, 25)] + [0], dtype=np.int32)
"""``(26,)`` the same for an opponent's checker on index j (its point 25 - j)."""
_OFF_COUNTS = np.arange(1, N_OFF + 1, dtype=np.int32)  # (14,)


def _check(positions: np.ndarray) -> np.ndarray:
    x = np.asarray(positions)
    if x.ndim != 2 or x.shape[1] != 26 or not np.issubdtype(x.dtype, np.integer):
        raise EncodingError(f"positions are (M, 26) integer arrays, got shape {x.shape} dtype {x.dtype}")
    return x


def race_inputs(positions: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The ``2 * N_SIDE`` = 30 inputs (see the module docstring) of positions ``(M, 26)`` int (side on roll, its
    checkers positive, the opponent's negative; index 25 its bar, 0 the opponent's) -> ``(M, 30)`` float32: columns
    0..14 the side on roll's, 15..29 the opponent's. Written into ``out`` ``(M, 30)`` float32 when given.

    Raises:
        EncodingError: ``positions`` is not a 2-D integer array with 26 columns.
    """
    x = _check(positions)
    m = len(x)
    if out is None:
        out = np.empty((m, 2 * N_SIDE), dtype=np.float32)
    mine = np.maximum(x, 0).astype(np.int32)  # (M, 26)
    theirs = np.maximum(-x.astype(np.int32), 0)  # (M, 26)
    for side, (counts, quarter) in enumerate(((mine, _QUARTER), (theirs, _QUARTER_THEIRS))):
        base = side * N_SIDE
        off = NUM_CHECKERS - counts.sum(axis=1)  # (M,) int
        out[:, base : base + N_OFF] = off[:, None] == _OFF_COUNTS
        out[:, base + N_OFF] = (counts @ quarter).astype(np.float32) / np.float32(CROSSOVER_SCALE)
    return out


def race_inputs_scalar(position) -> list[float]:
    """:func:`race_inputs` of one position (26 ints, a sequence or array) in plain Python: 30 floats, each computed
    in float32 as the vectorised version does (a test compares them exactly).

    Raises:
        EncodingError: ``position`` does not hold 26 integers.
    """
    p = [int(v) for v in np.asarray(position).reshape(-1)]
    if len(p) != 26:
        raise EncodingError(f"a position holds 26 integers, got {len(p)}")
    out: list[float] = []
    for side in (1, -1):
        # the side's checkers by its own point number: index j holds the side on roll's point j, the opponent's 25 - j
        own = [0] * 26
        for j in range(26):
            n = side * p[j]
            if n > 0:
                own[j if side == 1 else 25 - j] = n
        n_off = NUM_CHECKERS - sum(own)
        out += [1.0 if n_off == k else 0.0 for k in range(1, N_OFF + 1)]
        crossings = 0
        for point in range(7, 25):  # own[25], the side's bar, is not counted
            crossings += own[point] * ((point - 1) // 6)
        out.append(float(np.float32(crossings) / np.float32(CROSSOVER_SCALE)))
    return out
