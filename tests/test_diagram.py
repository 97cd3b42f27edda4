"""Tests for bgbot.formats.diagram and ``bgbot show``: the board drawn as GNU Backgammon draws it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.cli import main
from bgbot.formats import diagram, positionid
from bgbot.formats.context import parse_position

BOARDS = json.loads((Path(__file__).parent / "data" / "gnubg_boards.json").read_text())["boards"]


@pytest.mark.parametrize("pid", sorted(BOARDS))
def test_board_lines_are_gnubgs(pid):
    drawn = diagram.draw(positionid.decode(pid)).splitlines()
    assert [line[1:44] for line in drawn] == [line[:43] for line in BOARDS[pid]]  # without gnubg's marker column


def test_side_text_pips_cube_score_and_roll():
    ctx = parse_position("XGID=-b----E-C---eE---c-e----B-:1:1:-1:52:2:4:0:7:10")
    text = diagram.draw(ctx.position, dice=ctx.dice, cube=ctx.cube, match=ctx.match)
    assert "pips 167, off 0, score 2" in text and "pips 167, off 0, score 4" in text  # O has 2, X (on roll) 4
    assert "7-point match" in text and "cube 2, owned by O (maximum 1024)" in text and "X on roll, dice 5-2" in text
    race = np.zeros(26, dtype=np.int8)
    race[[1, 2]] = [1, 1]
    race[24] = -2
    text = diagram.draw(race, names=("me", "you"))
    assert "pips 3, off 13" in text and "pips 2, off 13" in text and "X: me" in text and "O: you" in text


def test_bgbot_show(capsys):
    assert main(["show", "4PPgASTgc/ABMA:cQkAAAAAAAAA"]) == 0
    out = capsys.readouterr().out
    assert "cube 2, centred" in out and "money play" in out and "X on roll, dice not rolled" in out
    assert main(["show", "4HPwATDgc/ABMA", "31", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["pips"] == [167, 167] and result["dice"] == [3, 1] and len(result["board"]) == 13
    assert main(["show", "4HPwATDgc/ABMA:cBEAAAAAAAAA"]) == 0  # a pending double is shown
    assert "X doubles to 2, O to answer" in capsys.readouterr().out
    assert main(["show", "nonsense"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_bgbot_show_without_a_position_asks_for_the_position_only(capsys):
    assert main(["show"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "POSITION" in err and "DICE" not in err
