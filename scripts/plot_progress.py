"""Benchmark a training run's checkpoints against pubeval and plot ppg (95% CI) against games trained.

For runs trained with ``--no-eval`` or to redo a run's curve with more games. Prints one JSON line per checkpoint
and writes the plot (matplotlib) and the records next to it.

Usage: ``python scripts/plot_progress.py runs/NAME/checkpoints --games 2000 --seed 1 --out models/bgbot-1-progress.png
[--select 10000,50000,...]`` (``--select``: only checkpoints whose games trained are closest to these counts).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bgbot.arena.benchmark import benchmark, plot_progress
from bgbot.errors import run_script
from bgbot.evaluation.checkpoint import load


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoints", type=Path, help="folder of checkpoints (a run's checkpoints/)")
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--select", default="", help="comma-separated games-trained counts to benchmark (default: all)")
    p.add_argument("--out", type=Path, required=True, help="PNG to write; the records go to the same name .jsonl")
    args = p.parse_args()
    paths = sorted(args.checkpoints.glob("*.pt"))
    trained = {path: load(path)[1].games_trained for path in paths}
    if args.select:
        wanted = [int(x) for x in args.select.split(",")]
        paths = sorted({min(paths, key=lambda q: abs(trained[q] - w)) for w in wanted}, key=trained.get)
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
    args.out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    plot_progress(records, args.out)


if __name__ == "__main__":
    run_script(main)
