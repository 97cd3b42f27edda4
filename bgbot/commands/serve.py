"""``bgbot serve [--host H] [--port P] [--model PATH]``: the HTTP JSON API (:mod:`bgbot.protocols.server`; needs the
optional extra ``bgbot[server]``)."""

from __future__ import annotations

import argparse

from bgbot.commands import common


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "serve",
        help="an HTTP JSON API (pip install 'bgbot[server]')",
        description="Serve GET /v1/moves, /v1/move, /v1/cube, /v1/health and POST /v1/batch as JSON (the shapes "
        "of the CLI's --json); API documentation at /docs. Needs FastAPI and uvicorn: pip install 'bgbot[server]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="TCP port (default 8080)")
    common.add_model_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bgbot.protocols import server

    server.check_port(args.host, args.port)
    server._fastapi()
    return server.serve(common.load_bot(args), args.host, args.port)
