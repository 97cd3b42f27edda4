"""Position classes (GNU Backgammon's ``ClassifyPosition``, eval.c) and the cube efficiency of each class (its
``EvalEfficiency``), for positions ``(26,)`` / ``(M, 26)`` int8 seen from the side on roll.

:class:`PositionClass` is the one numbering of classes: its values are the codes :func:`classify_batch` returns and
the indices of :data:`CLASS_NAMES`; :attr:`PositionClass.stored` is the code a class has in the specialist nets'
dispatch (:mod:`bgbot.evaluation.specialists`) and in the training stages' files (0 over, 1 contact, 2 crashed, 3 race
with both bear-off classes, 4 a back game), :data:`STORED_CODES` the same as an array. The classes, in
:data:`CLASS_NAMES` order, and the names ``bgbot move`` / ``bgbot cube`` show as ``"evaluator"``:

* ``over`` -- a side has no checker left (gnubg CLASS_OVER): valued exactly by the rules.
* ``bearoff-two-sided`` -- no contact, every checker of both sides on its six home points and at most
  :data:`bgbot.evaluation.bearoff.TS_CHECKERS` (6) checkers a side (gnubg CLASS_BEAROFF_TS with its 6x6 database,
  ``gnubg_ts0.bd``): valued exactly by the two-sided database.
* ``bearoff-one-sided`` -- no contact, every checker of both sides on its home points, more than 6 on one side
  (gnubg CLASS_BEAROFF1 with the 6-point, 15-checker one-sided database ``gnubg_os0.bd``): valued from the two
  one-sided distributions, as gnubg does at 0-ply.
* ``race`` -- no contact otherwise (gnubg CLASS_RACE).
* ``crashed`` -- contact, and one side "crashed" by gnubg's test: at most 6 checkers left on the board (bar
  included); or, with 2+ checkers on its 1-point, at most 6 besides them, or with 2+ also on the 2-point at most 5
  besides both points; else at most 5 + (checkers on the 2-point) (gnubg 1.x ``ClassifyPosition``, N = 6).
* ``contact`` -- contact otherwise: some checker of a side still has to pass a checker of the other (gnubg's test
  ``nBack + nOppBack > 22`` with 0-based points, bar 24).

Differences from gnubg: none in the definitions; gnubg evaluates race, crashed and contact with three nets where
bgbot has one, so those three differ only in their label (and the cube efficiency).
"""

from __future__ import annotations

import enum

import numpy as np

from bgbot.rules import board

_LABELS = ("over", "bearoff-two-sided", "bearoff-one-sided", "race", "crashed", "contact", "backgame")
_STORED = (0, 3, 3, 3, 2, 1, 4)


class PositionClass(enum.IntEnum):
    """A position class; the value is its :func:`classify_batch` code and its index in :data:`CLASS_NAMES`.

    :attr:`BACKGAME` never comes from :func:`classify_batch`: the training stages mark contact and crashed positions
    with a back game so (``training.sample.sample_classes``).
    """

    OVER = 0
    BEAROFF_TS = 1
    BEAROFF_OS = 2
    RACE = 3
    CRASHED = 4
    CONTACT = 5
    BACKGAME = 6

    @property
    def label(self) -> str:
        """The class's name: ``"over"``, ``"bearoff-two-sided"``, ..., ``"backgame"``."""
        return _LABELS[self.value]

    @property
    def stored(self) -> int:
        """The class's code in the specialist nets' dispatch and in the training stages' files (0 over, 1 contact,
        2 crashed, 3 race and both bear-off classes, 4 a back game)."""
        return _STORED[self.value]


CLASS_NAMES = tuple(c.label for c in PositionClass if c is not PositionClass.BACKGAME)
"""The fixed list of position classes / ``"evaluator"`` values, in code order."""
OVER, BEAROFF_TS, BEAROFF_OS, RACE, CRASHED, CONTACT = (c for c in PositionClass if c is not PositionClass.BACKGAME)
STORED_CODES = np.array([c.stored for c in PositionClass], dtype=np.int8)
"""``(7,)`` int8: :attr:`PositionClass.stored` by class code (``STORED_CODES[classify_batch(p)]``)."""

TS_CHECKERS = 6
"""Most checkers a side may have for the two-sided bear-off database (gnubg's ``gnubg_ts0.bd``: 6 points x 6)."""


def classify_batch(positions: np.ndarray, ext: board.Extremes | None = None) -> np.ndarray:
    """Class codes of positions: ``(M, 26)`` int8 -> ``(M,)`` int8, indices into :data:`CLASS_NAMES`.

    No checking of the positions (use :func:`bgbot.rules.board.validate` on untrusted input). ``ext``: their
    :func:`bgbot.rules.board.extremes` when the caller has them already.
    """
    p = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    e = board.extremes(p) if ext is None else ext
    contact = e.my_back > e.their_back
    home = (e.my_back <= 6) & (e.their_back >= 19)
    small = (e.n_mine <= TS_CHECKERS) & (e.n_theirs <= TS_CHECKERS)
    # every row's crashed test on the four points it reads (cheaper than gathering the contact rows first)
    q = p[:, _CRASH_POINTS].astype(np.int16)  # (M, 4): my 1- and 2-points, then their 2- and 1-points
    crashed = _crashed(e.n_mine, q[:, 0], q[:, 1]) | _crashed(e.n_theirs, -q[:, 3], -q[:, 2])
    out = np.where(
        contact, np.where(crashed, CRASHED, CONTACT), np.where(home, np.where(small, BEAROFF_TS, BEAROFF_OS), RACE)
    )
    out[(e.n_mine == 0) | (e.n_theirs == 0)] = OVER
    return out.astype(np.int8, copy=False)


_CRASH_POINTS = np.array([1, 2, 23, 24])


def _crashed(total: np.ndarray, on_1: np.ndarray, on_2: np.ndarray) -> np.ndarray:
    """gnubg's crashed test for one side: ``total`` checkers on the board, ``on_1``/``on_2`` on its 1/2-points."""
    n = 6
    two_on_1 = on_1 > 1
    return (
        (total <= n)
        | (two_on_1 & (total <= n + on_1))
        | (two_on_1 & (on_2 > 1) & (1 + total - (on_1 + on_2) <= n))
        | (~two_on_1 & (total <= n + on_2 - 1))
    )


def classify(position: np.ndarray) -> str:
    """The class name (:data:`CLASS_NAMES`) of one position ``(26,)`` int8 (checked by
    :func:`bgbot.rules.board.validate`; raises its ``PositionError``)."""
    return CLASS_NAMES[int(classify_batch(board.validate(position)[None])[0])]


def efficiency_for(position_class: str, pips_on_roll: int = 0) -> float:
    """Cube efficiency x of gnubg's defaults (eval.c EvalEfficiency): contact and crashed 0.68; race 0.55 + 0.00125 *
    pips of the side on roll clamped to [0.6, 0.7]; both bear-off classes 0.6 (``"bearoff"`` is accepted for
    either); game over 0."""
    if position_class in ("contact", "crashed"):
        return 0.68
    if position_class == "race":
        return float(min(max(0.55 + 0.00125 * pips_on_roll, 0.6), 0.7))
    if position_class in ("bearoff", "bearoff-one-sided", "bearoff-two-sided"):
        return 0.6
    if position_class == "over":
        return 0.0
    raise KeyError(f"unknown position class {position_class!r}")


_EFFICIENCY = np.array([0.0, 0.6, 0.6, np.nan, 0.68, 0.68])  # by class code; race: from the pips


def cube_efficiencies(positions: np.ndarray) -> np.ndarray:
    """:func:`efficiency_for` of each position's class, ``(N, 26)`` int8 (side on roll) -> ``(N,)`` float64, batched
    (the cube phase of :func:`bgbot.arena.engine.play_ply` asks for many at once)."""
    p = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    code = classify_batch(p)
    race = np.clip(0.55 + 0.00125 * board.pip_counts(p)[:, 0].astype(np.float64), 0.6, 0.7)
    return np.where(code == RACE, race, _EFFICIENCY[code])


def cube_efficiency(position: np.ndarray) -> float:
    """Cube efficiency of a position ``(26,)`` int8 seen from the side on roll (:func:`classify`,
    :func:`efficiency_for`)."""
    return efficiency_for(classify(position), int(board.pip_counts(np.asarray(position))[0]))
