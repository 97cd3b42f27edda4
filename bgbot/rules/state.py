"""The cube and the match (or money session) as the rules define them, seen from the side on roll: plain, validated
data that the formats read and write, the cube layer decides on and the arena plays by. numpy-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bgbot.errors import BgbotError

Owner = Literal["centre", "me", "opponent"]


_OWNER_CODE = {"centre": 0, "me": 1, "opponent": -1}


class CubeStateError(BgbotError):
    """A cube or match state that cannot occur (cube not a power of 2, score past the match length, ...)."""


@dataclass(frozen=True)
class CubeState:
    """The doubling cube: its value (1, 2, 4, ...) and owner seen from the side on roll."""

    value: int = 1
    owner: Owner = "centre"

    def __post_init__(self) -> None:
        if self.value < 1 or self.value & (self.value - 1):
            raise CubeStateError(f"cube value must be a power of 2, got {self.value!r}")
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
    """

    length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = True
    backgammons: bool = True
    automatic_doubles: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", (int(self.score[0]), int(self.score[1])))
        if self.length < 0 or min(self.score) < 0:
            raise CubeStateError(f"match length and scores must be >= 0, got {self.length!r}, {self.score!r}")
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
