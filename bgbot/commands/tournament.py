"""``bgbot tournament``: a round robin of players with duplicate dice (logic in :mod:`bgbot.arena.tournament`)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bgbot.arena import distributed, report, tournament
from bgbot.errors import whole_number


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "tournament",
        help="round robin of players with duplicate dice, ppg ± 95%% CI",
        description="Play every pairing of the players (cubeless money by default; --cube: cubeful money; "
        "--match-length N: N-point matches; duplicate dice: each dice sequence twice with the seats "
        "swapped) and print ppg (or match-win rate) with a 95% confidence interval per pairing and a "
        "ranking. A player is PATH.pt[:PLY], pubeval, gnubg[:PLY] or random. Limits: --games 4 .. "
        f"{tournament.MAX_GAMES:,} per pairing (2 for matches), --seed 0 .. 2**63 - 1, --workers 1 .. "
        f"{tournament.MAX_WORKERS}. The results are printed before the --out files are written; a file that cannot be "
        "written is reported after them (exit status 2).",
    )
    p.add_argument(
        "--player",
        action="append",
        metavar="SPEC",
        help="a player (give at least two): PATH.pt[:PLY], pubeval, gnubg[:PLY], random",
    )
    p.add_argument("--games", type=whole_number, help="games per pairing (even: games/2 duplicate pairs; at least 4)")
    p.add_argument("--seed", type=whole_number, default=0, help="dice seed (default 0)")
    p.add_argument(
        "--workers",
        type=whole_number,
        default=min(os.cpu_count() or 1, tournament.MAX_WORKERS),
        help="worker processes (default: all CPUs); results do not depend on it",
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play the chunks on Ray instead of --workers processes: 'local' or a cluster address HOST:PORT "
        "(pip install 'bgbot[ray]'); the results are the same",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write each pairing's games as a Jellyfish .mat file into DIR (matches: one file per match), and the "
        "results as DIR/results.json",
    )
    p.add_argument(
        "--cube",
        action="store_true",
        help="cubeful money games: bots double, take and pass by bgbot.cube.decision from their own 0-ply "
        "probabilities; pubeval and random never double and always take",
    )
    p.add_argument(
        "--jacoby",
        choices=("on", "off"),
        default=None,
        help="Jacoby rule in cubeful money games (default on; only with --cube)",
    )
    p.add_argument(
        "--match-length",
        type=whole_number,
        default=None,
        metavar="N",
        help="play N-point matches (cubeful, Crawford rule; N >= 1); --games then counts matches",
    )
    p.add_argument(
        "--auto-doubles",
        type=whole_number,
        default=0,
        metavar="N",
        help="automatic doubles in cubeful money games (needs --cube; not in matches): a tied opening roll doubles "
        "the centred cube, at most N times a game (0 = off, the default; 1 = the usual convention). The Jacoby "
        "rule still applies until a player doubles",
    )
    p.add_argument(
        "--backgammon-value",
        type=whole_number,
        default=3,
        metavar="2|3",
        help="what a backgammon scores, in cubes: 3 (default) or 2 (backgammons count as gammons: scoring, "
        "cube decisions and net players' checker play)",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        help="finish the tournament whose games were saved in DIR (its --out): the settings are DIR's, only the "
        "games not yet played are played, and the totals are those of an uninterrupted run; a tournament that has "
        "finished prints the results recorded in DIR/results.json, with a note that nothing is left to resume",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="--out DIR may hold another tournament's files (its .mat files, results.json, chunks/): delete them "
        "(only them; other files are kept) and start afresh. Without it such a DIR is refused. Not with --resume",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown on stderr only on a terminal)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.force and args.resume is not None:
        raise tournament.TournamentError(tournament.FORCE_WITH_RESUME)
    if args.resume is not None:
        if args.player or args.games is not None or args.out is not None:
            raise tournament.TournamentError(
                "--resume DIR takes the players, games and rules saved in DIR: give only --workers, --ray, --json "
                "or --quiet with it"
            )
        try:
            saved = tournament.resume_settings(args.resume)
        except tournament.TournamentComplete as done:
            if done.results is not None:
                print(json.dumps(done.results, indent=2) if args.json else report.format_table(done.results))
            print(f"note: {done}", file=sys.stderr)
            return 0
        args.player, args.games, args.seed = saved["players"], saved["games"], saved["seed"]
        args.cube, args.match_length = saved["cube"], saved["match_length"] or None
        args.jacoby = None if not saved["cube"] else ("on" if saved["jacoby"] else "off")
        args.auto_doubles, args.backgammon_value = saved["auto_doubles"], saved["backgammon_value"]
        args.out = args.resume
        args.chunk_pairs = saved["chunk_pairs"]
    elif not args.player or args.games is None:
        raise tournament.TournamentError("give the players (--player, at least two) and --games (or --resume DIR)")
    if args.match_length is not None and args.match_length < 1:
        raise tournament.TournamentError(
            f"--match-length must be at least 1, got {args.match_length} (leave it out for money play)"
        )
    match_length = args.match_length or 0
    if args.jacoby is not None and not args.cube:
        raise tournament.TournamentError(
            "--jacoby applies to cubeful money games only: add --cube"
            + (" and drop --match-length (matches have no Jacoby rule)" if match_length else "")
        )
    if args.jacoby is not None and match_length:
        raise tournament.TournamentError("--jacoby does not apply to matches (no Jacoby rule in match play)")
    if args.out is not None and not args.out.strip():
        raise tournament.TournamentError("--out needs a directory name, got an empty one")
    try:
        with distributed.interrupt_signals():  # Ctrl-C, SIGTERM: stop the workers, keep the whole pairs finished
            results, files = _play(args, match_length)
    except tournament.TournamentStopped as stop:
        if stop.results["pairings"]:
            print(json.dumps(stop.results, indent=2) if args.json else report.format_table(stop.results), flush=True)
        tournament.write_files(stop.results, stop.files)
        print(f"error: {stop}", file=sys.stderr)
        return stop.exit_status
    print(json.dumps(results, indent=2) if args.json else report.format_table(results), flush=True)
    tournament.write_files(results, files)
    if args.out is not None:
        tournament.finish_saved(args.out, results)
    return 0


def _play(args: argparse.Namespace, match_length: int):
    return tournament.play(
        args.player,
        tournament.TournamentSettings(
            args.games,
            seed=args.seed,
            workers=args.workers,
            out_dir=args.out,
            cube=args.cube,
            match_length=match_length,
            jacoby=args.jacoby != "off",
            progress=not args.quiet,
            ray=args.ray,
            auto_doubles=args.auto_doubles,
            backgammon_value=args.backgammon_value,
            resume=args.resume is not None,
            chunk_pairs=getattr(args, "chunk_pairs", None),
            force=args.force,
        ),
    )
