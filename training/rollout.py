"""Truncated, variance-reduced rollouts at 0-ply: target values that look further ahead than the net.

One implementation: this is :func:`bgbot.arena.rollout.rollout_positions` (trials advanced together by the game
engine, GNU Backgammon's luck-estimation variance reduction, quasi-random first rolls, fixed seeded work units,
exact bear-off values where the databases apply), with the targets' conventions: probabilities clipped to [0, 1],
float32.

The one parser of a rollout kind's name (``plain324``, ``vr108-h8``: :func:`rollout_kind`), as the cost scripts
(``scripts/cost_table.py``, ``scripts/plays_cost.py``) take them.
"""

from __future__ import annotations

import re

import numpy as np

from bgbot.arena.rollout import RolloutSettings, rollout_positions
from bgbot.evaluation.evaluator import PositionEvaluator

ROLLOUT_KIND = re.compile(r"^(?P<how>plain|vr)(?P<trials>\d+)(?:-h(?P<horizon>[1-9]\d*))?$")
"""A rollout kind's name: ``plainT`` (T plain full trials), ``vrT`` (T variance-reduced full trials), ``plainT-hH`` and
``vrT-hH`` (truncated after H >= 1 half-moves, valued at 0-ply; ``-h0`` would be a full rollout under a truncated
label, so it is no kind)."""
ROLLOUT_KINDS = "plainT, vrT, plainT-hH or vrT-hH (H >= 1 half-moves)"
"""The rollout kinds' names as an error message lists them."""


def rollout_kind(kind: str, seed: int = 0, move_filter: bool = False) -> RolloutSettings | None:
    """The rollout settings that ``kind`` names (:data:`ROLLOUT_KIND`: trials, truncation, variance reduction), with
    ``seed`` and ``move_filter`` (:class:`bgbot.arena.rollout.RolloutSettings`); None when ``kind`` is not a rollout
    kind's name (a caller refuses it naming :data:`ROLLOUT_KINDS`, or takes kinds of its own).

    Raises:
        bgbot.arena.rollout.RolloutError: a kind's trials or horizon out of :class:`RolloutSettings`' ranges.
    """
    m = ROLLOUT_KIND.match(kind)
    if not m:
        return None
    return RolloutSettings(
        trials=int(m["trials"]),
        truncate=int(m["horizon"] or 0),
        seed=seed,
        variance_reduction=m["how"] == "vr",
        move_filter=move_filter,
    )


def rollout(
    evaluator: PositionEvaluator,
    positions: np.ndarray,
    trials: int = 36,
    horizon: int = 8,
    seed: int = 0,
    workers: int = 1,
    ray: str | None = None,
    variance_reduction: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Variance-reduced rollouts of pre-roll positions, truncated after ``horizon`` half-moves.

    Args:
        evaluator: the 0-ply player and the value at truncation.
        positions: ``(K, 26)`` int8, side on roll. trials: per position (at least 2). horizon: half-moves played
            before the net values the position. seed: the dice. workers, ray: where the work units run
            (:func:`bgbot.arena.distributed.run_tasks`; the results do not depend on it).
        variance_reduction: GNU Backgammon's luck estimation. It evaluates the best play of all 21 rolls at every
            step, so a trial costs about 35 times as much; measured here (bgbot-2, full rollouts of 32 generation-3
            positions) 288 plain trials gave a standard error of the win probability of 0.028 for 0.45 CPU-s a
            position, 36 variance-reduced trials 0.019 for 2.0 CPU-s: plain trials are about twice as efficient for
            full rollouts (``targets``' ``--no-variance-reduction``, :mod:`training.targets`).

    Returns:
        ``(mean, stderr)``: ``(K, 5)`` float32 the side on roll's probabilities (clipped to [0, 1]) and the standard
        error of each over the trials.
    """
    settings = RolloutSettings(trials=trials, truncate=horizon, seed=seed, variance_reduction=variance_reduction)
    mean, se = rollout_positions(np.asarray(positions, dtype=np.int8), evaluator, settings, workers, ray)
    return np.clip(mean, 0.0, 1.0).astype(np.float32), se.astype(np.float32)
