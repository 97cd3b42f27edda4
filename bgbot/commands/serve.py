"""``bgbot serve [--host H] [--port P] [--model PATH] [--max-body BYTES] [--max-rollouts N] [--models DIR]
[--runs DIR]``: the HTTP JSON API and the web page (:mod:`bgbot.protocols.server`; needs the optional extra
``bgbot[server]``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bgbot.commands import common
from bgbot.errors import whole_number


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "serve",
        help="a web page and an HTTP JSON API (pip install 'bgbot[server]')",
        description="Serve the web page at / (a board, hints, rollouts, games against the bot, match analysis, "
        "models) and GET /v1/moves, /v1/move, /v1/cube, /v1/show, /v1/health and POST /v1/batch as JSON (the "
        "shapes of the CLI's --json); API documentation at /docs. The page has no login: listen on the loopback "
        "(the default) unless the network is trusted. Needs FastAPI and uvicorn: pip install 'bgbot[server]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=whole_number, default=8080, help="TCP port (default 8080)")
    p.add_argument(
        "--max-body", type=whole_number, default=1 << 20, metavar="BYTES", help="largest request body (default 1048576)"
    )
    p.add_argument("--max-rollouts", type=whole_number, default=2, metavar="N", help="rollouts run at once (default 2)")
    p.add_argument(
        "--models", default=None, metavar="DIR", help="models and their cards to list (default: ./models if present)"
    )
    p.add_argument("--runs", default=None, metavar="DIR", help="training runs (DIR/NAME/eval.jsonl) to plot")
    common.add_model_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bgbot.protocols import server

    server.check_port(args.host, args.port)
    if args.max_body < 1024:
        raise common.UsageError(f"--max-body must be at least 1024 bytes, got {args.max_body}")
    if not 1 <= args.max_rollouts <= 64:
        raise common.UsageError(f"--max-rollouts must be 1 .. 64, got {args.max_rollouts}")
    for name in ("models", "runs"):
        folder = getattr(args, name)
        if folder is not None and not Path(folder).is_dir():
            raise common.UsageError(f"--{name} {folder!r}: no such directory")
    models = args.models if args.models is not None else ("models" if Path("models").is_dir() else None)
    server._fastapi()
    return server.serve(
        common.load_bot(args),
        args.host,
        args.port,
        max_body=args.max_body,
        max_rollouts=args.max_rollouts,
        models_dir=models,
        runs_dir=args.runs,
    )
