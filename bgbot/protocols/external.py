"""``bgbot external --port P``: play for GNU Backgammon as its "external player" over a TCP socket.

The protocol, as GNU Backgammon 1.07 speaks it (``set player N external HOST:PORT``; checked with Debian's gnubg 1.07
and its source, ``play.c``'s ``ComputerTurn`` and ``external.c``):

* GNU Backgammon connects to a listening socket when told ``set player N external host:port``: bgbot must already be
  listening. One connection lasts as long as that player setting.
* For every decision of its player it sends one FIBS ``board:`` line (``\\n``-terminated and followed by a NUL byte) and
  reads one answer line:

  - no dice rolled yet (the dice fields are 0): ``roll`` or ``double``;
  - doubled (the "was doubled" field is set): ``take`` or ``drop``;
  - dice rolled: the play, e.g. ``13/7 8/7``, ``bar/22 6/off``; an empty line when no play is legal.

  An answer starting with ``Error: `` makes GNU Backgammon print it and stop the game loop without a move.
* FIBS board fields (after ``board:``): two names, match length, two scores, 26 board fields, turn, two dice, two
  dice, cube value, two may-double flags, was doubled, colour, direction, home, bar, borne off (2), on the bar (2),
  can move, forced move, Crawford, redoubles. How GNU Backgammon fills them is in :func:`parse_board`.

GNU Backgammon 1.07 records a play it cannot match to a legal one as no play, and may crash on an answer it cannot
parse, so every answer here is a legal play produced by the move generator and written as single-die steps.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bgbot.errors import BgbotError
from bgbot.protocols.ubgi import format_steps
from bgbot.rules import board as board_lib
from bgbot.rules.state import CubeState, MatchState, Owner

if TYPE_CHECKING:
    from bgbot.api import Bot

__all__ = ["ExternalError", "FibsBoard", "parse_board", "decide", "serve"]

FIELDS = 52
"""Fields after ``board:`` in GNU Backgammon 1.07's FIBS board line."""


class ExternalError(BgbotError):
    """A ``board:`` line that cannot be read, or a port that cannot be listened on."""


@dataclass(frozen=True)
class FibsBoard:
    """One decision GNU Backgammon asks for.

    Attributes:
        position: ``(26,)`` int8 from "you" (the external player), :mod:`bgbot.rules.board`'s layout.
        dice: your roll, or None before rolling.
        cube: seen from you. match: seen from you.
        doubled: the opponent has doubled: take or drop.
        names: (you, opponent).
    """

    position: np.ndarray
    dice: tuple[int, int] | None
    cube: CubeState
    match: MatchState
    doubled: bool
    names: tuple[str, str]


def _ints(fields: list[str], line: str) -> list[int]:
    try:
        values = [int(f) for f in fields]
    except ValueError:
        raise ExternalError(f"a FIBS board has integer fields after the names, got {line[:200]!r}") from None
    if any(abs(v) >= 1 << 31 for v in values):
        raise ExternalError(f"a FIBS board field is out of range in {line[:200]!r}")
    return values


def parse_board(line: str) -> FibsBoard:
    """Read one FIBS ``board:`` line as GNU Backgammon 1.07 sends it to an external player.

    GNU Backgammon's board fields do not follow the "you" of the names (checked against gnubg 1.07's own play, see
    tests/test_external.py): the 26 board fields are always player 1's checkers positive at their own point numbers
    (player 1's bar at field 25) and player 0's negative (player 0's point ``p`` at field ``25 - p``, its bar at field
    0); the turn field is 1 when player 1 is on roll, else -1; the names and scores are player 0's first except while
    a double awaits an answer, when player 1's come first; the may-double fields are player 1's, then player 0's; the
    cube value is the value before a pending double. The player who decides is the one on roll, or its opponent when
    doubled.

    Raises:
        ExternalError: not a ``board:`` line, wrong field count, non-integer fields, an impossible position, cube or
            score.
    """
    text = line.strip().strip("\x00").strip()
    if not text.startswith("board:"):
        raise ExternalError(f"expected a FIBS 'board:...' line, got {text[:200]!r}")
    f = text.split(":")
    if len(f) - 1 < FIELDS:
        raise ExternalError(f"a FIBS board line has {FIELDS} fields after 'board:', got {len(f) - 1}")
    v = _ints(f[3:], text)  # v[k] = field k + 3
    length = v[0]
    raw = np.array(v[3:29], dtype=np.int64)  # 26 board fields
    turn, cube_value, may_double = v[29], v[34], (v[36], v[35])  # may_double[player]
    doubled = bool(v[37])
    on_roll = 1 if turn == 1 else 0
    me = 1 - on_roll if doubled else on_roll
    first = 1 if doubled else 0  # whose name and score come first
    names = (f[1], f[2]) if first == me else (f[2], f[1])
    score = (v[1], v[2]) if first == me else (v[2], v[1])  # (mine, the opponent's)
    dice_fields = (v[30], v[31]) if v[30] > 0 else (v[32], v[33])
    if me == 1:
        mine = raw.copy()
    else:
        mine = -raw[::-1]  # player 0's point p at field 25 - p, its bar at field 0
    pos = np.zeros(26, dtype=np.int64)
    pos[1:25] = mine[1:25]
    pos[25] = abs(mine[25])  # my bar
    pos[0] = -abs(mine[0])  # the opponent's bar
    try:
        position = board_lib.validate(pos)  # range-checked before the int8 cast
        if board_lib.off_counts(position).max() == board_lib.NUM_CHECKERS:
            raise ExternalError("the game is over: a side has borne off all its checkers")
        may_me, may_opp = may_double[me], may_double[1 - me]
        owner: Owner = "centre" if may_me == may_opp else ("me" if may_me else "opponent")
        money = length <= 0 or length >= 9999
        crawford = not money and not (may_me or may_opp) and cube_value == 1 and (length - 1) in score
        match = MatchState(0 if money else length, (0, 0) if money else score, crawford)
        cube = CubeState(max(cube_value, 1), owner)
    except BgbotError as err:
        raise ExternalError(f"impossible FIBS board {text[:200]!r}: {err}") from None
    dice = dice_fields if dice_fields[0] > 0 and dice_fields[1] > 0 else None
    if dice is not None and not (1 <= dice[0] <= 6 and 1 <= dice[1] <= 6):
        raise ExternalError(f"dice out of range in {text[:200]!r}")
    return FibsBoard(position, dice, cube, match, doubled, names)


def _view_of_opponent(cube: CubeState, match: MatchState) -> tuple[CubeState, MatchState]:
    owner: dict[str, Owner] = {"centre": "centre", "me": "opponent", "opponent": "me"}
    score = (match.score[1], match.score[0])
    return CubeState(cube.value, owner[cube.owner]), MatchState(match.length, score, match.crawford, match.jacoby)


def decide(bot: Bot, fb: FibsBoard, ply: int = 0) -> str:
    """The answer line (without newline) to one decision: ``roll``/``double``, ``take``/``drop`` or a play."""
    if fb.doubled:
        # The opponent (the doubler) is on roll: its view of the cube decision decides our take.
        doubler = board_lib.flip(fb.position)
        cube, match = _view_of_opponent(fb.cube, fb.match)
        decision = bot.cube_action(doubler, cube, match)
        return "take" if decision.answer.takes else "drop"
    if fb.dice is None:
        decision = bot.cube_action(fb.position, fb.cube, fb.match)
        doubles = decision.cube_available and decision.kind.doubles
        return "double" if doubles else "roll"
    best = bot.rank_plays(fb.position, fb.dice, fb.cube, fb.match, ply=ply)[0]
    steps = format_steps(fb.position, fb.dice, best.afterstate)
    return "" if steps == "pass" else steps


def answer_line(bot: Bot, line: str, ply: int = 0) -> str:
    """The reply to one line from GNU Backgammon; bad input gives ``Error: <message>`` (GNU prints it and stops)."""
    try:
        return decide(bot, parse_board(line), ply)
    except BgbotError as err:
        return "Error: " + " ".join(str(err).split())[:400]


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket. Raises ExternalError (port in use, bad address)."""
    if not 0 < port < 65536:
        raise ExternalError(f"--port must be 1..65535, got {port}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise ExternalError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.listen(4)
    return sock


def serve(bot: Bot, server: socket.socket, ply: int = 0, once: bool = False, log=None, verbose: bool = False) -> int:
    """Answer GNU Backgammon's connections to the listening socket ``server`` (:func:`listen`), one at a time, until
    interrupted (or, with ``once``, until the first connection closes); ``verbose`` writes each line received
    (``<``) and answered (``>``) to ``log`` (default standard error). Returns 0."""
    log = log or sys.stderr
    host, port = server.getsockname()[:2]
    log.write(f"bgbot external: listening on {host}:{port}\n")
    log.flush()
    try:
        while True:
            conn, peer = server.accept()
            with conn:
                _session(bot, conn, ply, log if verbose else None)
            if once:
                return 0
    finally:
        server.close()


def _session(bot: Bot, conn: socket.socket, ply: int, log=None) -> None:
    """Answer every ``\\n``-terminated line of one connection (NUL bytes between lines are dropped)."""
    buf = b""
    while True:
        try:
            data = conn.recv(65536)
        except OSError:
            return
        if not data:
            return
        buf += data
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            line = raw.replace(b"\x00", b"").decode("utf-8", errors="replace").strip()
            if not line:
                continue
            reply = answer_line(bot, line, ply)
            if log is not None:
                log.write(f"< {line}\n> {reply}\n")
                log.flush()
            try:
                conn.sendall(reply.encode() + b"\n")
            except OSError:
                return
        if len(buf) > 1 << 20:  # a megabyte without a newline: not GNU Backgammon
            conn.sendall(b"Error: line too long\n")
            buf = b""
