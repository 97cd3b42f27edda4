"""Rollouts: dice, variance reduction, exactness against an exact bear-off solver, determinism, the command."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena import rollout as ro
from bgbot.cli import main
from bgbot.evaluation.checkpoint import load
from bgbot.evaluation.specialists import evaluator_for
from bgbot.formats import positionid
from bgbot.rules.board import starting_position
from bgbot.rules.movegen import generate_all_rolls
from tests.shipped_values import BGBOT_1

MODEL = Path(__file__).resolve().parents[1] / "bgbot" / "data" / "default_model.pt"


@pytest.fixture(scope="module")
def ev():
    net, _ = load(MODEL)
    return evaluator_for(net)


def test_quasi_random_dice_stratify_the_first_two_rolls():
    s = ro.RolloutSettings(trials=1296, seed=5)
    dice = ro.RolloutDice(s, np.arange(1296))
    first = dice.roll(np.arange(1296), np.zeros(1296))
    second = dice.roll(np.arange(1296), np.ones(1296))
    pairs = {(tuple(a), tuple(b)) for a, b in zip(first.tolist(), second.tolist())}
    assert len(pairs) == 1296  # every ordered two-roll sequence exactly once
    third = dice.roll(np.arange(1296), np.full(1296, 2))
    assert third.min() == 1 and third.max() == 6 and abs(third.mean() - 3.5) < 0.15
    # The dice of a trial do not depend on which other trials are rolled with it, and they depend on the seed.
    assert (dice.roll(np.array([7, 900]), np.array([0, 3])) == np.array([first[7], dice.roll([900], [3])[0]])).all()
    other = ro.RolloutDice(ro.RolloutSettings(trials=1296, seed=6), np.arange(1296))
    assert (other.roll(np.arange(1296), np.zeros(1296)) != first).any()
    # Not a multiple of 36: plain random dice.
    plain = ro.RolloutDice(ro.RolloutSettings(trials=100, seed=5), np.arange(100))
    assert len({tuple(d) for d in plain.roll(np.arange(100), np.zeros(100)).tolist()}) < 36


def test_variance_reduction_cuts_the_standard_error_of_8_5_6_5(ev):
    cands = ro.candidates(ev, starting_position(), (3, 1), ["8/5 6/5"])
    kw = dict(trials=144, truncate=6, seed=2)
    with_vr = ro.rollout_plays(ev, [ro.Candidate(c.play, c.afterstate) for c in cands], ro.RolloutSettings(**kw))
    without = ro.rollout_plays(
        ev, [ro.Candidate(c.play, c.afterstate) for c in cands], ro.RolloutSettings(**kw, variance_reduction=False)
    )
    a, b = with_vr[0].estimate, without[0].estimate
    assert a is not None and b is not None
    assert b.equity_se > 3 * a.equity_se
    assert abs(a.equity - b.equity) < 3 * np.hypot(a.equity_se, b.equity_se)  # both estimate the same value


def test_luck_terms_have_mean_zero_per_position(ev):
    # The luck added for a position is (mean over the 36 rolls) - (value after the drawn roll): weighted over the 36
    # rolls it sums to zero exactly.
    player = ro._RolloutPlayer(ev, 0, True)
    pos = np.repeat(starting_position()[None], 21, axis=0)
    _, dice = generate_all_rolls(starting_position()[None])
    player.choose(pos, dice)
    from bgbot.rules.movegen import ROLL_WEIGHTS

    assert np.abs(ROLL_WEIGHTS @ player.luck).max() < 1e-12


# -- exactness: a small exact solver of bear-offs with at most 3 checkers a side (no gammons are possible there) ----


def _side(counts: tuple[int, ...]) -> np.ndarray:
    p = np.zeros(26, dtype=np.int8)
    p[1:7] = counts
    return p


def _position(me: tuple[int, ...], them: tuple[int, ...]) -> np.ndarray:
    p = _side(me)
    p[24:18:-1] -= np.array(them, dtype=np.int8)  # their point k (their numbering) is my index 25 - k
    return p


@functools.cache
def _win(me: tuple[int, ...], them: tuple[int, ...]) -> float:
    """Exact probability that the side on roll wins, both sides maximising their winning chances."""
    if sum(me) == 0:
        return 1.0
    if sum(them) == 0:
        return 0.0
    from bgbot.rules.movegen import ROLL_WEIGHTS

    plays, _ = generate_all_rolls(_position(me, them)[None])
    total = 0.0
    for r in range(21):
        best = 0.0
        for a in plays.afterstates[plays.parent == r]:  # the opponent on roll
            mine_left = tuple(int(-a[25 - k]) if a[25 - k] < 0 else 0 for k in range(1, 7))
            theirs = tuple(int(a[k]) for k in range(1, 7))
            best = max(best, 1.0 if sum(mine_left) == 0 else 1.0 - _win(theirs, mine_left))
        total += ROLL_WEIGHTS[r] * best
    return total


def _bearoffs(n: int, seed: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        sides = []
        for _ in range(2):
            c = np.zeros(6, dtype=int)
            np.add.at(c, rng.integers(0, 6, size=int(rng.integers(2, 4))), 1)
            sides.append(tuple(int(x) for x in c))
        if sides not in out:
            out.append((sides[0], sides[1]))
    return out


@pytest.fixture(scope="module")
def ev_bgbot1():
    """bgbot-1's evaluator: fixed weights, not the shipped model's."""
    return evaluator_for(load(BGBOT_1)[0])


@pytest.mark.parametrize("vr", [True, False])
def test_bearoff_rollouts_agree_with_the_exact_values(ev_bgbot1, vr):
    """The exact values are those of perfect play; the rollout values the net's own play (no databases). With variance
    reduction the standard errors get small enough to show where a net's bear-off play falls short of perfect (a
    generation-1 specialists candidate, models/candidates/gen1, was 5.1 SE off in one case): so a fixed net, bgbot-1, close enough at 3 SE."""
    ev = ev_bgbot1
    cases = _bearoffs(20, seed=1)
    positions = np.array([_position(m, t) for m, t in cases])
    exact = np.array([2 * _win(m, t) - 1 for m, t in cases])
    settings = ro.RolloutSettings(trials=1296, seed=3, variance_reduction=vr, databases=False)
    est = [ro.Estimate.of(r) for r in ro._run(ev, positions, np.ones(20, bool), settings)]
    eq = np.array([e.equity for e in est])
    eq_se = np.array([e.equity_se for e in est])
    within = np.abs(eq - exact) <= 3 * eq_se + 1e-9  # a sure win has no standard error
    assert within.sum() >= 19, (eq, exact, eq_se)
    assert eq_se.max() > 0 and np.abs(np.array([e.mean[1:] for e in est])).max() < 1e-9  # no gammons here


def test_bearoff_databases_give_the_exact_value(ev):
    bearoff = pytest.importorskip("bgbot.evaluation.bearoff", reason="the bear-off databases (branch endgame)")
    cases = _bearoffs(20, seed=1)
    positions = np.array([_position(m, t) for m, t in cases])
    p, se = ro.rollout_positions(positions, ev, ro.RolloutSettings(trials=1296, seed=3))
    exact = bearoff.bearoff_probabilities(positions, np.ones(20, dtype=bool))
    assert np.abs(p - exact).max() < 1e-9 and se.max() == 0.0


# -- determinism --------------------------------------------------------------------------------------------------


def test_same_seed_same_results_for_any_workers_even_when_one_dies(ev, tmp_path, monkeypatch):
    from bgbot.arena import distributed

    pos = np.array([starting_position()])
    s = ro.RolloutSettings(trials=216, truncate=2, seed=4)
    one = ro._run(ev, pos, np.ones(1, bool), s, workers=1)
    other = ro._run(ev, pos, np.ones(1, bool), ro.RolloutSettings(trials=216, truncate=2, seed=5), workers=1)
    assert not np.array_equal(one, other)
    # Two pool workers, one of which dies at its first chunk: the chunk is run again, each result counted once.
    (tmp_path / "armed").touch()
    monkeypatch.setenv(distributed.CRASH_ENV, str(tmp_path))
    seen = []
    two = ro._run(ev, pos, np.ones(1, bool), s, workers=2, progress=seen.append)
    assert (tmp_path / "fired").exists() and not (tmp_path / "armed").exists()
    assert np.array_equal(one, two) and len(seen) == len(ro.chunk_tasks(s, 1))


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")
def test_the_calling_process_is_one_of_the_workers():
    from bgbot.arena import distributed

    here = os.readlink("/proc/self")  # this process's pid; in a pool worker, the worker's
    where = distributed.run_tasks(os.readlink, ["/proc/self"] * 6, workers=2)
    assert where[-1] == here  # this process takes units from the end of the queue
    assert where[0] != here and len(set(where)) == 2  # the first went to the one pool worker


@pytest.mark.parametrize(
    ("trials", "n_starts", "vr", "per_unit"),
    [
        (1296, 1, False, 324),  # whole-game trials of one position: 4 units of 324
        (12960, 1, False, 1296),  # at most WHOLE_GAME_TRIALS trials of a start a unit
        (1296, 10, False, 180),  # at most CHUNK_GAMES games a unit
        (1296, 5, False, 324),  # the candidates of a checker-play rollout together
        (324, 28, False, 72),  # the campaign's blocks of 28 starts keep their units
        (1296, 1, True, 72),  # variance reduction: every luck term is a net output
        (100, 1, False, 72),
    ],
)
def test_work_units_cover_every_trial_once(trials, n_starts, vr, per_unit):
    s = ro.RolloutSettings(trials=trials, variance_reduction=vr)
    units = ro.chunk_tasks(s, n_starts)
    assert units[0][3] - units[0][2] == per_unit
    covered = np.zeros((n_starts, trials), dtype=int)
    for a, b, lo, hi in units:
        assert (b - a) * (hi - lo) <= ro.CHUNK_GAMES
        covered[a:b, lo:hi] += 1
    assert (covered == 1).all()


def test_whole_game_trials_are_the_same_in_any_units_and_with_other_starts(ev, monkeypatch):
    """Plain untruncated trials: a trial's result is its game's outcome, the same whether its position is rolled out
    alone in large units, in units of CHUNK_TRIALS, or together with other positions (here bit for bit)."""
    ids = ["4HPwATDgc/ABMA", "sM/gASTga/ABUA", "7gMAAN52AxBAAA"]
    pos = np.stack([positionid.decode(i) for i in ids])
    s = ro.RolloutSettings(trials=288, seed=3, variance_reduction=False)
    together = ro._run(ev, pos, np.ones(3, bool), s)
    alone = np.stack([ro._run(ev, pos[i : i + 1], np.ones(1, bool), s)[0] for i in range(3)])
    monkeypatch.setattr(ro, "WHOLE_GAME_UNITS", s.trials)  # units of CHUNK_TRIALS, as before
    assert len(ro.chunk_tasks(s, 1)) == 4
    small = ro._run(ev, pos, np.ones(3, bool), s)
    assert np.array_equal(together, alone) and np.array_equal(together, small)
    means, _ = ro.rollout_positions(pos, ev, s)
    assert np.array_equal(means, together.mean(axis=1))


# -- settings and the command ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"trials": 1}, "trials"),
        ({"trials": 0}, "trials"),
        ({"trials": ro.MAX_TRIALS + 1}, "trials"),
        ({"trials": 2.5}, "trials"),
        ({"truncate": -1}, "truncate"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_settings_raise(kw, match):
    with pytest.raises(ro.RolloutError, match=match):
        ro.RolloutSettings(**kw)


def test_the_players_ply_goes_through_the_one_ply_check():
    from bgbot.evaluation.search import SearchError

    for plies in (3, -1, 1.0):
        with pytest.raises(SearchError) as err:
            ro.RolloutSettings(plies=plies)
        assert str(err.value) == f"ply must be a whole number 0 .. 2 (the search depth), got {plies!r}"
    assert ro.RolloutSettings(plies=2).plies == 2


def test_candidates_are_the_plays_given_then_the_best_others_by_the_move_filter(ev):
    from bgbot.formats.plays import legal_plays

    start, roll = starting_position(), (5, 3)
    ranked = [c.play for c in ro.candidates(ev, start, roll)]  # the move filter's, best first
    outside = [p.play for p in legal_plays(positionid.encode(start), "53") if p.play not in ranked]
    assert ranked[0] == "8/3 6/3" and len(ranked) >= 4 and outside  # 0-ply's best; a play the filter drops
    assert [c.play for c in ro.candidates(ev, start, roll, max_candidates=3)] == ranked[:3]
    assert [c.play for c in ro.candidates(ev, start, roll, [outside[0]])] == [outside[0]]  # the plays given alone
    got = [c.play for c in ro.candidates(ev, start, roll, [outside[0]], 3)]
    assert got == [outside[0], *ranked[:2]]  # given anyway, then the two best others
    got = [c.play for c in ro.candidates(ev, start, roll, [outside[-1], ranked[1]], 4)]
    assert got == [outside[-1], ranked[1], ranked[0], ranked[2]]  # a play given is not rolled out twice
    assert len(ro.candidates(ev, start, roll, [outside[0]], 99)) == 1 + len(ranked)  # all the filter keeps
    with pytest.raises(ro.RolloutError, match="2 candidates cannot hold the 3 plays given"):
        ro.candidates(ev, start, roll, [outside[0], ranked[0], ranked[1]], 2)


def test_paired_difference_is_the_mean_and_standard_error_of_the_per_trial_differences():
    """Equities 1, -1, 1, 1 against 0 in every trial: a mean of 0.5 and a sample sd of 1 over 4 trials (se 0.5); one
    trial has no spread to measure (se 0); cubeful estimates are compared by their cubeful points."""
    wins = np.zeros((4, 5))
    wins[:, 0] = [1.0, 0.0, 1.0, 1.0]
    even = np.zeros((4, 5))
    even[:, 0] = 0.5
    assert ro.paired_difference(ro.Estimate.of(wins), ro.Estimate.of(even)) == (0.5, 0.5)
    assert ro.paired_difference(ro.Estimate.of(even), ro.Estimate.of(wins)) == (-0.5, 0.5)
    one = [ro.Estimate(np.zeros(5), np.zeros(5), 0.0, 0.0, 1, r[:1]) for r in (wins, even)]  # no spread to take
    assert ro.paired_difference(*one) == (1.0, 0.0)
    cubeful = np.column_stack([wins, [2.0, -2.0, 1.0, 1.0]])
    flat = np.column_stack([wins, np.zeros(4)])
    assert ro.paired_difference(ro.Estimate.of(cubeful), ro.Estimate.of(flat)) == (0.5, pytest.approx(0.75**0.5))


def test_cli_rollout_json_and_table(capsys):
    assert main(["rollout", "4HPwATDgc/ABMA", "31", "--trials", "144", "--truncate", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    plays = out["plays"]
    assert [p["rank"] for p in plays] == list(range(1, len(plays) + 1))
    assert plays[0]["play"] == "8/5 6/5" and plays[0]["trials"] == 144 and plays[0]["difference"] == 0.0
    assert all(p["equity_se"] > 0 for p in plays) and out["settings"]["variance_reduction"] is True
    assert all(p["difference"] < 0 and p["significant"] for p in plays[1:])
    assert all(p["significance_note"] is None for p in plays)
    assert out["se_excludes_truncation_bias"] is True
    assert main(["rollout", "4HPwATDgc/ABMA", "--trials", "36", "--truncate", "1", "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert "before the roll" in table and "Equity" in table
    assert "(± SE: the trials' noise only, not the bias of the model's valuation where they stop, after 1 ply)" in table


def test_cli_rollout_at_a_match_score_says_it_is_ignored(capsys):
    """A rollout ranks by cubeless money equity: at a match score the table says the score is ignored and the JSON has
    ``match_score_ignored`` and the match; in money play neither."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:4:4:0:5:10"
    line = "Match score 4-4 to 5 (side on roll first) ignored: cubeless money equities, ranked as in money play"
    for argv in ([xgid], [xgid.replace(":52:", ":00:"), "52"], [xgid.replace(":52:", ":00:")]):
        assert main(["rollout", *argv, "--trials", "36", "--truncate", "1", "--no-progress"]) == 0
        assert line in capsys.readouterr().out, argv
    assert main(["rollout", xgid, "--trials", "36", "--truncate", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["match_score_ignored"] is True
    assert (out["match"]["length"], out["match"]["score"]) == (5, [4, 4])
    assert main(["rollout", "4HPwATDgc/ABMA", "31", "--trials", "36", "--truncate", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["match_score_ignored"] is False and "match" not in out
    assert main(["rollout", "4HPwATDgc/ABMA", "31", "--trials", "36", "--truncate", "1", "--no-progress"]) == 0
    assert "Match score" not in capsys.readouterr().out


def test_cli_rollout_of_few_trials_judges_no_difference(capsys):
    """72 trials: the same plays as at 144 trials, clearly worse by their z-tests, yet below MIN_SIGNIFICANCE_TRIALS
    none is called significant; JSON and table say too few trials to judge."""
    assert ro.MIN_SIGNIFICANCE_TRIALS == 144
    argv = ["rollout", "4HPwATDgc/ABMA", "31", "--trials", "72", "--truncate", "2", "--no-progress"]
    assert main([*argv, "--json"]) == 0
    plays = json.loads(capsys.readouterr().out)["plays"]
    assert all(abs(p["difference"]) > 1.96 * p["difference_se"] for p in plays[1:])
    assert not any(p["significant"] for p in plays)
    assert {p["significance_note"] for p in plays} == {"too few trials to judge significance: 72 (at least 144)"}
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "Differences not judged: too few trials to judge significance: 72 (at least 144)" in table
    assert " *" not in table and "significantly worse" not in table


def test_rank_candidates_and_cube_significance_need_enough_trials():
    """A play worse by 0.5 in every trial but one: decisive at 144 trials; at 12 (and 143) trials nothing is judged.
    The cube's z-tests follow the same rule."""
    rng = np.random.default_rng(0)

    def cands(trials: int) -> list:
        good = np.zeros((trials, 5))
        good[:, 0] = 0.75 + rng.normal(0, 0.01, trials)
        bad = good.copy()
        bad[1:, 0] -= 0.25  # equity 2w - 1: 0.5 less
        return [ro.Candidate("good", starting_position(), ro.Estimate.of(good)),
                ro.Candidate("bad", starting_position(), ro.Estimate.of(bad))]  # fmt: skip

    for trials, judged in ((12, False), (143, False), (144, True)):
        ranked = ro.rank_candidates(cands(trials))
        assert ranked[1]["play"] == "bad" and ranked[1]["significant"] is judged
        assert ranked[1]["significance_note"] == ro.significance_note(trials)
        assert (ro.significance_note(trials) is None) is judged
        nd = rng.normal(0.2, 0.3, trials)
        cube = ro.cube_significance(nd, nd + 0.5 + rng.normal(0, 0.05, trials))  # doubling gains 0.5 a trial
        assert cube["double_significant"] is judged and cube["significance_note"] == ro.significance_note(trials)
        assert cube["significant"] is (cube["double_significant"] and cube["take_significant"])


@pytest.mark.parametrize(
    "argv, match",
    [
        (["4HPwATDgc/ABMA", "31", "--play", "8/1"], "unknown play '8/1'"),
        (["4HPwATDgc/ABMA", "31", "--play", "8/5 6/5", "--play", "6/5 8/5"], "twice"),
        (["4HPwATDgc/ABMA", "31", "--trials", "1"], "trials"),
        (["4HPwATDgc/ABMA", "31", "--trials", "-5"], "trials"),
        (["4HPwATDgc/ABMA", "--play", "8/5 6/5"], "need DICE"),
        (["4HPwATDgc/ABMA", "31", "--workers", "0"], "workers"),
        (["4HPwATDgc/ABMA", "31", "--ray", "127.0.0.1:1"], "cannot reach the Ray cluster"),
        (["4HPwATDgc/ABMA", "31", "--ray", "nonsense"], "HOST:PORT"),
        (
            ["4HPwATDgc/ABMA", "31", "--play", "8/5 6/5", "--play", "24/21 24/23", "--candidates", "1"],
            "1 candidate cannot hold the 2 plays given: ask for at least 2",
        ),
    ],
)
def test_cli_bad_input_is_one_error_line(capsys, argv, match):
    assert main(["rollout", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and match in err[0]


# -- cubeful ---------------------------------------------------------------------------------------------------------


def test_cube_rollout_of_a_sure_win_is_double_pass(ev):
    # One checker on my 1-point against three of theirs: I bear off next roll whatever I roll (no gammon: they have
    # 12 checkers off). No double wins 1 point, Double/Take 2, Double/Pass 1: a double, and a pass.
    pos = _position((1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 3))
    s = ro.RolloutSettings(trials=36, cube=True, databases=False)
    out = ro.cube_rollout(ev, pos, s)
    assert out["no_double"]["cubeful_equity"] == 1.0 and out["double_take"]["cubeful_equity"] == 2.0
    assert out["no_double"]["cubeful_equity_se"] == 0.0 and out["action"].endswith("pass")


def test_cubeful_trials_double_and_pass_inside(ev):
    # A race I am a big favourite in but can still lose: in the No double trials my opponent never gets to use the
    # cube before I double them out, so some trials end by a pass (cubeful +1 without a finished game).
    pos = _position((0, 0, 1, 1, 1, 0), (0, 0, 0, 0, 1, 2))
    s = ro.RolloutSettings(trials=72, cube=True, databases=False, variance_reduction=False)
    res = ro._run(ev, pos[None], np.ones(1, bool), s, cube_state=np.array([[1, -1, 1]]))[0]
    assert res.shape == (72, 6)
    assert set(np.unique(res[:, 5])) <= {-2.0, -1.0, 1.0, 2.0}  # points won by the cube, never a gammon here
    passed = (res[:, 5] == 1.0) & (res[:, 0] < 1.0)  # +1 with a cubeless evaluation that is not a finished win
    assert passed.any()


def test_variance_reduced_cubeful_trials_all_passed_at_once(ev):
    # Trials 0 and 1 of this race both end when I double at my second turn and my opponent passes: a ply in which the
    # cube phase ends every game in flight and nobody moves: the luck of the previous ply (two rows) must not be
    # added to the rows of that ply (none), which numpy refuses ("operands could not be broadcast together").
    pos = _position((0, 0, 1, 1, 1, 0), (0, 0, 0, 0, 1, 2))
    s = ro.RolloutSettings(trials=72, cube=True, databases=False)
    plain = ro.RolloutSettings(trials=72, cube=True, databases=False, variance_reduction=False)
    cs = np.array([[1, -1, 1]])
    assert (ro.play_chunk(ev, pos[None], np.ones(1, bool), 0, 2, plain, cube_state=cs)[0][:, 5] == 1.0).all()  # passed
    pair = ro.play_chunk(ev, pos[None], np.ones(1, bool), 0, 2, s, cube_state=cs)[0]
    whole = ro.play_chunk(ev, pos[None], np.ones(1, bool), 0, 72, s, cube_state=cs)[0]
    np.testing.assert_allclose(pair, whole[:2], atol=1e-5)  # the same trials, luck included, in a full chunk


def test_cube_decisions_inside_the_trials_are_made_at_the_rollout_ply(ev):
    # As `bgbot cube --ply 1` decides (Bot.cube_probabilities at ply 1: the model's cube nets where it has them):
    # before, the players doubled and took from their 0-ply probabilities whatever the rollout's ply.
    from bgbot.api import Bot

    pos = positionid.decode("7bYFAAbtnDsAAA")
    got = ro._RolloutPlayer(ev, 1, True).probabilities(np.array([pos, starting_position()]))
    bot = Bot(load(MODEL)[0])
    want = np.array([bot.cube_probabilities(p, ply=1).to_array() for p in (pos, starting_position())])
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert abs(got[0, 0] - bot.cube_probabilities(pos).to_array()[0]) > 0.01  # not the 0-ply value


def test_cube_significance_z_tests_both_decisions():
    rng = np.random.default_rng(0)
    nd = 0.6 + rng.normal(0, 0.5, 400)
    dt = nd + 0.38 + rng.normal(0, 0.1, 400)  # Double/Take ~0.98 < Double/Pass 1: the double decision is DT - ND
    out = ro.cube_significance(nd, dt)
    assert out["double_minus_no_double"] == pytest.approx((dt - nd).mean())
    assert out["double_minus_no_double_se"] == pytest.approx((dt - nd).std(ddof=1) / 20)
    assert out["double_significant"]  # +0.38 against a standard error of 0.005
    assert out["take_minus_pass"] == pytest.approx(dt.mean() - 1)
    assert abs(out["take_minus_pass"]) < 1.96 * out["take_minus_pass_se"] and not out["take_significant"]
    assert out["significant"] is (out["double_significant"] and out["take_significant"])
    # Double/Take above +1: the double decision compares Double/Pass (1) with No double.
    out = ro.cube_significance(nd, nd + 0.6)
    assert out["double_minus_no_double"] == pytest.approx(1 - nd.mean())


@pytest.mark.parametrize(("pid", "ply"), [("7bYFAAbtnDsAAA", 1), ("4HPwATDgc/ABMA", 0), ("7O4BAIB2BwAAAA", 0)])
def test_no_double_equity_stays_below_cash_plus_gammons(ev, pid, ply):
    # Doubled out of the game, the side on roll wins at most 1 plus what its gammons add; above that (beyond 3
    # standard errors, cubeful variance reduction on) the players inside took what they should pass. 7bYFAAbtnDsAAA
    # (1.2% gammons) is a pass at 1-ply that the 0-ply net takes; 7O4BAIB2BwAAAA a race I lead.
    for seed in (0, 1):
        s = ro.RolloutSettings(trials=36, seed=seed, cube=True, plies=ply)
        out = ro.cube_rollout(ev, positionid.decode(pid), s)
        nd = out["no_double"]
        share = nd["probabilities"]["win_gammon"] + nd["probabilities"]["win_backgammon"]
        assert nd["cubeful_equity"] <= 1 + share + 3 * nd["cubeful_equity_se"]
        assert isinstance(out["significant"], bool)


def test_cubeful_variance_reduction_cuts_the_standard_error_and_keeps_the_mean(ev):
    # The cubeful equity is luck-adjusted as the cubeless probabilities are (GNU Backgammon's cubeful variance
    # reduction); before, only the cubeless columns were, and the cubeful standard error stayed that of plain trials.
    pos = positionid.decode("7bYFAAbtnDsAAA")
    kw = dict(trials=72, seed=0, cube=True)
    vr = ro.cube_rollout(ev, pos, ro.RolloutSettings(**kw))["no_double"]
    plain = ro.cube_rollout(ev, pos, ro.RolloutSettings(**kw, variance_reduction=False))["no_double"]
    assert vr["cubeful_equity_se"] * 3 < plain["cubeful_equity_se"]
    diff = vr["cubeful_equity"] - plain["cubeful_equity"]
    assert abs(diff) < 3 * np.hypot(vr["cubeful_equity_se"], plain["cubeful_equity_se"])


def test_cli_cube_rollout_json(capsys):
    argv = ["rollout", "4HPwATDgc/ABMA", "--cube", "--trials", "36", "--truncate", "2", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)["cube"]
    assert out["double_pass"] == 1.0 and out["action"] == "No double, take"
    assert out["significant"] == (out["double_significant"] and out["take_significant"])
    assert out["double_minus_no_double"] == pytest.approx(
        out["double_take"]["cubeful_equity"] - out["no_double"]["cubeful_equity"]
    )
    assert out["double_take"]["cubeful_equity"] < out["no_double"]["cubeful_equity"]
    assert main(["rollout", "sOfgwQDgZ8PBAA:cAmgAEAAEAAE", "--cube"]) == 2
    assert "match score" in capsys.readouterr().err


def test_cli_cube_rollout_while_a_double_awaits_the_answer_is_the_takers(capsys):
    """A position whose double awaits the answer (a Match ID's double flag): the same rollout of No double and
    Double/Take, answered as ``bgbot cube`` answers then, Take or Pass, never the doubler's 'No double, take'."""
    argv = ["--cube", "--trials", "36", "--truncate", "2", "--workers", "1", "--json"]
    assert main(["rollout", "4HPwATDgc/ABUA", *argv]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["rollout", "4HPwATDgc/ABUA:MBkAAAAAAAAA", *argv]) == 0
    offered = json.loads(capsys.readouterr().out)
    assert "double_offered" not in plain and offered["double_offered"] is True
    dt = plain["cube"]["double_take"]["cubeful_equity"]
    assert offered["cube"]["double_take"] == plain["cube"]["double_take"] and -1.0 < dt < 1.0
    assert offered["cube"]["doubler_action"] == plain["cube"]["action"] == "No double, take"
    assert offered["cube"]["action"] == "Take"
    assert offered["cube"]["taker"] == {"action": "Take", "take": -dt, "pass": -1.0}
    from bgbot.api import Bot
    from bgbot.formats import context
    from bgbot.protocols import web

    settings = ro.RolloutSettings(trials=36, truncate=2, cube=True)  # the web page's rollout: the same answer
    req = web.RolloutRequest(context.resolve("4HPwATDgc/ABUA:MBkAAAAAAAAA"), settings)
    page = web.run_rollout(Bot.load(), req, lambda msg: None, lambda: False)
    assert page["double_offered"] is True and page["cube"]["taker"] == offered["cube"]["taker"]


def test_taker_answer_takes_passes_and_beavers():
    def cube(dt: float) -> dict:
        return {"double_take": {"cubeful_equity": dt}, "double_pass": 1.0, "action": "Double, take"}

    assert ro.taker_answer(cube(1.2))["taker"] == {"action": "Pass", "take": -1.2, "pass": -1.0}
    assert ro.taker_answer(cube(0.4))["action"] == "Take"
    assert ro.taker_answer(cube(-0.1))["action"] == "Take"  # worth taking, but no beavers
    assert ro.taker_answer(cube(-0.1), beavers=True)["action"] == "Beaver"
    assert ro.taker_answer(cube(0.4))["doubler_action"] == "Double, take"


def test_work_in_this_process_runs_with_one_torch_thread_as_in_a_worker():
    # torch's multi-threaded sigmoid differs from the one-thread one in the last bits (seen: 3e-9 in 432 trials),
    # so work run in this process must use one thread, like pool and Ray workers, for identical results.
    import torch

    from bgbot.arena import distributed

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert distributed.run_tasks(lambda _: torch.get_num_threads(), [0, 1], workers=1) == [1, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# -- the move filter ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("vr", [True, False])
def test_the_move_filter_is_for_0ply_trials(vr):
    with pytest.raises(ro.RolloutError, match="0-ply"):
        ro.RolloutSettings(move_filter=True, plies=1, variance_reduction=vr)


def test_settings_json_names_the_move_filter_only_when_on():
    """Settings recorded before the filter existed (a campaign store's) compare equal to today's defaults."""
    assert "move_filter" not in ro.RolloutSettings().to_json()
    on = ro.RolloutSettings(variance_reduction=False, move_filter=True)
    assert on.to_json()["move_filter"] is True and ro.RolloutSettings(**on.to_json()) == on


@pytest.mark.parametrize("vr", [False, True])
def test_filtered_trials_play_through_the_filter_and_only_when_asked(ev, vr):
    """Off, an evaluator carrying a filter plays every play (bit for bit the plain evaluator's trials); on, a filter
    that keeps every play changes nothing (with variance reduction: the luck too), one that keeps a single play
    changes games; a model path with ``move_filter`` loads the model's own filter (the same trials as the object)."""
    from bgbot.evaluation import prune

    own = prune.filter_for(MODEL)
    assert own is not None
    pos = np.stack([positionid.decode(i) for i in ("4HPwATDgc/ABMA", "sM/gASTga/ABUA")])
    root = np.ones(2, bool)
    trials = 36 if vr else 72
    off = ro.RolloutSettings(trials=trials, seed=2, variance_reduction=vr)
    on = ro.RolloutSettings(trials=trials, seed=2, variance_reduction=vr, move_filter=True)
    exact = ro._run(ev, pos, root, off)
    assert np.array_equal(ro._run(prune.PrunedEvaluator(ev, own), pos, root, off), exact)
    every = prune.PrunedEvaluator(ev, prune.MoveFilter(own.net, keep=10_000, extra=0))
    assert np.array_equal(ro._run(every, pos, root, on), exact)
    single = ro._run(prune.PrunedEvaluator(ev, prune.MoveFilter(own.net, keep=1, extra=0)), pos, root, on)
    assert not np.array_equal(single, exact)
    filtered = ro._run(prune.PrunedEvaluator(ev, own), pos, root, on)
    assert np.array_equal(ro._run(str(MODEL), pos, root, on), filtered)
    with pytest.raises(ro.RolloutError, match="no move filter"):
        ro._run(ev, pos, root, on)


def test_cli_rollout_filter(capsys):
    """``--filter``: trials through the model's own filter, recorded in the settings; at 1-ply it is refused (one
    error line, status 2)."""
    args = ["rollout", "4HPwATDgc/ABMA", "--trials", "36", "--json", "--no-progress", "--filter"]
    assert main([*args, "--no-variance-reduction"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["move_filter"] is True and out["position"]["trials"] == 36
    assert out["se_excludes_truncation_bias"] is False  # untruncated: no horizon, no valuation's bias
    assert main([*args, "--ply", "1"]) == 2
    assert "0-ply" in capsys.readouterr().err


@pytest.mark.parametrize("vr", [False, True])
@pytest.mark.parametrize("truncate", [0, 8])
def test_a_play_that_bears_off_the_last_checker_rolls_out_to_its_result(ev, vr, truncate):
    # The afterstate of a play bearing off the mover's last checker; the side now on roll has 15 on the board, none
    # off, none in the mover's home board: the mover has won a gammon.
    after = np.zeros(26, dtype=np.int8)
    after[[5, 6, 8, 9, 11, 13]] = [2, 4, 2, 2, 1, 4]
    settings = ro.RolloutSettings(trials=36, seed=1, variance_reduction=vr, truncate=truncate)
    mover = ro._run(ev, after[None], np.array([False]), settings)  # a checker-play rollout: the root is the mover
    assert np.array_equal(mover, np.tile([1.0, 1.0, 0.0, 0.0, 0.0], (1, 36, 1)))
    loser = ro._run(ev, after[None], np.array([True]), settings)
    assert np.array_equal(loser, np.tile([0.0, 0.0, 0.0, 1.0, 0.0], (1, 36, 1)))
    # Cubeful: centred (Jacoby: one point), and a cube of 2 owned by the loser (a gammon: 4 points).
    cube = ro.RolloutSettings(trials=36, seed=1, variance_reduction=vr, truncate=truncate, cube=True)
    got = ro._run(
        ev, np.stack([after, after]), np.array([False, False]), cube, cube_state=np.array([[1, -1, 1], [2, 0, 1]])
    )
    assert np.array_equal(got[:, :, 5], [[1.0] * 36, [4.0] * 36])


FINISHED = "4P8PAAABAAAAAA"
"""The side on roll has one checker left, on its 1 point (the opponent's 15 on its 6 point): with 2-1 the only play,
1/off, ends the game, a gammon."""


def test_a_rollout_of_a_finished_game_has_no_truncation_bias(capsys):
    """Every candidate's game over at the start (the play bore off the last checker): the result is exact, so neither
    the JSON flag nor the table's note says the errors leave out a truncation bias, from the CLI and from the web page's
    rollout; a start whose game goes on keeps them."""
    from bgbot.api import Bot
    from bgbot.formats import context
    from bgbot.protocols import web

    argv = ["rollout", FINISHED, "21", "--trials", "36", "--truncate", "1", "--no-progress"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["play"] for p in out["plays"]] == ["1/off"] and out["plays"][0]["equity"] == 2.0
    assert out["plays"][0]["equity_se"] == 0.0 and out["se_excludes_truncation_bias"] is False
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "truncated at 1 ply" in table and "(± SE: the trials' noise only" not in table
    bot = Bot.load(MODEL)
    settings = ro.RolloutSettings(trials=36, truncate=1)
    for dice, flag in (("21", False), (None, True)):  # before the roll the game goes on: a 1 point checker to move
        req = web.RolloutRequest(context.resolve(FINISHED, dice), settings)
        assert web.run_rollout(bot, req, lambda msg: None, lambda: False)["se_excludes_truncation_bias"] is flag
    assert ro.se_excludes_truncation_bias(settings, starting_position()[None]) is True
    assert ro.se_excludes_truncation_bias(ro.RolloutSettings(trials=36), starting_position()[None]) is False


def test_an_empty_play_is_one_error_line_naming_play(capsys):
    for play in ("", "  "):
        assert main(["rollout", "4HPwATDgc/ABMA", "31", "--play", play, "--trials", "36", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err == (
            "error: argument --play: an empty play: write the play to roll out, e.g. --play '8/5 6/5' "
            "(see 'bgbot rollout --help')\n"
        )


def test_an_interrupted_rollout_states_the_trials_finished(ev, monkeypatch, capsys):
    """A rollout stopped by SIGINT after 72 of 1296 trials: the table's header and the JSON give the 72 finished
    trials (of 1296, interrupted), the estimate is theirs, and the exit status is 130."""
    import signal

    settings = ro.RolloutSettings(trials=72, truncate=1)
    done = ro._run(ev, starting_position()[None], np.ones(1, dtype=bool), settings)  # (1, 72, 5)

    def stopped(*args, **kwargs):
        raise ro.RolloutInterrupted(signal.SIGINT, done, np.arange(72))

    monkeypatch.setattr(ro, "_run", stopped)
    argv = ["rollout", "4HPwATDgc/ABMA", "--trials", "1296", "--truncate", "1", "--no-progress"]
    assert main(argv) == 130
    got = capsys.readouterr()
    assert got.out.splitlines()[0] == (
        "Rollout of Position ID 4HPwATDgc/ABMA before the roll; 72 of 1296 trials (interrupted, SIGINT), 0-ply, "
        "seed 0, variance reduction, truncated at 1 ply, cubeless"
    )
    assert "1296 trials," not in got.out
    assert (
        got.err
        == "interrupted (SIGINT) after 72 of 1296 trials: the results above are those of the 72 trials finished\n"
    )
    assert main([*argv, "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    assert (out["trials_done"], out["settings"]["trials"], out["complete"], out["interrupted"]) == (
        72,
        1296,
        False,
        "SIGINT",
    )
    assert out["position"]["trials"] == 72
    assert out["position"]["equity"] == pytest.approx(ro.Estimate.of(done[0]).equity, abs=1e-12)
