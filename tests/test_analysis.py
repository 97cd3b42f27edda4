"""The .mat reader and bgbot analyse, against GNU Backgammon's own analysis of a match in which one side plays with
noise (tests/data/noisy_match.mat and GNU Backgammon's verdicts, made by scripts/make_noisy_match.py)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bgbot import cli
from bgbot.api import Bot
from bgbot.arena import tournament
from bgbot.arena.players import PubevalPlayer, RandomPlayer
from bgbot.errors import BgbotError
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
        ("  1) 31:", "a play is possible"),
    ],
)
def test_broken_files_replay(moves, message):
    match = matfile.read_match(f" 3 point match\n Game 1\n a : 0                       b : 0\n{moves}\n")
    with pytest.raises(matfile.MatFileError, match=message):
        matfile.replay(match.games[0], match.length)


DOUBLED = "  1) 31: 8/5 6/5                   Doubles => 2\n"
TAKEN = DOUBLED + "  2)  Takes                       42: 8/4 6/4\n"


@pytest.mark.parametrize(
    "scores,moves,line,message",
    [
        (
            "alice : 0   bob : 0",
            "  1) 31: 8/5 6/5                   Doubles => 4",
            5,
            "'Doubles => 4' with the cube at 1: a double makes it 2",
        ),
        ("alice : 0   bob : 0", "  1) 31: 8/5 6/5\n  2)  Takes", 6, "'Takes' by alice without a double before it"),
        (
            "alice : 0   bob : 0",
            "  1) 31: 8/5 6/5                   Drops",
            5,
            "'Drops' by bob without a double before it",
        ),
        (
            "alice : 0   bob : 0",
            DOUBLED + "  2)                              Takes",
            6,
            "'Takes' by bob, who doubled: the opponent answers a double",
        ),
        (
            "alice : 0   bob : 0",
            TAKEN + "  3)                              Doubles => 4",
            7,
            "'Doubles => 4' by bob, who does not own the cube (alice owns it)",
        ),
        (
            "alice : 0   bob : 0",
            TAKEN + "  3)  Doubles => 8",
            7,
            "'Doubles => 8' with the cube at 2: a double makes it 4",
        ),
        (
            "alice : 0   bob : 0",
            DOUBLED + "  2)  Doubles => 4",
            6,
            "'Doubles => 4': a double while a double awaits an answer",
        ),
        (
            "alice : 0   bob : 0",
            DOUBLED + "  2) 42: 8/4 6/4",
            6,
            "'42: 8/4 6/4': a roll while a double awaits an answer",
        ),
        ("alice : 2   bob : 0", DOUBLED, 5, "'Doubles => 2': a double in the Crawford game"),
    ],
)
def test_cube_actions_the_cube_does_not_allow_are_refused_naming_the_game_and_line(scores, moves, line, message):
    """Each cube action is checked against the cube as GNU Backgammon's .mat import keeps it: a double is to twice the
    cube, by a side that may double; a take or a drop answers the opponent's double; nothing else is read silently."""
    with pytest.raises(matfile.MatFileError) as err:
        matfile.read_match(f" 3 point match\n\n Game 1\n {scores}\n{moves}\n", "m.mat")
    assert str(err.value) == f"m.mat, game 1, line {line}: {message}" and err.value.line == line


def test_a_replayed_game_is_checked_by_the_same_cube_rules():
    """A game made in code (not read) replays under the same check, which names the action."""
    turns = (matfile.Turn(0, (3, 1), "8/5 6/5"), matfile.CubeAction(1, "double", 4))
    game = matfile.MatchGame(1, (0, 0), False, matfile.Game(turns, -1, 0))
    with pytest.raises(matfile.ReplayError) as err:
        matfile.replay(game, 3, source="g")
    assert str(err.value) == "g, action 2: 'Doubles => 4' with the cube at 1: a double makes it 2"
    assert [d.kind for d in err.value.done] == ["move"]


def test_automatic_doubles_let_the_first_double_start_from_the_raised_cube():
    """A money file of automatic doubles (``; [AutoDoubles "N"]``) does not record the cube the opening ties raised:
    its first double may be from any cube up to 2**N; a file without the header may not."""
    body = " 0 point match\n\n Game 1\n alice : 0   bob : 0\n  1) 31: 8/5 6/5                   Doubles => 8\n"
    match = matfile.read_match('; [AutoDoubles "2"]\n' + body)
    decisions = matfile.replay(match.games[0], 0)
    assert [(d.kind, d.cube.value) for d in decisions] == [("move", 1), ("double", 4)]
    with pytest.raises(matfile.MatFileError, match="'Doubles => 8' with the cube at 1: a double makes it 2"):
        matfile.read_match(body)
    with pytest.raises(matfile.MatFileError, match="'Doubles => 16' with the cube at 1"):
        matfile.read_match('; [AutoDoubles "2"]\n' + body.replace("=> 8", "=> 16"))


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
        (
            ["analyse", str(tmp_path / "missing.mat")],
            f"cannot read FILE.mat {str(tmp_path / 'missing.mat')!r}: No such file or directory",
        ),
        (
            ["analyse", str(tmp_path)],
            f"FILE.mat {str(tmp_path)!r} is not a regular file (a directory?): give the .mat file's name",
        ),
        (["analyse", str(small), "--ply", "5"], "ply must be a whole number 0 .. 2 (the search depth), got 5"),
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1 and "Errno" not in err


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


def test_matches_longer_than_25_points_use_the_extended_table(capsys, tmp_path):
    # GNU Backgammon plays (and writes) matches up to 64 points; Kazaross-XG2 covers 25, gnubg's extension the rest
    long = tmp_path / "long.mat"
    long.write_text(
        " 31 point match\n\n Game 1\n a : 0                      b : 0\n"
        "  1) 31: 8/5 6/5               42: 8/4 6/4\n  2)                             Doubles => 2\n  3)  Takes\n"
    )
    assert cli.main(["analyse", str(long), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["match_length"] == 31 and [d["decision"] for d in out["decisions"]][-2:] == ["double", "take"]
    r = tournament.play(["pubeval", "random"], tournament.TournamentSettings(2, seed=1, workers=1, match_length=31))[0]
    assert r["pairings"][0]["matches"] == 2
    with pytest.raises(BgbotError, match="64 points"):
        tournament.play(["pubeval", "random"], tournament.TournamentSettings(2, seed=1, workers=1, match_length=65))


def _gnubg_statistics() -> dict[str, tuple[str, str]]:
    """GNU Backgammon's 'show statistics match' of noisy_match.mat: {row label: (gnubg's value, root's value)}."""
    rows = {}
    for line in (DATA / "noisy_match.gnubg-analysis.txt").read_text().splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) == 3:
            rows[parts[0]] = (parts[1], parts[2])
    return rows


def test_close_or_actual_rule_gives_gnubgs_count():
    """GNU Backgammon's own cube equities through bgbot's rule give GNU Backgammon's "close or actual" counts."""
    stats = _gnubg_statistics()
    expected = tuple(int(v) for v in stats["Close or actual cube decisions"])
    assert expected == (9, 16)
    cube = json.loads((DATA / "noisy_match_gnubg_cube.json").read_text())
    decisions = [d for game in cube["games"] for d in game]
    assert tuple(sum(d["player"] == p for d in decisions) for p in ("gnubg", "root")) == tuple(
        int(v) for v in stats["Total cube decisions"]
    )
    counts = tuple(
        sum(analysis.close_or_actual(d["decision"], d["nd"], d["dt"], d["dp"]) for d in decisions if d["player"] == p)
        for p in ("gnubg", "root")
    )
    assert counts == expected


def test_close_or_actual_count_against_gnubg(result):
    """bgbot's count with its own evaluation: the noisy side's equals GNU Backgammon's (9); the other side's 16
    no-doubles are near the 0.16 line, where bgbot's and GNU Backgammon's cube equities differ (21 here)."""
    stats = _gnubg_statistics()
    gnubg_counts = [int(v) for v in stats["Close or actual cube decisions"]]
    noisy, clean = result["players"]
    assert noisy["cube"]["decisions"] == gnubg_counts[0]
    assert abs(clean["cube"]["decisions"] - gnubg_counts[1]) <= 5
    doubles = sum(d["decision"] in ("double", "take", "pass") for d in result["decisions"])
    assert doubles == 12  # every actual cube action counts: 6 doubles, 4 takes, 2 passes


def test_cube_decisions_at_the_analysis_ply(result):
    """``--ply N`` values cube decisions from N-ply probabilities too (as ``bgbot cube --ply N``), not only checker
    plays: the errors differ from the 0-ply ones. GNU Backgammon's 2-ply analysis counts 16 close-or-actual decisions
    for the clean side; the shipped bgbot-6 21 at 0-ply and at 1-ply (bgbot-5: 21 and 19)."""
    one = analysis.analyse_file(Bot.load(), DATA / "noisy_match.mat", ply=1)
    cube0 = [d["error"] for d in result["decisions"] if d["kind"] == "cube"]
    cube1 = [d["error"] for d in one["decisions"] if d["kind"] == "cube"]
    assert len(cube0) == len(cube1) and cube0 != cube1
    assert [p["cube"]["decisions"] for p in one["players"]] == [9, 21]


def test_ratings_as_gnubg():
    """GNU Backgammon's error rates and luck rates give its ratings through bgbot's bands."""
    text = (DATA / "noisy_match.gnubg-analysis.txt").read_text()
    sections = re.split(r"\n(?=Chequerplay statistics|Luck statistics|Cube statistics|Overall statistics)", text)
    pairs = []
    for section in sections[1:]:
        rates = re.search(r"(?:Error|Luck) rate mEMG \(MWC\)\s+([+-]?\d+\.\d+).*?\s{2,}([+-]?\d+\.\d+)", section)
        names = re.search(r"(?:Chequerplay|Cube decision|Overall|Luck) rating\s+(.+?)\s{2,}(.+?)\s*$", section, re.M)
        pairs += [(float(rates.group(i)), names.group(i), section.startswith("Luck")) for i in (1, 2)]
    assert len(pairs) == 8
    for rate, name, luck in pairs:
        assert (analysis.luck_rating(rate / 1000) if luck else analysis.rating(abs(rate) / 1000)) == name
    assert [analysis.rating(r) for r in (0.0019, 0.0049, 0.0079, 0.0119, 0.0179, 0.0259, 0.0349, 0.035)] == [
        "Supernatural",
        "World class",
        "Expert",
        "Advanced",
        "Intermediate",
        "Casual player",
        "Beginner",
        "Awful!",
    ]
    assert [analysis.luck_rating(r) for r in (-0.07, -0.05, 0.0, 0.05, 0.07)] == [
        "Go to bed",
        "Bad dice, man!",
        "None",
        "Good dice, man!",
        "Go to Las Vegas",
    ]


def test_luck_and_ids(result):
    """Luck: each roll's luck is its best play's value minus the mean over the rolls (so the luck of the 21 rolls of a
    position averages 0); per player the sum; every decision's Position ID and XGID give back its position."""
    from bgbot.formats import context, positionid

    moves = [d for d in result["decisions"] if d["kind"] == "checker"]
    assert all(d["luck"] is not None and abs(d["luck"]) < 2 for d in moves)
    assert all(d["luck"] is None for d in result["decisions"] if d["kind"] == "cube")
    for side, p in enumerate(result["players"]):
        mine = [d["luck"] for d in moves if d["side"] == side]
        assert p["luck"]["rolls"] == len(mine) == 103  # GNU Backgammon's "Total moves"
        assert p["luck"]["total"] == pytest.approx(sum(mine), abs=1e-4)
    match = matfile.read_match((DATA / "noisy_match.mat").read_text())
    replayed = [d for g in match.games for d in matfile.replay(g, match.length)]
    assert len(replayed) == len(result["decisions"])
    for d, ours in zip(replayed, result["decisions"], strict=True):
        assert np.array_equal(positionid.decode(ours["position_id"]), d.position)
        ctx = context.parse_position(ours["xgid"])
        assert np.array_equal(ctx.position, d.position) and ctx.cube == d.cube and ctx.match.score == d.match.score
        assert ctx.double_offered == (d.kind in ("take", "pass"))
        assert ctx.dice == d.dice


def test_luck_of_a_known_roll():
    """The opening roll's luck: 30 non-double rolls, mean 0 over them; 31 (the best opening) is lucky, 21 unlucky."""
    bot = Bot.load()
    text = " 0 point match\n\n Game 1\n a : 0                        b : 0\n  1) 31: 8/5 6/5\n  2) 21: 13/11 6/5\n"
    decisions = analysis.analyse_text(bot, text)["decisions"]
    opening, second = (d for d in decisions if d["kind"] == "checker")
    assert opening["luck"] > 0.05 and second["luck"] < 0


def test_truncated_match_analysed_up_to_the_break(tmp_path, capsys):
    full = (DATA / "noisy_match.mat").read_text()
    cut = tmp_path / "cut.mat"
    cut.write_text(full[:3000])  # ends inside a line of game 2
    assert cli.main(["analyse", str(cut), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 2 and len(out["warnings"]) >= 1
    assert any("no result line" in w or "breaks" in w for w in out["warnings"])
    lines = full.splitlines()
    bad = next(i for i, line in enumerate(lines) if line.strip().startswith("Game 2")) + 5  # no cube action on it
    lines[bad] = "  9) 66: 24/12/off"  # an illegal play inside game 2
    broken = tmp_path / "broken.mat"
    broken.write_text("\n".join(lines) + "\n")
    assert cli.main(["analyse", str(broken)]) == 0
    report = capsys.readouterr().out
    assert report.startswith("warning: analysed up to where the match breaks:") and "game 2" in report.splitlines()[0]
    assert "2 game(s)" in report
    first = full.replace("gnubg : 0 ", "gnubg : 99", 1)  # the first game's header breaks: nothing to analyse
    assert first != full
    broken.write_text(first)
    assert cli.main(["analyse", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {broken}, line 6: score (99, 0) past the 11-point match\n", err  # the reason, not "no games"
