"""Write ``tests/data/gnubg_boards.json``: GNU Backgammon's ASCII drawings of positions, the oracle of
``tests/test_diagram.py`` for :func:`bgbot.formats.diagram.draw`.

For each Position ID, Debian's gnubg 1.07 draws the board with the player on roll at the bottom (``set turn`` to
player 1, ``set board ID``, ``show board``); the 13 board lines are kept without the side text and without gnubg's
first column (its direction marker).

Usage: ``python scripts/gnubg_boards.py [--gnubg /usr/games/gnubg]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np

from bgbot.errors import run_script
from bgbot.formats import positionid

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def positions() -> list[str]:
    """The starting position, a centred-cube money position, deep stacks and checkers on both bars, and the
    first 20 positions of tests/data/gnubg_selfplay_positions.txt."""
    stacked = np.zeros(26, dtype=np.int8)
    stacked[[6, 8, 25]] = [9, 4, 2]
    stacked[[19, 13, 0]] = [-11, -1, -3]
    ids = ["4HPwATDgc/ABMA", "4PPgASTgc/ABMA", positionid.encode(stacked)]
    lines = (DATA / "gnubg_selfplay_positions.txt").read_text().split("\n")
    ids += [line.split()[0] for line in lines if line.strip() and not line.startswith("#")][:20]
    return ids


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gnubg", default="/usr/games/gnubg")
    args = p.parse_args()
    ids = positions()
    boards = {}
    for pid in ids:
        script = f"new game\nset turn 1\nset board {pid}\nshow board\n"
        out = subprocess.run([args.gnubg, "-t", "-q"], input=script, capture_output=True, text=True, timeout=60)
        lines = out.stdout.splitlines()
        k = max(i for i, line in enumerate(lines) if line.endswith(f"Position ID: {pid}")) + 2
        if not lines[k].startswith(" +13-14"):
            raise SystemExit(f"unexpected gnubg output for {pid}")
        boards[pid] = [line[1:45] for line in lines[k : k + 13]]
    path = DATA / "gnubg_boards.json"
    path.write_text(
        json.dumps({"source": "gnubg 1.07 show board, scripts/gnubg_boards.py", "boards": boards}, indent=1)
    )
    print(json.dumps({"written": str(path), "boards": len(boards)}))


if __name__ == "__main__":
    run_script(main)
