"""Benchmark the vectorised move generator against GNU Backgammon's (``gnubg_nn.moves``, C, one core).

Both generate every legal play for all 21 rolls of each position in ``tests/data/gnubg_selfplay_positions.txt``
(GNU Backgammon self-play positions), in the same run; the JSON printed gives position×rolls per second for each,
their ratio (ours / gnubg's), and a check that both found the same number of distinct plays. Both run on one core
(numpy here is single-threaded); times are CPU seconds of this process (``time.process_time``), the best of
``--repeat`` interleaved runs, so that other processes on the machine disturb the ratio as little as possible.

Usage: ``python scripts/bench_movegen.py [--positions FILE] [--chunk 250] [--repeat 5]`` (needs ``gnubg-nn``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bgbot.errors import BgbotError, int_at_least, run_script
from bgbot.formats import positionid
from bgbot.rules.movegen import ROLLS, generate_plays

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "gnubg_selfplay_positions.txt"


def read_ids(path: Path) -> list[str]:
    """Position IDs of a positions file (``#`` lines are comments)."""
    return [s.strip() for s in path.read_text().splitlines() if s.strip() and not s.startswith("#")]


def bench_ours(positions: np.ndarray, chunk: int) -> tuple[float, int]:
    """Seconds and total plays for all 21 rolls of every position, ``chunk`` positions (× 21 rolls) per call."""
    total, t0 = 0, time.process_time()
    for i in range(0, len(positions), chunk):
        block = positions[i : i + chunk]
        reps = np.repeat(block, len(ROLLS), axis=0)
        dice = np.tile(ROLLS, (len(block), 1))
        plays = generate_plays(reps, dice)
        total += len(plays)
    return time.process_time() - t0, total


def bench_gnubg(boards: list) -> tuple[float, int]:
    """Seconds and total plays of ``gnubg_nn.moves`` for all 21 rolls of every board (no play counts 1, as ours)."""
    import gnubg_nn

    rolls = [(int(a), int(b)) for a, b in ROLLS]
    total, t0 = 0, time.process_time()
    for b in boards:
        for d1, d2 in rolls:
            total += len(gnubg_nn.moves(b, d1, d2)) or 1
    return time.process_time() - t0, total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=Path, default=DATA, help="file of position IDs, one a line")
    p.add_argument("--chunk", type=int_at_least(1), default=250, help="positions per generate_plays call (x 21 rolls)")
    p.add_argument("--repeat", type=int_at_least(1), default=5, help="timed runs of each; the best is reported")
    args = p.parse_args()
    import gnubg_nn

    ids = read_ids(args.positions)
    if not ids:
        raise BgbotError(f"no position IDs in {str(args.positions)!r}")
    positions = np.stack([positionid.decode(s) for s in ids])
    boards = [gnubg_nn.board_from_position_id(s) for s in ids]
    n = len(ids) * len(ROLLS)
    runs_ours, runs_theirs = [], []
    for _ in range(args.repeat):  # interleaved, so that a change in the machine's load hits both alike
        runs_ours.append(bench_ours(positions, args.chunk))
        runs_theirs.append(bench_gnubg(boards))
    ours, theirs = min(runs_ours), min(runs_theirs)
    print(
        json.dumps(
            {
                "positions": len(ids),
                "position_rolls": n,
                "chunk": args.chunk,
                "bgbot_position_rolls_per_s": round(n / ours[0]),
                "gnubg_nn_position_rolls_per_s": round(n / theirs[0]),
                "ratio": round(theirs[0] / ours[0], 3),
                "bgbot_plays": ours[1],
                "gnubg_nn_plays": theirs[1],
                "same_play_count": ours[1] == theirs[1],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    run_script(main)
