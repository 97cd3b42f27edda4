"""``bgbot train --config CONFIG --run-dir DIR [--resume]``: self-play training (the same as ``python -m training``)."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    """Add the ``train`` subcommand."""
    from training.cli import add_arguments

    p = subparsers.add_parser("train", help="train a value network by self-play (TD(lambda))",
                              description="Train a value network by self-play. Presets: training/configs/*.toml "
                                          "(tiny: seconds; full: the shipped model's recipe).")
    add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run training; see :func:`training.cli.run`."""
    from training.cli import run as run_training

    return run_training(args)
