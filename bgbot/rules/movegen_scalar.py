"""The scalar reference move generator: slow, plain Python, written to be obviously correct.

Positions follow :mod:`bgbot.rules.board`: a ``(26,)`` int8 array from the side on roll, index 1..24 my points (positive
= my checkers, negative = the opponent's), index 25 my bar, index 0 the opponent's bar (stored negative).

:func:`legal_plays` lists every distinct resulting position once, NOT flipped (the mover is still "me"), together
with one representative sequence of checker steps. The vectorised twin is :mod:`bgbot.rules.movegen`; the rules are
``docs/RULES.md``.

How the search works (the same order as GNU Backgammon's ``GenerateMoves``, so the representative step sequence
kept for each resulting position is the one GNU Backgammon keeps -- the last one found):

* A non-double is searched twice, dice in the order given and then swapped. A double is played up to four times.
* At each step, a checker on the bar must enter; otherwise every source point is tried from 24 down to 1.
  For a double the next source may not be higher than the previous one: any legal sequence of equal dice can be
  reordered so the sources never rise (moving a higher checker first never makes a lower move illegal: blocks do not
  change, the bar empties first, and bearing off only gets easier), so this drops permutations, not plays.
* A sequence ends when no further die can be played; only sequences that play the most dice, and among those the
  most pips (this is the rule that the higher die must be played when only one can be), are legal.
"""

from __future__ import annotations

import numpy as np

from bgbot.rules.board import BAR, Play, move_checker, play_step, validate
from bgbot.rules.dice import DiceError

__all__ = ["DiceError", "Play", "legal_plays", "play_step"]


def _check_die(d) -> int:
    """One die as a Python int in 1..6, else :class:`DiceError`."""
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 6:
        raise DiceError(f"a die is an integer from 1 to 6, got {d!r}")
    return int(d)


def _search(board, dice, depth, max_src, steps, hits, found) -> None:
    """Extend the step sequence with ``dice[depth]``; record each sequence that cannot be extended."""
    moved = False
    if depth < len(dice):
        die = dice[depth]
        sources = [BAR] if board[BAR] > 0 else range(max_src, 0, -1)
        for src in sources:
            step = play_step(board, src, die)
            if step is None:
                continue
            to, hit = step
            moved = True
            nxt = src if dice[0] == dice[1] and src != BAR else 24
            _search(move_checker(board, src, to, hit), dice, depth + 1, nxt, steps + ((src, to),), hits + (hit,), found)
    if not moved:
        pips = sum(dice[:depth])
        found.append((depth, pips, steps, hits, board))


def legal_plays(position: np.ndarray, d1: int, d2: int) -> list[Play]:
    """Every legal play of ``d1``-``d2`` in ``position``, one per distinct resulting position.

    Args:
        position: ``(26,)`` integer array, the side on roll's view (see :mod:`bgbot.rules.board`).
        d1, d2: the dice, 1..6 each. The order only changes which step sequence represents a play.

    Returns:
        A list of :class:`Play` (afterstates NOT flipped), in the order first found; empty when no die can be
        played (the turn is forfeited).

    Raises:
        DiceError: a die outside 1..6.
        bgbot.rules.board.PositionError: an invalid position (see :func:`bgbot.rules.board.validate`).
    """
    d1, d2 = _check_die(d1), _check_die(d2)
    board = [int(x) for x in validate(position)]
    orders = [(d1, d1, d1, d1)] if d1 == d2 else [(d1, d2), (d2, d1)]
    found: list = []
    for dice in orders:
        _search(board, dice, 0, 24, (), (), found)
    best = max((n, pips) for n, pips, *_ in found)
    if best[0] == 0:
        return []
    plays: dict[tuple[int, ...], tuple] = {}
    for n, pips, steps, hits, after in found:
        if (n, pips) == best:
            plays[tuple(after)] = (steps, hits)  # keeps the first-found order, stores the last sequence found
    return [Play(steps, hits, np.array(key, dtype=np.int8)) for key, (steps, hits) in plays.items()]
