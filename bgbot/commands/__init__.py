"""The subcommands of the ``bgbot`` command line, one module each.

Each module defines ``add_parser(subparsers)`` (adds its ``argparse`` subparser and sets ``func=run`` on it) and
``run(args) -> int`` (the exit status). :mod:`bgbot.cli` imports the modules it lists in ``COMMANDS``; helpers shared
by the commands live in :mod:`bgbot.commands.common`. Commands only parse and print: the logic is in the library.
"""
