"""The plays stream's cost table: how precisely each rollout kind measures the differences between a decision's
candidates, per CPU-second.

A checker play is decided by the differences between the candidates' equities, so what a plays store needs from its
rollouts is the standard error of those differences, paired over trials (every candidate of a decision gets the same
dice in trial *i*). Decisions: the first ``--decisions`` rolled-out decisions of a plays store's part (``--store``,
default ``models/candidates/campaign-3``; ``--part``, default 9, a held-out part), each with the candidates the store
rolled out (0-ply's choice first, then 2-ply's candidates best first). Every kind rolls out each decision's candidates
together with :func:`bgbot.arena.rollout.rollout_plays`, the store's model, the store's move filter setting, quasi-random
dice, exact bear-off databases, one process, ``--seed``.

Per kind (JSON on stdout):

* ``cpu_s``: CPU seconds a decision (all its candidates);
* ``diff_se``: the mean over decisions of the paired standard error of (candidate - 0-ply's choice) in cubeless money
  equity, averaged over the other candidates (:func:`bgbot.arena.rollout.paired_difference`, as
  :func:`bgbot.arena.rollout.rank_candidates`' ``difference_se``);
  ``by_class``: the same for the decisions' positions by class (contact, crashed, race);
* ``var_x_cpu``: ``mean(se^2) * cpu_s``, the variance of a difference at one CPU-second a decision, for a kind whose
  noise falls as 1/trials; lower is cheaper; ``relative``: over the first kind's.

Truncated kinds (``-hH``: valued at 0-ply after H half-moves) carry a bias. With ``--reference KIND`` (e.g.
``vr1296``, rolled out with seed ``--seed`` + 1 so that its dice differ from the kinds'), each kind also gets, against
the reference's differences (candidate - 0-ply's choice) of the same decisions:

* ``bias_rms``: ``sqrt(mean((d - d_ref)^2) - mean(se^2 + se_ref^2))`` over the candidates, the part of the difference
  between the two that their noise does not explain (null, ``within_noise``, when the noise explains it all);
* ``same_best``: the share of decisions where the kind's best candidate is the reference's.

Usage: ``python scripts/plays_cost.py [--store DIR] [--part 9] [--decisions 20] [--kinds plain324,vr324] [--seed 5]
[--reference KIND]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot.arena.rollout import Candidate, RolloutSettings, paired_difference, rollout_plays  # noqa: E402
from bgbot.errors import BgbotError, int_at_least, run_script  # noqa: E402
from bgbot.evaluation import specialists  # noqa: E402
from training import campaign, parts  # noqa: E402
from training.rollout import ROLLOUT_KINDS, rollout_kind  # noqa: E402


def decisions(store: Path, part: int, limit: int) -> tuple[list[np.ndarray], np.ndarray, dict]:
    """The first ``limit`` decisions of ``store``'s part ``part``: each decision's candidate afterstates ``(k, 26)``
    int8 (k >= 2, the store's order), the classes ``(D,)`` of the decisions' positions, and the store's settings.

    Raises:
        BgbotError: not a plays store, a missing, torn or foreign part, or a part without decisions.
    """
    settings = campaign.load_settings(store)
    if not settings.plays:
        raise BgbotError(f"{str(store)!r} is not a plays store (python -m training campaign plan --plays)")
    path = campaign.part_path(store, part)
    if not path.exists():
        raise BgbotError(f"{str(path)!r} does not exist: the store has not made part {part} yet")
    plan = campaign.load_plan(store, settings)
    data = campaign.check_part(path, part, settings, plan)
    keys = np.unique(data["decisions"])[:limit]
    if not len(keys):
        raise BgbotError(f"{str(path)!r} holds no rolled-out decision")
    cands = [data["positions"][data["decisions"] == k] for k in keys]
    return cands, specialists.classify(plan["positions"][keys]), settings.to_json()


def settings_for(kind: str, move_filter: bool, seed: int) -> RolloutSettings:
    """The rollout settings of ``kind`` (``plainT``, ``vrT``, ``plainT-hH``, ``vrT-hH``:
    :func:`training.rollout.rollout_kind`).

    Raises:
        BgbotError: an unknown kind.
    """
    settings = rollout_kind(kind, seed, move_filter)
    if settings is None:
        raise BgbotError(f"unknown kind {kind!r}: {ROLLOUT_KINDS}")
    return settings


def differences(cands: list[Candidate]) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate after the first minus the first, over the trials of a rollout of ``cands`` (filled by
    :func:`rollout_plays`), in cubeless money equity for the mover: the means ``(k - 1,)`` float64 and their paired
    standard errors ``(k - 1,)`` float64 (:func:`bgbot.arena.rollout.paired_difference`)."""
    first = cands[0].estimate
    assert first is not None
    mean, se = [], []
    for c in cands[1:]:
        assert c.estimate is not None
        d, d_se = paired_difference(c.estimate, first)
        mean.append(d)
        se.append(d_se)
    return np.array(mean), np.array(se)


def against(d: list[np.ndarray], se: list[np.ndarray], ref_d: list[np.ndarray], ref_se: list[np.ndarray]) -> dict:
    """``bias_rms``, ``within_noise`` and ``same_best`` of a kind's differences ``d`` (with standard errors ``se``)
    against the reference's, decision by decision (module docstring)."""
    x, r = np.concatenate(d), np.concatenate(ref_d)
    noise = float(np.mean(np.concatenate(se) ** 2 + np.concatenate(ref_se) ** 2))
    excess = float(np.mean((x - r) ** 2)) - noise
    best = [int(np.argmax(np.r_[0.0, a])) == int(np.argmax(np.r_[0.0, b])) for a, b in zip(d, ref_d)]
    return {
        "bias_rms": excess**0.5 if excess > 0 else None,
        "within_noise": excess <= 0,
        "same_best": float(np.mean(best)),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", default=str(ROOT / "models" / "candidates" / "campaign-3"))
    p.add_argument("--part", type=int_at_least(0), default=9)
    p.add_argument("--decisions", type=int_at_least(1), default=20)
    p.add_argument("--kinds", default="plain324,vr324")
    p.add_argument("--seed", type=int_at_least(0), default=5)
    p.add_argument("--reference", help="a long kind the others' differences are compared with (e.g. vr1296)")
    args = p.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not kinds or len(set(kinds)) != len(kinds):
        raise BgbotError(f"--kinds must name one kind or more, each once, got {args.kinds!r}")
    for k in kinds + ([args.reference] if args.reference else []):
        settings_for(k, False, 0)  # every kind checked before any work
    store = Path(args.store)
    cands, classes, st = decisions(store, args.part, args.decisions)
    model = campaign.model_path(store, st["model"])
    _, evaluator, _ = parts.load_model(str(model))
    evaluator = campaign.players_for(evaluator, campaign.load_settings(store), model)  # the store's own players
    move_filter = bool(st["rollout"].get("move_filter", False))
    rollout_plays(  # warm-up: the bear-off databases and the filter are read once, not timed
        evaluator, [Candidate("", a) for a in cands[0]], settings_for("plain36", move_filter, args.seed)
    )

    def run(kind: str, seed: int) -> tuple[list[np.ndarray], list[np.ndarray], float]:
        rs = settings_for(kind, move_filter, seed)
        ds, ses, cpu = [], [], 0.0
        for afterstates in cands:
            c0 = time.process_time()
            done = rollout_plays(evaluator, [Candidate("", a) for a in afterstates], rs)
            cpu += time.process_time() - c0
            d, se = differences(done)
            ds.append(d)
            ses.append(se)
        return ds, ses, cpu

    ref = None
    if args.reference:
        ref_d, ref_se, ref_cpu = run(args.reference, args.seed + 1)
        ref = {"kind": args.reference, "seed": args.seed + 1, "cpu_s": ref_cpu / len(cands)}
        ref["diff_se"] = float(np.mean([s.mean() for s in ref_se]))
        print(json.dumps(ref), file=sys.stderr, flush=True)
    rows: list[dict] = []
    for kind in kinds:
        ds, ses, cpu = run(kind, args.seed)
        se_a = np.array([s.mean() for s in ses])
        cpu_s = cpu / len(cands)
        row = {
            "kind": kind,
            "cpu_s": cpu_s,
            "diff_se": float(se_a.mean()),
            "by_class": {
                name: float(se_a[classes == code].mean())
                for code, name in enumerate(specialists.CLASSES, start=1)
                if (classes == code).any()
            },
            "var_x_cpu": float(np.mean(se_a**2) * cpu_s),
        }
        row["relative"] = row["var_x_cpu"] / rows[0]["var_x_cpu"] if rows else 1.0
        if ref is not None:
            row |= against(ds, ses, ref_d, ref_se)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    out = {
        "store": str(Path(args.store).resolve().relative_to(ROOT))
        if Path(args.store).resolve().is_relative_to(ROOT)
        else args.store,
        "part": args.part,
        "decisions": len(cands),
        "classes": {n: int((classes == c).sum()) for c, n in enumerate(specialists.CLASSES, start=1)},
        "move_filter": move_filter,
        "seed": args.seed,
        "reference": ref,
        "kinds": rows,
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    run_script(main)
