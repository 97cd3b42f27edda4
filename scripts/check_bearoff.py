"""Check bgbot's bear-off databases in full against GNU Backgammon; print one JSON object.

* ``build_s``: time to build both databases from scratch in this run (``one_sided_s``, ``two_sided_s``; wall clock,
  and ``*_cpu_s`` the process's CPU time, which depends less on what else the machine runs);
  ``cache_bytes``: size of the cached file.
* ``one_sided``: every one of the 54,263 non-empty positions against ``gnubg_nn.bearoff_probabilities`` (gnubg's list
  starts at 1 roll): the largest difference of the mean number of rolls and of any entry, the share of positions
  within 1e-4 in every entry, and the positions beyond 1e-4 (point counts 1..6, largest difference).
* ``first_off`` (unless ``--no-bearoffdump``): every 15-checker position's first-checker-off distribution against
  Debian's ``gnubg_os0.bd`` through ``bearoffdump FILE -n ID`` (its "Bearing at least one chequer off" column, printed
  to 0.001%).
* ``two_sided``: every pair of the 923 x 923 non-empty positions of at most 6 checkers a side, bgbot's win chance
  against ``gnubg_nn.probabilities(board, 0)``.
* ``one_sided_eval``: ``--random`` random bear-offs with more checkers (one side 7+), the 0-ply probabilities against
  gnubg-nn's.

Usage: ``python scripts/check_bearoff.py [--no-bearoffdump] [--random 20000]`` (needs gnubg-nn; bearoffdump from
Debian's ``gnubg`` package for ``first_off``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import gnubg_nn
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/gnubg_oracle.py, from any directory

from bgbot.errors import int_at_least, run_script  # noqa: E402
from bgbot.evaluation import bearoff  # noqa: E402
from bgbot.evaluation.classes import BEAROFF_OS, classify_batch  # noqa: E402
from bgbot.rules.board import NUM_CHECKERS  # noqa: E402
from tests.gnubg_oracle import to_gnubg  # noqa: E402

BEAROFFDUMP = "/usr/games/bearoffdump"
OS_FILE = "/usr/share/gnubg/gnubg_os0.bd"


def one_sided(off: np.ndarray) -> dict:
    positions = bearoff.os_positions()
    k = np.arange(bearoff.MAX_ROLLS)
    theirs = np.zeros_like(off)
    for i in range(1, bearoff.N_OS):
        g = gnubg_nn.bearoff_probabilities(tuple(int(c) for c in positions[i]))
        theirs[i, 1 : 1 + len(g)] = g
    theirs[0, 0] = 1.0
    diff = np.abs(off - theirs)[1:].max(axis=1)
    mean_diff = np.abs(off @ k - theirs @ k)[1:]
    beyond = np.flatnonzero(diff >= 1e-4) + 1
    return {
        "positions": bearoff.N_OS - 1,
        "max_mean_rolls_diff": float(mean_diff.max()),
        "max_entry_diff": float(diff.max()),
        "share_within_1e-4": float((diff < 1e-4).mean()),
        "beyond_1e-4": [
            {"points_1_to_6": positions[i].tolist(), "max_entry_diff": round(float(diff[i - 1]), 6)} for i in beyond
        ],
    }


def first_off(first: np.ndarray) -> dict:
    worst, n, within = 0.0, 0, 0
    row = re.compile(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
    for gid in range(1, bearoff.N_OS):
        counts = np.array(gnubg_nn.bearoff_id_2_pos(gid))
        if counts.sum() != NUM_CHECKERS:
            continue
        text = subprocess.run([BEAROFFDUMP, OS_FILE, "-n", str(gid)], capture_output=True, text=True).stdout
        theirs = np.zeros(bearoff.MAX_ROLLS)
        for m in row.finditer(text):
            theirs[int(m.group(1))] = float(m.group(5)) / 100
        d = float(np.abs(first[bearoff.os_index(counts[None])[0]] - theirs).max())
        worst, n, within = max(worst, d), n + 1, within + (d < 1e-4)
    return {"positions": n, "max_entry_diff": worst, "share_within_1e-4": within / max(n, 1)}


def two_sided(db: bearoff.Databases) -> dict:
    rows = np.flatnonzero(bearoff.os_positions().sum(axis=1) <= bearoff.TS_CHECKERS)[1:]
    counts = bearoff.os_positions()[rows]
    worst, n = 0.0, 0
    for a in counts:
        p = np.zeros((len(counts), 26), dtype=np.int8)
        p[:, 1:7] = a
        p[:, 24:18:-1] = -counts
        ours = bearoff.bearoff_probabilities(p, np.ones(len(p), dtype=bool), db)[:, 0]
        theirs = np.array([gnubg_nn.probabilities(to_gnubg(q), 0)[0] for q in p])
        worst = max(worst, float(np.abs(ours - theirs).max()))
        n += len(p)
    return {"positions": n, "max_win_diff": worst}


def one_sided_eval(db: bearoff.Databases, n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    p = np.zeros((n, 26), dtype=np.int8)
    for i in range(n):
        big, small = rng.integers(7, 16), rng.integers(1, 16)
        mine, theirs = (big, small) if rng.random() < 0.5 else (small, big)
        np.add.at(p[i], rng.integers(1, 7, size=mine), 1)
        np.add.at(p[i], 25 - rng.integers(1, 7, size=theirs), -1)
    assert (classify_batch(p) == BEAROFF_OS).all()
    ours = bearoff.bearoff_probabilities(p, np.zeros(n, dtype=bool), db)
    theirs = np.array([gnubg_nn.probabilities(to_gnubg(q), 0) for q in p])
    err = np.abs(ours - theirs)
    return {
        "positions": n,
        "mean_win_diff": float(err[:, 0].mean()),
        "max_win_diff": float(err[:, 0].max()),
        "max_gammon_diff": float(err[:, [1, 3]].max()),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-bearoffdump", action="store_true", help="skip first_off (needs Debian's bearoffdump)")
    p.add_argument("--random", type=int_at_least(1), default=20000, help="random bear-offs of one_sided_eval")
    args = p.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    off, first = bearoff.build_one_sided()
    t1, c1 = time.perf_counter(), time.process_time()
    ts = bearoff.build_two_sided()
    t2, c2 = time.perf_counter(), time.process_time()
    db = bearoff.Databases(off, first, ts)
    path = bearoff.cache_path()
    bearoff.load()
    out = {
        "build_s": round(t2 - t0, 1),
        "one_sided_s": round(t1 - t0, 1),
        "two_sided_s": round(t2 - t1, 1),
        "build_cpu_s": round(c2 - c0, 1),
        "one_sided_cpu_s": round(c1 - c0, 1),
        "two_sided_cpu_s": round(c2 - c1, 1),
        "cache_file": str(path),
        "cache_bytes": path.stat().st_size if path.exists() else None,
        "cache_matches_build": bool(np.array_equal(bearoff.load().off, off) and np.array_equal(bearoff.load().ts, ts)),
        "one_sided": one_sided(off),
        "two_sided": two_sided(db),
        "one_sided_eval": one_sided_eval(db, args.random),
    }
    if not args.no_bearoffdump:
        out["first_off"] = first_off(first)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    run_script(main)
