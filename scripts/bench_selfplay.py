"""Benchmark self-play speed: inference-only self-play against GNU Backgammon's, and training with learning on.

Prints one JSON object from one run:

* ``selfplay_games_per_s``: games per second of the model (default: the shipped one) playing itself at 0-ply with
  no learning (batched: ``--games-in-flight`` games advance together, as in training);
* ``gnubg_vs_pubeval_games_per_s``: in the same run, GNU Backgammon 0-ply (``gnubg_nn.best_move``, one position at
  a time, C) playing pubeval, through the tournament harness in this one process; and ``ratio`` = ours / gnubg's;
* ``selfplay_no_dispatch_games_per_s`` and ``dispatch_ratio``: the same self-play with the evaluator's dispatch by
  position class off (:func:`bgbot.evaluation.evaluator.set_class_dispatch`: only finished games exact, no bear-off
  databases, no outcome constraints), measured in the same run, and on / off (``--dispatch both``, the default:
  on, off, off, on, half the games each time; ``dispatch_ratio_cpu`` the same ratio in games per CPU second of this
  process, which a busy shared machine disturbs less than the wall clock);
* ``training_games_per_s``: self-play with learning on, with a preset's architecture and settings (default the
  ``full`` preset, the shipped model's), for ``--train-games`` games;
* ``peak_rss_mib``: the process's peak resident memory.

Usage: ``python scripts/bench_selfplay.py [--model PATH] [--games 3000] [--train-games 3000] [--config full]
[--dispatch both|on|off] [--no-gnubg]``
(``gnubg-nn`` needed for the reference).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import tempfile
import time

import numpy as np

from bgbot.api import DEFAULT_MODEL
from bgbot.evaluation import bearoff, checkpoint
from bgbot.evaluation.evaluator import set_class_dispatch
from bgbot.evaluation.network import Evaluator, set_threads
from training.config import TrainConfig
from training.selfplay import SelfPlay
from training.train import train


def selfplay_speed(model: str, games: int, games_in_flight: int, seed: int = 1) -> float:
    """Games per second of 0-ply self-play of ``model`` without learning."""
    finished, wall, _ = selfplay_run(model, games, games_in_flight, seed)
    return finished / wall


def selfplay_run(model: str, games: int, games_in_flight: int, seed: int = 1) -> tuple[int, float, float]:
    """0-ply self-play of ``model`` without learning until ``games`` games end: (games, wall s, CPU s of this
    process)."""
    net, _ = checkpoint.load(model)
    evaluator = Evaluator(net)
    sp = SelfPlay(games_in_flight, np.random.default_rng(seed))
    t0, c0 = time.perf_counter(), time.process_time()
    while sp.games_finished < games:
        sp.step(evaluator)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return sp.games_finished, wall, cpu


def gnubg_speed(games: int, seed: int = 1) -> float:
    """Games per second of GNU Backgammon 0-ply against pubeval (duplicate pairs, one process)."""
    from bgbot.arena.players import GnubgPlayer, PubevalPlayer
    from bgbot.arena.tournament import play_games

    t0 = time.perf_counter()
    result = play_games(GnubgPlayer(0), PubevalPlayer(), seed, 0, 0, games // 2)
    return len(result.points_a) / (time.perf_counter() - t0)


def training_speed(config: TrainConfig, games: int) -> float:
    """Games per second of training with learning on (no benchmarks, one checkpoint at the end)."""
    config = dataclasses.replace(config, games=games, checkpoint_every=10 * games, eval_every=0)
    with tempfile.TemporaryDirectory() as run_dir:
        return train(config, run_dir, progress=False).games_per_second


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    p.add_argument("--games", type=int, default=3000, help="games for each self-play speed measurement")
    p.add_argument("--train-games", type=int, default=3000)
    p.add_argument("--config", default="full", help="training preset for the learning-on measurement")
    p.add_argument(
        "--dispatch",
        choices=["both", "on", "off"],
        default="both",
        help="self-play with the evaluator's dispatch by position class on, off, or both (and their ratio)",
    )
    p.add_argument("--no-gnubg", action="store_true", help="skip the GNU Backgammon reference")
    args = p.parse_args()
    set_threads()
    bearoff.load()  # built or read before timing
    config = TrainConfig.load(args.config)
    model = args.model or str(DEFAULT_MODEL)
    speeds, cpu_speeds = {}, {}
    if args.dispatch == "both":  # A B B A, half the games each time, so that drifts in machine speed cancel
        totals = {"on": [0, 0.0, 0.0], "off": [0, 0.0, 0.0]}
        for i, mode in enumerate(("on", "off", "off", "on")):
            set_class_dispatch(mode == "on")
            g, wall, cpu = selfplay_run(model, args.games // 2, config.games_in_flight, seed=i)
            totals[mode] = [totals[mode][0] + g, totals[mode][1] + wall, totals[mode][2] + cpu]
        speeds = {mode: t[0] / t[1] for mode, t in totals.items()}
        cpu_speeds = {mode: t[0] / t[2] for mode, t in totals.items()}
    else:
        set_class_dispatch(args.dispatch == "on")
        speeds[args.dispatch] = selfplay_speed(model, args.games, config.games_in_flight)
    set_class_dispatch(True)
    ours = speeds.get("on", speeds.get("off"))
    theirs = None if args.no_gnubg else gnubg_speed(args.games)
    training = training_speed(config, args.train_games) if args.train_games > 0 else None
    print(
        json.dumps(
            {
                "model": model,
                "games_in_flight": config.games_in_flight,
                "class_dispatch": args.dispatch,
                "selfplay_games_per_s": round(ours, 1),
                "selfplay_no_dispatch_games_per_s": round(speeds["off"], 1) if "off" in speeds else None,
                "dispatch_ratio": round(speeds["on"] / speeds["off"], 3) if len(speeds) == 2 else None,
                "dispatch_ratio_cpu": round(cpu_speeds["on"] / cpu_speeds["off"], 3) if cpu_speeds else None,
                "gnubg_vs_pubeval_games_per_s": None if theirs is None else round(theirs, 1),
                "ratio": None if theirs is None else round(ours / theirs, 3),
                "training_config": args.config,
                "training_games_per_s": None if training is None else round(training, 1),
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "threads": set_threads(),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
