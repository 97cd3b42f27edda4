"""Checkpoints that describe themselves, written atomically, loaded on CPU.

A checkpoint is a ``torch.save`` file holding only plain types (dicts, lists, strings, numbers, tensors), so it loads
with ``torch.load(weights_only=True)`` -- no pickled code runs on load:

    {"format": "bgbot-checkpoint", "format_version": 1, "meta": {...}, "state_dict": {...}, "optimizer_state": ...}

``meta`` holds the network config, encoding version, games trained, training config (a JSON-able dict), git revision
(``git rev-parse HEAD``, None when unavailable), creation time (UTC, ISO 8601) and bgbot version.

:func:`save` writes a temporary file in the target's directory, fsyncs it, renames it over the target with
``os.replace`` (atomic on POSIX) and fsyncs the directory: a kill at any moment leaves either the old checkpoint or the
new one, never a mix.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

import bgbot
from bgbot.errors import BgbotError
from bgbot.evaluation import encoding
from bgbot.evaluation.network import NetConfig, ValueNet

FORMAT = "bgbot-checkpoint"
FORMAT_VERSION = 2
"""Version 2 (specialist nets): ``"nets": {class: {"network": config, "state_dict": ...}}`` replaces the top-level
``state_dict`` and ``meta["classes"]`` lists the classes; ``meta["network"]`` is the contact net's config. Version 1
files (one net) still load."""
READABLE_VERSIONS = (1, 2)


class CheckpointError(BgbotError):
    """A checkpoint that cannot be loaded: missing, corrupt or truncated, not a checkpoint, or a version mismatch."""


@dataclass(frozen=True)
class CheckpointMeta:
    """What a checkpoint says about itself."""

    network: NetConfig
    """The network's config; ``load`` rebuilds the net from it."""
    encoding_version: str
    """``bgbot.evaluation.encoding.ENCODING_VERSION`` when it was saved."""
    games_trained: int
    """Self-play games trained so far."""
    training_config: dict
    """The training config (JSON-able), as the training loop passed it."""
    git_revision: str | None
    """``git rev-parse HEAD`` of the code that saved it, None when unknown."""
    created: str
    """Creation time, UTC, ISO 8601."""
    bgbot_version: str
    """``bgbot.__version__`` of the code that saved it."""
    format_version: int
    """Layout of the file (``FORMAT_VERSION``)."""
    optimizer_state: dict | None = None
    """``optimizer.state_dict()`` if it was saved, for resuming."""


def git_revision(cwd: str | Path | None = None) -> str | None:
    """``git rev-parse HEAD`` in ``cwd`` (default: this package's directory); None when git or a commit is missing."""
    try:
        r = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd or Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def save(
    path: str | Path,
    net: ValueNet,
    *,
    games_trained: int,
    training_config: dict,
    optimizer: torch.optim.Optimizer | None = None,
) -> Path:
    """Write a checkpoint of ``net`` to ``path`` atomically and return the path.

    Raises:
        CheckpointError: ``training_config`` is not JSON-able (it must load without pickled objects).
    """
    path = Path(path)
    try:
        json.dumps(training_config)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"training_config must be JSON-able plain data: {e}; got {training_config!r}") from e
    multi = getattr(net, "is_class_nets", False)
    meta = {
        "network": net.config.to_dict(),
        "encoding_version": net.config.encoding_version,
        "games_trained": int(games_trained),
        "training_config": training_config,
        "git_revision": git_revision(),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bgbot_version": bgbot.__version__,
        "format_version": FORMAT_VERSION if multi else 1,
    }
    payload = {
        "format": FORMAT,
        "format_version": meta["format_version"],
        "meta": meta,
        "optimizer_state": optimizer.state_dict() if optimizer is not None else None,
    }
    if multi:
        meta["classes"] = list(net.nets)
        payload["nets"] = {
            name: {
                "network": sub.config.to_dict(),
                "state_dict": {k: v.detach().cpu() for k, v in sub.state_dict().items()},
            }
            for name, sub in net.nets.items()
        }
    else:
        payload["state_dict"] = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(payload, f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a shipped model must be readable by every user
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def load(path: str | Path, *, expected_encoding: str = encoding.ENCODING_VERSION) -> tuple[ValueNet, CheckpointMeta]:
    """Rebuild the net saved at ``path`` on CPU (in eval mode) and return it with its metadata.

    Raises:
        CheckpointError: no file at ``path``; a corrupt or truncated file; a file that is not a bgbot checkpoint; a
            format version other than ``FORMAT_VERSION``; an encoding version other than ``expected_encoding``; weights
            that do not fit the stored network config.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint file at {str(path)!r}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises RuntimeError, EOFError, UnpicklingError, ... for damaged files
        # torch's own message runs over several lines and suggests loading with weights_only=False, which would run
        # code from the file: name the failure only.
        raise CheckpointError(
            f"{str(path)!r} is corrupt, truncated or not a bgbot checkpoint (torch.load failed with {type(e).__name__})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a bgbot checkpoint (no 'format': {FORMAT!r} entry)")
    if data.get("format_version") not in READABLE_VERSIONS:
        raise CheckpointError(
            f"{str(path)!r} has checkpoint format version {data.get('format_version')!r}; "
            f"this code reads versions {', '.join(map(str, READABLE_VERSIONS))}"
        )
    m = data.get("meta")
    if not isinstance(m, dict) or not {"encoding_version", "network", "games_trained"} <= set(m):
        raise CheckpointError(f"{str(path)!r} is a damaged bgbot checkpoint: its description ('meta') is incomplete")
    if data["format_version"] == 2:
        return _load_class_nets(path, data, m)
    if m["encoding_version"] != expected_encoding:
        raise CheckpointError(
            f"{str(path)!r} was trained on input encoding {m['encoding_version']!r}; "
            f"this code encodes {expected_encoding!r}"
        )
    try:
        config = NetConfig.from_dict(m["network"])
        net = ValueNet(config)
        net.load_state_dict(data["state_dict"])
    except (ValueError, RuntimeError, KeyError, TypeError) as e:
        raise CheckpointError(f"{str(path)!r}: weights do not fit the stored network config: {e}") from e
    meta = CheckpointMeta(
        network=config,
        encoding_version=m["encoding_version"],
        games_trained=m["games_trained"],
        training_config=m["training_config"],
        git_revision=m["git_revision"],
        created=m["created"],
        bgbot_version=m["bgbot_version"],
        format_version=data["format_version"],
        optimizer_state=data["optimizer_state"],
    )
    return net.eval(), meta


def _meta(data: dict, m: dict, config: NetConfig) -> CheckpointMeta:
    return CheckpointMeta(
        network=config,
        encoding_version=m["encoding_version"],
        games_trained=m["games_trained"],
        training_config=m["training_config"],
        git_revision=m["git_revision"],
        created=m["created"],
        bgbot_version=m["bgbot_version"],
        format_version=data["format_version"],
        optimizer_state=data["optimizer_state"],
    )


def _load_class_nets(path: Path, data: dict, m: dict):
    """Rebuild a version-2 checkpoint's :class:`bgbot.evaluation.specialists.ClassNets`."""
    from bgbot.evaluation.specialists import ClassNets

    nets = data.get("nets")
    if not isinstance(nets, dict):
        raise CheckpointError(f"{str(path)!r} is a damaged bgbot checkpoint: version 2 without its 'nets'")
    try:
        configs = {name: NetConfig.from_dict(entry["network"]) for name, entry in nets.items()}
        net = ClassNets(configs)
        for name, entry in nets.items():
            net.nets[name].load_state_dict(entry["state_dict"])
    except (ValueError, RuntimeError, KeyError, TypeError) as e:  # ClassNetsError is a ValueError
        raise CheckpointError(f"{str(path)!r}: specialist nets do not fit their stored configs: {e}") from e
    return net.eval(), _meta(data, m, net.config)
