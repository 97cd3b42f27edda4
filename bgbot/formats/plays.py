"""Legal plays with their notation and resulting Position IDs: the part of :mod:`bgbot.api` that needs no model
(and no torch), so that ``bgbot moves`` starts fast.

Positions use :mod:`bgbot.rules.board`'s ``(26,)`` int8 layout from the side on roll (index 25 = my bar, index 0 = the
opponent's bar); a position argument may also be POSITION text (:func:`bgbot.formats.context.parse_position`).

>>> [p.play for p in legal_plays("4HPwATDgc/ABMA", "31")][:3]
['24/23 24/21', '24/20', '24/21 8/7']
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgbot.formats import context, notation, positionid
from bgbot.rules import board, movegen

__all__ = ["LegalPlay", "legal_plays", "name_plays", "as_position"]


@dataclass(frozen=True, eq=False)
class LegalPlay:
    """One legal play.

    Attributes:
        play: GNU Backgammon's notation (``"8/5 6/5"``; :data:`bgbot.formats.notation.NO_PLAY` when no play is legal).
        position_id: Position ID of the resulting position with the opponent on roll.
        afterstate: ``(26,)`` int8, the resulting position seen by the opponent (already flipped).
    """

    play: str
    position_id: str
    afterstate: np.ndarray = field(repr=False)

    def to_json(self) -> dict:
        """``{"play": ..., "position_id": ...}``."""
        return {"play": self.play, "position_id": self.position_id}


def as_position(position) -> np.ndarray:
    """A position argument (array or POSITION text) as ``(26,)`` int8."""
    return as_context(position).position


def as_context(position, dice=None) -> context.Context:
    """A position argument -- POSITION text (Position ID, GNUbg ID, XGID), a :class:`bgbot.formats.context.Context` or a
    ``(26,)`` array -- with optional dice, as a :class:`bgbot.formats.context.Context`: text keeps the cube, match and dice it
    carries, and ``dice`` that differ from the text's are an error (as on the command line).

    Raises:
        bgbot.formats.context.ContextError: bad text or dice, or dice that differ from the position's.
        bgbot.rules.board.PositionError: a bad position array.
    """
    if isinstance(position, str):
        ctx = context.parse_position(position)
    elif isinstance(position, context.Context):
        ctx = position
    else:
        ctx = context.Context(board.validate(np.asarray(position)))
    return ctx if dice is None else ctx.with_dice(dice)


def legal_plays(position, dice=None) -> list[LegalPlay]:
    """Every legal play of ``dice`` in ``position``, each distinct resulting position once (``dice`` may be left
    out when ``position`` is text that carries dice; see :func:`as_context`), in notation order.

    The set comes from :func:`bgbot.rules.movegen.generate_plays` (one call), the notation and its order from
    :func:`name_plays`. With no legal play the list holds one entry, :func:`bgbot.formats.notation.format_no_play`.

    Raises:
        bgbot.formats.context.ContextError: bad position text or dice. bgbot.rules.board.PositionError: a bad position array.
    """
    ctx = as_context(position, dice)
    if ctx.dice is None:
        raise context.DiceSyntaxError(f"no dice given for {ctx.position_id!r}, and the position carries none")
    found = movegen.generate_plays(ctx.position[None, :], np.array([ctx.dice]))
    texts, rank = name_plays(ctx.position[None, :], np.array([ctx.dice]), found)
    ids = positionid.encode_many(found.afterstates)
    return [LegalPlay(texts[i], ids[i], found.afterstates[i]) for i in np.argsort(rank)]


def name_plays(positions: np.ndarray, dice: np.ndarray, plays: movegen.Plays) -> tuple[list[str], np.ndarray]:
    """The notation of generated plays and their notation order.

    Args:
        positions: ``(N, 26)`` int8, side on roll; ``dice`` ``(N, 2)`` ints 1..6.
        plays: :func:`bgbot.rules.movegen.generate_plays` of them (afterstates flipped, ``parent`` ascending).

    Returns:
        ``(texts, rank)``: GNU Backgammon's notation of each play (``M`` strings) and ``rank`` ``(M,)`` int64, each
        play's place among its position's plays in notation order (0 = first). Notation order is the order in which
        GNU Backgammon's move search (``GenerateMoves``) first finds each resulting position: the dice as given, then
        swapped (a double: played up to four times, sources never rising), each step's source from the bar and
        24 down to 1; :func:`bgbot.formats.notation.play_sequence` finds that first sequence of each play.
    """
    texts: list[str] = []
    rank = np.zeros(len(plays), dtype=np.int64)
    starts = plays.offsets(len(positions))
    targets = np.negative(plays.afterstates[:, ::-1], dtype=np.int64).tolist()  # (M, 26) unflipped: the mover's view
    for i, (board_i, (d1, d2)) in enumerate(zip(np.asarray(positions).tolist(), np.asarray(dice).tolist())):
        keys = []
        for r in range(int(starts[i]), int(starts[i + 1])):
            key, steps = notation.play_sequence(board_i, targets[r], d1, d2)
            keys.append(key)
            texts.append(notation.format_steps(board_i, steps))
        order = sorted(range(len(keys)), key=keys.__getitem__)
        rank[int(starts[i]) + np.array(order, dtype=np.int64)] = np.arange(len(keys))
    return texts, rank
