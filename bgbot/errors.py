"""The one base class of every error bgbot raises for bad input: the command line reports a :class:`BgbotError` as one
``error: ...`` line with exit status 2; any other exception is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable
from numbers import Integral
from pathlib import Path
from typing import NoReturn


class BgbotError(ValueError):
    """Bad input or an unusable state, with a message that names what is wrong (a malformed ID, impossible dice, an
    illegal play, a corrupt checkpoint, a bad request). A ``ValueError``, so that callers catching that keep working."""


def is_int(value: object) -> bool:
    """Whether ``value`` is a whole number, Python's or numpy's (``numbers.Integral``), and not a bool (``True`` is an
    ``int`` in Python, never a count). The one such check of bgbot's argument validation."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def duplicate_path(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, str] | None:
    """The first name among ``paths`` that names the same file or directory as an earlier one, with that earlier name
    (``(name, earlier)``), or None. Names are compared as :meth:`pathlib.Path.resolve` makes them: ``S`` and ``S/``, a
    relative and an absolute name, a link and its target are one path. The one such comparison of bgbot's argument
    checks (:func:`check_distinct_paths`, a candidate gated against itself)."""
    seen: dict[Path, str] = {}
    for p in paths:
        name = os.fspath(p)
        key = Path(name).resolve()
        if key in seen:
            return name, seen[key]
        seen[key] = name
    return None


def check_distinct_paths(
    paths: Iterable[str | os.PathLike[str]], what: str, error: type[BgbotError] = BgbotError
) -> None:
    """Refuse a file or directory named twice among ``paths`` (:func:`duplicate_path`): a store or checkpoint that
    would count twice.

    Args:
        paths: the names as given. what: what each one is, which the message starts with (``"--decisions"``).
        error: the :class:`BgbotError` subclass raised (a stage's or a command's own).

    Raises:
        error: ``"--decisions 'S/' is given twice (also as 'S'): give it once"``; ``"--model 'A' is given twice: give
            it once"`` when both names are the same text.
    """
    found = duplicate_path(paths)
    if found is not None:
        name, earlier = found
        also = "" if name == earlier else f" (also as {earlier!r})"
        raise error(f"{what} {name!r} is given twice{also}: give it once")


_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")


def parse_whole(text: str) -> int:
    """``text`` read as a whole number when it is the ASCII digits 0-9 with an optional leading ``+`` or ``-`` and
    nothing else. Python's ``int`` also reads other scripts' digits (the Arabic-Indic ``'٣'``, the full-width
    ``'３'``), ``'1_000'`` and blanks around the digits; these are refused here. The one such reading of the whole
    numbers bgbot takes as text (the command line's options, the HTTP API's query parameters, UBGI's arguments).

    Raises:
        ValueError: anything else, or ``text`` not a ``str`` (callers word their own refusal, naming the field).
    """
    if not isinstance(text, str) or not _WHOLE_NUMBER.fullmatch(text):
        raise ValueError(f"not a whole number written in digits 0-9: {text!r}")
    return int(text)


def whole_number(text: str) -> int:
    """An argparse ``type=`` for a whole-number option with no bound of its own (a seed, a port): :func:`parse_whole`,
    else argparse's usage error naming the option and the value (``error: argument --seed: a whole number, got
    '٣'``), exit status 2 before any work starts.

    Returns:
        The value, an ``int``.
    """
    try:
        return parse_whole(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, got {text!r}") from None


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


def int_at_least(lo: int, even: bool = False, most: int | None = None) -> Callable[[str], int]:
    """An argparse ``type=`` for a whole-number option that must be at least ``lo`` (a game, ply or worker count), with
    ``even`` an even one (games played in duplicate pairs), and with ``most`` at most that: anything else is argparse's
    usage error, which names the option, the rule and the value (``error: argument --games: a whole number >= 1, got
    0``; ``argument --games: an even whole number 200 .. 10,000,000, got 201``; ``got '３'`` for anything but the
    digits 0-9, :func:`parse_whole`) and exits with status 2 before any work starts.

    Returns:
        The parser: ``str -> int``.
    """
    what = ("an even whole number" if even else "a whole number") + (
        f" >= {lo}" if most is None else f" {lo} .. {most:,}"
    )

    def parse(text: str) -> int:
        try:
            value = parse_whole(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
        if value < lo or (even and value % 2) or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"{what}, got {value}")
        return value

    return parse
