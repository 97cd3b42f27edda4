"""Pubeval against gnubg-nn's independent implementation (``gnubg_nn.pub_best_move``)."""

from __future__ import annotations

import gnubg_nn  # the oracle: a test dependency, never skipped
import numpy as np

from bgbot.evaluation import pubeval
from bgbot.evaluation.selection import segment_argmax
from bgbot.rules import board
from tests.gnubg_oracle import from_gnubg, from_gnubg_after, to_gnubg


def _apply_pub_play(gboard, steps):
    """Apply ``pub_best_move``'s flat 0-based [from, to, ...] (24 = bar, -1 = off) to ``[opp, me]``; return it."""
    opp, me = list(gboard[0]), list(gboard[1])
    for f, t in zip(steps[::2], steps[1::2]):
        me[f] -= 1
        if t >= 0:
            me[t] += 1
            if opp[23 - t] == 1:
                opp[23 - t] = 0
                opp[24] += 1
    return [opp, me]


def _random_decisions(n_decisions: int, seed: int):
    """(board, d1, d2, candidate afterstates) from random self-play with gnubg-nn's move generator."""
    rng = np.random.default_rng(seed)
    out = []
    gboard = to_gnubg(board.starting_position())
    while len(out) < n_decisions:
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        keys = gnubg_nn.moves(gboard, d1, d2)
        if not keys:
            gboard = [gboard[1], gboard[0]]
            continue
        after = [from_gnubg_after(gnubg_nn.board_from_position_key(k)) for k in keys]
        out.append((gboard, d1, d2, np.stack(after)))
        nxt = after[rng.integers(len(after))]
        gboard = to_gnubg(board.starting_position()) if board.game_result(nxt) != 0 else to_gnubg(nxt)
    return out


def test_weights_and_source_shipped():
    assert pubeval.WEIGHTS_CONTACT.shape == pubeval.WEIGHTS_RACE.shape == (122,)
    assert "Tesauro" in pubeval._DATA["source"]


def test_features_of_starting_position_by_hand():
    # The afterstate is seen by the opponent; flip the start (symmetric) so the mover has the starting position.
    x = pubeval.features(board.flip(board.starting_position())[None])[0]
    expected = np.zeros(122)
    for point, n in [(24, 2), (13, 5), (8, 3), (6, 5)]:
        u = 5 * (24 - point)
        expected[u + 2] = 1.0
        expected[u + 3] = n == 3
        expected[u + 4] = (n - 3) / 2 if n >= 4 else 0.0
    np.testing.assert_array_equal(x, expected)


def test_is_race():
    assert not pubeval.is_race(board.starting_position())
    p = np.zeros(26, dtype=np.int8)
    p[[3, 5]] = [7, 8]
    p[[10, 20]] = [-7, -8]
    assert pubeval.is_race(p)
    p[11] = 1
    p[5] = 7
    assert not pubeval.is_race(p)
    assert not pubeval.is_race(board.flip(p))


def test_segment_argmax_first_of_ties():
    values = np.array([1.0, 3.0, 3.0, 0.5, -np.inf, 2.0, np.inf])
    parent = np.array([0, 0, 0, 1, 2, 2, 3])
    np.testing.assert_array_equal(segment_argmax(values, parent), [1, 3, 5, 6])


def test_bearing_off_last_checker_scores_infinity():
    mover = np.zeros(26, dtype=np.int8)
    mover[20] = -15
    s = pubeval.scores(board.flip(mover)[None], np.array([True]))
    assert s[0] == np.inf


def test_move_choice_agrees_with_gnubg_pub_best_move():
    decisions = _random_decisions(4000, seed=3)
    afterstates = np.concatenate([d[3] for d in decisions])
    parent = np.repeat(np.arange(len(decisions)), [len(d[3]) for d in decisions])
    positions = np.stack([from_gnubg(d[0]) for d in decisions])
    chosen = pubeval.choose(afterstates, parent, positions)
    race_rows = pubeval.is_race(positions)[parent]
    s = pubeval.scores(afterstates, race_rows)
    starts = np.searchsorted(parent, np.arange(len(decisions)))
    disagreements = []
    for i, (gboard, d1, d2, cands) in enumerate(decisions):
        theirs = from_gnubg_after(_apply_pub_play(gboard, gnubg_nn.pub_best_move(gboard, d1, d2)))
        match = np.flatnonzero((cands == theirs).all(axis=1))
        assert len(match) == 1, f"gnubg's pubeval play {theirs.tolist()} is not among the candidates"
        row = starts[i] + match[0]
        if row != chosen[i] and s[row] != s[chosen[i]]:
            disagreements.append((gboard, d1, d2))
    assert pubeval.is_race(positions).sum() > 100, "the sample should hold races too"
    assert disagreements == []


def test_choose_without_positions_matches_on_random_play():
    decisions = _random_decisions(500, seed=5)
    afterstates = np.concatenate([d[3] for d in decisions])
    parent = np.repeat(np.arange(len(decisions)), [len(d[3]) for d in decisions])
    positions = np.stack([from_gnubg(d[0]) for d in decisions])
    with_parents = pubeval.choose(afterstates, parent, positions)
    without = pubeval.choose(afterstates, parent)
    assert (with_parents == without).mean() > 0.99
