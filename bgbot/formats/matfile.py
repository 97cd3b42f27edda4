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
* A resignation is the ``Wins N point(s)`` line alone, in the winner's column, before the game is over (GNU
  Backgammon's export; its import reads the level from N and the cube: N up to the cube a single game, up to twice the
  cube a gammon, more a backgammon). A side that resigns after rolling leaves its dice with no play, ``DD:``, as the
  game's last turn (also GNU Backgammon's export); :func:`replay` reads such a turn as the roll before the resignation.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot import files
from bgbot.errors import BgbotError
from bgbot.rules.board import flip
from bgbot.rules.movegen_scalar import legal_plays
from bgbot.rules.state import CubeState, MatchState

LEFT_WIDTH = 28
"""Width of the left column's text after the ``NNN) `` move number (GNU Backgammon's export)."""
HEADER_WIDTH = 31
"""Width of the left player's ``name : score`` field in a game header."""


class MatFileError(BgbotError):
    """A play that cannot be written (the afterstate is not a legal result of the position and dice), or a ``.mat``
    file that cannot be read or replayed (the message gives the line or action).

    Attributes:
        line: the 1-based line of the file where reading stopped (:func:`read_match`; a game's header error names
            its ``Game N`` line), else None.
    """

    line: int | None = None


class ReplayError(MatFileError):
    """A game that cannot be replayed past some action (:func:`replay`).

    Attributes:
        done: the decisions before the action that breaks, as :func:`replay` lists them.
    """

    def __init__(self, message: str, done: list) -> None:
        super().__init__(message)
        self.done = done


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


@dataclass
class CubeBook:
    """The cube through one game, as GNU Backgammon's ``.mat`` import keeps it: the one check of the cube actions of
    a game read (:func:`read_match`, which names the line) or replayed (:func:`replay`, which names the action).

    Attributes:
        value: the cube's value; a game starts at 1 (:attr:`start_free`: a file of automatic doubles, whose starting
            cube the format does not record). owner: -1 centred, else the side (0 left, 1 right) that owns it.
        offered: the side whose double awaits an answer, else None. crawford: the Crawford game (no doubles).
        names: the players as the messages name them (left, right).
        start_free: the first double may raise a centred cube from any power of two up to ``2 ** start_free`` (a
            ``; [AutoDoubles "N"]`` header: automatic doubles raised it unrecorded); 0: from 1 only.
    """

    crawford: bool = False
    names: tuple[str, str] = ("the left player", "the right player")
    start_free: int = 0
    value: int = 1
    owner: int = -1
    offered: int | None = None

    def apply(self, action: Turn | CubeAction) -> None:
        """Check ``action`` against the cube and record it: a roll while a double awaits an answer, a double in the
        Crawford game, by the side that does not own the cube, while a double awaits an answer or to any value but
        twice the cube, a take or a pass with no double before it or by the doubler are refused.

        Raises:
            MatFileError: what is wrong, quoting the action (``"'Doubles => 4' with the cube at 1: a double makes it
                2"``); the caller adds where it is.
        """
        if isinstance(action, Turn):
            if self.offered is not None:
                raise MatFileError(f"{action.text()!r}: a roll while a double awaits an answer")
            return
        text, who = action.text().strip(), self.names[action.side]
        if action.kind == "double":
            if self.offered is not None:
                raise MatFileError(f"{text!r}: a double while a double awaits an answer")
            if self.crawford:
                raise MatFileError(f"{text!r}: a double in the Crawford game")
            if self.owner not in (-1, action.side):
                raise MatFileError(f"{text!r} by {who}, who does not own the cube ({self.names[self.owner]} owns it)")
            if self.owner < 0 and self.value == 1 and self.start_free:
                if action.value & (action.value - 1) == 0 and 2 <= action.value <= 2 ** (self.start_free + 1):
                    self.value = action.value // 2  # automatic doubles raised the cube before this first double
            if action.value != 2 * self.value:
                raise MatFileError(f"{text!r} with the cube at {self.value}: a double makes it {2 * self.value}")
            self.offered = action.side
            return
        if self.offered is None:
            raise MatFileError(f"{text!r} by {who} without a double before it")
        if self.offered == action.side:
            raise MatFileError(f"{text!r} by {who}, who doubled: the opponent answers a double")
        if action.kind == "take":
            self.value, self.owner = self.value * 2, action.side
        self.offered = None


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
    if game.winner == 1 and rows and rows[-1][1] is None:  # after the left player's last action: on the same line
        drop = isinstance(game.turns[-1], CubeAction)  # GNU Backgammon: " Drops" ... " Wins"; a roll, then "Wins"
        rows[-1][1] = (" " if drop else "") + wins_text
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
    backgammon_value: int = 3,
    auto_doubles: int = 0,
) -> str:
    """A whole ``.mat`` file: the header, then every game with cumulative scores (money session by default).

    ``names`` are written as they are: keep them to letters, digits, ``-``, ``_`` and ``.`` (see :func:`safe_name`).
    ``jacoby`` (money sessions) adds a ``; [Jacoby "On"|"Off"]`` header line. GNU Backgammon's import ignores it and
    scores money games by its own setting (on by default): ``set jacoby off`` before importing a session played
    without the Jacoby rule.

    The variants: each game's ``Wins N points`` line and the running score in each game's header record the points
    as scored under the rules played (a backgammon counted as a gammon: 2 times the cube; a cube that automatic
    doubles raised: that cube). ``backgammon_value`` 2 adds a ``; [BackgammonValue "2"]`` header line and
    ``auto_doubles`` N > 0 a ``; [AutoDoubles "N"]`` line, for readers; the format has no field for either and
    importers ignore them. GNU Backgammon imports such files without complaint and keeps the running score of each
    game's header, but scores each game itself from its final board by its own rules (a backgammon 3; it has no
    setting for backgammons as gammons): its re-export says 3 points, and a match it imports may end a game early
    (tests/test_rules_variants.py shows both).
    """
    date = date or dt.date.today()
    parts = [
        f'; [EventDate "{date:%Y.%m.%d}"]\n'
        + (f'; [Jacoby "{"On" if jacoby else "Off"}"]\n' if jacoby is not None and not match_length else "")
        + (f'; [BackgammonValue "{backgammon_value}"]\n' if backgammon_value != 3 else "")
        + (f'; [AutoDoubles "{auto_doubles}"]\n' if auto_doubles else ""),
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
    files.write_atomic(path, text)


# -- reading ------------------------------------------------------------------------------------------------------

_ACTION_START = re.compile(r"^(?:\d\d:?|Doubles|Takes|Drops|Passes|Wins|Beavers|Redoubles|Resigns)$", re.IGNORECASE)


@dataclass(frozen=True)
class MatchGame:
    """One game read from a ``.mat`` file: the scores before it (left, right), whether it is the Crawford game, and
    the :class:`Game` (``winner`` -1 and ``points`` 0 when the file ends before the game does); ``auto_doubles`` the
    file's ``; [AutoDoubles "N"]`` (0 when absent: the game starts with the cube at 1)."""

    number: int
    scores: tuple[int, int]
    crawford: bool
    game: Game
    auto_doubles: int = 0


@dataclass(frozen=True)
class Match:
    """A ``.mat`` file: ``names`` (left, right), ``length`` (0 = money session), the games in order."""

    names: tuple[str, str]
    length: int
    games: tuple[MatchGame, ...]


def _actions(text: str, where: str) -> list[tuple[int, str]]:
    """Split one move line's text (after ``NN)``) into (column offset, action text) pieces."""
    out: list[tuple[int, list[str]]] = []
    for m in re.finditer(r"\S+", text):
        word = m.group()
        if _ACTION_START.match(word) and not (out and out[-1][1][0].lower() in ("wins", "doubles") and word.isdigit()):
            if re.fullmatch(r"\d\d", word):
                raise MatFileError(f"{where}: dice {word!r} without a colon")
            out.append((m.start(), [word]))
        elif out:
            out[-1][1].append(word)
        else:
            raise MatFileError(f"{where}: cannot read {word!r}")
    return [(col, " ".join(words)) for col, words in out]


def _action(side: int, text: str, where: str):
    """One action text -> a Turn, a CubeAction or ("wins", points)."""
    head, _, rest = text.partition(" ")
    low = head.lower()
    if re.fullmatch(r"\d\d:", head):
        d1, d2 = int(head[0]), int(head[1])
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            raise MatFileError(f"{where}: dice {head!r} out of range")
        return Turn(side, (d1, d2), rest.strip())
    if low in ("doubles", "redoubles", "beavers"):
        m = re.fullmatch(r"=>\s*(\d+)", rest.strip())
        if not m:
            raise MatFileError(f"{where}: expected 'Doubles => N', got {text!r}")
        return CubeAction(side, "double", int(m.group(1)))
    if low == "takes":
        return CubeAction(side, "take")
    if low in ("drops", "passes"):
        return CubeAction(side, "pass")
    if low == "wins":
        m = re.match(r"(\d+)\s+points?", rest.strip())
        if not m:
            raise MatFileError(f"{where}: expected 'Wins N points', got {text!r}")
        return ("wins", int(m.group(1)))
    raise MatFileError(f"{where}: cannot read {text!r}")


def read_match(text: str, source: str = "match file") -> Match:
    """Read a Jellyfish ``.mat`` match or money session (GNU Backgammon's export, bgbot's :func:`match_text`, and the
    same layout from other programs).

    Columns: a move line ``NN) LEFT RIGHT`` holds up to two actions; one action alone is the right player's when it
    starts more than 10 characters after the ``)``. Plays are kept as text (check them with :func:`replay`).

    Cube actions are checked against the cube as the game goes (:class:`CubeBook`, GNU Backgammon's rules).

    Raises:
        MatFileError: no ``N point match`` line, a game without its header, or a line that cannot be read, with the
            line number (also in its ``line``); a cube action the cube does not allow (a double to any value but
            twice the cube, by the side that does not own it, in the Crawford game; a take or a drop with no double
            before it; a roll while a double awaits an answer), naming the game and the line.
    """
    if not isinstance(text, str):
        raise MatFileError(f"{source}: a match file is text")
    length = None
    names: tuple[str, str] | None = None
    games: list[MatchGame] = []
    current: dict | None = None
    auto_doubles = 0

    def finish() -> None:
        if current is not None:
            games.append(
                MatchGame(
                    current["number"],
                    current["scores"],
                    current["crawford"],
                    Game(tuple(current["turns"]), current["winner"], current["points"]),
                    auto_doubles,
                )
            )

    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i + 1
        try:
            raw = lines[i]
            where = f"{source}, line {i + 1}"
            i += 1
            line = raw.strip()
            if not line or line.startswith(";"):
                auto = re.fullmatch(r';\s*\[AutoDoubles\s+"(\d{1,2})"\]', line, re.ASCII)
                if auto and current is None:
                    auto_doubles = int(auto.group(1))
                continue
            m = re.fullmatch(r"(\d+)\s+point match", line, re.IGNORECASE)
            if m and length is None:
                length = int(m.group(1))
                continue
            m = re.fullmatch(r"Game\s+(\d+)", line, re.IGNORECASE)
            if m:
                if length is None:
                    raise MatFileError(f"{where}: 'Game' before the 'N point match' line")
                finish()
                if i >= len(lines):
                    raise MatFileError(f"{where}: game header missing")
                head = lines[i]
                i += 1
                h = re.fullmatch(
                    r"\s*(\S.*?)\s*:\s*(\d+)(\s*\(Crawford\))?\s+(\S.*?)\s*:\s*(\d+)(\s*\(Crawford\))?\s*", head
                )
                if not h:
                    raise MatFileError(
                        f"{source}, line {i}: expected 'NAME : SCORE   NAME : SCORE', got {head.strip()!r}"
                    )
                game_names = (h.group(1), h.group(4))
                if names is None:
                    names = game_names
                scores = (int(h.group(2)), int(h.group(5)))
                if length and max(scores) >= length:
                    raise MatFileError(f"{source}, line {i}: score {scores} past the {length}-point match")
                crawford = (
                    bool(length)
                    and (length - 1) in scores
                    and bool(h.group(3) or h.group(6) or _first_at(games, length, scores))
                )
                current = {
                    "number": int(m.group(1)),
                    "scores": scores,
                    "crawford": crawford,
                    "turns": [],
                    "winner": -1,
                    "points": 0,
                    "cube": CubeBook(crawford, game_names, auto_doubles),
                }
                continue
            if current is None:
                if length is None:
                    raise MatFileError(f"{where}: no 'N point match' line before {line[:80]!r}: not a .mat file")
                raise MatFileError(f"{where}: cannot read {line[:80]!r} before the first game")
            m = re.match(r"\s*(\d+)\)(.*)$", raw)
            body, offset = (m.group(2), 0) if m else (raw, -1)
            for col, action_text in _actions(body, where):
                side = 1 if (col > 10 if m else col > 20) else 0
                a = _action(side, action_text, where)
                if isinstance(a, tuple):
                    current["winner"], current["points"] = side, a[1]
                else:
                    try:
                        current["cube"].apply(a)
                    except MatFileError as err:
                        raise MatFileError(f"{source}, game {current['number']}, line {start}: {err}") from None
                    current["turns"].append(a)
        except MatFileError as err:
            err.line = start
            raise
    if length is None:
        raise MatFileError(f"{source}: no 'N point match' line: not a .mat file")
    finish()
    if not games:
        raise MatFileError(f"{source}: no games")
    return Match(names or ("left", "right"), length, tuple(games))


def _first_at(games: list[MatchGame], length: int, scores: tuple[int, int]) -> bool:
    """True when ``scores`` is the first game in which a side is at ``length - 1`` (the Crawford game)."""
    return not any((length - 1) in g.scores for g in games)


@dataclass(frozen=True)
class Decision:
    """One decision of a replayed game, from the side that makes it.

    Attributes:
        kind: "move" (a checker play), "double" (doubled), "no_double" (rolled while it could double), "take", "pass".
        side: 0 left, 1 right. turn: index of the action in the game's turns.
        position: ``(26,)`` int8 from the side deciding (for take/pass: the doubler's view, the doubler on roll).
        dice: the roll of a move, else None. afterstate: a move's result, flipped (opponent on roll), else None.
        cube, match: seen from the side on roll (the doubler for take/pass).
        text: the play or action as written.
    """

    kind: str
    side: int
    turn: int
    position: np.ndarray
    dice: tuple[int, int] | None
    afterstate: np.ndarray | None
    cube: CubeState
    match: MatchState
    text: str


def _owner(owner_side: int, viewer: int) -> str:
    return "centre" if owner_side < 0 else ("me" if owner_side == viewer else "opponent")


def replay(game: MatchGame, length: int, jacoby: bool = True, source: str = "game") -> list[Decision]:
    """Replay a game from the starting position and list every decision, checking each play against the legal set.
    The last turn of a finished game may be dice without a play where plays were legal: the roll of a side that then
    resigned (its decision not to double is listed; the roll has no play to check, and the resignation is no
    decision here).

    Raises:
        ReplayError: an illegal or unreadable play, a cube action the cube does not allow (:class:`CubeBook`); its
            ``done`` holds the decisions before it.
    """
    from bgbot.formats.notation import parse_play
    from bgbot.rules.board import starting_position

    pos = [starting_position(), starting_position()]  # each side's own view
    book = CubeBook(game.crawford, start_free=game.auto_doubles)
    out: list[Decision] = []
    scores = game.scores
    crawford = game.crawford

    def states(viewer: int, value: int, owner: int) -> tuple[CubeState, MatchState]:
        match = MatchState(length, (scores[viewer], scores[1 - viewer]) if length else (0, 0), crawford, jacoby)
        return CubeState(value, _owner(owner, viewer)), match  # type: ignore[arg-type]

    for k, t in enumerate(game.game.turns):
        where = f"{source}, action {k + 1}"
        value, owner, doubler = book.value, book.owner, book.offered
        try:
            book.apply(t)
        except MatFileError as err:
            raise ReplayError(f"{where}: {err}", out) from None
        if isinstance(t, Turn):
            cube, match = states(t.side, value, owner)
            may = (
                not match.crawford
                and owner in (-1, t.side)
                and (not length or scores[t.side] + value < length)
                and k > 0
                and not (k > 0 and isinstance(game.game.turns[k - 1], CubeAction))
            )
            if may:
                out.append(Decision("no_double", t.side, k, pos[t.side].copy(), None, None, cube, match, "roll"))
            last = k == len(game.game.turns) - 1
            if last and not t.play and game.game.winner >= 0 and legal_plays(pos[t.side], *t.dice):
                break  # the roll of a side that then resigned (GNU Backgammon writes it so): no play to check
            try:
                play = parse_play(pos[t.side], t.dice, t.play.replace("*", "") or "(no play)")
            except BgbotError as err:
                raise ReplayError(f"{where}: {t.text()!r}: {err}", out) from None
            after = flip(np.asarray(play.afterstate, dtype=np.int8))
            out.append(Decision("move", t.side, k, pos[t.side].copy(), t.dice, after, cube, match, t.play))
            pos[1 - t.side] = after
            pos[t.side] = flip(after)
        elif t.kind == "double":  # the cube it doubles: automatic doubles may have raised it (CubeBook.start_free)
            cube, match = states(t.side, book.value, owner)
            out.append(Decision("double", t.side, k, pos[t.side].copy(), None, None, cube, match, t.text().strip()))
        else:
            assert doubler is not None  # CubeBook.apply refuses an answer without a double
            cube, match = states(doubler, value, owner)
            out.append(Decision(t.kind, t.side, k, pos[doubler].copy(), None, None, cube, match, t.text().strip()))
    return out
