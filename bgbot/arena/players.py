"""Checker-play players for tournaments, behind one batched interface, and the spec strings that name them.

A player maps positions and dice to its chosen plays, for every game in flight at once::

    player.choose(positions (N, 26) int8, dice (N, 2) int8) -> afterstates (N, 26) int8

Positions are from the side on roll (:mod:`bgbot.rules.board`); the returned afterstates are already flipped (the opponent on
roll), exactly the rows of :func:`bgbot.rules.movegen.generate_plays` the player picked. Checker play is cubeless
money play, except through :meth:`Player.choose_at`, which the engine calls with each game's cube and match where
they matter: a net player then ranks plays by match winning chance at a match score (as ``bgbot move`` does, through
the same :func:`bgbot.cube.decision.play_values`) and counts backgammons as the rules do.

For cubeful games (:mod:`bgbot.arena.cubeful`) a player also offers its cubeless view of positions before the roll::

    player.probabilities(positions (N, 26) int8) -> (N, 5) float (w, wg, wbg, lg, lbg) of the side on roll, or None

``None`` (the default: pubeval, random) means "never doubles, always takes"; a net player gives its 0-ply
probabilities whatever its checker-play lookahead, the gnubg player those of ``gnubg_nn.probabilities(board, 0)``.

Spec strings (:func:`make_player`): ``PATH.pt[:PLY]`` (a checkpoint, default 0-ply), ``pubeval``, ``gnubg[:PLY]`` (GNU
Backgammon's nets through the optional ``gnubg-nn`` package), ``random`` (uniform over the distinct legal plays) and
``ubgi:COMMAND`` (any UBGI engine, started as a subprocess, e.g. ``ubgi:bgbot ubgi --ply 1``; :class:`UbgiPlayer`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bgbot.arena import ranking
from bgbot.errors import BgbotError
from bgbot.evaluation import pubeval, search
from bgbot.evaluation.evaluator import best_plays, for_cube, position_probabilities
from bgbot.rules.board import apply_steps, flip
from bgbot.rules.dice import hash_words
from bgbot.rules.movegen import Plays, generate_plays, position_keys
from bgbot.rules.state import CubeState, MatchState

__all__ = [
    "apply_steps",
    "PlayerSpecError",
    "Player",
    "NetPlayer",
    "PubevalPlayer",
    "RandomPlayer",
    "GnubgPlayer",
    "UbgiPlayer",
    "make_player",
]


class PlayerSpecError(BgbotError):
    """A player spec string that names no player (unknown name, bad ply, missing checkpoint, gnubg-nn missing)."""


class Player:
    """Base class: ``name`` (short, printable) and :meth:`choose`."""

    name: str = "player"

    def choose(self, positions: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """Chosen afterstates ``(N, 26)`` int8 (opponent on roll) of ``positions`` ``(N, 26)`` int8, ``dice`` ``(N, 2)``."""
        raise NotImplementedError

    def probabilities(self, positions: np.ndarray) -> np.ndarray | None:
        """Cubeless probabilities ``(N, 5)`` of the side on roll of ``positions`` ``(N, 26)`` int8 (before the roll),
        for cube decisions; ``None``: this player never doubles and always takes."""
        return None

    def choose_at(self, positions: np.ndarray, dice: np.ndarray, states: Sequence[tuple[CubeState, MatchState]]):
        """:meth:`choose` knowing each game's cube and match (``len(positions)`` pairs seen by the mover): what the
        engine calls in match play and where backgammons count as gammons. The base class ignores them (pubeval,
        random and gnubg play cubeless money); :class:`NetPlayer` ranks by :func:`bgbot.cube.decision.play_values`."""
        return self.choose(positions, dice)


def _pick(plays: Plays, chosen: np.ndarray) -> np.ndarray:
    """The afterstate rows ``chosen`` ``(N,)`` of ``plays`` -> ``(N, 26)`` int8."""
    return plays.afterstates[chosen]


class NetPlayer(Player):
    """A position evaluator (e.g. a checkpoint's :class:`bgbot.evaluation.network.Evaluator`) at ``plies`` lookahead."""

    def __init__(self, evaluator, plies: int = 0, name: str = "net") -> None:
        self.evaluator = evaluator
        self.plies = search.check_ply(plies)
        self.name = name

    def choose(self, positions, dice):
        if self.plies == 0:
            plays, chosen, _ = best_plays(self.evaluator, positions, dice)
        else:
            plays, chosen = search.choose(self.evaluator, positions, dice, self.plies)
        return _pick(plays, chosen)

    def choose_at(self, positions, dice, states):
        """The best play by :func:`bgbot.cube.decision.play_values` at each game's cube and match (the match
        winning chance at a match score, as ``bgbot move`` ranks them; money equity with backgammons as the rules
        count them), at this player's lookahead (plays the move filter drops are never chosen):
        :attr:`bgbot.arena.ranking.Ranking.best`."""
        found = ranking.rank(self.evaluator, positions, dice, self.plies, states)
        return _pick(found.plays, found.best)

    def probabilities(self, positions):
        """0-ply probabilities (:func:`bgbot.evaluation.evaluator.position_probabilities`), ``(N, 5)`` float32, of the
        model's cube nets where it has them (:func:`bgbot.evaluation.evaluator.for_cube`)."""
        return position_probabilities(for_cube(self.evaluator), np.asarray(positions, dtype=np.int8))


class PubevalPlayer(Player):
    """Tesauro's pubeval (:mod:`bgbot.evaluation.pubeval`)."""

    name = "pubeval"

    def choose(self, positions, dice):
        positions = np.asarray(positions, dtype=np.int8)
        plays = generate_plays(positions, dice)
        return _pick(plays, pubeval.choose(plays.afterstates, plays.parent, positions))


class RandomPlayer(Player):
    """Uniformly random among the distinct legal plays, seeded.

    The choice is a hash of (seed, position, dice), not a stateful generator, so it does not depend on how games are
    batched or split between workers (tournament results must not change with ``--workers``).
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)

    def choose(self, positions, dice):
        positions = np.asarray(positions, dtype=np.int8)
        plays = generate_plays(positions, dice)
        n = len(positions)
        keys = position_keys(positions)  # (N, 2) uint64
        d = np.asarray(dice, dtype=np.int64)
        h = hash_words(self.seed, d[:, 0] * 8 + d[:, 1], keys[:, 0], keys[:, 1])  # (N,) uint64
        u = (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)  # (N,) uniform in [0, 1)
        counts = plays.counts(n)
        chosen = plays.offsets(n)[:-1] + np.minimum((u * counts).astype(np.int64), counts - 1)
        return _pick(plays, chosen)


def to_gnubg(position: np.ndarray) -> list[list[int]]:
    """A bgbot position ``(26,)`` int8 -> gnubg-nn board ``[opp, me]`` (each side's own numbering, index 24 = bar)."""
    p = np.asarray(position, dtype=np.int64)
    me = [int(max(p[i], 0)) for i in range(1, 25)] + [int(p[25])]
    opp = [int(max(-p[25 - q], 0)) for q in range(1, 25)] + [int(-p[0])]
    return [opp, me]


def from_gnubg(board) -> np.ndarray:
    """A gnubg-nn board ``[opp, me]`` -> bgbot position ``(26,)`` int8 (side on roll = ``board[1]``)."""
    opp, me = board
    p = np.zeros(26, dtype=np.int8)
    for i in range(24):
        p[i + 1] += me[i]
        p[24 - i] -= opp[i]
    p[25] = me[24]
    p[0] = -opp[24]
    return p


class GnubgPlayer(Player):
    """GNU Backgammon's nets at ``plies`` (0, 1, 2) through ``gnubg_nn.best_move``, one position at a time.

    Raises:
        PlayerSpecError: the optional ``gnubg-nn`` package is not installed.
    """

    def __init__(self, plies: int = 0) -> None:
        try:
            import gnubg_nn
        except ImportError as e:
            raise PlayerSpecError(
                "the 'gnubg' player needs the optional package gnubg-nn (pip install gnubg-nn)"
            ) from e
        self._gnubg = gnubg_nn
        self.plies = int(plies)
        self.name = f"gnubg-{self.plies}ply"

    def choose(self, positions, dice):
        positions = np.asarray(positions, dtype=np.int8)
        dice = np.asarray(dice)
        out = np.empty_like(positions)
        for i, (pos, (d1, d2)) in enumerate(zip(positions, dice)):
            steps = self._gnubg.best_move(to_gnubg(pos), int(d1), int(d2), n=self.plies)
            out[i] = flip(apply_steps(pos, steps or ()))
        return out

    def probabilities(self, positions):
        """``gnubg_nn.probabilities(board, 0)`` of each position, ``(N, 5)`` float64 (GNU Backgammon's 0-ply)."""
        positions = np.asarray(positions, dtype=np.int8)
        return np.array([self._gnubg.probabilities(to_gnubg(p), 0) for p in positions], dtype=np.float64).reshape(-1, 5)


class UbgiPlayer(Player):
    """A UBGI engine (:mod:`bgbot.protocols.ubgi` documents the protocol) run as a subprocess, one position at a time.

    Every answer is checked: a ``bestmove`` that is not one of the legal plays of the position and dice (resolved by
    :func:`bgbot.formats.notation.parse_play`) is an error, as is an ``error`` line or an engine that exits. For cubeful
    games the engine must answer ``go role cube`` with bgbot's ``info ... probs W WG WBG LG LBG`` extension.

    Raises:
        PlayerSpecError: the engine cannot be started, fails the handshake, or answers badly.
    """

    def __init__(self, command: str, name: str | None = None) -> None:
        import shlex
        import subprocess

        self.command = command
        self.name = name or "ubgi-" + Path(shlex.split(command)[0]).name
        try:
            self._proc = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except (OSError, ValueError) as e:
            raise PlayerSpecError(f"cannot start UBGI engine {command!r}: {e}") from e
        import queue
        import threading

        # Lines are read by a thread so that the handshake can time out (an engine that never says ubgiok).
        self._lines: queue.Queue[str | None] = queue.Queue()

        def pump(stream, lines) -> None:
            for text in stream:
                lines.put(text)
            lines.put(None)

        threading.Thread(target=pump, args=(self._proc.stdout, self._lines), daemon=True).start()
        self._ask("ubgi", "ubgiok", timeout=self.HANDSHAKE_TIMEOUT)
        self._ask("isready", "readyok", timeout=self.HANDSHAKE_TIMEOUT)

    HANDSHAKE_TIMEOUT = 60.0
    """Seconds an engine has to answer ``ubgi`` and ``isready`` (loading a model included)."""

    def _ask(self, line: str, final: str | tuple[str, ...], timeout: float | None = None) -> list[str]:
        """Send ``line``, read up to the line starting with ``final`` (waiting at most ``timeout`` seconds for each
        line; None: no limit); returns the lines read."""
        import queue

        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except OSError as e:
            raise PlayerSpecError(f"UBGI engine {self.command!r} exited ({e}) before {line!r}") from e
        lines = []
        while True:
            try:
                answer = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise PlayerSpecError(
                    f"UBGI engine {self.command!r} did not answer {line!r} with {final!r} within {timeout:g} s"
                ) from None
            if not answer:
                raise PlayerSpecError(f"UBGI engine {self.command!r} exited after {line!r}")
            answer = answer.strip()
            lines.append(answer)
            if answer.startswith("error "):
                raise PlayerSpecError(f"UBGI engine {self.command!r} answered {answer!r} to {line!r}")
            if answer.split(" ", 1)[0] in ((final,) if isinstance(final, str) else final):
                return lines

    def choose(self, positions, dice):
        from bgbot.formats.notation import parse_play
        from bgbot.formats.positionid import encode

        positions = np.asarray(positions, dtype=np.int8)
        out = np.empty_like(positions)
        for i, (pos, (d1, d2)) in enumerate(zip(positions, np.asarray(dice))):
            # one write for the three commands: a round trip per position, not three
            ask = f"position gnubgid {encode(pos)}\ndice {int(d1)} {int(d2)}\ngo role chequer"
            move = self._ask(ask, "bestmove")[-1][len("bestmove") :].strip()
            try:
                play = parse_play(pos, (int(d1), int(d2)), move)
            except BgbotError as e:
                raise PlayerSpecError(f"UBGI engine {self.command!r} played {move!r}: {e}") from e
            out[i] = flip(play.afterstate)
        return out

    def probabilities(self, positions):
        positions = np.asarray(positions, dtype=np.int8)
        from bgbot.formats.positionid import encode

        out = np.empty((len(positions), 5))
        for i, pos in enumerate(positions):
            lines = self._ask(f"position gnubgid {encode(pos)}\ngo role cube", "bestcube")
            info = [w for w in lines if w.startswith("info ") and " probs " in w]
            if not info:
                raise PlayerSpecError(
                    f"UBGI engine {self.command!r} gives no 'info ... probs W WG WBG LG LBG' for cube decisions; "
                    "it can only play cubeless money games"
                )
            try:
                row = [float(v) for v in info[-1].split(" probs ", 1)[1].split()[:5]]
            except ValueError:
                row = []
            if len(row) != 5:
                raise PlayerSpecError(f"UBGI engine {self.command!r}: 'probs' needs five numbers, got {info[-1]!r}")
            out[i] = row
        return out

    def close(self) -> None:
        """Send ``quit`` and wait for the engine to exit."""
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write("quit\n")
                self._proc.stdin.close()
                self._proc.wait(timeout=5)
            except Exception:
                self._proc.kill()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


_SPEC = re.compile(r"^(?P<base>.+?)(?::(?P<ply>\d+))?$")


def parse_spec(spec: str) -> tuple[str, int]:
    """``"models/x.pt:2"`` -> ``("models/x.pt", 2)``; no ``:PLY`` -> ply 0; ``"ubgi:CMD"`` -> ``("ubgi:CMD", 0)``.
    Raises :class:`PlayerSpecError`."""
    if isinstance(spec, str) and spec.strip().startswith("ubgi:"):
        return spec.strip(), 0
    m = _SPEC.match(spec.strip()) if isinstance(spec, str) else None
    if not m:
        raise PlayerSpecError(f"a player is PATH.pt[:PLY], pubeval, gnubg[:PLY] or random; got {spec!r}")
    return m.group("base"), int(m.group("ply") or 0)


def display_name(spec: str) -> str:
    """A short name for tables and match files: ``models/best.pt:1`` -> ``best-1ply``, ``gnubg:0`` -> ``gnubg-0ply``."""
    base, ply = parse_spec(spec)
    if base in ("pubeval", "random"):
        return base
    if base.startswith("ubgi:"):
        import shlex

        words = base[5:].split() if base[5:].count('"') % 2 else shlex.split(base[5:])
        return "ubgi-" + "-".join(Path(w).stem for w in words[:2] if not w.startswith("-"))[:40]
    stem = "gnubg" if base == "gnubg" else Path(base).stem
    return f"{stem}-{ply}ply"


def make_player(spec: str, seed: int = 0) -> Player:
    """Build the player a spec string names.

    Args:
        spec: ``PATH.pt[:PLY]``, ``pubeval``, ``gnubg[:PLY]`` or ``random`` (see the module docstring).
        seed: the random player's seed.

    Raises:
        PlayerSpecError: an unknown spec, a ply on pubeval/random, a ply above 2, a missing checkpoint file or
            gnubg-nn not installed. (:class:`bgbot.evaluation.checkpoint.CheckpointError` for a damaged checkpoint.)
    """
    base, ply = parse_spec(spec)
    if base.startswith("ubgi:"):
        if not base[5:].strip():
            raise PlayerSpecError(f"a UBGI player is ubgi:COMMAND, got {spec!r}")
        return UbgiPlayer(base[5:], display_name(spec))
    if base in ("pubeval", "random"):
        if ":" in spec:
            raise PlayerSpecError(f"{base} has no lookahead setting; got {spec!r}")
        return PubevalPlayer() if base == "pubeval" else RandomPlayer(seed)
    if base == "gnubg":
        if ply > 2:
            raise PlayerSpecError(f"gnubg plays at 0, 1 or 2 ply; got {spec!r}")
        return GnubgPlayer(ply)
    if not base.endswith(".pt"):
        raise PlayerSpecError(f"a player is PATH.pt[:PLY], pubeval, gnubg[:PLY] or random; got {spec!r}")
    if not Path(base).is_file():
        raise PlayerSpecError(f"no checkpoint file at {base!r} (from player {spec!r})")
    from bgbot.evaluation.checkpoint import load
    from bgbot.evaluation.specialists import evaluator_for

    net, _ = load(base)
    return NetPlayer(evaluator_for(net), ply, display_name(spec))
