"""Rollout speed: bgbot against GNU Backgammon itself, in one run, on the same machine (JSON on stdout).

Both roll out the opening position before the roll: cubeless, 0-ply players, variance reduction (``--plain``: none,
GNU Backgammon's ``set rollout varredn off``), quasi-random dice, played to the end (no truncation, no bear-off
truncation), ``--trials`` trials (default 1296, with ``--plain`` 12960). bgbot runs
:func:`bgbot.arena.rollout.rollout_positions` with ``--workers`` processes (default 2; their start-up, mostly importing
torch, is counted); GNU Backgammon is the Debian ``gnubg`` program headless (``gnubg -t -q``) with ``set threads 2``.
GNU Backgammon's start-up time (the same script without the ``rollout`` command) is subtracted. The two run
``--rounds`` times, interleaved (which goes first alternates), and the medians are reported; the figure of merit is
``cpu_ratio``, the median over the rounds of bgbot's trials per CPU second over GNU Backgammon's (the machine's other
load slows both alike); ``ratio`` is the same per wall-clock second. ``per_position`` states the cost of one position
rolled out at this many trials: bgbot's standard error of the win probability (GNU Backgammon's estimator is the
same, so its standard error is the same within sampling noise) and each program's median CPU seconds, as positions
per CPU second. ``--model-filter``: bgbot's trials choose their plays (and, with variance reduction, each roll's best
play) through the model's own move filter (:attr:`bgbot.arena.rollout.RolloutSettings.move_filter`)::

    python scripts/bench_rollout.py --trials 1296
    python scripts/bench_rollout.py --plain --trials 12960
    python scripts/bench_rollout.py --plain --model-filter --trials 12960
    python scripts/bench_rollout.py --model-filter --trials 1296

With ``--filter PATH`` it compares bgbot with itself instead: plain trials (no variance reduction) of four positions
with and without a move filter (:mod:`bgbot.evaluation.prune`), in one process, interleaved (:func:`filter_ab`)::

    python scripts/bench_rollout.py --filter models/prune/bgbot-5.pt --trials 144 --rounds 3

Usage: ``python scripts/bench_rollout.py [--plain] [--model-filter] [--trials N] [--workers 2] [--seed 0]
[--rounds 3]`` (needs Debian's
``gnubg``), or
``python scripts/bench_rollout.py --filter PATH [--keep 4] [--extra 10] [--margin 0.3] [--rounds 3]`` (with
``--trials``, default 1296, and ``--seed`` as above).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import time

from bgbot.arena.rollout import MIN_TRIALS
from bgbot.errors import BgbotError, int_at_least, run_script

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"


def gnubg_script(trials: int, rollout: bool, variance_reduction: bool = True) -> str:
    """GNU Backgammon's commands: the rollout settings of the module docstring, then ``rollout`` if asked."""
    lines = [
        "set threads 2",
        f"set rollout trials {trials}",
        "set rollout cubeful off",
        "set rollout quasirandom on",
        f"set rollout varredn {'on' if variance_reduction else 'off'}",
        "set rollout truncation enable off",
        "set rollout chequerplay plies 0",
        "set rollout later enable off",
        "set rollout bearofftruncation exact off",
        "set rollout bearofftruncation onesided off",
        "new game",
        "set board 4HPwATDgc/ABMA",
    ]
    if rollout:
        lines.append("rollout")
    return "\n".join(lines) + "\n"


def run_gnubg(script: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child).

    Raises:
        OSError: GNU Backgammon failed or timed out.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        subprocess.run([GNUBG, "-t", "-q"], input=script, text=True, capture_output=True, check=True, timeout=7200)
    except subprocess.CalledProcessError as err:  # the reference failed: one error line (run_script), its last words
        tail = (err.stderr or err.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise OSError(f"{GNUBG} exited with status {err.returncode}: {tail[0]}") from None
    except subprocess.TimeoutExpired:
        raise OSError(f"{GNUBG} did not finish within 7200 s") from None
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_bgbot(
    trials: int, workers: int, seed: int, variance_reduction: bool = True, move_filter: bool = False
) -> tuple[float, float, list[float], list[float]]:
    """bgbot's rollout of the opening: (wall seconds, CPU seconds of this process and its workers, probabilities
    ``(5,)``, their standard errors ``(5,)``). ``move_filter``: plain trials through the shipped model's own move
    filter (:func:`bgbot.evaluation.prune.filter_for`).

    Raises:
        BgbotError: ``move_filter`` and the shipped model has no filter of its own.
    """
    import numpy as np

    from bgbot.api import Bot
    from bgbot.arena.rollout import RolloutSettings, rollout_positions
    from bgbot.evaluation import prune
    from bgbot.rules.board import starting_position

    bot = Bot.load()
    ev = bot.evaluator
    if move_filter:
        found = prune.filter_for(bot.path) if bot.path else None
        if found is None:
            raise BgbotError(f"the model {bot.path} has no move filter of its own (prune/<name>.pt)")
        ev = prune.PrunedEvaluator(ev, found)
    before_self, before_kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    settings = RolloutSettings(
        trials=trials, seed=seed, databases=False, variance_reduction=variance_reduction, move_filter=move_filter
    )
    p, se = rollout_positions(np.array([starting_position()]), ev, settings, workers)
    wall = time.perf_counter() - t0
    after_self, after_kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(
        (a.ru_utime - b.ru_utime) + (a.ru_stime - b.ru_stime)
        for a, b in ((after_self, before_self), (after_kids, before_kids))
    )
    return wall, cpu, [float(x) for x in p[0]], [float(x) for x in se[0]]


FILTER_POSITIONS = ("4HPwATDgc/ABMA", "4HPkQSDgc/ABMA", "4GvwASHgc+QBUA", "sM/gASTga/ABUA")
"""The positions of the ``--filter`` comparison: the opening and the next three of ``tests/data/decision_set.txt``."""


def filter_ab(trials: int, seed: int, rounds: int, filter_path: str, keep: int, extra: int, margin: float) -> dict:
    """Plain rollout trials (no variance reduction, 0-ply, cubeless, full length, quasi-random dice, the bear-off
    databases on) of :data:`FILTER_POSITIONS` in this process (one core), with and without a move filter
    (:mod:`bgbot.evaluation.prune`), alternating which goes first, ``rounds`` times; timed by CPU seconds. Returns the
    JSON fields: each round's trials per CPU second, their medians, the median of the rounds' paired ratios
    (filtered / exact), and both rollouts' probabilities of the first position."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from bgbot.api import Bot
    from bgbot.arena.rollout import RolloutSettings, rollout_positions
    from bgbot.evaluation import bearoff, prune
    from bgbot.evaluation.network import set_threads
    from bgbot.formats import positionid

    set_threads()
    bearoff.load()
    exact = Bot.load().evaluator
    pruned = prune.PrunedEvaluator(exact, prune.MoveFilter(prune.load(filter_path), keep, extra, margin))
    pos = np.stack([positionid.decode(i) for i in FILTER_POSITIONS])
    rates: dict[str, list[float]] = {"exact": [], "filtered": []}
    probs: dict[str, list[float]] = {}
    with threadpool_limits(1):
        for r in range(rounds):
            for name in ("exact", "filtered") if r % 2 == 0 else ("filtered", "exact"):
                t0 = time.process_time()
                plain = RolloutSettings(trials=trials, seed=seed, variance_reduction=False, move_filter=name != "exact")
                p, _ = rollout_positions(pos, exact if name == "exact" else pruned, plain)
                rates[name].append(trials * len(pos) / (time.process_time() - t0))
                probs[name] = [round(float(x), 4) for x in p[0]]
    ratio = np.asarray(rates["filtered"]) / np.asarray(rates["exact"])
    return {
        "trials": trials,
        "positions": list(FILTER_POSITIONS),
        "settings": "cubeless, 0-ply, no variance reduction, quasi-random dice, no truncation, databases on, 1 core",
        "filter": {"net": filter_path, "keep": keep, "extra": extra, "margin": margin},
        "per_round_trials_per_cpu_s": {k: [round(x, 2) for x in v] for k, v in rates.items()},
        "exact_trials_per_cpu_s": round(float(np.median(rates["exact"])), 2),
        "filtered_trials_per_cpu_s": round(float(np.median(rates["filtered"])), 2),
        "filter_speedup": round(float(np.median(ratio)), 3),
        "probabilities_first_position": probs,
    }


def per_position(trials: int, se_win: float, bgbot_cpu_s: float, gnubg_cpu_s: float) -> dict:
    """The cost of one position rolled out at ``trials`` trials: the standard error of the win probability it states
    and each program's CPU seconds and positions per CPU second (the bench rolls out one position)."""
    return {
        "trials": trials,
        "se_win": round(se_win, 5),
        "bgbot_cpu_s": round(bgbot_cpu_s, 3),
        "gnubg_cpu_s": round(gnubg_cpu_s, 3),
        "bgbot_positions_per_cpu_s": round(1.0 / bgbot_cpu_s, 4),
        "gnubg_positions_per_cpu_s": round(1.0 / gnubg_cpu_s, 4),
    }


def compare(trials: int, workers: int, seed: int, rounds: int, vr: bool, move_filter: bool) -> dict:
    """``rounds`` rounds of GNU Backgammon's rollout (its start-up measured and subtracted in each round) and bgbot's,
    alternating which goes first; the JSON fields of the module docstring (medians over the rounds).

    Raises:
        BgbotError: a round in which GNU Backgammon's rollout took no longer than its start-up.
    """
    import numpy as np

    g_walls, g_cpus, b_walls, b_cpus, startups = [], [], [], [], []
    probs: list[float] = []
    se: list[float] = []
    for r in range(rounds):
        for side in ("gnubg", "bgbot") if r % 2 == 0 else ("bgbot", "gnubg"):
            if side == "gnubg":
                start_wall, start_cpu = run_gnubg(gnubg_script(trials, rollout=False, variance_reduction=vr))
                g_wall, g_cpu = run_gnubg(gnubg_script(trials, rollout=True, variance_reduction=vr))
                g_wall, g_cpu = g_wall - start_wall, g_cpu - start_cpu
                if g_wall <= 0 or g_cpu <= 0:  # a rate from a time of 0 or less would be nonsense
                    raise BgbotError(
                        f"GNU Backgammon's {trials} trials took no longer than its start-up alone "
                        f"({g_wall + start_wall:.2f} s against {start_wall:.2f} s wall clock): too few --trials to time"
                    )
                g_walls.append(g_wall)
                g_cpus.append(g_cpu)
                startups.append(start_wall)
            else:
                b_wall, b_cpu, probs, se = run_bgbot(trials, workers, seed, vr, move_filter)
                b_walls.append(b_wall)
                b_cpus.append(b_cpu)
    g_wall, g_cpu = float(np.median(g_walls)), float(np.median(g_cpus))
    b_wall, b_cpu = float(np.median(b_walls)), float(np.median(b_cpus))
    cpu_ratios = np.asarray(g_cpus) / np.asarray(b_cpus)
    wall_ratios = np.asarray(g_walls) / np.asarray(b_walls)
    return {
        "trials": trials,
        "rounds": rounds,
        "position": "4HPwATDgc/ABMA (opening, before the roll)",
        "settings": f"cubeless, 0-ply, {'variance reduction' if vr else 'plain (no variance reduction)'}, "
        "quasi-random dice, no truncation" + (", bgbot through the model's own move filter" if move_filter else ""),
        "cpu_ratio": round(float(np.median(cpu_ratios)), 4),
        "ratio": round(float(np.median(wall_ratios)), 4),
        "per_round_cpu_ratio": [round(float(x), 4) for x in cpu_ratios],
        "per_round_ratio": [round(float(x), 4) for x in wall_ratios],
        "bgbot": {
            "workers": workers,
            "move_filter": move_filter,
            "wall_s": round(b_wall, 2),
            "cpu_s": round(b_cpu, 2),
            "trials_per_s": round(trials / b_wall, 3),
            "trials_per_cpu_s": round(trials / b_cpu, 3),
            "probabilities": [round(x, 4) for x in probs],
            "standard_errors": [round(x, 5) for x in se],
        },
        "gnubg": {
            "threads": 2,
            "wall_s": round(g_wall, 2),
            "cpu_s": round(g_cpu, 2),
            "trials_per_s": round(trials / g_wall, 3),
            "trials_per_cpu_s": round(trials / g_cpu, 3),
            "startup_s_subtracted": round(float(np.median(startups)), 2),
        },
        "per_position": per_position(trials, se[0], b_cpu, g_cpu),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--trials",
        type=int_at_least(MIN_TRIALS),
        default=None,
        help="trials of each (at least 2, for an SE; default 1296, with --plain 12960)",
    )
    ap.add_argument("--plain", action="store_true", help="plain trials: no variance reduction on either side")
    ap.add_argument(
        "--model-filter",
        action="store_true",
        help="bgbot's trials through the model's own move filter (RolloutSettings.move_filter)",
    )
    ap.add_argument("--workers", type=int_at_least(1), default=2, help="bgbot's rollout processes")
    ap.add_argument("--seed", type=int_at_least(0), default=0, help="bgbot's dice seed")
    ap.add_argument(
        "--filter",
        default=None,
        help="instead of the comparison with GNU Backgammon: plain trials with and without this move filter "
        "(bgbot.evaluation.prune), interleaved --rounds times in this process (filter_ab)",
    )
    ap.add_argument("--keep", type=int_at_least(1), default=4, help="the filter's plays always kept")
    ap.add_argument("--extra", type=int_at_least(0), default=10, help="the filter's further plays within --margin")
    ap.add_argument("--margin", type=float, default=0.3, help="equity margin of the --extra plays")
    ap.add_argument("--rounds", type=int_at_least(1), default=3, help="rounds (medians are reported)")
    args = ap.parse_args()
    if args.filter:
        ab = filter_ab(args.trials or 1296, args.seed, args.rounds, args.filter, args.keep, args.extra, args.margin)
        print(json.dumps(ab))
        return
    vr = not args.plain
    trials = args.trials or (1296 if vr else 12960)
    print(json.dumps(compare(trials, args.workers, args.seed, args.rounds, vr, args.model_filter)))


if __name__ == "__main__":
    run_script(main)
