"""Value net: consistent probabilities, the evaluator, perspective flips and equity."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bgbot.evaluation import encoding, network
from bgbot.evaluation.network import Evaluator, NetConfig, NetworkConfigError, ValueNet
from bgbot.rules import board, outcomes
from tests.shipped_values import BGBOT_1
from tests.test_encoding import _random_positions


def test_config_round_trip_and_validation():
    c = NetConfig(n_hidden=80, activation="relu")
    assert NetConfig.from_dict(c.to_dict()) == c
    assert c.n_inputs == encoding.N_FEATURES and c.encoding_version == encoding.ENCODING_VERSION
    with pytest.raises(NetworkConfigError, match="'swish'"):
        NetConfig(activation="swish")
    with pytest.raises(NetworkConfigError, match="extra"):
        NetConfig.from_dict({**c.to_dict(), "extra": 1})


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu"])
def test_outputs_are_consistent_even_for_extreme_weights(activation):
    torch.manual_seed(0)
    net = ValueNet(NetConfig(n_hidden=32, activation=activation))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(50)  # push every head towards 0 or 1
    p = Evaluator(net).evaluate(_random_positions(2000, seed=7))
    assert p.dtype == np.float32 and p.shape == (2000, 5)
    w, wg, wbg, lg, lbg = p.T
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(wbg <= wg) and np.all(wg <= w)
    assert np.all(lbg <= lg) and np.all(lg <= 1 - w + 1e-7)


def test_gradients_reach_every_head():
    net = ValueNet(NetConfig(n_hidden=8))
    x = torch.from_numpy(encoding.encode(board.starting_position()[None]))
    for k in range(5):
        net.zero_grad()
        net(x)[0, k].backward()
        assert net.out.weight.grad[k].abs().sum() > 0


def test_evaluator_matches_net_and_chunks():
    torch.manual_seed(1)
    net = ValueNet(NetConfig(n_hidden=16))
    x = _random_positions(1000, seed=8)
    whole = Evaluator(net).evaluate(x)
    chunked = Evaluator(net, batch_size=97).evaluate(x)
    np.testing.assert_allclose(whole, chunked, atol=1e-6)
    with torch.no_grad():
        direct = net(torch.from_numpy(encoding.encode(x))).numpy()
    np.testing.assert_allclose(whole, direct, atol=1e-6)
    assert Evaluator(net).evaluate(np.zeros((0, 26), dtype=np.int8)).shape == (0, 5)


def test_evaluator_rejects_other_encoding():
    with pytest.raises(NetworkConfigError, match="tesauro198/v0"):
        Evaluator(ValueNet(NetConfig(encoding_version="tesauro198/v0")))


def test_evaluator_refuses_specialist_nets_and_names_evaluator_for():
    from bgbot.evaluation import specialists

    nets = specialists.fresh(n_hidden=4)
    with pytest.raises(NetworkConfigError, match="specialist nets.*evaluator_for"):
        Evaluator(nets)  # type: ignore[arg-type]
    assert isinstance(specialists.evaluator_for(nets), specialists.ClassEvaluator)
    v2 = ValueNet(NetConfig(n_inputs=specialists.N_V2, n_hidden=4, encoding_version=specialists.ENCODING_V2))
    assert type(specialists.evaluator_for(v2)) is specialists.EvaluatorV2  # one net on v2: its own sparse evaluator
    assert type(specialists.evaluator_for(ValueNet(NetConfig(n_hidden=4)))) is Evaluator


def test_flip_probabilities_and_equity():
    p = np.array([[0.6, 0.2, 0.05, 0.1, 0.01], [1.0, 1.0, 1.0, 0.0, 0.0]], dtype=np.float32)
    q = outcomes.flip_probabilities(p)
    np.testing.assert_allclose(q, [[0.4, 0.1, 0.01, 0.2, 0.05], [0.0, 0.0, 0.0, 1.0, 1.0]], atol=1e-7)
    np.testing.assert_allclose(outcomes.flip_probabilities(q), p, atol=1e-7)
    assert p[0, 0] == np.float32(0.6)  # the input is not modified
    np.testing.assert_allclose(outcomes.equity(p), [0.2 + 0.2 - 0.1 + 0.05 - 0.01, 3.0], atol=1e-6)
    np.testing.assert_allclose(outcomes.equity(q), -outcomes.equity(p), atol=1e-6)
    t = torch.from_numpy(p)
    np.testing.assert_allclose(outcomes.flip_probabilities(t).numpy(), q)
    np.testing.assert_allclose(outcomes.equity(t).numpy(), outcomes.equity(p))


def test_set_threads():
    n = torch.get_num_threads()
    try:
        assert network.set_threads(1) == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(n)


def test_sparse_evaluator_equals_dense_product_and_follows_weight_updates():
    """The embedding-bag first layer gives the dense product's outputs within float32 rounding, for a trained one-net
    model (bgbot-1, the previous shipped generation) and for a net whose weights then change in place (an optimiser
    step): the cached table is rebuilt."""
    from bgbot.evaluation import checkpoint
    from tests.test_movegen import selfplay_positions

    x = np.concatenate([_random_positions(1000, seed=12), selfplay_positions()[:2000]])
    net, _ = checkpoint.load(BGBOT_1)
    assert isinstance(net, ValueNet)
    ev = Evaluator(net)
    with torch.no_grad():
        dense = net(torch.from_numpy(encoding.encode(x))).numpy()
    np.testing.assert_allclose(ev.evaluate(x), dense, rtol=0, atol=2e-6)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    net(torch.from_numpy(encoding.encode(x[:64]))).sum().backward()
    opt.step()
    with torch.no_grad():
        moved = net(torch.from_numpy(encoding.encode(x))).numpy()
    assert np.abs(moved - dense).max() > 1e-3
    np.testing.assert_allclose(ev.evaluate(x), moved, rtol=0, atol=2e-6)


def test_evaluator_sees_weights_written_through_data():
    """A write through ``.data`` does not bump torch's version counter; the evaluator's table is rebuilt anyway."""
    torch.manual_seed(3)
    net = ValueNet(NetConfig(n_hidden=16))
    ev = Evaluator(net)
    x = _random_positions(200, seed=13)
    before = ev.evaluate(x)
    net.hidden.weight.data[:, :10] += 0.5
    net.hidden.bias.data += 0.1
    with torch.no_grad():
        dense = net(torch.from_numpy(encoding.encode(x))).numpy()
    after = ev.evaluate(x)
    assert np.abs(after - before).max() > 1e-3
    np.testing.assert_allclose(after, dense, rtol=0, atol=2e-6)


def test_dense_columns_hook(monkeypatch):
    """An encoding may leave continuous inputs out of the sparse rows (``encoding.DENSE_COLUMNS``): the evaluator adds
    their product with the first layer. Here the two pip inputs move from the rows to dense columns; the outputs
    stay those of the dense net."""
    from bgbot.evaluation import network

    cols = (encoding.I_PIPS, encoding.I_PIPS + 1)
    rows = encoding.SPARSE_ROWS.copy()
    rows[:, list(cols)] = 0.0
    monkeypatch.setattr(encoding, "DENSE_COLUMNS", cols)
    monkeypatch.setattr(network, "_ROW_COLS", network._row_entries(rows)[0])
    monkeypatch.setattr(network, "_ROW_VALS", network._row_entries(rows)[1])
    torch.manual_seed(4)
    net = ValueNet(NetConfig(n_hidden=16))
    with torch.no_grad():
        net.hidden.weight[:, list(cols)] *= 20  # make the pip inputs matter
    x = _random_positions(500, seed=14)
    assert encoding.dense_inputs(x).shape == (500, 2)
    with torch.no_grad():
        dense = net(torch.from_numpy(encoding.encode(x))).numpy()
    np.testing.assert_allclose(Evaluator(net, batch_size=97).evaluate(x), dense, rtol=0, atol=2e-6)


def test_a_non_finite_first_layer_is_refused_when_the_table_is_built():
    """The folded table is checked (as the dense product would show NaN): an infinite weight raises."""
    torch.manual_seed(0)
    net = ValueNet(NetConfig(n_hidden=8))
    ev = Evaluator(net)
    ev.evaluate(board.starting_position()[None])
    with torch.no_grad():
        net.hidden.weight[2, 7] = float("inf")
    with pytest.raises(network.EvaluationError, match="first layer has NaN or infinite weights"):
        ev.evaluate(board.starting_position()[None])


def test_bag_sum_equals_the_functional_embedding_bag_bit_for_bit():
    """bag_sum is torch's embedding-bag of fixed-width rows: the same sums bit for bit, for batches shorter and longer
    than its kept offsets, for a non-contiguous index and for int64 indices, and an empty batch."""
    rng = np.random.default_rng(5)
    table = torch.from_numpy(rng.standard_normal((1114, 128)).astype(np.float32))
    for m, k in ((1, 33), (700, 33), (20_000, 33), (300, 26), (0, 33)):
        index = rng.integers(0, len(table), (m, k)).astype(np.int32)
        want = torch.nn.functional.embedding_bag(torch.from_numpy(index), table, mode="sum")
        assert torch.equal(network.bag_sum(index, table), want)
    wide = rng.integers(0, len(table), (500, 66)).astype(np.int32)
    view = wide[:, ::2]  # non-contiguous
    want = torch.nn.functional.embedding_bag(torch.from_numpy(np.ascontiguousarray(view)), table, mode="sum")
    assert torch.equal(network.bag_sum(view, table), want)
    assert torch.equal(network.bag_sum(view.astype(np.int64), table), want)
    assert network.bag_sum(np.zeros((4, 33), dtype=np.int32), table).shape == (4, 128)
