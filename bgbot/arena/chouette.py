"""Chouettes: three or more players, one (the box) against a team led by a captain, money play.

The rules (``docs/RULES.md``, section "Chouette"):

* **Order.** Before the first game every player rolls one die; the highest is the box, the second the captain, the
  rest follow in the order of their dice (players who tie roll again among themselves to settle their order).
* **Checker play.** Each game runs on the one game engine (:func:`bgbot.arena.engine.play_ply`): the box sits in
  seat 0, the team in seat 1. On the team's turn every team member still in the game chooses its own play, each
  choice is logged, and the captain's is played.
* **The cube** (``cube``), one per game, as docs/RULES.md describes it: the team doubles the box only when every
  member still in the game wants to (each member's wish is computed from its own probabilities and logged); the box
  takes or passes against the whole team. When the box doubles, each member takes or passes on its own: a member who
  passes pays the stake before the double and is out of that game; the takers play on for the doubled stake. With
  ``member_cubes`` every member has a cube of its own instead: the box doubles, takes and passes against each member
  separately, and each member doubles its own cube when it wants to. The double decisions are the engine's
  (:func:`bgbot.arena.engine.wants_double`, :func:`bgbot.arena.engine.takes`: GNU Backgammon's proper action from the
  player's own cubeless probabilities). No double before the opening roll.
* **Captain.** When the captain leaves the game (passes the box's double, or the box passes the captain's cube), the
  first member in team order still in the game plays as captain for the rest of that game. If every member has
  left, the game is over.
* **Settlement.** The box settles with each team member separately: a member who passed paid its stake then; at the
  end each member still in the game wins or loses its cube value times 1, 2 or 3 (single, gammon, backgammon; a
  backgammon 2 when backgammons count as gammons; 1 under the Jacoby rule while that member's cube is centred,
  automatic doubles included). The box's result is minus the sum of its members'.
* **Automatic doubles** (money; ``auto_doubles`` N): each tie of the opening roll (box against captain) doubles
  the cube (every member's cube), at most N times a game; the cube stays centred.
* **Rotation.** "The team wins" is the result on the board (or the box passing the last members' doubles; the box
  wins when the last members pass). When the team loses, the box stays and the game's original captain goes to the
  end of the team; when the team wins, that captain becomes the box and the old box goes to the end of the team.
  Either way the next member becomes captain.

Dice: a :class:`ChouetteDice` (``die``, ``opening``, ``roll``); :class:`RandomDice` is a seeded generator. The games of
a chouette are sequential (the rotation depends on each result), one game in flight.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from bgbot.arena import stats
from bgbot.arena.distributed import Interrupted
from bgbot.arena.engine import (
    MAX_PLIES,
    CubePhase,
    CubeRules,
    EngineError,
    Table,
    game_value,
    play_ply,
    start_games,
    takes,
    wants_double,
)
from bgbot.arena.players import Player
from bgbot.arena.tournament import MAX_GAMES, MAX_SEED
from bgbot.errors import BgbotError, is_int
from bgbot.formats import matfile
from bgbot.formats.figures import figure

__all__ = [
    "ChouetteError",
    "ChouetteRules",
    "ChouetteDice",
    "RandomDice",
    "Chouette",
    "summarize",
    "run",
    "format_table",
    "MIN_PLAYERS",
]

MIN_PLAYERS = 3
"""A chouette needs a box and a team of two at least."""
KINDS = {0: "pass", 1: "single", 2: "gammon", 3: "backgammon"}


class ChouetteError(BgbotError):
    """A chouette that cannot be played: fewer than three players, bad cube settings, a game that does not end."""


@dataclass(frozen=True)
class ChouetteRules:
    """``cube``: players may double; ``jacoby`` (with the cube): gammons single while a cube is centred;
    ``auto_doubles`` (with the cube) N: opening ties double the cube, at most N times a game; ``backgammons`` False:
    a backgammon scores as a gammon; ``member_cubes``: each team member has a cube of its own."""

    cube: bool = False
    jacoby: bool = True
    auto_doubles: int = 0
    backgammons: bool = True
    member_cubes: bool = False

    def __post_init__(self) -> None:
        n = self.auto_doubles
        if not is_int(n) or n < 0:
            raise ChouetteError(f"automatic doubles must be an integer >= 0 (0 = off, 1 = the usual), got {n!r}")
        if n and not self.cube:
            raise ChouetteError("automatic doubles need the cube: add --cube")
        if self.member_cubes and not self.cube:
            raise ChouetteError("member cubes need the cube: add --cube")

    @property
    def cube_rules(self) -> CubeRules:
        """The engine's rules of each cube (money play)."""
        return CubeRules(0, self.jacoby and self.cube, self.backgammons, int(self.auto_doubles))


class ChouetteDice(Protocol):
    """Where a chouette's dice come from: ``die()`` one die (the order roll), ``opening()`` the opening tries
    ``(T, 2)`` (box's die, team's die; the first unequal one counts), ``roll()`` two dice ``(2,)``."""

    def die(self) -> int: ...

    def opening(self) -> np.ndarray: ...

    def roll(self) -> np.ndarray: ...


class RandomDice:
    """Seeded dice (``numpy.random.default_rng(seed)``)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def die(self) -> int:
        return int(self.rng.integers(1, 7))

    def opening(self) -> np.ndarray:
        tries: list[np.ndarray] = []
        while not tries or tries[-1][0] == tries[-1][1]:
            tries.append(self.rng.integers(1, 7, 2))
        return np.array(tries, dtype=np.int8)

    def roll(self) -> np.ndarray:
        return self.rng.integers(1, 7, 2).astype(np.int8)


@dataclass
class _Member:
    """One team member's state in the current game."""

    player: int
    cube: int = 1
    owner: int = -1  # -1 centred, 0 the box owns it, 1 the member owns it
    in_game: bool = True
    decision: str | None = None  # "take", "pass" (its answer to the box's last double), "passed by box"
    settled: int = 0  # points the member won (+) or paid (-) this game


class _Team(Player):
    """The team's seat for the engine: every member still in the game chooses, the captain's play is made."""

    name = "team"

    def __init__(self, chouette: Chouette, members: list[_Member]) -> None:
        self.c = chouette
        self.members = members
        self.captain = 0  # index into members
        self.turns: list[dict] = []

    def _choose(self, positions: np.ndarray, dice: np.ndarray, states) -> np.ndarray:
        chosen = {}
        for k, m in enumerate(self.members):
            if m.in_game:
                p = self.c.players[m.player]
                chosen[k] = p.choose(positions, dice) if states is None else p.choose_at(positions, dice, states)
        plays = {
            self.c.names[self.members[k].player]: matfile.play_steps(positions[0], dice[0], a[0])
            for k, a in chosen.items()
        }
        captain = self.c.names[self.members[self.captain].player]
        self.turns.append({"dice": [int(d) for d in dice[0]], "captain": captain, "plays": plays})
        return chosen[self.captain]

    def choose(self, positions, dice):
        return self._choose(positions, dice, None)

    def choose_at(self, positions, dice, states):
        return self._choose(positions, dice, states)


class Chouette:
    """A chouette of ``players`` (:class:`bgbot.arena.players.Player`, three or more) named ``names``.

    :meth:`draw_order` rolls for the box and the team order (done on the first :meth:`play_game` when not called);
    :meth:`play_game` plays one game, settles it and rotates; ``order`` is the box then the team, player indices.

    Raises:
        ChouetteError: fewer than three players or names that do not match them.
    """

    def __init__(self, players: Sequence, names: Sequence[str], rules: ChouetteRules, dice: ChouetteDice) -> None:
        if len(players) < MIN_PLAYERS:
            raise ChouetteError(
                f"a chouette needs at least {MIN_PLAYERS} players (a box and a team of two), got {len(players)}"
            )
        if len(names) != len(players):
            raise ChouetteError(f"{len(players)} players but {len(names)} names")
        self.players = list(players)
        self.names = list(names)
        self.rules = rules
        self.dice = dice
        self.order: list[int] = []

    def draw_order(self) -> list[int]:
        """Every player rolls one die; the highest is the box, then the captain and the team in the order of the
        dice; players who tie roll again among themselves. Returns (and keeps) the order."""

        def settle(group: list[int]) -> list[int]:
            if len(group) <= 1:
                return group
            rolls = {p: self.dice.die() for p in group}
            out = []
            for face in range(6, 0, -1):
                out += settle([p for p in group if rolls[p] == face])
            return out

        self.order = settle(list(range(len(self.players))))
        return self.order

    # -- one game ------------------------------------------------------------------------------------------------

    def play_game(self, position: np.ndarray | None = None, box_on_roll: bool = True) -> dict:
        """Play one game, settle it and rotate; returns its record (the ``--out`` JSON line): ``box``, ``captain``
        (at the start), ``team`` (order), ``start_cube``, ``cube_actions``, ``team_turns`` (each member's play and
        the captain's), ``members`` (each member's cube, owner, decision, settlement), ``result`` (``winner`` "box" or
        "team", ``kind``), ``settlements`` (points per player name, box included, summing to 0).

        ``position`` (tests): start there instead of the opening, ``box_on_roll`` deciding who rolls first; the cube
        may then be turned before the first roll.

        Raises:
            ChouetteError: a game past :data:`MAX_PLIES` plies.
        """
        if not self.order:
            self.draw_order()
        box, team_order = self.order[0], self.order[1:]
        members = [_Member(p) for p in team_order]
        team = _Team(self, members)
        cr = self.rules.cube_rules
        table = Table.create(1)
        opening = np.zeros((1, 2), dtype=np.int8)
        if position is None:
            opening, start = start_games(table, np.zeros(1, dtype=np.int64), self.dice.opening()[None], cr)
            start_cube = int(start[0])
        else:
            table.start(np.zeros(1, dtype=np.int64), seat=0 if box_on_roll else 1, positions=np.asarray(position)[None])
            start_cube = 1
        for m in members:
            m.cube = start_cube
        from_position = position is not None
        actions: list[dict] = []
        result = {"winner": "", "kind": ""}

        def roll(t: Table, idx: np.ndarray) -> np.ndarray:
            if t.turn[0] == 0 and not from_position:
                return opening
            return np.asarray(self.dice.roll(), dtype=np.int8).reshape(1, 2)

        phase = CubePhase(cr, doubling=False)  # scoring and checker play by these rules; the cube is ours
        seat_players = [self.players[box], team]
        while table.active[0]:
            if self.rules.cube and (table.turn[0] > 0 or from_position):
                over = self._cube_turn(table, box, members, team, actions)
                if over is not None:
                    table.active[0] = False
                    result = {"winner": over, "kind": "pass"}
                    break
            try:
                ply = play_ply(table, roll, seat_players, phase, max_plies=MAX_PLIES)
            except EngineError as e:
                raise ChouetteError(f"chouette game: {e}") from e
            if len(ply.ended):
                box_won = int(ply.winner[0]) == 0
                kind = int(ply.result[0])
                result = {"winner": "box" if box_won else "team", "kind": KINDS[min(kind, cr.backgammon_value)]}
                live = [m for m in members if m.in_game]
                value = game_value(np.full(len(live), kind), np.array([m.owner for m in live]), cr)
                for m, v in zip(live, value):
                    m.settled += -int(v) * m.cube if box_won else int(v) * m.cube
        settlements = {self.names[m.player]: m.settled for m in members}
        settlements[self.names[box]] = -sum(m.settled for m in members)
        record = {
            "box": self.names[box],
            "captain": self.names[team_order[0]],
            "team": [self.names[p] for p in team_order],
            "start_cube": start_cube,
            "cube_actions": actions,
            "team_turns": team.turns,
            "members": [
                {
                    "name": self.names[m.player],
                    "cube": m.cube,
                    "owner": {-1: "centre", 0: "box", 1: "member"}[m.owner],
                    "decision": m.decision,
                    "in_game": m.in_game,
                    "stake": m.settled,
                }
                for m in members
            ],
            "result": result,
            "settlements": settlements,
        }
        self._rotate(result["winner"] == "team")
        return record

    def _rotate(self, team_won: bool) -> None:
        box, captain, rest = self.order[0], self.order[1], self.order[2:]
        self.order = [captain, *rest, box] if team_won else [box, *rest, captain]

    def _cube_turn(
        self, table: Table, box: int, members: list[_Member], team: _Team, actions: list[dict]
    ) -> str | None:
        """The cube before the roll (module docstring); returns "box"/"team" when the game ends by passes."""
        pos = table.positions[:1]
        cr = self.rules.cube_rules
        name = self.names
        turn = int(table.turn[0])

        def log(by: str, action: str, cube: int, member: str | None = None) -> None:
            actions.append(
                {"turn": turn, "by": by, "action": action, "cube": cube, **({"member": member} if member else {})}
            )

        def own(flag: bool) -> np.ndarray:
            return np.array([int(flag)], dtype=np.int64)

        live = [m for m in members if m.in_game]
        if table.seat[0] == 0:  # the box on roll: it doubles cubes it may turn, each member answers on its own
            may = [m for m in live if m.owner != 1]
            doubled = []
            if self.rules.member_cubes:
                for m in may:
                    if wants_double(self.players[box], pos, own(m.owner == 0), cr)[0]:
                        doubled.append(m)
            elif may and wants_double(self.players[box], pos, own(may[0].owner == 0), cr)[0]:
                doubled = may
            for m in doubled:
                log(name[box], "double", 2 * m.cube, name[m.player])
                if takes(self.players[m.player], pos, own(m.owner == 0), cr)[0]:
                    m.cube, m.owner, m.decision = 2 * m.cube, 1, "take"
                else:
                    m.settled -= m.cube
                    m.in_game, m.decision = False, "pass"
                log(name[m.player], m.decision, m.cube)
            winner = "box"
        else:  # the team on roll
            may = [m for m in live if m.owner != 0]
            wants = {id(m): bool(wants_double(self.players[m.player], pos, own(m.owner == 1), cr)[0]) for m in may}
            if self.rules.member_cubes:
                doubled = [m for m in may if wants[id(m)]]
            else:
                doubled = may if may and all(wants.values()) else []
                if may and any(wants.values()) and not doubled:
                    log("team", "no double (not unanimous)", may[0].cube)
            for m in may:
                log(name[m.player], "wants to double" if wants[id(m)] else "no double", m.cube)
            shared_take = None
            for m in doubled:
                log(name[m.player], "double", 2 * m.cube)
                if shared_take is None or self.rules.member_cubes:
                    shared_take = bool(takes(self.players[box], pos, own(m.owner == 1), cr)[0])
                if shared_take:
                    m.cube, m.owner = 2 * m.cube, 0
                else:
                    m.settled += m.cube
                    m.in_game, m.decision = False, "passed by box"
                log(name[box], "take" if shared_take else "pass", m.cube, name[m.player])
            winner = "team"
        still = [k for k, m in enumerate(members) if m.in_game]
        if not still:
            return winner
        if not members[team.captain].in_game:
            team.captain = still[0]
            log(name[members[team.captain].player], "becomes captain", members[team.captain].cube)
        return None


def summarize(records: list[dict], names: list[str]) -> dict:
    """Per player: ``points`` total, ``ppg`` with its 95% t-interval over the games (:func:`bgbot.arena.stats.
    t_interval`), ``games_in_box``, ``games_as_captain`` (at the start of a game), ``cube_actions`` (doubles
    offered, takes, passes), ``disagreements`` (team turns where its play differed from the captain's)."""
    out = {}
    for n in names:
        pts = np.array([r["settlements"][n] for r in records], dtype=np.float64)
        t = (
            stats.t_interval(pts)
            if len(pts) >= 2
            else {"mean": float(pts.mean()), "ci_low": float("nan"), "ci_high": float("nan")}
        )
        acts = {"doubles": 0, "takes": 0, "passes": 0}
        for r in records:
            for a in r["cube_actions"]:
                if a["by"] == n and a["action"] in ("double", "take", "pass"):
                    acts[a["action"] + ("s" if a["action"] != "pass" else "es")] += 1
        disagree = sum(
            1
            for r in records
            for turn in r["team_turns"]
            if n in turn["plays"] and turn["plays"][n] != turn["plays"][turn["captain"]]
        )
        out[n] = {
            "points": int(pts.sum()),
            "ppg": float(t["mean"]),
            "ci_low": float(t["ci_low"]),
            "ci_high": float(t["ci_high"]),
            "games_in_box": sum(r["box"] == n for r in records),
            "games_as_captain": sum(r["captain"] == n for r in records),
            "cube_actions": acts,
            "disagreements": disagree,
        }
    return out


def run(
    specs: Sequence,
    games: int,
    seed: int = 0,
    rules: ChouetteRules | None = None,
    dice: ChouetteDice | None = None,
    progress: bool = False,
) -> dict:
    """Play a chouette of ``games`` games.

    Args:
        specs: three or more player specs (:func:`bgbot.arena.players.make_player`) or :class:`Player` objects.
        games: games to play, >= 1.
        seed: the dice (:class:`RandomDice`) and the random player's choices.
        rules: :class:`ChouetteRules` (default: cubeless).
        dice: instead of ``RandomDice(seed)`` (tests).
        progress: a tqdm bar on stderr.

    Returns:
        ``players`` (unique names), ``specs``, ``seed``, ``games``, ``rules``, ``order`` (the first box and team),
        ``stats`` (:func:`summarize`), ``records`` (one per game, :meth:`Chouette.play_game`), ``games_done`` and
        ``complete``; stopped by SIGINT or SIGTERM (under :func:`bgbot.arena.distributed.interrupt_signals`), the
        games finished so far, ``complete`` False and ``interrupted`` the signal's name (``stats`` empty without any).

    Raises:
        ChouetteError: fewer than three players, ``games`` < 1; PlayerSpecError for a bad spec.
    """
    from bgbot.arena.players import display_name, make_player
    from bgbot.progress import progress_bar

    if len(specs) < MIN_PLAYERS:
        raise ChouetteError(
            f"a chouette needs at least {MIN_PLAYERS} players (--player three times or more), got {len(specs)}"
        )
    if not is_int(games) or games < 1:
        raise ChouetteError(f"games must be an integer >= 1, got {games!r}")
    if games > MAX_GAMES:
        raise ChouetteError(f"games must be at most {MAX_GAMES:,} (the records are held in memory), got {games}")
    if not is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise ChouetteError(f"the seed must be an integer in 0 .. 2**63 - 1, got {seed!r}")
    rules = rules or ChouetteRules()
    players = [s if isinstance(s, Player) else make_player(s, seed=seed) for s in specs]
    names = [s.name if isinstance(s, Player) else display_name(s) for s in specs]
    names = [n if names.count(n) == 1 else f"{n}#{names[: i + 1].count(n)}" for i, n in enumerate(names)]
    c = Chouette(players, names, rules, dice or RandomDice(seed))
    first = [names[i] for i in c.draw_order()]
    records = []
    torch = sys.modules.get("torch")  # one game in flight: small batches run fastest on one thread
    threads = torch.get_num_threads() if torch is not None else 0
    stopped: Interrupted | None = None
    try:
        if torch is not None:
            torch.set_num_threads(1)
        for k in progress_bar(range(games), unit="game", enabled=progress, leave=False):
            rec = c.play_game()
            records.append({"game": k + 1, **rec})
    except Interrupted as e:  # SIGINT/SIGTERM under interrupt_signals: the games finished so far are the result
        stopped = e
    finally:
        if torch is not None:
            torch.set_num_threads(threads)
    extra: dict = {"games_done": len(records), "complete": stopped is None}
    if stopped is not None:
        extra["interrupted"] = signal.Signals(stopped.signum).name
    return {
        "players": names,
        "specs": [s.name if isinstance(s, Player) else str(s) for s in specs],
        "seed": int(seed),
        "games": int(games),
        "rules": {
            "cube": rules.cube,
            "jacoby": rules.jacoby and rules.cube,
            "auto_doubles": int(rules.auto_doubles),
            "backgammon_value": 3 if rules.backgammons else 2,
            "member_cubes": rules.member_cubes,
        },
        "order": first,
        "stats": summarize(records, names) if records else {},
        "records": records,
        **extra,
    }


def format_table(results: dict) -> str:
    """The printed report of :func:`run`: the rules, then one line per player (total points, ppg with its 95% CI,
    games in the box and as captain, doubles/takes/passes, plays that differed from the captain's)."""
    r = results["rules"]
    cube = (
        "no cube"
        if not r["cube"]
        else (
            f"cube ({'member cubes' if r['member_cubes'] else 'one team cube'}, Jacoby {'on' if r['jacoby'] else 'off'}"
            + (f", automatic doubles {r['auto_doubles']}" if r["auto_doubles"] else "")
            + ")"
        )
    )
    bg = "; backgammons count as gammons" if r["backgammon_value"] == 2 else ""
    w = max(len(n) for n in results["players"] + ["player"])
    lines = [
        f"Chouette of {len(results['players'])} players, {results['games']} games (seed {results['seed']}); {cube}{bg}",
        f"First order: box {results['order'][0]}, team {', '.join(results['order'][1:])}",
        "",
        f"{'player':<{w}}  {'points':>7}  {'ppg':>7}  {'95% CI':>18}  {'box':>5}  {'captain':>7}  {'D/T/P':>11}  {'differs':>7}",
    ]
    for n in results["players"]:
        s = results["stats"][n]
        a = s["cube_actions"]
        dtp = f"{a['doubles']}/{a['takes']}/{a['passes']}"
        lines.append(
            f"{n:<{w}}  {s['points']:>+7d}  {figure(s['ppg'], '+7.3f')}  [{figure(s['ci_low'], '+7.3f')}, {figure(s['ci_high'], '+7.3f')}]"
            f"  {s['games_in_box']:>5d}  {s['games_as_captain']:>7d}  {dtp:>11}  {s['disagreements']:>7d}"
        )
    lines += [
        "",
        "box/captain = games in the box / as captain at the start; D/T/P = doubles, takes, passes by that player;",
        "differs = team turns where its own play differed from the captain's (the captain's was played)",
    ]
    return "\n".join(lines)
