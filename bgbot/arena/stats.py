"""Statistics of duplicate-game results, the one home of the arena's intervals.

* **Points per game** (cubeless or cubeful money): the two games of a duplicate pair share their dice and are strongly
  (negatively) correlated, so the *pairs* are the independent samples: ppg is the mean of the pair means and its 95%
  interval is Student's t over the pair means (:func:`t_interval`, ``scipy.stats.t``).
* **Proportions** (match-win rate): Wilson's score interval (``scipy.stats.binomtest(...).proportion_ci``), inside
  [0, 1] by construction, treating matches as independent (conservative: duplicate dice only lower the variance).
* **Ratios of paired mean errors** (:func:`ratio_interval`: one contestant's mean error over another's on the same
  decisions): a paired percentile bootstrap over the decisions (numpy, fixed seed), so the interval is reproducible.
* **Mean errors** (:func:`mean_interval`: a mean equity loss over decisions, or a paired difference of two): the same
  percentile bootstrap. A loss is never negative and neither is any resample's mean, so the interval stays inside the
  feasible range (a normal interval of a few decisions, most losing nothing, reaches below 0). Below
  :data:`MIN_INTERVAL_DECISIONS` decisions it is marked unreliable, as a ppg interval of too few games is.
* **Rankings** (:func:`ranking`): a player's value is the mean of its pairings' values from its side. Its interval
  combines the pairings' standard errors with Welch-Satterthwaite degrees of freedom (ppg), or pools its matches into
  one Wilson interval (match-win rate); with two players it is exactly the pairing's interval.

At least two pairs are needed for a t-interval (:class:`StatsError` otherwise), so an interval is never NaN.

**Too few games for an interval.** The t-interval over pair means leans on the central limit theorem; a pair mean takes
a few discrete values in -3 .. +3 (cubeless), so with few pairs the interval is not to be trusted: with 2 pairs that
happen to agree it has zero width (``[x, x]``), with 2 that differ it reaches far beyond the ±3 ppg a cubeless game
can score. Below :data:`MIN_INTERVAL_GAMES` games (15 pairs) a pairing's ppg interval is therefore marked unreliable
(:func:`interval_note`), as is a ranking row that rests on such a pairing: the JSON keeps the t-interval's numbers
beside ``"interval_reliable": false`` and an ``interval_note`` saying why, the printed table shows "too few games" in
place of the interval, and the gate accepts no candidate on such an interval (:func:`bgbot.arena.benchmark.accepts`).
The interval is never clipped to the feasible range: a clipped interval would look trustworthy and is not. Match-win
rates need no such mark: Wilson's interval stays inside [0, 1] and is never zero-width.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from bgbot.arena.cubeful import A_DOUBLES, A_PASSES, A_TAKES
from bgbot.errors import BgbotError

__all__ = [
    "StatsError",
    "t_interval",
    "wilson",
    "summarize",
    "summarize_wins",
    "summarize_money",
    "summarize_matches",
    "ranking",
    "ratio_interval",
    "mean_interval",
    "CONFIDENCE",
    "BOOTSTRAP_RESAMPLES",
    "MIN_INTERVAL_GAMES",
    "MIN_INTERVAL_DECISIONS",
    "interval_note",
]

CONFIDENCE = 0.95
"""Level of every interval the arena reports."""


BOOTSTRAP_RESAMPLES = 10_000
"""Resamples of :func:`ratio_interval`'s and :func:`mean_interval`'s bootstrap."""


MIN_INTERVAL_GAMES = 30
"""Fewest games of a pairing (15 duplicate pairs) whose ppg interval is reported as reliable (module docstring)."""


MIN_INTERVAL_DECISIONS = 30
"""Fewest decisions whose bootstrap interval of a mean error (:func:`mean_interval`) is reported as reliable: with
fewer, most of them losing nothing, the resamples miss the rare large losses and the interval is too narrow."""


def interval_note(n: int, what: str = "games", least: int = MIN_INTERVAL_GAMES) -> str | None:
    """Why an interval over ``n`` samples (``what``: ``"games"``, duplicate games of a ppg interval, or
    ``"decisions"`` with ``least`` :data:`MIN_INTERVAL_DECISIONS`) is unreliable, or None when it is not (``n`` at
    least ``least``).

    >>> interval_note(4)
    'too few games for a 95% interval: 4 (at least 30)'
    >>> interval_note(30) is None
    True
    >>> interval_note(12, "decisions", MIN_INTERVAL_DECISIONS)
    'too few decisions for a 95% interval: 12 (at least 30)'
    """
    if n >= least:
        return None
    return f"too few {what} for a {CONFIDENCE:.0%} interval: {n} (at least {least})"


class StatsError(BgbotError):
    """Too few samples for an interval (fewer than two duplicate pairs, no matches)."""


def _samples(samples: np.ndarray, too_few: str) -> np.ndarray:
    """``samples`` as a flat float64 array of at least two finite numbers.

    Raises:
        StatsError: fewer than two samples (``too_few``, then the count) or a sample that is not finite.
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    if len(x) < 2:
        raise StatsError(f"{too_few}, got {len(x)}")
    if not np.isfinite(x).all():
        raise StatsError("a sample is not a finite number")
    return x


def t_interval(samples: np.ndarray, confidence: float = CONFIDENCE) -> dict:
    """Mean and Student-t interval of independent samples ``(n,)`` float, n >= 2.

    Returns:
        ``{"mean", "stderr", "ci_low", "ci_high", "ci_half_width", "df"}`` (floats; ``df`` = n - 1). All samples equal
        gives a zero-width interval.

    Raises:
        StatsError: fewer than two samples or a sample that is not finite.

    >>> r = t_interval(np.array([1.0, 0.0, -1.0, 0.0]))
    >>> round(r["mean"], 6), round(r["stderr"], 6), round(r["ci_half_width"], 6)
    (0.0, 0.408248, 1.299228)
    """
    x = _samples(samples, "a confidence interval needs at least 2 independent samples (duplicate pairs)")
    n = len(x)
    mean = float(x.mean())
    se = float(x.std(ddof=1) / math.sqrt(n))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * se)
    return {
        "mean": mean,
        "stderr": se,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "ci_half_width": half,
        "df": n - 1,
    }


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of the proportion ``k / n`` (``scipy.stats.binomtest``), always inside [0, 1].

    Raises:
        StatsError: ``n`` < 1 or ``k`` outside 0..n.

    >>> [round(v, 4) for v in wilson(10, 10)]
    [0.7225, 1.0]
    """
    if n < 1 or not 0 <= k <= n:
        raise StatsError(f"a proportion needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def summarize(points_a: np.ndarray) -> dict:
    """Statistics of A's results in duplicate games ``(2P,)`` ints (pairs adjacent, P >= 2): ppg, its 95% t-interval
    over the pair means (:func:`t_interval`) with ``interval_reliable`` (bool: at least :data:`MIN_INTERVAL_GAMES`
    games) and ``interval_note`` (:func:`interval_note`: why not, or None), and win / gammon / backgammon rates of each
    side (fractions of all games).

    Raises:
        StatsError: fewer than two pairs.
    """
    p = np.asarray(points_a, dtype=np.float64)
    pair_means = (p[0::2] + p[1::2]) / 2.0
    t = t_interval(pair_means)

    def side(s: float) -> dict:
        won = s * p > 0
        return {
            "win_rate": float(won.mean()),
            "gammon_rate": float((s * p >= 2).mean()),
            "backgammon_rate": float((s * p >= 3).mean()),
        }

    return {
        "games": int(len(p)),
        "pairs": len(pair_means),
        "ppg": t["mean"],
        "stderr": t["stderr"],
        "ci_low": t["ci_low"],
        "ci_high": t["ci_high"],
        "ci_half_width": t["ci_half_width"],
        "df": t["df"],
        "interval_reliable": interval_note(len(p)) is None,
        "interval_note": interval_note(len(p)),
        "stats_a": side(1.0),
        "stats_b": side(-1.0),
    }


def summarize_wins(won: np.ndarray) -> dict:
    """A's match-win rate over matches ``(M,)`` bool (duplicate pairs adjacent) with its Wilson interval (``ci_low``,
    ``ci_high``, repeated as ``wilson_low``, ``wilson_high``), the t standard error over duplicate pairs (``stderr``),
    and the win counts (``stderr`` is None with a single pair).

    >>> r = summarize_wins(np.array([True] * 8 + [False] * 2))
    >>> r["match_win_rate"], round(r["ci_low"], 4), round(r["ci_high"], 4)
    (0.8, 0.4902, 0.9433)
    """
    won = np.asarray(won, dtype=bool)
    k, n = int(won.sum()), len(won)
    lo, hi = wilson(k, n)
    pair_means = (won[0::2].astype(np.float64) + won[1::2]) / 2.0
    se = float(pair_means.std(ddof=1) / math.sqrt(len(pair_means))) if len(pair_means) > 1 else None
    rate = k / n
    return {
        "matches": n,
        "pairs": len(pair_means),
        "match_win_rate": rate,
        "stderr": se,
        "ci_low": lo,
        "ci_high": hi,
        "ci_half_width": (hi - lo) / 2,
        "wilson_low": lo,
        "wilson_high": hi,
        "wins_a": k,
        "wins_b": n - k,
    }


def ratio_interval(
    numerator: np.ndarray,
    denominator: np.ndarray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 2026,
    confidence: float = CONFIDENCE,
) -> dict:
    """Ratio of two paired means, ``mean(numerator) / mean(denominator)``, with its percentile bootstrap interval.

    The samples are paired (``numerator[i]`` and ``denominator[i]`` measured on the same decision), so each resample
    draws ``n`` decisions with replacement and keeps both values of each: the interval accounts for the correlation
    between the two. A resample whose denominator sums to 0 has ratio +inf (0 when its numerator sums to 0 too), so a
    small or zero anchor widens the interval upwards instead of failing; the point ratio follows the same rule.

    Args:
        numerator, denominator: ``(n,)`` floats, finite and >= 0 (e.g. equity lost per decision), n >= 2.
        resamples: bootstrap resamples (drawn from ``numpy.random.default_rng(seed)``, in chunks of 1,000).
        confidence: level of the interval (equal tails).

    Returns:
        ``{"ratio", "ci_low", "ci_high", "decisions", "resamples", "seed"}``; ``ci_high`` may be ``inf``.

    Raises:
        StatsError: fewer than two pairs, arrays of different shapes, or a value that is negative or not finite.

    >>> r = ratio_interval(np.array([2.0, 4.0, 0.0, 6.0]), np.array([1.0, 2.0, 0.0, 3.0]), resamples=200)
    >>> r["ratio"], r["ci_low"], r["ci_high"]
    (2.0, 2.0, 2.0)
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    if num.ndim != 1 or num.shape != den.shape:
        raise StatsError(f"a paired ratio needs two 1-d arrays of one length, got shapes {num.shape} and {den.shape}")
    n = len(num)
    if n < 2:
        raise StatsError(f"a bootstrap interval needs at least 2 paired samples, got {n}")
    if not (np.isfinite(num).all() and np.isfinite(den).all() and (num >= 0).all() and (den >= 0).all()):
        raise StatsError("a paired ratio needs finite, non-negative samples")
    if resamples < 10:
        raise StatsError(f"a bootstrap interval needs at least 10 resamples, got {resamples}")

    def ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.where(a > 0, np.inf, 0.0))

    sums = _resampled_sums([num, den], resamples, seed)
    low, high = _percentiles(ratio(sums[0], sums[1]), confidence)
    return {
        "ratio": float(ratio(np.array([num.sum()]), np.array([den.sum()]))[0]),
        "ci_low": float(low),
        "ci_high": float(high),
        "decisions": n,
        "resamples": resamples,
        "seed": seed,
    }


def _resampled_sums(samples: list[np.ndarray], resamples: int, seed: int) -> np.ndarray:
    """The bootstrap's resamples: ``resamples`` draws of ``n`` indices with replacement (from
    ``numpy.random.default_rng(seed)``, in chunks of 1,000), the same draws for every array of ``samples`` (``(n,)``
    each: paired) -> ``(len(samples), resamples)`` float64, each array's sum over each draw."""
    n = len(samples[0])
    rng = np.random.default_rng(seed)
    draws = []
    for start in range(0, resamples, 1000):
        idx = rng.integers(0, n, size=(min(1000, resamples - start), n))
        draws.append(np.stack([x[idx].sum(axis=1) for x in samples]))
    return np.concatenate(draws, axis=1)


def _percentiles(boot: np.ndarray, confidence: float) -> tuple[float, float]:
    """The equal-tailed percentile interval ``(low, high)`` of the bootstrap statistics ``boot`` ``(R,)``."""
    boot = np.sort(boot)
    resamples = len(boot)
    tail = (1.0 - confidence) / 2.0
    low = boot[int(math.floor(tail * resamples))]
    high = boot[min(int(math.ceil((1.0 - tail) * resamples)) - 1, resamples - 1)]
    return float(low), float(high)


def mean_interval(
    samples: np.ndarray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 2026,
    confidence: float = CONFIDENCE,
) -> dict:
    """Mean of independent samples (e.g. the equity lost at each decision, or a paired difference of two models'
    losses) with its percentile bootstrap interval (the resampling of :func:`ratio_interval`).

    The interval holds only values some resample's mean takes, so it stays inside the samples' range: the interval of
    a loss (>= 0) never reaches below 0, as a normal interval of few decisions does. Below
    :data:`MIN_INTERVAL_DECISIONS` samples it is marked unreliable (:func:`interval_note`), its numbers kept.

    Args:
        samples: ``(n,)`` finite floats, n >= 2.
        resamples: bootstrap resamples (drawn from ``numpy.random.default_rng(seed)``, in chunks of 1,000).
        confidence: level of the interval (equal tails).

    Returns:
        ``{"mean", "ci_low", "ci_high", "n", "interval_reliable", "interval_note", "resamples", "seed"}``
        (``interval_note`` None when reliable).

    Raises:
        StatsError: fewer than two samples, a sample that is not finite, or fewer than 10 resamples.

    >>> r = mean_interval(np.array([0.0, 0.0, 0.0, 0.3]), resamples=1000)
    >>> r["mean"], r["ci_low"], r["interval_reliable"]
    (0.075, 0.0, False)
    """
    x = _samples(samples, "a bootstrap interval needs at least 2 samples")
    n = len(x)
    if resamples < 10:
        raise StatsError(f"a bootstrap interval needs at least 10 resamples, got {resamples}")
    low, high = _percentiles(_resampled_sums([x], resamples, seed)[0] / n, confidence)
    note = interval_note(n, "decisions", MIN_INTERVAL_DECISIONS)
    return {
        "mean": float(x.mean()),
        "ci_low": low,
        "ci_high": high,
        "n": n,
        "interval_reliable": note is None,
        "interval_note": note,
        "resamples": resamples,
        "seed": seed,
    }


def ranking(names: list[str], pairings: list[tuple[int, int]], rows: list[dict], key: str = "ppg") -> list[dict]:
    """Each player's mean ``key`` (``"ppg"`` or ``"match_win_rate"``) over its pairings from its own side (B's ppg is
    -ppg, its match-win rate 1 - rate), with a 95% interval, best first.

    ppg: mean of the pairings' ppg, standard error ``sqrt(sum se_i^2) / k``, Student t with Welch-Satterthwaite degrees
    of freedom (the pairing's own ``df`` when k = 1). Match-win rate: the Wilson interval of all its matches pooled.
    Either way, with two players each one's interval is its pairing's interval (mirrored for B).

    A ppg interval that rests on a pairing of too few games (``interval_reliable`` false in its row, :func:`summarize`)
    is unreliable too, with that pairing's note; a match-win rate's (Wilson) always is reliable.

    Returns:
        One dict per player: ``player``, ``key``, ``value`` (the same mean), ``ci_low``, ``ci_high``, ``ci_half_width``
        (half the interval's width), ``interval_reliable``, ``interval_note`` (None when reliable), ``pairings``.
    """
    out = []
    for p, name in enumerate(names):
        mine = [(row, p == i) for (i, j), row in zip(pairings, rows) if p in (i, j)]
        k = len(mine)
        if key == "match_win_rate":
            wins = sum(r["wins_a"] if is_a else r["wins_b"] for r, is_a in mine)
            total = sum(r["matches"] for r, _ in mine)
            mean = wins / total
            lo, hi = wilson(wins, total)
        elif k == 1:
            r, is_a = mine[0]
            mean = r[key] if is_a else -r[key]
            lo, hi = (r["ci_low"], r["ci_high"]) if is_a else (-r["ci_high"], -r["ci_low"])
        else:
            vals = [r[key] if is_a else -r[key] for r, is_a in mine]
            var = [r["stderr"] ** 2 for r, _ in mine]
            mean = float(np.mean(vals))
            se = math.sqrt(sum(var)) / k
            den = sum(v * v / r["df"] for v, (r, _) in zip(var, mine))
            df = sum(var) ** 2 / den if den > 0 else float(sum(r["df"] for r, _ in mine))
            half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, df) * se)
            lo, hi = mean - half, mean + half
        notes = [] if key == "match_win_rate" else [r["interval_note"] for r, _ in mine if r.get("interval_note")]
        out.append(
            {
                "player": name,
                key: mean,
                "value": mean,
                "ci_low": lo,
                "ci_high": hi,
                "ci_half_width": (hi - lo) / 2,
                "interval_reliable": not notes,
                "interval_note": notes[0] if notes else None,
                "pairings": k,
            }
        )
    return sorted(out, key=lambda r: -r["value"])


# -- cubeful sessions and matches (from bgbot.arena.cubeful's chunks) -----------------------------------------


def _actions(counts: np.ndarray) -> dict:
    """``(2, 3)`` counts -> ``{"a": {"doubles", "takes", "passes"}, "b": {...}}``."""
    return {
        s: {"doubles": int(counts[r, A_DOUBLES]), "takes": int(counts[r, A_TAKES]), "passes": int(counts[r, A_PASSES])}
        for r, s in ((0, "a"), (1, "b"))
    }


def summarize_money(chunks: list) -> dict:
    """Statistics of a pairing's cubeful money games (:class:`bgbot.arena.cubeful.CubefulChunk` list): :func:`summarize`'s ppg and 95% t-interval
    over duplicate pairs (points include the cube), each side's win / gammon / backgammon rates (games played out to
    a gammon or backgammon, whatever the cube) and pass-win rate, the cube actions of each player, the mean final
    cube value and the distribution of starting cubes (:func:`starting_cubes`, automatic doubles)."""
    points = np.concatenate([c.points_a for c in chunks])
    kind = np.concatenate([c.kind for c in chunks])
    cubes = np.concatenate([c.cube for c in chunks])
    out = summarize(points)

    def side(s: int) -> dict:
        won = s * points > 0
        return {
            "win_rate": float(won.mean()),
            "gammon_rate": float((won & (kind >= 2)).mean()),
            "backgammon_rate": float((won & (kind >= 3)).mean()),
            "won_by_pass_rate": float((won & (kind == 0)).mean()),
        }

    counts = np.sum([c.counts for c in chunks], axis=0)
    return {
        **out,
        "starting_cubes": starting_cubes(np.concatenate([c.start_cube for c in chunks])),
        "stats_a": side(1),
        "stats_b": side(-1),
        "cube_actions": _actions(counts),
        "mean_final_cube": float(cubes.mean()),
        "max_cube": int(cubes.max()),
        "mean_plies": float(np.concatenate([c.plies for c in chunks]).mean()),
    }


def starting_cubes(start_cube: np.ndarray) -> dict:
    """The distribution of starting cube values of duplicate games ``(2P,)`` (pairs adjacent; both games of a pair
    share the opening roll, so the pairs are the samples): ``{value: {"games", "share", "ci_low", "ci_high"}}`` with
    the share's 95% Wilson interval over pairs (:func:`wilson`). With one automatic double allowed the share at 2
    should be 1/6 (the chance of a tied opening roll)."""
    pairs = np.asarray(start_cube)[0::2]
    out = {}
    for v in np.unique(start_cube):
        k = int((pairs == v).sum())
        low, high = wilson(k, len(pairs))
        out[str(int(v))] = {
            "games": int((start_cube == v).sum()),
            "share": k / len(pairs),
            "ci_low": low,
            "ci_high": high,
        }
    return out


def summarize_matches(chunks: list) -> dict:
    """Statistics of a pairing's matches: A's match-win rate with its 95% Wilson interval (:func:`bgbot.arena.stats.
    summarize_wins`: ``ci_low``, ``ci_high``, repeated as ``wilson_low``, ``wilson_high``), games per match, cube
    actions, mean cube value of the games played."""
    won = np.concatenate([c.points_a for c in chunks]) > 0
    games = np.concatenate([c.games for c in chunks])
    cubes = [v for c in chunks for g in c.game_cubes for v in g]
    counts = np.sum([c.counts for c in chunks], axis=0)
    return {
        **summarize_wins(won),
        "games_played": int(games.sum()),
        "mean_games_per_match": float(games.mean()),
        "cube_actions": _actions(counts),
        "mean_cube": float(np.mean(cubes)),
        "max_cube": int(max(cubes)),
        "final_scores": np.concatenate([c.score for c in chunks]).tolist(),
    }
