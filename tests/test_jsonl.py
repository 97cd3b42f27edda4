"""The one JSON Lines writer of training runs and fits: whole lines, flushed and fsynced, a failed write cut back off."""

from __future__ import annotations

import errno
import json
import os

import pytest

from training import fit, jsonl, train


def test_lines_are_appended_whole_and_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    path = tmp_path / "new" / "curve.jsonl"  # the directory is made
    jsonl.append_jsonl(path, {"epoch": 0, "val": {"all": 0.25}})
    jsonl.append_jsonl(path, {"epoch": 1, "train_loss": None})
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"epoch": 0, "val": {"all": 0.25}},
        {"epoch": 1, "train_loss": None},
    ]
    assert len(synced) == 2


def test_a_failed_write_leaves_only_the_whole_lines_before_it(tmp_path, monkeypatch):
    path = tmp_path / "log.jsonl"
    jsonl.append_jsonl(path, {"games": 100})
    before = path.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        jsonl.append_jsonl(path, {"games": 200})
    assert path.read_bytes() == before


def test_runs_and_fits_write_through_the_same_writer():
    assert train.append_jsonl is jsonl.append_jsonl and fit.append_jsonl is jsonl.append_jsonl
