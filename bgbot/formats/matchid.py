"""GNU Backgammon's Match ID: 12 base64 characters holding the cube, turn, dice, match length and score.

Public API::

    MatchID(cube_value=1, cube_owner=None, on_roll=0, crawford=False, game_state=1, turn=None,
            double_offered=False, resignation=0, dice=(0, 0), length=0, score=(0, 0))   # frozen, hashable
    MatchID.from_string(text) -> MatchID        # raises MatchIDError
    MatchID.to_string() -> str
    MatchID.to_states(jacoby=True) -> (CubeState, MatchState)   # seen from the player on roll
    MatchID.from_states(cube, match, on_roll=0, dice=(0, 0)) -> MatchID
    MatchIDError(ValueError)

Layout (GNU Backgammon manual, "A technical description of the Match ID"): 66 bits, least significant bit of
each field first, packed into 9 bytes from the least significant bit of byte 0 on, then base64 (RFC 4648 alphabet,
no padding):

    bits  0-3  log2 of the cube value          bits 13-14  resignation offered (0 none, 1 single, 2 gammon, 3 bg)
    bits  4-5  cube owner (0, 1; 3 = centred)  bits 15-17  first die (0 = not rolled)
    bit   6    player on roll (dice owner)     bits 18-20  second die
    bit   7    Crawford game                   bits 21-35  match length (0 = money)
    bits  8-10 game state (0 none, 1 playing, 2 over, 3 resigned, 4 ended by a dropped cube)
    bit  11    turn (who must act now)         bits 36-50  player 0's score
    bit  12    double offered                  bits 51-65  player 1's score
                                               bit  66     1 = Jacoby rule off (gnubg 1.x)

Players are 0 and 1 as gnubg numbers them (in its text board player 0 is "O", player 1 is "X").

>>> MatchID.from_string("cAkAAAAAAAAE").on_roll
1
>>> MatchID.from_string("cAkAAAAAAAAE").to_string()
'cAkAAAAAAAAE'
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from bgbot.errors import BgbotError
from bgbot.rules.state import CubeState, MatchState, Owner

_FIELDS = (  # name, width in bits, in order from bit 0
    ("cube_log", 4),
    ("cube_owner", 2),
    ("on_roll", 1),
    ("crawford", 1),
    ("game_state", 3),
    ("turn", 1),
    ("double_offered", 1),
    ("resignation", 2),
    ("die1", 3),
    ("die2", 3),
    ("length", 15),
    ("score0", 15),
    ("score1", 15),
    ("no_jacoby", 1),
)
_CENTRED = 3
MAX_CUBE = 4096
"""The largest cube GNU Backgammon plays or reads in a Match ID (``MAX_CUBE``, backgammon.h: 2**12); the field's four
bits could hold 2**15."""


class MatchIDError(BgbotError):
    """A malformed Match ID string or field values that do not fit it."""


@dataclass(frozen=True)
class MatchID:
    """The fields of a GNU Backgammon Match ID.

    Attributes:
        cube_value: 1, 2, 4, ... (stored as its log2).
        cube_owner: 0 or 1, or None for a centred cube.
        on_roll: the player on roll (who owns the dice), 0 or 1.
        crawford: this is the Crawford game.
        game_state: 0 no game, 1 playing, 2 over, 3 resigned, 4 ended by a dropped double.
        turn: the player who must act now (differs from on_roll while a double or resignation awaits an answer);
            None means the same as on_roll.
        double_offered: a double awaits an answer.
        resignation: resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon.
        dice: (d1, d2), (0, 0) when not yet rolled.
        length: match length, 0 for money.
        score: (player 0, player 1).
        jacoby: the Jacoby rule is in force (gnubg writes "off" in match play).
    """

    cube_value: int = 1
    cube_owner: int | None = None
    on_roll: int = 0
    crawford: bool = False
    game_state: int = 1
    turn: int | None = None
    double_offered: bool = False
    resignation: int = 0
    dice: tuple[int, int] = (0, 0)
    length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = True

    def __post_init__(self) -> None:
        if self.turn is None:
            object.__setattr__(self, "turn", self.on_roll)
        object.__setattr__(self, "dice", tuple(int(d) for d in self.dice))
        object.__setattr__(self, "score", tuple(int(s) for s in self.score))
        v = self.cube_value
        if v < 1 or v & (v - 1) or v > MAX_CUBE:
            raise MatchIDError(f"cube value must be a power of 2 up to {MAX_CUBE} (GNU Backgammon's limit), got {v!r}")
        if self.cube_owner not in (None, 0, 1) or self.on_roll not in (0, 1) or self.turn not in (0, 1):
            raise MatchIDError(
                f"players are 0 or 1: owner {self.cube_owner!r}, on roll {self.on_roll!r}, turn {self.turn!r}"
            )
        if not 0 <= self.game_state <= 4 or not 0 <= self.resignation <= 3:
            raise MatchIDError(f"game state 0..4 and resignation 0..3, got {self.game_state!r}, {self.resignation!r}")
        if len(self.dice) != 2 or any(not 0 <= d <= 6 for d in self.dice) or (0 in self.dice and self.dice != (0, 0)):
            raise MatchIDError(f"dice are two values 1..6 or (0, 0), got {self.dice!r}")
        if not 0 <= self.length < 2**15 or len(self.score) != 2 or any(not 0 <= s < 2**15 for s in self.score):
            raise MatchIDError(f"length and scores must fit 15 bits, got {self.length!r}, {self.score!r}")

    def __repr__(self) -> str:
        return f"MatchID.from_string({self.to_string()!r})"

    @classmethod
    def from_string(cls, text: str) -> MatchID:
        """Decode a 12-character Match ID. Raises :class:`MatchIDError` quoting the text."""
        if not isinstance(text, str) or len(text.strip()) != 12:
            raise MatchIDError(f"a Match ID has 12 base64 characters, got {text!r}")
        try:
            raw = base64.b64decode(text.strip(), validate=True)
        except (binascii.Error, ValueError) as err:
            raise MatchIDError(f"not a Match ID (bad base64): {text!r}") from err
        bits = int.from_bytes(raw, "little")
        values = {}
        for name, width in _FIELDS:
            values[name] = bits & ((1 << width) - 1)
            bits >>= width
        if bits:
            raise MatchIDError(f"not a Match ID (bits set past bit 65): {text!r}")
        owner = values["cube_owner"]
        if owner == 2:
            raise MatchIDError(f"not a Match ID (cube owner field 2): {text!r}")
        try:
            return cls(
                cube_value=1 << values["cube_log"],
                cube_owner=None if owner == _CENTRED else owner,
                on_roll=values["on_roll"],
                crawford=bool(values["crawford"]),
                game_state=values["game_state"],
                turn=values["turn"],
                double_offered=bool(values["double_offered"]),
                resignation=values["resignation"],
                dice=(values["die1"], values["die2"]),
                length=values["length"],
                score=(values["score0"], values["score1"]),
                jacoby=not values["no_jacoby"],
            )
        except MatchIDError as err:
            raise MatchIDError(f"not a valid Match ID {text!r}: {err}") from err

    def to_string(self) -> str:
        """Encode as the 12-character Match ID."""
        values = {
            "cube_log": self.cube_value.bit_length() - 1,
            "cube_owner": _CENTRED if self.cube_owner is None else self.cube_owner,
            "on_roll": self.on_roll,
            "crawford": int(self.crawford),
            "game_state": self.game_state,
            "turn": self.on_roll if self.turn is None else self.turn,  # never None after __post_init__
            "double_offered": int(self.double_offered),
            "resignation": self.resignation,
            "die1": self.dice[0],
            "die2": self.dice[1],
            "length": self.length,
            "score0": self.score[0],
            "score1": self.score[1],
            "no_jacoby": int(not self.jacoby),
        }
        bits, shift = 0, 0
        for name, width in _FIELDS:
            bits |= values[name] << shift
            shift += width
        return base64.b64encode(bits.to_bytes(9, "little")).decode("ascii")

    def to_states(self) -> tuple[CubeState, MatchState]:
        """The cube and match state seen from the player on roll."""
        me = self.on_roll
        owner: Owner = "centre" if self.cube_owner is None else ("me" if self.cube_owner == me else "opponent")
        match = MatchState(
            length=self.length,
            score=(self.score[me], self.score[1 - me]),
            crawford=self.crawford,
            jacoby=self.jacoby and self.length == 0,
        )
        return CubeState(self.cube_value, owner), match

    @classmethod
    def from_states(
        cls, cube: CubeState, match: MatchState, on_roll: int = 0, dice: tuple[int, int] = (0, 0)
    ) -> MatchID:
        """A Match ID for a game in progress with ``on_roll`` (0 or 1) on roll, from states seen by that player."""
        owner = None if cube.owner == "centre" else (on_roll if cube.owner == "me" else 1 - on_roll)
        score = match.score if on_roll == 0 else (match.score[1], match.score[0])
        return cls(
            cube_value=cube.value,
            cube_owner=owner,
            on_roll=on_roll,
            crawford=match.crawford,
            dice=dice,
            length=match.length,
            score=score,
            jacoby=match.jacoby and match.is_money,
        )
