"""``bgbot train --config CONFIG --run-dir DIR [--resume]``: self-play training (the same as ``python -m training``).

The training code lives beside the library, in the source tree's ``training/`` folder; it is installed as the package
``bgbot_training`` (a name that cannot clash with other projects' ``training``) and imported only by this command.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

from bgbot.errors import BgbotError


class TrainingMissingError(BgbotError):
    """The training package is neither installed (``bgbot_training``) nor importable from a checkout (``training``)."""


def training_cli() -> ModuleType:
    """The training package's ``cli`` module: ``bgbot_training.cli`` when installed, else ``training.cli`` (a checkout);
    the checkout's ``training.cli`` first when it sits beside this ``bgbot`` package.

    Raises:
        TrainingMissingError: neither can be imported.
    """
    names = ["bgbot_training.cli", "training.cli"]
    spec = importlib.util.find_spec("training")
    checkout = Path(__file__).resolve().parents[2] / "training"
    if spec is not None and spec.origin and Path(spec.origin).resolve().parent == checkout:
        names.reverse()  # running from a checkout: its own training code, not an installed copy of another tree
    for name in names:
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run training; see :func:`training.cli.run`."""
    return training_cli().run(args)
