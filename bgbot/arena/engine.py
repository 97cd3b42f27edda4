"""The one batched game engine: :func:`play_ply` plays one ply for every game in flight.

Cubeless tournaments (:func:`bgbot.arena.tournament.play_games`), cubeful money games and matches
(:func:`bgbot.arena.cubeful.play_games`) and TD self-play (:meth:`bgbot_training.selfplay.SelfPlay.step`) all advance
their games with :func:`play_ply`; what differs between them is only how dice are drawn, who sits where, and what
happens when a game ends (a tournament stops the slot, a match starts its next game, self-play starts a new game).

**State.** A :class:`Table` holds ``G`` game slots: each slot's position from the side on roll ``(G, 26)`` int8, the
seat on roll (0 or 1), the plies played in the current game, the cube value and owner, which player sits in each
seat (an index into the caller's list of players, so one player can sit in both seats, as in self-play), whether the
slot is in play, and optionally each game's record for ``.mat`` files. :meth:`Table.start` starts games in chosen
slots from the starting position or from any given positions and seats (rollouts start from a position).

**One ply** (:func:`play_ply`), for the active slots:

1. *Cube phase* (only when a :class:`CubePhase` is given): the side on roll may double when the cube is centred or
   its own (in a match: not in the Crawford game, and not when the cube already wins it the match). Each player
   answers for its games in one batched :meth:`~bgbot.arena.players.Player.probabilities` call (``None``: never
   doubles, always takes); :func:`cube_values` and :func:`offers_double` (GNU Backgammon's proper action) decide the
   double, the opponent takes when Double/Take <= Double/Pass from its own probabilities. A take doubles the cube and
   gives it to the taker; a pass ends the game, the doubler scoring the cube value before the double.
2. *Roll*: ``roll(table, idx)`` gives the dice ``(K, 2)`` of the slots ``idx`` (the caller's stream: duplicate-dice
   hashes in tournaments, a generator in self-play, a fixed sequence in a rollout).
3. *Choose and apply*: each player's :meth:`choose` is called once with all its games (batched; it generates the
   plays with the vectorised move generator and returns the chosen afterstates, opponent on roll).
   With a :class:`CubePhase` whose rules make the cube or the score matter to checker play (match play, or
   backgammons counted as gammons), a player that has ``choose_at`` gets each game's cube and match as
   ``(CubeState, MatchState)`` seen by the mover (:meth:`bgbot.arena.players.Player.choose_at`).
4. *Game over and score*: :func:`bgbot.rules.board.game_result` of each afterstate; a finished game scores 1, 2 or 3
   (single, gammon, backgammon) times the cube value (money with the Jacoby rule: single while the cube is centred,
   which an automatic double leaves it; with ``backgammons`` off a backgammon scores as a gammon).

**The opening** (:func:`start_games`): each seat rolls one die, ties are rolled again; with automatic doubles
(:attr:`CubeRules.auto_doubles` N, money only) each tie doubles the centred cube, at most N times a game, as GNU
Backgammon's ``set automatic doubles N`` does. The cube stays centred and nobody owns it.

Ended games are reported to ``on_end`` at once (after the cube phase for passes, after the move for played-out
games), so a caller can restart a slot and the new game plays in the same call, and in the returned :class:`Ply`.

A chouette (:mod:`bgbot.arena.chouette`) drives :func:`play_ply` with a :class:`CubePhase` that never doubles (its
rules still score the games and reach checker play) and keeps each team member's cube on top, deciding with
:func:`wants_double` and :func:`takes`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bgbot.cube import decision as cubemod
from bgbot.cube.met import kazaross_xg2_extended
from bgbot.errors import BgbotError, is_int
from bgbot.evaluation.classes import cube_efficiencies
from bgbot.formats import matfile
from bgbot.rules.board import game_result, starting_position
from bgbot.rules.dice import opening_tries, pair_dice
from bgbot.rules.outcomes import check_probabilities
from bgbot.rules.state import CubeState, MatchState

__all__ = [
    "MAX_PLIES",
    "EngineError",
    "CubeRules",
    "CubePhase",
    "Table",
    "Ply",
    "play_ply",
    "start_games",
    "cube_values",
    "offers_double",
    "wants_double",
    "takes",
    "game_value",
    "efficiencies",
    "DuplicateDice",
    "GAME_KEY",
]

MAX_PLIES = 5000
"""A game longer than this is a bug in a player or the rules (real games last about 60 plies): :func:`play_ply`
raises."""


class EngineError(BgbotError):
    """A game that cannot go on: a game longer than the ply limit (a bug in a player), bad cube settings."""


Roll = Callable[["Table", np.ndarray], np.ndarray]
"""``roll(table, idx)`` -> dice ``(K, 2)`` int8 of the slots ``idx`` ``(K,)``."""

OnEnd = Callable[["Table", np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
"""``on_end(table, idx, winner_seat, points, kind)``: games in slots ``idx`` ended; ``points`` (cube and Jacoby
included) go to ``winner_seat``; ``kind`` 0 = a pass, 1..3 = single/gammon/backgammon played out. The table still
holds the ended game's cube, position and record; the callback may :meth:`Table.start` new games in those slots."""


@dataclass(frozen=True)
class CubeRules:
    """How games are played and scored: ``match_length`` 0 = money session, else matches to that many points;
    ``jacoby`` (money only): gammons count single while the cube is centred; ``backgammons`` False: a backgammon
    scores as a gammon (``--backgammon-value 2``); ``auto_doubles`` (money only) N: the most automatic doubles a game
    may have (0 = off)."""

    match_length: int = 0
    jacoby: bool = True
    backgammons: bool = True
    auto_doubles: int = 0

    def __post_init__(self) -> None:
        n = self.auto_doubles
        if not is_int(n) or n < 0:
            raise EngineError(f"automatic doubles must be an integer >= 0 (0 = off), got {n!r}")
        if n > MAX_AUTO_DOUBLES:
            raise EngineError(f"automatic doubles must be at most {MAX_AUTO_DOUBLES} (a cube of 2**{n}), got {n}")
        if not is_int(self.match_length) or self.match_length < 0:
            raise EngineError(f"match length must be an integer >= 0 (0 = money), got {self.match_length!r}")
        if self.match_length > kazaross_xg2_extended().max_length:
            raise EngineError(
                f"match length {self.match_length} is beyond the match equity table "
                f"({kazaross_xg2_extended().max_length} points)"
            )

        if n and self.match_length:
            raise EngineError("automatic doubles apply in money play only, not in matches")

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def backgammon_value(self) -> int:
        """What a backgammon scores, in cubes: 3, or 2 when backgammons count as gammons."""
        return 3 if self.backgammons else 2

    def opening_cube(self, ties: np.ndarray) -> np.ndarray:
        """The starting cube value after ``ties`` ``(K,)`` tied opening rolls: ``2 ** min(ties, auto_doubles)``."""
        return (1 << np.minimum(np.asarray(ties, dtype=np.int64), self.auto_doubles)).astype(np.int64)

    def match_state(self, score: tuple[int, int] = (0, 0), crawford: bool = False) -> MatchState:
        """These rules as a :class:`bgbot.rules.state.MatchState` at ``score`` (side on roll first)."""
        if self.is_money:
            return MatchState(0, jacoby=self.jacoby, backgammons=self.backgammons, automatic_doubles=self.auto_doubles)
        return MatchState(self.match_length, score, crawford, jacoby=False, backgammons=self.backgammons)


MAX_AUTO_DOUBLES = 20
"""The most automatic doubles a game may have (a starting cube of 2**20 is already past any real game)."""


@dataclass
class CubePhase:
    """The cube phase's settings and match state: ``rules``; in match play ``score`` ``(G, 2)`` int64 points by seat
    and ``crawford`` ``(G,)`` bool (the current game is the Crawford game), kept up to date by the caller.
    ``doubling`` False: nobody may double (cubeless games scored by ``rules``, e.g. backgammons as gammons).
    ``first_ply``: cube actions also before a game's first ply (games started from a given position, as in a rollout
    of a play); by default there is none before the opening roll."""

    rules: CubeRules
    score: np.ndarray | None = None
    crawford: np.ndarray | None = None
    doubling: bool = True
    first_ply: bool = False

    def states(self, table: Table, idx: np.ndarray) -> list[tuple[CubeState, MatchState]]:
        """Each slot's cube and match seen by the side on roll, ``len(idx)`` pairs (for match-aware checker play)."""
        out = []
        for g in np.asarray(idx, dtype=np.int64):
            s = int(table.seat[g])
            o = int(table.owner[g])
            cube = CubeState(int(table.cube[g]), "centre" if o < 0 else "me" if o == s else "opponent")
            if self.rules.is_money:
                out.append((cube, self.rules.match_state()))
            else:
                assert self.score is not None and self.crawford is not None
                score = (int(self.score[g, s]), int(self.score[g, 1 - s]))
                out.append((cube, self.rules.match_state(score, bool(self.crawford[g]))))
        return out

    @property
    def checker_play_needs_state(self) -> bool:
        """Checker play depends on the cube and score: match play, or backgammons counted as gammons."""
        return not self.rules.is_money or not self.rules.backgammons


@dataclass
class Table:
    """``G`` game slots in flight (see the module docstring). Arrays are per slot; ``seats`` ``(G, 2)`` is the index of
    the player in seat 0 and seat 1; ``owner`` is -1 for a centred cube, else the seat that owns it; ``log`` (when
    recording) holds each slot's current game as :mod:`bgbot.formats.matfile` turns, column = player index."""

    positions: np.ndarray
    seat: np.ndarray
    seats: np.ndarray
    turn: np.ndarray
    cube: np.ndarray
    owner: np.ndarray
    active: np.ndarray
    log: list[list] | None = field(default=None)

    @classmethod
    def create(cls, n: int, seats: np.ndarray | None = None, record: bool = False) -> Table:
        """``n`` idle slots (start games with :meth:`start`); ``seats`` ``(n, 2)`` defaults to player 0 in seat 0 and
        player 1 in seat 1; ``record`` keeps each game's turns for ``.mat`` files."""
        s = np.tile([0, 1], (n, 1)) if seats is None else np.asarray(seats, dtype=np.int64).reshape(n, 2)
        return cls(
            positions=np.zeros((n, 26), dtype=np.int8),
            seat=np.zeros(n, dtype=np.int64),
            seats=s.astype(np.int64),
            turn=np.zeros(n, dtype=np.int64),
            cube=np.ones(n, dtype=np.int64),
            owner=np.full(n, -1, dtype=np.int64),
            active=np.zeros(n, dtype=bool),
            log=[[] for _ in range(n)] if record else None,
        )

    def start(
        self,
        idx: np.ndarray,
        seat: np.ndarray | int = 0,
        positions: np.ndarray | None = None,
        cube: np.ndarray | int = 1,
    ) -> None:
        """Start new games in slots ``idx`` ``(K,)``: ``positions`` ``(K, 26)`` (default the starting position) with
        ``seat`` ``(K,)`` on roll, no plies played, the cube at ``cube`` (scalar or ``(K,)``) and centred, an empty
        record."""
        idx = np.asarray(idx, dtype=np.int64)
        if len(idx) == 0:
            return
        self.positions[idx] = starting_position() if positions is None else positions
        self.seat[idx] = seat
        self.turn[idx] = 0
        self.cube[idx] = cube
        self.owner[idx] = -1
        self.active[idx] = True
        if self.log is not None:
            for g in idx:
                self.log[g] = []

    def player(self, idx: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """Index of the player in ``seat`` ``(K,)`` of slots ``idx`` ``(K,)``."""
        return self.seats[idx, seat]


@dataclass
class Ply:
    """What one :func:`play_ply` call did. Moves: slots ``idx`` ``(K,)``, ``dice`` ``(K, 2)``, ``before``/``after``
    ``(K, 26)`` (``after`` already flipped), ``mover`` ``(K,)`` player index, ``result`` ``(K,)`` int8 the game's value
    for the mover (1..3) or 0 when it goes on. Cube: ``doubled`` ``(D,)`` slots where a double was offered,
    ``doubler`` ``(D,)`` player index, ``taken`` ``(D,)`` bool. Ends: ``ended`` ``(E,)`` slots, ``winner`` ``(E,)`` player
    index, ``points`` ``(E,)`` int64 and ``kind`` ``(E,)`` int8 as given to ``on_end``."""

    idx: np.ndarray
    dice: np.ndarray
    before: np.ndarray
    after: np.ndarray
    mover: np.ndarray
    result: np.ndarray
    doubled: np.ndarray
    doubler: np.ndarray
    taken: np.ndarray
    ended: np.ndarray
    winner: np.ndarray
    points: np.ndarray
    kind: np.ndarray


_EMPTY_I = np.zeros(0, dtype=np.int64)


def play_ply(
    table: Table,
    roll: Roll,
    players: Sequence,
    cube: CubePhase | None = None,
    on_end: OnEnd | None = None,
    max_plies: int = MAX_PLIES,
) -> Ply:
    """Play one ply in every active slot of ``table``: optional cube phase, roll, choose, apply, game over, score.

    Args:
        table: the games in flight (updated in place: positions, seat on roll, plies, cube, active).
        roll: the dice of the slots about to move (the caller's stream).
        players: the players ``Table.seats`` refers to; each needs ``choose`` (and ``probabilities`` for the cube).
        cube: the cube phase's rules and match state; ``None`` = cubeless.
        on_end: called as soon as games end (see :data:`OnEnd`); it may restart slots.
        max_plies: a game past this many plies raises.

    Returns:
        :class:`Ply`.

    Raises:
        EngineError: a game ran past ``max_plies``.
    """
    ended, winners, points, kinds = [], [], [], []

    def end(idx: np.ndarray, winner_seat: np.ndarray, pts: np.ndarray, kind: np.ndarray) -> None:
        if len(idx) == 0:
            return
        table.active[idx] = False
        ended.append(idx)
        winners.append(table.seats[idx, winner_seat])
        points.append(pts.astype(np.int64))
        kinds.append(kind.astype(np.int8))
        if on_end is not None:
            on_end(table, idx, winner_seat, pts, kind)

    doubled, doubler, taken = _EMPTY_I, _EMPTY_I, np.zeros(0, dtype=bool)
    if cube is not None and cube.doubling:
        doubled, doubler, taken = _cube_phase(table, players, cube, end)

    idx = np.flatnonzero(table.active)
    if len(idx) and table.turn[idx].max() >= max_plies:
        raise EngineError(f"a game ran past {max_plies} plies (slot {int(idx[np.argmax(table.turn[idx])])})")
    dice = np.asarray(roll(table, idx))
    before = table.positions[idx]
    after = np.empty_like(before)
    mover = table.seats[idx, table.seat[idx]]
    with_state = cube is not None and cube.checker_play_needs_state
    for p in range(len(players)):
        m = mover == p
        if m.any():
            choose_at = getattr(players[p], "choose_at", None) if with_state else None
            if choose_at is not None:
                assert cube is not None
                after[m] = choose_at(before[m], dice[m], cube.states(table, idx[m]))
            else:
                after[m] = players[p].choose(before[m], dice[m])
    if table.log is not None:
        for j, g in enumerate(idx):
            steps = matfile.play_steps(before[j], dice[j], after[j])
            table.log[g].append(matfile.Turn(int(mover[j]), (int(dice[j, 0]), int(dice[j, 1])), steps))
    table.positions[idx] = after
    mover_seat = table.seat[idx].copy()
    table.seat[idx] ^= 1
    table.turn[idx] += 1
    result = -game_result(after)  # game_result is from the opponent's side: the mover can only have won
    done = result != 0
    d_idx = idx[done]
    value = result[done].astype(np.int64)
    if cube is not None:
        value = game_value(value, table.owner[d_idx], cube.rules)
    end(d_idx, mover_seat[done], value * table.cube[d_idx], result[done])

    def cat(parts: list, dtype) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return Ply(
        idx,
        dice,
        before,
        after,
        mover,
        result,
        doubled,
        doubler,
        taken,
        cat(ended, np.int64),
        cat(winners, np.int64),
        cat(points, np.int64),
        cat(kinds, np.int8),
    )


# ------------------------------------------------------------------------------------------------- the cube phase


def _cube_phase(
    table: Table, players: Sequence, phase: CubePhase, end: Callable
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Doubles, takes and passes before the roll (module docstring) -> (slots doubled, doubler, taken)."""
    rules = phase.rules
    money = rules.is_money
    seat, owner, cube = table.seat, table.owner, table.cube
    idx = np.flatnonzero(table.active & ((table.turn > 0) | phase.first_ply) & ((owner == -1) | (owner == seat)))
    if not money and len(idx):
        assert phase.score is not None and phase.crawford is not None
        ok = ~phase.crawford[idx] & (rules.match_length - phase.score[idx, seat[idx]] > cube[idx])
        idx = idx[ok]
    if len(idx) == 0:
        return _EMPTY_I, _EMPTY_I, np.zeros(0, dtype=bool)
    away = None
    if not money:
        assert phase.score is not None
        length = rules.match_length
        away = np.column_stack([length - phase.score[idx, seat[idx]], length - phase.score[idx, 1 - seat[idx]]])
    roller = table.seats[idx, seat[idx]]
    own = (owner[idx] == seat[idx]).astype(np.int64)
    doubled = np.zeros(len(idx), dtype=bool)
    for p in range(len(players)):
        m = roller == p
        if m.any():
            doubled[m] = wants_double(
                players[p], table.positions[idx[m]], own[m], rules, None if away is None else away[m], cube[idx[m]]
            )
    d_idx = idx[doubled]
    if len(d_idx) == 0:
        return _EMPTY_I, _EMPTY_I, np.zeros(0, dtype=bool)
    d_player = roller[doubled]
    taker = table.seats[d_idx, 1 - seat[d_idx]]
    take = np.ones(len(d_idx), dtype=bool)
    for p in range(len(players)):
        m = taker == p
        if m.any():
            take[m] = takes(
                players[p],
                table.positions[d_idx[m]],
                (owner[d_idx[m]] == seat[d_idx[m]]).astype(np.int64),
                rules,
                None if away is None else away[doubled][m],
                cube[d_idx[m]],
            )
    if table.log is not None:
        for j, g in enumerate(d_idx):
            table.log[g].append(matfile.CubeAction(int(d_player[j]), "double", int(2 * cube[g])))
            table.log[g].append(matfile.CubeAction(int(taker[j]), "take" if take[j] else "pass"))
    t_idx = d_idx[take]
    cube[t_idx] *= 2
    owner[t_idx] = 1 - seat[t_idx]
    p_idx = d_idx[~take]
    end(p_idx, seat[p_idx].copy(), cube[p_idx].copy(), np.zeros(len(p_idx), dtype=np.int8))
    return d_idx, d_player, take


def game_value(kind: np.ndarray, owner: np.ndarray, rules: CubeRules) -> np.ndarray:
    """What games played out to ``kind`` ``(K,)`` (1..3 single, gammon, backgammon) score, in cubes, ``(K,)`` int64:
    a backgammon 2 when backgammons count as gammons; in money play with the Jacoby rule 1 while the cube is centred
    (``owner`` ``(K,)`` -1), however high automatic doubles have put it."""
    value = np.minimum(np.asarray(kind, dtype=np.int64), rules.backgammon_value)
    if rules.is_money and rules.jacoby:
        value = np.where(np.asarray(owner) == -1, 1, value)
    return value


def start_games(
    table: Table, idx: np.ndarray, tries: np.ndarray, rules: CubeRules | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Start games in slots ``idx`` ``(K,)`` from the starting position by their opening rolls (module docstring).

    Args:
        table: the games; slots ``idx`` are (re)started.
        idx: ``(K,)`` slots.
        tries: ``(K, T, 2)`` one die per seat per try (``[..., 0]`` seat 0's); each row needs an unequal try.
        rules: automatic doubles (``None``: none).

    Returns:
        ``(dice, cube)``: ``(K, 2)`` int8 the opening dice (seat 0's die first; the higher die's seat is on roll) and
        ``(K,)`` int64 the starting cube values.

    Raises:
        EngineError: a row of ties only.
    """
    tries = np.asarray(tries, dtype=np.int8).reshape(len(idx), -1, 2)
    unequal = tries[..., 0] != tries[..., 1]
    if len(idx) and not unequal.any(axis=1).all():
        raise EngineError("an opening needs a try with unequal dice (ties are rolled again)")
    ties = np.argmax(unequal, axis=1)
    dice = tries[np.arange(len(tries)), ties]
    cube = np.ones(len(idx), dtype=np.int64) if rules is None else rules.opening_cube(ties)
    table.start(idx, seat=(dice[:, 1] > dice[:, 0]).astype(np.int64), cube=cube)
    return dice, cube


def _values(player, positions: np.ndarray, own: np.ndarray, rules: CubeRules, away, cube):
    """(cube_values, probabilities) from ``player``'s view of ``positions`` (side on roll), or None."""
    probs = player.probabilities(positions)
    if probs is None:
        return None
    q = check_probabilities(probs, rules.backgammons, repair=True)
    return cube_values(q, own, efficiencies(positions), rules, away, cube), q


def wants_double(
    player,
    positions: np.ndarray,
    own: np.ndarray,
    rules: CubeRules,
    away: np.ndarray | None = None,
    cube: np.ndarray | None = None,
) -> np.ndarray:
    """Whether ``player``, on roll in ``positions`` ``(K, 26)``, doubles: :func:`offers_double` of its own
    probabilities (``None`` from the player: never) -> ``(K,)`` bool. ``own`` ``(K,)`` 1 where it owns the cube, 0
    centred; ``away``, ``cube`` as :func:`cube_values` (match play)."""
    got = _values(player, positions, own, rules, away, cube)
    if got is None:
        return np.zeros(len(positions), dtype=bool)
    vals, q = got
    return offers_double(vals, q, own, rules)


def takes(
    player,
    positions: np.ndarray,
    own: np.ndarray,
    rules: CubeRules,
    away: np.ndarray | None = None,
    cube: np.ndarray | None = None,
) -> np.ndarray:
    """Whether ``player`` takes a double offered in ``positions`` ``(K, 26)`` (the doubler on roll; ``own`` whether
    the doubler owned the cube): Double/Take <= Double/Pass for the doubler in ``player``'s own probabilities (``None``
    from the player: always takes) -> ``(K,)`` bool."""
    got = _values(player, positions, own, rules, away, cube)
    if got is None:
        return np.ones(len(positions), dtype=bool)
    vals, _ = got
    return vals[:, 1] <= vals[:, 2]


def efficiencies(positions: np.ndarray) -> np.ndarray:
    """:func:`bgbot.evaluation.classes.cube_efficiency` of each position ``(N, 26)`` -> ``(N,)`` float64 (batched)."""
    return cube_efficiencies(positions)


def cube_values(
    p: np.ndarray,
    owner: np.ndarray,
    x: np.ndarray,
    rules: CubeRules,
    away: np.ndarray | None = None,
    cube: np.ndarray | None = None,
) -> np.ndarray:
    """No double, Double/Take, Double/Pass for the side on roll, in comparable units, ``(N, 3)`` float64.

    Args:
        p: ``(N, 5)`` cubeless probabilities of the side on roll (consistent: :func:`bgbot.rules.outcomes.
            check_probabilities`).
        owner: ``(N,)`` 0 cube centred, +1 the side on roll owns it (the opponent's cube is never asked about).
        x: ``(N,)`` cube efficiencies.
        rules: money (equity normalised to the cube) or match.
        away, cube: match only, ``(N, 2)`` points still needed by (side on roll, opponent) and ``(N,)`` cube values.

    Returns:
        Money: cubeful equities; match: normalised money equity of the match winning chances (gnubg's mwc2eq), the
        units :func:`bgbot.cube.decision.decide` compares them in (:func:`bgbot.cube.decision.batch_values`).
    """
    if rules.is_money:
        return cubemod.batch_values(p, owner, x, jacoby=rules.jacoby)
    assert away is not None and cube is not None
    return cubemod.batch_values(p, owner, x, away=away, cube=cube)


def offers_double(values: np.ndarray, p: np.ndarray, owner: np.ndarray, rules: CubeRules) -> np.ndarray:
    """Whether the side on roll doubles, ``(N,)`` bool: GNU Backgammon's proper action from :func:`cube_values` is a
    double, redouble or optional double (:func:`bgbot.cube.decision.doubles`; ``owner`` and ``rules`` only change
    the wording, not whether to double)."""
    return cubemod.doubles(values, p[:, 1] > 0.0)


# ------------------------------------------------------------------------------------------- tournaments' dice

GAME_KEY = 1 << 24
"""The dice of game ``k`` of a match use the pairing key ``pairing + k * GAME_KEY``."""


class DuplicateDice:
    """The tournaments' dice stream, a :data:`Roll`: slot ``g`` plays duplicate pair ``pair[g]`` of a pairing; its
    ``k``-th game (a match has several) rolls :func:`bgbot.rules.dice.opening_tries` (:func:`start_games`) then
    :func:`bgbot.rules.dice.pair_dice` under the pairing key ``pairing + k * GAME_KEY``, so the dice depend only on
    ``(seed, pairing, pair, game, turn)``, never on the batch or the worker.

    Args:
        seed, pairing: the tournament's seed and the pairing number.
        pair: ``(G,)`` the duplicate pair of each slot (both slots of a pair get the same dice).
        rules: automatic doubles from the opening's ties (``None``: none).
    """

    def __init__(self, seed: int, pairing: int, pair: np.ndarray, rules: CubeRules | None = None) -> None:
        self.seed = seed
        self.pairing = pairing
        self.pair = np.asarray(pair, dtype=np.int64)
        self.rules = rules
        self.game_no = np.zeros(len(self.pair), dtype=np.int64)
        self.opening = np.zeros((len(self.pair), 2), dtype=np.int8)
        self.start_cube = np.ones(len(self.pair), dtype=np.int64)

    def start(self, table: Table, idx: np.ndarray) -> None:
        """Start game ``game_no[idx]`` in slots ``idx`` from the starting position (:func:`start_games`), the higher
        opening die on roll (seat 0 rolls ``opening[:, 0]``); ``start_cube[idx]`` the cube automatic doubles left."""
        if len(idx) == 0:
            return
        key = (self.pairing + self.game_no[idx] * GAME_KEY)[:, None]
        tries = opening_tries(self.seed, key, self.pair[idx])
        self.opening[idx], self.start_cube[idx] = start_games(table, idx, tries, self.rules)

    def __call__(self, table: Table, idx: np.ndarray) -> np.ndarray:
        turn = table.turn[idx]
        later = pair_dice(self.seed, self.pairing + self.game_no[idx] * GAME_KEY, self.pair[idx], turn)
        return np.where((turn == 0)[:, None], self.opening[idx], later)
