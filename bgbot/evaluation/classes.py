"""Position classes (GNU Backgammon's ``ClassifyPosition``) and the cube efficiency of each class (its
``EvalEfficiency``), for positions ``(26,)`` int8 seen from the side on roll."""

from __future__ import annotations

import numpy as np

from bgbot.evaluation.encoding import is_race
from bgbot.rules import board

CLASSES = ("over", "contact", "race", "bearoff")
"""Class names by code, as :func:`classify_batch` returns them."""
_EFFICIENCY = np.array([0.0, 0.68, np.nan, 0.6])  # race: from the pips


def classify_batch(positions: np.ndarray) -> np.ndarray:
    """GNU Backgammon's position class of each position ``(N, 26)`` int (side on roll) -> ``(N,)`` int8 codes into
    :data:`CLASSES` (see :func:`classify`), batched: the one game-over test (:func:`bgbot.rules.board.game_result`)
    and the one race test (:func:`bgbot.evaluation.encoding.is_race`)."""
    p = np.asarray(positions).reshape(-1, 26)
    over = board.game_result(p) != 0
    race = is_race(p)
    idx = np.arange(26)
    my_back = np.where(p > 0, idx, -1).max(axis=1)  # my farthest checker, my numbering (25 = bar)
    their_back = np.where(p < 0, idx, 26).min(axis=1)  # their farthest checker, in my numbering (0 = their bar)
    bearoff = (my_back <= 6) & (their_back >= 19)
    code = np.where(over, 0, np.where(~race, 1, np.where(bearoff, 3, 2)))
    return code.astype(np.int8)


def classify(position: np.ndarray) -> str:
    """GNU Backgammon's position class, as far as it matters for the cube efficiency, ``(26,)`` -> str.

    "over": a side has no checkers left; "contact": some checker of one side still has to pass a checker of the other
    (gnubg's CLASS_CONTACT and CLASS_CRASHED, same efficiency); "bearoff": no contact and every checker of both sides
    in its home board (gnubg's one-sided bear-off classes; gnubg's small two-sided databases value their positions
    exactly instead, which 0-ply Janowski cannot reproduce); "race": no contact otherwise.
    """
    return CLASSES[int(classify_batch(board.validate(position)[None])[0])]


def cube_efficiencies(positions: np.ndarray) -> np.ndarray:
    """:func:`cube_efficiency` of each position ``(N, 26)`` int (side on roll) -> ``(N,)`` float64, batched."""
    p = np.asarray(positions).reshape(-1, 26)
    code = classify_batch(p)
    pips = board.pip_counts(p)[:, 0].astype(np.float64)
    race = np.clip(0.55 + 0.00125 * pips, 0.6, 0.7)
    return np.where(code == 2, race, _EFFICIENCY[code])


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
    return float(cube_efficiencies(board.validate(position)[None])[0])
