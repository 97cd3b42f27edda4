"""``bgbot play``: a person plays the bot in the terminal.

The board is :func:`bgbot.formats.diagram.draw` (the drawing of ``bgbot show``), always from the person's side (X, at
the bottom), with pip counts, the cube and the score. Dice are rolled by the program (``--dice auto``, seeded with
``--seed``) or typed by the person for both sides (``--dice manual``). Plays are typed in the notation
:func:`bgbot.formats.notation.parse_play` reads (``8/5 6/5``, ``13/7/2``, ``bar/22``, ``6/off``); an illegal play is
explained and asked again.

Commands, before rolling: ``roll`` (or an empty line), ``double``, ``hint`` (the cube action), ``resign [single|gammon|
backgammon]``, ``board``, ``quit``. With dice: a play, ``hint`` (the ranked plays), ``resign``, ``board``, ``quit``. When
doubled: ``take``, ``pass``, ``hint``. Money play by default (a session: after each game ``another game? [y/n]``),
``--match-length N`` for a match (Crawford rule). The finished games are saved as a Jellyfish ``.mat`` file after
each game (``--save PATH``, written atomically).

The bot doubles, takes and passes by :meth:`bgbot.api.Bot.cube_action`, plays the best play of
:meth:`bgbot.api.Bot.rank_plays` at ``--ply``, and accepts a resignation when the points offered are at least its
cubeless equity of the position (in cube units).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from bgbot.api import Bot
from bgbot.errors import BgbotError
from bgbot.formats import context, matfile, notation
from bgbot.formats.diagram import draw
from bgbot.rules import board
from bgbot.rules.movegen_scalar import legal_plays
from bgbot.rules.state import CubeState, MatchState

__all__ = ["PlayError", "Session", "run"]

HUMAN, BOT = 0, 1
LEVELS = {"single": 1, "gammon": 2, "backgammon": 3}


class PlayError(BgbotError):
    """Bad options for ``bgbot play``."""


class _Quit(Exception):
    pass


@dataclass
class _Game:
    pos: list  # [human view, bot view], (26,) int8 each
    turns: list = field(default_factory=list)
    cube: int = 1
    owner: int = -1  # -1 centre, else the side that owns it
    crawford: bool = False


class Session:
    """One person against the bot. ``run()`` plays until the session or match ends, the person quits or input ends."""

    def __init__(
        self,
        bot: Bot,
        match_length: int = 0,
        ply: int = 0,
        manual_dice: bool = False,
        seed: int | None = None,
        save: str | None = None,
        position: str | None = None,
        bot_first: bool = False,
        jacoby: bool = True,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        if match_length < 0:
            raise PlayError(f"--match-length must be >= 0, got {match_length}")
        if not 0 <= ply <= 2:
            raise PlayError(f"--ply must be 0..2, got {ply}")
        if seed is not None and not 0 <= seed <= 2**63 - 1:
            raise PlayError(f"--seed must be in 0 .. 2**63 - 1, got {seed}")
        if match_length:
            MatchState(match_length)  # refuses a match longer than the match equity table, before any game
        if save and not Path(save).parent.is_dir():
            raise PlayError(f"--save {save!r}: no directory {str(Path(save).parent)!r} to save the games in")
        self.bot, self.length, self.ply, self.manual = bot, match_length, ply, manual_dice
        self.rng = np.random.default_rng(seed)
        self.save = save
        self.start = context.parse_position(position).position if position else None
        self.bot_first = bot_first
        self.jacoby = jacoby
        self.stdin, self.out = stdin or sys.stdin, stdout or sys.stdout
        self.score = [0, 0]
        self.games: list[matfile.Game] = []
        self.crawford_done = False
        self.names = ("you", "bgbot")

    # -- i/o --------------------------------------------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            raise _Quit
        return line.strip()

    def dice(self, who: int) -> tuple[int, int]:
        if not self.manual:
            d = self.rng.integers(1, 7, size=2)
            return int(d[0]), int(d[1])
        while True:
            text = self.ask("dice for your roll: " if who == HUMAN else "dice for bgbot's roll: ")
            if text == "quit":
                raise _Quit
            try:
                return context.parse_dice(text)
            except BgbotError as err:
                self.say(f"  {err}")

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
        """Play one game; returns (winner side, points)."""
        start = board.starting_position() if self.start is None else self.start
        human_view = start if not self.bot_first else board.flip(start)
        if self.start is not None:
            self.start = None  # only the first game
        crawford = bool(self.length) and not self.crawford_done and (self.length - 1) in self.score
        if crawford:
            self.crawford_done = True
        human = np.array(human_view, dtype=np.int8)
        g = _Game([human, board.flip(human)], crawford=crawford)
        self.current = g
        if self.bot_first:  # a given position with bgbot on roll: no opening roll
            side, dice, self.bot_first = BOT, None, False
        else:
            side, dice = self.opening()
        first = True
        while True:
            if not first or dice is None:
                result = self.before_roll(g, side)
                if result is not None:
                    return result
                dice = self.dice(side)
            first = False
            self.move(g, side, dice)
            over = self._result(g, side)
            if over:
                points = over * g.cube
                if not self.length and self.jacoby and g.owner < 0:
                    points = g.cube
                return side, points
            side, dice = 1 - side, None

    def _result(self, g: _Game, side: int) -> int:
        """Points (1, 2, 3) the mover has won with its last play, or 0."""
        r = int(board.game_result(g.pos[side][None, :])[0])
        return max(r, 0)

    def opening(self) -> tuple[int, tuple[int, int] | None]:
        while True:
            if self.manual:
                text = self.ask("opening roll (your die, then bgbot's, e.g. 31): ")
                if text == "quit":
                    raise _Quit
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
                        elif answer == "quit":
                            raise _Quit
                        else:
                            self.say("  answer take or pass (or hint)")
            return None
        self.show(g)
        while True:
            answer = self.ask("your turn (roll, double, hint, resign, board, quit): ").lower()
            words = answer.split()
            if answer in ("", "roll", "r"):
                return None
            if answer == "board":
                self.show(g)
            elif answer == "quit":
                raise _Quit
            elif answer == "hint":
                cube, match = self.states(g, HUMAN)
                d = self.bot.cube_action(g.pos[HUMAN], cube, match)
                eq = d.equities
                self.say(
                    f"  {d.action} (no double {eq['no_double']:+.3f}, double/take {eq['double_take']:+.3f}, "
                    f"double/pass {eq['double_pass']:+.3f}{' MWC' if d.unit == 'mwc' else ''})"
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

    def resign(self, g: _Game, words: list[str]):
        level = LEVELS.get(words[0] if words else "single")
        if level is None:
            self.say("  resign single, gammon or backgammon")
            return None
        # the person is on roll: the bot's cubeless equity is the flipped evaluation of the person's position
        mine = self.bot.evaluate(g.pos[HUMAN]).flipped()
        expected = mine.equity
        if level >= expected - 1e-9:
            self.say(f"bgbot accepts your resignation ({list(LEVELS)[level - 1]}).")
            points = level * g.cube
            if not self.length and self.jacoby and g.owner < 0:
                points = g.cube
            return BOT, points
        self.say(f"bgbot declines: it expects more than {level} point(s) per cube here.")
        return None

    def move(self, g: _Game, side: int, dice: tuple[int, int]) -> None:
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
                after = self.ask_play(g, pos, dice)
        g.turns.append(matfile.Turn(side, dice, matfile.play_steps(pos, dice, after)))
        g.pos[1 - side] = after
        g.pos[side] = board.flip(after)

    def ask_play(self, g: _Game, pos, dice) -> np.ndarray:
        while True:
            text = self.ask(f"your play with {dice[0]}-{dice[1]} (or hint, board, resign, quit): ")
            low = text.lower()
            if low == "quit":
                raise _Quit
            if low == "board":
                self.show(g, dice)
                continue
            if low == "hint":
                cube, match = self.states(g, HUMAN)
                for i, r in enumerate(self.bot.rank_plays(pos, dice, cube, match, ply=self.ply)[:5], 1):
                    value = f"MWC {r.mwc:.1%}" if r.mwc is not None else f"equity {r.equity:+.3f}"
                    self.say(f"  {i}. {r.play:<24} {value}")
                continue
            if low.startswith("resign"):
                self.say("  resign before rolling")
                continue
            try:
                play = notation.parse_play(pos, dice, text)
            except BgbotError as err:
                self.say(f"  {err}")
                continue
            return board.flip(np.asarray(play.afterstate, dtype=np.int8))

    # -- the session ------------------------------------------------------------------------------------------------

    def run(self) -> int:
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
                self.games.append(matfile.Game(tuple(self.current.turns), winner, points))
                self.score[winner] += points
                who = "You win" if winner == HUMAN else "bgbot wins"
                self.say(
                    f"{who} {points} point{'s' if points != 1 else ''}. Score: you {self.score[0]}, "
                    f"bgbot {self.score[1]}."
                )
                self.write()
                if self.length and max(self.score) >= self.length:
                    self.say(f"{'You win' if winner == HUMAN else 'bgbot wins'} the match.")
                    return 0
                if not self.length and self.ask("another game? [y/n] ").lower() not in ("y", "yes"):
                    return 0
        except _Quit:
            self.say("")
            self.say("Bye.")
            return 0

    def write(self) -> None:
        """Save the finished games (atomically) when ``save`` is set."""
        if not self.save or not self.games:
            return
        text = matfile.match_text(self.names, self.games, self.length, jacoby=None if self.length else self.jacoby)
        path = Path(self.save)
        matfile.write_atomic(path, text)
        self.say(f"Saved to {path}.")


def run(bot: Bot, **kwargs) -> int:
    """Play a session (see :class:`Session` for the arguments). Raises PlayError on bad options."""
    return Session(bot, **kwargs).run()
