"""Models' checker-play error against the engine's own rollouts of the plays store's held-out decisions.

Prints one JSON object. The reference is a plays store of the rollout campaign (``python -m training campaign plan
--plays``, :mod:`training.plays`; by default ``models/candidates/campaign-5``): decisions of self-play positions where
the campaign model's 0-ply and 2-ply chose different plays, each with up to five candidate plays rolled out with the
same dice. Only the **held-out parts** are read: those whose number ends in 9 (``part-????9.npz``, one part in ten),
which fits leave out (fit the others: ``part-????[0-8].npz``).

For each model and decision, the model's 0-ply ranks the decision's rolled-out candidates
(:func:`bgbot.evaluation.evaluator.position_probabilities` of each afterstate; :func:`training.plays.choice_losses`),
and the decision's error is what its first candidate loses against the rollout's best, in cubeless money equity:

* ``error_mp``: the mean error in millipoints with its 95% interval, overall and ``by_class``
  (:func:`bgbot.evaluation.specialists.classify` of the decision's position: contact, crashed, race);
* ``against_first``: for every model after the first, the paired mean of (model - first model) over the same decisions
  with its 95% interval (negative: fewer errors than the first).

Each interval is a percentile bootstrap over the decisions (:func:`bgbot.arena.stats.mean_interval`: 10,000 resamples,
seed 2026), so an error's interval never reaches below 0 (no decision loses less than nothing). Beside ``mean``,
``lo``, ``hi`` and ``n``, each says ``interval_reliable`` and, when false, ``interval_note``: fewer than
:data:`bgbot.arena.stats.MIN_INTERVAL_DECISIONS` (30) decisions, too few for the interval to be trusted; with fewer than
two, ``lo`` and ``hi`` are null.

The rollouts' own noise is in every error, the same for every model. A choice outside the rolled-out candidates cannot
be judged, so this measures the ranking of the candidates that matter (0-ply's and 2-ply's choices and 2-ply's next
best), where the campaign model's two searches disagreed. **The decisions were chosen where the campaign model's own
0-ply looked wrong to its 2-ply**, so that model's error here is inflated by its selection: any other model, even a
weaker player, tends to score better against it (bgbot-6 53 mp a decision, a fit 2.4 mp worse per checker play on the
decision set 43 mp, on the first 114 decisions). Compare models other than the campaign model with each other; judge
play against the campaign model by games.

Usage: ``python scripts/plays_error.py --model PATH [--model PATH ...] [--store DIR] [--all-parts]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot.arena.stats import MIN_INTERVAL_DECISIONS, interval_note, mean_interval  # noqa: E402
from bgbot.errors import check_distinct_paths, run_script  # noqa: E402
from bgbot.evaluation import checkpoint, specialists  # noqa: E402
from bgbot.evaluation.evaluator import position_probabilities  # noqa: E402
from training import campaign, plays  # noqa: E402
from training.parts import StageError  # noqa: E402

DEFAULT_STORE = "models/candidates/campaign-5"
HELD_OUT = "part-????9.npz"


def _interval(x: np.ndarray) -> dict:
    """Mean of ``x`` ``(D,)`` (points) in millipoints with its 95% bootstrap interval over the decisions
    (:func:`bgbot.arena.stats.mean_interval`; ``lo`` and ``hi`` None for fewer than two decisions) and whether it is
    reliable."""
    mp = np.asarray(x, dtype=np.float64) * 1000
    if len(mp) < 2:
        note = interval_note(len(mp), "decisions", MIN_INTERVAL_DECISIONS)
        r = {
            "mean": float(mp.mean()),
            "ci_low": None,
            "ci_high": None,
            "interval_reliable": False,
            "interval_note": note,
        }
    else:
        r = mean_interval(mp)
    return {
        "mean": r["mean"],
        "lo": r["ci_low"],
        "hi": r["ci_high"],
        "n": len(mp),
        "interval_reliable": r["interval_reliable"],
        "interval_note": r["interval_note"],
    }


def held_out(store: Path, every: bool) -> dict:
    """The decisions of the store's held-out parts (all parts with ``every``): ``positions`` ``(K, 26)``,
    ``targets`` ``(K, 5)``, ``decisions`` ``(K,)`` and ``classes`` ``(D,)`` of the decisions' positions.

    Raises:
        StageError: not a plays store, a torn or foreign part, or no decisions in the parts read.
    """
    settings = campaign.load_settings(store)
    if not settings.plays:
        raise StageError(f"{str(store)!r} is not a plays store (python -m training campaign plan --plays)")
    plan = campaign.load_plan(store, settings)
    paths = sorted(store.glob("part-*.npz" if every else HELD_OUT))
    data = [campaign.check_part(p, int(p.stem.split("-")[1]), settings, plan) for p in paths]
    data = [d for d in data if len(d["positions"])]
    if not data:
        raise StageError(f"no rolled-out decisions in the {'' if every else 'held-out '}parts of {str(store)!r}")
    decisions = np.concatenate([d["decisions"] for d in data])
    keys = np.unique(decisions)
    return {
        "positions": np.concatenate([d["positions"] for d in data]),
        "targets": np.concatenate([d["targets"] for d in data]).astype(np.float64),
        "decisions": decisions,
        "classes": specialists.classify(plan["positions"][keys]),
    }


def report(argv: list[str] | None = None) -> dict:
    """The JSON object of the module docstring, for the command line ``argv``; also printed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a checkpoint (repeat to compare, paired)")
    ap.add_argument("--store", default=DEFAULT_STORE, help=f"a plays store (default {DEFAULT_STORE})")
    ap.add_argument("--all-parts", action="store_true", help="every part, not only the held-out ones")
    args = ap.parse_args(argv)
    check_distinct_paths(args.model, "--model")
    ref = held_out(ROOT / args.store if not Path(args.store).is_absolute() else Path(args.store), args.all_parts)
    out: dict = {"store": args.store, "parts": "all" if args.all_parts else HELD_OUT, "models": {}}
    first = None
    for path in args.model:
        net, _ = checkpoint.load(path)
        probs = position_probabilities(specialists.evaluator_for(net), ref["positions"])
        loss = plays.choice_losses(probs, ref["decisions"], ref["targets"])
        rec = {"error_mp": _interval(loss), "by_class": {}}
        for code, name in enumerate(specialists.CLASSES, start=1):
            m = ref["classes"] == code
            if m.any():
                rec["by_class"][name] = _interval(loss[m])
        if first is None:
            first = loss
        else:
            rec["against_first"] = _interval(loss - first)
        out["models"][path] = rec
    print(json.dumps(out, indent=1))
    return out


def main() -> None:
    report()


if __name__ == "__main__":
    run_script(main)
