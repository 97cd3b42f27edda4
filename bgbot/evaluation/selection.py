"""Best-play selection over the move generator's plays: the row of the largest value within each parent's run of
afterstates."""

from __future__ import annotations

import numpy as np

from bgbot.errors import BgbotError


class NonFiniteValueError(BgbotError):
    """A play's value is NaN (a damaged model: NaN weights or outputs); no best play can be chosen."""


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

    Raises:
        NonFiniteValueError: a value is NaN (NaN would choose no row at all).
    """
    values = np.asarray(values)
    starts, seg_of_row = _segments(np.asarray(parent))
    seg_max = np.maximum.reduceat(values, starts)  # (N,)
    if np.isnan(seg_max).any():  # maximum propagates NaN: one check per parent, not per row
        bad = int(np.flatnonzero(np.isnan(seg_max))[0])
        raise NonFiniteValueError(
            f"the value of a play is NaN (position {bad} of {len(seg_max)}): the model gives non-finite outputs "
            "(damaged or diverged weights?)"
        )
    rows = np.arange(len(values), dtype=np.int64)
    candidates = np.where(values == seg_max[seg_of_row], rows, len(values))  # (M,)
    return np.minimum.reduceat(candidates, starts)
