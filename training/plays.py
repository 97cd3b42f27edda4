"""The campaign's plays stream: checker-play decisions where the model's 0-ply and 2-ply choose different plays, with
the candidate plays' afterstates rolled out.

Fits to rollouts of positions (cube windows, primes, back games, crashes) teach the nets the values of positions, and
leave checker play where it was (``models/candidates/gen6/README.md``: 5.43 mp a checker play before, 5.45 after 31,000
rollouts). A checker play is decided by the *differences* between the afterstates of one roll, and those are taught
best by rolling out the afterstates of the same roll with the same dice (the campaign's dice depend on the trial and
the turn only, so every afterstate of a part gets the same dice, trial by trial: their differences have much less noise
than their values). The decisions worth it are those where the engine's own deeper search disagrees with its 0-ply:
there 0-ply is wrong, or 2-ply is, and the rollout says which.

A plays store's plan holds decisions (a self-play position and a roll); a part takes ``part_size`` of them, searches
each at 0 and :data:`PLY` ply (:func:`select`), and rolls out the afterstates of the decisions that disagree: the
0-ply choice, then the 2-ply candidates best first, :data:`CANDIDATES` at most. Everything is a function of the plan
and the settings (fixed chunks of :data:`CHUNK` decisions, one thread each), so a part made again is identical.

Public API::

    select(evaluator, positions (N, 26) int8, dice (N, 2)) -> Selected
    Selected: afterstates (K, 26) int8, decision (K,) int32, choice (K,) int8, rank2 (K,) int8,
              ply0 (K, 5) float32, ply2 (K, 5) float32
    agreement(decision, choice, targets, ply0, ply2) -> dict   # how often the rollouts side with 0-ply or 2-ply
    choice_losses(probabilities (K, 5), decision (K,), targets (K, 5)) -> (D,) float64   # a model's loss a decision
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgbot.arena.ranking import rank
from bgbot.rules.outcomes import equity, flip_probabilities

__all__ = [
    "PLY",
    "CANDIDATES",
    "CHUNK",
    "ZERO_PLY_CHOICE",
    "DEEP_CHOICE",
    "Selected",
    "select",
    "agreement",
    "choice_losses",
]

PLY = 2
"""The search depth whose choice is compared with 0-ply's (the engine's 2-ply: :func:`bgbot.arena.ranking.rank`, with
the search's move filter)."""
CANDIDATES = 5
"""Afterstates rolled out per disagreeing decision at most: 0-ply's choice, then 2-ply's candidates best first."""
CHUNK = 25
"""Decisions a selection task searches (fixed, whatever the worker count: a network's output row may differ in its last
bits with the batch it is in)."""
ZERO_PLY_CHOICE = 1
"""``choice`` bit: the play 0-ply chooses."""
DEEP_CHOICE = 2
"""``choice`` bit: the play :data:`PLY`-ply chooses."""


@dataclass(frozen=True)
class Selected:
    """The afterstates of the disagreeing decisions of a batch, in decision order.

    Attributes:
        afterstates: ``(K, 26)`` int8, the opponent on roll (a position before the roll, as the campaign rolls out).
        decision: ``(K,)`` int32, the row of the decision in the batch it came from.
        choice: ``(K,)`` int8 bits: :data:`ZERO_PLY_CHOICE`, :data:`DEEP_CHOICE` (never both: the two choices differ).
        rank2: ``(K,)`` int8, the play's place in the :data:`PLY`-ply ranking (0 = its choice).
        ply0, ply2: ``(K, 5)`` float32, the afterstate's 0-ply and :data:`PLY`-ply cumulative probabilities for the
            side on roll in it (the opponent of the mover; as the rollout's targets are).
    """

    afterstates: np.ndarray
    decision: np.ndarray
    choice: np.ndarray
    rank2: np.ndarray
    ply0: np.ndarray
    ply2: np.ndarray

    @classmethod
    def concatenate(cls, parts: list[Selected], offsets: list[int]) -> Selected:
        """One :class:`Selected` from several, each one's ``decision`` shifted by its offset."""
        return cls(
            np.concatenate([p.afterstates for p in parts]).reshape(-1, 26).astype(np.int8),
            np.concatenate([p.decision + o for p, o in zip(parts, offsets, strict=True)]).astype(np.int32),
            np.concatenate([p.choice for p in parts]).astype(np.int8),
            np.concatenate([p.rank2 for p in parts]).astype(np.int8),
            np.concatenate([p.ply0 for p in parts]).reshape(-1, 5).astype(np.float32),
            np.concatenate([p.ply2 for p in parts]).reshape(-1, 5).astype(np.float32),
        )


def select(evaluator, positions: np.ndarray, dice: np.ndarray, ply: int = PLY, keep: int = CANDIDATES) -> Selected:
    """The candidate afterstates of the decisions whose 0-ply and ``ply``-ply choices differ.

    Args:
        evaluator: a position evaluator (without a move filter: the plain 0-ply and the search's own filter).
        positions: ``(N, 26)`` int8, side on roll; ``dice``: ``(N, 2)`` ints 1..6.
        ply: the deeper search (>= 1). keep: afterstates per disagreeing decision at most (>= 2).

    Returns:
        :class:`Selected`; a decision whose two choices lead to the same afterstate, or with one legal play, gives none.

    Raises:
        ValueError: ``ply`` < 1 or ``keep`` < 2. bgbot.rules.board.PositionError, bgbot.rules.movegen.DiceError: bad
            input.
    """
    if ply < 1 or keep < 2:
        raise ValueError(f"select needs ply >= 1 and keep >= 2, got ply={ply}, keep={keep}")
    positions = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    shallow = rank(evaluator, positions, dice, 0)
    deep = rank(evaluator, positions, dice, ply)
    after = deep.plays.afterstates
    assert np.array_equal(shallow.plays.parent, deep.plays.parent)  # both in the generator's order
    rows, decision, choice, rank2 = [], [], [], []
    for i in range(len(positions)):
        b0, b2 = int(shallow.best[i]), int(deep.best[i])
        if np.array_equal(after[b0], after[b2]):
            continue
        order = [int(r) for r in deep.rows(i) if deep.searched[r]]
        picked = [b0] + [r for r in order if r != b0][: keep - 1]
        for r in picked:
            rows.append(r)
            decision.append(i)
            choice.append((ZERO_PLY_CHOICE if r == b0 else 0) | (DEEP_CHOICE if r == b2 else 0))
            rank2.append(order.index(r))
    idx = np.array(rows, dtype=np.int64)
    return Selected(
        after[idx].astype(np.int8).reshape(-1, 26),
        np.array(decision, dtype=np.int32),
        np.array(choice, dtype=np.int8),
        np.array(rank2, dtype=np.int8),
        flip_probabilities(shallow.probabilities[idx]).astype(np.float32).reshape(-1, 5),
        flip_probabilities(deep.probabilities[idx]).astype(np.float32).reshape(-1, 5),
    )


def agreement(decision: np.ndarray, choice: np.ndarray, targets: np.ndarray, ply0: np.ndarray, ply2: np.ndarray):
    """Whom the rollouts side with, over the disagreeing decisions of plays parts.

    The mover's equity of an afterstate is minus the cubeless money equity of its rollout (the targets are the
    opponent's). For each decision the rollout's best candidate is the one with the highest mover's equity.

    Args:
        decision: ``(K,)`` ints, a key per decision (equal for the afterstates of one decision, e.g. plan rows).
        choice: ``(K,)`` int8 :data:`ZERO_PLY_CHOICE` / :data:`DEEP_CHOICE` bits.
        targets, ply0, ply2: ``(K, 5)`` the rollouts' and the two searches' probabilities (opponent's view).

    Returns:
        dict: ``decisions``; ``rollout_picks_0ply`` / ``rollout_picks_2ply`` / ``rollout_picks_other`` (counts);
        ``equity_loss_0ply`` / ``equity_loss_2ply``: the mean by which each search's choice falls short of the
        rollout's best candidate, in cubeless money equity (the rollouts' own noise included); ``rmse_0ply`` /
        ``rmse_2ply``: each search's equity error against the rollouts over all candidates, with the decision's mean
        error taken out (what matters to a checker play is the differences).
    """
    mover = -equity(np.asarray(targets, dtype=np.float64))
    e0 = -equity(np.asarray(ply0, dtype=np.float64))
    e2 = -equity(np.asarray(ply2, dtype=np.float64))
    keys, inverse = np.unique(np.asarray(decision), return_inverse=True)
    counts = {"rollout_picks_0ply": 0, "rollout_picks_2ply": 0, "rollout_picks_other": 0}
    loss0, loss2, d0, d2 = [], [], [], []
    for k in range(len(keys)):
        m = np.flatnonzero(inverse == k)
        best = m[np.argmax(mover[m])]
        c = int(choice[best])
        name = "0ply" if c & ZERO_PLY_CHOICE else "2ply" if c & DEEP_CHOICE else "other"
        counts[f"rollout_picks_{name}"] += 1
        zero = m[(choice[m] & ZERO_PLY_CHOICE) > 0]
        two = m[(choice[m] & DEEP_CHOICE) > 0]
        loss0.append(mover[best] - mover[zero[0]])
        loss2.append(mover[best] - mover[two[0]])
        d0.append((e0[m] - mover[m]) - (e0[m] - mover[m]).mean())
        d2.append((e2[m] - mover[m]) - (e2[m] - mover[m]).mean())
    n = len(keys)
    rms = lambda d: float(np.sqrt(np.mean(np.concatenate(d) ** 2))) if d else None  # noqa: E731
    return {
        "decisions": n,
        **counts,
        "equity_loss_0ply": float(np.mean(loss0)) if n else None,
        "equity_loss_2ply": float(np.mean(loss2)) if n else None,
        "rmse_0ply": rms(d0),
        "rmse_2ply": rms(d2),
    }


def choice_losses(probabilities: np.ndarray, decision: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """What a model's choice among each decision's rolled-out candidates loses against the rollouts' best candidate.

    Args:
        probabilities: ``(K, 5)`` the model's probabilities of each afterstate for the side on roll in it (the
            opponent of the mover), e.g. :func:`bgbot.evaluation.evaluator.position_probabilities`.
        decision: ``(K,)`` ints, equal for the candidates of one decision.
        targets: ``(K, 5)`` the rollouts' probabilities (the same side's).

    Returns:
        ``(D,)`` float64 per decision (in the order of ``np.unique(decision)``): the rollout's cubeless money equity of
        its best candidate minus that of the candidate the model ranks first, for the mover, in points (>= 0; the
        rollouts' noise is in it, the same for every model, so differences between models are the models').
    """
    mover = -equity(np.asarray(targets, dtype=np.float64))
    mine = -equity(np.asarray(probabilities, dtype=np.float64))
    _, inverse = np.unique(np.asarray(decision), return_inverse=True)
    out = np.empty(int(inverse.max()) + 1 if len(inverse) else 0)
    for k in range(len(out)):
        m = np.flatnonzero(inverse == k)
        out[k] = mover[m].max() - mover[m[np.argmax(mine[m])]]
    return out
