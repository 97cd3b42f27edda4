"""``bgbot cube POSITION [--json] [--model PATH] [--ply N] [--cube-search] [--probabilities W,WG,WBG,LG,LBG] [--jacoby on|off]``:
the cube action of the side on roll before rolling, with the equities of No double, Double/Take and Double/Pass,
listed as GNU Backgammon lists them, the proper action first. While a double awaits an answer (a GNUbg ID or XGID
says so) the answer is the taker's, Take or Pass, as GNU Backgammon's ``hint`` gives it then. A position whose dice are
already rolled is refused: no double is possible after the roll."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bgbot.commands import common
from bgbot.formats import context
from bgbot.formats.figures import figure

if TYPE_CHECKING:
    from bgbot.api import Bot


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "cube",
        help="the cube action of the side on roll",
        description="The cube action of the side on roll before rolling: No double, "
        "Double/Take and Double/Pass by Janowski's model (money: equity "
        "normalised to the cube; match: match winning chance, Kazaross-XG2).",
    )
    common.add_position_arguments(p, dice=False)
    common.add_model_argument(p)
    p.add_argument(
        "--probabilities",
        metavar="W,WG,WBG,LG,LBG",
        help="cubeless probabilities of the side on roll to use instead of the model's",
    )
    p.add_argument(
        "--ply",
        type=common.ply,
        default=0,
        metavar="N",
        help="lookahead of the cubeless probabilities (0 = the net's own evaluation; the cube formula stays Janowski's)",
    )
    p.add_argument(
        "--cube-search",
        action="store_true",
        help="decide by cubeful search at --ply as GNU Backgammon does at n-ply: Janowski's cubeful equities at the "
        "leaves, averaged over the rolls (at 0-ply the same as without it)",
    )
    p.add_argument(
        "--jacoby",
        choices=["on", "off"],
        help="Jacoby rule for money play (default: on, unless the Match ID or XGID says otherwise)",
    )
    common.add_backgammon_argument(p)
    p.set_defaults(func=run)


def answer(bot: Bot | None, position: str, args: argparse.Namespace) -> dict:
    """The ``--json`` answer for one POSITION: :func:`bgbot.api.cube_json` with the command's options."""
    return answer_context(bot, request_context(position, args), args)


def request_context(position: str, args: argparse.Namespace) -> context.Context:
    """POSITION read once, with the command's variants (--backgammon-value, --jacoby). Raises
    :class:`bgbot.commands.common.UsageError` for a position whose dice are already rolled."""
    ctx = common.with_variants(common.resolve(position, None, need_dice=False), args)
    if ctx.dice is not None:
        raise common.UsageError(
            f"the dice are already rolled in {position!r} ({ctx.dice[0]}{ctx.dice[1]}): no double is possible after "
            "the roll (a cube decision comes before rolling; give the position without dice, or ask 'bgbot move')"
        )
    if args.jacoby is not None:
        ctx = ctx.with_jacoby(args.jacoby == "on")
    return ctx


def answer_context(bot: Bot | None, ctx: context.Context, args: argparse.Namespace) -> dict:
    """:func:`answer` of a request already read."""
    from bgbot.api import cube_json  # the api imports torch: only when a command runs

    given = None if args.probabilities is None else context.parse_probabilities(args.probabilities)
    return cube_json(bot, ctx, probabilities=given, ply=args.ply, cube_search=args.cube_search)


def run(args: argparse.Namespace) -> int:
    position, _ = common.request(args, dice=False)
    if args.batch is not None and args.probabilities is not None:
        raise common.UsageError("--probabilities answers one POSITION; it cannot be used with --batch")
    if args.probabilities is not None and args.ply:
        raise common.UsageError("--probabilities replaces the evaluation; it cannot be used with --ply")
    if args.probabilities is not None and args.cube_search:
        raise common.UsageError("--probabilities replaces the evaluation; it cannot be used with --cube-search")
    bot = None if args.probabilities is not None else common.load_bot(args)
    if args.batch is not None:
        return common.run_batch(args.batch, lambda line: answer(bot, common.split_line(line, dice=False)[0], args))
    ctx = request_context(position, args)
    result = answer_context(bot, ctx, args)
    if args.json:
        common.print_json(result)
        return 0
    print_decision(result, common.describe(ctx))
    return 0


def print_decision(result: dict, game: str) -> None:
    """The decision as GNU Backgammon's hint shows it: the options in its order (the proper action first) with their differences, the proper
    action; at a match score the normalised equity beside the match winning chance; the taker's answer while a double
    awaits it."""
    q = result["probabilities"]
    mwc = result["unit"] == "mwc"
    exact = result.get("evaluator") == "bearoff-two-sided" and not mwc
    x = "not used (exact cubeful equities)" if exact else f"{result['cube']['efficiency']:.3f}"
    print(
        f"Position ID {result['position_id']}, {game}; evaluator {result.get('evaluator', '?')}"
        f"{' (the cube nets)' if result.get('cube_nets') else ''}; cube efficiency {x}; {result['ply']}-ply"
    )
    print(
        f"Cubeless probabilities (side on roll): win {q['win']:.3f} (gammon {q['win_gammon']:.3f}, backgammon "
        f"{q['win_backgammon']:.3f}), lose {figure(1 - q['win'], '.3f')} (gammon {q['lose_gammon']:.3f}, backgammon "
        f"{q['lose_backgammon']:.3f})"
    )
    print("Cubeful equities (normalised) and match winning chance:" if mwc else "Cubeful equities:")
    for i, o in enumerate(result["options"], 1):
        rel = (
            ""
            if abs(o["diff"]) < 5e-7
            else (f" ({figure(o['diff'], '+.2%')})" if mwc else f" ({figure(o['diff'], '+.3f')})")
        )
        value = f"{figure(o['emg'], '+7.3f')}  {o['value']:7.2%}" if mwc else f"{figure(o['value'], '+7.3f')}"
        print(f"{i:4d}. {o['name']:<14} {value}{rel}")
    if result.get("double_offered"):
        t = result["taker"]
        take, drop = (
            (f"{t['take']:7.2%}", f"{t['pass']:7.2%}")
            if mwc
            else (f"{figure(t['take'], '+7.3f')}", f"{figure(t['pass'], '+7.3f')}")
        )
        print(f"Doubler's proper action: {result['doubler_action']}")
        print(f"A double awaits the answer. Taker: take {take}, pass {drop} ({'MWC' if mwc else 'equity'})")
        print(f"Proper cube action: {result['action']}")
        return
    print(f"Proper cube action: {result['action']}")
    if result["take_point"] is not None:
        print(f"Take point (opponent's minimum winning chance): {result['take_point']:.1%}")
