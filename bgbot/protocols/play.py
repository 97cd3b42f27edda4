"""``bgbot play``: a person plays the bot in the terminal.

The board is :func:`bgbot.formats.diagram.draw` (the drawing of ``bgbot show``), always from the person's side (X, at
the bottom), with pip counts, the cube and the score. Dice are rolled by the program (``--dice auto``, seeded with
``--seed``) or typed by the person for both sides (``--dice manual``). Plays are typed in the notation
:func:`bgbot.formats.notation.parse_play` reads (``8/5 6/5``, ``13/7/2``, ``bar/22``, ``6/off``); an illegal play is
explained and asked again.

Commands, before rolling: ``roll`` (or an empty line), ``double``, ``hint`` (the cube action), ``resign [single|gammon|
backgammon]``, ``board``, ``quit``. With dice: a play, then Enter to confirm it or ``undo`` to take it back; ``hint``
(the ranked plays), ``resign``, ``board``, ``quit``. When doubled: ``take``, ``pass``, ``hint``, ``resign``. Dice are
shown high first, as GNU Backgammon shows them (``5-2``). Money play by default (a session: after each game ``another
game? [y/n]``), ``--match-length N`` for a match (Crawford rule). The finished games are saved as a Jellyfish ``.mat``
file after each game (``--save PATH``, written atomically).

``quit`` asks first; then, as on the end of input or a hang-up (SIGHUP), the session with the game in progress (the
position, the cube, the score, the dice already rolled and the dice generator's state) is saved as JSON beside the
``.mat`` file (``PATH.session.json``) and ``--resume FILE`` continues it where it stopped.

The bot doubles, takes and passes by :meth:`bgbot.api.Bot.cube_action`, plays the best play of
:meth:`bgbot.api.Bot.rank_plays` at ``--ply``, and accepts a resignation when the points offered are at least its
cubeless equity of the position (in cube units; with the dice rolled, the equity after the person's best play). It
resigns a hopeless game itself as GNU Backgammon does: before its roll, when it cannot win (winning chance below
0.1%) and its cubeless equity is that of a resignation (-1, -2 or -3 within 0.01), it offers that resignation; the
person accepts or declines, and a declined level is not offered again in that game.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from bgbot.api import Bot
from bgbot.errors import BgbotError
from bgbot.evaluation.search import check_ply
from bgbot.files import not_a_file, write_atomic
from bgbot.formats import context, matfile, notation
from bgbot.formats.diagram import draw
from bgbot.formats.figures import figure, ply_note
from bgbot.rules import board
from bgbot.rules.movegen_scalar import legal_plays
from bgbot.rules.state import CubeState, MatchState

__all__ = ["PlayError", "PlaySettings", "Session", "run"]

HUMAN, BOT = 0, 1
LEVELS = {"single": 1, "gammon": 2, "backgammon": 3}
SESSION_FORMAT = "bgbot-play-session"
SESSION_VERSION = 1
HOPELESS = 0.001
"""The bot offers a resignation only when its winning chance is below this ..."""
RESIGN_TOLERANCE = 0.01
"""... and its cubeless equity is within this of -1, -2 or -3 (the resignation's value)."""


class PlayError(BgbotError):
    """Bad options for ``bgbot play``."""


class _Quit(Exception):
    """The session stops here: ``quit`` confirmed, the end of input, or a hang-up; the game in progress is saved."""


@dataclass
class _Game:
    pos: list  # [human view, bot view], (26,) int8 each
    turns: list = field(default_factory=list)
    cube: int = 1
    owner: int = -1  # -1 centre, else the side that owns it
    crawford: bool = False
    declined: int = 0  # the highest resignation level of the bot's the person declined in this game

    def to_json(self) -> dict:
        """The game as JSON; a double still awaiting its answer is left out (the doubler decides again on resuming)."""
        turns = self.turns
        if turns and isinstance(turns[-1], matfile.CubeAction) and turns[-1].kind == "double":
            turns = turns[:-1]
        return {
            "position": [int(v) for v in self.pos[HUMAN]],
            "turns": [_turn_json(t) for t in turns],
            "cube": self.cube,
            "owner": self.owner,
            "crawford": self.crawford,
            "declined": self.declined,
        }

    @classmethod
    def from_json(cls, d: dict) -> _Game:
        human = board.validate(np.array(d["position"], dtype=np.int8))
        turns = [_turn_from_json(t) for t in d["turns"]]
        return cls(
            [human, board.flip(human)], turns, int(d["cube"]), int(d["owner"]), bool(d["crawford"]), int(d["declined"])
        )


def _turn_json(t) -> dict:
    if isinstance(t, matfile.Turn):
        return {"side": t.side, "dice": list(t.dice), "play": t.play}
    return {"side": t.side, "cube": t.kind, "value": t.value}


def _turn_from_json(d: dict):
    if "cube" in d:
        return matfile.CubeAction(int(d["side"]), str(d["cube"]), int(d["value"]))
    return matfile.Turn(int(d["side"]), (int(d["dice"][0]), int(d["dice"][1])), str(d["play"]))


def session_path(save: str) -> Path:
    """Where a session stopped with the game in progress is saved: ``SAVE.session.json`` beside the ``.mat`` file."""
    return Path(save).with_suffix(".session.json")


@dataclass(frozen=True)
class PlaySettings:
    """The options of a session (``bgbot play``'s), checked by :class:`Session`.

    Attributes:
        match_length: 0 money play (a session of games), else a match to that many points (Crawford rule).
        ply: the bot's lookahead, 0 .. 2.
        manual_dice: the person types the dice for both sides (``--dice manual``).
        seed: the dice generator's seed, 0 .. 2**63 - 1 (``None``: fresh entropy).
        save: the ``.mat`` file the finished games are saved to (its directory must exist).
        position: the first game starts here (a POSITION as the command line reads it) instead of the opening, with
            no opening roll: the person is on roll in it, before rolling; or, when the ID carries dice (an XGID or a
            Match ID with dice rolled), with those dice to play, as GNU Backgammon plays on after ``set xgid`` or
            ``set matchid`` with dice.
        bot_first: with ``position``, the bot is on roll in it instead.
        jacoby: the Jacoby rule in money play.
        resume: a session file (``SAVE.session.json``) to continue; its match, score and game replace the above.
    """

    match_length: int = 0
    ply: int = 0
    manual_dice: bool = False
    seed: int | None = None
    save: str | None = None
    position: str | None = None
    bot_first: bool = False
    jacoby: bool = True
    resume: str | None = None


class Session:
    """One person against the bot. ``run()`` plays until the session or match ends, the person quits or input ends.

    Args:
        bot: the bot.
        settings: :class:`PlaySettings`.
        stdin, stdout: where the person's lines come from and the game is shown (default: the terminal's).

    Raises:
        PlayError: a bad setting (match length, seed, a save directory that does not exist, a save path that is not a
            regular file, a damaged session file).
        bgbot.evaluation.search.SearchError: a ply not 0 .. 2 (:func:`bgbot.evaluation.search.check_ply`).
    """

    def __init__(
        self,
        bot: Bot,
        settings: PlaySettings = PlaySettings(),
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        match_length, ply, seed, save = settings.match_length, settings.ply, settings.seed, settings.save
        if match_length < 0:
            raise PlayError(f"--match-length must be >= 0, got {match_length}")
        check_ply(ply)
        if seed is not None and not 0 <= seed <= 2**63 - 1:
            raise PlayError(f"--seed must be in 0 .. 2**63 - 1, got {seed}")
        if match_length:
            MatchState(match_length)  # refuses a match longer than the match equity table, before any game
        if save and not Path(save).parent.is_dir():
            raise PlayError(f"--save {save!r}: no directory {str(Path(save).parent)!r} to save the games in")
        if save and Path(save).exists() and not Path(save).is_file():
            raise PlayError(not_a_file("--save", save, "the .mat file's name"))
        self.bot, self.length, self.ply, self.manual = bot, match_length, ply, settings.manual_dice
        self.rng = np.random.default_rng(seed)
        self.save = save
        given = context.parse_position(settings.position) if settings.position else None
        self.start = given.position if given is not None else None
        self.start_dice = given.dice if given is not None else None  # rolled in it: the side on roll plays them
        self.bot_first = settings.bot_first
        self.jacoby = settings.jacoby
        self.stdin, self.out = stdin or sys.stdin, stdout or sys.stdout
        self.score = [0, 0]
        self.games: list[matfile.Game] = []
        self.crawford_done = False
        self.names = ("you", "bgbot")
        self.current: _Game | None = None
        self.at: tuple[int, tuple[int, int] | None] = (HUMAN, None)  # who acts next in the current game, dice rolled
        self.resumed: tuple[_Game, int, tuple[int, int] | None] | None = None
        if settings.resume:
            self._load(settings.resume)

    # -- saving and resuming ---------------------------------------------------------------------------------------

    def _load(self, path: str) -> None:
        """Continue a session saved by :meth:`save_session`. Raises PlayError naming the file and what is wrong."""
        try:
            d = json.loads(Path(path).read_text())
            if not isinstance(d, dict) or d.get("format") != SESSION_FORMAT or d.get("version") != SESSION_VERSION:
                raise PlayError(f"--resume {path!r}: not a bgbot play session (format {SESSION_FORMAT!r})")
            self.length, self.jacoby = int(d["match_length"]), bool(d["jacoby"])
            self.manual, self.save = bool(d["manual_dice"]), d["save"]
            self.score = [int(v) for v in d["score"]]
            self.crawford_done = bool(d["crawford_done"])
            self.games = [
                matfile.Game(tuple(_turn_from_json(t) for t in g["turns"]), int(g["winner"]), int(g["points"]))
                for g in d["games"]
            ]
            self.rng.bit_generator.state = d["rng"]
            if d["current"] is not None:
                game = _Game.from_json(d["current"])
                side, dice = int(d["at"]["side"]), d["at"]["dice"]
                dice = None if dice is None else (int(dice[0]), int(dice[1]))
                if side not in (HUMAN, BOT):
                    raise ValueError(f"the side to act is {HUMAN} or {BOT}, got {side}")
                if dice is not None and not all(1 <= v <= 6 for v in dice):
                    raise ValueError(f"each die is 1 to 6, got {list(dice)}")
                if game.cube < 1 or game.cube & (game.cube - 1) or game.owner not in (-1, HUMAN, BOT):
                    raise ValueError(f"no such cube: value {game.cube}, owner {game.owner}")
                self.resumed = (game, side, dice)
            if len(self.score) != 2 or min(self.score) < 0:
                raise ValueError(f"the score is two numbers >= 0, got {self.score}")
        except PlayError:
            raise
        except OSError as err:
            raise PlayError(f"--resume {path!r}: {err.strerror or err}") from None
        except (ValueError, KeyError, TypeError, IndexError, OverflowError, BgbotError) as err:
            raise PlayError(f"--resume {path!r}: a damaged session file ({type(err).__name__}: {err})") from None
        self.start, self.bot_first = None, False

    def save_session(self) -> Path | None:
        """Save the session (finished games, score, the game in progress and who acts next, the dice generator) as JSON,
        atomically, to :func:`session_path`; None when ``save`` is not set."""
        if not self.save:
            return None
        game = self.current
        side, dice = self.at
        data = {
            "format": SESSION_FORMAT,
            "version": SESSION_VERSION,
            "match_length": self.length,
            "jacoby": self.jacoby,
            "manual_dice": self.manual,
            "save": self.save,
            "score": self.score,
            "crawford_done": self.crawford_done,
            "games": [
                {"turns": [_turn_json(t) for t in g.turns], "winner": g.winner, "points": g.points} for g in self.games
            ],
            "current": None if game is None else game.to_json(),
            "at": {"side": side, "dice": None if dice is None else list(dice)},
            "rng": self.rng.bit_generator.state,
        }
        return write_atomic(session_path(self.save), json.dumps(data, indent=1) + "\n")

    # -- i/o --------------------------------------------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            raise _Quit
        return line.strip()

    def ask(self, prompt: str) -> str:
        """A line typed at ``prompt``, stripped. ``quit`` asks for confirmation and stops the session (raises _Quit) or
        asks ``prompt`` again; the end of input stops it."""
        while True:
            line = self._read(prompt)
            if line.lower() != "quit":
                return line
            where = f" and saved to {session_path(self.save)}" if self.save and self.current is not None else ""
            if self._read(f"quit? the game in progress is kept{where} [y/n] ").lower() in ("y", "yes"):
                raise _Quit

    def dice(self, who: int) -> tuple[int, int]:
        if not self.manual:
            d = self.rng.integers(1, 7, size=2)
            return int(max(d)), int(min(d))  # high first, as GNU Backgammon shows them
        while True:
            text = self.ask("dice for your roll: " if who == HUMAN else "dice for bgbot's roll: ")
            try:
                d1, d2 = context.parse_dice(text)
            except BgbotError as err:
                self.say(f"  {err}")
                continue
            return max(d1, d2), min(d1, d2)

    # -- state views ------------------------------------------------------------------------------------------------

    def states(self, g: _Game, side: int) -> tuple[CubeState, MatchState]:
        owner = "centre" if g.owner < 0 else ("me" if g.owner == side else "opponent")
        if self.length:
            match = MatchState(self.length, (self.score[side], self.score[1 - side]), g.crawford, self.jacoby)
        else:
            match = MatchState(jacoby=self.jacoby)
        return CubeState(g.cube, owner), match  # type: ignore[arg-type]

    def may_double(self, g: _Game, side: int) -> bool:
        return (
            not g.crawford and g.owner in (-1, side) and not (self.length and self.score[side] + g.cube >= self.length)
        )

    def show(self, g: _Game, dice=None) -> None:
        cube, match = self.states(g, HUMAN)
        self.say(draw(g.pos[HUMAN], dice=dice, cube=cube, match=match, names=self.names))

    # -- one game ---------------------------------------------------------------------------------------------------

    def play_game(self) -> tuple[int, int]:
        """Play one game (or the resumed one from where it stopped); returns (winner side, points)."""
        if self.resumed is not None:
            g, side, dice = self.resumed
            self.resumed, self.current = None, g
            self.say("Resuming the game in progress.")
            return self._play_from(g, side, dice)
        given = self.start is not None
        start = board.starting_position() if self.start is None else self.start
        human_view = start if not self.bot_first else board.flip(start)
        self.start = None  # only the first game
        crawford = bool(self.length) and not self.crawford_done and (self.length - 1) in self.score
        if crawford:
            self.crawford_done = True
        human = np.array(human_view, dtype=np.int8)
        g = _Game([human, board.flip(human)], crawford=crawford)
        self.current = g
        if given:  # no opening roll: the side on roll in the given position (you, or bgbot first) plays its dice
            side, dice, self.bot_first = (BOT if self.bot_first else HUMAN), self.start_dice, False
            self.start_dice = None
        else:
            side, dice = self.opening()
        return self._play_from(g, side, dice)

    def _play_from(self, g: _Game, side: int, dice: tuple[int, int] | None) -> tuple[int, int]:
        """Play ``g`` on from ``side``'s turn, with ``dice`` already rolled or None before the roll; returns (winner
        side, points)."""
        while True:
            if dice is None:
                self.at = (side, None)
                result = self.before_roll(g, side)
                if result is not None:
                    return result
                dice = self.dice(side)
            self.at = (side, dice)
            result = self.move(g, side, dice)
            if result is not None:
                return result
            side, dice = 1 - side, None

    def _result(self, g: _Game, side: int) -> int:
        """Points (1, 2, 3) the mover has won with its last play, or 0."""
        r = int(board.game_result(g.pos[side][None, :])[0])
        return max(r, 0)

    def opening(self) -> tuple[int, tuple[int, int] | None]:
        while True:
            if self.manual:
                text = self.ask("opening roll (your die, then bgbot's, e.g. 31): ")
                try:
                    mine, theirs = context.parse_dice(text)
                except BgbotError as err:
                    self.say(f"  {err}")
                    continue
            else:
                mine, theirs = (int(v) for v in self.rng.integers(1, 7, size=2))
            if mine == theirs:
                self.say(f"Opening roll {mine}-{theirs}: a tie, rolling again.")
                continue
            who = HUMAN if mine > theirs else BOT
            self.say(
                f"Opening roll: you {mine}, bgbot {theirs}: {'you move' if who == HUMAN else 'bgbot moves'} first."
            )
            return who, (max(mine, theirs), min(mine, theirs))

    def before_roll(self, g: _Game, side: int):
        """Cube and resignation before a roll; returns (winner, points) when the game ends here."""
        if side == BOT:
            offered = self.bot_resigns(g)
            if offered is not None:
                return offered
            if self.may_double(g, BOT):
                cube, match = self.states(g, BOT)
                d = self.bot.cube_action(g.pos[BOT], cube, match)
                if d.cube_available and d.kind.doubles:
                    g.turns.append(matfile.CubeAction(BOT, "double", g.cube * 2))
                    self.show(g)
                    self.say(f"bgbot doubles to {g.cube * 2}.")
                    while True:
                        answer = self.ask("take or pass? ").lower()
                        if answer == "hint":
                            self.say(f"  bgbot's view from its side: {d.action}")
                        elif answer in ("take", "t"):
                            g.turns.append(matfile.CubeAction(HUMAN, "take"))
                            g.cube, g.owner = g.cube * 2, HUMAN
                            break
                        elif answer in ("pass", "p", "drop"):
                            g.turns.append(matfile.CubeAction(HUMAN, "pass"))
                            return BOT, g.cube
                        elif answer.split()[:1] == ["resign"]:
                            result = self.resign(g, answer.split()[1:], on_roll=BOT)
                            if result is not None:
                                g.turns.pop()  # the double is not answered: the game ends by the resignation
                                return result
                        else:
                            self.say("  answer take or pass (or hint, resign)")
            return None
        self.show(g)
        while True:
            answer = self.ask("your turn (roll, double, hint, resign, board, quit): ").lower()
            words = answer.split()
            if answer in ("", "roll", "r"):
                return None
            if answer == "board":
                self.show(g)
            elif answer == "hint":
                cube, match = self.states(g, HUMAN)
                d = self.bot.cube_action(g.pos[HUMAN], cube, match)
                eq = d.equities
                self.say(
                    f"  {d.action} (no double {figure(eq['no_double'], '+.3f')}, double/take {figure(eq['double_take'], '+.3f')}, "
                    f"double/pass {figure(eq['double_pass'], '+.3f')}{' MWC' if d.unit == 'mwc' else ''})"
                )
            elif answer == "double":
                if not self.may_double(g, HUMAN):
                    self.say("  you cannot double now" + (" (Crawford game)" if g.crawford else ""))
                    continue
                g.turns.append(matfile.CubeAction(HUMAN, "double", g.cube * 2))
                cube, match = self.states(g, HUMAN)
                d = self.bot.cube_action(g.pos[HUMAN], cube, match)
                if d.answer.takes:
                    g.turns.append(matfile.CubeAction(BOT, "take"))
                    g.cube, g.owner = g.cube * 2, BOT
                    self.say(f"bgbot takes; the cube is at {g.cube}.")
                    return None
                g.turns.append(matfile.CubeAction(BOT, "pass"))
                self.say("bgbot passes.")
                return HUMAN, g.cube
            elif words and words[0] == "resign":
                result = self.resign(g, words[1:])
                if result is not None:
                    return result
            else:
                self.say(f"  unknown command {answer!r}")

    def _points(self, g: _Game, level: int) -> int:
        """Points of a game won at ``level`` (1, 2, 3): times the cube; one cube with the Jacoby rule, cube centred."""
        return g.cube if not self.length and self.jacoby and g.owner < 0 else level * g.cube

    def resign(self, g: _Game, words: list[str], on_roll: int = HUMAN, dice: tuple[int, int] | None = None):
        """The person resigns at ``level`` (words[0], default single); the bot accepts when the level is at least its
        cubeless equity: before a roll the evaluation of the position (``on_roll`` to roll), with ``dice`` rolled the
        flipped value of the person's best play. Returns (BOT, points) when accepted, else None."""
        level = LEVELS.get(words[0] if words else "single")
        if level is None:
            self.say("  resign single, gammon or backgammon")
            return None
        if dice is not None:
            expected = -self.bot.rank_plays(g.pos[HUMAN], dice)[0].equity
        elif on_roll == BOT:
            expected = self.bot.evaluate(g.pos[BOT]).equity
        else:
            expected = self.bot.evaluate(g.pos[HUMAN]).flipped().equity
        if level >= expected - 1e-9:
            self.say(f"bgbot accepts your resignation ({list(LEVELS)[level - 1]}).")
            return BOT, self._points(g, level)
        self.say(f"bgbot declines: it expects more than {level} point(s) per cube here.")
        return None

    def bot_resigns(self, g: _Game):
        """Before its roll, the bot offers the resignation whose value its cubeless equity has when it cannot win (GNU
        Backgammon's rule); returns (HUMAN, points) when the person accepts, else None."""
        p = self.bot.evaluate(g.pos[BOT])
        if p.win >= HOPELESS:
            return None
        level = next((r for r in (3, 2, 1) if abs(p.equity + r) < RESIGN_TOLERANCE), None)
        if level is None or level <= g.declined:
            return None
        points = self._points(g, level)
        self.show(g)
        name = list(LEVELS)[level - 1]
        while True:
            s = "s" if points != 1 else ""
            answer = self.ask(f"bgbot resigns a {name} game ({points} point{s}). accept? [y/n] ").lower()
            if answer in ("y", "yes", "accept"):
                return HUMAN, points
            if answer in ("n", "no", "decline"):
                g.declined = level
                self.say("You decline; play on.")
                return None

    def move(self, g: _Game, side: int, dice: tuple[int, int]):
        """Play ``side``'s roll; returns (winner, points) when the game ends by the play or a resignation, else None."""
        pos = g.pos[side]
        plays = legal_plays(pos, *dice)
        if side == BOT:
            cube, match = self.states(g, BOT)
            best = self.bot.rank_plays(pos, dice, cube, match, ply=self.ply)[0]
            after = np.asarray(best.afterstate, dtype=np.int8)
            self.say(f"bgbot rolls {dice[0]}-{dice[1]} and plays {best.play}.")
        else:
            self.show(g, dice)
            if not plays:
                self.say(f"You rolled {dice[0]}-{dice[1]}: no legal play.")
                after = board.flip(pos)
            else:
                chosen = self.ask_play(g, pos, dice)
                if isinstance(chosen, tuple):  # a resignation after rolling: the roll is kept, as GNU Backgammon does
                    g.turns.append(matfile.Turn(side, dice, ""))
                    return chosen
                after = chosen
        g.turns.append(matfile.Turn(side, dice, matfile.play_steps(pos, dice, after)))
        g.pos[1 - side] = after
        g.pos[side] = board.flip(after)
        over = self._result(g, side)
        return (side, self._points(g, over)) if over else None

    def ask_play(self, g: _Game, pos, dice):
        """The person's play with ``dice``: the resulting position (bot's view), after Enter confirms it (``undo`` takes
        it back); or (winner, points) when the bot accepts a resignation."""
        while True:
            text = self.ask(f"your play with {dice[0]}-{dice[1]} (or hint, board, resign, quit): ")
            low = text.lower()
            if low == "board":
                self.show(g, dice)
                continue
            if low == "hint":
                cube, match = self.states(g, HUMAN)
                for i, r in enumerate(self.bot.rank_plays(pos, dice, cube, match, ply=self.ply)[:5], 1):
                    value = f"MWC {r.mwc:.1%}" if r.mwc is not None else f"equity {figure(r.equity, '+.3f')}"
                    self.say(f"  {i}. {r.play:<24} {value}{ply_note(r.ply, self.ply)}")
                continue
            if low.split()[:1] == ["resign"]:
                result = self.resign(g, low.split()[1:], dice=dice)
                if result is not None:
                    return result
                continue
            try:
                play = notation.parse_play(pos, dice, text)
            except BgbotError as err:
                self.say(f"  {err}")
                continue
            mine = np.asarray(play.afterstate, dtype=np.int8)
            cube, match = self.states(g, HUMAN)
            self.say(draw(mine, cube=cube, match=match, names=self.names))
            written = notation.format_play(pos, play)
            while True:
                answer = self.ask(f"play {written}? (Enter confirms, undo takes it back) ").lower()
                if answer in ("", "y", "yes", "ok"):
                    return board.flip(mine)
                if answer in ("undo", "u", "n", "no"):
                    self.show(g, dice)
                    break
                self.say(f"  {answer!r} is not an answer here: Enter confirms {written}, undo takes it back")

    # -- the session ------------------------------------------------------------------------------------------------

    def run(self) -> int:
        """Play until the session or match ends (exit status 0), or until ``quit``, the end of input or SIGHUP, which
        save the session first (see :meth:`save_session`)."""
        hangup = None
        if hasattr(signal, "SIGHUP") and threading.current_thread() is threading.main_thread():
            hangup = signal.signal(signal.SIGHUP, _hang_up)
        try:
            return self._run()
        finally:
            if hangup is not None:
                signal.signal(signal.SIGHUP, hangup)

    def _run(self) -> int:
        try:
            while True:
                if self.length:
                    self.say(
                        f"Game {len(self.games) + 1} of a {self.length}-point match, score you {self.score[0]}, "
                        f"bgbot {self.score[1]}."
                    )
                else:
                    self.say(f"Game {len(self.games) + 1}, money play; you {self.score[0]}, bgbot {self.score[1]}.")
                winner, points = self.play_game()
                assert self.current is not None
                self.games.append(matfile.Game(tuple(self.current.turns), winner, points))
                self.current = None
                self.score[winner] += points
                who = "You win" if winner == HUMAN else "bgbot wins"
                self.say(
                    f"{who} {points} point{'s' if points != 1 else ''}. Score: you {self.score[0]}, "
                    f"bgbot {self.score[1]}."
                )
                self.write()
                if self.length and max(self.score) >= self.length:
                    self.say(f"{'You win' if winner == HUMAN else 'bgbot wins'} the match.")
                    return self._done()
                if not self.length and self.ask("another game? [y/n] ").lower() not in ("y", "yes"):
                    return self._done()
        except _Quit:
            self.say("")
            if self.current is not None:
                path = self.save_session()
                if path is not None:
                    self.say(f"The game in progress is saved to {path}; continue it with: bgbot play --resume {path}")
            self.say("Bye.")
            return 0

    def _done(self) -> int:
        """The session is over: a saved session it continued is finished, so its file goes."""
        if self.save:
            session_path(self.save).unlink(missing_ok=True)
        return 0

    def write(self) -> None:
        """Save the finished games (atomically) when ``save`` is set."""
        if not self.save or not self.games:
            return
        text = matfile.match_text(self.names, self.games, self.length, jacoby=None if self.length else self.jacoby)
        path = Path(self.save)
        matfile.write_atomic(path, text)
        self.say(f"Saved to {path}.")


def _hang_up(signum, frame) -> None:
    raise _Quit


def run(bot: Bot, settings: PlaySettings) -> int:
    """Play a session in the terminal (:class:`Session`). Raises PlayError on bad settings."""
    return Session(bot, settings).run()
