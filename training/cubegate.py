"""The cube half of the gate: money cube decisions of two models judged on held-out long rollouts, paired.

A generation's ppg can rise while its take/pass decisions get worse (ppg gates are cubeless). This check judges both
models' decisions by the engine's own knowledge, never GNU Backgammon's: the referee of a position is its long rollout
in a campaign store (:mod:`training.campaign`, e.g. ``models/candidates/campaign-1-holdout``: 5,184 trials, never
fitted), put through Janowski's money formulas (:func:`bgbot.cube.decision.decide`, cube centred, Jacoby off, the
position class's cube efficiency), as ``scripts/bench_decisions.py`` does with its referee.

* **Doubling decisions**: the positions whose rolled-out win probability lies in [0.55, 0.97]. A model doubles when its
  own ``decide`` (from its 0-ply probabilities) prefers doubling; its error is the referee's cost of that action.
* **Take/pass decisions**: among those, the positions where the referee doubles. A model takes when its double/take
  equity is below its double/pass; its error is the referee's cost of the take or the pass.

Errors are in millipoints (1/1000 of the cube value) a decision. The check is paired: ``diff`` is the candidate's
error minus the incumbent's, position by position, with a 95% interval (normal approximation over positions); the
candidate is **not worse** when the interval's lower end is at most 0 for both kinds (the data do not show it worse).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bgbot.cube.decision import decide
from bgbot.evaluation.classes import efficiency_for
from bgbot.evaluation.evaluator import for_cube, position_probabilities
from bgbot.evaluation.specialists import classify
from bgbot.rules.board import pip_counts
from bgbot.rules.state import CubeState, MatchState

from . import campaign
from .parts import StageError, load_model

WINDOW = (0.55, 0.97)
MIN_DECISIONS = 20
"""Fewest decisions of each kind (doubling, take/pass) a judgement needs: fewer is an error, never a pass."""
MONEY = MatchState()


def reference_positions(stores: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every finished part's positions ``(P, 26)`` int8 and rolled-out probabilities ``(P, 5)`` float64 of the
    campaign ``stores``.

    Raises:
        StageError: a store is not a campaign store, holds a torn or foreign part, or none holds a finished part; a
            store given twice (its positions would count twice, narrowing the gate's interval).
    """
    seen: dict[Path, str] = {}
    for store in stores:
        key = Path(store).resolve()
        if key in seen:
            raise StageError(f"the reference store {store!r} is given twice (also as {seen[key]!r}): give it once")
        seen[key] = store
    pos, tg = [], []
    for store in stores:
        settings = campaign.load_settings(Path(store))
        for n in range(campaign.n_parts(settings)):
            path = campaign.part_path(Path(store), n)
            if path.exists():
                data = campaign.check_part(path, n, settings)
                pos.append(data["positions"])
                tg.append(data["targets"])
    if not pos:
        raise StageError(f"no finished rollouts in {stores!r}")
    return np.concatenate(pos).astype(np.int8), np.concatenate(tg).astype(np.float64)


def _efficiency(position: np.ndarray) -> float:
    return efficiency_for("race" if classify(position[None])[0] == 3 else "contact", int(pip_counts(position)[0]))


def decision_errors(probabilities: np.ndarray, positions: np.ndarray, reference: np.ndarray) -> dict[str, np.ndarray]:
    """A model's money cube errors against the referee, in millipoints.

    Args:
        probabilities: ``(P, 5)`` the model's cubeless probabilities of ``positions`` for the side on roll.
        positions: ``(P, 26)`` int8, side on roll (for the cube efficiency).
        reference: ``(P, 5)`` the referee's probabilities (long rollouts).

    Returns:
        ``{"double": (P,), "take": (P,)}`` float64: the error of each decision; NaN where the position is not a
        decision of that kind (outside the window; for takes, also where the referee does not double).
    """
    n = len(positions)
    out = {"double": np.full(n, np.nan), "take": np.full(n, np.nan)}
    for i in range(n):
        if not WINDOW[0] <= reference[i, 0] <= WINDOW[1]:
            continue
        x = _efficiency(positions[i])
        ref = decide(reference[i : i + 1], CubeState(), MONEY, x)
        own = decide(probabilities[i : i + 1], CubeState(), MONEY, x)
        e, r = own.equities, ref.equities
        doubles = min(e["double_take"], e["double_pass"]) > e["no_double"]
        out["double"][i] = 1000 * ref.errors["double" if doubles else "no_double"]
        if min(r["double_take"], r["double_pass"]) > r["no_double"]:
            takes = e["double_take"] < e["double_pass"]
            out["take"][i] = 1000 * ref.errors["take" if takes else "pass"]
    return out


def _summary(errors: np.ndarray) -> dict:
    e = errors[~np.isnan(errors)]
    return {"decisions": len(e), "mean_millipoints": float(e.mean()) if len(e) else None}


def _paired(a: np.ndarray, b: np.ndarray) -> dict:
    d = (a - b)[~np.isnan(a)]
    if len(d) < 2:
        return {"mean": float(d.mean()) if len(d) else None, "ci_low": None, "ci_high": None, "not_worse": True}
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    mean = float(d.mean())
    return {"mean": mean, "ci_low": mean - half, "ci_high": mean + half, "not_worse": bool(mean - half <= 0)}


def cube_check(candidate: str, against: str, stores: list[str]) -> dict:
    """Judge ``candidate`` against ``against`` (checkpoint paths) on the held-out rollouts of ``stores``.

    Returns:
        ``{"reference", "positions", "candidate": {"double", "take"}, "against": {...}, "diff": {"double", "take"},
        "not_worse"}``: per model and kind the decisions and mean error (mp), per kind the paired difference
        (candidate - against) with its 95% interval.

    Raises:
        StageError: a missing checkpoint or store, no finished rollouts, or fewer than :data:`MIN_DECISIONS`
            decisions of a kind.
    """
    for path in (candidate, against):
        if not Path(path).is_file():
            raise StageError(f"the cube check needs checkpoints: no file at {path!r}")
    pos, ref = reference_positions(stores)
    errors = {}
    for who, path in (("candidate", candidate), ("against", against)):
        _, evaluator, _ = load_model(path)
        p = position_probabilities(for_cube(evaluator), pos).astype(np.float64)
        errors[who] = decision_errors(p, pos, ref)
    for kind in ("double", "take"):
        n = int((~np.isnan(errors["candidate"][kind])).sum())
        if n < MIN_DECISIONS:
            raise StageError(
                f"the held-out rollouts in {stores!r} hold {n} {kind} decisions, too few to judge the cube "
                f"(at least {MIN_DECISIONS}): finish or add a reference store"
            )
    diff = {k: _paired(errors["candidate"][k], errors["against"][k]) for k in ("double", "take")}
    return {
        "reference": list(stores),
        "positions": len(pos),
        "candidate": {k: _summary(v) for k, v in errors["candidate"].items()},
        "against": {k: _summary(v) for k, v in errors["against"].items()},
        "diff": diff,
        "not_worse": all(d["not_worse"] for d in diff.values()),
    }
