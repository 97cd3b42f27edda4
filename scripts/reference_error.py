"""Models' error against held-out long rollouts: win probability and cubeless equity, overall and by position class.

Prints one JSON object. The reference is every finished part of the campaign stores given (by default
``models/candidates/campaign-1-holdout``: 200 positions of bgbot-5's self-play, each rolled out with 5,184 plain
trials, never fitted; standard error about 0.007 in the win probability), read as the training gate's cube check reads
it (:func:`bgbot.formats.store.reference_positions`). Each model's 0-ply probabilities of those positions for the side on
roll (:func:`bgbot.evaluation.evaluator.position_probabilities`: databases where they apply) are compared with the
rollouts:

* ``win_rmse`` and ``win_bias``: root mean square and mean of (model - rollout) in the win probability;
* ``equity_rmse`` and ``equity_bias``: the same in cubeless money equity (``2w - 1 + wg - lg + wbg - lbg``), points;
* ``by_class``: ``equity_rmse`` and the count per class (:func:`bgbot.evaluation.specialists.classify`: contact,
  crashed, race).
* ``cube_nets``: for a model with separate cube nets (checkpoint format 3), the same figures of its cube nets (what
  its cube decisions read, :func:`bgbot.evaluation.evaluator.for_cube`); the figures above are its play nets'.

The rollouts' own noise is left in (about 0.007 in the win probability, 0.02 in equity), the same for every model, so
differences between models are the models'. A measuring stick: the held-out set is never fitted.

Usage: ``python scripts/reference_error.py --model PATH [--model PATH ...] [--reference STORE ...]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot.errors import BgbotError, run_script  # noqa: E402
from bgbot.evaluation import checkpoint, specialists  # noqa: E402
from bgbot.evaluation.evaluator import for_cube, position_probabilities  # noqa: E402
from bgbot.formats.store import reference_positions  # noqa: E402
from bgbot.rules.outcomes import equity  # noqa: E402

DEFAULT_REFERENCE = "models/candidates/campaign-1-holdout"


def errors(probabilities: np.ndarray, reference: np.ndarray, classes: np.ndarray) -> dict:
    """Error summary of ``probabilities`` ``(P, 5)`` against ``reference`` ``(P, 5)`` (both for the side on roll),
    ``classes`` ``(P,)`` int8 (1 contact, 2 crashed, 3 race): see the module docstring.

    >>> ref = np.array([[0.5, 0.1, 0.0, 0.1, 0.0], [0.7, 0.2, 0.0, 0.0, 0.0]])
    >>> out = errors(ref + [0.02, 0, 0, 0, 0], ref, np.array([1, 3]))
    >>> round(out["win_rmse"], 6), round(out["win_bias"], 6), round(out["equity_rmse"], 6)
    (0.02, 0.02, 0.04)
    """
    dw = probabilities[:, 0] - reference[:, 0]
    de = equity(probabilities) - equity(reference)
    out = {
        "positions": len(reference),
        "win_rmse": float(np.sqrt(np.mean(dw**2))),
        "win_bias": float(dw.mean()),
        "equity_rmse": float(np.sqrt(np.mean(de**2))),
        "equity_bias": float(de.mean()),
        "by_class": {},
    }
    for code, name in enumerate(specialists.CLASSES, start=1):
        rows = classes == code
        if rows.any():
            out["by_class"][name] = {
                "positions": int(rows.sum()),
                "equity_rmse": float(np.sqrt(np.mean(de[rows] ** 2))),
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a checkpoint (repeat for more)")
    ap.add_argument("--reference", nargs="+", default=[DEFAULT_REFERENCE], help="campaign stores of long rollouts")
    args = ap.parse_args()
    for path in args.model:
        if not Path(path).is_file():
            raise BgbotError(f"--model: no checkpoint at {path!r}")
    pos, ref = reference_positions(args.reference)
    classes = specialists.classify(pos)
    out: dict = {"reference": args.reference, "models": {}}
    for path in args.model:
        net, _ = checkpoint.load(path)
        evaluator = specialists.evaluator_for(net)
        p = position_probabilities(evaluator, pos).astype(np.float64)
        out["models"][path] = errors(p, ref, classes)
        if for_cube(evaluator) is not evaluator:  # a model with separate cube nets: theirs too
            q = position_probabilities(for_cube(evaluator), pos).astype(np.float64)
            out["models"][path]["cube_nets"] = errors(q, ref, classes)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    run_script(main)
