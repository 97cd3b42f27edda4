"""``bgbot analyse FILE.mat [--json] [--ply N] [--model PATH]``: rate every decision of a match
(:mod:`bgbot.protocols.analysis`)."""

from __future__ import annotations

import argparse

from bgbot.commands import common


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "analyse",
        help="rate every checker play and cube decision of a .mat match file",
        description="Replay a Jellyfish .mat match (GNU Backgammon's export, bgbot's, other programs') and compare "
        "every checker play and cube decision with the bot's best at the score: equity lost (normalised, as GNU "
        "Backgammon reports it), marks doubtful/bad/very bad at 0.030/0.060/0.120, and a summary per player.",
    )
    p.add_argument("file", metavar="FILE.mat", help="the match file")
    p.add_argument("--json", action="store_true", help="print JSON instead of a report")
    p.add_argument("--ply", type=common.ply, default=0, metavar="N", help="search depth for checker play (default 0)")
    common.add_model_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bgbot.protocols import analysis

    bot = common.load_bot(args)
    result = analysis.analyse_file(bot, args.file, args.ply)
    if args.json:
        common.print_json(result)
    else:
        print(analysis.format_report(result))
    return 0
