"""``bgbot show POSITION [DICE] [--json]``: draw the board (:func:`bgbot.formats.diagram.draw`) to check by eye that
an ID was read as meant: the checkers, pip counts, cube, score, who is on roll and the dice."""

from __future__ import annotations

import argparse

from bgbot.commands import common
from bgbot.cube import decision as cube_lib
from bgbot.formats import context, diagram
from bgbot.rules import board


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "show",
        help="draw the board of a position",
        description="Draw POSITION as GNU Backgammon's ASCII board, the side on roll (X) at the bottom, with pip "
        "counts, the cube, the score, who is on roll and the dice. No model is loaded.",
    )
    p.add_argument(
        "position", nargs="?", metavar="POSITION", help="Position ID, PositionID:MatchID (GNUbg ID) or XGID=..."
    )
    p.add_argument("dice", nargs="*", metavar="DICE", help="the roll (optional; the position may carry dice)")
    p.add_argument("--json", action="store_true", help="print the facts the drawing shows as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.position is None:  # argparse would also call the optional DICE required
        raise common.UsageError("the following argument is required: POSITION (see 'bgbot show --help')")
    ctx = context.resolve(args.position, " ".join(args.dice) or None)
    if args.json:
        pips, off = board.pip_counts(ctx.position), board.off_counts(ctx.position)
        common.print_json(
            {
                "position_id": ctx.position_id,
                "dice": None if ctx.dice is None else list(ctx.dice),
                "pips": [int(pips[0]), int(pips[1])],
                "off": [int(off[0]), int(off[1])],
                "cube": {"value": ctx.cube.value, "owner": ctx.cube.owner},
                "match": cube_lib.match_json(ctx.match),
                "double_offered": ctx.double_offered,
                "board": diagram.draw(
                    ctx.position, dice=ctx.dice, cube=ctx.cube, match=ctx.match, double_offered=ctx.double_offered
                ).splitlines(),
            }
        )
        return 0
    print(
        diagram.draw(
            ctx.position,
            dice=ctx.dice,
            cube=ctx.cube,
            match=ctx.match,
            double_offered=ctx.double_offered,
            ids=(f" Position ID: {ctx.position_id}",),
        )
    )
    return 0
