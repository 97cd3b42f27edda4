"""Players: legal choices, batching independence, spec strings, gnubg-nn conversions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bgbot.arena import players
from bgbot.evaluation.evaluator import best_plays
from bgbot.evaluation.network import Evaluator, NetConfig, ValueNet
from bgbot.rules.board import flip, starting_position
from bgbot.rules.movegen import generate_plays
from tests.positions import make_positions


@pytest.fixture(scope="module")
def positions():
    return make_positions(200, seed=7)


@pytest.fixture(scope="module")
def dice(positions):
    return np.random.default_rng(3).integers(1, 7, size=(len(positions), 2)).astype(np.int8)


def small_evaluator(seed: int = 0) -> Evaluator:
    torch.manual_seed(seed)
    return Evaluator(ValueNet(NetConfig(n_hidden=8)))


def assert_legal(positions, dice, chosen):
    plays = generate_plays(positions, dice)
    legal = {(int(p), bytes(a)) for p, a in zip(plays.parent, plays.afterstates)}
    assert chosen.shape == positions.shape and chosen.dtype == np.int8
    for i, row in enumerate(chosen):
        assert (i, bytes(row)) in legal


@pytest.mark.parametrize(
    "make",
    [
        lambda: players.PubevalPlayer(),
        lambda: players.RandomPlayer(5),
        lambda: players.NetPlayer(small_evaluator(), 0),
        lambda: players.NetPlayer(small_evaluator(), 1),
    ],
)
def test_players_choose_legal_plays(make, positions, dice):
    n = 40 if getattr(make(), "plies", 0) else len(positions)
    assert_legal(positions[:n], dice[:n], make().choose(positions[:n], dice[:n]))


def test_net_player_at_0_ply_is_best_plays(positions, dice):
    ev = small_evaluator(1)
    plays, chosen, _ = best_plays(ev, positions, dice)
    np.testing.assert_array_equal(players.NetPlayer(ev).choose(positions, dice), plays.afterstates[chosen])


def test_random_player_is_seeded_and_batch_independent(positions, dice):
    a = players.RandomPlayer(11)
    whole = a.choose(positions, dice)
    halves = np.concatenate([a.choose(positions[:77], dice[:77]), a.choose(positions[77:], dice[77:])])
    np.testing.assert_array_equal(whole, halves)
    np.testing.assert_array_equal(whole, players.RandomPlayer(11).choose(positions, dice))
    assert (players.RandomPlayer(12).choose(positions, dice) != whole).any()


def test_random_player_is_roughly_uniform():
    start = np.tile(starting_position(), (3000, 1))
    dice = np.tile([[6, 5]], (3000, 1)).astype(np.int8)
    # Same position and dice give the same choice, so vary the seed.
    picks = [bytes(players.RandomPlayer(s).choose(start[:1], dice[:1])[0]) for s in range(600)]
    counts = np.array(list({k: picks.count(k) for k in set(picks)}.values()))
    n_plays = len(generate_plays(start[:1], dice[:1]))
    assert len(counts) == n_plays and counts.min() > 0.4 * 600 / n_plays


def test_gnubg_converters_round_trip(positions):
    for p in positions[:50]:
        np.testing.assert_array_equal(players.from_gnubg(players.to_gnubg(p)), p)


def test_gnubg_player_matches_gnubg_nn(positions, dice):
    import gnubg_nn

    chosen = players.GnubgPlayer(0).choose(positions[:60], dice[:60])
    assert_legal(positions[:60], dice[:60], chosen)
    for p, (d1, d2), after in zip(positions[:60], dice[:60], chosen):
        steps = gnubg_nn.best_move(players.to_gnubg(p), int(d1), int(d2), n=0)
        np.testing.assert_array_equal(players.apply_steps(p, steps or ()), flip(after))


def test_apply_steps_hits_and_bears_off():
    p = np.zeros(26, dtype=np.int8)
    p[[25, 3]] = [1, 1]
    p[20], p[1] = -1, -14
    after = players.apply_steps(p, [(25, 20), (3, 0)])
    assert after[20] == 1 and after[0] == -1 and after[25] == 0 and after[3] == 0


@pytest.mark.parametrize(
    "spec, expect",
    [
        ("pubeval", ("pubeval", 0)),
        ("gnubg:2", ("gnubg", 2)),
        ("models/a.pt:1", ("models/a.pt", 1)),
        ("x.pt", ("x.pt", 0)),
    ],
)
def test_parse_spec(spec, expect):
    assert players.parse_spec(spec) == expect


@pytest.mark.parametrize("spec", ["bogus", "pubeval:1", "random:2", "gnubg:9", "/nonexistent/model.pt", ""])
def test_bad_specs_raise(spec):
    with pytest.raises(players.PlayerSpecError, match="got|no checkpoint"):
        players.make_player(spec)


def test_checkpoint_spec(tmp_path):
    from bgbot.evaluation import checkpoint

    path = checkpoint.save(tmp_path / "tiny.pt", ValueNet(NetConfig(n_hidden=4)), games_trained=0, training_config={})
    p = players.make_player(f"{path}:1")
    assert isinstance(p, players.NetPlayer) and p.plies == 1 and p.name == "tiny-1ply"
    assert players.display_name("gnubg:0") == "gnubg-0ply"
