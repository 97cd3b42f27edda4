"""Jellyfish .mat files: notation, layout, and import into GNU Backgammon itself."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from bgbot.arena import tournament
from bgbot.arena.players import PubevalPlayer, RandomPlayer
from bgbot.formats import matfile, positionid
from bgbot.rules.board import flip, starting_position
from bgbot.rules.movegen_scalar import legal_plays
from tests.gnubg_import import imported_score

GNUBG = "/usr/games/gnubg"


def test_play_steps_notation():
    start = starting_position()
    after = [p for p in legal_plays(start, 3, 1) if p.afterstate[5] == 2][0].afterstate
    assert matfile.play_steps(start, (3, 1), flip(after)) in ("8/5 6/5", "6/5 8/5")
    p = np.zeros(26, dtype=np.int8)
    p[[25, 8]] = [1, 14]
    p[[20, 1]] = [-1, -14]
    play = [q for q in legal_plays(p, 5, 2) if q.afterstate[0] == -1 and q.afterstate[18] == 1][0]
    assert matfile.play_steps(p, (5, 2), flip(play.afterstate)) == "25/20* 20/18"
    home = np.zeros(26, dtype=np.int8)
    home[[3, 6, 1]] = [1, 1, 0]
    home[24] = -15
    assert sorted(matfile.play_steps(home, (6, 3), flip(legal_plays(home, 6, 3)[0].afterstate)).split()) == [
        "3/0",
        "6/0",
    ]
    with pytest.raises(matfile.MatFileError, match="no legal play"):
        matfile.play_steps(start, (3, 1), flip(start))


def test_match_layout():
    g = matfile.Game(
        (
            matfile.Turn(1, (2, 5), "13/8 24/22"),
            matfile.Turn(0, (3, 4), ""),
            matfile.Turn(1, (6, 6), "24/18 24/18 13/7 13/7"),
        ),
        winner=1,
        points=2,
    )
    text = matfile.match_text(("alice", "bob"), [g, g])
    lines = text.splitlines()
    assert lines[2] == " 0 point match" and lines[4] == " Game 1"
    assert lines[5] == " alice : 0                      bob : 0"
    assert lines[6] == "  1)                             52: 13/8 24/22"
    assert lines[7] == "  2) 43:                         66: 24/18 24/18 13/7 13/7"
    assert lines[8].strip() == "Wins 2 points" and lines[8].startswith(" " * 34)
    assert " alice : 0                      bob : 2" in lines


def _gnubg_final_position_ids(path) -> list[str]:
    out = subprocess.run(
        [GNUBG, "-t", "-q"], input=f"import mat {path}\n", capture_output=True, text=True, timeout=120
    ).stdout
    assert "WARNING" not in out and "garbage" not in out, out[:2000]
    return re.findall(r"Position ID: (\S+)", out)


def test_gnubg_imports_and_replays_to_the_same_final_positions(tmp_path):
    c = tournament.play_games(PubevalPlayer(), RandomPlayer(1), seed=11, pairing=0, start=0, stop=4, record=True)
    for g, (game, final) in enumerate(zip(c.games_mat, c.final)):
        path = tmp_path / f"g{g}.mat"
        path.write_text(matfile.match_text(("pubeval", "random"), [game]))
        assert _gnubg_final_position_ids(path)[-1] == positionid.encode(final)
    whole = tmp_path / "all.mat"  # the whole session in one file imports without complaint
    whole.write_text(matfile.match_text(("pubeval", "random"), c.games_mat))
    assert _gnubg_final_position_ids(whole)[-1] == positionid.encode(c.final[-1])


def test_resignations_as_gnubg_writes_them_replay_and_import(tmp_path):
    """A resignation is the winner's ``Wins N`` line alone; a side that resigns after rolling leaves its roll with no
    play (GNU Backgammon's export). Such files replay, and GNU Backgammon imports them to the same score."""
    games = [
        # the right player rolls 6-3 and resigns: its roll, then the left player's Wins on the next line
        matfile.Game(
            (matfile.Turn(1, (2, 1), "13/11 6/5"), matfile.Turn(0, (5, 2), "13/8 24/22"), matfile.Turn(1, (6, 3), "")),
            winner=0,
            points=1,
        ),  # fmt: skip
        # the left player resigns after its opening roll: the right player's Wins on the same line
        matfile.Game((matfile.Turn(0, (6, 2), ""),), winner=1, points=1),
        # the right player resigns a gammon before its roll
        matfile.Game((matfile.Turn(0, (4, 2), "8/4 6/4"),), winner=0, points=2),
    ]
    path = tmp_path / "resigned.mat"
    path.write_text(matfile.match_text(("alice", "bob"), games))
    lines = path.read_text().splitlines()
    assert "  2) 52: 13/8 24/22              63:" in lines and "      Wins 1 point" in lines
    assert "  1) 62:                         Wins 1 point" in lines
    assert "  1) 42: 8/4 6/4" in lines and "      Wins 2 points" in lines
    match = matfile.read_match(path.read_text())
    assert [g.game for g in match.games] == games
    kinds = [[d.kind for d in matfile.replay(g, 0)] for g in match.games]
    assert kinds == [["move", "no_double", "move", "no_double"], [], ["move"]]
    assert imported_score(path) == (3, 1)
    # a dice-only turn with legal plays anywhere but at the end of a finished game stays an error
    cut = matfile.MatchGame(1, (0, 0), False, matfile.Game(games[0].turns, winner=-1, points=0))
    with pytest.raises(matfile.ReplayError, match="63"):
        matfile.replay(cut, 0)


def test_gnubgs_own_export_of_resignations_replays(tmp_path):
    """GNU Backgammon plays both sides by hand, one resigning after rolling, the other before; its export reads back
    with the same winners and points and every game replays."""
    out = tmp_path / "g.mat"
    script = (
        "set player 0 human\nset player 1 human\nset seed 7\n"
        "new game\nmove 13/11 6/5\nroll\nmove 24/22 13/8\nroll\nresign normal\naccept\n"  # 1 resigns after its roll
        "new game\nresign gammon\naccept\n"  # 0 resigns a gammon after its opening roll (Jacoby: 2 points)
        f"export match mat {out}\ny\n"
    )
    log = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=120).stdout
    assert out.exists(), log[-2000:]
    match = matfile.read_match(out.read_text())
    done = [g for g in match.games if g.game.winner >= 0]
    assert [(g.game.winner, g.game.points) for g in done] == [(0, 1), (1, 2)], out.read_text()
    assert done[0].game.turns[-1] == matfile.Turn(1, (6, 3), "")
    for g in done:
        matfile.replay(g, 0)
