"""``bgbot train --config CONFIG --run-dir DIR [--resume]``: self-play training (the same as ``python -m training``).

The training code lives beside the library, in the source tree's ``training/`` folder; it is installed as the package
``bgbot_training`` (a name that cannot clash with other projects' ``training``) and imported only by this command.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from types import ModuleType

from bgbot.errors import BgbotError


class TrainingMissingError(BgbotError):
    """The training package is neither installed (``bgbot_training``) nor importable from a checkout (``training``)."""


def training_cli() -> ModuleType:
    """The training package's ``cli`` module: ``training.cli`` when this bgbot runs from a source tree that has
    ``training/`` beside it (so a checkout trains with its own code, not with an installed copy), else the installed
    ``bgbot_training.cli``, else ``training.cli``.

    Raises:
        TrainingMissingError: neither can be imported.
    """
    beside = (Path(__file__).resolve().parents[2] / "training" / "cli.py").is_file()
    for name in ("training.cli", "bgbot_training.cli") if beside else ("bgbot_training.cli", "training.cli"):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name not in (name, name.split(".")[0]):
                raise
    raise TrainingMissingError(
        "the training package is not installed: install bgbot from its source tree "
        "(pip install .) or run from a checkout"
    )


def add_parser(subparsers) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser(
        "train",
        help="train a value network by self-play (TD(lambda))",
        description="Train a value network by self-play. Presets: training/configs/*.toml "
        "(tiny: seconds; full: the shipped model's recipe).",
    )
    try:
        training_cli().add_arguments(p)
    except TrainingMissingError:
        pass  # run() raises it again, as one error line
    p.set_defaults(func=run, prog="bgbot train")  # prog: how the stages name the command in usage and errors


def run(args: argparse.Namespace) -> int:
    """Run training; see :func:`training.cli.run`."""
    return training_cli().run(args)
