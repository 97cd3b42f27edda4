"""``bgbot gate``: copy a candidate checkpoint beside the model it plays against (AGAINST's directory) only if it beats
that model significantly and, with ``--cube-reference``, its cube decisions are not worse
(:func:`bgbot.arena.benchmark.gate`). Ctrl-C or SIGTERM stops the workers and prints the games finished, marked
partial: nothing is promoted or recorded."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bgbot.arena import benchmark, distributed, tournament
from bgbot.commands import common
from bgbot.errors import int_at_least, whole_number
from bgbot.formats.figures import figure


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "gate",
        help="promote a checkpoint beside the model it beats significantly",
        description="Play CANDIDATE against the model AGAINST with duplicate dice; copy it into AGAINST's directory "
        "only when the 95% CI of its ppg lies above 0 and, with --cube-reference, its money cube decisions on the held-out "
        "rollouts are not worse (the promoted copy without optimiser state; the candidate keeps "
        "it). The decision is appended to README.md in that directory (section 'Gate decisions') when the candidate "
        "is promoted or lies in that directory (e.g. its candidates/ folder); a candidate from elsewhere that is not "
        f"promoted leaves it untouched. At least {benchmark.MIN_GATE_GAMES} games. Exit status: "
        f"{benchmark.EXIT_ACCEPTED} promoted, {benchmark.EXIT_REJECTED} rejected, 2 an error, 130 (Ctrl-C) or 143 "
        "(SIGTERM) interrupted: the games finished are printed, marked partial, and nothing is promoted or recorded.",
    )
    p.add_argument("candidate", metavar="CANDIDATE", help="the candidate checkpoint (.pt)")
    p.add_argument(
        "--against",
        required=True,
        metavar="PATH",
        help="the model to beat, e.g. models/bgbot-5.pt; the candidate is copied beside it",
    )
    p.add_argument(
        "--games",
        type=int_at_least(benchmark.MIN_GATE_GAMES, even=True, most=tournament.MAX_GAMES),
        required=True,
        help=f"games (even, {benchmark.MIN_GATE_GAMES} .. {tournament.MAX_GAMES:,})",
    )
    p.add_argument("--seed", type=whole_number, default=0, help="dice seed (default 0)")
    p.add_argument(
        "--workers",
        type=whole_number,
        default=min(os.cpu_count() or 1, tournament.MAX_WORKERS),
        help="worker processes (default: all CPUs)",
    )
    p.add_argument("--ply", type=common.ply, default=0, help="lookahead of both players (default 0)")
    p.add_argument(
        "--cube",
        action="store_true",
        help="cubeful money games (Jacoby on), each side doubling and taking from its own probabilities: the gate of "
        "a candidate whose cube decisions change",
    )
    p.add_argument(
        "--cube-reference",
        nargs="+",
        metavar="STORE",
        help="campaign stores of held-out long rollouts: promote only if the candidate's money cube decisions on them "
        "are not worse than AGAINST's (paired, 95%% interval; bgbot.arena.cubegate)",
    )
    p.add_argument("--json", action="store_true", help="print the decision as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = benchmark.GateSettings(
        args.games,
        seed=args.seed,
        workers=args.workers,
        plies=args.ply,
        cube=args.cube,
        cube_reference=tuple(args.cube_reference or ()),
    )
    try:
        with distributed.interrupt_signals():  # Ctrl-C, SIGTERM: stop the workers, print the games finished
            d = benchmark.gate(args.candidate, args.against, settings)
    except benchmark.GamesStopped as stop:
        _print_stopped(args, stop)
        note = "partial, not judged" if stop.partial is not None else "too few for an estimate"
        print(f"error: {stop} ({note}): nothing promoted, the registry not touched", file=sys.stderr)
        return stop.exit_status
    if args.json:
        print(json.dumps(d, indent=2))
    else:
        verdict = f"ACCEPTED, promoted to {d['promoted_to']}" if d["accepted"] else "rejected"
        if d["registry"]:
            registry = f"recorded in {d['registry']}"
        else:
            registry = f"registry not touched (the candidate is not in {os.path.dirname(d['against']) or '.'})"
        print(f"{_summary(d, d['games'], d['games'])}: {verdict}; {registry}")
    return benchmark.EXIT_ACCEPTED if d["accepted"] else benchmark.EXIT_REJECTED


def _summary(d: dict, done: int, games: int) -> str:
    """The line's ``CANDIDATE vs AGAINST: ppg, CI over games (seed), cube check`` from a decision ``d``."""
    over = f"{done} {'cubeful ' if d['cube'] else ''}games" + ("" if done == games else f" of {games}")
    return (
        f"{d['candidate']} vs {d['against']}: {figure(d['ppg'], '+.3f')} ppg, 95% CI [{figure(d['ci_low'], '+.3f')}, "
        f"{figure(d['ci_high'], '+.3f')}] over {over} (seed {d['seed']}){benchmark.cube_check_note(d['cube_check'])}"
    )


def _print_stopped(args: argparse.Namespace, stop: benchmark.GamesStopped) -> None:
    """The games finished before the gate stopped (nothing, with too few for an estimate), marked partial."""
    if stop.partial is None:
        return
    p = stop.partial
    d = {
        "accepted": False,
        "complete": False,
        "interrupted": stop.signal,
        "candidate": args.candidate,
        "against": args.against,
        "promoted_to": None,
        "registry": None,
        "ppg": p["ppg"],
        "ci_low": p["ci_low"],
        "ci_high": p["ci_high"],
        "games": stop.games,
        "games_done": p["games"],
        "seed": args.seed,
        "plies": args.ply,
        "cube": args.cube,
        "cube_check": None,
    }
    if args.json:
        print(json.dumps(d, indent=2), flush=True)
    else:
        why = f"INTERRUPTED ({stop.signal})" if stop.signal else "STOPPED"
        print(f"{_summary(d, p['games'], stop.games)}: {why}, partial: not judged", flush=True)
