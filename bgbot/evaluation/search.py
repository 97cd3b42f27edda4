"""N-ply lookahead over a position evaluator: expectimax over the 21 rolls, with GNU Backgammon-style move filtering.

Definitions (GNU Backgammon's, cubeless):

* **0-ply** value of an afterstate ``A`` (opponent on roll): the evaluator's probabilities of ``A``, flipped to the side
  that moved (:func:`bgbot.evaluation.evaluator.afterstate_probabilities`).
* **k-ply** value of ``A``: for each of the 21 rolls ``r`` (weighted 1/36 or 2/36), the opponent picks its best reply
  ``R(A, r)`` by its own 0-ply equity, and ``R`` is valued at (k-1)-ply from the opponent's side; the weighted mean
  is flipped back to the side that moved into ``A``. A finished game is valued exactly at every ply.

All of it is batched: the replies of many afterstates × 21 rolls come from one :func:`bgbot.rules.movegen.generate_all_rolls`
call and one evaluator call, in chunks that bound memory.

**Move filtering** (as GNU Backgammon's ``movefilter``: at 0-ply keep up to 8 candidates within 0.16 equity of the
best, then search only those): a choice at ``plies >= 1`` ranks every legal play at 0-ply and searches the
:data:`FILTER_KEEP` best within :data:`FILTER_WINDOW` equity of the best.
"""

from __future__ import annotations

import numpy as np

from bgbot.errors import BgbotError, is_int
from bgbot.evaluation.evaluator import PositionEvaluator, afterstate_probabilities
from bgbot.evaluation.selection import segment_argmax
from bgbot.rules.board import game_result
from bgbot.rules.movegen import ROLL_WEIGHTS, Plays, generate_all_rolls, generate_plays
from bgbot.rules.outcomes import equity, flip_probabilities, terminal_probabilities

FILTER_KEEP = 8
"""Candidates searched at ``plies >= 1`` (GNU Backgammon's default move filter keeps up to 8 ...)."""
FILTER_WINDOW = 0.16
"""... within this cubeless equity of the 0-ply best."""
CHUNK_ROWS = 4096
"""Afterstates expanded at once (each becomes 21 rolls × ~20 replies: about 2M positions per chunk)."""


MAX_PLIES = 2
"""The deepest lookahead served: 3-ply costs about 20 times 2-ply (seconds a move), too slow to be of use here."""


class SearchError(BgbotError):
    """A search request that cannot be served (a ply not in 0 .. MAX_PLIES)."""


def check_ply(ply: object) -> int:
    """The one check of a search depth, for every caller (the search, rollouts' settings, the command line's ``--ply``,
    the HTTP API): ``ply`` a whole number (Python's or numpy's, not a bool) in 0 .. :data:`MAX_PLIES`.

    Returns:
        ``ply`` as an int.

    Raises:
        SearchError: (a ``ValueError``) ``"ply must be a whole number 0 .. 2 (the search depth), got 3"``.

    >>> check_ply(3)
    Traceback (most recent call last):
    ...
    bgbot.evaluation.search.SearchError: ply must be a whole number 0 .. 2 (the search depth), got 3
    """
    if not is_int(ply) or not 0 <= ply <= MAX_PLIES:  # type: ignore[operator]
        raise SearchError(f"ply must be a whole number 0 .. {MAX_PLIES} (the search depth), got {ply!r}")
    return int(ply)  # type: ignore[call-overload]


def afterstate_values(evaluator: PositionEvaluator, afterstates: np.ndarray, plies: int) -> np.ndarray:
    """k-ply probabilities of afterstates for the side that moved into them.

    Args:
        evaluator: a :class:`bgbot.evaluation.evaluator.PositionEvaluator`.
        afterstates: ``(M, 26)`` int8, opponent on roll (as :func:`bgbot.rules.movegen.generate_plays` returns them).
        plies: lookahead depth, 0 = the evaluator itself.

    Returns:
        ``(M, 5)`` float32 cumulative probabilities (win, wg, wbg, lg, lbg) of the side that moved.

    Raises:
        SearchError: ``plies`` < 0.
    """
    plies = check_ply(plies)
    afterstates = np.asarray(afterstates, dtype=np.int8)
    if plies == 0:
        return afterstate_probabilities(evaluator, afterstates)
    # A finished game is valued exactly at every ply: its result, no evaluator call (the 0-ply values of the other rows
    # would only be overwritten below).
    result = game_result(afterstates)
    out = flip_probabilities(terminal_probabilities(result))  # (M, 5), the side that moved
    live = np.flatnonzero(result == 0)
    for start in range(0, len(live), CHUNK_ROWS):
        rows = live[start : start + CHUNK_ROWS]
        out[rows] = _expand(evaluator, afterstates[rows], plies)
    return out


_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5], dtype=np.uint64)


def _row_words(positions: np.ndarray) -> np.ndarray:
    """``(M, 26)`` int8 -> ``(M, 4)`` uint64: each row's 26 bytes, zero-padded to 32, read as four words (one copy;
    equal words mean equal positions)."""
    buf = np.zeros((len(positions), 32), dtype=np.uint8)
    buf[:, :26] = np.ascontiguousarray(positions, dtype=np.int8).view(np.uint8)
    return buf.view(np.uint64)


def _distinct(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``positions`` ``(M, 26)`` int8: ``(first, inverse)``, ``first`` ``(U,)`` int64 the row of each
    distinct position, ``inverse`` ``(M,)`` int64 with ``positions == positions[first][inverse]``.

    Exact: each row's bytes are read as four 64-bit words (:func:`_row_words`), rows are sorted by a 64-bit mix of
    them, and rows with equal mixes are confirmed equal word by word (on a mix collision of different positions, an
    exact ``np.unique`` over the words is used instead).
    """
    m = len(positions)
    words = _row_words(positions)  # (M, 4) uint64
    with np.errstate(over="ignore"):  # a multiply-xorshift mix of the words (splitmix64's finaliser per step)
        mix = np.zeros(m, dtype=np.uint64)
        for j in range(4):
            mix += words[:, j]
            mix *= _MIX[j]
            mix ^= mix >> np.uint64(31)
    order = np.argsort(mix)
    sorted_mix = mix[order]
    new = np.empty(m, dtype=bool)
    new[:1] = True
    np.not_equal(sorted_mix[1:], sorted_mix[:-1], out=new[1:])
    same = np.flatnonzero(~new[1:])
    if len(same) and (words[order[same + 1]] != words[order[same]]).any():  # a collision: do it exactly
        _, first, inverse = np.unique(words, axis=0, return_index=True, return_inverse=True)
        return first.astype(np.int64), inverse.reshape(-1).astype(np.int64)
    inverse = np.empty(m, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def _expand(evaluator: PositionEvaluator, afterstates: np.ndarray, plies: int) -> np.ndarray:
    """k-ply values ``(K, 5)`` of unfinished afterstates ``(K, 26)`` (opponent on roll), ``plies >= 1``."""
    first, inverse = _distinct(afterstates)
    if len(first) < len(afterstates):  # the same afterstate reached twice: expand it once
        return _expand(evaluator, afterstates[first], plies)[inverse]
    k = len(afterstates)
    replies, _ = generate_all_rolls(afterstates)  # parents: row i * 21 + j = afterstate i, roll j
    # each distinct reply evaluated once (deep in a search many are reached by several paths: transpositions); only
    # the equities are spread back to every reply, the probabilities read where chosen
    first, inverse = _distinct(replies.afterstates)
    merged = len(first) < len(replies)
    reply_probs = afterstate_probabilities(evaluator, replies.afterstates[first] if merged else replies.afterstates)
    reply_eq = equity(reply_probs)  # (U,) the opponent's side
    best = segment_argmax(reply_eq[inverse] if merged else reply_eq, replies.parent)  # (K * 21,) reply rows
    if plies == 1:
        chosen = reply_probs[inverse[best] if merged else best]
    else:
        chosen = afterstate_values(evaluator, replies.afterstates[best], plies - 1)
    mine = flip_probabilities(chosen).reshape(k, len(ROLL_WEIGHTS), 5)  # (K, 21, 5) back to our side
    return np.einsum("krf,r->kf", mine, ROLL_WEIGHTS).astype(np.float32)


def filter_candidates(
    equities: np.ndarray, parent: np.ndarray, keep: int = FILTER_KEEP, window: float = FILTER_WINDOW
) -> np.ndarray:
    """Rows that survive the move filter: per parent, the ``keep`` best within ``window`` of the best.

    ``equities`` ``(M,)`` float, ``parent`` ``(M,)`` int64 sorted -> ``(M,)`` bool. The best row of each parent
    always survives (ties keep the first rows).
    """
    m = len(parent)
    order = np.lexsort((np.arange(m), -equities, parent))  # by parent, then equity descending
    first = np.r_[True, parent[order][1:] != parent[order][:-1]]
    starts = np.flatnonzero(first)
    seg = np.cumsum(first) - 1
    rank = np.arange(m) - starts[seg]  # (M,) rank within the parent, 0 = best
    best = equities[order][starts][seg]
    keep_sorted = (rank < keep) & (equities[order] >= best - window)
    out = np.zeros(m, dtype=bool)
    out[order] = keep_sorted
    return out


def choose(
    evaluator: PositionEvaluator, positions: np.ndarray, dice: np.ndarray, plies: int
) -> tuple[Plays, np.ndarray]:
    """The best play of each position at ``plies`` lookahead, after move filtering.

    Args:
        positions: ``(N, 26)`` int8, side on roll; ``dice`` ``(N, 2)`` ints 1..6; ``plies`` >= 0.

    Returns:
        ``(plays, chosen)``: all legal plays and ``(N,)`` int64 rows of ``plays.afterstates``.
    """
    plays, probs, searched = ranked_values(evaluator, positions, dice, plies)
    eq = np.where(searched, equity(probs), -np.inf)
    return plays, segment_argmax(eq, plays.parent)


def ranked_values(
    evaluator: PositionEvaluator, positions: np.ndarray, dice: np.ndarray, plies: int
) -> tuple[Plays, np.ndarray, np.ndarray]:
    """All legal plays of ``positions`` ``(N, 26)`` with ``dice`` ``(N, 2)``, their probabilities for the mover
    ``(M, 5)`` float32 (the move filter's candidates at ``plies``, the others at 0-ply) and the searched mask ``(M,)``
    bool. Checker play at a match score ranks these by :func:`bgbot.cube.decision.play_values`."""
    plies = check_ply(plies)
    plays = generate_plays(np.asarray(positions, dtype=np.int8), dice)
    probs = afterstate_probabilities(evaluator, plays.afterstates)
    searched = np.ones(len(plays), dtype=bool)
    if plies > 0:
        searched = filter_candidates(equity(probs), plays.parent)
        probs[searched] = afterstate_values(evaluator, plays.afterstates[searched], plies)
    return plays, probs, searched
