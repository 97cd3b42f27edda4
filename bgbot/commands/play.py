"""``bgbot play [--match-length N] [--dice auto|manual] [--ply N] [--seed S] [--save FILE.mat] [--position P
[--bgbot-first]] [--resume FILE] [--model PATH]``: play the bot in the terminal (:mod:`bgbot.protocols.play`)."""

from __future__ import annotations

import argparse

from bgbot.commands import common
from bgbot.errors import whole_number


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "play",
        help="play the bot in the terminal",
        description="Play bgbot in the terminal: a board as 'bgbot show' draws it, dice rolled or typed, plays "
        "typed as 8/5 6/5 (Enter confirms, undo takes back), hint, double/take/pass, resign; money play or a match; "
        "the games saved as .mat; quit (or the end of input, or a hang-up) keeps the game in progress in "
        "FILE.session.json beside the .mat file, and --resume continues it.",
    )
    p.add_argument(
        "--match-length", type=whole_number, default=0, metavar="N", help="play an N-point match (default: money)"
    )
    p.add_argument("--dice", choices=("auto", "manual"), default="auto", help="roll dice, or type both sides' dice")
    p.add_argument("--ply", type=common.ply, default=0, metavar="N", help="the bot's search depth 0..2 (default 0)")
    p.add_argument("--seed", type=whole_number, help="dice seed (default: random)")
    p.add_argument("--save", metavar="FILE.mat", default="bgbot-play.mat", help="where to save the games")
    p.add_argument(
        "--position",
        metavar="POSITION",
        help="start the first game from this position (you on roll; dice it carries, an XGID's or a Match ID's, are "
        "the first roll)",
    )
    p.add_argument("--bgbot-first", action="store_true", help="with --position: bgbot is on roll in it")
    p.add_argument("--jacoby", choices=("on", "off"), default="on", help="Jacoby rule in money play (default on)")
    p.add_argument(
        "--resume",
        metavar="FILE",
        help="continue the session saved in FILE (its match, score, game and dice; --model and --ply as given)",
    )
    common.add_model_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bgbot.protocols import play

    if args.resume and (args.position or args.match_length):
        raise play.PlayError("--resume continues a saved session: its match and position come from the file")
    if args.bgbot_first and not args.position:
        raise play.PlayError("--bgbot-first needs --position")
    if args.match_length < 0:
        raise play.PlayError(f"--match-length must be >= 0, got {args.match_length}")
    settings = play.PlaySettings(
        match_length=args.match_length,
        ply=args.ply,
        manual_dice=args.dice == "manual",
        seed=args.seed,
        save=args.save,
        position=args.position,
        bot_first=args.bgbot_first,
        jacoby=args.jacoby == "on",
        resume=args.resume,
    )
    return play.run(common.load_bot(args), settings)
