"""Write positions from GNU Backgammon 0-ply self-play games, one Position ID a line under a header naming the command.

Every ply of every game is kept (the side on roll's view, as a GNU Backgammon Position ID), finished games excluded.
Games are played in one seeded stream, so a longer file with the same seed begins with every line of a shorter one.

Default ``--out``: ``tests/data/gnubg_selfplay_positions.txt`` (6,000 positions, seed 2026), read by the move generator
benchmark (``scripts/bench_movegen.py``) and the oracle tests. ``tests/data/decision_source.txt`` (``--positions 40000
--seed 2026 --out tests/data/decision_source.txt``) is the source of the decision set of ``scripts/bench_decisions.py``.

Usage: ``python scripts/make_bench_positions.py [--positions 6000] [--seed 2026] [--out PATH]`` (needs ``gnubg-nn``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path

import gnubg_nn as gnubg
import numpy as np

from bgbot.errors import int_at_least, run_script
from bgbot.files import write_atomic

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "gnubg_selfplay_positions.txt"


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
    p.add_argument("--positions", type=int_at_least(1), default=6000, help="positions to write")
    p.add_argument("--seed", type=int_at_least(0), default=2026, help="seed of the dice")
    p.add_argument(
        "--out", default=str(OUT), help="the file to write (default: tests/data/gnubg_selfplay_positions.txt)"
    )
    args = p.parse_args()
    out = Path(args.out).resolve()
    ids = selfplay_positions(args.positions, args.seed)
    command = f"python scripts/make_bench_positions.py --positions {args.positions} --seed {args.seed}"
    if out != OUT:
        command += f" --out {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}"
    header = (
        f"# Source: GNU Backgammon 0-ply self-play via gnubg-nn {importlib.metadata.version('gnubg-nn')}, "
        f"every ply; made by: {command}\n"
    )
    write_atomic(out, header + "\n".join(ids) + "\n")
    print(f"wrote {len(ids)} positions to {out}")


if __name__ == "__main__":
    run_script(main)
