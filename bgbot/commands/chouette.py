"""``bgbot chouette``: three or more players in a chouette, money play (logic in :mod:`bgbot.arena.chouette`)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from bgbot import files
from bgbot.arena import chouette, distributed
from bgbot.arena.tournament import check_variants
from bgbot.errors import whole_number
from bgbot.formats import matfile


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "chouette",
        help="a chouette of three or more players (box against a team led by a captain), money play",
        description="Play a chouette: a first roll of one die each decides the box (highest), the captain (second) "
        "and the team order; the captain moves the team's checkers (every member's own play is computed and "
        "logged); the team doubles only when every member wants to, and each member takes or passes the box's "
        "double on its own (--member-cubes: a cube per member); the box settles with each member separately. "
        "Team loses: the box stays and the captain goes to the end of the team; team wins: the captain becomes "
        "the box and the box goes to the end of the team. A player is PATH.pt[:PLY], pubeval, gnubg[:PLY] or "
        "random.",
    )
    p.add_argument("--player", action="append", required=True, metavar="SPEC", help="a player (three or more)")
    p.add_argument("--games", type=whole_number, required=True, help="games to play (>= 1)")
    p.add_argument("--seed", type=whole_number, default=0, help="dice seed (default 0)")
    p.add_argument("--cube", action="store_true", help="play with the doubling cube")
    p.add_argument("--jacoby", choices=("on", "off"), default=None, help="Jacoby rule (default on; only with --cube)")
    p.add_argument(
        "--auto-doubles",
        type=whole_number,
        default=0,
        metavar="N",
        help="automatic doubles (needs --cube): a tied opening roll doubles the centred cube, at most N times a "
        "game (0 = off, the default); the Jacoby rule still applies until a player doubles",
    )
    p.add_argument(
        "--backgammon-value",
        type=whole_number,
        default=3,
        metavar="2|3",
        help="what a backgammon scores, in cubes: 3 (default) or 2 (backgammons count as gammons)",
    )
    p.add_argument("--member-cubes", action="store_true", help="each team member has a cube of its own (needs --cube)")
    p.add_argument("--json", action="store_true", help="print the results as JSON (without the per-game records)")
    p.add_argument("--out", metavar="DIR", help="write DIR/chouette.jsonl: one JSON line per game")
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown on stderr only on a terminal)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_variants(args.auto_doubles, args.backgammon_value)
    if len(args.player) < chouette.MIN_PLAYERS:
        raise chouette.ChouetteError(
            f"a chouette needs at least {chouette.MIN_PLAYERS} players: give --player three times or more "
            f"(got {len(args.player)})"
        )
    if args.jacoby is not None and not args.cube:
        raise chouette.ChouetteError("--jacoby applies with the cube only: add --cube")
    if args.out is not None and not args.out.strip():
        raise chouette.ChouetteError("--out needs a directory name, got an empty one")
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():  # before any game is played
        raise chouette.ChouetteError(files.not_a_directory("--out", args.out, "a directory for chouette.jsonl"))
    rules = chouette.ChouetteRules(
        cube=args.cube,
        jacoby=args.jacoby != "off",
        auto_doubles=args.auto_doubles,
        backgammons=args.backgammon_value == 3,
        member_cubes=args.member_cubes,
    )
    with distributed.interrupt_signals():  # Ctrl-C, SIGTERM: the games finished so far are the result
        results = chouette.run(args.player, args.games, seed=args.seed, rules=rules, progress=not args.quiet)
    records = results.pop("records")
    if records:
        print(json.dumps(results, indent=2) if args.json else chouette.format_table(results), flush=True)
    if args.out is not None and records:
        path = Path(args.out) / "chouette.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        matfile.write_atomic(path, "".join(json.dumps(r) + "\n" for r in records))
    if not results["complete"]:
        sig = signal.Signals[results["interrupted"]]
        print(
            f"{'error: ' if not records else ''}interrupted ({sig.name}) after {len(records)} of {args.games} games"
            + (": the results above are those of the games finished" if records else ""),
            file=sys.stderr,
        )
        return 128 + sig.value
    return 0
