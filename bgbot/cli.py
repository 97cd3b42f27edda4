"""The ``bgbot`` command line: ``bgbot moves``, ``bgbot move``, ``bgbot cube`` and the commands of other modules.

Thin by design: each subcommand is a module of :mod:`bgbot.commands` with ``add_parser(subparsers)`` and
``run(args) -> int``; the logic is in the library. A command module listed in :data:`COMMANDS` that does not exist
(yet) is skipped. Bad input -- any :class:`bgbot.errors.BgbotError` from the library, a file that cannot be read, bad arguments -- is
reported as one ``error: ...`` line on stderr with exit status 2, without a traceback; any other exception is a
bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import bgbot
from bgbot.errors import BgbotError

COMMANDS = [
    "moves",
    "move",
    "cube",
    "rollout",
    "show",
    "tournament",
    "chouette",
    "gate",
    "train",
    "ubgi",
    "external",
    "serve",
    "play",
    "analyse",
]
"""Subcommand modules under :mod:`bgbot.commands`, in the order ``--help`` lists them."""

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one ``error: ...`` line and exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        """argparse's, except that arguments left over are reported by the subcommand's parser, whose hint names
        its own help (``(see 'bgbot move --help')``), not the top level's."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._chosen(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The innermost (sub)command parser that ``parsed`` went through: this one when no subcommand was chosen."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(str(getattr(parsed, action.dest, "")))
                if sub is not None:
                    return sub._chosen(parsed) if isinstance(sub, _Parser) else sub
        return self


def _command_modules(names: list[str]) -> list:
    """The modules ``bgbot.commands.<name>`` that exist, in order."""
    modules = []
    for name in names:
        qualified = f"bgbot.commands.{name}"
        try:
            modules.append(importlib.import_module(qualified))
        except ModuleNotFoundError as err:
            if err.name != qualified:
                raise
    return modules


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every available subcommand, or only with ``command`` (one of :data:`COMMANDS`): importing a
    command module may import torch, which takes seconds, so :func:`main` imports only the one it runs."""
    parser = _Parser(
        prog="bgbot",
        description="bgbot: a backgammon bot. Ask it for the best play or the cube action "
        "of a position given as a GNU Backgammon Position ID, GNUbg ID or "
        "XGID.",
    )
    parser.add_argument("--version", action="version", version=f"bgbot {bgbot.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module in _command_modules([command] if command in COMMANDS else COMMANDS):
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is None and argv == ["--version"]:  # answered without importing the commands (and torch)
        print(f"bgbot {bgbot.__version__}")
        return 0
    try:
        parser = build_parser(command)  # imports the command's modules (numpy, torch: seconds), Ctrl-C included
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error already reported
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C while the command loads: nothing done, nothing to print
        return 130
    try:
        return args.func(args)
    except (BgbotError, OSError) as err:
        if isinstance(err, BrokenPipeError):
            return 0
        sys.stderr.write(f"error: {err}\n")
        return EXIT_USAGE
    except KeyboardInterrupt as stop:  # 130; SIGTERM under bgbot.arena.distributed.interrupt_signals: 143
        return getattr(stop, "exit_status", 130)


if __name__ == "__main__":
    sys.exit(main())
