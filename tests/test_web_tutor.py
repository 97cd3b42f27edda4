"""The tutor of the web page's games (:meth:`bgbot.protocols.web.WebGame.judge`): each play and cube action of the
player's judged against the bot's own choice in the same place, in money equity or (a match) EMG with the match
winning chance beside it, from set-up positions and seeded dice."""

import numpy as np
import pytest

from bgbot.api import Bot
from bgbot.cube import decision as cube_lib
from bgbot.formats import context, notation
from bgbot.protocols import web
from bgbot.rules.state import CubeState, MatchState

RACE_BGBOT_DOUBLES = "d7cNAAB3twEAAA"  # bgbot on roll, 13 checkers on its 1-5 points against 15: Double, pass
BGBOT_TOO_GOOD = "wN1tAwDf9wEAAA"  # bgbot on roll, 15 checkers on its 1-3 points against 15 outside: too good


@pytest.fixture(scope="module")
def bot():
    return Bot.load()


@pytest.fixture
def games(bot):
    g = web.Games(bot)
    yield g
    g.close()


def test_a_take_of_a_pass_is_flagged_with_the_bots_cube_analysis(bot, games):
    game = games.new(0, 0, seed=1, position=RACE_BGBOT_DOUBLES, bgbot_first=True)
    assert game.state()["prompt"] == "take"
    d = bot.cube_action(context.resolve(RACE_BGBOT_DOUBLES).position, CubeState(), MatchState())
    assert d.action == "Double, pass" and d.errors["take"] > 0.5
    take = game.judge("take", 0.06)
    assert take is not None and take.flagged and (take.decision, take.played, take.best) == ("take", "take", "pass")
    assert take.error == pytest.approx(d.errors["take"], abs=1e-9) and take.unit == "equity" and take.mwc_error is None
    assert take.text() == (
        f"take loses {d.errors['take']:.3f} equity ({1000 * d.errors['take']:.0f} mp) against pass (bgbot: Double, pass)"
    )
    drop = game.judge("pass", 0.06)
    assert drop is not None and drop.error == 0.0 and not drop.flagged
    state = game.send("take", tutor=0.06)
    assert state["verdict"] == take.to_json() and state["tutor"] == [take.to_json()]
    assert state["cube"] == {"value": 2, "owner": "me"}  # the take was played after the verdict
    assert game.send("roll")["verdict"] is None  # no tutor asked: no verdict, the flagged one stays
    assert len(game.state()["tutor"]) == 1


def test_a_double_at_a_match_score_is_judged_in_emg_and_mwc(bot, games):
    game = games.new(3, 0, seed=7, position=BGBOT_TOO_GOOD, bgbot_first=True)
    state = game.state()
    assert state["prompt"] == "roll" and state["may_double"]  # bgbot played on (too good), you are to roll
    cube, match = CubeState(), MatchState(3, (0, 0))
    d = bot.cube_action(np.array(state["points"], dtype=np.int8), cube, match)
    assert d.unit == "mwc" and not d.kind.doubles
    emg = cube_lib.normalised_equity([d.equities[k] for k in ("no_double", "double_take", "double_pass")], cube, match)
    double = game.judge("double", 0.06)
    assert double is not None and double.flagged and (double.played, double.best) == ("double", "no double")
    assert double.unit == "emg" and double.error == pytest.approx(emg[0] - min(emg[1], emg[2]), abs=1e-9)
    assert double.mwc_error == pytest.approx(d.errors["double"], abs=1e-9) and double.mwc_error > 0.1
    assert double.action == d.action and f"({100 * d.errors['double']:.1f}% MWC)" in double.text()
    roll = game.judge("roll", 0.0)
    assert roll is not None and roll.error == 0.0 and not roll.flagged and roll.best == "no double"
    assert game.judge("hint") is None and game.judge("resign") is None  # not decisions the tutor judges
    after = game.send("double", tutor=0.06)
    assert after["tutor"][0]["text"] == double.text() and "bgbot takes" in " ".join(after["messages"])


@pytest.mark.parametrize("length", [0, 5])
def test_a_play_is_judged_against_the_bots_ranking(bot, games, length):
    game = games.new(length, 0, seed=3)
    for _ in range(4):  # to the first play of yours
        state = game.state()
        if state["prompt"] == "play":
            break
        game.send("roll")
    state = game.state()
    assert state["prompt"] == "play"
    pos, dice = np.array(state["points"], dtype=np.int8), tuple(state["dice"])
    cube, match = CubeState(), MatchState(length, (0, 0)) if length else MatchState()
    ranked = bot.rank_plays(pos, dice, cube, match)
    worst = ranked[-1]
    verdict = game.judge(worst.play, 0.02)
    assert verdict is not None and verdict.decision == "play" and verdict.best == ranked[0].play
    assert verdict.played == notation.format_play(pos, notation.parse_play(pos, dice, worst.play))
    if length:
        emg = cube_lib.normalised_equity([ranked[0].mwc, worst.mwc], cube, match)
        assert verdict.unit == "emg" and verdict.error == pytest.approx(emg[0] - emg[1], abs=1e-9)
        assert verdict.mwc_error == pytest.approx(ranked[0].mwc - worst.mwc, abs=1e-9)
    else:
        assert verdict.unit == "equity" and verdict.error == pytest.approx(ranked[0].equity - worst.equity, abs=1e-9)
    assert verdict.flagged == (verdict.error > 0.02) and verdict.error > 0.1
    best = game.judge(ranked[0].play, 0.0)
    assert best is not None and best.error == 0.0 and not best.flagged
    assert game.judge("24/1", 0.0) is None  # an illegal play: the game explains it, the tutor is silent
    played = game.send(worst.play, tutor=0.02)
    assert played["verdict"] == verdict.to_json() and played["tutor"][-1] == verdict.to_json()
    assert played["messages"] and not any("\n" in m for m in played["log"])  # no board diagrams in the log


def test_a_game_from_a_position_starts_with_the_person_on_roll_in_it(games):
    """A given position (no ``bgbot_first``) is the person's to roll in, whatever the seed: no opening roll that could
    let bgbot move first, from the position seen from the other side."""
    after_31 = "sGfwATDgc/ABMA"  # the opening after 8/5 6/5, the other side on roll
    for seed in range(6):
        state = games.new(0, 0, seed=seed, position=after_31).state()
        assert (state["prompt"], state["position_id"]) == ("roll", after_31), (seed, state["log"])
        assert not any("Opening roll" in line for line in state["log"]), (seed, state["log"])


def test_bad_starts_and_thresholds_have_messages(games):
    with pytest.raises(web.WebError, match="bgbot_first needs a position"):
        games.new(0, 0, bgbot_first=True)
    with pytest.raises(context.ContextError):
        games.new(0, 0, position="nonsense!!")
    game = games.new(0, 0, seed=1)
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(web.WebError, match="threshold is a number >= 0"):
            game.send("roll", tutor=bad)
