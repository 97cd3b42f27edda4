"""Where self-play's time goes: a cProfile of 0-ply self-play (optionally with learning on), as JSON shares.

Runs the loop that ``scripts/bench_selfplay.py`` times (``--games-in-flight`` games advancing together, one core: one
process, one torch and one BLAS thread), plays :data:`WARMUP_PLIES` plies off the profile (the steady state), then
profiles ``--plies`` plies and prints one JSON object:

* ``games_finished`` and ``profiled_games_per_s``: games finished under the profiler, and per CPU second (it slows the
  loop: compare shares, not this rate, with the benchmark's; null when no game finished: too few ``--plies``);
* ``total_s``: the profiled CPU seconds (the profiler's clock is this process's CPU time, so other processes on a
  shared machine do not enter the shares); ``share``: for each stage of the loop, its cumulative time over ``total_s``
  (a stage's callees included; stages nest, so shares do not add up to 1). The stages: ``evaluate`` (the evaluator's
  classified probabilities of every afterstate), inside it ``inputs`` (the networks' inputs: ``features`` and
  ``sparse_encode``) and ``forward`` (the networks), ``generate_plays`` (the move generator), and with ``--learn``
  ``td_loss``, ``backward`` and ``adam``; with a move filter (:mod:`bgbot.evaluation.prune`: by default the model's
  own, :func:`bgbot.evaluation.prune.filter_for`, as self-play and training of the shipped model use it; ``--filter
  PATH`` another, ``--no-filter`` none; ``--keep``/``--extra``/``--margin`` set either one's candidates) ``filter``
  (choosing the candidates), and ``filter`` in the JSON says which;
* ``top``: the ``--top`` functions by their own time (``tottime``): name -> ``[seconds, share]``.

Usage: ``python scripts/profile_selfplay.py [--model PATH] [--plies 300] [--games-in-flight 512] [--learn]
[--config full] [--top 15] [--no-filter | [--filter PATH] [--keep 4] [--extra 10] [--margin 0.3]]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

import numpy as np
from threadpoolctl import threadpool_limits

from bgbot.api import DEFAULT_MODEL
from bgbot.errors import int_at_least, run_script
from bgbot.evaluation import checkpoint, prune
from bgbot.evaluation.network import set_threads
from bgbot.evaluation.specialists import evaluator_for
from bgbot_training.config import TrainConfig
from bgbot_training.selfplay import SelfPlay
from bgbot_training.train import adam, encoder_for, td_update

WARMUP_PLIES = 120
"""Plies played before the profile starts (as ``scripts/bench_selfplay.py``'s warm-up)."""

STAGES = {
    "evaluate": ("evaluator.py", "classified_probabilities"),
    "inputs": ("specialists.py", "inputs"),
    "features": ("features.py", "v2_parts"),
    "sparse_encode": ("encoding.py", "sparse_encode"),
    "forward": ("network.py", "_forward_sparse"),
    "generate_plays": ("movegen.py", "generate_plays"),
    "td_loss": ("train.py", "td_loss"),
    "backward": ("_tensor.py", "backward"),
    "adam": ("adam.py", "step"),
}
"""Stage name -> (file name, function name) of the function whose cumulative time it reports. ``inputs`` is the
specialists' one pass over both encodings (bgbot-1's one net calls ``sparse_encode`` directly: its ``inputs`` and
``features`` are absent)."""
FILTER_STAGE = {"filter": ("prune.py", "candidates")}
"""The stage a move filter adds (``--filter``): choosing the candidates."""


def profile(
    model: str,
    plies: int,
    games_in_flight: int,
    learn: bool,
    config: TrainConfig,
    top: int,
    warmup: int = WARMUP_PLIES,
    move_filter: prune.MoveFilter | None = None,
) -> dict:
    """Profile ``plies`` plies of self-play of ``model`` after ``warmup`` plies; see the module docstring. A stage
    whose function did not run is absent from ``share``. With ``move_filter`` the plays go through it
    (:class:`bgbot.evaluation.prune.PrunedEvaluator`)."""
    net, _ = checkpoint.load(model)
    evaluator = evaluator_for(net)
    if move_filter is not None:
        evaluator = prune.PrunedEvaluator(evaluator, move_filter)
    if learn:
        sp = SelfPlay(
            games_in_flight, np.random.default_rng(1), config.td_lambda, config.lambda_horizon, encoder_for(net)
        )
        opt = adam(net.parameters(), config.lr)
    else:
        sp = SelfPlay(games_in_flight, np.random.default_rng(1))

    def ply() -> None:
        positions, targets = sp.step(evaluator)
        if learn and len(positions):
            td_update(net, opt, positions, targets, sp.inputs)

    for _ in range(warmup):
        ply()
    prof = cProfile.Profile(time.process_time)
    start, t0 = sp.games_finished, time.process_time()
    prof.enable()
    for _ in range(plies):
        ply()
    prof.disable()
    cpu, finished = time.process_time() - t0, sp.games_finished - start
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = max(sum(v[2] for v in stats.values()), 1e-12)  # tottime summed: the profiled seconds
    share = {}
    for name, (file, func) in (STAGES | (FILTER_STAGE if move_filter is not None else {})).items():
        cum = sum(v[3] for (f, _, fn), v in stats.items() if fn == func and f.endswith(file))
        if cum:
            share[name] = round(cum / total, 3)
    by_own = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
    return {
        "model": model,
        "filter": None
        if move_filter is None
        else {"keep": move_filter.keep, "extra": move_filter.extra, "margin": move_filter.margin},
        "learn": learn,
        "plies": plies,
        "games_in_flight": games_in_flight,
        "games_finished": finished,
        "profiled_games_per_s": round(finished / cpu, 1) if finished else None,
        "total_s": round(total, 3),
        "share": share,
        "top": {f"{f.rsplit('/', 1)[-1]}:{fn}": [round(v[2], 3), round(v[2] / total, 3)] for (f, _, fn), v in by_own},
    }


def main() -> None:
    """Parse the arguments, profile, print the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    p.add_argument("--plies", type=int_at_least(1), default=300, help="plies profiled (after the warm-up)")
    p.add_argument("--games-in-flight", type=int_at_least(1), default=512, help="games advancing together")
    p.add_argument("--learn", action="store_true", help="learning on: a TD(lambda) and Adam step after each ply")
    p.add_argument("--config", default="full", help="training preset for --learn")
    p.add_argument("--top", type=int_at_least(0), default=15, help="functions listed by their own time")
    p.add_argument(
        "--filter",
        default=None,
        help="a move filter's net (scripts/fit_prune.py) to play through (default: the model's own, if it has one)",
    )
    p.add_argument("--no-filter", action="store_true", help="no move filter: every play evaluated")
    p.add_argument("--keep", type=int_at_least(1), default=4, help="the filter's plays always kept")
    p.add_argument("--extra", type=int_at_least(0), default=10, help="the filter's further plays within --margin")
    p.add_argument("--margin", type=float, default=0.3, help="equity margin of the --extra plays")
    args = p.parse_args()
    if args.no_filter and args.filter:
        p.error("--filter and --no-filter exclude each other")
    model = args.model or str(DEFAULT_MODEL)
    move_filter = prune.chosen_filter(
        model, args.filter, off=args.no_filter, keep=args.keep, extra=args.extra, margin=args.margin
    )
    set_threads(1)
    with threadpool_limits(1):
        out = profile(
            model,
            args.plies,
            args.games_in_flight,
            args.learn,
            TrainConfig.load(args.config),
            args.top,
            move_filter=move_filter,
        )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    run_script(main)
