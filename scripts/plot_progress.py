"""Benchmark a training run's checkpoints against pubeval and plot ppg (95% CI) against games trained.

For runs trained with ``--no-eval`` or to redo a run's curve with more games. Prints one JSON line per checkpoint
and writes the plot (matplotlib) and the records next to it.

Usage: ``python scripts/plot_progress.py runs/NAME/checkpoints --games 2000 --seed 1 --out models/bgbot-1-progress.png
[--workers 2] [--select 10000,50000,...]`` (``--select``: only checkpoints whose games trained are closest to these
counts).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bgbot.arena.benchmark import benchmark, plot_progress
from bgbot.arena.tournament import MIN_GAMES
from bgbot.errors import BgbotError, int_at_least, run_script
from bgbot.evaluation.checkpoint import load
from bgbot.files import write_atomic


def _counts(text: str) -> list[int]:
    """``--select``'s comma-separated games-trained counts (whole numbers >= 0)."""
    at_least_0 = int_at_least(0)
    return [at_least_0(x.strip()) for x in text.split(",")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoints", type=Path, help="folder of checkpoints (a run's checkpoints/)")
    p.add_argument("--games", type=int_at_least(MIN_GAMES, even=True), default=2000, help="games per checkpoint")
    p.add_argument("--seed", type=int_at_least(0), default=1, help="dice seed")
    p.add_argument("--workers", type=int_at_least(1), default=2, help="benchmark processes")
    p.add_argument(
        "--select", type=_counts, default=[], help="comma-separated games-trained counts to benchmark (default: all)"
    )
    p.add_argument("--out", type=Path, required=True, help="PNG to write; the records go to the same name .jsonl")
    args = p.parse_args()
    if not args.checkpoints.is_dir():
        raise BgbotError(f"no checkpoint folder at {str(args.checkpoints)!r}")
    paths = sorted(args.checkpoints.glob("*.pt"))
    if not paths:
        raise BgbotError(f"no checkpoints (*.pt) in {str(args.checkpoints)!r}")
    trained = {path: load(path)[1].games_trained for path in paths}
    if args.select:
        paths = sorted({min(paths, key=lambda q: abs(trained[q] - w)) for w in args.select}, key=trained.get)
    records = []
    for path in paths:
        record = {
            "checkpoint": str(path),
            "games_trained": trained[path],
            **benchmark(str(path), "pubeval", games=args.games, seed=args.seed, workers=args.workers),
        }
        print(json.dumps(record), flush=True)
        records.append(record)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out.with_suffix(".jsonl"), "".join(json.dumps(r) + "\n" for r in records))
    plot_progress(records, args.out)


if __name__ == "__main__":
    run_script(main)
