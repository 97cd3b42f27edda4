"""Held-out loss of models on a fit's validation rows, by position class, bear-off positions apart.

Prints one JSON object. The rows are those ``python -m training fit`` holds out for the same ``--targets`` (in the
same order), ``--seed`` and ``--val-frac`` (a permutation of all positions, its first ``val_frac`` share), so a model
fitted with those settings is scored on positions it never trained on. Each model's nets value every row as the fit
sees them (the specialists' own outputs, :func:`bgbot.evaluation.specialists.evaluator_for`; no bear-off database),
and the loss is the fit's: the mean squared error over the five outputs. Classes: ``contact``, ``crashed``, ``race``
(finished games with it) and within race ``race_bearoff`` (GNU Backgammon's bear-off classes, which play values from
the databases, :func:`bgbot.evaluation.classes.classify_batch` codes 0..2) and ``race_net`` (the rest: the positions
the race net values in play), with ``per_output`` the five outputs' means (win, wg, wbg, lg, lbg).

Usage: ``python scripts/heldout_loss.py --targets DIR [DIR ...] --model PATH [--model PATH ...] [--seed 1]
[--val-frac 0.05]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot.errors import BgbotError, run_script, whole_number  # noqa: E402
from bgbot.evaluation import checkpoint, classes, specialists  # noqa: E402
from training.fit import load_targets  # noqa: E402


def groups(positions: np.ndarray) -> dict[str, np.ndarray]:
    """Boolean masks ``(N,)`` of each reported group of positions ``(N, 26)`` int8."""
    cls = specialists.classify(positions)
    cls[cls == specialists.OVER] = specialists.RACE
    bearoff = classes.classify_batch(np.asarray(positions, dtype=np.int8)) <= 2  # over, two- and one-sided bear-off
    race = cls == specialists.RACE
    return {
        "all": np.ones(len(positions), dtype=bool),
        "contact": cls == specialists.CONTACT,
        "crashed": cls == specialists.CRASHED,
        "race": race,
        "race_bearoff": race & bearoff,
        "race_net": race & ~bearoff,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", nargs="+", required=True, help="the fit's target directories, in its order")
    ap.add_argument("--model", action="append", required=True, help="a checkpoint (repeat for more)")
    ap.add_argument("--seed", type=whole_number, default=1, help="the fit's --seed")
    ap.add_argument("--val-frac", type=float, default=0.05, help="the fit's --val-frac")
    args = ap.parse_args()
    if not 0 < args.val_frac < 1:
        raise BgbotError(f"--val-frac must lie strictly between 0 and 1, got {args.val_frac}")
    pos, tg, _, _ = load_targets(args.targets, False)
    val = np.random.default_rng(args.seed).permutation(len(pos))[: max(1, int(len(pos) * args.val_frac))]
    pos, tg = pos[val], tg[val]
    masks = groups(pos)
    out: dict = {"targets": args.targets, "seed": args.seed, "val_frac": args.val_frac}
    out["rows"] = {k: int(m.sum()) for k, m in masks.items()}
    out["models"] = {}
    for path in args.model:
        net, _ = checkpoint.load(path)
        sq = (specialists.evaluator_for(net).evaluate(pos) - tg) ** 2  # (N, 5)
        out["models"][path] = {
            k: {"loss": float(sq[m].mean()), "per_output": [float(v) for v in sq[m].mean(axis=0)]}
            for k, m in masks.items()
            if m.any()
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    run_script(main)
