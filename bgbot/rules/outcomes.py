"""Outcome probabilities and their arithmetic: the five cumulative probabilities ``(w, wg, wbg, lg, lbg)`` of a side
(GNU Backgammon's convention: ``w`` includes gammons and backgammons, ``wg`` includes backgammons), seen from the
other side, as cubeless money equity, and validated.
"""

from __future__ import annotations

import numpy as np

from bgbot.errors import BgbotError

_FLIP = [0, 3, 4, 1, 2]


def flip_probabilities(p):
    """The same outcome seen by the other side: ``(..., 5)`` -> ``(..., 5)`` (numpy or torch), a new array.

    ``(w, wg, wbg, lg, lbg) -> (1 - w, lg, lbg, wg, wbg)``.
    """
    q = p[..., _FLIP]
    q[..., 0] = 1 - q[..., 0]
    return q


def equity(p):
    """Cubeless money equity ``2w - 1 + wg - lg + wbg - lbg``: ``(..., 5)`` -> ``(...)`` (numpy or torch), in points."""
    return 2 * p[..., 0] - 1 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


class ProbabilityError(BgbotError):
    """Probabilities outside [0, 1] or inconsistent (a gammon chance above the win chance, ...)."""


def check_probabilities(probabilities, backgammons: bool = True, repair: bool = False) -> np.ndarray:
    """Validate cumulative probabilities and return them ``(N, 5)`` float64 (a single row becomes N = 1).

    With ``backgammons`` False backgammons count as gammons: the backgammon columns are zeroed. With ``repair``
    (a network's outputs during play, where float32 rounding may break consistency by a little) finite values are
    made consistent instead of refused: clipped to [0, 1], then ``wbg <= wg <= w`` and ``lbg <= lg <= 1 - w`` enforced
    by lowering the gammon and backgammon chances.

    Raises:
        ProbabilityError: wrong shape, a value that is not finite, and (without ``repair``) a value outside [0, 1],
            or wbg > wg > w, lbg > lg > 1 - w broken (1e-6 slack for float32 rounding).
    """
    p = np.array(probabilities, dtype=np.float64)
    if p.ndim == 1:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 5:
        raise ProbabilityError(f"probabilities are (w, wg, wbg, lg, lbg) rows, got shape {p.shape}: {probabilities!r}")
    if not np.all(np.isfinite(p)):
        bad = int(np.flatnonzero(~np.isfinite(p).all(axis=1))[0])
        raise ProbabilityError(
            f"probabilities must be finite numbers, row {bad} is {p[bad].tolist()} (a damaged model?)"
        )
    if repair:
        p = np.clip(p, 0.0, 1.0)
        p[:, 1] = np.minimum(p[:, 1], p[:, 0])
        p[:, 2] = np.minimum(p[:, 2], p[:, 1])
        p[:, 3] = np.minimum(p[:, 3], 1.0 - p[:, 0])
        p[:, 4] = np.minimum(p[:, 4], p[:, 3])
    tol = 1e-6
    if np.any(p < -tol) or np.any(p > 1 + tol):
        raise ProbabilityError(f"probabilities must lie in [0, 1]: {probabilities!r}")
    w, wg, wbg, lg, lbg = p.T
    if np.any(wg > w + tol) or np.any(wbg > wg + tol) or np.any(lg > 1 - w + tol) or np.any(lbg > lg + tol):
        raise ProbabilityError(
            f"inconsistent probabilities (need wbg <= wg <= w and lbg <= lg <= 1 - w): {probabilities!r}"
        )
    p = np.clip(p, 0.0, 1.0)
    if not backgammons:
        p[:, 2] = 0.0
        p[:, 4] = 0.0
    return p
