"""``bgbot ubgi``: a UBGI engine on standard input and output.

UBGI (Universal Backgammon Interface) is a UCI-like line protocol, specified as drafts in the GitHub repository
https://github.com/bungogood/bgci (its files ``docs/ubgi-v0.1-spec.md`` and ``docs/ubgi-v0.2-spec.md``; not part of
bgbot). This engine implements v0.1 up to its Level 2 and v0.2's ``set``/``get``/``keys`` as v0.2's compatibility
section allows (both ``setoption`` and ``set`` are understood). Every response is one line, flushed; a command with
no answer (``newgame``, ``position``, ``dice``, context commands) prints nothing unless it is bad, then one
``error <code> <message>`` line, and the engine goes on.

Commands (controller -> engine)::

    ubgi                      -> id name bgbot / id author ... / id version ... / option ... lines / ubgiok
    isready                   -> readyok (loads the model)
    setoption name <Name> value <Value>       Threads, Seed, Deterministic, EvalMode (cubeless|cubeful), Model, Ply
    set <key> <value> | get <key> | keys      v0.2 keys (``keys`` lists them as ``key ...`` lines, then ``keysok``)
    newgame                   forgets position and dice
    newsession type <money|match> [length N] [jacoby on|off] [crawford on|off]
    setscore <p0> <p1>        setcube value <N> owner <center|p0|p1>        setturn <p0|p1>
    position gnubgid <PositionID[:MatchID]> | position xgid <XGID>
    dice <d1> <d2>
    go [role] <chequer|cube|turn|take> [depth N] [movetime ms] [nodes n] [trials n]
    stop                      (searches are synchronous: nothing to stop, no answer)
    quit

Answers: ``info ...`` (probabilities and equities), then ``bestmoveid <PositionID>`` and ``bestmove <steps>`` for a
checker play (the last line of the answer; ``pass`` when no play is legal), ``bestcube double|nodouble``, ``bestturn
cube=<double|nodouble> move=<steps|none>``. Errors use v0.1's codes: ``unknown_command``, ``bad_argument``,
``missing_context``, ``unsupported_feature``.

Conventions (where the drafts leave them open):

* The position is seen from the side on roll, who is ``setturn``'s player (``p0`` by default); ``setscore``'s and
  ``setcube``'s ``p0``/``p1`` are mapped to "me"/"opponent" from it. A ``PositionID:MatchID`` or an XGID carries its
  own cube, score, match and dice, which replace the session context's for that position.
* ``bestmove`` steps are single-die moves in the mover's numbering, ``bar`` and ``off`` for the bar and bearing off,
  no hit marks or counts: ``bar/22 13/11``. ``bestmoveid`` is the Position ID of the position after the play, the
  opponent on roll (GNU Backgammon's convention).
* ``depth N`` and the v0.2 key ``engine.ply`` count plies root-inclusive as v0.2 defines them: UBGI depth 1 is bgbot's
  (and GNU Backgammon's) 0-ply, 2 is 1-ply, 3 is 2-ply. The v0.1 option ``Ply`` is bgbot's own (0, 1, 2).
* Extension ``go role take``: the side on roll has doubled; the engine answers for the other side with
  ``bestcube take`` or ``bestcube pass``.
* Extension info keys: ``info role cube ... probs W WG WBG LG LBG`` (the side on roll's cubeless probabilities), which
  the ``ubgi:`` tournament player (:mod:`bgbot.arena.players`) reads for cubeful games.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TextIO, cast

import numpy as np

import bgbot
from bgbot.errors import BgbotError, parse_whole
from bgbot.formats import context, positionid
from bgbot.rules.movegen_scalar import legal_plays as scalar_plays
from bgbot.rules.state import CubeState, MatchState, Owner

if TYPE_CHECKING:
    from bgbot.api import Bot

__all__ = ["UbgiError", "Engine", "format_steps", "run"]

MAX_PLY = 2
"""Deepest bgbot search (bgbot plies; UBGI depth MAX_PLY + 1)."""


class UbgiError(BgbotError):
    """A bad command: ``code`` is the UBGI error code, the message its detail."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Session:
    """The session a UBGI client set (``newsession``, ``set game.*``), as the protocol names it.

    Attributes:
        kind: ``"money"`` or ``"match"``.
        length: the match length (0 for money).
        jacoby: the Jacoby rule (money play).
        crawford: the Crawford rule (match play).
    """

    kind: Literal["money", "match"] = "money"
    length: int = 0
    jacoby: bool = True
    crawford: bool = False


@dataclass(frozen=True)
class CubeSetting:
    """The cube a UBGI client set (``setcube``): its value and owner, ``"center"``, ``"p0"`` or ``"p1"``."""

    value: int = 1
    owner: Literal["center", "p0", "p1"] = "center"


def _bad(message: str) -> UbgiError:
    return UbgiError("bad_argument", message)


def format_steps(position: np.ndarray, dice: tuple[int, int], afterstate: np.ndarray) -> str:
    """The single-die steps of ``dice`` that turn ``position`` (mover on roll) into ``afterstate`` (flipped, opponent
    on roll): ``"bar/22 13/11"``, ``"8/5 6/5"``, ``"6/off"``; ``"pass"`` when no play is legal. The steps are in GNU
    Backgammon's order of a play (gnubg's CanonicalMoveOrder, as :func:`bgbot.formats.notation.format_play` orders
    them): by source point, highest first, ties by destination, highest first; played in that order each step is
    legal.

    Raises:
        UbgiError: ``afterstate`` is not a legal result (a bug in the caller).
    """
    from bgbot.rules.board import flip

    target = bytes(flip(np.asarray(afterstate, dtype=np.int8)))
    plays = scalar_plays(np.asarray(position, dtype=np.int8), int(dice[0]), int(dice[1]))
    if not plays:
        return "pass"
    for play in plays:
        if bytes(play.afterstate) == target:
            steps = sorted(play.steps, reverse=True)
            return " ".join(f"{'bar' if s == 25 else s}/{'off' if t == 0 else t}" for s, t in steps)
    raise UbgiError("bad_argument", "the play is not legal")


@dataclass
class Options:
    """Engine settings: bgbot ply (0..2), torch threads, seed, deterministic flag, eval mode, model path."""

    ply: int = 0
    threads: int = 1
    seed: int = 0
    deterministic: bool = True
    evalmode: str = "cubeful"
    model: str | None = None


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "on", "1", "yes"):
        return True
    if low in ("false", "off", "0", "no"):
        return False
    raise _bad(f"expected true or false, got {text!r}")


def _int(text: str, lo: int | None = None, hi: int | None = None, what: str = "value") -> int:
    try:
        value = parse_whole(text)
    except ValueError:
        raise _bad(f"{what} must be an integer, got {text!r}") from None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise _bad(f"{what} must be in {rng}, got {value}")
    return value


class Engine:
    """The protocol state machine: :meth:`handle` takes one command line and returns the response lines.

    Args:
        bot: a ready :class:`bgbot.api.Bot`, or None to load ``options.model`` (default model) on ``isready`` or on the
            first request that needs it.
        options: initial settings (``--model``, ``--ply`` on the command line).
    """

    def __init__(self, bot: Bot | None = None, options: Options | None = None) -> None:
        self.bot = bot
        self.options = options or Options()
        self.done = False
        self._session = Session()
        self._score = (0, 0)  # (p0, p1)
        self._cube = CubeSetting()
        self._turn = 0
        self._position: context.Context | None = None
        self._own_context = False  # the position text carried its own cube/match
        self._dice: tuple[int, int] | None = None

    # -- plumbing -------------------------------------------------------------------------------------------------

    def handle(self, line: str) -> list[str]:
        """The response lines to one command line (empty for commands without an answer)."""
        words = line.split()
        if not words:
            return []
        name, args = words[0], words[1:]
        method = getattr(self, "_cmd_" + name, None) if name.isidentifier() else None
        try:
            if method is None:
                raise UbgiError("unknown_command", f"unknown command {name[:80]!r}")
            return method(args) or []
        except UbgiError as err:
            return [f"error {err.code} {_one_line(str(err))}"]
        except BgbotError as err:
            return [f"error bad_argument {_one_line(str(err))}"]

    def loop(self, stdin: TextIO, stdout: TextIO) -> int:
        """Answer every line of ``stdin`` on ``stdout`` (flushed line by line) until ``quit`` or end of input."""
        for line in stdin:
            for answer in self.handle(line):
                stdout.write(answer + "\n")
                stdout.flush()
            if self.done:
                break
        return 0

    def _bot(self) -> Bot:
        if self.bot is None:
            from bgbot.api import Bot

            self.bot = Bot.load(self.options.model)
        return self.bot

    # -- handshake and options --------------------------------------------------------------------------------------

    def _cmd_ubgi(self, args):
        return [
            "id name bgbot",
            "id author the bgbot authors",
            f"id version {bgbot.__version__}",
            "option name Threads type spin default 1 min 1 max 64",
            "option name Seed type spin default 0 min 0 max 2147483647",
            "option name Deterministic type check default true",
            "option name EvalMode type combo default cubeful var cubeless var cubeful",
            "option name Model type string default <default>",
            f"option name Ply type spin default 0 min 0 max {MAX_PLY}",
            "ubgiok",
        ]

    def _cmd_isready(self, args):
        self._bot()
        return ["readyok"]

    def _cmd_quit(self, args):
        self.done = True
        return []

    def _cmd_stop(self, args):
        return []

    def _cmd_setoption(self, args):
        text = " ".join(args)
        if not text.startswith("name ") or " value " not in text:
            raise _bad("expected: setoption name <Name> value <Value>")
        name, _, value = text[5:].partition(" value ")
        key = {
            "threads": "engine.threads",
            "seed": "engine.seed",
            "deterministic": "engine.deterministic",
            "evalmode": "engine.evalmode",
            "model": "engine.model",
            "ply": "bgbot.ply",
        }.get(name.strip().lower())
        if key is None:
            raise UbgiError("unsupported_feature", f"unknown option {name.strip()[:80]!r}")
        self._set(key, value.strip())
        return []

    KEYS = {
        "engine.ply": f"int 1..{MAX_PLY + 1} 1 root-inclusive checker-play depth (UBGI 1 = bgbot 0-ply)",
        "engine.threads": "int 1..64 1 ! torch threads",
        "engine.seed": "int * 0 ! seed (bgbot's play is deterministic; kept for reproducibility records)",
        "engine.deterministic": "bool true ! always deterministic",
        "engine.evalmode": "enum cubeless|cubeful cubeful cubeful: match winning chances at a match score",
        "engine.model": "string * default model checkpoint (default: the model shipped with bgbot)",
        "game.variant": "enum backgammon backgammon",
        "game.type": "enum money|match money",
        "game.length": "int 0..255 0 match length (0: money)",
        "game.jacoby": "bool true",
        "game.crawford": "bool false this game is the Crawford game",
    }

    def _cmd_keys(self, args):
        return [f"key {k} {v}" for k, v in self.KEYS.items()] + ["keysok"]

    def _cmd_set(self, args):
        if len(args) < 2:
            raise _bad("expected: set <key> <value>")
        if args[0] not in self.KEYS:
            raise UbgiError("unsupported_feature", f"unknown key {args[0][:80]!r}")
        self._set(args[0], " ".join(args[1:]))
        return []

    def _cmd_get(self, args):
        if len(args) != 1:
            raise _bad("expected: get <key>")
        if args[0] not in self.KEYS:
            raise UbgiError("unsupported_feature", f"unknown key {args[0][:80]!r}")
        return [f"value {args[0]} {self._get(args[0])}"]

    def _get(self, key: str) -> str:
        o, s = self.options, self._session
        return {
            "engine.ply": str(o.ply + 1),
            "engine.threads": str(o.threads),
            "engine.seed": str(o.seed),
            "engine.deterministic": "true" if o.deterministic else "false",
            "engine.evalmode": o.evalmode,
            "engine.model": o.model or "default",
            "game.variant": "backgammon",
            "game.type": s.kind,
            "game.length": str(s.length),
            "game.jacoby": "true" if s.jacoby else "false",
            "game.crawford": "true" if s.crawford else "false",
        }[key]

    def _set(self, key: str, value: str) -> None:
        o, s = self.options, self._session
        if key == "engine.ply":
            o.ply = _int(value, 1, MAX_PLY + 1, key) - 1
        elif key == "bgbot.ply":
            o.ply = _int(value, 0, MAX_PLY, "Ply")
        elif key == "engine.threads":
            o.threads = _int(value, 1, 64, key)
            import torch

            torch.set_num_threads(o.threads)
        elif key == "engine.seed":
            o.seed = _int(value, 0, None, key)
        elif key == "engine.deterministic":
            o.deterministic = _bool(value)
        elif key == "engine.evalmode":
            if value not in ("cubeless", "cubeful"):
                raise _bad(f"EvalMode is cubeless or cubeful, got {value!r}")
            o.evalmode = value
        elif key == "engine.model":
            from bgbot.api import Bot

            path = None if value in ("default", "<default>") else value
            self.bot = Bot.load(path)
            o.model = path
        elif key == "game.variant":
            if value != "backgammon":
                raise UbgiError("unsupported_feature", f"only backgammon is played, got {value!r}")
        elif key == "game.type":
            if value not in ("money", "match"):
                raise _bad(f"game.type is money or match, got {value!r}")
            kind: Literal["money", "match"] = "match" if value == "match" else "money"
            self._set_session(dataclasses.replace(s, kind=kind, length=s.length if kind == "match" else 0))
        elif key == "game.length":
            n = _int(value, 0, 255, key)
            self._set_session(dataclasses.replace(s, kind="match" if n else "money", length=n))
        elif key == "game.jacoby":
            self._set_session(dataclasses.replace(s, jacoby=_bool(value)))
        elif key == "game.crawford":
            self._set_session(dataclasses.replace(s, crawford=_bool(value)))

    # -- session context --------------------------------------------------------------------------------------------

    def _set_session(self, session: Session) -> None:
        old = self._session
        self._session = session
        try:
            self._states()
        except BgbotError:
            self._session = old
            raise

    def _cmd_newgame(self, args):
        self._position, self._dice, self._own_context = None, None, False
        self._cube, self._turn = CubeSetting(), 0
        return []

    def _cmd_newsession(self, args):
        if len(args) < 2 or args[0] != "type" or args[1] not in ("money", "match") or len(args) % 2:
            raise _bad("expected: newsession type <money|match> [length N] [jacoby on|off] [crawford on|off]")
        fields = dict(zip(args[2::2], args[3::2]))
        unknown = set(fields) - {"length", "jacoby", "crawford"}
        if unknown:
            raise _bad(f"newsession has no field {sorted(unknown)[0]!r}")
        length = _int(fields.get("length", "0"), 0, 255, "length")
        if args[1] == "match" and length < 1:
            raise _bad("a match needs length N >= 1")
        if args[1] == "money":
            length = 0
        old_score = self._score
        self._score = (0, 0)
        try:
            kind: Literal["money", "match"] = "match" if args[1] == "match" else "money"
            self._set_session(
                Session(kind, length, _bool(fields.get("jacoby", "on")), _bool(fields.get("crawford", "off")))
            )
        except BgbotError:
            self._score = old_score
            raise
        return []

    def _cmd_setscore(self, args):
        if len(args) != 2:
            raise _bad("expected: setscore <p0> <p1>")
        old, self._score = self._score, (_int(args[0], 0, None, "score"), _int(args[1], 0, None, "score"))
        try:
            self._states()
        except BgbotError:
            self._score = old
            raise
        return []

    def _cmd_setcube(self, args):
        if len(args) != 4 or args[0] != "value" or args[2] != "owner" or args[3] not in ("center", "p0", "p1"):
            raise _bad("expected: setcube value <N> owner <center|p0|p1>")
        owner = cast(Literal["center", "p0", "p1"], args[3])
        old, self._cube = self._cube, CubeSetting(_int(args[1], 1, None, "cube value"), owner)
        try:
            self._states()
        except BgbotError:
            self._cube = old
            raise
        return []

    def _cmd_setturn(self, args):
        if len(args) != 1 or args[0] not in ("p0", "p1"):
            raise _bad("expected: setturn <p0|p1>")
        self._turn = int(args[0][1])
        return []

    def _states(self) -> tuple[CubeState, MatchState]:
        """The session's cube and match seen from the side on roll. Raises CubeStateError."""
        s, me = self._session, self._turn
        score = (self._score[me], self._score[1 - me]) if s.kind == "match" else (0, 0)
        match = MatchState(length=s.length, score=score, crawford=s.crawford and s.kind == "match", jacoby=s.jacoby)
        owner = self._cube.owner
        who: Owner = "centre" if owner == "center" else ("me" if int(owner[1]) == me else "opponent")
        return CubeState(self._cube.value, who), match

    def _cmd_position(self, args):
        if len(args) != 2 or args[0] not in ("gnubgid", "xgid"):
            raise _bad("expected: position gnubgid <PositionID[:MatchID]> or position xgid <XGID>")
        text = args[1]
        if args[0] == "xgid" and not text.upper().startswith("XGID="):
            text = "XGID=" + text
        if args[0] == "gnubgid" and text.upper().startswith("XGID="):
            raise _bad("an XGID is given with 'position xgid'")
        ctx = context.parse_position(text)
        self._position = ctx
        self._own_context = ":" in text or args[0] == "xgid"
        self._dice = ctx.dice
        return []

    def _cmd_dice(self, args):
        if len(args) != 2:
            raise _bad("expected: dice <d1> <d2>")
        self._dice = context.parse_dice(" ".join(args))
        return []

    def _context(self, need_dice: bool) -> context.Context:
        if self._position is None:
            raise UbgiError("missing_context", "no position: send 'position gnubgid <ID>' first")
        if need_dice and self._dice is None:
            raise UbgiError("missing_context", "no dice: send 'dice <d1> <d2>' first")
        ctx = self._position
        if not self._own_context:
            cube, match = self._states()
            ctx = context.Context(ctx.position, None, cube, match)
        return context.Context(ctx.position, self._dice, ctx.cube, ctx.match)

    # -- decisions --------------------------------------------------------------------------------------------------

    def _cmd_go(self, args):
        words = list(args)
        if words and words[0] == "role":
            words = words[1:]
        if not words or words[0] not in ("chequer", "checker", "cube", "turn", "take"):
            if words and words[0] not in ("depth", "movetime", "nodes", "trials"):
                raise _bad("expected: go role <chequer|cube|turn|take> [depth N] [movetime MS] [nodes N] [trials N]")
            words = ["chequer", *words]
        role, rest = words[0], words[1:]
        if len(rest) % 2:
            raise _bad(f"go: each limit takes a value, got {' '.join(rest)!r}")
        limits = dict(zip(rest[::2], rest[1::2]))
        for key in limits:
            if key not in ("depth", "movetime", "nodes", "trials"):
                raise _bad(f"go: unknown limit {key!r}")
            _int(limits[key], 0, None, key)
        ply = self.options.ply
        if "depth" in limits:
            ply = _int(limits["depth"], 1, MAX_PLY + 1, "depth") - 1
        start = time.perf_counter()
        if role in ("chequer", "checker"):
            return self._chequer(ply, start)
        if role == "cube":
            return self._cube_answer(start, take=False)
        if role == "take":
            return self._cube_answer(start, take=True)
        return self._turn_answer(ply, start)

    def _chequer(self, ply: int, start: float, role: str = "chequer") -> list[str]:
        ctx = self._context(need_dice=True)
        assert ctx.dice is not None
        match = ctx.match if self.options.evalmode == "cubeful" else MatchState()
        bot = self._bot()
        if ply == 0 and match.is_money:
            # The tournament's own 0-ply choice (the ranking's best play in cubeless money play): the same play, fast.
            from bgbot.arena import ranking
            from bgbot.rules.outcomes import equity

            found = ranking.rank(bot.evaluator, ctx.position[None, :], np.array([ctx.dice]))
            row = int(found.best[0])
            after, q, mwc = found.plays.afterstates[row], found.probabilities[row], None
            eq = float(equity(q.astype(np.float64)))
        else:
            best = bot.rank_plays(ctx.position, ctx.dice, ctx.cube, match, ply=ply)[0]
            assert best.probabilities is not None
            after, q, mwc, eq = best.afterstate, best.probabilities.to_array(), best.mwc, best.equity
            ply = best.ply
        steps = format_steps(ctx.position, ctx.dice, after)
        info = (
            f"info role {role} depth {ply + 1} time_ms {1000 * (time.perf_counter() - start):.0f} "
            f"eq {eq:.6f}" + (f" mwc {mwc:.6f}" if mwc is not None else "") + f" pwin {q[0]:.6f} "
            f"pgammon {q[1]:.6f} pbg {q[2]:.6f} plgammon {q[3]:.6f} plbg {q[4]:.6f} pv {steps}"
        )
        return [info, f"bestmoveid {positionid.encode(after)}", f"bestmove {steps}"]

    def _decision(self):
        ctx = self._context(need_dice=False)
        bot = self._bot()
        p = bot.cube_probabilities(ctx.position)
        return ctx, p, bot.cube_action(ctx.position, ctx.cube, ctx.match, probabilities=p)

    def _cube_info(self, start, p, decision, role) -> str:
        eq = decision.equities
        return (
            f"info role {role} time_ms {1000 * (time.perf_counter() - start):.0f} nd {eq['no_double']:.6f} "
            f"dt {eq['double_take']:.6f} dp {eq['double_pass']:.6f} unit {decision.unit} pwin {p.win:.6f} "
            f"pgammon {p.win_gammon:.6f} pbg {p.win_backgammon:.6f} "
            f"probs {' '.join(f'{v:.6f}' for v in p.to_array())}"
        )

    @staticmethod
    def _doubles(decision) -> bool:
        return decision.cube_available and decision.kind.doubles

    def _cube_answer(self, start: float, take: bool) -> list[str]:
        ctx, p, decision = self._decision()
        if take:
            if not decision.cube_available:
                raise UbgiError("bad_argument", "the side on roll cannot double here, so there is nothing to take")
            answer = "take" if decision.answer.takes else "pass"
            return [self._cube_info(start, p, decision, "take"), f"bestcube {answer}"]
        answer = "double" if self._doubles(decision) else "nodouble"
        return [self._cube_info(start, p, decision, "cube"), f"bestcube {answer}"]

    def _turn_answer(self, ply: int, start: float) -> list[str]:
        ctx, p, decision = self._decision()
        cube = "double" if self._doubles(decision) else "nodouble"
        lines = [self._cube_info(start, p, decision, "turn")]
        if self._dice is None:
            if cube == "nodouble":
                raise UbgiError("missing_context", "no dice: a turn without a double needs 'dice <d1> <d2>'")
            return [*lines, "bestturn cube=double move=none"]
        chequer = self._chequer(ply, start, role="turn")
        return [*lines, chequer[0], f"bestturn cube={cube} move={chequer[-1][len('bestmove ') :]}"]


def _one_line(text: str) -> str:
    return " ".join(text.split())[:500]


def run(model: str | None = None, ply: int = 0, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Serve UBGI on ``stdin``/``stdout`` (default: the process's) until ``quit`` or end of input.

    The default model is loaded at the first command that needs it (the handshake stays fast); a ``model`` given is
    loaded at once, so that a missing, corrupt or incompatible checkpoint is refused before any command is read.

    Raises:
        UbgiError: ``ply`` outside 0..2.
        bgbot.evaluation.checkpoint.CheckpointError: ``model`` is missing, corrupt or not a bgbot checkpoint (the
            message ``bgbot move --model`` gives).
    """
    if not 0 <= ply <= MAX_PLY:
        raise _bad(f"--ply must be 0..{MAX_PLY}, got {ply}")
    bot = None
    if model is not None:
        from bgbot.api import Bot

        bot = Bot.load(model)
    engine = Engine(bot, options=Options(ply=ply, model=model))
    return engine.loop(stdin or sys.stdin, stdout or sys.stdout)
