"""The tournament harness's anchor benchmark: GNU Backgammon 0-ply against pubeval with duplicate dice.

Expected: a 95% CI that contains +0.633 ppg (200,000 games measured here) and is at most ±0.02 wide at 20,000 games.
Usage: ``python scripts/bench_tournament.py [--games 20000] [--seed 2024] [--workers N]`` (default: one per CPU)
"""

from __future__ import annotations

import argparse
import os

from bgbot.arena import tournament
from bgbot.errors import int_at_least, run_script

ANCHOR = 0.633


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int_at_least(tournament.MIN_GAMES, even=True), default=20000)
    ap.add_argument("--seed", type=int_at_least(0), default=2024)
    ap.add_argument("--workers", type=int_at_least(1), default=os.cpu_count() or 1)
    args = ap.parse_args()
    r = tournament.run(
        ["gnubg:0", "pubeval"], tournament.TournamentSettings(args.games, seed=args.seed, workers=args.workers)
    )
    print(tournament.format_table(r))
    row = r["pairings"][0]
    ok = row["ci_low"] <= ANCHOR <= row["ci_high"] and row["ci_half_width"] <= 0.02
    print(
        f"\nanchor +{ANCHOR}: {'reproduced' if ok else 'NOT reproduced'} "
        f"({row['ppg']:+.4f} ± {row['ci_half_width']:.4f})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    run_script(main)
