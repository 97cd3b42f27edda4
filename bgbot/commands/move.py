"""``bgbot move POSITION DICE [--json] [--model PATH] [--ply N] [--play PLAY ...]``: the legal plays ranked by the
model, best first; with ``--play``, only the best and the given plays, each with its rank among all."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bgbot.commands import common
from bgbot.formats import notation, positionid
from bgbot.formats.figures import figure, ply_note
from bgbot.rules import board

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
    p.add_argument("--ply", type=common.ply, default=0, metavar="N", help="search depth (0 = the net's own evaluation)")
    p.add_argument(
        "--play",
        action="append",
        metavar="PLAY",
        help="evaluate this play (e.g. '8/5 6/5') beside the best; repeatable. Only these and the best are listed",
    )
    common.add_backgammon_argument(p)
    p.set_defaults(func=run)


def _select(ctx, plays: list[dict], wanted: list[str], generated=None) -> list[dict]:
    """The best play and the plays of ``wanted`` (notation text, resolved by
    :func:`bgbot.formats.notation.parse_play` among ``generated``, the position's
    :class:`bgbot.rules.movegen.Plays`), in rank order, each once.

    Raises:
        PlaySyntaxError, IllegalPlayError: a ``wanted`` play that is not a play or not legal here.
    """
    keep = {plays[0]["position_id"]}
    for text in wanted:
        parsed = notation.parse_play(ctx.position, ctx.dice, text, generated)
        keep.add(positionid.encode(board.flip(parsed.afterstate).astype("int8")))
    return [p for p in plays if p["position_id"] in keep]


def answer(
    bot: Bot, position: str, dice: str | None, ply: int, wanted: list[str] | None = None, backgammons: bool = True
) -> dict:
    """``{"position_id", "dice", "plays": [{"play", "position_id", "equity", "probabilities", "ply", "rank"[, "mwc",
    "emg"]}]}``, best first; a match score adds ``"cube"`` and ``"match"``. ``rank`` is the play's place among all
    legal plays (1 = best); ``emg`` (match score only) is GNU Backgammon's normalised equity of the play's match
    winning chance (its "Eq." at a match score). With ``wanted`` plays, only the best and those are listed. ``backgammons`` False: backgammons count as gammons
    (in the equities and the ranking); ``"cube"`` and ``"match"`` are then added in money play too."""
    ctx = common.resolve(position, dice, need_dice=True)
    return answer_context(bot, ctx if backgammons else ctx.with_backgammons(False), ply, wanted)


def answer_context(bot: Bot, ctx, ply: int, wanted: list[str] | None = None) -> dict:
    """:func:`answer` of a request already read (a :class:`bgbot.formats.context.Context` with dice): its plays
    generated, evaluated and ranked once (:meth:`bgbot.api.Bot.rank_contexts`)."""
    from bgbot.api import moves_json  # the api imports torch: only when a command runs

    found = bot.rank_contexts([ctx], ply)
    out = moves_json(found, [ctx])[0]
    if wanted:
        out["plays"] = _select(ctx, out["plays"], wanted, found.plays)
    return out


def run(args: argparse.Namespace) -> int:
    position, dice = common.request(args, dice=True)
    bot = common.load_bot(args)
    bg = args.backgammon_value == 3
    if args.batch is not None:
        return common.run_batch(
            args.batch, lambda line: answer(bot, *common.split_line(line, dice=True), args.ply, args.play, bg)
        )
    ctx = common.with_variants(common.resolve(position, dice, need_dice=True), args)
    result = answer_context(bot, ctx, args.ply, args.play)
    if args.json:
        common.print_json(result)
        return 0
    print_table(result, common.describe(ctx), args.ply)
    return 0


def print_table(result: dict, game: str, ply: int) -> None:
    """A hint table like GNU Backgammon's: rank, play, equity (at a match score GNU Backgammon's normalised cubeful
    equity and the match winning chance), the mover's probabilities."""
    plays = result["plays"]
    match = any("mwc" in p for p in plays)
    print(f"Position ID {result['position_id']}, dice {common.format_dice(result['dice'])}, {game}; {ply}-ply")
    width = max(4, max(len(p["play"]) for p in plays))
    head = f"{'':5} {'Play':<{width}}  {'Eq.(norm)' if match else 'Equity':>7}" + (f"  {'MWC':>6}" if match else "")
    print(head + f"  {'Win':>6} {'W(g)':>6} {'W(bg)':>6}  {'Lose':>6} {'L(g)':>6} {'L(bg)':>6}  Evaluator")
    best = plays[0]["mwc" if match else "equity"]
    for p in plays:
        q = p["probabilities"]
        i = p["rank"]
        value = p["mwc" if match else "equity"]
        diff = "" if i == 1 else f" ({figure(value - best, '+.2%')})" if match else f" ({figure(value - best, '+.3f')})"
        diff = f"  {p.get('evaluator', '?')}{diff}"
        shown = p["emg"] if match else p["equity"]
        line = f"{i:4d}. {p['play']:<{width}}  {shown:+{9 if match else 7}.3f}" + (
            f"  {p['mwc']:6.1%}" if match else ""
        )
        note = ply_note(p.get("ply", ply), ply)
        print(
            line
            + f"  {q['win']:6.3f} {q['win_gammon']:6.3f} {q['win_backgammon']:6.3f}  {figure(1 - q['win'], '6.3f')} "
            f"{q['lose_gammon']:6.3f} {q['lose_backgammon']:6.3f}{diff}{note}"
        )
