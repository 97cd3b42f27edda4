"""``bgbot cube POSITION [--json] [--model PATH] [--probabilities W,WG,WBG,LG,LBG] [--jacoby on|off]``: the cube
action of the side on roll before rolling, with the equities of No double, Double/Take and Double/Pass."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bgbot.commands import common
from bgbot.cube import decision as cube_lib
from bgbot.errors import BgbotError
from bgbot.evaluation.classes import cube_efficiency

if TYPE_CHECKING:
    import numpy as np

    from bgbot.api import Bot


class ProbabilitiesSyntaxError(BgbotError):
    """``--probabilities`` that are not five comma-separated numbers."""


def parse_probabilities(text: str) -> list[float]:
    """``"0.6,0.2,0.01,0.1,0.005"`` -> five floats (checked for consistency later by bgbot.cube.decision)."""
    try:
        values = [float(v) for v in text.replace(" ", "").split(",")]
    except ValueError:
        values = []
    if len(values) != 5:
        raise ProbabilitiesSyntaxError(
            f"--probabilities takes five comma-separated numbers W,WG,WBG,LG,LBG, got {text!r}"
        )
    return values


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
        "--jacoby",
        choices=["on", "off"],
        help="Jacoby rule for money play (default: on, unless the Match ID or XGID says otherwise)",
    )
    p.set_defaults(func=run)


def answer(bot: Bot | None, position: str, args: argparse.Namespace) -> dict:
    """``bgbot.cube.decision.to_json`` of the decision, with ``"position_id"`` first."""
    ctx = common.resolve(position, None, need_dice=False)
    if args.jacoby is not None:
        ctx = ctx.with_jacoby(args.jacoby == "on")
    probabilities: list[float] | np.ndarray
    if args.probabilities is not None:
        probabilities = parse_probabilities(args.probabilities)
        efficiency = cube_efficiency(ctx.position)
        decision = cube_lib.decide(probabilities, ctx.cube, ctx.match, efficiency)
    else:
        assert bot is not None  # run() loads a model unless --probabilities is given
        probabilities = bot.evaluate(ctx.position).to_array()
        decision = bot.cube_action(ctx.position, ctx.cube, ctx.match, probabilities=probabilities)
    return {"position_id": ctx.position_id, **cube_lib.to_json(decision, probabilities, ctx.cube, ctx.match)}


def run(args: argparse.Namespace) -> int:
    position, _ = common.request(args, dice=False)
    if args.batch is not None and args.probabilities is not None:
        raise common.UsageError("--probabilities answers one POSITION; it cannot be used with --batch")
    bot = None if args.probabilities is not None else common.load_bot(args)
    if args.batch is not None:
        return common.run_batch(args.batch, lambda line: answer(bot, common.split_line(line, dice=False)[0], args))
    result = answer(bot, position, args)
    if args.json:
        common.print_json(result)
        return 0
    ctx = common.resolve(position, None, need_dice=False)
    if args.jacoby is not None:
        ctx = ctx.with_jacoby(args.jacoby == "on")
    print_decision(result, common.describe(ctx))
    return 0


def print_decision(result: dict, game: str) -> None:
    """The decision as GNU Backgammon's hint shows it: the three equities, their differences, the proper action."""
    q, eq = result["probabilities"], result["equities"]
    mwc = result["unit"] == "mwc"
    print(f"Position ID {result['position_id']}, {game}; cube efficiency {result['cube']['efficiency']:.3f}")
    print(
        f"Cubeless probabilities (side on roll): win {q['win']:.3f} (gammon {q['win_gammon']:.3f}, backgammon "
        f"{q['win_backgammon']:.3f}), lose {1 - q['win']:.3f} (gammon {q['lose_gammon']:.3f}, backgammon "
        f"{q['lose_backgammon']:.3f})"
    )
    print(f"Cubeful {'match winning chance' if mwc else 'equities'}:")
    best = max(eq["no_double"], min(eq["double_take"], eq["double_pass"]))
    for i, (key, name) in enumerate(
        (("no_double", "No double"), ("double_take", "Double, take"), ("double_pass", "Double, pass")), 1
    ):
        value = f"{eq[key]:7.2%}" if mwc else f"{eq[key]:+7.3f}"
        diff = eq[key] - best
        rel = "" if abs(diff) < 5e-7 else (f" ({diff:+.2%})" if mwc else f" ({diff:+.3f})")
        print(f"{i:4d}. {name:<14} {value}{rel}")
    print(f"Proper cube action: {result['action']}")
    if result["take_point"] is not None:
        print(f"Take point (opponent's minimum winning chance): {result['take_point']:.1%}")
