"""Command line of a training run (``python -m training`` and ``bgbot train``): argument parsing only."""

from __future__ import annotations

import argparse
import sys

from bgbot.errors import BgbotError, whole_number

from .config import TrainConfig
from .stages import STAGES
from .stages import main as stage_main
from .train import RunError, train


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The training options, shared by ``python -m training`` and ``bgbot train``."""
    p.add_argument(
        "stage",
        nargs="?",
        default="td",
        choices=("td", *STAGES),
        help=f"td (TD(lambda) self-play, the default) or a later stage: {', '.join(STAGES)} "
        "(python -m training STAGE --help)",
    )
    p.add_argument("stage_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.add_argument("--config", help="TOML preset: a path or a name in training/configs (tiny, full); td only")
    p.add_argument("--run-dir", help="run directory, e.g. runs/NAME (checkpoints, logs, plots); td only")
    p.add_argument("--resume", action="store_true", help="continue from RUN_DIR/latest.pt (a finished run: no-op)")
    p.add_argument(
        "--force", action="store_true", help="start over in a RUN_DIR that holds another run's files, deleting them"
    )
    p.add_argument("--games", type=whole_number, help="override the config's total games (at least 1)")
    p.add_argument("--no-eval", action="store_true", help="skip the periodic benchmarks against pubeval")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


_TD_ONLY = ("config", "run_dir", "resume", "force", "games", "no_eval")


def run(args: argparse.Namespace) -> int:
    """Run training as ``args`` say; print a JSON summary. Returns the exit status."""
    import dataclasses
    import json

    if args.stage != "td":
        before = [f"--{n.replace('_', '-')}" for n in _TD_ONLY if getattr(args, n) not in (None, False)]
        if before:  # "train --resume fit ...": the option would be dropped, not given to the stage
            print(f"error: {', '.join(before)} before {args.stage}: give the stage's options after its name",
                  file=sys.stderr)  # fmt: skip
            return 2
        argv = [args.stage, *args.stage_args, *(["--quiet"] if args.quiet else [])]
        return stage_main(argv, getattr(args, "prog", "python -m training"))
    if args.stage_args:  # "td --config ...": the options came after the stage name
        p = argparse.ArgumentParser(prog="python -m training td")
        add_arguments(p)
        args = p.parse_args(args.stage_args)
        if args.stage != "td" or args.stage_args:
            print("error: td takes no further stage", file=sys.stderr)
            return 2
    if not args.config or not args.run_dir:
        print("error: the td stage needs --config and --run-dir", file=sys.stderr)
        return 2
    try:
        config = TrainConfig.load(args.config)
        if args.games is not None:
            config = dataclasses.replace(config, games=args.games)
        if args.resume and args.force:
            raise RunError("--resume continues a run and --force deletes it: give one of them")
        evaluate = None
        if not args.no_eval and config.eval_every:
            from .benchmark import pubeval_benchmark

            evaluate = pubeval_benchmark(config, args.run_dir)
        state = train(
            config,
            args.run_dir,
            resume=args.resume,
            evaluate=evaluate,
            progress=not args.quiet,
            force=args.force,
        )
    except (BgbotError, OSError) as e:  # bad input, a failed write, a diverged net: one line, status 2
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(dataclasses.asdict(state)))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in STAGES:
        return stage_main(argv)
    p = argparse.ArgumentParser(prog="python -m training", description="Train a bgbot value network by self-play.")
    add_arguments(p)
    return run(p.parse_args(argv))
