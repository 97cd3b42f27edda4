"""Helpers shared by the subcommands: POSITION/DICE arguments, model loading, JSON output and the batch engine loop.

Errors: anything a user typed wrong is a ``ValueError`` (the library's error classes all derive from it);
:func:`bgbot.cli.main` turns one into a single ``error: ...`` line on stderr and exit status 2. In batch mode
:func:`run_batch` turns each into ``{"error": "..."}`` on its own output line instead and goes on.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from bgbot.errors import BgbotError, parse_whole, whole_number
from bgbot.files import unreadable
from bgbot.formats import context

if TYPE_CHECKING:  # bgbot.api imports torch (seconds): only the commands that use a model load it
    from bgbot.api import Bot


class UsageError(BgbotError):
    """Arguments that do not fit together (POSITION and --batch, neither, ...)."""


def add_position_arguments(parser: argparse.ArgumentParser, dice: bool) -> None:
    """POSITION (optional: --batch replaces it), DICE if ``dice`` (optional: the position may carry them), --batch,
    --json."""
    parser.add_argument(
        "position", nargs="?", metavar="POSITION", help="Position ID, PositionID:MatchID (GNUbg ID) or XGID=..."
    )
    if dice:
        parser.add_argument(
            "dice", nargs="*", metavar="DICE", help="the roll: 31, 3-1 or '3 1' (optional when POSITION carries dice)"
        )
    parser.add_argument(
        "--batch",
        metavar="FILE",
        help="read one request per line from FILE ('-' for standard input) instead of POSITION"
        + (" and DICE" if dice else "")
        + "; write one JSON answer per line",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_backgammon_argument(parser: argparse.ArgumentParser) -> None:
    """--backgammon-value 2|3 (default 3): 2 counts backgammons as gammons (``MatchState.backgammons`` False)."""
    parser.add_argument(
        "--backgammon-value",
        type=whole_number,
        choices=(2, 3),
        default=3,
        metavar="2|3",
        help="what a backgammon scores, in cubes: 3 (default) or 2 (backgammons count as gammons)",
    )


def with_variants(ctx: context.Context, args: argparse.Namespace) -> context.Context:
    """``ctx`` with the command line's --backgammon-value applied."""
    return ctx if getattr(args, "backgammon_value", 3) == 3 else ctx.with_backgammons(False)


def ply(text: str) -> int:
    """The argparse ``type=`` of every ``--ply``: a search depth by :func:`bgbot.evaluation.search.check_ply`, refused
    as argparse's usage error before any work (``error: argument --ply: ply must be a whole number 0 .. 2 (the
    search depth), got 3``, exit status 2)."""
    from bgbot.evaluation.search import SearchError, check_ply

    try:
        value: object = parse_whole(text)
    except ValueError:
        value = text
    try:
        return check_ply(value)
    except SearchError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    """--model PATH."""
    parser.add_argument("--model", metavar="PATH", help="model checkpoint (default: the model shipped with bgbot)")


def load_bot(args: argparse.Namespace) -> Bot:
    """The bot of ``--model`` (default model when absent); a note on stderr when the checkpoint predates weight
    checksums (its weights could not be verified). Raises bgbot.evaluation.checkpoint.CheckpointError."""
    from bgbot.api import Bot

    bot = Bot.load(args.model)
    if bot.meta is not None and not bot.meta.checksum_verified:
        sys.stderr.write(
            f"note: {bot.path} has no weights checksum (saved before checksums existed): its weights were not "
            "verified; 'python scripts/add_checksum.py PATH' adds one\n"
        )
    return bot


def request(args: argparse.Namespace, dice: bool) -> tuple[str, str | None]:
    """POSITION and DICE text of a single (non-batch) request. Raises :class:`UsageError`."""
    if args.batch is not None:
        if args.position is not None:
            raise UsageError("give either POSITION" + (" and DICE" if dice else "") + " or --batch, not both")
        return "", None
    if args.position is None:
        raise UsageError("a POSITION is needed (or --batch FILE)")
    return args.position, (" ".join(args.dice) or None) if dice else None


def split_line(line: str, dice: bool) -> tuple[str, str | None]:
    """A batch line ``POSITION [DICE]`` -> (position text, dice text or None)."""
    position, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if rest and not dice:
        raise UsageError(f"a line holds one POSITION, got {line.strip()!r}")
    return position, rest or None


def resolve(position: str, dice: str | None, need_dice: bool) -> context.Context:
    """Parse POSITION and DICE (:func:`bgbot.formats.context.resolve`); with ``need_dice``, dice must come from one of
    them and no double may be pending (:class:`bgbot.formats.context.DoublePendingError`)."""
    ctx = context.parse_position(position)
    if need_dice and ctx.double_offered:
        raise context.double_pending(position)
    ctx = ctx if dice is None else ctx.with_dice(dice)
    if need_dice and ctx.dice is None:
        raise context.DiceSyntaxError(
            f"no dice: give DICE after POSITION {position!r} (e.g. 31), or a position that carries dice"
        )
    return ctx


def print_json(obj: dict, out: TextIO | None = None) -> None:
    """One compact JSON line, flushed."""
    out = out or sys.stdout
    out.write(json.dumps(obj) + "\n")
    out.flush()


MAX_ERROR = 500
"""Longest error message a batch answer carries (the message quotes the bad input, which may be huge)."""


def run_batch(path: str, answer: Callable[[str], dict]) -> int:
    """The engine loop: for each non-blank line of ``path`` ('-' = standard input), print ``answer(line)`` as one
    JSON line, or ``{"error": message}`` when it raises ValueError; flush after each line. Returns 0.

    Raises:
        UsageError: the file cannot be opened (missing, a directory: :func:`bgbot.files.unreadable`'s message).
    """
    # Undecodable bytes become U+FFFD, so a binary line is one bad request, not the end of the session. Only "\n"
    # ends a request: a bare carriage return (or another Unicode line break) inside a line stays part of that one
    # request, which gets one answer, so a client never falls out of step ("\r\n" endings are stripped as blanks).
    stream: TextIO
    if path != "-":
        try:
            stream = open(path, encoding="utf-8", errors="replace", newline="\n")
        except OSError as err:
            raise UsageError(unreadable("--batch", path, err, "a file of requests, one a line")) from None
    elif hasattr(sys.stdin, "buffer"):
        stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="\n")
    else:  # a text stream without bytes underneath (e.g. replaced in tests)
        stream = sys.stdin
    try:
        for line in stream:
            if not line.strip():
                continue
            try:
                obj = answer(line)
            except BgbotError as err:
                message = str(err)
                obj = {"error": message if len(message) <= MAX_ERROR else message[:MAX_ERROR] + "... (truncated)"}
            print_json(obj)
    finally:
        if path != "-":
            stream.close()
    return 0


def format_dice(dice: tuple[int, int]) -> str:
    """``(3, 1)`` -> ``"3-1"``."""
    return f"{dice[0]}-{dice[1]}"


def describe(ctx: context.Context) -> str:
    """One line on the game: money or match score, cube."""
    c, m = ctx.cube, ctx.match
    owner = {"centre": "centred", "me": "owned by the side on roll", "opponent": "owned by the opponent"}[c.owner]
    if m.is_money:
        game = f"money play, Jacoby rule {'on' if m.jacoby else 'off'}"
        game += "" if m.backgammons else ", backgammons count as gammons"
    else:
        flag = ", Crawford game" if m.crawford else ", post-Crawford" if m.post_crawford else ""
        game = f"{m.length}-point match, score {m.score[0]}-{m.score[1]} (side on roll first){flag}"
        game += "" if m.backgammons else ", backgammons count as gammons"
    return f"{game}; cube {c.value} {owner}"
