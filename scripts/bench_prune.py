"""What a move filter costs in play: duplicate games of the model through the filter against the same model without.

Plays ``--games`` cubeless money games (``games / 2`` duplicate pairs: both seatings of every dice sequence) between
the model at 0-ply with the move filter (:mod:`bgbot.evaluation.prune`, ``--keep``/``--extra``/``--margin``) as A and
the same model at 0-ply evaluating every play as B, through :func:`bgbot.arena.tournament.play`, and prints one JSON
object: A's points per game and its 95% interval (``ppg``, ``ci_low``, ``ci_high``; the filter passes the play bar
when ``ci_low >= -0.01``), the games' mean length, and the tournament's games per second (both players in it).

Usage: ``python scripts/bench_prune.py --filter models/prune/bgbot-5.pt [--model PATH] [--keep 4] [--extra 10]
[--margin 0.3] [--games 20000] [--seed 2026] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import json

from bgbot.api import DEFAULT_MODEL
from bgbot.arena import tournament
from bgbot.arena.players import NetPlayer
from bgbot.errors import int_at_least, run_script
from bgbot.evaluation import checkpoint, prune
from bgbot.evaluation.specialists import evaluator_for


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    ap.add_argument("--filter", required=True, help="the move filter's net (scripts/fit_prune.py)")
    ap.add_argument("--keep", type=int_at_least(1), default=4, help="plays always kept")
    ap.add_argument("--extra", type=int_at_least(0), default=10, help="further plays within --margin")
    ap.add_argument("--margin", type=float, default=0.3, help="equity margin of the --extra plays")
    ap.add_argument("--games", type=int_at_least(4), default=20000, help="games (even: duplicate pairs)")
    ap.add_argument("--seed", type=int_at_least(0), default=2026)
    ap.add_argument("--workers", type=int_at_least(1), default=2)
    args = ap.parse_args()
    model = args.model or str(DEFAULT_MODEL)
    move_filter = prune.MoveFilter(prune.load(args.filter), args.keep, args.extra, args.margin)
    exact = evaluator_for(checkpoint.load(model)[0])
    players = [NetPlayer(prune.PrunedEvaluator(exact, move_filter), 0, "filtered"), NetPlayer(exact, 0, "exact")]
    results, _ = tournament.play(
        players, tournament.TournamentSettings(args.games, seed=args.seed, workers=args.workers)
    )
    r = results["pairings"][0]
    print(
        json.dumps(
            {
                "model": model,
                "filter": {"net": args.filter, "keep": args.keep, "extra": args.extra, "margin": args.margin},
                "games": r["games"],
                "seed": args.seed,
                "ppg_filtered_minus_exact": round(r["ppg"], 4),
                "ci_low": round(r["ci_low"], 4),
                "ci_high": round(r["ci_high"], 4),
                "mean_plies": r.get("mean_plies"),
                "games_per_s": results.get("games_per_s"),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    run_script(main)
