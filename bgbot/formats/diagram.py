"""A text drawing of a position in GNU Backgammon's ASCII layout, with pip counts, the cube, the score and the dice.

Public API::

    draw(position, *, dice=None, cube=CubeState(), match=MatchState(), double_offered=False,
         names=("X", "O"), ids=None) -> str

The side on roll is X, drawn at the bottom and moving anticlockwise from its 24 point (top right) to its 1 point
(bottom right), as GNU Backgammon draws the player on roll in ``show board``; the opponent is O. Points are numbered
from X's side. Example (the starting position, X to play 3-1)::

     +13-14-15-16-17-18------19-20-21-22-23-24-+     O: O
     | X           O    |   | O              X |     pips 167, off 0
     | X           O    |   | O              X |
     | X           O    |   | O                |
     | X                |   | O                |
     | X                |   | O                |
     |                  |BAR|                  |     money play, Jacoby rule on
     | O                |   | X                |     cube 1, centred
     | O                |   | X                |
     | O           X    |   | X                |
     | O           X    |   | X              O |     pips 167, off 0
     | O           X    |   | X              O |     X on roll, dice 3-1
     +12-11-10--9--8--7-------6--5--4--3--2--1-+     X: X

A point or bar with more than five checkers shows five rows, the fifth (next to the middle) holding the count in
one character, as GNU Backgammon writes it: 6..9, then A (10) to F (15).
Checkers on the bar sit in the BAR column, O's in the top half and X's in the bottom half.
"""

from __future__ import annotations

import numpy as np

from bgbot.rules import board
from bgbot.rules.state import CubeState, MatchState

__all__ = ["draw"]

ROWS = 5
"""Checker rows drawn per half board."""
_TOP = (13, 14, 15, 16, 17, 18, None, 19, 20, 21, 22, 23, 24)  # None: the bar column
_BOTTOM = (12, 11, 10, 9, 8, 7, None, 6, 5, 4, 3, 2, 1)


def _stack(count: int, char: str) -> list[str]:
    """Cells (3 characters each) of one point from its edge towards the middle; the fifth holds the count past 5,
    one character as GNU Backgammon writes it (6..9, then A = 10 .. F = 15)."""
    cells = [f" {char} " if count > r else "   " for r in range(ROWS)]
    if count > ROWS:
        cells[-1] = f" {count:X} "
    return cells


def _half(position: np.ndarray, points: tuple, bar_count: int, bar_char: str) -> list[str]:
    """The rows of one half board from its edge to the middle."""
    columns = []
    for p in points:
        if p is None:
            columns.append(_stack(bar_count, bar_char))
        else:
            n = int(position[p])
            columns.append(_stack(abs(n), "X" if n > 0 else "O"))
    rows = []
    for r in range(ROWS):
        left = "".join(c[r] for c in columns[:6])
        right = "".join(c[r] for c in columns[7:])
        rows.append(f" |{left}|{columns[6][r]}|{right}|")
    return rows


def _describe(cube: CubeState, match: MatchState, double_offered: bool) -> tuple[str, str]:
    """Two lines on the game: the match or money session, and the cube."""
    if match.is_money:
        game = f"money play, Jacoby rule {'on' if match.jacoby else 'off'}" + (", beavers" if match.beavers else "")
    else:
        flag = ", Crawford game" if match.crawford else (", post-Crawford" if match.post_crawford else "")
        game = f"{match.length}-point match{flag}"
    owner = {"centre": "centred", "me": "owned by X", "opponent": "owned by O"}[cube.owner]
    line = f"cube {cube.value}, {owner}"
    if double_offered:
        line += f"; X doubles to {2 * cube.value}, O to answer"
    if match.max_cube is not None:
        line += f" (maximum {match.max_cube})"
    return game, line


def draw(
    position,
    *,
    dice: tuple[int, int] | None = None,
    cube: CubeState = CubeState(),
    match: MatchState = MatchState(),
    double_offered: bool = False,
    names: tuple[str, str] = ("X", "O"),
    ids: tuple[str, ...] | None = None,
) -> str:
    """Draw ``position`` as text, GNU Backgammon's ASCII board (see the module docstring), with the game around it.

    Args:
        position: ``(26,)`` int8 from the side on roll (:mod:`bgbot.rules.board`: index 25 X's bar, index 0 O's bar),
            any integer array of that shape.
        dice: the roll of the side on roll, or None when not rolled.
        cube, match: seen from the side on roll (X).
        double_offered: X has doubled and O must answer.
        names: what to call X (on roll, bottom) and O (top) in the side text.
        ids: lines to print above the board (e.g. ``("Position ID: ...", "Match ID   : ...")``), as gnubg does.

    Returns:
        The drawing, lines joined by ``"\\n"``, no trailing newline; 13 board lines plus ``ids``; pure ASCII unless
        ``names`` or ``ids`` are not.

    Raises:
        bgbot.rules.board.PositionError: not a valid position.
    """
    pos = board.validate(np.asarray(position))
    pips = board.pip_counts(pos)  # (2,) mine, theirs
    off = board.off_counts(pos)  # (2,)
    top = _half(pos, _TOP, -int(pos[board.OPP_BAR]), "O")
    bottom = _half(pos, _BOTTOM, int(pos[board.BAR]), "X")[::-1]
    game, cube_line = _describe(cube, match, double_offered)
    score = "" if match.is_money else ", score {}"
    o_side = f"pips {pips[1]}, off {off[1]}" + (score.format(match.score[1]) if score else "")
    x_side = f"pips {pips[0]}, off {off[0]}" + (score.format(match.score[0]) if score else "")
    roll = f"{names[0]} on roll" + (f", dice {dice[0]}-{dice[1]}" if dice is not None else ", dice not rolled")
    side = {0: f"O: {names[1]}", 1: o_side, 6: game, 7: cube_line, 10: x_side, 11: roll, 12: f"X: {names[0]}"}
    rows = [" +13-14-15-16-17-18------19-20-21-22-23-24-+", *top, " |                  |BAR|                  |"]
    rows += [*bottom, " +12-11-10--9--8--7-------6--5--4--3--2--1-+"]
    lines = list(ids or ())
    lines += [row + (f"     {side[i]}" if i in side else "") for i, row in enumerate(rows)]
    return "\n".join(lines)
