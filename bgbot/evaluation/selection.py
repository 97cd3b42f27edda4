"""Best-play selection over the move generator's plays: the row of the largest value within each parent's run of
afterstates."""

from __future__ import annotations

import numpy as np


def _segments(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start row of each run of equal values in sorted ``parent`` ``(N,)`` and each row's run number ``(M,)``."""
    starts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])  # (N,)
    seg_of_row = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(parent)]))  # (M,)
    return starts, seg_of_row


def segment_argmax(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Row of the largest value in each run of equal ``parent``, ``(M,)`` float, ``(M,)`` int sorted -> ``(N,)`` int64.

    ``parent`` is sorted ascending and every parent 0 .. N-1 has at least one row (the move generator's contract), so
    result ``i`` is the row chosen for parent ``i``. Ties go to the first row. No Python loop: one ``reduceat`` for
    the segment maxima and one for the first row reaching it.
    """
    values = np.asarray(values)
    starts, seg_of_row = _segments(np.asarray(parent))
    seg_max = np.maximum.reduceat(values, starts)  # (N,)
    rows = np.arange(len(values), dtype=np.int64)
    candidates = np.where(values == seg_max[seg_of_row], rows, len(values))  # (M,)
    return np.minimum.reduceat(candidates, starts)
