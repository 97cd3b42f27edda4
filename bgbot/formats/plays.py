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
from bgbot.rules import board, movegen, movegen_scalar

__all__ = ["LegalPlay", "legal_plays", "as_position"]


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
    out when ``position`` is text that carries dice; see :func:`as_context`).

    The set comes from :func:`bgbot.rules.movegen.generate_plays`; the notation from the scalar twin
    (:func:`bgbot.rules.movegen_scalar.legal_plays`, :func:`bgbot.formats.notation.format_play`), whose order the list keeps.
    With no legal play the list holds one entry, :func:`bgbot.formats.notation.format_no_play`.

    Raises:
        bgbot.formats.context.ContextError: bad position text or dice. bgbot.rules.board.PositionError: a bad position array.
    """
    ctx = as_context(position, dice)
    if ctx.dice is None:
        raise context.DiceSyntaxError(f"no dice given for {ctx.position_id!r}, and the position carries none")
    pos, (d1, d2) = ctx.position, ctx.dice
    after = movegen.generate_plays(pos[None, :], np.array([[d1, d2]])).afterstates  # (M, 26) int8, flipped
    scalar = movegen_scalar.legal_plays(pos, d1, d2)
    if not scalar:
        return [LegalPlay(notation.format_no_play(), positionid.encode(after[0]), after[0])]
    text = {bytes(board.flip(p.afterstate).astype(np.int8)): notation.format_play(pos, p) for p in scalar}
    keys = [bytes(a) for a in after]
    if set(keys) != set(text):
        raise AssertionError(f"movegen and movegen_scalar disagree on {positionid.encode(pos)} {d1}{d2}")
    rows = dict(zip(keys, after))
    return [LegalPlay(text[k], positionid.encode(rows[k]), rows[k]) for k in text]
