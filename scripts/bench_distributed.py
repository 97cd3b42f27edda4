"""Throughput of rollouts and tournaments in this process, a 2-worker process pool and a local Ray (JSON).

Rollout: the opening position before the roll, 0-ply, variance reduction, ``--trials`` trials truncated at
``--truncate`` plies (``--trials`` / 72 work units). Tournament: pubeval against itself, ``--games`` cubeless games in
chunks of 50 duplicate pairs. Ray is started once (``ray.init(num_cpus=2)``, its start-up timed apart) and then runs
the same work units; ``ray_overhead`` is Ray's wall time over the pool's. The results of all three runs are checked
for identity (``identical``)::

    python scripts/bench_distributed.py --trials 432 --truncate 10 --games 2000
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from bgbot.arena.rollout import MIN_TRIALS
from bgbot.arena.tournament import MIN_GAMES
from bgbot.errors import int_at_least, run_script


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int_at_least(MIN_TRIALS), default=432, help="rollout trials (default 432)")
    ap.add_argument("--truncate", type=int_at_least(0), default=10, help="plies a trial is truncated at (default 10)")
    ap.add_argument("--games", type=int_at_least(MIN_GAMES, even=True), default=2000, help="games (default 2000)")
    args = ap.parse_args()

    import ray

    from bgbot.api import Bot
    from bgbot.arena import tournament
    from bgbot.arena.rollout import RolloutSettings, _run
    from bgbot.rules.board import starting_position

    ev = Bot.load().evaluator
    pos = np.array([starting_position()])
    s = RolloutSettings(trials=args.trials, truncate=args.truncate, seed=1)
    root = np.ones(1, dtype=bool)

    def rollout(**kw):
        return _run(ev, pos, root, s, **kw)

    def games(**kw):
        r = tournament.run(
            ["pubeval", "pubeval"], tournament.TournamentSettings(args.games, seed=1, chunk_pairs=50, **kw)
        )
        return {
            k: v for k, v in r.items() if k not in ("elapsed_s", "games_per_s", "workers", "worker_restarts", "ray")
        }

    r1, t_r1 = timed(lambda: rollout(workers=1))
    r2, t_r2 = timed(lambda: rollout(workers=2))
    g1, t_g1 = timed(lambda: games(workers=1))
    g2, t_g2 = timed(lambda: games(workers=2))
    _, t_init = timed(lambda: ray.init(num_cpus=2, include_dashboard=False, logging_level=40, log_to_driver=False))
    rr, t_rr = timed(lambda: rollout(ray="local"))
    gr, t_gr = timed(lambda: games(ray="local"))
    ray.shutdown()
    same = {
        "rollout_1_vs_2": bool(np.array_equal(r1, r2)),
        "rollout_1_vs_ray": bool(np.array_equal(r1, rr)),
        "tournament_1_vs_2": g1 == g2,
        "tournament_1_vs_ray": g1 == gr,
    }
    out = {
        "rollout": {
            "trials": args.trials,
            "truncate": args.truncate,
            "trials_per_s": {
                "1": round(args.trials / t_r1, 2),
                "2": round(args.trials / t_r2, 2),
                "ray_2cpus": round(args.trials / t_rr, 2),
            },
            "ray_overhead": round(t_rr / t_r2, 3),
        },
        "tournament": {
            "games": args.games,
            "games_per_s": {
                "1": round(args.games / t_g1, 1),
                "2": round(args.games / t_g2, 1),
                "ray_2cpus": round(args.games / t_gr, 1),
            },
            "ray_overhead": round(t_gr / t_g2, 3),
        },
        "ray_init_s": round(t_init, 2),
        "identical": same,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    run_script(main)
