"""N-ply search: batched expectimax against a plain per-roll reference, move filtering, ranking."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bgbot.evaluation import search
from bgbot.evaluation.evaluator import afterstate_probabilities, best_plays
from bgbot.evaluation.network import Evaluator, NetConfig, ValueNet
from bgbot.rules.board import game_result, starting_position
from bgbot.rules.movegen import ROLL_WEIGHTS, ROLLS, generate_plays
from bgbot.rules.outcomes import equity, flip_probabilities
from tests.positions import make_positions


@pytest.fixture(scope="module")
def ev():
    torch.manual_seed(0)
    return Evaluator(ValueNet(NetConfig(n_hidden=8)))


def reference_value(ev, afterstate, plies):
    """k-ply value of one afterstate, one roll at a time (the definition in bgbot.evaluation.search)."""
    after = afterstate[None]
    if plies == 0 or game_result(after)[0] != 0:
        return afterstate_probabilities(ev, after)[0]
    total = np.zeros(5)
    for roll, w in zip(ROLLS, ROLL_WEIGHTS):
        plays = generate_plays(after, roll[None])
        probs = afterstate_probabilities(ev, plays.afterstates)
        best = int(np.argmax(equity(probs)))
        value = probs[best] if plies == 1 else reference_value(ev, plays.afterstates[best], plies - 1)
        total += w * flip_probabilities(value[None].astype(np.float64))[0]
    return total


def test_one_ply_matches_reference(ev):
    positions = make_positions(6, seed=5)
    afters = generate_plays(positions, np.tile([[3, 1]], (6, 1))).afterstates[::3][:8]
    got = search.afterstate_values(ev, afters, 1)
    for a, g in zip(afters, got):
        np.testing.assert_allclose(g, reference_value(ev, a, 1), atol=2e-6)


def test_two_ply_matches_reference(ev):
    after = np.zeros((1, 26), dtype=np.int8)  # a short race: few replies, some rolls end the game
    after[0, [2, 5]] = [2, 1]
    after[0, [20, 23, 24]] = [-2, -1, -1]
    np.testing.assert_allclose(search.afterstate_values(ev, after, 2)[0], reference_value(ev, after[0], 2), atol=2e-6)


def test_finished_games_are_exact_at_every_ply(ev):
    p = np.zeros(26, dtype=np.int8)
    p[24] = 15  # the side on roll has none off and all in the mover's home board; the mover has borne off all
    v = search.afterstate_values(ev, p[None], 2)[0]
    np.testing.assert_array_equal(v, [1, 1, 1, 0, 0])


def test_filter_keeps_at_most_eight_within_window():
    eq = np.array([0.5, 0.4, 0.3, 0.2, 0.1, 0.0, 0.45, 0.44, 0.43, 0.42, 0.41, 0.40, 0.39, 0.0])
    parent = np.array([0] * 6 + [1] * 8)
    keep = search.filter_candidates(eq, parent)
    assert keep[:6].tolist() == [True, True, False, False, False, False]  # window 0.16
    assert keep[6:].sum() == 7 and not keep[13]  # all 7 within the window kept, the last is out
    assert search.filter_candidates(np.zeros(20), np.zeros(20, dtype=np.int64)).sum() == 8


def test_choose_at_zero_ply_is_best_plays(ev):
    positions = make_positions(30, seed=9)
    dice = np.random.default_rng(1).integers(1, 7, size=(30, 2))
    plays, chosen = search.choose(ev, positions, dice, 0)
    _, ref, _ = best_plays(ev, positions, dice)
    np.testing.assert_array_equal(chosen, ref)


def test_rank_orders_searched_plays_first(ev):
    from bgbot.arena import ranking

    found = ranking.rank(ev, starting_position()[None, :], np.array([[4, 2]]), 1)
    plays, order, probs = found.plays, found.order, found.probabilities
    assert sorted(order.tolist()) == list(range(len(plays)))
    eq = equity(probs[order])
    searched = search.filter_candidates(equity(afterstate_probabilities(ev, plays.afterstates)), plays.parent)
    k = int(searched.sum())
    assert 0 < k < len(plays)
    assert searched[order[:k]].all() and np.all(np.diff(eq[:k]) <= 0) and np.all(np.diff(eq[k:]) <= 0)
    found0 = ranking.rank(ev, starting_position()[None, :], np.array([[4, 2]]), 0)
    np.testing.assert_array_equal(found0.probabilities, afterstate_probabilities(ev, found0.plays.afterstates))


def test_blocks_of_positions_evaluate_as_one_batch(monkeypatch):
    """A batch larger than ``BLOCK_ROWS`` goes to the evaluator in blocks: the same probabilities and classes as in
    one call (specialist nets, so each block is split by class again)."""
    from bgbot.evaluation import evaluator, specialists
    from bgbot.rules.movegen import generate_all_rolls

    torch.manual_seed(1)
    ev = specialists.evaluator_for(specialists.fresh(n_hidden=8))
    x = np.concatenate([generate_all_rolls(make_positions(8, seed=4))[0].afterstates, make_positions(300, seed=4)])
    whole, codes = evaluator.classified_probabilities(ev, x)
    monkeypatch.setattr(evaluator, "BLOCK_ROWS", 37)
    blocks, block_codes = evaluator.classified_probabilities(ev, x)
    assert len(x) > 10 * 37 and len(np.unique(codes)) >= 4  # net classes and bear-offs
    np.testing.assert_array_equal(block_codes, codes)
    np.testing.assert_allclose(blocks, whole, rtol=0, atol=1e-6)


def test_negative_plies_raise(ev):
    with pytest.raises(search.SearchError, match="-1"):
        search.ranked_values(ev, starting_position()[None, :], np.array([[4, 2]]), -1)


@pytest.mark.parametrize("collide", [False, True])
def test_distinct_rows_are_exact(monkeypatch, collide):
    """Transposition merging: every row maps back to an equal row, distinct rows stay apart, also when the 64-bit mix
    is forced to collide for every position (the exact fallback)."""
    from bgbot.rules.movegen import generate_all_rolls

    replies, _ = generate_all_rolls(make_positions(12, seed=9))
    x = np.concatenate([replies.afterstates, replies.afterstates[::3]])  # many repeats
    if collide:
        monkeypatch.setattr(search, "_MIX", np.zeros(4, dtype=np.uint64))
    first, inverse = search._distinct(x)
    np.testing.assert_array_equal(x[first][inverse], x)
    assert len(first) == len(np.unique(x, axis=0)) < len(x)
