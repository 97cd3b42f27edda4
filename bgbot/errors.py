"""The one base class of every error bgbot raises for bad input: the command line reports a :class:`BgbotError` as one
``error: ...`` line with exit status 2; any other exception is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from numbers import Integral
from typing import NoReturn


class BgbotError(ValueError):
    """Bad input or an unusable state, with a message that names what is wrong (a malformed ID, impossible dice, an
    illegal play, a corrupt checkpoint, a bad request). A ``ValueError``, so that callers catching that keep working."""


def is_int(value: object) -> bool:
    """Whether ``value`` is a whole number, Python's or numpy's (``numbers.Integral``), and not a bool (``True`` is an
    ``int`` in Python, never a count). The one such check of bgbot's argument validation."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def run_script(main: Callable[[], object]) -> NoReturn:
    """Run a script's ``main()`` (``scripts/``) as the command line runs a command: a :class:`BgbotError` or an
    ``OSError`` (a missing checkpoint, an unreadable file) becomes one ``error: ...`` line on standard error and exit
    status 2, a closed output pipe exit 0, anything else keeps its traceback (a bug). ``main``'s return value, an int,
    is the exit status (``None``: 0).

    Raises:
        SystemExit: always, with the exit status.
    """
    try:
        status = main()
    except BrokenPipeError:
        raise SystemExit(0) from None
    except (BgbotError, OSError) as err:
        sys.stderr.write(f"error: {err}\n")
        raise SystemExit(2) from None
    raise SystemExit(status if isinstance(status, int) else 0)


def int_at_least(lo: int, even: bool = False) -> Callable[[str], int]:
    """An argparse ``type=`` for a whole-number option that must be at least ``lo`` (a game, ply or worker count), and
    with ``even`` an even one (games played in duplicate pairs): anything else is argparse's usage error, which names
    the option (``error: argument --games: a whole number >= 1, got 0``) and exits with status 2 before any work
    starts.

    Returns:
        The parser: ``str -> int``.
    """
    what = f"an even whole number >= {lo}" if even else f"a whole number >= {lo}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
        if value < lo or (even and value % 2):
            raise argparse.ArgumentTypeError(f"{what}, got {value}")
        return value

    return parse
