"""Write ``tests/data/gnubg_selfplay_positions.txt``: positions from GNU Backgammon 0-ply self-play games.

Every ply of every game is kept (the side on roll's view, as a GNU Backgammon Position ID), finished games excluded.
The move generator benchmark (``scripts/bench_movegen.py``) and the oracle tests read this file.

Usage: ``python scripts/make_bench_positions.py [--positions 6000] [--seed 2026]`` (needs ``gnubg-nn``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path

import gnubg_nn as gnubg
import numpy as np

from bgbot.errors import run_script

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "gnubg_selfplay_positions.txt"


def _equity(p) -> float:
    w, wg, wbg, lg, lbg = p
    return 2 * w - 1 + wg - lg + wbg - lbg


def selfplay_positions(n: int, seed: int) -> list[str]:
    """Position IDs of ``n`` positions from gnubg-nn 0-ply self-play (each play maximises 0-ply cubeless equity)."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    while len(out) < n:
        board = gnubg.board_from_position_id("4HPwATDgc/ABMA")
        first = True
        while len(out) < n and sum(board[1]) > 0 and sum(board[0]) > 0:
            out.append(gnubg.position_id(board))
            d1, d2 = (int(d) for d in rng.integers(1, 7, 2))
            while first and d1 == d2:  # the opening roll is never a double
                d1, d2 = (int(d) for d in rng.integers(1, 7, 2))
            first = False
            keys = gnubg.moves(board, d1, d2)
            if not keys:
                board = [board[1], board[0]]
                continue
            after = [gnubg.board_from_position_key(k) for k in keys]  # [opp, mover]
            swapped = [[list(a[1]), list(a[0])] for a in after]  # opponent on roll
            scores = [-_equity(gnubg.probabilities(s, 0)) if sum(s[0]) else 9.0 for s in swapped]
            board = swapped[int(np.argmax(scores))]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=6000)
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args()
    ids = selfplay_positions(args.positions, args.seed)
    header = (
        f"# Source: GNU Backgammon 0-ply self-play via gnubg-nn {importlib.metadata.version('gnubg-nn')}, "
        f"every ply; made by: python scripts/make_bench_positions.py --positions {args.positions} "
        f"--seed {args.seed}\n"
    )
    OUT.write_text(header + "\n".join(ids) + "\n")
    print(f"wrote {len(ids)} positions to {OUT}")


if __name__ == "__main__":
    run_script(main)
