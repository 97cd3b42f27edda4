"""The files of the training stages: ``part-NNNNN.npz`` archives of positions, classes and targets with a JSON
``meta`` (written atomically, read with their shapes checked), and the checks that keep a rerun from mixing parts made
with other settings.

Public API::

    StageError                                  # a stage that cannot run as asked
    save_npz(path, **arrays) / load_npz(path)   # one part, atomically / checked (bgbot.formats.store)
    first_rows(positions)                       # the first occurrence of each distinct position
    check_settings(recorded, wanted, where, hint) / check_out(out, stage, settings, names)
    part_number(path)                           # the number that seeds a part's rollout dice
    load_model(path) -> (net, evaluator, meta)  # a checkpoint and its evaluator
"""

from __future__ import annotations

import datetime as dt
import io
import json
import zlib
from pathlib import Path

import numpy as np

from bgbot import files
from bgbot.errors import BgbotError
from bgbot.evaluation import checkpoint
from bgbot.evaluation.specialists import evaluator_for
from bgbot.formats.store import load_npz

__all__ = [
    "StageError",
    "save_npz",
    "load_npz",
    "first_rows",
    "check_settings",
    "check_out",
    "part_number",
    "load_model",
    "git_revision",
    "now",
]


class StageError(BgbotError):
    """A stage that cannot run as asked (missing inputs, mismatched files, bad settings)."""


class StageStopped(StageError):
    """A stage stopped before it finished (SIGINT or SIGTERM, a failing worker): ``summary`` is what it has, a JSON-able
    dict marked ``"complete": false`` (:func:`training.stages.main` prints it before the error line); ``exit_status``
    the command's (130 SIGINT, 143 SIGTERM, 2 an error)."""

    def __init__(self, summary: dict, message: str, exit_status: int) -> None:
        super().__init__(message)
        self.summary = summary
        self.exit_status = exit_status


def git_revision() -> str | None:
    """The code's git revision, recorded in every part (:func:`bgbot.evaluation.checkpoint.git_revision`)."""
    return checkpoint.git_revision()


def now() -> str:
    """The time, UTC, ISO 8601 to the second: when a part was made."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def save_npz(path: Path, **arrays) -> Path:
    """Write ``arrays`` to ``path`` (.npz) atomically; a ``meta`` dict is stored as a JSON string."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if "meta" in arrays:
        arrays["meta"] = np.array(json.dumps(arrays["meta"]))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return files.write_atomic(path, buffer.getvalue())


def first_rows(positions: np.ndarray) -> np.ndarray:
    """Row indices ``(U,)`` int64, ascending, of the first occurrence of each distinct position in ``positions``
    ``(N, 26)`` int8 (exact: each row's 26 bytes compared whole)."""
    rows = np.ascontiguousarray(positions, dtype=np.int8).view(np.dtype((np.void, 26))).ravel()
    return np.sort(np.unique(rows, return_index=True)[1]).astype(np.int64)


_PATH_KEYS = {"model", "sources", "positions_from", "init", "targets"}


def _same(key: str, old, new) -> bool:
    """Whether a recorded setting ``old`` equals ``new``: paths (keys :data:`_PATH_KEYS`) by the file they name from
    here, dicts key by key over the keys recorded (older files record fewer), anything else by ``==``."""
    if key in _PATH_KEYS:
        olds, news = (v if isinstance(v, list) else [v] for v in (old, new))
        return len(olds) == len(news) and all(Path(a).resolve() == Path(b).resolve() for a, b in zip(olds, news))
    if isinstance(old, dict) and isinstance(new, dict):
        return all(k not in new or _same(k, v, new[k]) for k, v in old.items())
    return old == new


def check_settings(recorded: dict, wanted: dict, where: str, hint: str) -> None:
    """Refuse to continue work made with other settings: each key of ``wanted`` that ``recorded`` also holds must be
    the same (:func:`_same`; keys older files did not record are not compared).

    Raises:
        StageError: naming ``where``, the first setting that differs (recorded and asked values) and ``hint``.
    """
    for key, value in wanted.items():
        if key in recorded and not _same(key, recorded[key], value):
            raise StageError(f"{where} was made with {key} {recorded[key]!r}, not {value!r}: {hint}")


def check_out(out: Path, stage: str, settings: dict, names: dict[str, dict] | None = None) -> None:
    """Refuse an output directory that holds parts another run made (another stage or other ``settings``), so that a
    rerun only ever adds the missing parts of the same run. ``names``: more settings for the part of that file name.

    Raises:
        StageError: ``out`` exists and is not a directory; a part of ``out`` is unreadable, of another stage, or
            made with other settings.
    """
    if out.exists() and not out.is_dir():
        raise StageError(files.not_a_directory("--out", out, "a directory for the parts"))
    hint = f"remove {str(out)!r} or pick another --out"
    for path in sorted(out.glob("part-*.npz")) if out.is_dir() else []:
        meta = load_npz(path).get("meta") or {}
        if meta.get("stage", stage) != stage:
            raise StageError(f"{str(path)!r} is a {meta['stage']} part, not a {stage} part: {hint}")
        check_settings(meta, settings | (names or {}).get(path.name, {}), repr(str(path)), hint)


def part_number(path: Path) -> int:
    """The number that seeds a part's rollout dice: ``NNNNN`` of ``part-NNNNN.npz``; for ``part-TAG-NNNNN.npz`` (parts
    gathered from several samples, e.g. ``part-A1-00003.npz``) ``NNNNN`` plus a multiple of 100,000 from a CRC-32 of
    ``TAG``, so that equal numbers under different tags get different dice.

    Raises:
        StageError: the name does not end in ``-NNNNN``.
    """
    fields = path.stem.split("-")[1:]
    try:
        number = int(fields[-1])
    except (IndexError, ValueError):
        raise StageError(f"{str(path)!r}: a part is named part-NNNNN.npz or part-TAG-NNNNN.npz") from None
    if len(fields) > 1:
        number += 100_000 * (zlib.crc32("-".join(fields[:-1]).encode()) % 10_000 + 1)
    return number


def load_model(path: str):
    """A checkpoint -> ``(net, evaluator, meta)``: the network, its position evaluator
    (:func:`bgbot.evaluation.specialists.evaluator_for`) and its :class:`bgbot.evaluation.checkpoint.CheckpointMeta`.

    Raises:
        bgbot.evaluation.checkpoint.CheckpointError: a missing or unreadable checkpoint.
    """
    net, meta = checkpoint.load(path)
    return net, evaluator_for(net), meta
