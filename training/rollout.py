"""Truncated, variance-reduced rollouts at 0-ply: target values that look further ahead than the net.

For each start position (side on roll X) ``trials`` games are played ``horizon`` half-moves deep by the 0-ply player,
then valued by the net (finished games exactly). Variance reduction as GNU Backgammon's rollout.c: at every half-move,
for all 21 rolls the best play is found and valued at 0-ply; their 36-weighted mean minus the value after the roll
drawn is that half-move's luck, accumulated in X's view and subtracted from the trial's result. Quasi-random dice:
trial ``t``'s first roll is ordered roll ``t mod 36``, so 36 trials cover each first roll exactly once; later rolls
are drawn from the seeded generator.

Everything is on the 5 cumulative probabilities (win, wg, wbg, lg, lbg); a difference of probabilities seen by the
other side is ``(-d_w, d_lg, d_lbg, d_wg, d_wbg)``.
"""

from __future__ import annotations

import numpy as np

from bgbot.evaluation.evaluator import PositionEvaluator, afterstate_probabilities, position_probabilities
from bgbot.evaluation.selection import segment_argmax
from bgbot.rules.board import game_result
from bgbot.rules.movegen import ROLLS, generate_all_rolls
from bgbot.rules.outcomes import equity, flip_probabilities

_ORDERED = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)])  # (36, 2)
_UNORDERED_INDEX = {tuple(r): i for i, r in enumerate(ROLLS.tolist())}
ORDERED_TO_21 = np.array([_UNORDERED_INDEX[(min(a, b), max(a, b))] for a, b in _ORDERED])  # (36,)
ROLL_W = np.where(ROLLS[:, 0] == ROLLS[:, 1], 1.0, 2.0) / 36.0


def _flip_diff(d: np.ndarray) -> np.ndarray:
    """A difference of probabilities seen by the other side, ``(..., 5)``."""
    return np.stack([-d[..., 0], d[..., 3], d[..., 4], d[..., 1], d[..., 2]], axis=-1)


def rollout(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    trials: int = 36,
    horizon: int = 8,
    seed: int = 0,
    chunk_trials: int = 384,
) -> tuple[np.ndarray, np.ndarray]:
    """Variance-reduced truncated rollouts of pre-roll positions.

    Args:
        evaluator: the 0-ply player and the value at truncation.
        positions: ``(K, 26)`` int8, side on roll. trials: per position. horizon: half-moves played before the net
            values the position. seed: later rolls' generator. chunk_trials: trials advanced together (memory).

    Returns:
        ``(mean, stderr)``: ``(K, 5)`` float32 the side on roll's probabilities (clipped to [0, 1]) and the standard
        error of each over the trials.
    """
    positions = np.asarray(positions, dtype=np.int8)
    k = len(positions)
    start = np.repeat(positions, trials, axis=0)  # (K*T, 26), row r = position r // T, trial r % T
    first = np.tile(np.arange(trials) % 36, k)
    rng = np.random.default_rng(seed)
    results = np.empty((k * trials, 5))
    for c0 in range(0, k * trials, chunk_trials):
        rows = slice(c0, min(c0 + chunk_trials, k * trials))
        results[rows] = _trials(evaluator, start[rows], first[rows], horizon, rng)
    res = results.reshape(k, trials, 5)
    mean = np.clip(res.mean(axis=1), 0.0, 1.0).astype(np.float32)
    stderr = (res.std(axis=1, ddof=1) / np.sqrt(trials)).astype(np.float32) if trials > 1 else np.zeros_like(mean)
    return mean, stderr


def _trials(evaluator, cur: np.ndarray, first: np.ndarray, horizon: int, rng) -> np.ndarray:
    """Result ``(R, 5)`` in the start side's view of each trial row (see :func:`rollout`)."""
    n = len(cur)
    cur = cur.copy()
    luck = np.zeros((n, 5))
    final = np.zeros((n, 5))
    done = np.zeros(n, dtype=bool)
    for h in range(horizon):
        live = np.flatnonzero(~done)
        if len(live) == 0:
            break
        plays, _ = generate_all_rolls(cur[live])
        probs = afterstate_probabilities(evaluator, plays.afterstates)  # (M, 5) the mover's view, exact if finished
        best = segment_argmax(equity(probs), plays.parent).reshape(len(live), 21)
        best_p = probs[best].astype(np.float64)  # (L, 21, 5)
        mu = np.einsum("lrf,r->lf", best_p, ROLL_W)
        ordered = first[live] if h == 0 else rng.integers(0, 36, size=len(live))
        r = ORDERED_TO_21[ordered]
        v = best_p[np.arange(len(live)), r]  # (L, 5)
        d = v - mu
        mine = h % 2 == 0  # the start side moves at even half-moves
        luck[live] += d if mine else _flip_diff(d)
        nxt = plays.afterstates[best[np.arange(len(live)), r]]
        over = game_result(nxt) != 0
        final[live[over]] = v[over] if mine else flip_probabilities(v[over])
        done[live[over]] = True
        cur[live] = nxt
    live = np.flatnonzero(~done)
    if len(live):
        p = position_probabilities(evaluator, cur[live]).astype(np.float64)  # side on roll after `horizon` moves
        final[live] = p if horizon % 2 == 0 else flip_probabilities(p)
    return final - luck
