"""The cube and the match (or money session) as the rules define them, seen from the side on roll: plain, validated
data that the formats read and write, the cube layer decides on and the arena plays by. numpy-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bgbot.errors import BgbotError, is_int

Owner = Literal["centre", "me", "opponent"]


_OWNER_CODE = {"centre": 0, "me": 1, "opponent": -1}


MAX_MATCH_LENGTH = 64
"""The longest match at a score bgbot analyses: GNU Backgammon's MAXSCORE, the reach of its extended match equity
table (:func:`bgbot.cube.met.kazaross_xg2_extended`)."""


class CubeStateError(BgbotError):
    """A cube or match state that cannot occur (cube not a power of 2, score past the match length, ...)."""


@dataclass(frozen=True)
class CubeState:
    """The doubling cube: its value (1, 2, 4, ...) and owner seen from the side on roll."""

    value: int = 1
    owner: Owner = "centre"

    def __post_init__(self) -> None:
        if not is_int(self.value) or self.value < 1 or self.value & (self.value - 1):
            raise CubeStateError(f"cube value must be a power of 2, got {self.value!r}")
        object.__setattr__(self, "value", int(self.value))
        if self.owner not in _OWNER_CODE:
            raise CubeStateError(f"cube owner must be 'centre', 'me' or 'opponent', got {self.owner!r}")

    @property
    def owner_code(self) -> int:
        """0 centred, +1 the side on roll owns it, -1 the opponent does."""
        return _OWNER_CODE[self.owner]


@dataclass(frozen=True)
class MatchState:
    """Match or money session settings, seen from the side on roll.

    Attributes:
        length: match length in points; 0 = money play.
        score: (side on roll, opponent) points so far.
        crawford: this game is the Crawford game (no doubling).
        jacoby: money only; gammons count single while the cube is centred.
        backgammons: backgammons count triple (False: as gammons).
        automatic_doubles: money only; how many automatic doubles a game may have (0 = off). Bookkeeping for the
            game loop; the cube decision itself only sees the cube value.
        beavers: money only; the taker of a double may beaver (redouble at once, keeping the cube). bgbot's own rules
            have none (False); an XGID's beaver bit sets it.
        max_cube: the largest cube value the session allows (XG's maximum cube), None for no limit: no double past it.
    """

    length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = True
    backgammons: bool = True
    automatic_doubles: int = 0
    beavers: bool = False
    max_cube: int | None = None

    def __post_init__(self) -> None:
        if (
            not is_int(self.length)
            or not is_int(self.automatic_doubles)
            or self.automatic_doubles < 0
            or not isinstance(self.score, (tuple, list))
            or len(self.score) != 2
            or not all(is_int(s) for s in self.score)
        ):
            raise CubeStateError(
                f"match length, automatic doubles and the two scores are integers >= 0, got {self.length!r}, "
                f"{self.automatic_doubles!r}, {self.score!r}"
            )
        object.__setattr__(self, "score", (int(self.score[0]), int(self.score[1])))
        object.__setattr__(self, "length", int(self.length))
        if self.max_cube is not None and (self.max_cube < 1 or self.max_cube & (self.max_cube - 1)):
            raise CubeStateError(f"the maximum cube must be a power of 2, got {self.max_cube!r}")
        if self.beavers and self.length:
            raise CubeStateError("beavers are a money-play rule; this is a match")
        if self.length < 0 or min(self.score) < 0:
            raise CubeStateError(f"match length and scores must be >= 0, got {self.length!r}, {self.score!r}")
        if self.length > MAX_MATCH_LENGTH:
            raise CubeStateError(
                f"a {self.length}-point match is longer than the {MAX_MATCH_LENGTH} points bgbot's match equity "
                "table covers (GNU Backgammon's limit too)"
            )
        if self.length and max(self.score) >= self.length:
            raise CubeStateError(f"score {self.score!r} has already won a {self.length}-point match")
        if self.crawford and (not self.length or self.length - 1 not in self.score):
            raise CubeStateError(f"a Crawford game needs a side at {self.length}-1 points, got score {self.score!r}")

    @property
    def is_money(self) -> bool:
        """True for money play (length 0)."""
        return self.length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points still needed by (side on roll, opponent); match play only."""
        return self.length - self.score[0], self.length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        """A game after the Crawford game: a side is 1-away and this is not the Crawford game."""
        return bool(self.length) and not self.crawford and self.length - 1 in self.score


def check_cube(cube: CubeState, match: MatchState) -> None:
    """Refuse a cube that cannot occur in ``match``.

    The rule (bgbot's, built on GNU Backgammon's doubling rule, ``GetDPEq`` in eval.c: in match play a side may double
    only while the cube it would turn does not already win it the match, i.e. its away > the cube value):

    * money play: any power of 2, also centred above 1 (automatic doubles make one; GNU Backgammon writes such IDs);
    * match play: a cube above 1 is owned (no automatic doubles in a match), never in the Crawford game, and the side
      that turned it (the owner's opponent) needed more than half of it: value < 2 x that side's away. So a 1-point
      match has cube 1 only, and a 3-point match at 0-0 a cube of at most 4;
    * a cube above :attr:`MatchState.max_cube`.

    Raises:
        CubeStateError: naming the state and the rule it breaks.
    """
    if match.max_cube is not None and cube.value > match.max_cube:
        raise CubeStateError(f"cube {cube.value} is above the maximum cube {match.max_cube}")
    if match.is_money or cube.value == 1:
        return
    if match.crawford:
        raise CubeStateError(f"cube {cube.value} in the Crawford game, where nobody may double")
    if cube.owner == "centre":
        raise CubeStateError(f"a centred cube of {cube.value} in match play (automatic doubles are money only)")
    doubler_away = match.away[1] if cube.owner == "me" else match.away[0]
    if cube.value >= 2 * doubler_away:
        raise CubeStateError(
            f"cube {cube.value} cannot occur at {match.away[0]}-away, {match.away[1]}-away in a {match.length}-point "
            f"match: the doubler, {doubler_away}-away, could turn the cube only to less than {2 * doubler_away}"
        )


def may_double(cube: CubeState, match: MatchState) -> bool:
    """The side on roll may double now (gnubg GetDPEq): cube centred or mine; in match play also not the Crawford
    game and the current cube does not already win me the match (which also bars the post-Crawford leader); never
    past the session's maximum cube (:attr:`MatchState.max_cube`, XG's setting)."""
    if cube.owner == "opponent":
        return False
    if match.max_cube is not None and 2 * cube.value > match.max_cube:
        return False
    if match.is_money:
        return True
    return not match.crawford and match.away[0] > cube.value
