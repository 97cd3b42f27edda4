"""Benchmark self-play speed: inference-only self-play against GNU Backgammon's, and training with learning on.

Prints one JSON object from one run:

* ``selfplay_games_per_s``: games per second of the model (default: the shipped one) playing itself at 0-ply with
  no learning (batched: ``--games-in-flight`` games advance together, as in training);
* ``gnubg_vs_pubeval_games_per_s``: in the same run, GNU Backgammon 0-ply (``gnubg_nn.best_move``, one position at
  a time, C) playing pubeval, through the tournament harness in this one process; and ``ratio`` = ours / gnubg's;
* ``training_games_per_s``: self-play with learning on, with a preset's architecture and settings (default the
  ``full`` preset, the shipped model's), for ``--train-games`` games;
* ``peak_rss_mib``: the process's peak resident memory.

Usage: ``python scripts/bench_selfplay.py [--model PATH] [--games 3000] [--train-games 3000] [--config full]``
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
from bgbot.evaluation import checkpoint
from bgbot.evaluation.network import Evaluator, set_threads
from training.config import TrainConfig
from training.selfplay import SelfPlay
from training.train import train


def selfplay_speed(model: str, games: int, games_in_flight: int, seed: int = 1) -> float:
    """Games per second of 0-ply self-play of ``model`` without learning."""
    net, _ = checkpoint.load(model)
    evaluator = Evaluator(net)
    sp = SelfPlay(games_in_flight, np.random.default_rng(seed))
    t0 = time.perf_counter()
    while sp.games_finished < games:
        sp.step(evaluator)
    return sp.games_finished / (time.perf_counter() - t0)


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
        "--baseline",
        default=None,
        help="a second checkpoint whose self-play speed is measured in the same run, alternating with --model "
        "(two rounds each); adds baseline_selfplay_games_per_s and speed_vs_baseline = model / baseline",
    )
    p.add_argument("--no-training", action="store_true", help="skip the learning-on measurement")
    args = p.parse_args()
    set_threads()
    config = TrainConfig.load(args.config)
    model = args.model or str(DEFAULT_MODEL)
    extra = {}
    if args.baseline:
        runs = {model: [], args.baseline: []}
        for _ in range(2):
            for m in (args.baseline, model):
                runs[m].append(selfplay_speed(m, args.games // 2, config.games_in_flight))
        ours, base = float(np.mean(runs[model])), float(np.mean(runs[args.baseline]))
        extra = {
            "baseline": args.baseline,
            "baseline_selfplay_games_per_s": round(base, 1),
            "speed_vs_baseline": round(ours / base, 3),
        }
    else:
        ours = selfplay_speed(model, args.games, config.games_in_flight)
    theirs = gnubg_speed(args.games)
    training = None if args.no_training else training_speed(config, args.train_games)
    print(
        json.dumps(
            extra
            | {
                "model": model,
                "games_in_flight": config.games_in_flight,
                "selfplay_games_per_s": round(ours, 1),
                "gnubg_vs_pubeval_games_per_s": round(theirs, 1),
                "ratio": round(ours / theirs, 3),
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
