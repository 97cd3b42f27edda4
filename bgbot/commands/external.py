"""``bgbot external --port P [--host H] [--model PATH] [--ply N]``: GNU Backgammon's external player
(:mod:`bgbot.protocols.external`)."""

from __future__ import annotations

import argparse

from bgbot.commands import common
from bgbot.errors import whole_number


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "external",
        help="play for GNU Backgammon as its external player",
        description="Listen on a TCP port and play the side GNU Backgammon hands over with "
        "'set player N external HOST:PORT' (start bgbot first), at money or match scores.",
    )
    p.add_argument("--port", type=whole_number, required=True, help="TCP port to listen on")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    common.add_model_argument(p)
    p.add_argument("--ply", type=common.ply, default=0, metavar="N", help="search depth 0..2 (default 0)")
    p.add_argument("--verbose", action="store_true", help="log every line received and answered on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bgbot.protocols import external

    if not 0 <= args.ply <= 2:
        raise external.ExternalError(f"--ply must be 0..2, got {args.ply}")
    sock = external.listen(args.host, args.port)  # listening (and failing on a port in use) before the model loads
    try:
        bot = common.load_bot(args)
    except BaseException:
        sock.close()
        raise
    return external.serve(bot, sock, args.ply, verbose=args.verbose)
