"""What the web page of ``bgbot serve`` needs beyond the CLI's answers: board facts, checker steps, games against the
bot kept on the server, rollouts with progress, match analysis, models and training runs.

Public API (used by :mod:`bgbot.protocols.server`, which maps it to HTTP)::

    board_facts(ctx) -> dict                      # ``bgbot show --json`` + "points", "gnubg_id", "xgid"
    context_from_points(points, dice=None) -> Context
    steps(ctx, steps, move) -> dict               # a click-by-click play: the board so far, what is still legal
    Games(bot, limit)                             # .new(...) -> WebGame; .get(game_id)
    WebGame.state() -> dict; WebGame.send(line, tutor=None) -> dict; WebGame.mat() -> str
    WebGame.judge(line) -> TutorVerdict | None    # the tutor: a decision of the player's against the bot's choice
    RolloutRequest(...); run_rollout(bot, request, progress, cancelled) -> dict     # the CLI's rollout --json shape
    analyse(bot, text, ply) -> dict               # bgbot analyse --json + each decision's position
    models(models_dir) -> list[dict]; runs(runs_dir, models_dir) -> list[dict]; run_records(...) -> list[dict]

A game is :class:`bgbot.protocols.play.Session` (the terminal game) run in its own thread: its questions ("your
turn", "your play", "take or pass?", "another game?") wait for the line the page sends, its messages are the game's
log; the game, its dice and its match score are the session's own.

The tutor judges the player's decisions before they are played, against what the bot would do in the same place
(:class:`TutorVerdict`): a play against the bot's ranking at the bot's ply, a double or a roll against the bot's cube
analysis of the player's position, a take or a pass against the bot's analysis of its own double. Errors are in
money equity (points per game, in units of the cube: cubeless for plays, cubeful for the cube) in money play, and
in GNU Backgammon's normalised equity (EMG) at a match score, with the match winning chance lost beside it.
"""

from __future__ import annotations

import io
import json
import queue
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from bgbot.api import Bot
from bgbot.arena import rollout as ro
from bgbot.cube import decision as cube_lib
from bgbot.errors import BgbotError
from bgbot.formats import context, diagram, matfile, notation, positionid
from bgbot.formats.matchid import MatchID
from bgbot.formats.xgid import XGID
from bgbot.protocols import analysis
from bgbot.protocols.play import BOT, HUMAN, PlaySettings, Session, _Quit
from bgbot.rules import board
from bgbot.rules.board import play_step
from bgbot.rules.movegen_scalar import legal_plays
from bgbot.rules.outcomes import equity
from bgbot.rules.state import CubeState, MatchState

__all__ = [
    "WebError",
    "board_facts",
    "context_from_points",
    "steps",
    "Games",
    "WebGame",
    "TutorVerdict",
    "RolloutRequest",
]


class WebError(BgbotError):
    """A request of the web page that cannot be answered (an unknown game, an illegal step, a busy server)."""


# -- boards -----------------------------------------------------------------------------------------------------


def gnubg_id(position: np.ndarray, cube: CubeState, match: MatchState, dice=None) -> str:
    """``PositionID:MatchID`` of a position seen from the side on roll (player 0 on roll)."""
    mid = MatchID.from_states(cube, match, 0, tuple(dice) if dice else (0, 0))
    return f"{positionid.encode(position)}:{mid.to_string()}"


def board_facts(ctx: context.Context) -> dict:
    """The facts ``bgbot show --json`` prints, and the position as ``"points"`` (26 signed checker counts, the
    layout of :mod:`bgbot.rules.board`), its ``"gnubg_id"`` and ``"xgid"``, and ``"before_roll_id"``: the GNUbg ID
    without the dice (the cube decision before the roll)."""
    pips, off = board.pip_counts(ctx.position), board.off_counts(ctx.position)
    return {
        "position_id": ctx.position_id,
        "gnubg_id": gnubg_id(ctx.position, ctx.cube, ctx.match, ctx.dice),
        "before_roll_id": gnubg_id(ctx.position, ctx.cube, ctx.match),
        "xgid": XGID.from_states(ctx.position, ctx.cube, ctx.match, 1, ctx.dice).to_string(),
        "dice": None if ctx.dice is None else list(ctx.dice),
        "pips": [int(pips[0]), int(pips[1])],
        "off": [int(off[0]), int(off[1])],
        "cube": {"value": ctx.cube.value, "owner": ctx.cube.owner},
        "match": cube_lib.match_json(ctx.match),
        "double_offered": ctx.double_offered,
        "points": [int(v) for v in ctx.position],
        "board": diagram.draw(
            ctx.position, dice=ctx.dice, cube=ctx.cube, match=ctx.match, double_offered=ctx.double_offered
        ).splitlines(),
    }


def context_from_points(points, dice=None, cube: CubeState | None = None, match: MatchState | None = None):
    """A context from 26 signed checker counts (index 1..24 the points of the side on roll, positive its checkers,
    negative the opponent's; 25 its bar, 0 the opponent's bar, negative), as wildbg's ``p0``..``p25``.

    Raises:
        bgbot.rules.board.PositionError: not 26 counts, or not a position (more than 15 checkers a side, ...).
    """
    if len(points) != 26:
        raise board.PositionError(f"a board is 26 signed checker counts (bar, points 1..24, bar), got {len(points)}")
    counts = [int(v) for v in points]
    if max(abs(v) for v in counts) > 15:  # before numpy, which cannot hold a count of 2**63 or more
        raise board.PositionError("a point holds at most 15 checkers")
    pos = np.array(counts, dtype=np.int8)
    return context.Context(pos, dice, cube or CubeState(), match or MatchState())


# -- a play, step by step ------------------------------------------------------------------------------------------


def _dice_list(dice: tuple[int, int]) -> list[int]:
    return [dice[0]] * 4 if dice[0] == dice[1] else [dice[0], dice[1]]


def steps(ctx: context.Context, made: list[tuple[int, int]], move: tuple[int, int] | None = None) -> dict:
    """A play made step by step, as the page's clicks make it: the steps ``made`` so far (``(from, to)``, 25 the bar,
    0 off), then ``move`` (a checker from a point to another, with one die or several in a row) when given.

    Returns:
        ``{"steps": [[from, to], ...], "points": the board after them (26 counts, not flipped), "complete": bool,
        "play": the play's notation when complete, "sources": the points a checker may still move from}``.

    Raises:
        WebError: a step that no legal play of the dice contains.
    """
    if ctx.dice is None:
        raise WebError("no dice: a play needs a roll")
    for src, dst in [*made, *([move] if move is not None else [])]:
        if not (0 <= src <= 25 and 0 <= dst <= 25):
            raise WebError(f"a step goes between points 0 (off) .. 25 (the bar), got {src}/{dst}")
    pos = [int(v) for v in ctx.position]
    legal = legal_plays(ctx.position, *ctx.dice)
    n_max = len(legal[0].steps) if legal else 0
    finals = {bytes(np.asarray(p.afterstate, dtype=np.int8)) for p in legal}
    memo: dict[tuple[bytes, tuple[int, ...]], bool] = {}

    def completes(b: list[int], left: tuple[int, ...]) -> bool:
        used = len(_dice_list(ctx.dice)) - len(left)  # type: ignore[arg-type]
        if used == n_max:
            return bytes(np.asarray(b, dtype=np.int8)) in finals
        key = (bytes(np.asarray(b, dtype=np.int8)), left)
        if key not in memo:
            memo[key] = any(
                r is not None and completes(_apply(b, src, r), _drop(left, d))
                for d in set(left)
                for src in range(1, 26)
                for r in [play_step(b, src, d)]
            )
        return memo[key]

    left = tuple(_dice_list(ctx.dice))
    done: list[tuple[int, int]] = []
    for src, dst in made:
        b2, left2 = _one(pos, left, src, dst)
        if b2 is None or not completes(b2, left2):
            raise WebError(f"{_name(src)}/{_name(dst)} is not part of a legal play of {ctx.dice[0]}-{ctx.dice[1]}")
        pos, left = b2, left2
        done.append((src, dst))
    if move is not None:
        src, dst = move
        found = None
        for path in _paths(pos, left, src, dst):
            b2, left2 = pos, left
            for s, _t, d in path:
                r = play_step(b2, s, d)
                assert r is not None
                b2, left2 = _apply(b2, s, r), _drop(left2, d)
            if completes(b2, left2):
                found = (path, b2, left2)
                break
        if found is None:
            raise WebError(
                f"{_name(src)}/{_name(dst)} is not a legal move with {ctx.dice[0]}-{ctx.dice[1]} "
                + ("here" if done else "in this position")
            )
        path, pos, left = found
        done.extend((s, t) for s, t, _ in path)
    used = len(_dice_list(ctx.dice)) - len(left)
    complete = used == n_max
    play = None
    if complete:
        if not legal:
            play = notation.format_no_play()
        else:
            target = bytes(np.asarray(pos, dtype=np.int8))
            first = next(p for p in legal if bytes(np.asarray(p.afterstate, dtype=np.int8)) == target)
            play = notation.format_play([int(v) for v in ctx.position], first)  # type: ignore[arg-type]
    sources = (
        []
        if complete
        else sorted(
            {
                src
                for d in set(left)
                for src in range(1, 26)
                if (r := play_step(pos, src, d)) is not None and completes(_apply(pos, src, r), _drop(left, d))
            }
        )
    )
    return {"steps": [list(s) for s in done], "points": pos, "complete": complete, "play": play, "sources": sources}


def _name(i: int) -> str:
    return "bar" if i == 25 else ("off" if i == 0 else str(i))


def _drop(left: tuple[int, ...], d: int) -> tuple[int, ...]:
    i = left.index(d)
    return left[:i] + left[i + 1 :]


def _apply(b: list[int], src: int, r: tuple[int, bool]) -> list[int]:
    return [int(v) for v in board.apply_steps(np.asarray(b, dtype=np.int8), [(src, r[0])])]


def _one(b: list[int], left: tuple[int, ...], src: int, dst: int):
    for d in sorted(set(left)):
        r = play_step(b, src, d)
        if r is not None and r[0] == dst:
            return _apply(b, src, r), _drop(left, d)
    return None, left


def _paths(b: list[int], left: tuple[int, ...], src: int, dst: int, depth: int = 0):
    """Every way (a list of ``(from, to, die)``) to move one checker from ``src`` to ``dst`` with dice of ``left``."""
    for d in sorted(set(left), reverse=True):
        r = play_step(b, src, d)
        if r is None:
            continue
        if r[0] == dst:
            yield [(src, dst, d)]
        elif r[0] > 0 and depth < 3:
            for rest in _paths(_apply(b, src, r), _drop(left, d), r[0], dst, depth + 1):
                yield [(src, r[0], d), *rest]


# -- the tutor ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TutorVerdict:
    """One decision of the player's judged against the bot's choice in the same place.

    Attributes:
        decision: "play" (a checker play), "cube" (double or roll, before the roll) or "take" (the answer to the
            bot's double).
        played: what the player did: the play in GNU Backgammon's notation, "double", "no double", "take" or "pass".
        best: the bot's choice, in the same terms.
        error: what ``played`` loses against ``best``, >= 0: money play, equity in points per game in units of the
            cube (cubeless for a play, cubeful for a cube action); a match, GNU Backgammon's normalised equity (EMG).
        unit: "equity" (money) or "emg" (a match).
        mwc_error: a match, the match winning chance lost (0..1); None in money play.
        action: the bot's cube analysis in GNU Backgammon's words ("Double, take", "No double, take", ...) for a cube
            decision or a take; None for a play.
        threshold: the error above which the decision is flagged (in ``unit``).
        game: the game of the session or match it was made in (1, 2, ...).
    """

    decision: Literal["play", "cube", "take"]
    played: str
    best: str
    error: float
    unit: Literal["equity", "emg"]
    mwc_error: float | None
    action: str | None
    threshold: float
    game: int

    @property
    def flagged(self) -> bool:
        """The decision loses more than the threshold."""
        return self.error > self.threshold

    def text(self) -> str:
        """The verdict in words, e.g. ``take loses 0.420 equity (420 mp) against pass (bgbot: Double, pass)``."""
        if self.unit == "equity":
            size = f"{self.error:.3f} equity ({1000 * self.error:.0f} mp)"
        else:
            size = f"{self.error:.3f} EMG ({100 * (self.mwc_error or 0.0):.1f}% MWC)"
        tail = f" (bgbot: {self.action})" if self.action else ""
        return f"{self.played} loses {size} against {self.best}{tail}"

    def to_json(self) -> dict:
        """``{"decision", "played", "best", "error", "unit", "mwc_error", "action", "threshold", "game",
        "flagged", "text"}``, errors to 6 decimals."""
        return {
            "decision": self.decision,
            "played": self.played,
            "best": self.best,
            "error": round(self.error, 6),
            "unit": self.unit,
            "mwc_error": None if self.mwc_error is None else round(self.mwc_error, 6),
            "action": self.action,
            "threshold": self.threshold,
            "game": self.game,
            "flagged": self.flagged,
            "text": self.text(),
        }


def _cube_errors(nd: float, dt: float, dp: float) -> dict[str, float]:
    """What each cube action costs against the best one, >= 0, from the values No double, Double/Take and Double/Pass
    of the doubler (any unit that grows with the doubler's gain): "no_double" and "double" the doubler's costs,
    "take" and "pass" the taker's (:func:`bgbot.cube.decision.decision_from_values`' errors)."""
    best = max(nd, min(dt, dp))
    return {"no_double": best - nd, "double": best - min(dt, dp), "take": max(dt - dp, 0.0), "pass": max(dp - dt, 0.0)}


# -- games ----------------------------------------------------------------------------------------------------------

PROMPTS = (
    ("your turn", "roll"),
    ("your play", "play"),
    ("take or pass", "take"),
    ("another game", "another"),
    ("bgbot resigns", "accept"),
)
"""The terminal game's questions and what the page shows for each."""


class WebGame(Session):
    """A :class:`bgbot.protocols.play.Session` in its own thread, answered line by line by :meth:`send`."""

    def __init__(self, bot: Bot, game_id: str, settings: PlaySettings) -> None:
        super().__init__(bot, settings, stdin=io.StringIO(), stdout=io.StringIO())
        self.game_id = game_id
        self.names = ("you", "bgbot")
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.cond = threading.Condition()
        self.lock = threading.Lock()  # one send at a time
        self.question: str | None = None
        self.asked = 0
        self.log: list[str] = []
        self.dice_shown: tuple[int, int] | None = None
        self.finished = False
        self.error: str | None = None
        self.notes: list[TutorVerdict] = []  # the tutor's flagged verdicts, oldest first
        self.touched = time.monotonic()
        self.thread = threading.Thread(target=self._main, name=f"bgbot-game-{game_id}", daemon=True)

    def begin(self) -> None:
        """Start the game's thread; return when it asks its first question."""
        self.thread.start()
        self._wait(0)

    def _main(self) -> None:
        try:
            self.run()
        except Exception as err:  # a bug: the game ends with its message instead of a silent thread
            with self.cond:
                self.error = f"the game stopped: {err}"
        with self.cond:
            self.finished = True
            self.question = None
            self.cond.notify_all()

    # Session's i/o: messages go to the log (not the board diagrams: the page draws the board), questions wait for
    # the page.
    def say(self, text: str = "") -> None:
        with self.cond:
            if text and "\n" not in text:
                self.log.append(text)

    def show(self, g, dice=None) -> None:
        self.dice_shown = dice

    def ask(self, prompt: str) -> str:
        if prompt.startswith("play ") and "Enter confirms" in prompt:
            return ""  # the terminal's confirmation of a typed play: the page confirms (and undoes) before sending
        with self.cond:
            self.question = prompt
            self.asked += 1
            self.cond.notify_all()
        line = self.lines.get()
        if line is None:
            raise _Quit
        return line

    def _wait(self, asked: int, timeout: float = 120.0) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.finished or (self.asked > asked and self.question is not None), timeout)

    def send(self, line: str, tutor: float | None = None) -> dict:
        """Answer the waiting question with ``line`` (what a person types in ``bgbot play``) -> :meth:`state`, with
        ``"messages"`` (what the game said meanwhile) and ``"verdict"``: with ``tutor`` (a threshold, >= 0, in money
        equity or EMG) the tutor's :class:`TutorVerdict` of the line as JSON (None where the line is no decision the
        tutor judges); a flagged verdict is also kept in the state's ``"tutor"``.

        Raises:
            WebError: the game is over; a line that is not one short line; a threshold that is not a number >= 0.
        """
        line = line.strip()
        if "\n" in line or len(line) > 200:
            raise WebError("a command is one short line")
        if tutor is not None and not (isinstance(tutor, (int, float)) and 0.0 <= tutor < float("inf")):
            raise WebError(f"the tutor's threshold is a number >= 0, got {tutor!r}")
        with self.lock:
            self.touched = time.monotonic()
            verdict = None if tutor is None else self.judge(line, float(tutor))
            with self.cond:
                if self.finished:
                    raise WebError("the game is over")
                asked, start = self.asked, len(self.log)
                self.question = None
                if verdict is not None and verdict.flagged:
                    self.notes.append(verdict)
            self.lines.put(line)
            self._wait(asked)
            state = self.state()
            state["messages"] = self.log[start:]
            state["verdict"] = None if verdict is None else verdict.to_json()
            return state

    def judge(self, line: str, threshold: float = 0.0) -> TutorVerdict | None:
        """The tutor's verdict of ``line`` as the answer to the waiting question, before it is played: a play
        against the bot's ranking at the bot's ply (:meth:`bgbot.api.Bot.rank_plays` with the game's cube and
        score); ``roll`` or ``double`` (where the player may double) against the bot's cube analysis of the player's
        position; ``take`` or ``pass`` against the bot's cube analysis of the double it offers
        (:meth:`bgbot.api.Bot.cube_action`, as the bot decides its own cube actions). None for any other line (an
        illegal play, a forced one, ``hint``, ``resign``, ...) or when no question waits."""
        with self.cond:
            question, finished = self.question, self.finished
        g = self.current
        if finished or g is None or question is None:
            return None
        kind = next((k for p, k in PROMPTS if question.startswith(p)), None)
        word = line.lower()
        number = len(self.games) + 1
        if kind == "roll" and word in ("", "roll", "r", "double"):
            if not self.may_double(g, HUMAN):
                return None
            cube, match = self.states(g, HUMAN)
            d = self.bot.cube_action(g.pos[HUMAN], cube, match)
            played = "double" if word == "double" else "no double"
            best = "double" if d.kind.doubles else "no double"
            return _cube_verdict("cube", d, cube, match, played, best, threshold, number)
        if kind == "take" and word in ("take", "t", "pass", "p", "drop"):
            cube, match = self.states(g, BOT)
            d = self.bot.cube_action(g.pos[BOT], cube, match)
            played = "take" if word in ("take", "t") else "pass"
            best = "take" if d.answer.takes else "pass"
            return _cube_verdict("take", d, cube, match, played, best, threshold, number)
        if kind == "play" and self.dice_shown is not None:
            pos, dice = g.pos[HUMAN], self.dice_shown
            try:
                play = notation.parse_play(pos, dice, line)
            except BgbotError:
                return None  # not a play: the game says why
            cube, match = self.states(g, HUMAN)
            ranked = self.bot.rank_plays(pos, dice, cube, match, ply=self.ply)
            if len(ranked) < 2:
                return None  # a forced play (or none)
            target = bytes(board.flip(np.asarray(play.afterstate, dtype=np.int8)))  # as the opponent sees it
            mine = next(i for i, r in enumerate(ranked) if bytes(np.asarray(r.afterstate, dtype=np.int8)) == target)
            played = notation.format_play(pos, play)
            unit: Literal["equity", "emg"] = "equity" if match.is_money else "emg"
            mwc_error: float | None = None
            if match.is_money:
                error = ranked[0].equity - ranked[mine].equity
            else:
                mwc = [float(ranked[0].mwc or 0.0), float(ranked[mine].mwc or 0.0)]  # set at a match score
                emg = cube_lib.normalised_equity(mwc, cube, match)
                error, mwc_error = float(emg[0] - emg[1]), max(mwc[0] - mwc[1], 0.0)
            return TutorVerdict(
                "play", played, ranked[0].play, max(error, 0.0), unit, mwc_error, None, threshold, number
            )
        return None

    def stop(self) -> None:
        self.lines.put(None)

    def state(self) -> dict:
        """``{"game_id", "match_length", "score": [you, bgbot], "question", "prompt": roll|play|take|another|over,
        "points" (26 counts from your side), "position_id", "gnubg_id", "dice", "cube", "crawford", "games",
        "log", "tutor" (the tutor's flagged verdicts, :class:`TutorVerdict` as JSON, the last 40), "plays" (with dice:
        the legal plays), "match_over"}``."""
        with self.cond:
            question, finished, log = self.question, self.finished, list(self.log)
        g = getattr(self, "current", None)
        kind = "over" if finished else next((k for p, k in PROMPTS if question and question.startswith(p)), "wait")
        out: dict = {
            "game_id": self.game_id,
            "match_length": self.length,
            "score": list(self.score),
            "question": question,
            "prompt": kind,
            "games": len(self.games),
            "log": log[-40:],
            "error": self.error,
            "tutor": [v.to_json() for v in self.notes[-40:]],
        }
        if g is not None:
            pos = g.pos[HUMAN]
            dice = self.dice_shown if kind == "play" else None
            owner = "centre" if g.owner < 0 else ("me" if g.owner == HUMAN else "opponent")
            try:  # a finished match has no Match ID: its score is past the length
                gid: str | None = gnubg_id(pos, *self.states(g, HUMAN), dice)
            except BgbotError:
                gid = None
            out.update(
                points=[int(v) for v in pos],
                position_id=positionid.encode(pos),
                gnubg_id=gid,
                dice=list(dice) if dice else None,
                cube={"value": g.cube, "owner": owner},
                crawford=g.crawford,
                may_double=kind == "roll" and self.may_double(g, HUMAN),
                pips=[int(v) for v in board.pip_counts(pos)],
                off=[int(v) for v in board.off_counts(pos)],
            )
        return out

    def mat(self) -> str:
        """The finished games as a Jellyfish ``.mat`` file (as ``bgbot play --save`` writes them)."""
        return matfile.match_text(self.names, self.games, self.length, jacoby=None if self.length else self.jacoby)


def _cube_verdict(
    decision: Literal["cube", "take"],
    d: cube_lib.CubeDecision,
    cube: CubeState,
    match: MatchState,
    played: str,
    best: str,
    threshold: float,
    game: int,
) -> TutorVerdict:
    """The verdict of a cube action ``played`` against ``best`` (the bot's), from the doubler's cube analysis ``d``
    (``cube``, ``match`` seen from the doubler): the difference of their errors, in equity or (a match) EMG."""
    key = {"no double": "no_double", "double": "double", "take": "take", "pass": "pass"}
    nd, dt, dp = (d.equities[k] for k in ("no_double", "double_take", "double_pass"))
    errors = _cube_errors(nd, dt, dp)
    mwc_error = None
    if d.unit == "mwc":
        emg = cube_lib.normalised_equity([nd, dt, dp], cube, match)
        mwc_error = max(errors[key[played]] - errors[key[best]], 0.0)
        errors = _cube_errors(*(float(v) for v in emg))
    error = max(errors[key[played]] - errors[key[best]], 0.0)
    unit: Literal["equity", "emg"] = "emg" if d.unit == "mwc" else "equity"
    return TutorVerdict(decision, played, best, error, unit, mwc_error, d.action, threshold, game)


class Games:
    """The games in progress, by game ID; at most ``limit`` (the least recently used one ends for a new one)."""

    def __init__(self, bot: Bot, limit: int = 32) -> None:
        self.bot, self.limit = bot, limit
        self.games: dict[str, WebGame] = {}
        self.lock = threading.Lock()

    def new(
        self,
        match_length: int = 0,
        ply: int = 0,
        seed: int | None = None,
        position: str | None = None,
        bgbot_first: bool = False,
    ) -> WebGame:
        """A new game (started: the opening roll played, the first question asked), as ``bgbot play
        [--match-length N] [--ply N] [--seed S] [--position P [--bgbot-first]]`` starts it: from ``position`` (the
        first game only; seen from the side on roll, the player unless ``bgbot_first``; the bot on roll in it moves
        first without an opening roll; dice the ID carries are the side on roll's first roll).

        Raises:
            PlayError: bad options. bgbot.formats.context.ContextError, bgbot.rules.board.PositionError: a position
                that cannot be read.
        """
        if bgbot_first and not position:
            raise WebError("bgbot_first needs a position")
        game = WebGame(
            self.bot,
            secrets.token_hex(8),
            PlaySettings(match_length=match_length, ply=ply, seed=seed, position=position, bot_first=bgbot_first),
        )
        with self.lock:
            if len(self.games) >= self.limit:
                oldest = min(self.games.values(), key=lambda x: x.touched)
                del self.games[oldest.game_id]
                oldest.stop()
            self.games[game.game_id] = game
        game.begin()
        return game

    def get(self, game_id: str) -> WebGame:
        with self.lock:
            game = self.games.get(game_id)
        if game is None:
            raise WebError("no such game (it ended, or the server restarted)")
        game.touched = time.monotonic()
        return game

    def close(self) -> None:
        with self.lock:
            for g in self.games.values():
                g.stop()
            self.games.clear()


# -- rollouts ------------------------------------------------------------------------------------------------------


class Cancelled(Exception):
    """A rollout stopped because its page went away or asked to stop."""


@dataclass(frozen=True)
class RolloutRequest:
    """A rollout as ``bgbot rollout`` runs it: with dice the candidate plays, without the position; ``cube`` cubeful."""

    ctx: context.Context
    settings: ro.RolloutSettings
    candidates: int | None = None


def check_rollout(req: RolloutRequest) -> None:
    """Refuse a rollout that cannot run before any work (:func:`run_rollout` checks it too; the HTTP API before its
    stream starts).

    Raises:
        RolloutError: ``candidates`` below 1 (:func:`bgbot.arena.rollout.check_max_candidates`); a cubeful rollout at a match score; a cubeful rollout of a position
            (no dice) whose side on roll cannot double.
    """
    ctx, settings = req.ctx, req.settings
    ro.check_max_candidates(req.candidates)
    if settings.cube and not ctx.match.is_money:
        raise ro.RolloutError("cubeful rollouts at a match score are not implemented; money positions only")
    if settings.cube and ctx.dice is None and ctx.cube.owner_code < 0:
        raise ro.RolloutError("the side on roll cannot double (the opponent owns the cube): nothing to roll out")


def run_rollout(
    bot: Bot, req: RolloutRequest, progress: Callable[[dict], object], cancelled: Callable[[], bool]
) -> dict:
    """Run a rollout in this thread (one process: nothing outlives it); ``progress`` gets ``{"done", "total",
    "values": [running mean per start], "se": [its standard error]}`` after each work unit; ``cancelled()`` True
    stops it (raises :class:`Cancelled`). Returns the ``bgbot rollout --json`` answer (without timings).

    Raises:
        RolloutError, ContextError: bad settings or position.
    """
    check_rollout(req)
    ctx, settings = req.ctx, req.settings
    cube = (ctx.cube.value, ctx.cube.owner_code)
    if ctx.dice is not None:
        cands = ro.candidates(bot.evaluator, ctx.position, ctx.dice, (), req.candidates)
    else:
        cands = [ro.Candidate("(position)", ctx.position)]
    n = 2 if (settings.cube and ctx.dice is None) else len(cands)
    total = settings.trials * n
    seen: list[np.ndarray] = []
    done = [0]

    def on_result(result) -> None:
        if cancelled():
            raise Cancelled
        _, r = result  # (K, T, 5 or 6)
        done[0] += r.shape[0] * r.shape[1]
        msg: dict = {"done": done[0], "total": total}
        if r.shape[0] == n:
            seen.append(r[..., 5] if r.shape[2] > 5 else equity(r[..., :5]))
            eq = np.concatenate(seen, axis=1)  # (K, T so far)
            msg["values"] = [round(float(v), 6) for v in eq.mean(axis=1)]
            msg["se"] = (
                [round(float(v), 6) for v in eq.std(axis=1, ddof=1) / np.sqrt(eq.shape[1])] if eq.shape[1] > 1 else None
            )
        progress(msg)

    out: dict = {"position_id": ctx.position_id, "dice": list(ctx.dice) if ctx.dice else None}
    out["settings"] = settings.to_json()
    if ctx.dice is not None:
        ro.rollout_plays(bot.evaluator, cands, settings, progress=on_result, cube=cube)
        out["plays"] = ro.rank_candidates(cands)
    elif settings.cube:
        out["cube"] = ro.cube_rollout(bot.evaluator, ctx.position, settings, cube, 1, None, on_result)
        if ctx.double_offered:  # the taker's answer, as bgbot rollout --cube gives it
            out["cube"], out["double_offered"] = ro.taker_answer(out["cube"], ctx.match.beavers), True
    else:
        res = ro._run(bot.evaluator, ctx.position[None], np.ones(1, dtype=bool), settings, 1, None, on_result)
        out["position"] = ro.estimate_json(ro.Estimate.of(res[0]))
    starts = np.stack([c.afterstate for c in cands])  # the candidates' afterstates, or the position itself
    out["se_excludes_truncation_bias"] = ro.se_excludes_truncation_bias(settings, starts)  # as bgbot rollout --json
    out["labels"] = (
        [c.play for c in cands]
        if ctx.dice is not None
        else (["no double", "double/take"] if settings.cube else ["(position)"])
    )
    return out


# -- analysis --------------------------------------------------------------------------------------------------------


def analyse(bot: Bot, text: str, ply: int = 0) -> dict:
    """``bgbot analyse --json`` of ``.mat`` text, each decision with the ``"position_id"`` and ``"gnubg_id"`` of
    its position (from the side deciding; dice for a checker play) for the page's board.

    Raises:
        AnalysisError, MatFileError: a file that cannot be read or replayed.
    """
    match = matfile.read_match(text, "the uploaded match")
    result = analysis.analyse_match(bot, match, ply, source="the uploaded match")
    where = []
    for g in match.games:
        for d in matfile.replay(g, match.length, True, source=f"game {g.number}"):
            where.append(gnubg_id(d.position, d.cube, d.match, d.dice))
    for d, gid in zip(result["decisions"], where):
        d.setdefault("position_id", gid.split(":")[0])
        d["gnubg_id"] = gid
    return result


# -- models and runs -------------------------------------------------------------------------------------------------

_BOLD = re.compile(r"\*\*([^*]{3,120})\*\*")


def models(models_dir: str | None) -> list[dict]:
    """The models of ``models_dir`` (shipped, ``NAME.pt``) and ``models_dir/candidates``: ``{"name", "kind",
    "size_bytes", "title", "figures": the card's first bold figures}`` (``NAME-card.md`` beside it)."""
    if not models_dir or not Path(models_dir).is_dir():
        return []
    root = Path(models_dir)
    out = []
    for kind, folder in (("shipped", root), ("candidate", root / "candidates")):
        if not folder.is_dir():
            continue
        for pt in sorted(folder.glob("*.pt")):
            card = root / f"{pt.stem}-card.md"
            title, figures = None, []
            if kind == "shipped" and card.is_file():
                text = card.read_text(encoding="utf-8", errors="replace")
                first = text.splitlines()[0] if text else ""
                title = first.lstrip("# ").strip() or None
                figures = _BOLD.findall(text)[:4]
            out.append(
                {"name": pt.stem, "kind": kind, "size_bytes": pt.stat().st_size, "title": title, "figures": figures}
            )
    return out


def gates(models_dir: str | None) -> list[dict]:
    """The gate records (``python -m training gate --out FILE.json``) under ``models_dir/candidates``, newest first:
    ``{"file", "candidate", "against", "created", "accepted", "results": [{"opponent", "ppg", "ci_low", "ci_high",
    "games"}]}``. Files that are not gate records are skipped."""
    if not models_dir or not (Path(models_dir) / "candidates").is_dir():
        return []
    root = Path(models_dir)
    out = []
    for path in sorted((root / "candidates").glob("*/gate*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            results = [
                {
                    "opponent": str(opp),
                    **{k: float(r[k]) for k in ("ppg", "ci_low", "ci_high")},
                    "games": int(r["games"]),
                }
                for opp, r in record["results"].items()
            ]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        out.append(
            {
                "file": str(path.relative_to(root)),
                "candidate": str(record.get("candidate", "")),
                "against": str(record.get("against", "")),
                "created": str(record.get("created", "")),
                "accepted": bool(record.get("accepted", False)),
                "results": results,
            }
        )
    return sorted(out, key=lambda g: g["created"], reverse=True)


def _run_files(runs_dir: str | None, models_dir: str | None) -> dict[str, Path]:
    found: dict[str, Path] = {}
    if models_dir and Path(models_dir).is_dir():
        for f in sorted(Path(models_dir).glob("*-progress.jsonl")):
            found[f.name[: -len("-progress.jsonl")]] = f
    if runs_dir and Path(runs_dir).is_dir():
        for f in sorted(Path(runs_dir).glob("*/eval.jsonl")):
            found[f.parent.name] = f
    return found


def runs(runs_dir: str | None, models_dir: str | None) -> list[str]:
    """The names of the training runs with progress records: ``RUNS/NAME/eval.jsonl`` and ``MODELS/NAME-progress.jsonl``."""
    return list(_run_files(runs_dir, models_dir))


def run_records(runs_dir: str | None, models_dir: str | None, name: str) -> list[dict]:
    """A run's progress records ``{"games_trained", "ppg", "ci_low", "ci_high", "opponent"}``. Raises WebError."""
    path = _run_files(runs_dir, models_dir).get(name)
    if path is None:
        raise WebError("no such training run")
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line being written
        if isinstance(rec, dict) and "games_trained" in rec and "ppg" in rec:
            out.append({k: rec.get(k) for k in ("games_trained", "ppg", "ci_low", "ci_high", "opponent")})
    return out


__all__ += ["BOT", "Cancelled", "analyse", "models", "runs", "run_records", "run_rollout", "gnubg_id"]
