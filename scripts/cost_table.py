"""The campaign's cost table: how close each kind of training target gets to a long rollout, per CPU-second.

Reference: a campaign store of long rollouts (``models/candidates/campaign-1-holdout``: 5,184 plain trials a position
by the store's model). Every kind is computed by the same model on the first ``--positions`` of the reference's
positions, one process, and compared with the reference position by position (JSON on stdout, one record a kind)::

    python scripts/cost_table.py --reference models/candidates/campaign-1-holdout --positions 100

For each kind, on the win probability and on the cubeless equity (``2w - 1 + wg - lg + wbg - lbg``):

* ``bias``: the mean of (kind - reference), with its standard error over positions;
* ``rmse``: the root mean square of (kind - reference) with the reference's own variance taken out
  (``sqrt(mean(d^2) - mean(se_ref^2))``): the kind's error against the rollout the reference estimates; null, with
  ``below_reference_noise``, where the difference is within the reference's own noise (a longer reference is needed);
* ``cpu_s``: CPU seconds a position;
* ``mse_x_cpu``: ``rmse^2 * cpu_s``, the error variance at one CPU-second a position for a kind whose error is noise
  that falls as 1/cost (rollouts); lower is cheaper knowledge. Search kinds (``ply0``..``ply2``) have a fixed error
  (their bias does not fall with more work), so compare them by ``rmse`` at their cost.

Kinds (``--kinds``): ``plyN`` (N-ply search: :func:`training.targets.ply_targets`), ``plainT`` (T plain full trials),
``vrT`` (T variance-reduced full trials), ``vrT-hH`` / ``plainT-hH`` (truncated after H >= 1 half-moves, valued at
0-ply). All rollouts use quasi-random dice and stop at the exact bear-off databases.

Usage: ``python scripts/cost_table.py [--reference DIR] [--positions 100] [--kinds ply0,ply1,ply2,plain144,...]
[--seed 5] [--out FILE.json]``
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot import files  # noqa: E402
from bgbot.arena.rollout import RolloutSettings, rollout_positions  # noqa: E402
from bgbot.errors import BgbotError, int_at_least, run_script  # noqa: E402
from bgbot.rules.outcomes import equity  # noqa: E402
from training import campaign, parts, targets  # noqa: E402
from training.rollout import ROLLOUT_KINDS, rollout_kind  # noqa: E402

DEFAULT_KINDS = "ply0,ply1,ply2,plain144,plain324,plain1296,vr36,vr36-h8,plain1296-h16"
PLY = re.compile(r"^ply(?P<ply>[0-3])$")
"""A search kind's name, ``plyN``; the others are rollout kinds (:func:`training.rollout.rollout_kind`)."""


def reference(store: Path, limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """The reference's first ``limit`` rolled-out positions ``(P, 26)`` int8, their targets and standard errors
    ``(P, 5)`` float32, and the store's settings (JSON).

    Raises:
        BgbotError: the store holds no finished part.
    """
    settings = campaign.load_settings(store)
    pos, tg, se = [], [], []
    for n in range(campaign.n_parts(settings)):
        path = campaign.part_path(store, n)
        if not path.exists():
            break  # parts are made in order: the prefix that exists
        data = campaign.check_part(path, n, settings)
        pos.append(data["positions"])
        tg.append(data["targets"])
        se.append(data["stderr"])
    if not pos:
        raise BgbotError(f"{str(store)!r} holds no finished part yet")
    p, t, s = (np.concatenate(a)[:limit] for a in (pos, tg, se))
    return p, t, s, settings.to_json()


def settings_for(kind: str, seed: int) -> RolloutSettings | None:
    """The rollout settings of ``kind`` (:func:`training.rollout.rollout_kind`); None for a search kind (``plyN``).

    Raises:
        BgbotError: an unknown kind.
    """
    if PLY.match(kind):
        return None
    settings = rollout_kind(kind, seed)
    if settings is None:
        raise BgbotError(f"unknown kind {kind!r}: plyN, {ROLLOUT_KINDS}")
    return settings


def compute(kind: str, evaluator, positions: np.ndarray, seed: int) -> np.ndarray:
    """The side on roll's probabilities ``(P, 5)`` by ``kind`` (see the module docstring).

    Raises:
        BgbotError: an unknown kind.
    """
    settings = settings_for(kind, seed)
    if settings is None:
        return targets.ply_targets(evaluator, positions, int(kind[3:]))
    mean, _ = rollout_positions(positions, evaluator, settings)
    return np.clip(mean, 0.0, 1.0)


def _row(d: np.ndarray, ref_var: np.ndarray, cpu: float) -> dict:
    n = len(d)
    excess = float(np.mean(d**2) - np.mean(ref_var))
    mse = excess if excess > 0 else None  # within the reference's own noise: not measurable with this reference
    return {
        "bias": float(d.mean()),
        "bias_se": float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else None,
        "rmse": None if mse is None else mse**0.5,
        "mse_x_cpu": None if mse is None else mse * cpu,
        "below_reference_noise": mse is None,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference", default=str(ROOT / "models" / "candidates" / "campaign-1-holdout"))
    p.add_argument("--positions", type=int_at_least(2), default=100)
    p.add_argument("--kinds", default=DEFAULT_KINDS)
    p.add_argument("--seed", type=int_at_least(0), default=5)
    p.add_argument("--out", help="also write the table here (JSON)")
    args = p.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for k in kinds:
        settings_for(k, args.seed)  # every kind checked before any work
    pos, ref, ref_se, settings = reference(Path(args.reference), args.positions)
    _, evaluator, _ = parts.load_model(str(campaign.model_path(Path(args.reference), settings["model"])))
    compute("ply0", evaluator, pos[:2], args.seed)  # warm-up: the bear-off databases are read once, not timed
    ref_eq = equity(ref.astype(np.float64))
    # the variance of the reference's equity: each output's variance (covariances left out: an upper bound's order)
    ref_eq_var = (ref_se.astype(np.float64) ** 2 * np.array([4, 1, 1, 1, 1])).sum(axis=1)
    rows = []
    for kind in kinds:
        c0 = time.process_time()
        got = compute(kind, evaluator, pos, args.seed).astype(np.float64)
        cpu = (time.process_time() - c0) / len(pos)
        rows.append(
            {
                "kind": kind,
                "cpu_s": cpu,
                "win": _row(got[:, 0] - ref[:, 0], ref_se[:, 0].astype(np.float64) ** 2, cpu),
                "equity": _row(equity(got) - ref_eq, ref_eq_var, cpu),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    out = {
        "reference": {
            "store": args.reference,
            "positions": len(pos),
            "trials": settings["rollout"]["trials"],
            "model": settings["model"],
            "win_se_mean": float(ref_se[:, 0].mean()),
        },  # fmt: skip
        "kinds": rows,
    }
    text = json.dumps(out, indent=1)
    if args.out:
        files.write_atomic(args.out, text + "\n")
    print(text)


if __name__ == "__main__":
    run_script(main)
