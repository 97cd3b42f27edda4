"""Tesauro's pubeval, vectorised: a fixed linear benchmark player.

Source: G. Tesauro's public evaluation function (public domain, 1993); the weights and the exact input encoding are in
``bgbot/data/pubeval_weights.json``, whose ``source`` and ``inputs`` fields say where they come from and how a
position is encoded. Its move choice agrees with ``gnubg_nn.pub_best_move`` (tests/test_pubeval.py).

Pubeval scores the position *after* a play from the side that made it. Our move generator returns afterstates already
flipped (the opponent on roll), so :func:`features` flips them back first. Which weight set applies depends on the
position *before* the play: the race weights when it has no contact, the contact weights otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bgbot.evaluation.encoding import is_race
from bgbot.evaluation.selection import _segments, segment_argmax
from bgbot.rules.board import BAR, NUM_CHECKERS, OPP_BAR, flip

WEIGHTS_PATH = Path(__file__).parent.parent / "data" / "pubeval_weights.json"
N_FEATURES = 122

_DATA = json.loads(WEIGHTS_PATH.read_text())
WEIGHTS_CONTACT = np.asarray(_DATA["weights_contact"], dtype=np.float64)  # (122,)
WEIGHTS_RACE = np.asarray(_DATA["weights_race"], dtype=np.float64)  # (122,)
WEIGHTS_CONTACT.setflags(write=False)
WEIGHTS_RACE.setflags(write=False)


def features(afterstates: np.ndarray) -> np.ndarray:
    """Pubeval's 122 inputs, ``(M, 26)`` int8 afterstates (opponent on roll) -> ``(M, 122)`` float64.

    Seen from the mover (the afterstate flipped back): for point p = 24 .. 1 the five units ``5*(24-p) ..`` are
    [n == -1, n == 1, n >= 2, n == 3, (n-3)/2 if n >= 4] with n the signed count on the mover's point p; unit 120 is
    opponent checkers on the bar / 2, unit 121 the mover's checkers borne off / 15. The mover's own bar is not an input
    (Tesauro's ``setx`` ignores it).
    """
    mover = flip(np.asarray(afterstates)).astype(np.int16)  # (M, 26), mover on "roll"
    n = mover[:, 24:0:-1]  # (M, 24) points 24 .. 1
    units = np.stack([n == -1, n == 1, n >= 2, n == 3, np.where(n >= 4, (n - 3) / 2.0, 0.0)], axis=-1).astype(
        np.float64
    )  # (M, 24, 5)
    x = np.empty((len(mover), N_FEATURES), dtype=np.float64)
    x[:, :120] = units.reshape(len(mover), 120)
    x[:, 120] = -mover[:, OPP_BAR] / 2.0
    x[:, 121] = (NUM_CHECKERS - np.maximum(mover[:, 1 : BAR + 1], 0).sum(axis=-1)) / 15.0
    return x


def scores(afterstates: np.ndarray, race: np.ndarray) -> np.ndarray:
    """Pubeval's score of each afterstate for the side that just moved, ``(M, 26)`` int8 -> ``(M,)`` float64.

    ``race`` ``(M,)`` bool says, per row, whether the position *before* the play had no contact (race weights).
    A play that bears off the mover's last checker scores ``+inf``. Higher is better for the mover.
    """
    x = features(afterstates)
    race = np.asarray(race, dtype=bool)
    s = np.where(race, x @ WEIGHTS_RACE, x @ WEIGHTS_CONTACT)
    return np.where(x[:, 121] == 1.0, np.inf, s)


def choose(afterstates: np.ndarray, parent: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
    """Pubeval's play for each parent: ``(M, 26)`` int8, ``(M,)`` int64 -> ``(N,)`` int64 row indices into afterstates.

    ``positions`` ``(N, 26)`` int8 are the parents (side on roll) and decide race vs contact weights exactly as
    Tesauro's program does. Without them a parent counts as a race when all its afterstates are races -- which is wrong
    only when every legal play of a contact position breaks contact; pass ``positions`` where that matters.
    """
    parent = np.asarray(parent)
    if positions is not None:
        race_rows = is_race(positions)[parent]
    else:
        starts, seg_of_row = _segments(parent)
        race_rows = ~np.maximum.reduceat(~is_race(afterstates), starts)[seg_of_row]
    return segment_argmax(scores(afterstates, race_rows), parent)
