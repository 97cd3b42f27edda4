"""Benchmark self-play speed against GNU Backgammon's own engine in a bare loop, and training with learning on.

Prints one JSON object from one run. Everything timed runs on one core: one process, one compute thread (torch and
OpenBLAS limited to one thread), timed by this process's CPU seconds (``time.process_time``) so that other processes
on a shared machine disturb the ratios as little as possible; the reference and bgbot are measured in alternation,
``--rounds`` times, and the best round of each is reported (as ``scripts/bench_movegen.py`` does).

* ``bare_gnubg_games_per_s``: the reference, GNU Backgammon 0-ply (``gnubg_nn.best_move``) playing pubeval
  (``gnubg_nn.pub_best_move``) in a bare single-process Python loop over gnubg-nn boards: no harness, no numpy;
* ``selfplay_games_per_s``: the model (default: the shipped one) playing itself at 0-ply with no learning (through
  its move filter, below), batched as in training (the preset's ``games_in_flight`` games advance together), timed in the steady state (after
  :data:`WARMUP_PLIES` plies, as in a long run); ``selfplay_ratio`` = ours / the bare loop's;
* ``harness_gnubg_vs_pubeval_games_per_s``: GNU Backgammon 0-ply against pubeval through the tournament harness in
  this process (the figure this script reported before), and ``harness_ratio``;
* ``training_games_per_s``: self-play with learning on, with a preset's settings (default the ``full`` preset, the
  shipped model's recipe), from the model's weights, in the steady state (:func:`training_speed`), and
  ``training_ratio`` against the bare loop;
* ``selfplay_2core_games_per_s``: wall-clock throughput of two processes playing self-play side by side (one thread
  each): what the machine's two cores give;
* ``selfplay_no_dispatch_games_per_s`` and ``dispatch_ratio``: the same self-play with the evaluator's dispatch by
  position class off (:func:`bgbot.evaluation.evaluator.set_class_dispatch`: only finished games exact, no bear-off
  databases, no outcome constraints), in the same rounds, and on / off (``--dispatch both``, the default);
* the move filter (:mod:`bgbot.evaluation.prune`): by default the model plays through the filter fitted to it
  (:func:`bgbot.evaluation.prune.filter_for`: ``models/prune/bgbot-5.pt`` for the shipped model; none for a model
  without one), in self-play and in training alike, as self-play and training of the shipped model do;
  ``--filter PATH`` names another filter's net, ``--no-filter`` turns it off; ``--keep``/``--extra``/``--margin``
  set either filter's candidates (:class:`bgbot.evaluation.prune.MoveFilter`'s defaults 4, 10, 0.3).
  With a filter, ``exact_selfplay_games_per_s`` and ``exact_training_games_per_s`` are the same measurements
  evaluating every play, in the same rounds, with ``exact_selfplay_ratio``/``exact_training_ratio`` against the bare
  loop; ``filter_speedup`` and ``filter_training_speedup`` are the medians of the rounds' paired ratios (filtered /
  exact); ``filter`` says which filter played (null: none);
* ``peak_rss_mib``: the process's peak resident memory.

Usage: ``python scripts/bench_selfplay.py [--model PATH] [--baseline PATH] [--games 3000] [--gnubg-games 1000]
[--train-games 3000] [--config full] [--rounds 3] [--dispatch both|on|off] [--no-gnubg] [--no-2core]
[--no-filter | --filter PATH [--keep 4] [--extra 10] [--margin 0.3]]`` (``gnubg-nn``
needed for the references; ``--train-games 0`` skips training).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import time

import numpy as np
from threadpoolctl import threadpool_limits

from bgbot.api import DEFAULT_MODEL
from bgbot.errors import int_at_least, run_script
from bgbot.evaluation import bearoff, checkpoint, prune
from bgbot.evaluation.evaluator import set_class_dispatch
from bgbot.evaluation.network import set_threads
from bgbot.evaluation.specialists import evaluator_for
from bgbot_training.config import TrainConfig
from bgbot_training.selfplay import SelfPlay
from bgbot_training.train import adam, encoder_for, td_update

WARMUP_PLIES = 120
"""Plies played off the clock before self-play is timed: all games in flight start together, and for the first ~50
plies none finishes; a long run (training plays 400,000 games) sees only the steady state."""


def selfplay_speed(
    model: str,
    games: int,
    games_in_flight: int,
    seed: int = 1,
    clock=time.process_time,
    move_filter: prune.MoveFilter | None = None,
) -> float:
    """Games per second of ``clock`` (CPU seconds by default) of 0-ply self-play of ``model`` without learning, in the
    steady state (after :data:`WARMUP_PLIES`); with ``move_filter``, the model's plays through it
    (:class:`bgbot.evaluation.prune.PrunedEvaluator`)."""
    net, _ = checkpoint.load(model)
    evaluator = evaluator_for(net)
    if move_filter is not None:
        evaluator = prune.PrunedEvaluator(evaluator, move_filter)
    sp = SelfPlay(games_in_flight, np.random.default_rng(seed))
    for _ in range(WARMUP_PLIES):
        sp.step(evaluator)
    start, t0 = sp.games_finished, clock()
    while sp.games_finished - start < games:
        sp.step(evaluator)
    return (sp.games_finished - start) / (clock() - t0)


def _play(side: list[int], other: list[int], steps) -> None:
    """Apply 1-based checker steps ``(from, to)`` (25 = bar, 0 = off) to gnubg-nn side lists, hitting blots."""
    for src, dst in steps:
        side[src - 1] -= 1
        if dst > 0:
            side[dst - 1] += 1
            if other[24 - dst] == 1:  # my point dst is the opponent's point 25 - dst (index 24 - dst)
                other[24 - dst] = 0
                other[24] += 1


def bare_gnubg_speed(games: int, seed: int = 1) -> float:
    """Games per CPU second of GNU Backgammon 0-ply against pubeval in a bare loop on gnubg-nn boards.

    Each game starts from the opening position with a non-double roll, the sides alternating who opens; a player's
    play is ``gnubg_nn.best_move(board, d1, d2, n=0)`` or ``gnubg_nn.pub_best_move(board, d1, d2)`` (0-based
    ``[from, to, ...]``, 24 = bar, -1 = off), applied to the board, which is then turned round.
    """
    import gnubg_nn

    rng = random.Random(seed)
    start = gnubg_nn.board_from_position_id("4HPwATDgc/ABMA")
    t0 = time.process_time()
    for g in range(games):
        board = [list(start[0]), list(start[1])]
        gnubg_turn = g % 2 == 0
        d1 = rng.randint(1, 6)
        d2 = rng.choice([d for d in range(1, 7) if d != d1])
        while True:
            opp, me = board
            if gnubg_turn:
                steps = gnubg_nn.best_move(board, d1, d2, n=0) or ()
            else:
                flat = gnubg_nn.pub_best_move(board, d1, d2) or []
                steps = [(flat[i] + 1, flat[i + 1] + 1) for i in range(0, len(flat), 2)]
            _play(me, opp, steps)
            if sum(me) == 0:
                break
            board = [me, opp]
            gnubg_turn = not gnubg_turn
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
    return games / (time.process_time() - t0)


def harness_gnubg_speed(games: int, seed: int = 1) -> float:
    """Games per CPU second of GNU Backgammon 0-ply against pubeval through the tournament harness, one process."""
    from bgbot.arena.players import GnubgPlayer, PubevalPlayer
    from bgbot.arena.tournament import play_games

    t0 = time.process_time()
    result = play_games(GnubgPlayer(0), PubevalPlayer(), seed, 0, 0, games // 2)
    return len(result.points_a) / (time.process_time() - t0)


def training_speed(
    model: str, config: TrainConfig, games: int, seed: int = 1, move_filter: prune.MoveFilter | None = None
) -> float:
    """Games per CPU second of self-play with learning on, in the steady state, starting from ``model``'s weights.

    The loop of :func:`training.train.train` (one :class:`training.selfplay.SelfPlay` step, then one Adam step on the
    positions whose TD(lambda) targets it completed), with the preset's games in flight, lambda, horizon and learning
    rate, but from the shipped model rather than from random weights: an untrained net plays games of another length,
    and the speed of interest is that of a net like the ones trained and shipped. Timed after
    :data:`WARMUP_PLIES` plies, without checkpoints or benchmarks. With ``move_filter``, the plays through it
    (:func:`training.train.train`'s ``move_filter``).
    """
    net, _ = checkpoint.load(model)
    opt = adam(net.parameters(), config.lr)
    evaluator = evaluator_for(net)
    if move_filter is not None:
        evaluator = prune.PrunedEvaluator(evaluator, move_filter)
    sp = SelfPlay(
        config.games_in_flight, np.random.default_rng(seed), config.td_lambda, config.lambda_horizon, encoder_for(net)
    )

    def ply() -> None:
        positions, targets = sp.step(evaluator)
        if len(positions):
            td_update(net, opt, positions, targets, sp.inputs)

    for _ in range(WARMUP_PLIES):
        ply()
    start, t0 = sp.games_finished, time.process_time()
    while sp.games_finished - start < games:
        ply()
    return (sp.games_finished - start) / (time.process_time() - t0)


def _selfplay_worker(args: tuple) -> float:
    """Steady-state wall-clock games per second of one self-play process (one thread)."""
    model, games, games_in_flight, seed, move_filter = args
    set_threads()
    with threadpool_limits(1):
        return selfplay_speed(model, games, games_in_flight, seed, clock=time.perf_counter, move_filter=move_filter)


def two_core_speed(model: str, games: int, games_in_flight: int, move_filter: prune.MoveFilter | None = None) -> float:
    """Wall-clock games per second of two self-play processes running side by side (through ``move_filter`` if
    given): the sum of their steady-state rates (each warmed up as :func:`selfplay_speed`)."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        return sum(pool.map(_selfplay_worker, [(model, games, games_in_flight, s, move_filter) for s in (1, 2)]))


def _median_ratio(a: list[float], b: list[float]) -> float | None:
    """The median over rounds of ``a[r] / b[r]`` (paired: measured in the same round), or None."""
    if not a or len(a) != len(b):
        return None
    return round(float(np.median(np.asarray(a) / np.asarray(b))), 3)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    p.add_argument("--games", type=int_at_least(1), default=3000, help="games for each self-play speed measurement")
    p.add_argument(
        "--gnubg-games",
        type=int_at_least(2),
        default=1000,
        help="games of each reference measurement (the harness plays them in duplicate pairs)",
    )
    p.add_argument(
        "--train-games", type=int_at_least(0), default=3000, help="games of the learning-on measurement (0: skip)"
    )
    p.add_argument("--config", default="full", help="training preset for the learning-on measurement")
    p.add_argument("--rounds", type=int_at_least(1), default=3, help="alternating rounds; the best of each is reported")
    p.add_argument(
        "--dispatch",
        choices=["both", "on", "off"],
        default="both",
        help="self-play with the evaluator's dispatch by position class on, off, or both (and their ratio)",
    )
    p.add_argument("--no-gnubg", action="store_true", help="skip the GNU Backgammon references")
    p.add_argument("--no-2core", action="store_true", help="skip the two-process throughput")
    p.add_argument(
        "--baseline",
        default=None,
        help="a second checkpoint whose self-play speed (dispatch on) is measured in the same rounds; adds "
        "baseline_selfplay_games_per_s and speed_vs_baseline = model / baseline",
    )
    p.add_argument(
        "--filter",
        default=None,
        help="a move filter's net (scripts/fit_prune.py) to play through, in self-play and training (default: the "
        "model's own filter, bgbot.evaluation.prune.filter_for, if it has one); exact play (every play evaluated) is "
        "measured in the same rounds: exact_selfplay_games_per_s, exact_training_games_per_s, filter_speedup",
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
    set_threads()
    bearoff.load()  # built or read before timing
    config = TrainConfig.load(args.config)
    for path in (model, args.baseline):  # a missing or damaged checkpoint is reported now, not after the first timings
        if path:
            checkpoint.load(path)
    runs: dict[str, list[float]] = {
        "bare": [],
        "selfplay": [],
        "no_dispatch": [],
        "harness": [],
        "training": [],
        "baseline": [],
        "exact": [],
        "exact_training": [],
    }
    with threadpool_limits(1):
        for r in range(args.rounds):
            if not args.no_gnubg:
                runs["bare"].append(bare_gnubg_speed(args.gnubg_games, seed=r))
            for mode in ("on", "off") if args.dispatch == "both" else (args.dispatch,):
                set_class_dispatch(mode == "on")
                key = "selfplay" if mode == "on" or args.dispatch == "off" else "no_dispatch"
                runs[key].append(
                    selfplay_speed(model, args.games, config.games_in_flight, seed=r, move_filter=move_filter)
                )
            set_class_dispatch(True)
            if move_filter is not None:
                runs["exact"].append(selfplay_speed(model, args.games, config.games_in_flight, seed=r))
            if args.baseline:
                runs["baseline"].append(selfplay_speed(args.baseline, args.games, config.games_in_flight, seed=r))
            if not args.no_gnubg:
                runs["harness"].append(harness_gnubg_speed(args.gnubg_games, seed=r))
            if args.train_games > 0:
                runs["training"].append(
                    training_speed(model, config, args.train_games, seed=r, move_filter=move_filter)
                )
                if move_filter is not None:
                    runs["exact_training"].append(training_speed(model, config, args.train_games, seed=r))
    two_core = None if args.no_2core else two_core_speed(model, args.games, config.games_in_flight, move_filter)
    best = {k: max(v) if v else None for k, v in runs.items()}

    def ratio(a: str, b: str) -> float | None:
        return None if best[a] is None or best[b] is None else round(best[a] / best[b], 3)

    def rounded(k: str) -> float | None:
        return None if best[k] is None else round(best[k], 1)

    print(
        json.dumps(
            {
                "model": model,
                "games_in_flight": config.games_in_flight,
                "threads": 1,
                "rounds": args.rounds,
                "class_dispatch": args.dispatch,
                "bare_gnubg_games_per_s": rounded("bare"),
                "selfplay_games_per_s": rounded("selfplay"),
                "selfplay_ratio": ratio("selfplay", "bare"),
                "harness_gnubg_vs_pubeval_games_per_s": rounded("harness"),
                "harness_ratio": ratio("selfplay", "harness"),
                "selfplay_no_dispatch_games_per_s": rounded("no_dispatch"),
                "dispatch_ratio": ratio("selfplay", "no_dispatch"),
                "training_config": args.config,
                "training_games_per_s": rounded("training"),
                "training_ratio": ratio("training", "bare"),
                "baseline": args.baseline,
                "baseline_selfplay_games_per_s": rounded("baseline"),
                "speed_vs_baseline": ratio("selfplay", "baseline"),
                "filter": None
                if move_filter is None
                else {
                    "net": args.filter or "the model's own (prune.filter_for)",
                    "keep": move_filter.keep,
                    "extra": move_filter.extra,
                    "margin": move_filter.margin,
                },
                "exact_selfplay_games_per_s": rounded("exact"),
                "exact_selfplay_ratio": ratio("exact", "bare"),
                "filter_speedup": _median_ratio(runs["selfplay"], runs["exact"]),
                "exact_training_games_per_s": rounded("exact_training"),
                "exact_training_ratio": ratio("exact_training", "bare"),
                "filter_training_speedup": _median_ratio(runs["training"], runs["exact_training"]),
                "selfplay_2core_games_per_s": None if two_core is None else round(two_core, 1),
                "per_round": runs,
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    run_script(main)
