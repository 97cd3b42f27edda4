"""The move filter's bias on rollouts: the same positions rolled out with and without it (JSON on stdout).

A plain rollout through the model's own move filter (:attr:`bgbot.arena.rollout.RolloutSettings.move_filter`) plays
a slightly different player than the model at 0-ply: where the filter drops the model's best play, the trial's game
goes another way. This measures what that does to the results. The positions are the first ``--positions`` of the
held-out campaign store (default ``models/candidates/campaign-1-holdout``: 200 positions of bgbot-5's self-play, read
by :func:`bgbot.formats.store.reference_positions`); each is rolled out twice with the same settings and seed (plain,
0-ply, cubeless, untruncated, quasi-random dice, the bear-off databases on, ``--trials`` trials), once evaluating
every play, once through the filter, so the two meet the same dice in trial ``i`` (common random numbers: the
difference is measured more precisely than either rollout).

Reported, in cubeless money equity (points) and the win probability, filtered minus exact: the mean over positions
with its standard error and 95% interval (``1.96 * sd / sqrt(n)`` over the positions' differences), the root mean
square difference, and each rollout's equity error against the store's own (5,184-trial) rollouts; each rollout's CPU
seconds (this process, one core) and their ratio, the filter's speed-up at these settings::

    python scripts/filter_bias.py --positions 200 --trials 324

Measured for bgbot-5 and ``models/prune/bgbot-5.pt`` (2026-12-02, all 200 positions, filtered minus exact equity):
324 plain trials, seed 11: -0.0024 (95% [-0.0047, -0.0000]), seed 12: +0.0015 ([-0.0008, +0.0038]), the two
seeds pooled -0.0004 +- 0.0008 (se); 36 variance-reduced trials, seed 11 (the same dice as the plain seed 11's
first 36 trials): -0.0026 ([-0.0048, -0.0005]). Speed-up 1.25-1.32 (plain, 28 positions a unit), 1.62 (variance
reduction).

``--variance-reduction``: the same with GNU Backgammon's luck estimation in both rollouts (the filter then also
picks each roll's best play for the luck; the difference is measured with far less noise per trial).

Usage: ``python scripts/filter_bias.py [--positions 200] [--trials 324] [--seed 11] [--variance-reduction]
[--reference STORE]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot.errors import BgbotError, int_at_least, run_script  # noqa: E402

DEFAULT_REFERENCE = "models/candidates/campaign-1-holdout"


def summary(d: np.ndarray) -> dict:
    """Mean, standard error (sample sd over the rows / sqrt(n)), 95% interval and root mean square of ``d`` ``(n,)``."""
    se = float(d.std(ddof=1) / np.sqrt(len(d)))
    m = float(d.mean())
    return {
        "mean": round(m, 5),
        "se": round(se, 5),
        "ci95": [round(m - 1.96 * se, 5), round(m + 1.96 * se, 5)],
        "rms": round(float(np.sqrt((d**2).mean())), 5),
    }


def measure(reference: str, n_positions: int, trials: int, seed: int, vr: bool = False) -> dict:
    """Roll out the first ``n_positions`` positions of ``reference`` with and without the shipped model's own move
    filter; the JSON fields of the module docstring.

    Raises:
        BgbotError: the shipped model has no filter of its own, or the store has no finished part.
    """
    from threadpoolctl import threadpool_limits

    from bgbot.api import Bot
    from bgbot.arena.rollout import RolloutSettings, rollout_positions
    from bgbot.evaluation import bearoff, prune
    from bgbot.evaluation.network import set_threads
    from bgbot.formats.store import reference_positions
    from bgbot.rules.outcomes import equity

    set_threads()
    bearoff.load()
    pos, ref = reference_positions([reference])
    pos, ref = pos[:n_positions], ref[:n_positions]
    bot = Bot.load()
    found = prune.filter_for(bot.path) if bot.path else None
    if found is None:
        raise BgbotError(f"the model {bot.path} has no move filter of its own (prune/<name>.pt)")
    evaluator = prune.PrunedEvaluator(bot.evaluator, found)
    probs, cpu = {}, {}
    with threadpool_limits(1):
        for name in ("exact", "filtered"):
            settings = RolloutSettings(trials=trials, seed=seed, variance_reduction=vr, move_filter=name != "exact")
            t0 = time.process_time()
            probs[name], _ = rollout_positions(pos, evaluator, settings)
            cpu[name] = time.process_time() - t0
    eq = {k: equity(v) for k, v in probs.items()}
    ref_eq = equity(ref)
    return {
        "model": bot.path,
        "filter": {"keep": found.keep, "extra": found.extra, "margin": found.margin},
        "reference": reference,
        "positions": len(pos),
        "trials": trials,
        "seed": seed,
        "settings": f"{'variance reduction' if vr else 'plain (no variance reduction)'}, 0-ply, cubeless, "
        "no truncation, quasi-random dice, databases on",
        "equity_difference": summary(eq["filtered"] - eq["exact"]),
        "win_difference": summary(probs["filtered"][:, 0] - probs["exact"][:, 0]),
        "equity_rmse_against_reference": {
            k: round(float(np.sqrt(((v - ref_eq) ** 2).mean())), 5) for k, v in eq.items()
        },
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "filter_speedup": round(cpu["exact"] / cpu["filtered"], 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int_at_least(2), default=200, help="held-out positions (the first N)")
    ap.add_argument("--trials", type=int_at_least(2), default=324, help="trials of each position in each rollout")
    ap.add_argument("--seed", type=int_at_least(0), default=11, help="the rollouts' dice seed")
    ap.add_argument("--variance-reduction", action="store_true", help="luck estimation in both rollouts")
    ap.add_argument("--reference", default=DEFAULT_REFERENCE, help="the held-out campaign store")
    args = ap.parse_args()
    print(json.dumps(measure(args.reference, args.positions, args.trials, args.seed, args.variance_reduction)))


if __name__ == "__main__":
    run_script(main)
