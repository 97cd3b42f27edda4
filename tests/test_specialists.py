"""Specialist nets by position class: classification against GNU Backgammon, warm start, checkpoint format 2."""

from __future__ import annotations

import json
from pathlib import Path

import gnubg_nn
import numpy as np
import pytest
import torch

from bgbot.evaluation import checkpoint, specialists
from bgbot.evaluation.network import Evaluator, NetConfig, ValueNet
from bgbot.rules.board import flip
from tests.gnubg_oracle import to_gnubg
from tests.positions import make_positions

MODEL = str(Path(__file__).resolve().parents[1] / "models" / "bgbot-1.pt")


@pytest.fixture(scope="module")
def positions() -> np.ndarray:
    p = make_positions(1500, seed=12)
    return np.concatenate([p, flip(p)])


def test_classes_match_gnubg(positions):
    ours = specialists.classify(positions)
    theirs = np.array([gnubg_nn.classify(to_gnubg(p)) for p in positions])
    expected = np.select(
        [theirs == gnubg_nn.c_contact, theirs == gnubg_nn.c_crashed, theirs == gnubg_nn.c_over],
        [specialists.CONTACT, specialists.CRASHED, specialists.OVER],
        specialists.RACE,  # race and gnubg's bear-off classes
    )
    assert (expected == specialists.CRASHED).sum() > 50
    np.testing.assert_array_equal(ours, expected)


def test_encoding_v2_extends_v1(positions):
    from bgbot.evaluation import encoding, features

    x = specialists.encode_v2(positions)
    assert x.shape == (len(positions), specialists.N_V2) == (len(positions), 253)
    np.testing.assert_array_equal(x[:, :203], encoding.encode(positions))
    np.testing.assert_array_equal(x[:, 203:], features.features(positions))


def test_from_single_computes_what_the_base_net_does(positions, tmp_path):
    base, _ = checkpoint.load(MODEL)
    nets = specialists.from_single(base)
    ev = specialists.evaluator_for(nets)
    assert isinstance(ev, specialists.ClassEvaluator)
    np.testing.assert_allclose(ev.evaluate(positions), Evaluator(base).evaluate(positions), rtol=0, atol=1e-6)
    # format 2 round trip; the one-net format 1 still loads
    path = checkpoint.save(tmp_path / "s.pt", nets, games_trained=7, training_config={"k": 1})
    again, meta = checkpoint.load(path)
    assert meta.format_version == 2 and meta.games_trained == 7 and meta.encoding_version == specialists.ENCODING_V2
    assert isinstance(again, specialists.ClassNets)
    for name in specialists.CLASSES:
        for k, v in nets.nets[name].state_dict().items():
            assert torch.equal(v, again.nets[name].state_dict()[k])
    _, meta1 = checkpoint.load(MODEL)
    assert meta1.format_version == 1


def test_damaged_format_2_says_why(tmp_path):
    nets = specialists.fresh(8)
    path = checkpoint.save(tmp_path / "s.pt", nets, games_trained=0, training_config={})
    data = torch.load(path, weights_only=True)
    data["state_dict"]["nets.race.hidden.weight"] = torch.zeros(3, 3)
    torch.save(data, path)
    with pytest.raises(checkpoint.CheckpointError, match="specialist nets do not fit"):
        checkpoint.load(path)


def test_bad_configs_are_rejected():
    cfg = NetConfig(n_inputs=203, n_hidden=8, encoding_version=specialists.ENCODING_V2)
    with pytest.raises(specialists.ClassNetsError, match="inputs"):
        specialists.ClassNets({c: cfg for c in specialists.CLASSES})
    good = NetConfig(n_inputs=253, n_hidden=8, encoding_version=specialists.ENCODING_V2)
    with pytest.raises(specialists.ClassNetsError, match="specialist nets are"):
        specialists.ClassNets({"contact": good})
    with pytest.raises(specialists.ClassNetsError, match="cannot start"):
        specialists.from_single(ValueNet(good), encoding_version="tesauro196+expert7/v1")


def test_loss_trains_each_class_on_its_own_rows(positions):
    torch.manual_seed(0)
    nets = specialists.fresh(8)
    pos = positions[:400]
    tg = np.full((len(pos), 5), 0.25, dtype=np.float32)
    race_before = {k: v.clone() for k, v in nets.nets["race"].state_dict().items()}
    rows = np.flatnonzero(specialists.classify(pos) == specialists.CONTACT)
    opt = torch.optim.Adam(nets.parameters(), lr=1e-2)
    first = nets.loss(pos[rows], tg[rows]).item()
    for _ in range(30):
        loss = nets.loss(pos[rows], tg[rows])
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first
    for k, v in nets.nets["race"].state_dict().items():  # no race rows: the race net is untouched
        assert torch.equal(v, race_before[k])


def test_sparse_evaluator_equals_the_dense_nets(positions):
    """ClassEvaluator (v1 inputs through the sparse first layer, the 50 features as dense columns) computes what each
    class's ValueNet computes on encode_v2's dense inputs, within float32 rounding; also after a weight change."""
    gen2 = Path(MODEL).parent / "candidates" / "gen2" / "fit-best.pt"
    nets, _ = checkpoint.load(str(gen2))
    torch.manual_seed(2)
    mixed = specialists.ClassNets({**nets.configs(), "race": NetConfig(encoding_version="tesauro196+expert7/v1")})
    for net in (nets, mixed):  # all three on v2; race on v1
        ev = specialists.evaluator_for(net, batch_size=777)
        cls = specialists.classify(positions)
        cls[cls == specialists.OVER] = specialists.RACE
        assert all((cls == c).sum() > 100 for c in (1, 2, 3))

        def dense(net=net, cls=cls) -> np.ndarray:
            out = np.empty((len(positions), 5), dtype=np.float32)
            with torch.no_grad():
                for code, name in enumerate(specialists.CLASSES, start=1):
                    sub = net.net(name)
                    enc = specialists.ENCODERS[sub.config.encoding_version][0]
                    out[cls == code] = sub(torch.from_numpy(enc(positions[cls == code]))).numpy()
            return out

        before = ev.evaluate(positions)
        np.testing.assert_allclose(before, dense(), rtol=0, atol=2e-6)
        with torch.no_grad():
            net.net("contact").hidden.weight[:, 210] += 0.5  # a feature input's weight
            net.net("race").hidden.weight[:, 5] += 0.5  # a sparse input's weight
        after = ev.evaluate(positions)
        assert np.abs(after - before).max() > 1e-3
        np.testing.assert_allclose(after, dense(), rtol=0, atol=2e-6)


MODEL5 = str(Path(__file__).resolve().parents[1] / "models" / "bgbot-5.pt")


def test_widened_hidden_layer_values_every_position_as_before(positions):
    base = checkpoint.load(MODEL5)[0]
    torch.manual_seed(0)
    wide = specialists.with_hidden(base, 160)
    assert {wide.net(c).config.n_hidden for c in specialists.CLASSES} == {160}
    assert base.net("contact").config.n_hidden == 128  # the original is untouched
    new = wide.net("contact").hidden.weight[128:]
    assert new.abs().max() > 0 and wide.net("contact").out.weight[:, 128:].abs().max() == 0  # random in, zero out
    before = specialists.evaluator_for(base).evaluate(positions)
    after = specialists.evaluator_for(wide).evaluate(positions)
    np.testing.assert_allclose(after, before, atol=2e-6)
    with pytest.raises(specialists.ClassNetsError, match="128 hidden units to 64: fewer"):
        specialists.widen(base.net("race"), n_hidden=64)


def test_fit_with_hidden_starts_from_the_same_values(positions, tmp_path, capsys):
    from training import cli, parts

    base = checkpoint.load(MODEL5)[0]
    pos = positions[:60]
    tg = np.clip(specialists.evaluator_for(base).evaluate(pos) + 0.02, 0, 1)
    d = tmp_path / "targets"
    parts.save_npz(d / "part-00000.npz", positions=pos, targets=tg, meta={"stage": "targets", "kind": "ply0"})
    run = tmp_path / "fit"
    argv = ["fit", "--init", MODEL5, "--targets", str(d), "--run-dir", str(run), "--epochs", "1", "--quiet"]
    assert cli.main([*argv, "--hidden", "136", "--val-frac", "0.25", "--batch", "8"]) == 0
    curve = [json.loads(s) for s in (run / "curve.jsonl").read_text().splitlines()]
    val = np.random.default_rng(1).permutation(len(pos))[: int(len(pos) * 0.25)]
    want = float(((specialists.evaluator_for(base).evaluate(pos[val]) - tg[val]) ** 2).mean())
    assert curve[0]["val"]["all"] == pytest.approx(want, rel=1e-4)  # epoch 0: the widened nets value as bgbot-5
    fitted, meta = checkpoint.load(run / "latest.pt")
    assert meta.training_config["hidden"] == 136
    assert {fitted.net(c).config.n_hidden for c in specialists.CLASSES} == {136}
    assert fitted.net("contact").out.weight[:, 128:].abs().max() > 0  # the new units learned
    capsys.readouterr()
    assert cli.main([*argv, "--resume", "--hidden", "144"]) == 2  # a resumed fit with another width is refused
    assert "hidden" in capsys.readouterr().err
