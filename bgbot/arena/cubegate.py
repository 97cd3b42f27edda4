"""The cube half of the gate: money cube decisions of two models judged on held-out long rollouts, paired.

A generation's ppg can rise while its take/pass decisions get worse (ppg gates are cubeless). This check judges both
models' decisions by the engine's own knowledge, never GNU Backgammon's: the referee of a position is its long rollout
in a campaign store (:func:`bgbot.formats.store.reference_positions`, e.g. ``models/candidates/campaign-1-holdout``:
5,184 trials, never fitted), put through Janowski's money formulas (:func:`bgbot.cube.decision.decide`, cube centred,
Jacoby off, the position class's cube efficiency), as ``scripts/bench_decisions.py`` does with its referee.

* **Doubling decisions**: the positions whose rolled-out win probability lies in :data:`WINDOW`. A model doubles when
  its own ``decide`` (from its 0-ply probabilities) prefers doubling; its error is the referee's cost of that action.
* **Take/pass decisions**: among those, the positions where the referee doubles. A model takes when its double/take
  equity is below its double/pass; its error is the referee's cost of the take or the pass.

**The reference** (:func:`check_reference`, before any game): a campaign store of positions (not a plays store of
checker-play decisions) whose plan takes doubling-window positions (a cube rule among its ``rules``), rolled out to the
end of the game (no truncation, whose horizon valuation is a model's own bias) with at least
:data:`MIN_REFERENCE_TRIALS` trials; any other store is refused with one line saying what it lacks. That a store was
never fitted cannot be read from it: keep the held-out stores out of every fit.

Errors are in millipoints (1/1000 of the cube value) a decision. The check is paired (:func:`paired`): the
candidate's error minus the incumbent's, position by position, with a 95% interval (normal approximation over
positions); the candidate is **not worse** when the interval's lower end is at most 0 for both kinds (the data do not
show it worse). The record is :class:`bgbot.arena.benchmark.CubeGate`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bgbot.cube.decision import decide
from bgbot.evaluation.classes import efficiency_for
from bgbot.evaluation.specialists import classify
from bgbot.formats.store import StoreError, load_settings
from bgbot.rules.board import pip_counts
from bgbot.rules.state import CubeState, MatchState

WINDOW = (0.55, 0.97)
"""The rolled-out win probabilities of the side on roll whose positions are doubling decisions."""
MIN_DECISIONS = 20
"""Fewest decisions of each kind (doubling, take/pass) a judgement needs: fewer is an error, never a pass."""
KINDS = ("double", "take")
"""The kinds of decision judged, the keys of :func:`decision_errors`' result."""
MONEY = MatchState()
MIN_REFERENCE_TRIALS = 2592
"""Fewest rollout trials of a reference store's positions: twice the 1,296 of the stores rolled out for fitting, so
that a plain rollout's standard error in the win probability is at most 0.01 (0.5 / sqrt(2592))."""
CUBE_RULES = ("cube", "race_cube")
"""The plan rules (``campaign.json``'s ``rules``: :class:`training.campaign.Reason` by name) that choose positions of
the doubling window; a reference store's plan has at least one."""


def check_reference(store: str) -> None:
    """Refuse ``store`` unless it is a held-out cube reference (module docstring): a campaign store of positions
    planned with a cube rule (:data:`CUBE_RULES`), rolled out untruncated with at least :data:`MIN_REFERENCE_TRIALS`
    trials. Reads ``campaign.json`` only.

    Raises:
        StoreError: not a campaign store (:func:`bgbot.formats.store.load_settings`), or one line naming the store and
            what it lacks.
    """
    settings = load_settings(Path(store))
    why = f"{store!r} is not a held-out cube reference (long rollouts of doubling-window positions)"
    if settings.plays:
        raise StoreError(f"{why}: it is a plays store of checker-play decisions")
    rules = sorted(settings.rules)
    if not any(r in settings.rules for r in CUBE_RULES):
        raise StoreError(f"{why}: its plan has no cube rule ({' or '.join(CUBE_RULES)}), only {', '.join(rules)}")
    rollout = settings.rollout
    if rollout.get("truncate", 0):
        raise StoreError(
            f"{why}: its rollouts stop after {rollout['truncate']} plies (truncated), not at the game's end"
        )
    if rollout.get("cube", False):
        raise StoreError(f"{why}: its rollouts are cubeful, not the cubeless probabilities the cube check judges by")
    trials = rollout.get("trials", 0)
    if trials < MIN_REFERENCE_TRIALS:
        raise StoreError(f"{why}: its rollouts have {trials} trials, fewer than {MIN_REFERENCE_TRIALS}")


def efficiency(position: np.ndarray) -> float:
    """The cube efficiency of one position ``(26,)`` int8 (side on roll): its class's (race or contact) at its pip
    count (:func:`bgbot.evaluation.classes.efficiency_for`)."""
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
    out = {kind: np.full(n, np.nan) for kind in KINDS}
    for i in range(n):
        if not WINDOW[0] <= reference[i, 0] <= WINDOW[1]:
            continue
        x = efficiency(positions[i])
        ref = decide(reference[i : i + 1], CubeState(), MONEY, x)
        own = decide(probabilities[i : i + 1], CubeState(), MONEY, x)
        e, r = own.equities, ref.equities
        doubles = min(e["double_take"], e["double_pass"]) > e["no_double"]
        out["double"][i] = 1000 * ref.errors["double" if doubles else "no_double"]
        if min(r["double_take"], r["double_pass"]) > r["no_double"]:
            takes = e["double_take"] < e["double_pass"]
            out["take"][i] = 1000 * ref.errors["take" if takes else "pass"]
    return out


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """The mean of ``a - b`` over the decisions (``(P,)`` float64 each, NaN where no decision) and its 95% interval
    (1.96 standard errors, normal approximation over positions): ``(mean, low, high)``; ``None`` for what fewer than two
    decisions (one for the mean) cannot give."""
    d = (a - b)[~np.isnan(a)]
    if len(d) < 2:
        return (float(d.mean()) if len(d) else None), None, None
    half = float(1.96 * d.std(ddof=1) / np.sqrt(len(d)))
    mean = float(d.mean())
    return mean, mean - half, mean + half
