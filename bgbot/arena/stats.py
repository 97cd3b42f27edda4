"""Statistics of duplicate-game results: points per game with confidence intervals and outcome rates."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def summarize(points_a: np.ndarray) -> dict:
    """Statistics of A's results in duplicate games ``(2P,)`` ints (pairs adjacent): ppg, 95% t-interval over the
    pair means, and win / gammon / backgammon rates of each side (fractions of all games)."""
    p = np.asarray(points_a, dtype=np.float64)
    pair_means = (p[0::2] + p[1::2]) / 2.0
    n = len(pair_means)
    ppg = float(pair_means.mean())
    se = float(pair_means.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    half = float(stats.t.ppf(0.975, n - 1) * se) if n > 1 else float("nan")

    def side(s: float) -> dict:
        won = s * p > 0
        return {
            "win_rate": float(won.mean()),
            "gammon_rate": float((s * p >= 2).mean()),
            "backgammon_rate": float((s * p >= 3).mean()),
        }

    return {
        "games": int(len(p)),
        "pairs": n,
        "ppg": ppg,
        "stderr": se,
        "ci_low": ppg - half,
        "ci_high": ppg + half,
        "ci_half_width": half,
        "stats_a": side(1.0),
        "stats_b": side(-1.0),
    }
