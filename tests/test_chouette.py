"""Chouettes from fixed dice and scripted players: exact settlements per member per game, the captain taking over,
team doubles blocked by one member, member cubes, rotation; the command with three bots."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena import chouette as ch
from bgbot.arena.players import Player
from bgbot.cli import main
from bgbot.rules.movegen import generate_plays
from tests.positions import position

MODEL = str(Path(__file__).resolve().parents[1] / "models" / "bgbot-1.pt")


class Scripted(Player):
    """A player that always says the side on roll wins ``w`` (no gammons): 0.9 doubles and passes, 0.6 and 0.5
    neither double nor pass (engine.wants_double / engine.takes; money, Jacoby on or off). Checker play: the play
    that bears off the most checkers (``most_off``) or the fewest, first such play in move-generator order."""

    def __init__(self, name: str, w: float | None, most_off: bool = True) -> None:
        self.name, self.w, self.most_off = name, w, most_off

    def probabilities(self, positions):
        return None if self.w is None else np.array([[self.w, 0, 0, 0, 0]] * len(positions))

    def choose(self, positions, dice):
        plays = generate_plays(np.asarray(positions, dtype=np.int8), dice)
        a = plays.afterstates.astype(np.int64)  # (M, 26) opponent on roll: the mover's checkers are negative
        off = 15 + np.where(a < 0, a, 0).sum(axis=1)
        out = []
        for i in range(len(positions)):
            rows = np.flatnonzero(plays.parent == i)
            k = rows[np.argmax(off[rows])] if self.most_off else rows[np.argmin(off[rows])]
            out.append(plays.afterstates[k])
        return np.array(out)


class Dice:
    """Scripted dice: ``dies`` for the order roll, ``openings`` (T, 2) tries, ``rolls`` pairs."""

    def __init__(self, dies=(), openings=(), rolls=()):
        self.dies, self.openings, self.rolls = list(dies), list(openings), list(rolls)

    def die(self):
        return self.dies.pop(0)

    def opening(self):
        return np.array(self.openings.pop(0), dtype=np.int8)

    def roll(self):
        return np.array(self.rolls.pop(0), dtype=np.int8)


# The box on roll with two checkers on its 1-point, the team all on its own 6-point: the box's 2-1 wins a gammon.
BOX_GAMMON = position({1: 2}, {19: 15})
# The team on roll, the same the other way round: the team's 2-1 wins a gammon.
TEAM_GAMMON = BOX_GAMMON
# The box on roll with three checkers on its 1-point (2-1 leaves one); the team on its 6, 5 and 1 points.
BOX_THREE = position({1: 3}, {19: 2, 20: 2, 24: 11})


def _chouette(players, rules, dice, order):
    c = ch.Chouette(players, [p.name for p in players], rules, dice)
    c.order = list(order)
    return c


def test_order_from_one_die_each_ties_rolled_again():
    players = [Scripted(n, None) for n in "abcd"]
    c = ch.Chouette(players, list("abcd"), ch.ChouetteRules(), Dice(dies=[3, 5, 5, 2, 2, 6]))
    assert c.draw_order() == [2, 1, 0, 3]  # b and c tie on 5 and roll again: c 6, b 2


def test_a_member_passes_while_another_takes():
    box, m1, m2 = Scripted("box", 0.9), Scripted("m1", 0.9), Scripted("m2", 0.6)
    c = _chouette([box, m1, m2], ch.ChouetteRules(cube=True, jacoby=True), Dice(rolls=[(2, 1)]), [0, 1, 2])
    rec = c.play_game(BOX_GAMMON, box_on_roll=True)
    # m1 passes the box's double and pays 1; m2 takes at 2 and loses a gammon (cube turned: Jacoby off for it): 4
    assert rec["settlements"] == {"box": 5, "m1": -1, "m2": -4}
    assert [(m["name"], m["decision"], m["cube"], m["stake"]) for m in rec["members"]] == [
        ("m1", "pass", 1, -1),
        ("m2", "take", 2, -4),
    ]
    assert rec["result"] == {"winner": "box", "kind": "gammon"}
    assert c.order == [0, 2, 1]  # the team lost: the box stays, the captain (m1) goes to the end


def test_the_captain_passes_and_the_first_taker_captains():
    box = Scripted("box", 0.9)
    cap = Scripted("cap", 0.9, most_off=False)  # passes
    d = Scripted("d", 0.6, most_off=True)  # takes; bears a checker off
    e = Scripted("e", 0.6, most_off=False)  # takes; would bear none off
    dice = Dice(rolls=[(2, 1), (2, 1), (1, 1)])
    c = _chouette([box, cap, d, e], ch.ChouetteRules(cube=True), dice, [0, 1, 2, 3])
    rec = c.play_game(BOX_THREE, box_on_roll=True)
    # cap pays 1 and leaves; d (first taker in team order) captains: its play bears one checker off, so the box's
    # win is a single for d and e at the cube of 2 (e's own play, logged, would have left a gammon).
    assert rec["settlements"] == {"box": 5, "cap": -1, "d": -2, "e": -2}
    assert any(a["by"] == "d" and a["action"] == "becomes captain" for a in rec["cube_actions"])
    (turn,) = rec["team_turns"]
    assert turn["captain"] == "d" and set(turn["plays"]) == {"d", "e"} and turn["plays"]["d"] != turn["plays"]["e"]
    assert rec["result"] == {"winner": "box", "kind": "single"}
    assert c.order == [0, 2, 3, 1]  # the original captain rotates


@pytest.mark.parametrize(("w_b", "each"), [(0.5, 1), (0.9, 4)])
def test_a_team_double_blocked_by_one_member(w_b, each):
    # The team on roll wins a gammon with 2-1. m_a wants to double; m_b (w 0.5) does not: no double, Jacoby makes
    # the gammon a single at the centred cube. When both want it, the box (w 0.6) takes and the gammon counts 2 x 2.
    box, a, b = Scripted("box", 0.6), Scripted("a", 0.9), Scripted("b", w_b)
    c = _chouette([box, a, b], ch.ChouetteRules(cube=True, jacoby=True), Dice(rolls=[(2, 1)]), [0, 1, 2])
    rec = c.play_game(TEAM_GAMMON, box_on_roll=False)
    assert rec["settlements"] == {"box": -2 * each, "a": each, "b": each}
    assert rec["result"] == {"winner": "team", "kind": "gammon"}
    doubles = [x for x in rec["cube_actions"] if x["action"] == "double"]
    assert len(doubles) == (0 if w_b == 0.5 else 2)
    wishes = {x["by"]: x["action"] for x in rec["cube_actions"] if x["action"] in ("wants to double", "no double")}
    assert wishes == {"a": "wants to double", "b": "wants to double" if w_b == 0.9 else "no double"}
    assert c.order == [1, 2, 0]  # the team won: its captain becomes the box, the box goes to the end


def test_member_cubes_double_and_settle_separately():
    # Member cubes: a doubles its own cube (the box takes), b does not; the team wins a gammon: a's turned cube
    # counts the gammon, 2 x 2; b's centred cube is a single under Jacoby.
    box, a, b = Scripted("box", 0.6), Scripted("a", 0.9), Scripted("b", 0.5)
    rules = ch.ChouetteRules(cube=True, jacoby=True, member_cubes=True)
    c = _chouette([box, a, b], rules, Dice(rolls=[(2, 1)]), [0, 1, 2])
    rec = c.play_game(TEAM_GAMMON, box_on_roll=False)
    assert rec["settlements"] == {"box": -5, "a": 4, "b": 1}
    assert [(m["cube"], m["owner"]) for m in rec["members"]] == [(2, "box"), (1, "centre")]
    # The box doubles each member's cube on its own: a passes (w 0.9), b takes (w 0.6) and loses a gammon at 2.
    box2, a2, b2 = Scripted("box", 0.9), Scripted("a", 0.9), Scripted("b", 0.6)
    c = _chouette([box2, a2, b2], rules, Dice(rolls=[(2, 1)]), [0, 1, 2])
    rec = c.play_game(BOX_GAMMON, box_on_roll=True)
    assert rec["settlements"] == {"box": 5, "a": -1, "b": -4}


def test_automatic_double_raises_every_member_cube_and_rotation_over_games():
    players = [Scripted("p0", None), Scripted("p1", None), Scripted("p2", None)]
    rng = np.random.default_rng(2)
    rolls = [tuple(int(x) for x in r) for r in rng.integers(1, 7, (2000, 2))]
    dice = Dice(dies=[6, 4, 2], openings=[[(3, 3), (5, 5), (6, 1)], [(2, 1)]], rolls=rolls)
    rules = ch.ChouetteRules(cube=True, jacoby=False, auto_doubles=1)
    c = ch.Chouette(players, ["p0", "p1", "p2"], rules, dice)
    rec = c.play_game()
    assert rec["box"] == "p0" and rec["team"] == ["p1", "p2"] and rec["start_cube"] == 2
    assert all(m["cube"] == 2 for m in rec["members"])
    kind = {"single": 1, "gammon": 2, "backgammon": 3}[rec["result"]["kind"]]
    sign = 1 if rec["result"]["winner"] == "team" else -1
    assert rec["settlements"]["p1"] == rec["settlements"]["p2"] == sign * 2 * kind
    expected = [1, 2, 0] if sign > 0 else [0, 2, 1]
    assert c.order == expected
    rec2 = c.play_game()
    assert rec2["start_cube"] == 1 and rec2["box"] == ["p0", "p1", "p2"][expected[0]]


def test_bad_seed_and_games_are_errors(capsys, tmp_path):
    args = ["chouette", "--player", "random", "--player", "random", "--player", "random"]
    (tmp_path / "file").write_text("")
    for extra, message in (
        (["--games", "3", "--out", str(tmp_path / "file")], "exists and is not a directory"),  # refused before a game
        (["--games", "3", "--seed", "-1"], "the seed must be an integer in 0 .. 2**63 - 1, got -1"),
        (["--games", "3", "--seed", str(2**64)], "the seed must be an integer in 0 .. 2**63 - 1"),
        (["--games", str(10**11)], "games must be at most 10,000,000"),
    ):
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_bots_chouette_command(tmp_path, capsys):
    # (a few games: the suite checks the rules, not the strengths)
    args = ["chouette", "--player", MODEL, "--player", "pubeval", "--player", MODEL, "--cube", "--seed", "4",
            "--quiet"]  # fmt: skip
    assert main([*args, "--games", "16", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Chouette of 3 players, 16 games" in out and "ppg" in out and "bgbot-1-0ply#2" in out
    recs = [json.loads(x) for x in (tmp_path / "chouette.jsonl").read_text().splitlines()]
    assert len(recs) == 16 and all(sum(r["settlements"].values()) == 0 for r in recs)
    assert main([*args, "--games", "6", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["games"] == 6 and len(res["stats"]) == 3
    assert sum(s["points"] for s in res["stats"].values()) == 0
    assert sum(s["games_in_box"] for s in res["stats"].values()) == 6
