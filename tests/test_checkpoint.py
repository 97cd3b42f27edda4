"""Checkpoints: round trip, every load error, and a kill in the middle of a write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bgbot.evaluation import checkpoint, encoding
from bgbot.evaluation.checkpoint import CheckpointError
from bgbot.evaluation.network import NetConfig, ValueNet

ROOT = Path(__file__).resolve().parents[1]


def _save(path, seed=0, games=10, optimizer=False):
    torch.manual_seed(seed)
    net = ValueNet(NetConfig(n_hidden=16))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9) if optimizer else None
    if opt is not None:
        net(torch.ones(2, encoding.N_FEATURES)).sum().backward()
        opt.step()
    checkpoint.save(path, net, games_trained=games, training_config={"lr": 0.1, "preset": "tiny"}, optimizer=opt)
    return net, opt


def test_round_trip(tmp_path):
    path = tmp_path / "runs" / "a.pt"
    net, opt = _save(path, games=1234, optimizer=True)
    loaded, meta = checkpoint.load(path)
    for (k, a), (_, b) in zip(net.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), k
    assert not loaded.training
    assert meta.network == NetConfig(n_hidden=16)
    assert meta.encoding_version == encoding.ENCODING_VERSION
    assert meta.games_trained == 1234
    assert meta.training_config == {"lr": 0.1, "preset": "tiny"}
    assert meta.format_version == checkpoint.FORMAT_VERSION
    assert meta.git_revision is None or len(meta.git_revision) == 40
    assert meta.created.endswith("+00:00")
    opt2 = torch.optim.SGD(loaded.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(meta.optimizer_state)
    buf = opt.state_dict()["state"][0]["momentum_buffer"]
    assert torch.equal(opt2.state_dict()["state"][0]["momentum_buffer"], buf)
    assert [p.name for p in tmp_path.joinpath("runs").iterdir()] == ["a.pt"]  # no temporary file left behind


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint file"):
        checkpoint.load(tmp_path / "nope.pt")


def test_truncated_file(tmp_path):
    path = tmp_path / "a.pt"
    _save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt, truncated"):
        checkpoint.load(path)


def test_garbage_file(tmp_path):
    path = tmp_path / "a.pt"
    path.write_text("hello, I am not a checkpoint\n")
    with pytest.raises(CheckpointError, match="corrupt, truncated"):
        checkpoint.load(path)


def test_torch_file_that_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "a.pt"
    torch.save({"weights": torch.zeros(3)}, path)
    with pytest.raises(CheckpointError, match="not a bgbot checkpoint"):
        checkpoint.load(path)


def _rewrite(path, change):
    data = torch.load(path, weights_only=True)
    change(data)
    torch.save(data, path)


def test_format_version_mismatch(tmp_path):
    path = tmp_path / "a.pt"
    _save(path)
    _rewrite(path, lambda d: d.update(format_version=99))
    with pytest.raises(CheckpointError, match="format version 99"):
        checkpoint.load(path)


def test_encoding_version_mismatch(tmp_path):
    path = tmp_path / "a.pt"
    _save(path)
    _rewrite(path, lambda d: d["meta"].update(encoding_version="tesauro198/v0"))
    with pytest.raises(CheckpointError, match="tesauro198/v0"):
        checkpoint.load(path)


def test_weights_not_fitting_config(tmp_path):
    path = tmp_path / "a.pt"
    _save(path)
    _rewrite(path, lambda d: d["meta"]["network"].update(n_hidden=17))
    with pytest.raises(CheckpointError, match="do not fit"):
        checkpoint.load(path)


def test_training_config_must_be_plain_data(tmp_path):
    with pytest.raises(CheckpointError, match="JSON-able"):
        checkpoint.save(tmp_path / "a.pt", ValueNet(), games_trained=0, training_config={"f": object()})


_KILLER = """
import os, signal, sys, torch
from bgbot.evaluation import checkpoint
from bgbot.evaluation.network import NetConfig, ValueNet

def dying_save(obj, f):
    f.write(b"PK\\x03\\x04 half a checkpoint")
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)

checkpoint.torch.save = dying_save
checkpoint.save(sys.argv[1], ValueNet(NetConfig(n_hidden=16)), games_trained=999, training_config={})
"""


def test_kill_mid_write_keeps_old_checkpoint(tmp_path):
    path = tmp_path / "a.pt"
    net, _ = _save(path, games=10)
    before = path.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", _KILLER, str(path)], cwd=ROOT, env=env)
    assert r.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    loaded, meta = checkpoint.load(path)
    assert meta.games_trained == 10
    assert torch.equal(loaded.hidden.weight, net.hidden.weight)
    # The dead writer's temporary file is there, hidden; the next save still works and replaces the checkpoint.
    assert any(p.name.startswith(".a.pt.") for p in tmp_path.iterdir())
    _save(path, games=20)
    assert checkpoint.load(path)[1].games_trained == 20
