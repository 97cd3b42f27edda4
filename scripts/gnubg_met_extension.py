"""Write ``bgbot/data/met_kazaross_xg2_gnubg64.json``: the Kazaross-XG2 table as GNU Backgammon extends it to 64 points.

GNU Backgammon reads Kazaross-XG2 (25 points) and fills scores up to 64-away (its MAXSCORE) with its own extrapolation
(``ExtendMET`` in matchequity.c; gnubg says "For scores above 25-away an extrapolation scheme is used"). This script
asks Debian's gnubg 1.07 for the whole table (``show matchequitytable 64``), parses the pre-Crawford table and the
post-Crawford row (percentages, 4 decimals) and writes them as fractions in the layout of ``met_kazaross_xg2.json``.
Rows and columns up to 25 must equal the shipped 25-point table (checked, to the printed precision).

Usage: ``python scripts/gnubg_met_extension.py [--gnubg /usr/games/gnubg]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np

from bgbot.errors import run_script

DATA = Path(__file__).resolve().parents[1] / "bgbot" / "data"
SIZE = 64


def gnubg_table(gnubg: str) -> tuple[np.ndarray, np.ndarray]:
    """(pre (64, 64), post (64,)) fractions as gnubg prints them."""
    met = "/usr/share/gnubg/met/Kazaross-XG2.xml"
    script = f'set matchequitytable "{met}"\nnew match {SIZE}\nshow matchequitytable {SIZE}\n'
    out = subprocess.run([gnubg, "-t", "-q"], input=script, capture_output=True, text=True, timeout=120).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Pre-Crawford table"))
    rows = [line.split()[1:] for line in lines[start + 3 : start + 3 + SIZE]]
    pre = np.array(rows, dtype=np.float64) / 100.0
    post_at = next(i for i, line in enumerate(lines) if line.startswith("Post-Crawford table for player 0"))
    post = np.array(lines[post_at + 3].split()[1:], dtype=np.float64) / 100.0
    if pre.shape != (SIZE, SIZE) or post.shape != (SIZE,):
        raise SystemExit(f"unexpected gnubg output: {pre.shape} {post.shape}")
    return pre, post


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gnubg", default="/usr/games/gnubg")
    args = p.parse_args()
    pre, post = gnubg_table(args.gnubg)
    base = json.loads((DATA / "met_kazaross_xg2.json").read_text())
    n = len(base["pre_crawford"]["table"])
    if not np.allclose(pre[:n, :n], base["pre_crawford"]["table"], atol=6e-7) or not np.allclose(
        post[:n],
        base["post_crawford"]["table"],
        atol=5e-5,  # gnubg prints 0.1181% for 25-away, the file 0.123%
    ):
        raise SystemExit("gnubg's table differs from met_kazaross_xg2.json within 25 points")
    pre[:n, :n] = base["pre_crawford"]["table"]  # keep the source's own digits where it has them
    post[:n] = base["post_crawford"]["table"]
    out = {
        "name": "Kazaross XG2 25-point match equity table, extended to 64 points by GNU Backgammon",
        "source": base["source"] + " Scores beyond 25-away: GNU Backgammon 1.07's extrapolation (ExtendMET, "
        "matchequity.c), as `show matchequitytable 64` prints it (percent, 4 decimals), written by "
        "scripts/gnubg_met_extension.py.",
        "units": base["units"],
        "pre_crawford": {"layout": base["pre_crawford"]["layout"], "table": pre.round(7).tolist()},
        "post_crawford": {"layout": base["post_crawford"]["layout"], "table": post.round(7).tolist()},
    }
    path = DATA / "met_kazaross_xg2_gnubg64.json"
    path.write_text(json.dumps(out) + "\n")
    print(json.dumps({"written": str(path), "size": SIZE}))


if __name__ == "__main__":
    run_script(main)
