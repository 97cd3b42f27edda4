"""``bgbot moves POSITION DICE [--json]``: every legal play and its resulting Position ID."""

from __future__ import annotations

import argparse

from bgbot.commands import common
from bgbot.formats import plays


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "moves",
        help="list every legal play",
        description="List every legal play of DICE in POSITION, each resulting position once, "
        "with the resulting Position ID (opponent on roll).",
    )
    common.add_position_arguments(p, dice=True)
    p.set_defaults(func=run)


def answer(position: str, dice: str | None) -> dict:
    """The JSON answer: ``{"position_id", "dice", "plays": [{"play", "position_id"}]}``."""
    ctx = common.resolve(position, dice, need_dice=True)
    assert ctx.dice is not None  # need_dice=True
    found = plays.legal_plays(ctx.position, ctx.dice)
    return {"position_id": ctx.position_id, "dice": list(ctx.dice), "plays": [p.to_json() for p in found]}


def run(args: argparse.Namespace) -> int:
    position, dice = common.request(args, dice=True)
    if args.batch is not None:
        return common.run_batch(args.batch, lambda line: answer(*common.split_line(line, dice=True)))
    result = answer(position, dice)
    if args.json:
        common.print_json(result)
        return 0
    n = len(result["plays"])
    print(
        f"Position ID {result['position_id']}, dice {common.format_dice(result['dice'])}: "
        f"{n} legal play{'s' if n != 1 else ''}"
    )
    width = max(len(p["play"]) for p in result["plays"])
    for i, p in enumerate(result["plays"], 1):
        print(f"{i:4d}. {p['play']:<{width}}  -> {p['position_id']}")
    return 0
