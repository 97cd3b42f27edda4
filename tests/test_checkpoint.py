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


@pytest.mark.parametrize(
    "gone,named",
    [
        (["training_config"], "(no 'training_config')"),
        (["created", "git_revision"], "(no 'created', 'git_revision')"),
        (["bgbot_version"], "(no 'bgbot_version')"),
    ],
)
def test_a_description_without_an_entry_it_needs_is_one_error_line(tmp_path, capsys, gone, named):
    """Every ``meta`` entry that :func:`checkpoint.load` reads is checked first: a missing one is a damaged file
    named in one line (it was a ``KeyError`` traceback, exit status 1); the optimiser state is optional."""
    from bgbot import cli

    path = tmp_path / "a.pt"
    _save(path)
    _rewrite(path, lambda d: [d["meta"].pop(k) for k in gone])
    with pytest.raises(CheckpointError) as err:
        checkpoint.load(path)
    assert (
        str(err.value) == f"{str(path)!r} is a damaged bgbot checkpoint: its description ('meta') is incomplete {named}"
    )
    assert cli.main(["cube", "4HPwATDgc/ABMA", "--model", str(path)]) == 2
    out = capsys.readouterr().err
    assert out == f"error: {err.value}\n"
    _save(path)
    _rewrite(path, lambda d: d.pop("optimizer_state"))
    assert checkpoint.load(path)[1].optimizer_state is None


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
    with pytest.raises(CheckpointError, match="do not fit") as err:
        checkpoint.load(path)
    assert "\n" not in str(err.value) and "is (16, " in str(err.value) and "(17, " in str(err.value)


@pytest.mark.parametrize(
    "change,words",
    [
        (lambda sd: sd.pop(next(iter(sd))), "missing"),
        (lambda sd: sd.update(extra=torch.zeros(3)), "'extra' unexpected"),
        (lambda sd: sd.update({k: torch.zeros(2, 2) for k in list(sd)}), r"more\)"),
    ],
)
def test_tensors_not_fitting_give_one_line(tmp_path, capsys, change, words):
    """A checkpoint whose tensors do not fit its architecture: one error line naming the tensors (torch's message
    spans many lines), from the API and from the command line."""
    from bgbot import cli

    path = tmp_path / "a.pt"
    _save(path)
    _rewrite(path, lambda d: change(d["state_dict"]))
    with pytest.raises(CheckpointError, match=words) as err:
        checkpoint.load(path)
    assert "\n" not in str(err.value)
    assert cli.main(["move", "4HPwATDgc/ABMA", "31", "--model", str(path)]) == 2
    out = capsys.readouterr().err
    assert out.startswith("error: ") and out.count("\n") == 1 and "do not fit" in out


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


# --- checksums, sanity evaluation, NaN --------------------------------------------------------------------------


def test_checksum_stored_and_verified(tmp_path):
    path = tmp_path / "a.pt"
    net, _ = _save(path)
    _, meta = checkpoint.load(path)
    assert meta.checksum == checkpoint.weights_checksum(net.state_dict()) and meta.checksum_verified


def test_flipped_bits_in_the_weights_are_refused(tmp_path):
    path = tmp_path / "a.pt"
    net, _ = _save(path)
    raw = bytearray(path.read_bytes())
    weights = net.hidden.weight.detach().numpy().tobytes()
    at = raw.find(weights[:64])  # the weights are stored raw inside torch's zip container
    assert at > 0
    raw[at + 40] ^= 0x10  # one bit of one weight's exponent or mantissa
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="checksum"):
        checkpoint.load(path)


def test_old_checkpoint_without_checksum_loads_unverified_and_can_get_one(tmp_path, capsys):
    path = tmp_path / "old.pt"
    net, _ = _save(path)
    data = torch.load(path, weights_only=True)
    del data["checksum"]
    torch.save(data, path)
    loaded, meta = checkpoint.load(path)
    assert meta.checksum is None and not meta.checksum_verified
    from bgbot.cli import main

    assert main(["move", "4HPwATDgc/ABMA", "31", "--json", "--model", str(path)]) == 0
    assert "no weights checksum" in capsys.readouterr().err
    assert checkpoint.add_checksum(path) and not checkpoint.add_checksum(path)
    loaded, meta = checkpoint.load(path)
    assert meta.checksum_verified
    for k, v in net.state_dict().items():
        assert torch.equal(v, loaded.state_dict()[k])  # bit-identical


def test_shipped_models_carry_a_verified_checksum():
    for path in sorted((ROOT / "models").glob("*.pt")) + [ROOT / "bgbot" / "data" / "default_model.pt"]:
        assert checkpoint.load(path)[1].checksum_verified, path


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_weights_refused_on_load_and_in_evaluation(tmp_path, capsys, bad):
    import numpy as np

    from bgbot.cli import main
    from bgbot.evaluation.network import EvaluationError, Evaluator
    from bgbot.rules.board import starting_position

    torch.manual_seed(0)
    net = ValueNet(NetConfig(n_hidden=16))
    with torch.no_grad():
        net.hidden.weight[3, 5] = bad
    path = tmp_path / "nan.pt"
    checkpoint.save(path, net, games_trained=1, training_config={})
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        checkpoint.load(path)
    assert main(["move", "4HPwATDgc/ABMA", "31", "--model", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1
    with torch.no_grad():
        net.hidden.bias[:] = bad
    with pytest.raises(EvaluationError, match="NaN or infinite"):
        Evaluator(net).evaluate(np.stack([starting_position()]))


def test_full_disk_leaves_the_old_checkpoint(tmp_path):
    import subprocess

    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        path = small / "latest.pt"
        _save(path, seed=1, games=5)
        before = path.read_bytes()
        big = ValueNet(NetConfig(n_hidden=512))
        with pytest.raises(checkpoint.CheckpointWriteError, match="No space left on device"):
            checkpoint.save(path, big, games_trained=6, training_config={})
        assert path.read_bytes() == before and [p.name for p in small.iterdir()] == ["latest.pt"]
    finally:
        subprocess.run(["umount", str(small)], check=False)


def test_a_target_that_is_not_a_regular_file_is_never_replaced(tmp_path, capsys):
    """The atomic rename replaced whatever was at the target: as root, ``training combine --out /dev/null`` turned the
    device into a regular file. A directory or a special file (here a FIFO) at the target is refused, untouched."""
    import stat

    from bgbot import files
    from training import cli as training_cli

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    net, _ = _save(tmp_path / "a.pt")
    with pytest.raises(checkpoint.CheckpointWriteError) as err:
        checkpoint.save(fifo, net, games_trained=0, training_config={})
    assert (
        str(err.value)
        == f"cannot write checkpoint {str(fifo)!r}: it is there and is not a regular file; it was not changed"
    )
    with pytest.raises(OSError, match="is not a regular file, not replaced") as os_err:
        files.write_atomic(fifo, "text")
    assert os_err.value.filename == str(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["a.pt", "fifo"]
    model, cube = str(ROOT / "models" / "bgbot-5.pt"), str(ROOT / "models" / "candidates" / "gen6" / "bgbot-6-fitH.pt")
    argv = ["combine", "--model", model, "--cube", cube, "--out", str(fifo), "--quiet"]
    assert training_cli.main(argv) == 2  # refused as an existing --out first
    assert "already exists: pass --force" in capsys.readouterr().err
    assert training_cli.main([*argv, "--force"]) == 2  # and with --force, as no regular file
    assert capsys.readouterr().err == f"error: {err.value}\n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
