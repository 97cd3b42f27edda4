"""Roll out the top candidates of the 15 non-double opening rolls and print a Markdown table (and JSON with --json).

The one command behind the README's opening table::

    python scripts/opening_rollouts.py --trials 1296 --candidates 4 --workers 2

Usage: ``python scripts/opening_rollouts.py [--trials 1296] [--truncate 0] [--candidates 4] [--workers 2] [--seed 0]
[--json PATH]`` (needs ``gnubg-nn``).

Each roll's candidates are the best ``--candidates`` plays of GNU Backgammon's 0-ply move filter, rolled out by
:func:`bgbot.arena.rollout.rollout_plays` (0-ply players, variance reduction, quasi-random dice). GNU Backgammon's
2-ply choice (``gnubg_nn.best_move(board, d1, d2, n=2)``) is printed next to bgbot's first-ranked play.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from bgbot.api import Bot
from bgbot.arena import rollout as ro
from bgbot.arena.players import to_gnubg
from bgbot.errors import int_at_least, run_script
from bgbot.files import write_atomic
from bgbot.formats import notation
from bgbot.rules.board import apply_steps, flip, starting_position

ROLLS = [(a, b) for a in range(6, 0, -1) for b in range(a - 1, 0, -1)]


def gnubg_choice(d1: int, d2: int) -> bytes:
    import gnubg_nn

    start = starting_position()
    steps = gnubg_nn.best_move(to_gnubg(start), d1, d2, n=2)
    return bytes(flip(apply_steps(start, steps or ())).astype(np.int8))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int_at_least(ro.MIN_TRIALS), default=1296, help="trials per candidate")
    ap.add_argument("--truncate", type=int_at_least(0), default=0, help="stop trials after N plies (0: never)")
    ap.add_argument("--candidates", type=int_at_least(1), default=4, help="plays rolled out per roll")
    ap.add_argument("--workers", type=int_at_least(1), default=2, help="rollout processes")
    ap.add_argument("--seed", type=int_at_least(0), default=0, help="dice seed")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args()
    bot = Bot.load()
    settings = ro.RolloutSettings(trials=args.trials, truncate=args.truncate, seed=args.seed)
    rows = []
    t0 = time.perf_counter()
    for d1, d2 in ROLLS:
        cands = ro.candidates(bot.evaluator, starting_position(), (d1, d2), max_candidates=args.candidates)
        ro.rollout_plays(bot.evaluator, cands, settings, workers=args.workers)
        ranked = ro.rank_candidates(cands)
        gnu = gnubg_choice(d1, d2)
        gnu_play = next((c.play for c in cands if bytes(c.afterstate) == gnu), None)
        if gnu_play is None:
            gnu_play = notation.format_play(starting_position(), _scalar(gnu, d1, d2)) + " (not a candidate)"
        rows.append(
            {"roll": f"{d1}{d2}", "plays": ranked, "gnubg_2ply": gnu_play, "agrees": ranked[0]["play"] == gnu_play}
        )
        print(
            f"{d1}{d2}: "
            + "; ".join(f"{p['play']} {p['equity']:+.4f}±{p['equity_se']:.4f}" for p in ranked)
            + f" | gnubg 2-ply: {gnu_play}",
            flush=True,
        )
    elapsed = time.perf_counter() - t0
    print()
    print("| Roll | 1st (equity ± SE) | 2nd | 3rd | 4th | GNU 2-ply | agree |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{p['play']} {p['equity']:+.3f} ± {p['equity_se']:.3f}" for p in r["plays"]]
        cells += [""] * (4 - len(cells))
        print(
            f"| {r['roll']} | " + " | ".join(cells[:4]) + f" | {r['gnubg_2ply']} | {'yes' if r['agrees'] else 'no'} |"
        )
    summary = {
        "settings": settings.to_json(),
        "candidates": args.candidates,
        "workers": args.workers,
        "elapsed_s": round(elapsed, 1),
        "agree": sum(r["agrees"] for r in rows),
        "rolls": rows,
    }
    print(f"\n{summary['agree']}/15 first-ranked plays agree with GNU Backgammon 2-ply; {elapsed:.0f} s")
    if args.json:
        write_atomic(args.json, json.dumps(summary))


def _scalar(after: bytes, d1: int, d2: int):
    from bgbot.rules.movegen_scalar import legal_plays

    for p in legal_plays(starting_position(), d1, d2):
        if bytes(flip(p.afterstate).astype(np.int8)) == after:
            return p
    raise AssertionError("gnubg's play is not legal")


if __name__ == "__main__":
    run_script(main)
