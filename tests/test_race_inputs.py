"""GNU Backgammon's race inputs (encoding v3 of the race net): vectorised vs scalar, known values, the folded sparse
evaluator, widening, checkpoints and the race-only fit."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.evaluation import checkpoint, classes, encoding, features, race_inputs, specialists
from bgbot.evaluation.encoding import EncodingError
from bgbot.rules.board import flip
from tests.positions import make_positions
from training import cli, parts

MODEL5 = str(Path(__file__).resolve().parents[1] / "models" / "bgbot-5.pt")
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def random_races(n: int, seed: int) -> np.ndarray:
    """``(n, 26)`` int8 pure races (every checker of the side on roll below every opponent checker), some checkers
    borne off on either side (all 15 on the board up to 14 off)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 26), dtype=np.int8)
    for row in out:
        cut = int(rng.integers(1, 24))  # mine on points 1..cut, theirs on indices cut + 1 .. 24
        for sign, lo, hi in ((1, 1, cut), (-1, cut + 1, 24)):
            on = int(rng.integers(1, 16))
            np.add.at(row, rng.integers(lo, hi + 1, size=on), sign)
    return out


@pytest.fixture(scope="module")
def races() -> np.ndarray:
    r = random_races(3000, seed=5)
    assert (specialists.classify(r) == specialists.RACE).all()
    return r


@pytest.fixture(scope="module")
def mixed() -> np.ndarray:
    p = make_positions(1000, seed=21)
    return np.concatenate([p, flip(p)])


def scalar(positions: np.ndarray) -> np.ndarray:
    return np.array([race_inputs.race_inputs_scalar(p) for p in positions], dtype=np.float32)


def test_vectorised_equals_scalar_twin(races, mixed):
    for x in (races, mixed):
        got = race_inputs.race_inputs(x)
        assert got.shape == (len(x), 30) and got.dtype == np.float32
        np.testing.assert_array_equal(got, scalar(x))
    # the races cover every borne-off count 1..14 and crossovers up to at least 3 (30 crossings)
    v = race_inputs.race_inputs(races)
    assert (v[:, :14].sum(axis=0) > 0).all() and (v[:, 15:29].sum(axis=0) > 0).all()
    assert v[:, 14].max() >= 3.0 and v[:, 29].max() >= 3.0


def test_known_values_from_gnubgs_definitions():
    # mine: 2 on point 13 (two quarters to cross each), 1 on point 8 (one), 12 at home, none off -> 5 crossings
    # theirs (own numbering): 3 on its 11 point (index 14), 1 on its 10 point (index 15), 6 on its 5 point
    # (index 20), 5 off -> 4 crossings and exactly five off
    x = np.zeros(26, dtype=np.int8)
    x[13], x[8], x[6], x[5], x[1] = 2, 1, 5, 5, 2
    x[14], x[15], x[20] = -3, -1, -6
    want = np.zeros(30, dtype=np.float32)
    want[14] = 0.5
    want[15 + 4] = 1.0  # off_eq5
    want[29] = 0.4
    np.testing.assert_array_equal(race_inputs.race_inputs(x[None])[0], want)
    np.testing.assert_array_equal(np.float32(race_inputs.race_inputs_scalar(x)), want)
    # 14 off: off_eq14; all on point 24 (three quarters each): 45 crossings; the bar and 15 off count nothing
    y = np.zeros(26, dtype=np.int8)
    y[3], y[0] = 1, -15  # mine: one checker left; theirs: all 15 on its bar
    z = np.zeros(26, dtype=np.int8)
    z[24], z[1] = 15, -15  # mine: all on my 24 point; theirs: all on its 24 point (index 1)
    got = race_inputs.race_inputs(np.stack([y, z]))
    assert got[0, 13] == 1.0 and got[0, :13].sum() == 0 and got[0, 14] == 0.0
    assert got[0, 15:].sum() == 0.0  # on the bar: no crossovers counted, none off
    assert got[1, 14] == pytest.approx(4.5) and got[1, 29] == pytest.approx(4.5) and got[1, :14].sum() == 0
    # the halves swap when the board is seen from the other side
    both = race_inputs.race_inputs(np.stack([x, flip(x)]))
    np.testing.assert_array_equal(both[1], np.r_[both[0, 15:], both[0, :15]])


def test_bad_input_is_refused():
    with pytest.raises(EncodingError, match=r"\(M, 26\) integer"):
        race_inputs.race_inputs(np.zeros((3, 25), dtype=np.int8))
    with pytest.raises(EncodingError, match=r"\(M, 26\) integer"):
        race_inputs.race_inputs(np.zeros((3, 26), dtype=np.float32))
    with pytest.raises(EncodingError, match="26 integers"):
        race_inputs.race_inputs_scalar([0] * 25)


def test_encoding_v3_extends_v2(mixed):
    x = specialists.encode_v3(mixed)
    assert x.shape == (len(mixed), specialists.N_V3) == (len(mixed), 283)
    np.testing.assert_array_equal(x[:, :253], specialists.encode_v2(mixed))
    np.testing.assert_array_equal(x[:, 253:], race_inputs.race_inputs(mixed))
    assert len(race_inputs.NAMES) == 30 and race_inputs.NAMES[14] == "my_crossovers"
    assert encoding.N_FEATURES + 2 * features.N_SIDE == specialists.N_V2


@pytest.fixture(scope="module")
def bgbot5():
    return checkpoint.load(MODEL5)[0]


def test_widened_race_net_plays_bit_identically(bgbot5, races, mixed):
    nets = specialists.with_race_encoding(bgbot5, specialists.ENCODING_V3)
    assert nets.net("race").config.encoding_version == specialists.ENCODING_V3
    assert nets.net("contact").config.encoding_version == specialists.ENCODING_V2
    assert bgbot5.net("race").config.encoding_version == specialists.ENCODING_V2  # the original is untouched
    x = np.concatenate([races, mixed])
    before = specialists.evaluator_for(bgbot5).evaluate(x)
    after = specialists.evaluator_for(nets).evaluate(x)
    np.testing.assert_array_equal(after, before)
    with pytest.raises(specialists.ClassNetsError, match="not a prefix"):
        specialists.widen(nets.net("race"), specialists.ENCODING_V2)


def _trained_v3(bgbot5) -> specialists.ClassNets:
    nets = specialists.with_race_encoding(bgbot5, specialists.ENCODING_V3)
    race = nets.net("race")
    with torch.no_grad():
        race.hidden.weight[:, specialists.N_V2 :] = torch.randn(
            race.config.n_hidden, 30, generator=torch.Generator().manual_seed(3)
        )
    return nets


def test_folded_sparse_evaluator_equals_the_dense_product(bgbot5, races, mixed):
    nets = _trained_v3(bgbot5)
    race = nets.net("race")
    x = np.concatenate([races, mixed])
    ev = specialists.EvaluatorV3(race)
    with torch.no_grad():
        dense = race(torch.from_numpy(specialists.encode_v3(x))).numpy()
    got = ev.evaluate(x)
    np.testing.assert_allclose(got, dense, atol=2e-6)
    # the new weights matter: the v2 part alone gives other values
    assert np.abs(got - specialists.EvaluatorV2(bgbot5.net("race")).evaluate(x)).max() > 0.05
    # through the class dispatch: race rows by the v3 net, the others exactly as bgbot-5
    cls = specialists.classify(x)
    both = specialists.evaluator_for(nets).evaluate(x)
    old = specialists.evaluator_for(bgbot5).evaluate(x)
    race_rows = (cls == specialists.RACE) | (cls == specialists.OVER)
    np.testing.assert_allclose(both[race_rows], dense[race_rows], atol=2e-6)
    np.testing.assert_array_equal(both[~race_rows], old[~race_rows])


def test_checkpoint_round_trip(bgbot5, races, tmp_path):
    nets = _trained_v3(bgbot5)
    path = checkpoint.save(tmp_path / "v3.pt", nets, games_trained=5, training_config={"k": 1})
    loaded, meta = checkpoint.load(path)
    assert meta.format_version == 2 and meta.games_trained == 5
    assert {n: c.encoding_version for n, c in loaded.configs().items()} == {
        "contact": specialists.ENCODING_V2,
        "crashed": specialists.ENCODING_V2,
        "race": specialists.ENCODING_V3,
    }
    for name in specialists.CLASSES:
        for k, v in nets.net(name).state_dict().items():
            assert torch.equal(v, loaded.net(name).state_dict()[k])
    np.testing.assert_array_equal(
        specialists.evaluator_for(loaded).evaluate(races), specialists.evaluator_for(nets).evaluate(races)
    )


def test_race_only_fit_holds_out_the_full_fits_rows(tmp_path, monkeypatch, capsys):
    # a fit of the race net alone, widened to v3: the held-out rows are the race rows of the full fit's held-out set,
    # the contact and crashed nets stay as they were, and the race net starts from bgbot-5's values
    rng = np.random.default_rng(0)
    pos = np.concatenate([random_races(30, seed=9), make_positions(30, seed=4)])
    order = rng.permutation(len(pos))
    pos = pos[order]
    tg = np.clip(specialists.evaluator_for(checkpoint.load(MODEL5)[0]).evaluate(pos) + 0.01, 0, 1)
    d = tmp_path / "targets"
    parts.save_npz(d / "part-00000.npz", positions=pos, targets=tg, meta={"stage": "targets", "kind": "ply0"})
    run = tmp_path / "fit"
    argv = ["fit", "--init", MODEL5, "--targets", str(d), "--run-dir", str(run), "--epochs", "2", "--quiet"]
    assert cli.main([*argv, "--classes", "race", "--race-encoding", "v3", "--val-frac", "0.2", "--batch", "8"]) == 0
    curve = [json.loads(s) for s in (run / "curve.jsonl").read_text().splitlines()]
    full_val = np.random.default_rng(1).permutation(len(pos))[: int(len(pos) * 0.2)]
    cls = specialists.classify(pos)
    val = np.sort(full_val[(cls[full_val] == specialists.RACE) | (cls[full_val] == specialists.OVER)])
    base = checkpoint.load(MODEL5)[0]
    want = float(((specialists.evaluator_for(base).evaluate(pos[val]) - tg[val]) ** 2).mean())
    assert set(curve[0]["val"]) == {"all", "race"} and curve[0]["val"]["race"] == pytest.approx(want, rel=1e-5)
    fitted, meta = checkpoint.load(run / "latest.pt")
    assert meta.training_config["classes"] == ["race"]
    assert meta.training_config["race_encoding"] == specialists.ENCODING_V3
    assert fitted.net("race").config.encoding_version == specialists.ENCODING_V3
    for name in ("contact", "crashed"):
        for k, v in base.net(name).state_dict().items():
            assert torch.equal(v, fitted.net(name).state_dict()[k])
    assert fitted.net("race").hidden.weight[:, specialists.N_V2 :].abs().max() > 0
    # scripts/heldout_loss.py scores the same held-out rows: bgbot-5's race loss there is the fit's epoch 0
    report = _heldout_report(monkeypatch, capsys, ["--targets", str(d), "--model", MODEL5, "--val-frac", "0.2"])
    got = report["models"][MODEL5]
    assert report["rows"]["race"] == len(val) and report["rows"]["all"] == len(full_val)
    assert got["race"]["loss"] == pytest.approx(want, rel=1e-5)
    assert report["rows"]["race_bearoff"] + report["rows"]["race_net"] == len(val)


def _heldout_report(monkeypatch, capsys, argv: list[str]) -> dict:
    spec = importlib.util.spec_from_file_location("heldout_loss", SCRIPTS / "heldout_loss.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(sys, "argv", ["heldout_loss.py", *argv])
    capsys.readouterr()
    module.main()
    return json.loads(capsys.readouterr().out)


def test_referee_loss_scores_race_net_positions_against_gnubg(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("referee_loss", SCRIPTS / "referee_loss.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    races = random_races(200, seed=2)
    rows = module.choose(races, ["race"], 50, seed=0)
    bearoff = classes.classify_batch(races) <= 2
    assert len(rows) == 50 and not bearoff[rows].any() and bearoff.sum() > 0
    assert (np.diff(rows) > 0).all()
    # referee GNU Backgammon 0-ply: GNU 0-ply's own error is 0, bgbot-5's is its squared distance to it
    monkeypatch.setattr(sys, "argv", ["referee_loss.py", "--model", MODEL5, "--positions", "5", "--ply", "0"])
    module.main()
    report = json.loads(capsys.readouterr().out)
    assert report["positions"] == 5 and report["gnubg0"]["mse"] == 0.0
    assert 1e-7 < report["models"][MODEL5]["mse"] < 1e-2
