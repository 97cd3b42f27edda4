"""``bgbot gate``: copy a candidate checkpoint beside the model it plays against (AGAINST's directory) only if it beats
that model significantly and, with ``--cube-reference``, its cube decisions are not worse
(:func:`bgbot.arena.benchmark.gate`)."""

from __future__ import annotations

import argparse
import json
import os

from bgbot.arena import benchmark, tournament
from bgbot.commands import common
from bgbot.formats.figures import figure


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "gate",
        help="promote a checkpoint beside the model it beats significantly",
        description="Play CANDIDATE against the model AGAINST with duplicate dice; copy it into AGAINST's directory "
        "only when the 95% CI of its ppg lies above 0 and, with --cube-reference, its money cube decisions on the held-out "
        "rollouts are not worse (the promoted copy without optimiser state; the candidate keeps "
        "it). Every decision is appended to README.md in that directory (section 'Gate decisions'). At least "
        f"{benchmark.MIN_GATE_GAMES} games. Exit status: {benchmark.EXIT_ACCEPTED} promoted, "
        f"{benchmark.EXIT_REJECTED} rejected, 2 an error.",
    )
    p.add_argument("candidate", metavar="CANDIDATE", help="the candidate checkpoint (.pt)")
    p.add_argument(
        "--against",
        required=True,
        metavar="PATH",
        help="the model to beat, e.g. models/bgbot-5.pt; the candidate is copied beside it",
    )
    p.add_argument("--games", type=int, required=True, help=f"games (even, at least {benchmark.MIN_GATE_GAMES})")
    p.add_argument("--seed", type=int, default=0, help="dice seed (default 0)")
    p.add_argument(
        "--workers",
        type=int,
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
    d = benchmark.gate(args.candidate, args.against, settings)
    if args.json:
        print(json.dumps(d, indent=2))
    else:
        verdict = f"ACCEPTED, promoted to {d['promoted_to']}" if d["accepted"] else "rejected"
        games = f"{d['games']} {'cubeful ' if d['cube'] else ''}games"
        print(
            f"{d['candidate']} vs {d['against']}: {figure(d['ppg'], '+.3f')} ppg, 95% CI [{figure(d['ci_low'], '+.3f')}, "
            f"{figure(d['ci_high'], '+.3f')}] over {games} (seed {d['seed']}){benchmark.cube_check_note(d['cube_check'])}: "
            f"{verdict}"
        )
    return benchmark.EXIT_ACCEPTED if d["accepted"] else benchmark.EXIT_REJECTED
