"""A rollout campaign store's files, read back and checked: ``campaign.json`` (:class:`CampaignSettings`) and the
finished ``part-NNNNN.npz`` parts (written by :mod:`training.campaign`, which describes the store), and the held-out
long rollouts the gate's cube check judges by (:func:`reference_positions`).

A part is an .npz archive of arrays with a JSON ``meta`` (:func:`load_npz`, the reader of every training stage file).
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from bgbot.errors import BgbotError, check_distinct_paths
from bgbot.rules.board import game_result
from bgbot.rules.outcomes import terminal_probabilities

FORMAT = 1
"""The format of ``campaign.json`` this code reads."""
STORE_FILE = "campaign.json"


class StoreError(BgbotError):
    """A store or stage file that cannot be read as one: missing, torn, of another format, or made with other
    settings."""


def load_npz(path: Path) -> dict:
    """Read a stage file: its arrays, and ``meta`` decoded from JSON.

    Checks the shapes every stage relies on: ``positions`` ``(K, 26)`` integers, ``classes`` ``(K,)`` and ``targets``
    ``(K, 5)`` where present.

    Raises:
        StoreError: the file is missing, not an .npz archive, truncated, or holds a bad ``meta`` or bad shapes.
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            out = {k: z[k] for k in z.files}
        if "meta" in out:
            out["meta"] = json.loads(str(out["meta"]))
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        what = "not an .npz archive" if isinstance(e, ValueError) and "pickled" in str(e) else e
        raise StoreError(f"{str(path)!r} is not a readable stage file: {what}") from None
    if "meta" in out and not isinstance(out["meta"], dict):
        raise StoreError(f"{str(path)!r} is not a readable stage file: its meta is not a JSON object")
    pos = out.get("positions")
    if pos is not None and (pos.ndim != 2 or pos.shape[1] != 26 or pos.dtype.kind not in "iu"):
        raise StoreError(f"{str(path)!r}: positions must be (K, 26) integers, got {pos.shape} {pos.dtype}")
    k = None if pos is None else len(pos)
    for name, shape in (("classes", (k,)), ("targets", (k, 5))):
        a = out.get(name)
        if a is not None and a.shape != shape:
            raise StoreError(f"{str(path)!r}: {name} must have shape {shape} for its {k} positions, got {a.shape}")
    return out


@dataclasses.dataclass(frozen=True)
class CampaignSettings:
    """The settings of a store, fixed by ``plan`` (``campaign.json``)."""

    model: str
    model_sha256: str
    rollout: dict
    seed: int
    part_size: int
    plan_sha256: str
    plan_rows: int
    sources: list[str]
    rules: dict
    format: int = FORMAT
    stream: dict | None = None
    """None: a store of positions (the rules of :func:`training.campaign.choose`); ``{"kind": "plays", "ply": 2, "candidates": 5,
    "chunk": 25}``: a store of checker-play decisions (:mod:`training.plays`)."""

    def to_json(self) -> dict:
        """The settings as ``campaign.json`` holds them (``stream`` only in a plays store: a positions store's record
        is what it was before plays stores existed)."""
        out = dataclasses.asdict(self)
        if out["stream"] is None:
            del out["stream"]
        return out

    @property
    def plays(self) -> bool:
        """Whether this is a plays store (:mod:`training.plays`)."""
        return self.stream is not None and self.stream.get("kind") == "plays"


def load_settings(store: Path) -> CampaignSettings:
    """The store's settings (``campaign.json``).

    Raises:
        StoreError: no store at ``store`` (nothing there, or a file), or its ``campaign.json`` is unreadable or of
            another format.
    """
    path = store / STORE_FILE
    if not store.exists():
        raise StoreError(f"{str(store)!r} is not a campaign store: it does not exist")
    if not store.is_dir():
        raise StoreError(f"{str(store)!r} is a file, not a campaign store (a directory)")
    if not path.is_file():
        raise StoreError(f"{str(store)!r} is not a campaign store (no {STORE_FILE}): plan it first")
    try:
        data = json.loads(path.read_text())
        settings = CampaignSettings(**data)
    except (ValueError, TypeError) as e:
        raise StoreError(f"{str(path)!r} is not a readable campaign file: {e}") from None
    for name, kind in _FIELD_TYPES.items():
        value = getattr(settings, name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise StoreError(f"{str(path)!r} is not a readable campaign file: {name} is {value!r}, not {kind.__name__}")
    if settings.stream is not None and not isinstance(settings.stream, dict):
        raise StoreError(f"{str(path)!r} is not a readable campaign file: stream is {settings.stream!r}, not a dict")
    for name in ("trials", "truncate", "plies", "seed"):
        value = settings.rollout.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool):
            raise StoreError(f"{str(path)!r} is not a readable campaign file: rollout.{name} is {value!r}, not int")
    if settings.format != FORMAT:
        raise StoreError(f"{str(path)!r} is of format {settings.format}, this code reads {FORMAT}")
    return settings


_FIELD_TYPES: dict[str, type] = {
    "model": str,
    "model_sha256": str,
    "rollout": dict,
    "seed": int,
    "part_size": int,
    "plan_sha256": str,
    "plan_rows": int,
    "sources": list,
    "rules": dict,
    "format": int,
}
"""The type of each field of ``campaign.json`` that :func:`load_settings` checks (a hand-edited file is refused)."""


def part_path(store: Path, n: int) -> Path:
    """The file of part ``n`` of ``store``: ``part-NNNNN.npz``."""
    return store / f"part-{n:05d}.npz"


def n_parts(settings: CampaignSettings) -> int:
    """The number of parts the store's plan is cut into (the last may be short)."""
    return -(-settings.plan_rows // settings.part_size)


def exact_finished_games(
    positions: np.ndarray, targets: np.ndarray, stderr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Targets ``(N, 5)`` and standard errors ``(N, 5)`` of ``positions`` ``(N, 26)`` int8 (the side on roll's
    probabilities) with every finished game's row set to its result (:func:`bgbot.rules.outcomes.terminal_probabilities`
    of :func:`bgbot.rules.board.game_result`) and a standard error of 0; new arrays of the inputs' dtypes.

    Rollouts before 2026-12-03 (commit 2c3faf8 and earlier) did not score a start whose game was already over (the
    afterstate of a play that bears off the last checker): its trials played on, and the stored target is wrong. Every
    reader of rolled-out targets goes through this function, so those rows are read as the exact results they are.
    """
    targets, stderr = np.array(targets), np.array(stderr)
    result = game_result(np.asarray(positions, dtype=np.int8))
    over = result != 0
    if over.any():
        targets[over] = terminal_probabilities(result[over])
        stderr[over] = 0
    return targets, stderr


def check_part(path: Path, n: int, settings: CampaignSettings, plan: dict | None = None) -> dict:
    """Read a finished part back and check it belongs to this store: its settings, rows and arrays; its targets of
    finished games read as their results (:func:`exact_finished_games`).

    Raises:
        StoreError: the part is torn or unreadable, made by another model or with other settings, misnumbered (a part
            of this store saved under another part's number), or malformed.
    """
    fix = f"to roll it out anew, remove {str(path)!r} and resume the campaign (python -m training campaign run)"
    try:
        data = load_npz(path)
    except StoreError as e:
        raise StoreError(f"{e} (a torn part?): {fix}") from None
    meta = data.get("meta") or {}
    if meta.get("settings") != settings.to_json():
        raise StoreError(f"{str(path)!r} was made by another campaign (model or settings differ): {fix}")
    if meta.get("part") != n:
        made = meta.get("part")
        raise StoreError(
            f"{str(path)!r} is misnumbered: it holds part {made}'s positions (plan rows of part {made}), not part "
            f"{n}'s; it belongs at {part_path(path.parent, made).name!r} if that part is missing: {fix}"
            if isinstance(made, int) and not isinstance(made, bool)
            else f"{str(path)!r} records no part number: {fix}"
        )
    k = len(data.get("positions", ()))
    for name, shape in (("targets", (k, 5)), ("stderr", (k, 5)), ("reasons", (k,))):
        if name not in data or data[name].shape != shape:
            raise StoreError(f"{str(path)!r} has no {name} of shape {shape}: {fix}")
    if settings.plays:
        for name, shape in (("decisions", (k,)), ("choice", (k,)), ("rank2", (k,)), ("ply0", (k, 5)), ("ply2", (k, 5))):
            if name not in data or data[name].shape != shape:
                raise StoreError(f"{str(path)!r} has no {name} of shape {shape}: {fix}")
        lo = n * settings.part_size
        d = data["decisions"]
        if len(d) and (d.min() < lo or d.max() >= lo + settings.part_size or (np.diff(d) < 0).any()):
            raise StoreError(f"{str(path)!r} holds decisions outside part {n}'s plan rows: {fix}")
    elif plan is not None:
        rows = plan["positions"][n * settings.part_size : (n + 1) * settings.part_size]
        if data["positions"].shape != rows.shape or not np.array_equal(data["positions"], rows):
            raise StoreError(f"{str(path)!r} does not hold the plan's positions of part {n}: {fix}")
    if not (np.isfinite(data["targets"]).all() and np.isfinite(data["stderr"]).all()):
        raise StoreError(f"{str(path)!r} holds targets or standard errors that are not finite: {fix}")
    data["targets"], data["stderr"] = exact_finished_games(data["positions"], data["targets"], data["stderr"])
    return data


def reference_positions(stores: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every finished part's positions ``(P, 26)`` int8 and rolled-out probabilities ``(P, 5)`` float64 of the
    campaign ``stores`` (e.g. ``models/candidates/campaign-1-holdout``: held-out long rollouts, never fitted).

    Raises:
        StoreError: a store is not a campaign store, holds a torn or foreign part, or none holds a finished part; a
            store given twice (its positions would count twice, narrowing the gate's interval).
    """
    check_distinct_paths(stores, "the reference store", StoreError)
    pos, tg = [], []
    for store in stores:
        settings = load_settings(Path(store))
        for n in range(n_parts(settings)):
            path = part_path(Path(store), n)
            if path.exists():
                data = check_part(path, n, settings)
                pos.append(data["positions"])
                tg.append(data["targets"])
    if not pos:
        raise StoreError(f"no finished rollouts in {stores!r}")
    return np.concatenate(pos).astype(np.int8), np.concatenate(tg).astype(np.float64)
