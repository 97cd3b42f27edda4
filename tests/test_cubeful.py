"""Cubeful tournaments: doubles, takes, passes, the Crawford rule, match scores, workers, and .mat import into gnubg."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess

import numpy as np
import pytest

from bgbot.arena import cubeful, tournament
from bgbot.arena.players import PubevalPlayer
from bgbot.cli import main
from bgbot.cube import decision as cube
from bgbot.formats import matfile
from bgbot.rules import board
from bgbot.rules.state import CubeState, MatchState

GNUBG = "/usr/games/gnubg"
MONEY = cubeful.CubeRules(0, True)


class FixedPlayer(PubevalPlayer):
    """Pubeval's checker play; the side on roll always has the same cubeless probabilities."""

    def __init__(self, probs, name="fixed"):
        self.p = np.asarray(probs, dtype=np.float64)
        self.name = name

    def probabilities(self, positions):
        return np.tile(self.p, (len(positions), 1))


class PipPlayer(PubevalPlayer):
    """Pubeval's checker play; probabilities from the pip counts (a crude but varied cube player)."""

    def __init__(self, scale=12.0, name="pip"):
        self.scale = scale
        self.name = name

    def probabilities(self, positions):
        pips = board.pip_counts(np.asarray(positions)).astype(np.float64)  # (N, 2) mine, theirs
        w = 1.0 / (1.0 + np.exp((pips[:, 0] - pips[:, 1] - 8.0) / self.scale))
        return np.column_stack([w, 0.15 * w, 0.01 * w, 0.15 * (1 - w), 0.01 * (1 - w)])


def _scores_before(games):
    """Cumulative (left, right) score before each game."""
    s, out = [0, 0], []
    for g in games:
        out.append(tuple(s))
        s[g.winner] += g.points
    return out, tuple(s)


def test_pubeval_never_doubles():
    c = cubeful.play_games(PubevalPlayer(), PubevalPlayer(), 3, 0, 0, 20, MONEY, record=True)
    assert (c.counts == 0).all() and (c.cube == 1).all()
    assert all(isinstance(t, matfile.Turn) for slot in c.games_mat for g in slot for t in g.turns)
    # Jacoby on and a centred cube: every game scores one point; the pairs still sum to 0.
    assert (np.abs(c.points_a) == 1).all() and (c.points_a[0::2] + c.points_a[1::2] == 0).all()
    off = cubeful.play_games(PubevalPlayer(), PubevalPlayer(), 3, 0, 0, 20, cubeful.CubeRules(0, False))
    cubeless = tournament.play_games(PubevalPlayer(), PubevalPlayer(), 3, 0, 0, 20)
    np.testing.assert_array_equal(off.points_a, cubeless.points_a)  # no cube, no Jacoby: the cubeless games


def test_sure_winner_doubles_and_pubeval_takes():
    c = cubeful.play_games(FixedPlayer([0.95, 0, 0, 0, 0]), PubevalPlayer(), 1, 0, 0, 20, MONEY, record=True)
    n = len(c.points_a)
    assert c.counts[0].tolist() == [n, 0, 0] and c.counts[1].tolist() == [0, n, 0]
    assert (c.cube == 2).all() and (np.abs(c.points_a) % 2 == 0).all()
    for slot in c.games_mat:
        acts = [t for t in slot[0].turns if isinstance(t, matfile.CubeAction)]
        assert [(a.side, a.kind, a.value) for a in acts] == [(0, "double", 2), (1, "take", 0)]


def test_pass_ends_the_game_at_the_stake_before_the_double():
    sure = [0.99, 0, 0, 0, 0]
    c = cubeful.play_games(FixedPlayer(sure), FixedPlayer(sure), 2, 0, 0, 10, MONEY, record=True)
    assert (np.abs(c.points_a) == 1).all() and (c.kind == 0).all() and (c.cube == 1).all()
    assert c.counts[:, cubeful.A_PASSES].sum() == len(c.points_a) == c.counts[:, cubeful.A_DOUBLES].sum()
    for slot, pts in zip(c.games_mat, c.points_a):
        g = slot[0]
        assert [type(t) for t in g.turns] == [matfile.Turn, matfile.CubeAction, matfile.CubeAction]
        assert g.turns[1].side == g.winner and g.turns[2].kind == "pass" and g.points == 1
        assert (pts > 0) == (g.winner == 0)
    # The pass comes after a redouble too: the stake before it is 2.
    c2 = cubeful.play_games(FixedPlayer([0.7, 0.0, 0, 0, 0]), FixedPlayer([0.99, 0, 0, 0, 0]), 2, 0, 0, 10, MONEY)
    assert c2.counts[:, cubeful.A_PASSES].sum() > 0


def test_batched_decisions_agree_with_cube_decide():
    rng = np.random.default_rng(0)
    w = rng.uniform(0.3, 1.0, 300)
    p = np.column_stack(
        [w, w * rng.uniform(0, 0.4, 300), np.zeros(300), (1 - w) * rng.uniform(0, 0.3, 300), np.zeros(300)]
    )
    p[:, 2] = p[:, 1] * rng.uniform(0, 0.2, 300)
    p[::7, 1:3] = 0.0  # some rows without gammons
    x = rng.choice([0.6, 0.68, 0.7], 300)
    cases = [
        (cubeful.CubeRules(0, True), None, 1),
        (cubeful.CubeRules(0, False), None, 1),
        (cubeful.CubeRules(7), (7, 7), 1),
        (cubeful.CubeRules(7), (3, 6), 2),
        (cubeful.CubeRules(7), (5, 1), 1),
    ]
    for rules, away, cv in cases:
        for own in (0, 1):
            owner = np.full(300, own)
            aw = None if away is None else np.tile(away, (300, 1))
            vals = cubeful.cube_values(p, owner, x, rules, aw, np.full(300, cv))
            dbl = cubeful.offers_double(vals, p, owner, rules)
            take = vals[:, 1] <= vals[:, 2]
            match = (
                MatchState(jacoby=rules.jacoby)
                if rules.is_money
                else MatchState(rules.match_length, (rules.match_length - away[0], rules.match_length - away[1]))
            )
            cs = CubeState(cv, "me" if own else "centre")
            for i in range(300):
                d = cube.decide(p[i], cs, match, float(x[i]))
                assert dbl[i] == d.kind.doubles, (rules, own, i, d)
                assert take[i] == (d.equities["double_take"] <= d.equities["double_pass"]), (rules, own, i, d)


def _check_matches(c, length):
    crawford_games = 0
    for slot, pa, final in zip(c.games_mat, c.points_a, c.score):
        before, end = _scores_before(slot)
        assert end == tuple(final) and max(end) >= length and min(end) < length
        assert (pa > 0) == (end[0] >= length)
        reached = False
        for g, s in zip(slot, before):
            assert max(s) < length
            crawford = not reached and length - 1 in s
            reached = reached or length - 1 in s
            if crawford:
                crawford_games += 1
                assert not any(isinstance(t, matfile.CubeAction) for t in g.turns)
    return crawford_games


def test_matches_crawford_and_scores():
    c = cubeful.play_games(
        FixedPlayer([0.9, 0.0, 0, 0, 0]), PubevalPlayer(), 4, 0, 0, 10, cubeful.CubeRules(5), record=True
    )
    assert _check_matches(c, 5) > 0
    assert c.counts[0, cubeful.A_DOUBLES] > 0 and c.counts[1, cubeful.A_DOUBLES] == 0
    assert c.counts[1, cubeful.A_TAKES] == c.counts[0, cubeful.A_DOUBLES]
    c = cubeful.play_games(PipPlayer(10), PipPlayer(15), 5, 0, 0, 10, cubeful.CubeRules(5), record=True)
    _check_matches(c, 5)
    assert c.counts[:, cubeful.A_PASSES].sum() > 0 and c.counts[:, cubeful.A_TAKES].sum() > 0


def test_same_seed_one_or_two_workers_identical():
    # Players that double, take and pass (picklable, no torch: the pool starts fast); matches, so the Crawford rule
    # and several games per slot are crossed too.
    players = [PipPlayer(10, "pip10"), PipPlayer(15, "pip15")]
    settings = tournament.TournamentSettings(6, seed=2, chunk_pairs=1, match_length=3)
    one = tournament.run(players, settings)
    two = tournament.run(players, dataclasses.replace(settings, workers=2))
    strip = ("elapsed_s", "games_per_s", "workers", "worker_restarts")
    assert {k: v for k, v in one.items() if k not in strip} == {k: v for k, v in two.items() if k not in strip}
    row = one["pairings"][0]
    assert row["matches"] == 6 and sum(a["doubles"] for a in row["cube_actions"].values()) > 0


def test_cli_money_and_match(capsys, tmp_path):
    assert (
        main(
            [
                "tournament",
                "--player",
                "pubeval",
                "--player",
                "random",
                "--games",
                "6",
                "--workers",
                "1",
                "--cube",
                "--jacoby",
                "off",
                "--json",
                "--out",
                str(tmp_path / "m"),
            ]
        )
        == 0
    )
    r = json.loads(capsys.readouterr().out)
    assert r["cube"] == {"match_length": 0, "jacoby": False, "crawford": False, "auto_doubles": 0}
    assert r["pairings"][0]["cube_actions"]["a"]["doubles"] == 0 and r["pairings"][0]["ppg"] > 0
    assert (tmp_path / "m" / "01_pubeval_vs_random.mat").read_text().count(" Game ") == 6
    assert (
        main(
            [
                "tournament",
                "--player",
                "pubeval",
                "--player",
                "random",
                "--games",
                "2",
                "--workers",
                "1",
                "--match-length",
                "3",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "3-point matches" in out and "Ranking" in out
    files = sorted((tmp_path / "x").glob("*.mat"))
    assert [f.name for f in files] == ["01_pubeval_vs_random_0001.mat", "01_pubeval_vs_random_0002.mat"]
    assert sorted(f.name for f in (tmp_path / "x").iterdir()) == [f.name for f in files] + ["results.json"]
    assert " 3 point match" in files[0].read_text()
    assert (
        main(
            [
                "tournament",
                "--player",
                "pubeval",
                "--player",
                "random",
                "--games",
                "2",
                "--workers",
                "1",
                "--match-length",
                "-1",
            ]
        )
        == 2
    )


# -- GNU Backgammon reads the cube lines ----------------------------------------------------------------------------


def _gnubg(commands: str) -> str:
    out = subprocess.run([GNUBG, "-t", "-q"], input=commands, capture_output=True, text=True, timeout=300).stdout
    assert "WARNING" not in out and "garbage" not in out and "Unrecognised" not in out, out[:2000]
    return out


def _games(text):
    """Per game of a .mat text: (header scores, points in the Wins line, number of cube lines)."""
    blocks = re.split(r"\n Game \d+\n", text)[1:]
    out = []
    for b in blocks:
        head = re.findall(r":\s*(\d+)", b.splitlines()[0])
        wins = re.search(r"Wins (\d+) point", b).group(1)
        out.append((tuple(map(int, head)), int(wins), len(re.findall(r"Doubles|Takes|Drops", b))))
    return out


SCORE = re.compile(r"The score \(after (\d+) games?\) is: pipA (\d+), pipB (\d+)")


@pytest.mark.skipif(not os.path.exists(GNUBG), reason="GNU Backgammon is not installed")
@pytest.mark.parametrize("jacoby", [True, False])
def test_gnubg_imports_a_cubeful_money_session(tmp_path, jacoby):
    rules = cubeful.CubeRules(0, jacoby)
    c = cubeful.play_games(PipPlayer(10), PipPlayer(15), 7, 0, 0, 10, rules, record=True)
    c2 = cubeful.play_games(PubevalPlayer(), PipPlayer(15), 7, 0, 0, 5, rules, record=True)  # centred gammons
    games = [g for slot in c.games_mat + c2.games_mat for g in slot]
    points = np.concatenate([c.points_a, c2.points_a])
    assert c.counts[:, cubeful.A_PASSES].sum() > 0 and c.counts[:, cubeful.A_TAKES].sum() > 0
    assert (np.abs(c2.points_a) >= 2).any() or not jacoby
    # The whole session imports; gnubg's export of it has the same games, scores and cube lines.
    path = tmp_path / "money.mat"
    path.write_text(matfile.match_text(("pipA", "pipB"), games, jacoby=jacoby))
    back = tmp_path / "back.mat"
    setting = f"set jacoby {'on' if jacoby else 'off'}\n"
    _gnubg(f"{setting}import mat {path}\nexport match mat {back}\n")
    assert len(_games(back.read_text())) == len(games) == 30
    assert [g[::2] for g in _games(back.read_text())] == [g[::2] for g in _games(path.read_text())]
    # Each game on its own: gnubg scores it (cube, drop, Jacoby) exactly as the harness did.
    cmds = setting
    for k, g in enumerate(games):
        (tmp_path / f"g{k}.mat").write_text(matfile.match_text(("pipA", "pipB"), [g], jacoby=jacoby))
        cmds += f"import mat {tmp_path / f'g{k}.mat'}\nshow score\n"
    scores = [(int(a), int(b)) for _, a, b in SCORE.findall(_gnubg(cmds))]
    assert scores == [(max(p, 0), max(-p, 0)) for p in points]


@pytest.mark.skipif(not os.path.exists(GNUBG), reason="GNU Backgammon is not installed")
def test_gnubg_imports_five_point_matches(tmp_path):
    c = cubeful.play_games(PipPlayer(10), PipPlayer(15), 8, 0, 0, 3, cubeful.CubeRules(5), record=True)
    assert c.counts[:, cubeful.A_DOUBLES].sum() > 0
    cmds, paths = "", []
    for k, slot in enumerate(c.games_mat):
        path = tmp_path / f"match{k}.mat"
        path.write_text(matfile.match_text(("pipA", "pipB"), slot, 5))
        paths.append(path)
        cmds += f"import mat {path}\nshow score\nexport match mat {tmp_path / f'back{k}.mat'}\n"
    scores = SCORE.findall(_gnubg(cmds))
    assert len(scores) == len(paths)
    for k, (path, final, (n, a, b)) in enumerate(zip(paths, c.score, scores)):
        back = (tmp_path / f"back{k}.mat").read_text()
        assert " 5 point match" in back and _games(back) == _games(path.read_text())
        assert int(n) == len(c.games_mat[k]) and (int(a), int(b)) == tuple(final)
