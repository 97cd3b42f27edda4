"""``bgbot ubgi [--model PATH] [--ply N]``: a UBGI engine on standard input/output (:mod:`bgbot.protocols.ubgi`)."""

from __future__ import annotations

import argparse

from bgbot.commands import common


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "ubgi",
        help="a UBGI engine on standard input/output",
        description="Speak UBGI (the Universal Backgammon Interface, bungogood/bgci drafts v0.1 Level 2 and "
        "v0.2's set/get/keys) on standard input and output until 'quit'. See bgbot/protocols/ubgi.py.",
    )
    common.add_model_argument(p)
    p.add_argument("--ply", type=common.ply, default=0, metavar="N", help="bgbot search depth 0..2 (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bgbot.protocols import ubgi

    return ubgi.run(args.model, args.ply)
