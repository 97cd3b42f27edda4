"""The .mat reader and bgbot analyse, against GNU Backgammon's own analysis of a match in which one side plays with
noise (tests/data/noisy_match.mat and GNU Backgammon's verdicts, made by scripts/make_noisy_match.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot import cli
from bgbot.api import Bot
from bgbot.arena import tournament
from bgbot.arena.players import PubevalPlayer, RandomPlayer
from bgbot.formats import matfile
from bgbot.protocols import analysis

DATA = Path(__file__).parent / "data"
KIND = {"move": "move", "double": "double", "take": "take", "drop": "pass"}


@pytest.fixture(scope="module")
def result():
    return analysis.analyse_file(Bot.load(), DATA / "noisy_match.mat", ply=0)


@pytest.fixture(scope="module")
def gnubg():
    return json.loads((DATA / "noisy_match_gnubg.json").read_text())


def test_read_gnubg_export():
    match = matfile.read_match((DATA / "noisy_match.mat").read_text())
    assert match.names == ("gnubg", "root") and match.length == 11 and len(match.games) == 4
    scores = [g.scores for g in match.games]
    assert scores[0] == (0, 0)
    for before, after, g in zip(scores, scores[1:], match.games):
        gained = list(before)
        gained[g.game.winner] += g.game.points
        assert tuple(gained) == after  # each game's result leads to the next game's score
    last = match.games[-1]
    assert last.scores[last.game.winner] + last.game.points >= 11  # the match was played out
    for g in match.games:
        moves = [d for d in matfile.replay(g, match.length) if d.kind == "move"]
        assert len(moves) == sum(isinstance(t, matfile.Turn) for t in g.game.turns)


def test_bgbot_written_matches_read_back():
    chunk = tournament.play_games(PubevalPlayer(), RandomPlayer(3), seed=5, pairing=0, start=0, stop=2, record=True)
    text = matfile.match_text(("pubeval", "random"), chunk.games_mat)
    match = matfile.read_match(text)
    for read, written in zip(match.games, chunk.games_mat, strict=True):  # the file writes the higher die first
        assert [(t.side, t.text()) for t in read.game.turns] == [(t.side, t.text()) for t in written.turns]
        assert (read.game.winner, read.game.points) == (written.winner, written.points)
    for g in match.games:
        matfile.replay(g, 0)


@pytest.mark.parametrize(
    "text,message",
    [
        ("hello\n", "no 'N point match' line"),
        (" 3 point match\n", "no games"),
        (" 3 point match\n Game 1\n", "game header missing"),
        (" 3 point match\n Game 1\n a : 0\n", "expected 'NAME : SCORE"),
        (" 3 point match\n Game 1\n a : 0   b : 0\n  1) 31 8/5 6/5\n", "dice '31' without a colon"),
        (" 3 point match\n Game 1\n a : 0   b : 0\n  1) 71: 8/5 6/5\n", "dice '71:' out of range"),
        (" 3 point match\n Game 1\n a : 4   b : 0\n", "past the 3-point match"),
        (" 3 point match\n Game 1\n a : 0   b : 0\n  1) Wins many\n", "expected 'Wins N points'"),
    ],
)
def test_broken_files_read(text, message):
    with pytest.raises(matfile.MatFileError, match=message):
        matfile.read_match(text)


@pytest.mark.parametrize(
    "moves,message",
    [
        ("  1) 31: 8/4 6/5", "illegal play"),
        ("  1) 31: 8/5 6/5\n  2)  Takes", "take without a double"),
        ("  1) 31:", "a play is possible"),
        ("  1) 31: 8/5 6/5                   Doubles => 2\n  2) 42: 8/4 6/4", "a roll while a double awaits"),
    ],
)
def test_broken_files_replay(moves, message):
    match = matfile.read_match(f" 3 point match\n Game 1\n a : 0                       b : 0\n{moves}\n")
    with pytest.raises(matfile.MatFileError, match=message):
        matfile.replay(match.games[0], match.length)


def test_every_decision_rated(result):
    match = matfile.read_match((DATA / "noisy_match.mat").read_text())
    actions = sum(len(g.game.turns) for g in match.games)
    rated = [d for d in result["decisions"] if d["decision"] != "no_double"]
    assert len(rated) == actions
    assert all(d["error"] >= 0 and d["best"] for d in result["decisions"])
    assert all(d["mark"] == analysis.mark(d["error"]) for d in result["decisions"])


def test_flags_gnubgs_very_bad_decisions(result, gnubg):
    """At least 80% of GNU Backgammon's very bad decisions (at least 20 of them) are bad or very bad for bgbot."""
    ours = {(d["game"], d["action"], d["decision"]): d for d in result["decisions"]}
    very_bad = [
        ours[(g, k, KIND[v["action"]])]
        for g, game in enumerate(gnubg["games"], 1)
        for k, v in enumerate(game, 1)
        if v["mark"] == "very bad"
    ]
    assert all(d["player"] == "gnubg" for d in very_bad)  # the noisy side, as GNU Backgammon found
    assert len(very_bad) >= 20
    flagged = sum(d["mark"] in ("bad", "very bad") for d in very_bad)
    assert flagged >= 0.8 * len(very_bad), f"{flagged} of {len(very_bad)}"


def test_player_summary(result):
    noisy, clean = result["players"]
    assert noisy["name"] == "gnubg" and clean["name"] == "root"
    for p in (noisy, clean):
        for group in ("checker", "cube", "overall"):
            s = p[group]
            assert s["error_rate"] == pytest.approx(1000 * s["error_total"] / s["decisions"], abs=1e-3)
            assert set(s["marks"]) == {"doubtful", "bad", "very bad"}
        assert p["overall"]["decisions"] == p["checker"]["decisions"] + p["cube"]["decisions"]
    assert noisy["checker"]["error_rate"] > 3 * clean["checker"]["error_rate"]
    assert noisy["checker"]["marks"]["very bad"] >= 20


def test_cli_report_json_and_errors(capsys, tmp_path):
    small = tmp_path / "small.mat"
    chunk = tournament.play_games(PubevalPlayer(), RandomPlayer(1), seed=2, pairing=0, start=0, stop=1, record=True)
    small.write_text(matfile.match_text(("pubeval", "random"), chunk.games_mat))
    assert cli.main(["analyse", str(small), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in out["players"]] == ["pubeval", "random"] and out["unit"] == "equity"
    rates = [p["checker"]["error_rate"] for p in out["players"]]
    assert rates[1] > rates[0]  # random plays worse than pubeval
    assert cli.main(["analyse", str(small)]) == 0
    report = capsys.readouterr().out
    assert "error rate (x1000)" in report and "Decisions marked bad or very bad" in report
    broken = tmp_path / "broken.mat"
    broken.write_text(" 1 point match\n Game 1\n a : 0                       b : 0\n  1) 31: 8/4 6/5\n")
    for argv, message in (
        (["analyse", str(broken)], "illegal play"),
        (["analyse", str(tmp_path / "missing.mat")], "No such file"),
        (["analyse", str(small), "--ply", "5"], "--ply must be 0..2"),
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_mark_thresholds():
    assert [analysis.mark(e) for e in (0.0, 0.029, 0.03, 0.06, 0.119, 0.12, 1.0)] == [
        None,
        None,
        "doubtful",
        "bad",
        "bad",
        "very bad",
        "very bad",
    ]
    assert np.isclose(analysis._emg_scale(*_money()), 1.0)


def _money():
    from bgbot.rules.state import CubeState, MatchState

    return CubeState(), MatchState()
