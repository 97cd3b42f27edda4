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
