"""Jellyfish ``.mat`` match files, the text format GNU Backgammon, eXtremeGammon and BGBlitz import.

The layout follows what GNU Backgammon's own ``export match mat`` writes (checked against gnubg 1.07 here), and files
written by :func:`match_text` import with ``import mat FILE`` (tests/test_matfile.py replays them in ``gnubg -t -q``)::

    ; [EventDate "2026.01.31"]

     0 point match

     Game 1
     alice : 0                      bob : 0
      1)                             52: 13/8 24/22
      2) 43: 24/20 6/3*              11: 25/24 24/23 6/5* 6/5
     ...
          Wins 2 points

* ``0 point match`` is a money session; each game's header gives the score before the game (cumulative points).
* The first player named is always the left column; whoever wins the opening roll moves first, so the left column
  of move 1 may be empty.
* Cube actions take a turn's place: `` Doubles => 2``, `` Takes``, `` Drops`` (a drop ends the game: ``Wins N
  point(s)`` follows in the doubler's column); ``N point match`` with N > 0 is a match, N = 0 a money session.
* A turn is ``DD: `` (higher die first) and the single-die steps ``from/to`` in the mover's own point numbers, ``25``
  for the bar, ``0`` for off, ``*`` after a step that hits. A forfeited turn is the dice alone.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot.errors import BgbotError
from bgbot.rules.board import flip
from bgbot.rules.movegen_scalar import legal_plays

LEFT_WIDTH = 28
"""Width of the left column's text after the ``NNN) `` move number (GNU Backgammon's export)."""
HEADER_WIDTH = 31
"""Width of the left player's ``name : score`` field in a game header."""


class MatFileError(BgbotError):
    """A play that cannot be written: the afterstate is not a legal result of the position and dice."""


@dataclass(frozen=True)
class Turn:
    """One turn: ``side`` 0 = left player, 1 = right; ``dice`` ``(d1, d2)``; ``play`` the steps text (may be '')."""

    side: int
    dice: tuple[int, int]
    play: str

    def text(self) -> str:
        """``"52: 13/8 24/22"``: the higher die first, then the steps."""
        hi, lo = max(self.dice), min(self.dice)
        return f"{hi}{lo}: {self.play}".rstrip() if self.play else f"{hi}{lo}:"


@dataclass(frozen=True)
class CubeAction:
    """A cube action in a turn's place: ``side`` 0 = left player, 1 = right; ``kind`` "double" (``value`` = the cube
    value after the double), "take" or "pass". Written as GNU Backgammon writes them: `` Doubles => 2``,
    `` Takes``, `` Drops``."""

    side: int
    kind: str
    value: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("double", "take", "pass"):
            raise MatFileError(f"a cube action is 'double', 'take' or 'pass', got {self.kind!r}")

    def text(self) -> str:
        if self.kind == "double":
            return f" Doubles => {self.value}"
        return " Takes" if self.kind == "take" else " Drops"


@dataclass(frozen=True)
class Game:
    """A finished game: its turns (:class:`Turn` or :class:`CubeAction`) in order and the result (``winner`` 0 left /
    1 right, ``points`` the points scored: 1, 2 or 3 times the cube value, or the cube value after a pass)."""

    turns: tuple
    winner: int
    points: int


def play_steps(position: np.ndarray, dice, afterstate: np.ndarray) -> str:
    """The ``.mat`` text of the play that turns ``position`` into ``afterstate``.

    Args:
        position: ``(26,)`` int8, before the play, the mover on roll.
        dice: two ints 1..6.
        afterstate: ``(26,)`` int8, after the play, already flipped (opponent on roll) as the move generator returns it.

    Returns:
        e.g. ``"13/8 24/22"``, ``"25/20* 6/0"``; ``""`` when no play was possible.

    Raises:
        MatFileError: ``afterstate`` is no legal result of ``position`` and ``dice``.
    """
    target = bytes(np.asarray(flip(np.asarray(afterstate, dtype=np.int8)), dtype=np.int8))
    plays = legal_plays(position, int(dice[0]), int(dice[1]))
    if not plays and target == bytes(np.asarray(position, dtype=np.int8)):
        return ""
    for play in plays:
        if bytes(play.afterstate) == target:
            return " ".join(f"{s}/{t}{'*' if h else ''}" for (s, t), h in zip(play.steps, play.hits))
    raise MatFileError(
        f"no legal play of {tuple(int(d) for d in dice)} in {np.asarray(position).tolist()} "
        f"leads to {flip(np.asarray(afterstate)).tolist()}"
    )


def _result_line(winner: int, points: int) -> str:
    text = f"Wins {points} point{'s' if points != 1 else ''}"
    return " " * (6 if winner == 0 else 6 + LEFT_WIDTH) + text


def game_text(number: int, names: tuple[str, str], scores: tuple[int, int], game: Game) -> str:
    """One game's block: ``Game N``, the header with the scores before it, numbered move lines, the ``Wins`` line."""
    lines = [f" Game {number}", f" {names[0]} : {scores[0]}".ljust(HEADER_WIDTH + 1) + f"{names[1]} : {scores[1]}"]
    rows: list[list[str | None]] = []
    for turn in game.turns:
        if turn.side == 0 or not rows or rows[-1][1] is not None:
            rows.append(["", None])
        rows[-1][turn.side] = turn.text()
    wins_text = _result_line(game.winner, game.points).strip()
    wins: str | None = wins_text
    if game.winner == 1 and rows and rows[-1][1] is None:  # after a drop by the left player: on the same line
        rows[-1][1] = " " + wins_text
        wins = None
    for i, (left, right) in enumerate(rows, 1):
        lines.append((f"{i:3d}) " + (left or "").ljust(LEFT_WIDTH - 1) + " " + (right or "")).rstrip())
    if wins is not None:
        lines.append(_result_line(game.winner, game.points))
    return "\n".join(lines) + "\n"


def match_text(
    names: tuple[str, str],
    games: list[Game],
    match_length: int = 0,
    date: dt.date | None = None,
    jacoby: bool | None = None,
) -> str:
    """A whole ``.mat`` file: the header, then every game with cumulative scores (money session by default).

    ``names`` are written as they are: keep them to letters, digits, ``-``, ``_`` and ``.`` (see :func:`safe_name`).
    ``jacoby`` (money sessions) adds a ``; [Jacoby "On"|"Off"]`` header line. GNU Backgammon's import ignores it and
    scores money games by its own setting (on by default): ``set jacoby off`` before importing a session played
    without the Jacoby rule.
    """
    date = date or dt.date.today()
    parts = [
        f'; [EventDate "{date:%Y.%m.%d}"]\n'
        + (f'; [Jacoby "{"On" if jacoby else "Off"}"]\n' if jacoby is not None and not match_length else ""),
        f" {match_length} point match\n",
    ]
    scores = [0, 0]
    for number, game in enumerate(games, 1):
        parts.append(game_text(number, names, (scores[0], scores[1]), game))
        scores[game.winner] += game.points
    return "\n".join(parts)


def safe_name(name: str) -> str:
    """A player name the ``.mat`` importers read back: characters other than letters, digits, ``-_.`` become ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "player"


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file in the same directory, flushed to disk, then
    ``os.replace``; on any failure (a full disk) the temporary file is removed and ``path`` is left as it was.

    Raises:
        OSError: the directory is missing or not writable, or the disk is full.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
