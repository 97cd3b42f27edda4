"""``bgbot cube POSITION [--json] [--model PATH] [--ply N] [--probabilities W,WG,WBG,LG,LBG] [--jacoby on|off]``:
the cube action of the side on roll before rolling, with the equities of No double, Double/Take and Double/Pass,
listed as GNU Backgammon lists them, the proper action first. While a double awaits an answer (a GNUbg ID or XGID
says so) the answer is the taker's, Take or Pass, as GNU Backgammon's ``hint`` gives it then."""

from __future__ import annotations

import argparse
from dataclasses import replace
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
        "--ply",
        type=int,
        default=0,
        metavar="N",
        help="lookahead of the cubeless probabilities (0 = the net's own evaluation; the cube formula stays Janowski's)",
    )
    p.add_argument(
        "--jacoby",
        choices=["on", "off"],
        help="Jacoby rule for money play (default: on, unless the Match ID or XGID says otherwise)",
    )
    p.set_defaults(func=run)


OPTION_NAMES = {"no_double": "No double", "double_take": "Double, take", "double_pass": "Double, pass"}


def options(equities: dict[str, float], emg: dict[str, float] | None, available: bool = True) -> list[dict]:
    """The cube options in GNU Backgammon's order (its ``hint``): the proper action first. When doubling is right,
    the double with the right answer (the lower of Double/Take and Double/Pass for the doubler), then the other
    double, then No double; when not doubling is right (also "too good"), No double, then the two doubles from the
    higher value down. Checked against gnubg 1.07 for every kind of action. Only No double where the side on roll
    may not double. Each ``{"option", "name", "value", "diff"[, "emg"]}``, ``diff`` from the first, in the unit of
    the equities.
    """
    nd, dt, dp = equities["no_double"], equities["double_take"], equities["double_pass"]
    right, wrong = ("double_take", "double_pass") if dt <= dp else ("double_pass", "double_take")
    if not available:
        order = ["no_double"]
    elif min(dt, dp) >= nd:
        order = [right, wrong, "no_double"]
    else:
        order = ["no_double", *sorted(("double_take", "double_pass"), key=lambda k: -equities[k])]
    first = equities[order[0]]
    out = []
    for key in order:
        item = {"option": key, "name": OPTION_NAMES[key], "value": round(equities[key], 6)}
        item["diff"] = round(equities[key] - first, 6)
        if emg is not None:
            item["emg"] = emg[key]
        out.append(item)
    return out


def answer(bot: Bot | None, position: str, args: argparse.Namespace) -> dict:
    """``bgbot.cube.decision.to_json`` of the decision, with ``"position_id"`` first, ``"options"`` in GNU Backgammon's order (the proper action first) and
    ``"ply"``; at a match score ``"emg"``, the equities as GNU Backgammon's normalised equity; while a double awaits
    an answer, ``"double_offered": true``, ``"action"`` the taker's answer (Take, Pass or Beaver), ``"doubler_action"``
    the doubler's proper action and ``"taker"`` the taker's values. ``"evaluator"`` says what answered
    (``bgbot.api.EVALUATORS``: the position's class, or ``given`` for ``--probabilities``); in the two-sided bear-off
    class, money play, the action comes from the database's exact cubeful equities at any ``--ply``."""
    ctx = common.resolve(position, None, need_dice=False)
    if args.jacoby is not None:
        ctx = ctx.with_jacoby(args.jacoby == "on")
    probabilities: list[float] | np.ndarray
    if args.probabilities is not None:
        probabilities = parse_probabilities(args.probabilities)
        efficiency = cube_efficiency(ctx.position)
        decision = replace(cube_lib.decide(probabilities, ctx.cube, ctx.match, efficiency), evaluator="given")
    else:
        assert bot is not None  # run() loads a model unless --probabilities is given
        source = bot.evaluate_with_class(ctx.position)[1]
        if args.ply == 0 or source == "bearoff-two-sided":  # exact where the class allows (api.Bot.cube_action)
            probabilities = bot.evaluate(ctx.position).to_array()
            decision = bot.cube_action(ctx.position, ctx.cube, ctx.match)
        else:
            probabilities = bot.evaluate(ctx.position, ply=args.ply).to_array()
            decision = bot.cube_action(ctx.position, ctx.cube, ctx.match, probabilities=probabilities)
            decision = replace(decision, evaluator=source)
    out = {"position_id": ctx.position_id, **cube_lib.to_json(decision, probabilities, ctx.cube, ctx.match)}
    emg = None
    if decision.unit == "mwc":
        keys = list(decision.equities)
        values = cube_lib.normalised_equity([decision.equities[k] for k in keys], ctx.cube, ctx.match)
        emg = {k: round(float(v), 6) for k, v in zip(keys, values)}
        out["emg"] = emg
    out["options"] = options(decision.equities, emg, decision.cube_available)
    out["ply"] = 0 if args.probabilities is not None else args.ply
    if ctx.double_offered:
        taker = cube_lib.take_answer(decision, ctx.match)
        out["double_offered"] = True
        out["doubler_action"] = out["action"]
        out["action"] = taker["action"]
        out["taker"] = taker
    return out


def run(args: argparse.Namespace) -> int:
    position, _ = common.request(args, dice=False)
    if args.batch is not None and args.probabilities is not None:
        raise common.UsageError("--probabilities answers one POSITION; it cannot be used with --batch")
    if args.probabilities is not None and args.ply:
        raise common.UsageError("--probabilities replaces the evaluation; it cannot be used with --ply")
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
    """The decision as GNU Backgammon's hint shows it: the options in its order (the proper action first) with their differences, the proper
    action; at a match score the normalised equity beside the match winning chance; the taker's answer while a double
    awaits it."""
    q = result["probabilities"]
    mwc = result["unit"] == "mwc"
    exact = result.get("evaluator") == "bearoff-two-sided" and not mwc
    x = "not used (exact cubeful equities)" if exact else f"{result['cube']['efficiency']:.3f}"
    print(
        f"Position ID {result['position_id']}, {game}; evaluator {result.get('evaluator', '?')}; cube efficiency {x}; "
        f"{result['ply']}-ply"
    )
    print(
        f"Cubeless probabilities (side on roll): win {q['win']:.3f} (gammon {q['win_gammon']:.3f}, backgammon "
        f"{q['win_backgammon']:.3f}), lose {1 - q['win']:.3f} (gammon {q['lose_gammon']:.3f}, backgammon "
        f"{q['lose_backgammon']:.3f})"
    )
    print("Cubeful equities (normalised) and match winning chance:" if mwc else "Cubeful equities:")
    for i, o in enumerate(result["options"], 1):
        rel = "" if abs(o["diff"]) < 5e-7 else (f" ({o['diff']:+.2%})" if mwc else f" ({o['diff']:+.3f})")
        value = f"{o['emg']:+7.3f}  {o['value']:7.2%}" if mwc else f"{o['value']:+7.3f}"
        print(f"{i:4d}. {o['name']:<14} {value}{rel}")
    if result.get("double_offered"):
        t = result["taker"]
        take, drop = (f"{t['take']:7.2%}", f"{t['pass']:7.2%}") if mwc else (f"{t['take']:+7.3f}", f"{t['pass']:+7.3f}")
        print(f"Doubler's proper action: {result['doubler_action']}")
        print(f"A double awaits the answer. Taker: take {take}, pass {drop} ({'MWC' if mwc else 'equity'})")
        print(f"Proper cube action: {result['action']}")
        return
    print(f"Proper cube action: {result['action']}")
    if result["take_point"] is not None:
        print(f"Take point (opponent's minimum winning chance): {result['take_point']:.1%}")
