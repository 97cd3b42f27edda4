"""Models' probabilities against GNU Backgammon n-ply's on positions of GNU Backgammon self-play, by class.

Prints one JSON object. The positions: those of ``tests/data/gnubg_selfplay_positions.txt`` (GNU Backgammon 0-ply
self-play, every ply) of the ``--classes`` asked (:func:`bgbot.evaluation.specialists.classify`; race without GNU
Backgammon's bear-off classes, which play values from the databases), unfinished, at most ``--positions`` of them
drawn with ``--seed``. For each: the referee's probabilities (``gnubg_nn.probabilities(board, --ply)``), GNU Backgammon
0-ply's, and each model's nets' own (:func:`bgbot.evaluation.specialists.evaluator_for`, no database). Reported: the
mean squared error over the five outputs (win, wg, wbg, lg, lbg) against the referee, overall and per output. A
measuring stick only: never a training signal.

Usage: ``python scripts/referee_loss.py --model PATH [--model PATH ...] [--classes race ...] [--positions 600]
[--ply 2] [--seed 0]``
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bgbot.arena.players import to_gnubg
from bgbot.errors import BgbotError, int_at_least, run_script, whole_number
from bgbot.evaluation import checkpoint, classes, specialists
from bgbot.formats import positionid
from bgbot.rules.board import game_result

SOURCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "gnubg_selfplay_positions.txt"
CLASS_CODES = {"contact": specialists.CONTACT, "crashed": specialists.CRASHED, "race": specialists.RACE}


def choose(positions: np.ndarray, names: list[str], n: int, seed: int) -> np.ndarray:
    """Rows of ``positions`` ``(N, 26)`` int8 to score: unfinished, of classes ``names``, race without the bear-off
    classes; at most ``n``, drawn without replacement with ``seed``, in their order in the file."""
    cls = specialists.classify(positions)
    bearoff = classes.classify_batch(np.asarray(positions, dtype=np.int8)) <= 2
    ok = np.isin(cls, [CLASS_CODES[c] for c in names]) & ~bearoff & (game_result(positions) == 0)
    rows = np.flatnonzero(ok)
    if len(rows) > n:
        rows = np.sort(np.random.default_rng(seed).choice(rows, size=n, replace=False))
    return rows


def _errors(probs: np.ndarray, ref: np.ndarray) -> dict:
    sq = (np.asarray(probs, dtype=np.float64) - ref) ** 2
    return {"mse": float(sq.mean()), "per_output": [float(v) for v in sq.mean(axis=0)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a checkpoint (repeat for more)")
    ap.add_argument("--classes", nargs="+", choices=list(CLASS_CODES), default=["race"], help="position classes")
    ap.add_argument("--positions", type=int_at_least(1), default=600, help="at most this many positions")
    ap.add_argument("--ply", type=whole_number, choices=(0, 1, 2), default=2, help="the referee's GNU Backgammon ply")
    ap.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the draw")
    args = ap.parse_args()
    import gnubg_nn

    ids = [s.strip() for s in SOURCE.read_text().splitlines() if s.strip() and not s.startswith("#")]
    pos = np.stack([positionid.decode(i) for i in ids])
    pos = pos[choose(pos, args.classes, args.positions, args.seed)]
    if len(pos) == 0:
        raise BgbotError(f"{SOURCE.name} holds no position of the classes {args.classes}")
    t0 = time.perf_counter()
    ref = np.array([gnubg_nn.probabilities(to_gnubg(p), args.ply) for p in pos], dtype=np.float64).reshape(-1, 5)
    g0 = np.array([gnubg_nn.probabilities(to_gnubg(p), 0) for p in pos], dtype=np.float64).reshape(-1, 5)
    out = {
        "source": SOURCE.name,
        "classes": args.classes,
        "positions": len(pos),
        "referee": f"gnubg_nn.probabilities(board, {args.ply}) (GNU Backgammon {args.ply}-ply), cubeless",
        "gnubg0": _errors(g0, ref),
        "models": {},
    }
    for path in args.model:
        net, _ = checkpoint.load(path)
        out["models"][path] = _errors(specialists.evaluator_for(net).evaluate(pos), ref)
    out["seconds"] = time.perf_counter() - t0
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    run_script(main)
