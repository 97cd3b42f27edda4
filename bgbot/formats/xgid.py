"""eXtreme Gammon's XGID: position, cube, turn, dice, score, match length, Crawford/Jacoby and maximum cube.

Public API::

    XGID(position, cube_value=1, cube_owner=0, turn=1, dice=None, cube_action="", score=(0, 0),
         crawford_jacoby=0, length=0, max_cube=1024)                                  # frozen
    XGID.from_string(text) -> XGID          # "XGID=" prefix optional; raises XGIDError
    XGID.to_string() -> str                 # with the "XGID=" prefix
    XGID.on_roll_position() -> (26,) int8   # bgbot layout, seen from the side on roll
    XGID.to_states() -> (CubeState, MatchState)            # seen from the side on roll
    XGID.from_states(position, cube, match, turn=1, dice=None) -> XGID
    XGIDError(ValueError)

Format: ``XGID=PPPPPPPPPPPPPPPPPPPPPPPPPP:C:O:T:D:S1:S2:J:M:X``, fields separated by colons.

* P, 26 characters, from the view of player X (XG's "bottom" player): character p (1..24) is X's point p,
  character 25 X's bar, character 0 O's bar; "-" empty, "A".."O" = 1..15 of X's checkers, "a".."o" = O's.
  This is bgbot's layout (bgbot/rules/board.py) with X as "me": X's checkers positive at the same indices, O's negative.
* C: log2 of the cube value. O: cube owner, 1 = X, -1 = O, 0 = centred. T: 1 = X on roll, -1 = O.
* D: "00" dice not rolled, "D" double offered, "B" beavered, "R" raccooned, else the two dice ("52"). A beaver or
  raccoon says beavers were played, so it is read in money play whatever the beaver bit of J says (eXtreme Gammon
  writes the bit from its settings, not from the game).
* S1, S2: X's and O's score. J: match play, 1 = Crawford game; money, bit 0 = Jacoby rule, bit 1 = beavers.
* M: match length, 0 = money. X: log2 of the maximum cube (10 -> 1024).

The starting position for money with the Jacoby rule, X on roll, is
``XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:0:10``.

>>> XGID.from_string("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10").on_roll_position().tolist()[:7]
[0, -2, 0, 0, 0, 0, 5]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgbot.errors import BgbotError
from bgbot.rules import board
from bgbot.rules.state import CubeState, MatchState, Owner


class XGIDError(BgbotError):
    """A malformed XGID string, or field values that do not fit one."""


def _decode_position(text: str) -> np.ndarray:
    if len(text) != 26:
        raise XGIDError(f"the position field has 26 characters, got {len(text)}")
    out = np.zeros(26, dtype=np.int8)
    for i, ch in enumerate(text):
        if ch == "-":
            continue
        if "A" <= ch <= "O":
            out[i] = ord(ch) - ord("A") + 1
        elif "a" <= ch <= "o":
            out[i] = -(ord(ch) - ord("a") + 1)
        else:
            raise XGIDError(f"bad character {ch!r} at {i}")
    if out[25] < 0 or out[0] > 0:
        raise XGIDError("character 25 is X's bar and character 0 is O's bar")
    return board.validate(out)


def _encode_position(position: np.ndarray) -> str:
    return "".join(
        "-" if n == 0 else chr(ord("A") + n - 1) if n > 0 else chr(ord("a") - n - 1) for n in (int(v) for v in position)
    )


@dataclass(frozen=True)
class XGID:
    """The fields of an XGID; the position is kept as XG writes it, from player X's view.

    Attributes:
        position: (26,) int8 in bgbot's layout with X as "me" (X's checkers positive, index 25 X's bar).
        cube_value: 1, 2, 4, ...
        cube_owner: 1 X, -1 O, 0 centred.
        turn: 1 X on roll, -1 O on roll.
        dice: (d1, d2), or None when not rolled.
        cube_action: "" none, "D" double offered, "B" beaver, "R" raccoon (then dice is None).
        score: (X, O).
        crawford_jacoby: match play 1 = Crawford game; money bit 0 Jacoby, bit 1 beavers.
        length: match length, 0 = money.
        max_cube: the largest cube value allowed.
    """

    position: np.ndarray = field(compare=False)
    cube_value: int = 1
    cube_owner: int = 0
    turn: int = 1
    dice: tuple[int, int] | None = None
    cube_action: str = ""
    score: tuple[int, int] = (0, 0)
    crawford_jacoby: int = 0
    length: int = 0
    max_cube: int = 1024

    def __post_init__(self) -> None:
        pos = board.validate(np.asarray(self.position)).copy()
        pos.setflags(write=False)
        object.__setattr__(self, "position", pos)
        object.__setattr__(self, "score", tuple(int(s) for s in self.score))
        if self.dice is not None:
            object.__setattr__(self, "dice", tuple(int(d) for d in self.dice))
        for name, value in (("cube value", self.cube_value), ("max cube", self.max_cube)):
            if value < 1 or value & (value - 1):
                raise XGIDError(f"{name} must be a power of 2, got {value!r}")
        if self.cube_owner not in (-1, 0, 1) or self.turn not in (-1, 1):
            raise XGIDError(f"cube owner is -1, 0 or 1 and turn -1 or 1, got {self.cube_owner!r}, {self.turn!r}")
        if self.cube_action not in ("", "D", "B", "R"):
            raise XGIDError(f"cube action is '', 'D', 'B' or 'R', got {self.cube_action!r}")
        if self.dice is not None and (
            self.cube_action or len(self.dice) != 2 or any(not 1 <= d <= 6 for d in self.dice)
        ):
            raise XGIDError(f"dice are two values 1..6 and exclude a cube action, got {self.dice!r}")
        if self.length < 0 or min(self.score) < 0 or not 0 <= self.crawford_jacoby <= (1 if self.length else 3):
            raise XGIDError(
                f"bad length/score/Crawford-Jacoby field: {self.length!r} {self.score!r} {self.crawford_jacoby!r} "
                "(Crawford-Jacoby: 0..1 in a match, 0..3 in money play)"
            )
        if self.cube_value > self.max_cube:
            raise XGIDError(f"cube {self.cube_value} is above the maximum cube {self.max_cube}")
        if self.cube_action in ("B", "R") and self.length:
            raise XGIDError(f"cube action {self.cube_action!r} (beaver/raccoon) is money play only, not a match")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, XGID) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return f"XGID.from_string({self.to_string()!r})"

    @classmethod
    def from_string(cls, text: str) -> XGID:
        """Parse ``XGID=...`` (the prefix is optional). Raises :class:`XGIDError` quoting the text."""
        body = text.strip()
        if body.upper().startswith("XGID="):
            body = body[5:]
        parts = body.split(":")
        if len(parts) != 10:
            raise XGIDError(f"an XGID has 10 colon-separated fields, got {len(parts)}: {text!r}")
        names = (
            "position",
            "cube",
            "cube owner",
            "turn",
            "dice",
            "score 1",
            "score 2",
            "Crawford/Jacoby",
            "match length",
            "max cube",
        )
        for name, text_field, low, high in zip(
            names[1:], parts[1:], (0, -1, -1, None, 0, 0, 0, 0, 0), (12, 1, 1, None, 10**6, 10**6, 15, 10**6, 12)
        ):
            if low is None or high is None:  # the dice field is checked below
                continue
            if (
                not (text_field.lstrip("-").isascii() and text_field.lstrip("-").isdigit())
                or not low <= int(text_field) <= high
            ):
                raise XGIDError(
                    f"not a valid XGID {text!r}: the {name} field is an integer {low}..{high}, got {text_field!r}"
                )
        try:
            pos, cube, owner, turn, dice, s1, s2, cj, length, max_cube = parts
            action, rolled = "", None
            if dice in ("D", "B", "R"):
                action = dice
            elif dice != "00":
                if len(dice) != 2 or not dice.isdigit():
                    raise XGIDError(f"bad dice field {dice!r}")
                rolled = (int(dice[0]), int(dice[1]))
            return cls(
                position=_decode_position(pos),
                cube_value=1 << int(cube),
                cube_owner=int(owner),
                turn=int(turn),
                dice=rolled,
                cube_action=action,
                score=(int(s1), int(s2)),
                crawford_jacoby=int(cj),
                length=int(length),
                max_cube=1 << int(max_cube),
            )
        except (ValueError, board.PositionError) as err:
            raise XGIDError(f"not a valid XGID {text!r}: {err}") from err

    def to_string(self) -> str:
        """Format with the ``XGID=`` prefix."""
        dice = self.cube_action or ("00" if self.dice is None else f"{self.dice[0]}{self.dice[1]}")
        fields = [
            _encode_position(self.position),
            self.cube_value.bit_length() - 1,
            self.cube_owner,
            self.turn,
            dice,
            self.score[0],
            self.score[1],
            self.crawford_jacoby,
            self.length,
            self.max_cube.bit_length() - 1,
        ]
        return "XGID=" + ":".join(str(f) for f in fields)

    def on_roll_position(self) -> np.ndarray:
        """The position seen from the side on roll, bgbot layout ``(26,)`` int8."""
        return self.position.copy() if self.turn == 1 else board.flip(self.position).astype(np.int8)

    def to_states(self) -> tuple[CubeState, MatchState]:
        """Cube and match state seen from the side on roll, with the beaver bit (money) and the maximum cube."""
        owner: Owner = "centre" if self.cube_owner == 0 else ("me" if self.cube_owner == self.turn else "opponent")
        me, opp = (self.score[0], self.score[1]) if self.turn == 1 else (self.score[1], self.score[0])
        if self.length:
            match = MatchState(
                length=self.length,
                score=(me, opp),
                crawford=bool(self.crawford_jacoby & 1),
                jacoby=False,
                max_cube=self.max_cube,
            )
        else:
            match = MatchState(
                score=(me, opp),
                jacoby=bool(self.crawford_jacoby & 1),
                beavers=bool(self.crawford_jacoby & 2),
                max_cube=self.max_cube,
            )
        return CubeState(self.cube_value, owner), match

    @classmethod
    def from_states(
        cls,
        position: np.ndarray,
        cube: CubeState,
        match: MatchState,
        turn: int = 1,
        dice: tuple[int, int] | None = None,
        max_cube: int = 1024,
    ) -> XGID:
        """An XGID for ``position`` seen from the side on roll, who is X (``turn=1``) or O (``turn=-1``)."""
        pos = board.validate(np.asarray(position))
        x_view = pos if turn == 1 else board.flip(pos).astype(np.int8)
        owner = {"centre": 0, "me": turn, "opponent": -turn}[cube.owner]
        score = match.score if turn == 1 else (match.score[1], match.score[0])
        cj = int(match.crawford) if match.length else int(match.jacoby) | 2 * int(match.beavers)
        return cls(
            position=x_view,
            cube_value=cube.value,
            cube_owner=owner,
            turn=turn,
            dice=dice,
            score=score,
            crawford_jacoby=cj,
            length=match.length,
            max_cube=match.max_cube or max_cube,
        )
