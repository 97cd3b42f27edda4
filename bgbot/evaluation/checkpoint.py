"""Checkpoints that describe themselves, written atomically, loaded on CPU.

A checkpoint is a ``torch.save`` file holding only plain types (dicts, lists, strings, numbers, tensors), so it loads
with ``torch.load(weights_only=True)`` -- no pickled code runs on load:

    {"format": "bgbot-checkpoint", "format_version": 1, "meta": {...}, "state_dict": {...}, "optimizer_state": ...}

Format version 2 holds specialist nets (:class:`bgbot.evaluation.specialists.ClassNets`, one net per position class):
the same layout, ``state_dict`` being the whole module's (``nets.contact.hidden.weight``, ...), plus ``"nets": {class:
{"network": config}}`` and ``meta["classes"]``; ``meta["network"]`` is the contact net's config. A single net is still
saved as version 1, and version 1 files load as before.

Format version 3 is format 2 with separate nets for the cube decisions
(:func:`bgbot.evaluation.specialists.attach_cube_nets`): ``"cube_nets": {class: {"network": config}}`` beside
``"nets"``, and their weights in ``state_dict`` under the prefix ``cube_nets.`` (so the one checksum covers both).
Code that reads versions 1 and 2 only refuses it by its version number.

``checksum`` is the SHA-256 of the weights (:func:`weights_checksum`): :func:`load` recomputes it and refuses a
file whose weights differ (bits flipped on disk). Checkpoints saved before checksums existed have none: they load,
with :attr:`CheckpointMeta.checksum_verified` False (the command line says so on stderr). After loading, a sanity
evaluation (:func:`sanity_check`) refuses weights that are not finite or give probabilities that are not finite or
not consistent.

``meta`` holds the network config, encoding version, games trained, training config (a JSON-able dict), git revision
(``git rev-parse HEAD``, None when unavailable), creation time (UTC, ISO 8601) and bgbot version.

:func:`save` streams ``torch.save`` through :func:`bgbot.files.write_atomic`: a temporary file in the target's
directory, fsynced, renamed over the target with ``os.replace`` (atomic on POSIX), then the directory fsynced
(:func:`bgbot.files.sync_directory`): a kill at any moment leaves either the old checkpoint or the new one, never a
mix.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

import bgbot
from bgbot import files
from bgbot.errors import BgbotError
from bgbot.evaluation import encoding
from bgbot.evaluation.network import NetConfig, ValueNet
from bgbot.evaluation.specialists import ClassNets, attach_cube_nets, evaluator_for
from bgbot.formats import positionid
from bgbot.rules.outcomes import ProbabilityError, check_probabilities

FORMAT = "bgbot-checkpoint"
FORMAT_VERSION = 1
"""Format of a one-net checkpoint."""
FORMAT_VERSION_CLASS_NETS = 2
"""Format of a specialist-nets checkpoint."""
FORMAT_VERSION_CUBE_NETS = 3
"""Format of specialist nets with separate cube nets."""
READABLE_VERSIONS = (FORMAT_VERSION, FORMAT_VERSION_CLASS_NETS, FORMAT_VERSION_CUBE_NETS)
_META_KEYS = frozenset(
    {"network", "encoding_version", "games_trained", "training_config", "git_revision", "created", "bgbot_version"}
)
"""The entries of ``meta`` that :func:`load` reads (:class:`CheckpointMeta`); a file without one is refused."""
CUBE_PREFIX = "cube_nets."
"""The prefix of the cube nets' weights in a format-3 ``state_dict``."""


class CheckpointError(BgbotError):
    """A checkpoint that cannot be loaded: missing, corrupt or truncated, not a checkpoint, or a version mismatch."""


class CheckpointWriteError(CheckpointError):
    """A checkpoint that could not be written (disk full, no permission); the file at the target path is unchanged."""


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
    checksum: str | None = None
    """SHA-256 of the weights as stored (:func:`weights_checksum`), None in checkpoints saved before checksums."""
    checksum_verified: bool = False
    """The stored checksum was present and matched the weights."""


def weights_checksum(state_dict: dict) -> str:
    """SHA-256 (hex) of a state dict: for each entry in sorted name order, its name, dtype, shape and the raw bytes
    of its values (C order). Equal for bit-identical weights, whatever the file's container bytes."""
    h = hashlib.sha256()
    for name in sorted(state_dict):
        t = state_dict[name].detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes())
    return h.hexdigest()


SANITY_POSITIONS = (
    "4HPwATDgc/ABMA",  # the starting position
    "sGfwATDgc/ABMA",  # after 8/5 6/5
    "d7cNAAB3tw0AAA",  # a bear-off race, 15 checkers each in the home boards
)


def sanity_check(net: ValueNet | ClassNets, origin: str = "the network") -> None:
    """Refuse a net whose weights are not all finite, or whose outputs on a few positions are not finite, consistent
    cumulative probabilities (0 <= wbg <= wg <= w <= 1 and 0 <= lbg <= lg <= 1 - w).

    Raises:
        CheckpointError: naming ``origin`` and what is wrong.
    """
    cube = getattr(net, "cube_nets", None)
    if cube is not None:
        sanity_check(cube, f"{origin} (its cube nets)")
    for name, t in net.state_dict().items():
        if not torch.isfinite(t).all():
            bad = int((~torch.isfinite(t)).sum())
            raise CheckpointError(f"{origin}: weights {name!r} hold {bad} NaN or infinite values")
    positions = np.stack([positionid.decode(p) for p in SANITY_POSITIONS])
    out = evaluator_for(net, check=False).evaluate(positions).astype(np.float64)  # (3, 5)
    try:
        if not np.isfinite(out).all():
            raise ProbabilityError("not finite")
        check_probabilities(out, True)
    except ProbabilityError as err:
        raise CheckpointError(f"{origin}: its evaluation of the starting position is not usable: {err}") from None


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
    net: ValueNet | ClassNets,
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
    cube = getattr(net, "cube_nets", None) if multi else None
    version = FORMAT_VERSION_CUBE_NETS if cube is not None else FORMAT_VERSION_CLASS_NETS if multi else FORMAT_VERSION
    meta = {
        "network": net.config.to_dict(),
        "encoding_version": net.config.encoding_version,
        "games_trained": int(games_trained),
        "training_config": training_config,
        "git_revision": git_revision(),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bgbot_version": bgbot.__version__,
        "format_version": version,
    }
    state_dict = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    if cube is not None:
        state_dict.update({CUBE_PREFIX + k: v.detach().cpu() for k, v in cube.state_dict().items()})
    payload = {
        "format": FORMAT,
        "format_version": version,
        "meta": meta,
        "state_dict": state_dict,
        "checksum": {"algorithm": "sha256", "weights": weights_checksum(state_dict)},
        "optimizer_state": optimizer.state_dict() if optimizer is not None else None,
    }
    if multi:
        nets: Any = net
        meta["classes"] = list(nets.nets)
        payload["nets"] = {name: {"network": sub.config.to_dict()} for name, sub in nets.nets.items()}
    if cube is not None:
        payload["cube_nets"] = {name: {"network": sub.config.to_dict()} for name, sub in cube.nets.items()}
    _write(path, payload)
    return path


def _write(path: Path, payload: dict) -> None:
    """``torch.save(payload)`` streamed into ``path`` through :func:`bgbot.files.write_atomic` (a temporary file beside
    it, fsync, rename, fsync of the directory).

    Raises:
        CheckpointWriteError: the file could not be written (disk full, no permission, ...), or ``path`` is there and
            is not a regular file (a directory, a device such as ``/dev/null``: a rename would replace it); ``path``
            is untouched.
    """
    if path.exists() and not path.is_file():
        raise CheckpointWriteError(
            f"cannot write checkpoint {str(path)!r}: it is there and is not a regular file; it was not changed"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(path, lambda f: torch.save(payload, f), sync_dir=True)
    except (OSError, RuntimeError) as err:  # torch reports a failed write (a full disk) as RuntimeError
        reason = getattr(err, "strerror", None) or _os_reason(err)
        raise CheckpointWriteError(
            f"cannot write checkpoint {str(path)!r}: {reason}; {path.name} was not changed"
        ) from err


def _os_reason(err: BaseException) -> str:
    """The operating system's reason behind an error torch wraps (its writer's ``OSError`` in the cause or context
    chain: ``No space left on device``), else the error's first line."""
    seen = err.__cause__ or err.__context__
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return str(err).splitlines()[0][:200]


def _misfit(net, state, error: Exception, shown: int = 3) -> str:
    """One line saying how ``state`` (a state dict read from a file) does not fit ``net``: the first ``shown`` tensors
    whose shapes differ, then the missing and unexpected names; torch's own (multi-line) text, on one line, when the
    names and shapes all agree or ``state`` is no dict of tensors."""
    try:
        want = {k: tuple(v.shape) for k, v in net.state_dict().items()}
        got = {k: tuple(v.shape) for k, v in state.items()}
    except (AttributeError, TypeError):  # no net built, or no dict of tensors
        return " ".join(str(error).split())
    problems = [
        f"{k!r} is {got[k]} in the file, {want[k]} in the network" for k in want if k in got and got[k] != want[k]
    ]
    problems += [f"{k!r} missing" for k in want if k not in got] + [f"{k!r} unexpected" for k in got if k not in want]
    if not problems:
        return " ".join(str(error).split())
    more = f" (and {len(problems) - shown} more)" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more


def load(
    path: str | Path, *, expected_encoding: str = encoding.ENCODING_VERSION
) -> tuple[ValueNet | ClassNets, CheckpointMeta]:
    """Rebuild the net saved at ``path`` on CPU (in eval mode) and return it with its metadata.

    The net is a :class:`ValueNet` (format 1) or :class:`bgbot.evaluation.specialists.ClassNets` (format 2, specialist
    nets, what the default model may be; format 3, the same with separate cube nets as its ``cube_nets``): evaluate
    either through :func:`bgbot.evaluation.specialists.evaluator_for` (:class:`bgbot.evaluation.network.Evaluator`
    takes one net only).

    Raises:
        CheckpointError: no file at ``path``; a corrupt or truncated file; a file that is not a bgbot checkpoint; a
            format version not in ``READABLE_VERSIONS``; a ``meta`` without an entry :class:`CheckpointMeta` reads;
            a format-2 file holding cube-net weights; an encoding version other than ``expected_encoding``; weights
            that do not fit the stored network config; weights that differ from the stored checksum; weights or
            outputs that fail :func:`sanity_check`.
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
    if not isinstance(m, dict) or not _META_KEYS <= set(m):
        missing = sorted(_META_KEYS - set(m)) if isinstance(m, dict) else []
        lacks = f" (no {', '.join(map(repr, missing))})" if missing else ""
        raise CheckpointError(
            f"{str(path)!r} is a damaged bgbot checkpoint: its description ('meta') is incomplete{lacks}"
        )
    if data["format_version"] in (FORMAT_VERSION_CLASS_NETS, FORMAT_VERSION_CUBE_NETS):
        net, config = _class_nets(path, data)
    elif m["encoding_version"] != expected_encoding:
        raise CheckpointError(
            f"{str(path)!r} was trained on input encoding {m['encoding_version']!r}; "
            f"this code encodes {expected_encoding!r}"
        )
    else:
        net = None
        try:
            config = NetConfig.from_dict(m["network"])
            net = ValueNet(config)
            net.load_state_dict(data["state_dict"])
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise CheckpointError(
                f"{str(path)!r}: weights do not fit the stored network config: {_misfit(net, data['state_dict'], e)}"
            ) from e
    stored = data.get("checksum")
    digest = stored.get("weights") if isinstance(stored, dict) else None
    if stored is not None and not (isinstance(digest, str) and stored.get("algorithm") == "sha256"):
        raise CheckpointError(f"{str(path)!r} is a damaged bgbot checkpoint: its checksum entry is malformed")
    if digest is not None and weights_checksum(data["state_dict"]) != digest:
        raise CheckpointError(
            f"{str(path)!r} is damaged: its weights do not match the SHA-256 checksum stored with them "
            "(the file was changed after it was saved)"
        )
    sanity_check(net, repr(str(path)))
    meta = CheckpointMeta(
        network=config,
        encoding_version=m["encoding_version"],
        games_trained=m["games_trained"],
        training_config=m["training_config"],
        git_revision=m["git_revision"],
        created=m["created"],
        bgbot_version=m["bgbot_version"],
        format_version=data["format_version"],
        optimizer_state=data.get("optimizer_state"),
        checksum=digest,
        checksum_verified=digest is not None,
    )
    return net.eval(), meta


def add_checksum(path: str | Path) -> bool:
    """Rewrite the checkpoint at ``path`` atomically with the checksum of its weights, leaving everything else (meta,
    weights bit for bit, optimiser state) as it was. Returns False when it already had one (nothing written).

    Raises:
        CheckpointError: ``path`` does not load (:func:`load`).
    """
    path = Path(path)
    _, meta = load(path)
    if meta.checksum is not None:
        return False
    data = torch.load(path, map_location="cpu", weights_only=True)
    data["checksum"] = {"algorithm": "sha256", "weights": weights_checksum(data["state_dict"])}
    _write(path, data)
    return True


def _class_nets(path: Path, data: dict):
    """Rebuild a version-2 or version-3 checkpoint's :class:`bgbot.evaluation.specialists.ClassNets` (with its cube
    nets, version 3) and its contact config."""
    version = data["format_version"]
    state = data.get("state_dict")
    if not isinstance(state, dict):
        raise CheckpointError(f"{str(path)!r} is a damaged bgbot checkpoint: no 'state_dict' entry")
    entries = {"nets": state}  # format 2: every weight is the play nets' (a cube weight there does not fit)
    if version == FORMAT_VERSION_CUBE_NETS:
        entries["nets"] = {k: v for k, v in state.items() if not k.startswith(CUBE_PREFIX)}
        n = len(CUBE_PREFIX)
        entries["cube_nets"] = {k[n:]: v for k, v in state.items() if k.startswith(CUBE_PREFIX)}
    built = {}
    for key, weights in entries.items():
        what = "specialist nets" if key == "nets" else "cube nets"
        configs = data.get(key)
        if not isinstance(configs, dict):
            raise CheckpointError(
                f"{str(path)!r} is a damaged bgbot checkpoint: format {version} without its {key!r} entry"
            )
        net = None
        try:
            net = ClassNets({name: NetConfig.from_dict(entry["network"]) for name, entry in configs.items()})
            net.load_state_dict(weights)
        except (ValueError, RuntimeError, KeyError, TypeError) as e:  # ClassNetsError is a ValueError
            raise CheckpointError(
                f"{str(path)!r}: {what} do not fit their stored configs: {_misfit(net, weights, e)}"
            ) from e
        built[key] = net
    nets = built["nets"]
    if "cube_nets" in built:
        attach_cube_nets(nets, built["cube_nets"])
    return nets, nets.config
