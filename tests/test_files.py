"""bgbot.files: the one atomic writer (bytes, text, or a writer function streaming into the temporary file) and the
directory fsync; checkpoints are written through it."""

from __future__ import annotations

import os

import pytest
import torch

from bgbot import files
from bgbot.evaluation import checkpoint
from bgbot.evaluation.network import NetConfig, ValueNet


def test_bytes_text_and_a_writer_give_the_same_file(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    files.write_atomic(a, b"caf\xc3\xa9\n")
    files.write_atomic(b, "café\n")
    assert files.write_atomic(c, lambda f: f.write("café\n".encode())) == c
    assert a.read_bytes() == b.read_bytes() == c.read_bytes() == "café\n".encode()
    assert {oct(p.stat().st_mode & 0o777) for p in (a, b, c)} == {"0o644"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]  # no temporary file left


def test_a_writer_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "x.pt"
    path.write_bytes(b"old")

    def fails(f):
        f.write(b"half of the new")
        raise RuntimeError("the disk is full")

    with pytest.raises(RuntimeError, match="the disk is full"):
        files.write_atomic(path, fails, sync_dir=True)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["x.pt"]


def test_sync_dir_fsyncs_the_directory_after_the_file(tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync

    def fsync(fd):
        synced.append("dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    files.write_atomic(tmp_path / "a", "text")
    assert synced == ["file"]
    synced.clear()
    files.write_atomic(tmp_path / "b", "text", sync_dir=True)
    assert synced == ["file", "dir"]
    synced.clear()
    files.sync_directory(tmp_path)
    assert synced == ["dir"]
    with pytest.raises(FileNotFoundError):
        files.sync_directory(tmp_path / "missing")


def test_checkpoints_stream_through_the_one_atomic_writer(tmp_path, monkeypatch):
    """checkpoint.save hands files.write_atomic a writer (torch.save into the temporary file) with the directory
    fsync, and what it writes loads back bit for bit."""
    calls = []
    real = files.write_atomic

    def spy(path, data, *, sync_dir=False):
        calls.append((path, callable(data), sync_dir))
        return real(path, data, sync_dir=sync_dir)

    monkeypatch.setattr(files, "write_atomic", spy)
    torch.manual_seed(3)
    net = ValueNet(NetConfig(n_hidden=8))
    path = checkpoint.save(tmp_path / "m" / "net.pt", net, games_trained=7, training_config={})
    assert calls == [(path, True, True)]
    loaded, meta = checkpoint.load(path)
    assert meta.games_trained == 7 and meta.checksum_verified
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), net.state_dict().values()))
    assert sorted(p.name for p in path.parent.iterdir()) == ["net.pt"]
