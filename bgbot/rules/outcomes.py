"""Outcome probabilities and their arithmetic: the five cumulative probabilities ``(w, wg, wbg, lg, lbg)`` of a side
(GNU Backgammon's convention: ``w`` includes gammons and backgammons, ``wg`` includes backgammons), seen from the
other side, as cubeless money equity, and validated.
"""

from __future__ import annotations

import numpy as np

from bgbot.errors import BgbotError
from bgbot.rules import board

_FLIP = [0, 3, 4, 1, 2]


def flip_probabilities(p):
    """The same outcome seen by the other side: ``(..., 5)`` -> ``(..., 5)`` (numpy or torch), a new array.

    ``(w, wg, wbg, lg, lbg) -> (1 - w, lg, lbg, wg, wbg)``.
    """
    q = p[..., _FLIP]
    q[..., 0] = 1 - q[..., 0]
    return q


def equity(p):
    """Cubeless money equity ``2w - 1 + wg - lg + wbg - lbg``: ``(..., 5)`` -> ``(...)`` (numpy or torch), in points."""
    return 2 * p[..., 0] - 1 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


class ProbabilityError(BgbotError):
    """Probabilities outside [0, 1] or inconsistent (a gammon chance above the win chance, ...)."""


def check_probabilities(probabilities, backgammons: bool = True, repair: bool = False) -> np.ndarray:
    """Validate cumulative probabilities and return them ``(N, 5)`` float64 (a single row becomes N = 1).

    With ``backgammons`` False backgammons count as gammons: the backgammon columns are zeroed. With ``repair``
    (a network's outputs during play, where float32 rounding may break consistency by a little) finite values are
    made consistent instead of refused: clipped to [0, 1], then ``wbg <= wg <= w`` and ``lbg <= lg <= 1 - w`` enforced
    by lowering the gammon and backgammon chances.

    Raises:
        ProbabilityError: wrong shape, a value that is not finite, and (without ``repair``) a value outside [0, 1],
            or wbg > wg > w, lbg > lg > 1 - w broken (1e-6 slack for float32 rounding).
    """
    p = np.array(probabilities, dtype=np.float64)
    if p.ndim == 1:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 5:
        raise ProbabilityError(f"probabilities are (w, wg, wbg, lg, lbg) rows, got shape {p.shape}: {probabilities!r}")
    if not np.all(np.isfinite(p)):
        bad = int(np.flatnonzero(~np.isfinite(p).all(axis=1))[0])
        raise ProbabilityError(
            f"probabilities must be finite numbers, row {bad} is {p[bad].tolist()} (a damaged model?)"
        )
    if repair:
        p = np.clip(p, 0.0, 1.0)
        p[:, 1] = np.minimum(p[:, 1], p[:, 0])
        p[:, 2] = np.minimum(p[:, 2], p[:, 1])
        p[:, 3] = np.minimum(p[:, 3], 1.0 - p[:, 0])
        p[:, 4] = np.minimum(p[:, 4], p[:, 3])
    tol = 1e-6
    if np.any(p < -tol) or np.any(p > 1 + tol):
        raise ProbabilityError(f"probabilities must lie in [0, 1]: {probabilities!r}")
    w, wg, wbg, lg, lbg = p.T
    if np.any(wg > w + tol) or np.any(wbg > wg + tol) or np.any(lg > 1 - w + tol) or np.any(lbg > lg + tol):
        raise ProbabilityError(
            f"inconsistent probabilities (need wbg <= wg <= w and lbg <= lg <= 1 - w): {probabilities!r}"
        )
    p = np.clip(p, 0.0, 1.0)
    if not backgammons:
        p[:, 2] = 0.0
        p[:, 4] = 0.0
    return p


def possible_outcomes(positions: np.ndarray, ext: board.Extremes | None = None) -> np.ndarray:
    """Which of the five outcomes can still happen, for the side on roll: ``(M, 26)`` int8 -> ``(M, 5)`` bool.

    Columns follow ``(w, wg, wbg, lg, lbg)``. The rules (exact, from the rules of the game; a side's borne-off checkers
    never come back, and without contact no checker can be hit):

    * ``w`` and ``1 - w`` are always possible while the game goes on (column 0 is True).
    * A side wins a gammon only while the loser has no checker off: ``wg`` needs the opponent's off count 0, ``lg``
      needs mine 0.
    * A backgammon also needs a loser's checker on its bar or in the winner's home board at the end: ``wbg`` is
      possible only while ``wg`` is and either some opponent checker is on its bar or on my points 1..6, or there is
      still contact (a checker of the opponent can still be hit and sent back); ``lbg`` the same way round.

    "Contact": my farthest-back checker is behind the opponent's farthest-back one (gnubg ``ClassifyPosition``'s test).
    ``ext``: the positions' :func:`bgbot.rules.board.extremes` when the caller has them already.
    """
    p = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    e = board.extremes(p) if ext is None else ext
    my_off, their_off = board.NUM_CHECKERS - e.n_mine, board.NUM_CHECKERS - e.n_theirs
    contact = (e.my_back > e.their_back) & (e.n_mine > 0) & (e.n_theirs > 0)
    their_in_my_home = (e.theirs_bits & 0x7F) != 0  # their bar (index 0) or my points 1..6
    mine_in_their_home = (e.mine_bits & (0x7F << 19)) != 0  # my bar (25) or their points 1..6
    out = np.ones((len(p), 5), dtype=bool)
    out[:, 1] = their_off == 0
    out[:, 2] = out[:, 1] & (their_in_my_home | contact)
    out[:, 3] = my_off == 0
    out[:, 4] = out[:, 3] & (mine_in_their_home | contact)
    return out


def constrain_probabilities(probabilities: np.ndarray, possible: np.ndarray) -> np.ndarray:
    """Zero the outcomes that can no longer happen and make the cumulative probabilities consistent.

    Args:
        probabilities: ``(M, 5)`` float cumulative ``(w, wg, wbg, lg, lbg)`` of the side on roll.
        possible: ``(M, 5)`` bool, :func:`possible_outcomes` of the same positions.

    Returns:
        ``(M, 5)`` of the input's dtype, a new array: impossible columns 0, every value clipped to [0, 1], and
        ``wbg <= wg <= w``, ``lbg <= lg <= 1 - w`` (a gammon chance above its win chance is cut down to it; a
        backgammon above its gammon the same).
    """
    p = np.where(possible, probabilities, 0).astype(np.asarray(probabilities).dtype)
    np.clip(p, 0, 1, out=p)
    np.minimum(p[:, 1], p[:, 0], out=p[:, 1])
    np.minimum(p[:, 2], p[:, 1], out=p[:, 2])
    np.minimum(p[:, 3], 1 - p[:, 0], out=p[:, 3])
    np.minimum(p[:, 4], p[:, 3], out=p[:, 4])
    return p


def terminal_probabilities(result: np.ndarray) -> np.ndarray:
    """Exact probabilities of finished games for the side on roll: ``(M,)`` int8 results -> ``(M, 5)`` float32.

    ``result`` is :func:`bgbot.rules.board.game_result`: +1/+2/+3 the side on roll has won a single game / gammon /
    backgammon, -1/-2/-3 it has lost one; 0 is not a finished game (and gets zeros: callers mask those rows).
    """
    r = np.asarray(result)
    out = np.zeros((len(r), 5), dtype=np.float32)
    out[:, 0] = r > 0
    out[:, 1] = r >= 2
    out[:, 2] = r >= 3
    out[:, 3] = r <= -2
    out[:, 4] = r <= -3
    return out
