"""What the command line's POSITION and DICE arguments say: the position, the dice, the cube and the match.

Public API::

    Context(position, dice=None, cube=CubeState(), match=MatchState(), source="")   # frozen
        .position_id -> str;  .with_dice(dice) -> Context;  .with_jacoby(on) -> Context;  .with_backgammons(on)
    parse_position(text) -> Context      # "4HPwATDgc/ABMA", "4HPwATDgc/ABMA:cAkAAAAAAAAA", "XGID=..."
    parse_dice(text) -> (d1, d2)         # "31", "3-1", "3 1", "3,1", or a pair of ints
    resolve(position_text, dice_text=None) -> Context                  # both together, checked against each other
    double_pending(position_text) -> DoublePendingError                # no roll to play while a double awaits
    ContextError(ValueError): PositionSyntaxError, DiceSyntaxError, DiceMismatchError

POSITION is one of

* a 14-character GNU Backgammon Position ID: money play, cube centred at 1, Jacoby rule on (GNU Backgammon's and
  XG's defaults), no dice;
* ``PositionID:MatchID``, what GNU Backgammon shows as "GNUbg ID". The Position ID is written from the view of the
  player on roll, the Match ID's ``on_roll`` field (the owner of the dice), also while a double or a resignation
  awaits the other player's answer (the Match ID's ``turn`` field): checked with ``gnubg -t -q``, where doubling
  leaves the Position ID unchanged and sets only ``turn`` and ``double_offered``. Cube, score, match length,
  Crawford, Jacoby and dice (if rolled) come from the Match ID, seen from the player on roll;
* ``XGID=...``: position, cube, turn, dice, score, match length, Crawford/Jacoby, as :mod:`bgbot.formats.xgid` reads them.

Positions use :mod:`bgbot.rules.board`'s ``(26,)`` int8 layout from the side on roll (index 25 = my bar, index 0 = the
opponent's bar).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import numpy as np

from bgbot.formats import positionid
from bgbot.formats.matchid import MatchID, MatchIDError
from bgbot.formats.xgid import XGID, XGIDError
from bgbot.rules import board
from bgbot.rules.state import CubeState, CubeStateError, MatchState, check_cube, may_double

__all__ = [
    "Context",
    "ContextError",
    "PositionSyntaxError",
    "DiceSyntaxError",
    "DiceMismatchError",
    "parse_position",
    "parse_dice",
    "resolve",
    "double_pending",
]
from bgbot.errors import BgbotError, is_int

_DICE_RE = re.compile(r"\s*(\d)\s*[-, ]?\s*(\d)\s*", re.ASCII)  # ASCII digits only


class ContextError(BgbotError):
    """A POSITION or DICE argument that cannot be used."""


class GameOverError(ContextError):
    """A position whose game is already over (a side has borne off all its checkers): nothing to play or double."""


class NotAnalysableError(ContextError):
    """A valid state with nothing to analyse: no game in progress, or a resignation that awaits an answer."""


class DoublePendingError(ContextError):
    """A checker play asked for while a double awaits an answer (there is no roll to play yet)."""


def double_pending(position_text: str) -> DoublePendingError:
    """The error of a checker play asked for in ``position_text`` while a double awaits an answer (the CLI's and the
    server's message)."""
    return DoublePendingError(
        f"a double awaits an answer in {position_text!r}: there is no roll to play yet "
        "(ask 'bgbot cube' for the take/pass decision)"
    )


class PositionSyntaxError(ContextError):
    """Text that is neither a Position ID, a ``PositionID:MatchID`` nor an ``XGID=...``, or one with bad fields."""


class DiceSyntaxError(ContextError):
    """Text that is not a roll of two dice 1..6 (``31``, ``3-1``, ``3 1``)."""


class DiceMismatchError(ContextError):
    """DICE given on the command line differ from the dice the position's Match ID or XGID carries."""


@dataclass(frozen=True, eq=False)
class Context:
    """A position with everything a request needs to know about the game it is in.

    Attributes:
        position: ``(26,)`` int8, read-only, from the side on roll (see :mod:`bgbot.rules.board`).
        dice: the roll ``(d1, d2)`` of the side on roll, or None when not rolled (cube decisions).
        cube: the cube, seen from the side on roll.
        match: the match or money session, seen from the side on roll.
        source: the text it was parsed from ("" when built in code).
        double_offered: the side on roll has doubled and the opponent must answer (take or pass); ``cube`` is the
            cube before the double. Then ``dice`` is None.

    Raises:
        CubeStateError: a cube that cannot occur in the match (:func:`bgbot.rules.state.check_cube`).
        ContextError: dice together with a pending double.
    """

    position: np.ndarray = field(repr=False)
    dice: tuple[int, int] | None = None
    cube: CubeState = CubeState()
    match: MatchState = MatchState()
    source: str = ""
    double_offered: bool = False

    def __post_init__(self) -> None:
        pos = board.validate(np.asarray(self.position)).copy()
        pos.setflags(write=False)
        object.__setattr__(self, "position", pos)
        if self.dice is not None:
            object.__setattr__(self, "dice", parse_dice(self.dice))
        check_cube(self.cube, self.match)
        if self.double_offered:
            if self.dice is not None:
                raise ContextError("dice rolled while a double awaits an answer: the doubler doubles before rolling")
            if not may_double(self.cube, self.match):
                raise ContextError(
                    f"a double awaits an answer, but the side on roll may not double here (cube {self.cube.value} "
                    f"{self.cube.owner}{', Crawford game' if self.match.crawford else ''})"
                )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Context):
            return NotImplemented
        return (
            bytes(self.position) == bytes(other.position)
            and self.dice == other.dice
            and self.cube == other.cube
            and self.match == other.match
        )

    def __hash__(self) -> int:
        return hash((bytes(self.position), self.dice, self.cube, self.match))

    def __repr__(self) -> str:
        return (
            f"Context(position_id={self.position_id!r}, dice={self.dice!r}, cube={self.cube!r}, match={self.match!r})"
        )

    @property
    def position_id(self) -> str:
        """The GNU Backgammon Position ID of :attr:`position` (side on roll)."""
        return positionid.encode(self.position)

    def with_dice(self, dice) -> Context:
        """This context with ``dice`` (text or a pair) as the roll.

        Raises:
            DiceSyntaxError: bad dice. DiceMismatchError: the context already carries a different roll (the order
                of the two dice does not matter; the context's own order is kept).
        """
        roll = parse_dice(dice)
        if self.dice is None:
            return dataclasses.replace(self, dice=roll)
        if sorted(roll) != sorted(self.dice):
            raise DiceMismatchError(
                f"dice {_text(dice)!r} differ from the dice {self.dice[0]}{self.dice[1]} "
                f"in position {self.source or self.position_id!r}"
            )
        return self

    def with_jacoby(self, on: bool) -> Context:
        """This context with the Jacoby rule ``on`` or off.

        Raises:
            ContextError: ``on`` for a match (the Jacoby rule is a money-play rule).
        """
        if on and not self.match.is_money:
            raise ContextError(
                f"the Jacoby rule applies to money play only; position "
                f"{self.source or self.position_id!r} is a {self.match.length}-point match"
            )
        return dataclasses.replace(self, match=dataclasses.replace(self.match, jacoby=bool(on)))

    def with_backgammons(self, on: bool) -> Context:
        """This context with backgammons counting triple (``on``) or as gammons (``--backgammon-value 2``)."""
        return dataclasses.replace(self, match=dataclasses.replace(self.match, backgammons=bool(on)))


def _text(dice) -> str:
    return dice if isinstance(dice, str) else repr(dice)


def parse_dice(dice) -> tuple[int, int]:
    """A roll as ``(d1, d2)`` in the order given.

    Args:
        dice: text ``"31"``, ``"3-1"``, ``"3 1"`` or ``"3,1"``, or a pair of integers.

    Raises:
        DiceSyntaxError: anything else, quoting the input; also a die outside 1..6 (``"71"``, ``"0-3"``).

    >>> parse_dice("3-1"), parse_dice("66"), parse_dice((5, 2))
    ((3, 1), (6, 6), (5, 2))
    >>> parse_dice("71")
    Traceback (most recent call last):
    ...
    bgbot.formats.context.DiceSyntaxError: impossible dice '71': each die is 1 to 6
    """
    if isinstance(dice, str):
        m = _DICE_RE.fullmatch(dice)
        if not m:
            raise DiceSyntaxError(f"not a roll of two dice: {dice!r} (write it like 31, 3-1 or '3 1')")
        values = (int(m.group(1)), int(m.group(2)))
    else:
        try:
            values = tuple(dice)
        except TypeError:
            raise DiceSyntaxError(f"not a roll of two dice: {dice!r}") from None
        if len(values) != 2 or not all(is_int(d) for d in values):
            raise DiceSyntaxError(f"not a roll of two dice: {dice!r}")
        values = (int(values[0]), int(values[1]))
    if not all(1 <= d <= 6 for d in values):
        raise DiceSyntaxError(f"impossible dice {_text(dice)!r}: each die is 1 to 6")
    return values


def parse_position(text: str) -> Context:
    """Parse a POSITION argument: a Position ID, ``PositionID:MatchID`` or ``XGID=...`` (see the module docstring).

    Raises:
        PositionSyntaxError: not one of the three forms, a malformed part, or an impossible state (a cube that cannot
            occur in the match, dice rolled with a double pending), quoting the input.
        GameOverError: a side has already borne off all its checkers, or the Match ID says the game is over
            (game state over, resigned or ended by a dropped double).
        NotAnalysableError: the Match ID says no game is in progress or a resignation awaits an answer; an XGID
            whose beaver or raccoon awaits an answer.

    >>> c = parse_position("4HPwATDgc/ABMA:cAkAAAAAAAAA")
    >>> c.position_id, c.dice, c.cube.owner, c.match.is_money
    ('4HPwATDgc/ABMA', None, 'centre', True)
    """
    if not isinstance(text, str):
        raise PositionSyntaxError(f"a position is given as text, got {text!r}")
    s = text.strip()
    try:
        if s[:5].upper() == "XGID=":
            ctx = _from_xgid(XGID.from_string(s), text)
        elif ":" in s:
            pid, _, mid = s.partition(":")
            ctx = _from_match_id(positionid.decode(pid), MatchID.from_string(mid), text)
        else:
            ctx = Context(positionid.decode(s), source=text)
    except (
        positionid.PositionIDError,
        MatchIDError,
        XGIDError,
        CubeStateError,
        board.PositionError,
    ) as err:
        raise PositionSyntaxError(
            f"not a position (Position ID, PositionID:MatchID or XGID=...): {text!r}: {err}"
        ) from None
    off = board.off_counts(ctx.position)
    if off.max() == board.NUM_CHECKERS:
        who = (
            "both sides have"
            if off.min() == board.NUM_CHECKERS
            else ("the side on roll has" if off[0] == board.NUM_CHECKERS else "the opponent has")
        )
        raise GameOverError(f"the game is over in {text!r}: {who} borne off all {board.NUM_CHECKERS} checkers")
    return ctx


_GAME_STATES = {
    0: "no game is in progress",
    2: "the game is over",
    3: "the game ended by a resignation",
    4: "the game ended by a dropped double",
}
_RESIGNATIONS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def _from_match_id(position: np.ndarray, mid: MatchID, text: str) -> Context:
    """The context of a GNUbg ID, refusing states with nothing to analyse (see :func:`parse_position`)."""
    if mid.game_state != 1:
        error = NotAnalysableError if mid.game_state == 0 else GameOverError
        raise error(f"nothing to analyse in {text!r}: the Match ID says {_GAME_STATES[mid.game_state]}")
    if mid.resignation:
        raise NotAnalysableError(
            f"nothing to analyse in {text!r}: a resignation ({_RESIGNATIONS[mid.resignation]}) awaits an answer"
        )
    if mid.double_offered and mid.dice != (0, 0):
        raise PositionSyntaxError(f"impossible Match ID state in {text!r}: dice rolled while a double awaits an answer")
    if mid.double_offered == (mid.turn == mid.on_roll):
        raise PositionSyntaxError(
            f"impossible Match ID state in {text!r}: the player to act ({mid.turn}) must differ from the player on "
            f"roll ({mid.on_roll}) exactly when a double or resignation awaits an answer"
        )
    cube, match = mid.to_states()
    dice = None if mid.dice == (0, 0) else mid.dice
    return Context(position, dice, cube, match, text, double_offered=mid.double_offered)


def _from_xgid(xgid: XGID, text: str) -> Context:
    """The context of an XGID: cube action "D" is a pending double; a beaver or raccoon awaiting an answer is refused."""
    if xgid.cube_action in ("B", "R"):
        raise NotAnalysableError(
            f"nothing to analyse in {text!r}: a {'beaver' if xgid.cube_action == 'B' else 'raccoon'} awaits an answer"
        )
    cube, match = xgid.to_states()
    return Context(xgid.on_roll_position(), xgid.dice, cube, match, text, double_offered=xgid.cube_action == "D")


def resolve(position_text: str, dice_text=None) -> Context:
    """POSITION and an optional DICE together: :func:`parse_position`, then :meth:`Context.with_dice`.

    Raises:
        PositionSyntaxError, DiceSyntaxError, DiceMismatchError: see those.
    """
    context = parse_position(position_text)
    return context if dice_text is None else context.with_dice(dice_text)


class ProbabilitiesSyntaxError(ContextError):
    """``--probabilities`` that are not five comma-separated numbers."""


def parse_probabilities(text: str) -> list[float]:
    """``"0.6,0.2,0.01,0.1,0.005"`` -> five floats (checked for consistency later by bgbot.cube.decision).

    Raises:
        ProbabilitiesSyntaxError: not five comma-separated numbers, or one of them not finite (``nan``, ``inf``).
    """
    try:
        values = [float(v) for v in text.replace(" ", "").split(",")]
    except ValueError:
        values = []
    if len(values) != 5:
        raise ProbabilitiesSyntaxError(
            f"--probabilities takes five comma-separated numbers W,WG,WBG,LG,LBG, got {text!r}"
        )
    if not np.isfinite(values).all():
        raise ProbabilitiesSyntaxError(f"--probabilities takes finite numbers from 0 to 1, got {text!r}")
    return values
