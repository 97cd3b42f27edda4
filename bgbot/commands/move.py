"""``bgbot move POSITION DICE [--json] [--model PATH] [--ply N]``: the legal plays ranked by the model, best first."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bgbot.commands import common
from bgbot.cube import decision as cube_lib

if TYPE_CHECKING:
    from bgbot.api import Bot


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "move",
        help="rank the legal plays by the model's equity",
        description="Rank every legal play of DICE in POSITION by the model, best first: "
        "cubeless equity and outcome probabilities from the mover's side (match "
        "winning chance at a match score).",
    )
    common.add_position_arguments(p, dice=True)
    common.add_model_argument(p)
    p.add_argument("--ply", type=int, default=0, metavar="N", help="search depth (0 = the net's own evaluation)")
    p.set_defaults(func=run)


def answer(bot: Bot, position: str, dice: str | None, ply: int) -> dict:
    """``{"position_id", "dice", "plays": [{"play", "position_id", "equity", "probabilities"[, "mwc"]}]}``, best
    first; a match score adds ``"cube"`` and ``"match"``."""
    ctx = common.resolve(position, dice, need_dice=True)
    assert ctx.dice is not None  # need_dice=True
    plays = bot.rank_plays(ctx.position, ctx.dice, ctx.cube, ctx.match, ply=ply)
    out: dict[str, object] = {
        "position_id": ctx.position_id,
        "dice": list(ctx.dice),
        "plays": [p.to_json() for p in plays],
    }
    if not ctx.match.is_money:
        out["cube"] = {"value": ctx.cube.value, "owner": ctx.cube.owner}
        out["match"] = cube_lib.match_json(ctx.match)
    return out


def run(args: argparse.Namespace) -> int:
    position, dice = common.request(args, dice=True)
    bot = common.load_bot(args)
    if args.batch is not None:
        return common.run_batch(args.batch, lambda line: answer(bot, *common.split_line(line, dice=True), args.ply))
    result = answer(bot, position, dice, args.ply)
    if args.json:
        common.print_json(result)
        return 0
    print_table(result, common.describe(common.resolve(position, dice, need_dice=True)), args.ply)
    return 0


def print_table(result: dict, game: str, ply: int) -> None:
    """A hint table like GNU Backgammon's: rank, play, equity (and MWC), the mover's probabilities."""
    plays = result["plays"]
    match = any("mwc" in p for p in plays)
    print(f"Position ID {result['position_id']}, dice {common.format_dice(result['dice'])}, {game}; {ply}-ply")
    width = max(4, max(len(p["play"]) for p in plays))
    head = f"{'':5} {'Play':<{width}}  {'Equity':>7}" + (f"  {'MWC':>6}" if match else "")
    print(head + f"  {'Win':>6} {'W(g)':>6} {'W(bg)':>6}  {'Lose':>6} {'L(g)':>6} {'L(bg)':>6}")
    best = plays[0]["mwc" if match else "equity"]
    for i, p in enumerate(plays, 1):
        q = p["probabilities"]
        value = p["mwc" if match else "equity"]
        diff = "" if i == 1 else f" ({value - best:+.2%})" if match else f" ({value - best:+.3f})"
        line = f"{i:4d}. {p['play']:<{width}}  {p['equity']:+7.3f}" + (f"  {p['mwc']:6.1%}" if match else "")
        note = "" if p.get("ply", ply) == ply else f"  [{p['ply']}-ply: outside the move filter]"
        print(
            line + f"  {q['win']:6.3f} {q['win_gammon']:6.3f} {q['win_backgammon']:6.3f}  {1 - q['win']:6.3f} "
            f"{q['lose_gammon']:6.3f} {q['lose_backgammon']:6.3f}{diff}{note}"
        )
