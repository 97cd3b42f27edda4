"""The Python API: legal plays against gnubg-nn, ranked plays against Bot.evaluate, cube actions."""

import doctest

import gnubg_nn
import numpy as np
import pytest

import bgbot.api
from bgbot.api import ApiError, Bot, Probabilities, legal_plays
from bgbot.cube import decision as cube
from bgbot.evaluation.checkpoint import CheckpointError
from bgbot.formats import positionid
from bgbot.formats.notation import NO_PLAY
from bgbot.rules import board
from bgbot.rules.state import CubeState, MatchState
from tests.gnubg_oracle import from_gnubg, to_gnubg

START = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def bot():
    return Bot.load()


def gnubg_results(position, d1, d2):
    """Position IDs of every resulting position (opponent on roll), by gnubg-nn alone."""
    keys = gnubg_nn.moves(to_gnubg(position), d1, d2)
    ids = set()
    for key in keys:
        opp, mover = gnubg_nn.board_from_position_key(key)
        ids.add(gnubg_nn.position_id([list(mover), list(opp)]))
    return ids


def test_doctests():
    assert doctest.testmod(bgbot.api).failed == 0


def test_start_31_against_gnubg():
    plays = legal_plays(START, "31")
    assert len(plays) == 16
    assert {p.position_id for p in plays} == gnubg_results(board.starting_position(), 3, 1)
    by_text = {p.play: p for p in plays}
    # 8/5 6/5 computed by hand on gnubg-nn's board: the mover is board[1], its points 8, 6 -> 5.
    opp, me = gnubg_nn.board_from_position_id(START)
    me = list(me)
    me[7] -= 1
    me[5] -= 1
    me[4] += 2
    assert by_text["8/5 6/5"].position_id == gnubg_nn.position_id([me, list(opp)])


@pytest.mark.parametrize(
    "pid, dice",
    [("4HPwATDgc/ABMA", (6, 6)), ("4HPwATDgc/ABUA", (6, 4)), ("sGfwATDgc/ABMA", (5, 2)), ("t9sNAAC32w0AAA", (2, 1))],
)
def test_more_positions_against_gnubg(pid, dice):
    pos = positionid.decode(pid)
    plays = legal_plays(pos, dice)
    expected = gnubg_results(pos, *dice)
    if expected:
        assert {p.position_id for p in plays} == expected
    assert len({p.play for p in plays}) == len(plays)


def closed_out():
    """Me: one checker on the bar, 14 on my 1-point; opponent: two checkers on each of my points 19..24 (its home
    board closed), 3 on my 7-point."""
    p = np.zeros(26, dtype=np.int8)
    p[25], p[1] = 1, 14
    p[19:25] = -2
    p[7] = -3
    return p


def test_no_legal_play(bot):
    pos = closed_out()
    assert gnubg_nn.moves(to_gnubg(pos), 6, 5) == ()
    plays = legal_plays(pos, (6, 5))
    assert [p.play for p in plays] == [NO_PLAY]
    assert plays[0].position_id == positionid.encode(board.flip(pos))
    ranked = bot.rank_plays(pos, (6, 5))
    assert [p.play for p in ranked] == [NO_PLAY]


def test_rank_plays_probabilities_are_flipped_evaluations(bot):
    ranked = bot.rank_plays(START, (3, 1))
    assert len(ranked) == 16
    equities = [p.equity for p in ranked]
    assert equities == sorted(equities, reverse=True)
    for p in ranked:
        after = bot.evaluate(p.position_id)
        assert np.allclose(p.probabilities.to_array(), after.flipped().to_array(), atol=1e-6)
        assert p.equity == pytest.approx(-after.equity, abs=1e-6)
        assert p.mwc is None


def test_rank_plays_at_match_score_by_mwc(bot):
    ranked = bot.rank_plays(START, (3, 1), CubeState(), MatchState(length=5, score=(2, 3)))
    mwcs = [p.mwc for p in ranked]
    assert all(0 <= m <= 1 for m in mwcs)
    assert mwcs == sorted(mwcs, reverse=True)
    # In the Crawford game the cube is dead: the MWC is the cubeless one of the opponent's evaluation.
    match = MatchState(length=5, score=(4, 2), crawford=True)
    for p in bot.rank_plays(START, (3, 1), CubeState(), match)[:3]:
        opp = bot.evaluate(p.position_id).to_array()
        expected = 1 - cube.cubeless_mwc(opp, CubeState(), MatchState(5, (2, 4), crawford=True))[0]
        assert p.mwc == pytest.approx(expected, abs=1e-6)


def test_finished_game_is_scored_exactly(bot):
    # My last checker on my 1-point, opponent with none off and a checker in my home board: 1-1 wins a backgammon.
    p = np.zeros(26, dtype=np.int8)
    p[1] = 1
    p[2], p[13] = -1, -14
    (best,) = bot.rank_plays(p, (1, 1))
    assert best.play == "1/off"
    assert best.probabilities.to_dict() == {
        "win": 1.0,
        "win_gammon": 1.0,
        "win_backgammon": 1.0,
        "lose_gammon": 0.0,
        "lose_backgammon": 0.0,
    }
    assert best.equity == 3.0


def test_a_ply_outside_the_search_depths_is_refused_by_the_one_check(bot):
    from bgbot.evaluation.search import SearchError, check_ply

    for ply in (-1, 3, 1.0, True, "1"):
        message = f"ply must be a whole number 0 .. 2 (the search depth), got {ply!r}"
        for call, args, kwargs in (
            (check_ply, (ply,), {}),
            (bot.rank_plays, (START, (3, 1)), {"ply": ply}),
            (bot.evaluate, (START,), {"ply": ply}),
            (bot.cube_probabilities, (START,), {"ply": ply}),
        ):
            with pytest.raises(SearchError) as caught:
                call(*args, **kwargs)
            assert str(caught.value) == message and isinstance(caught.value, ValueError)
    assert [check_ply(p) for p in (0, 1, 2)] == [0, 1, 2]


def test_ply_1_uses_search_and_keeps_probabilities_consistent(bot):
    ranked = bot.rank_plays(START, (3, 1), ply=1)
    assert len(ranked) == 16 and ranked[0].equity >= ranked[1].equity
    assert {p.play for p in ranked} == {p.play for p in bot.rank_plays(START, (3, 1))}
    for p in ranked:
        assert p.equity == pytest.approx(p.probabilities.equity, abs=1e-6)


def test_evaluate_is_consistent(bot):
    p = bot.evaluate(START)
    a = p.to_array()
    assert 0 < a[0] < 1 and a[2] <= a[1] <= a[0] and a[4] <= a[3] <= 1 - a[0]
    assert p.flipped().flipped() == p


def test_cube_action_from_position_or_probabilities(bot):
    d = bot.cube_action(START)
    assert d.efficiency == 0.68 and d.unit == "equity"
    same = bot.cube_action(probabilities=bot.cube_probabilities(START), efficiency=0.68)
    assert same == d
    # A certain single win, no gammon possible: Double, pass.
    sure = bot.cube_action(Probabilities(1.0, 0.0, 0.0, 0.0, 0.0))
    assert sure.action == "Double, pass"
    with pytest.raises(ApiError):
        bot.cube_action()


def test_load_errors(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint file"):
        Bot.load(tmp_path / "missing.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError):
        Bot.load(bad)


def test_from_gnubg_helper_roundtrip():
    # Guard for the oracle helper used above.
    pos = positionid.decode("sGfwATDgc/ABMA")
    assert np.array_equal(from_gnubg(to_gnubg(pos)), pos)
