"""Position classes (GNU Backgammon's ``ClassifyPosition``) and the cube efficiency of each class (its
``EvalEfficiency``), for positions ``(26,)`` int8 seen from the side on roll."""

from __future__ import annotations

import numpy as np

from bgbot.evaluation.encoding import is_race
from bgbot.rules import board


def classify(position: np.ndarray) -> str:
    """GNU Backgammon's position class, as far as it matters for the cube efficiency, ``(26,)`` -> str.

    "over": a side has no checkers left; "contact": some checker of one side still has to pass a checker of the other
    (gnubg's CLASS_CONTACT and CLASS_CRASHED, same efficiency); "bearoff": no contact and every checker of both sides
    in its home board (gnubg's one-sided bear-off classes; gnubg's small two-sided databases value their positions
    exactly instead, which 0-ply Janowski cannot reproduce); "race": no contact otherwise.
    """
    p = board.validate(position)
    if board.game_result(p) != 0:  # the one game-over test
        return "over"
    if not is_race(p):  # the one race test
        return "contact"
    my_back = int(np.flatnonzero(p > 0).max())  # my farthest checker, my numbering (25 = bar)
    their_back = int(np.flatnonzero(p < 0).min())  # their farthest checker, in my numbering (0 = their bar)
    return "bearoff" if my_back <= 6 and their_back >= 19 else "race"


def efficiency_for(position_class: str, pips_on_roll: int = 0) -> float:
    """Cube efficiency x of gnubg's defaults: contact/crashed 0.68; race 0.55 + 0.00125 * pips of the side on roll
    clamped to [0.6, 0.7]; bear-off 0.6; game over 0 (eval.c EvalEfficiency)."""
    if position_class == "contact":
        return 0.68
    if position_class == "race":
        return float(min(max(0.55 + 0.00125 * pips_on_roll, 0.6), 0.7))
    if position_class == "bearoff":
        return 0.6
    if position_class == "over":
        return 0.0
    raise KeyError(f"unknown position class {position_class!r}")


def cube_efficiency(position: np.ndarray) -> float:
    """Cube efficiency of a position ``(26,)`` int8 seen from the side on roll (:func:`classify`,
    :func:`efficiency_for`)."""
    return efficiency_for(classify(position), int(board.pip_counts(np.asarray(position))[0]))


def cube_efficiencies(positions: np.ndarray) -> np.ndarray:
    """:func:`cube_efficiency` of many positions at once, ``(N, 26)`` int8 -> ``(N,)`` float64 (the same classes and
    values, batched: checker play at a match score needs one per play of every game in flight)."""
    p = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    n = len(p)
    out = np.full(n, efficiency_for("contact"))
    over = board.game_result(p) != 0
    race = is_race(p) & ~over
    idx = np.arange(26)
    my_back = np.where(p > 0, idx, -1).max(axis=1)  # (N,) my farthest checker (25 = bar)
    their_back = np.where(p < 0, idx, 26).min(axis=1)  # (N,) theirs, in my numbering (0 = their bar)
    bearoff = race & (my_back <= 6) & (their_back >= 19)
    pips = board.pip_counts(p)[:, 0].astype(np.float64)
    out[race] = np.clip(0.55 + 0.00125 * pips[race], 0.6, 0.7)
    out[bearoff] = efficiency_for("bearoff")
    out[over] = efficiency_for("over")
    return out
