"""Training by generations: the stages after TD pre-training, each its own resumable, seeded command.

    python -m training sample  --model M --out DIR --positions N [--seed S] [--generation G]
    python -m training select  --model M --positions DIR [DIR ...] --out DIR [--classes C,...] [--win LO HI]
    python -m training targets --model M --positions DIR --out DIR --kind ply2|ply1|ply0|rollout
    python -m training fit     --init M --targets DIR [DIR ...] --run-dir DIR [--epochs E] [--resume]
    python -m training gate    --candidate C --against P --games N [--opponent pubeval ...] [--cube-reference STORE]
                               --out FILE.json
    python -m training campaign plan|run|status --store DIR ...   (training.campaign: the rollout campaign)

Files (every one written atomically, temp file + ``os.replace``; a stage killed at any moment loses at most the part
it was working on and continues with ``--resume`` or by simply being run again with the same settings: an output
directory holding parts made with other settings, or a fit resumed on other data or settings, is refused, never mixed):

* ``sample`` writes ``DIR/part-NNNNN.npz``: ``positions`` ``(K, 26)`` int8 (side on roll), ``classes`` ``(K,)`` int8
  (:func:`bgbot.evaluation.specialists.classify`; 4 marks a back game, see :func:`sample_classes`) and ``meta``
  (JSON: generation, model, seed, part, keep rates, games played, seconds, git revision). Part ``p`` is played with the
  dice of seed ``(seed, p)``, so the parts are the same whichever order or run made them.
* ``select`` writes ``OUT/part-NNNNN.npz`` like ``sample``: the distinct positions of given classes whose 0-ply win
  probability (by ``--model``) lies in a range, from sample or target directories (e.g. the doubling and take
  positions of a sample, to be rolled out).
* ``targets`` writes ``OUT/part-NNNNN.npz`` for each positions part: ``positions``, ``targets`` ``(K, 5)`` float32
  (the side on roll's cumulative probabilities) and ``meta`` (kind, model, positions per second, ...).
* ``fit`` writes ``RUN_DIR/latest.pt`` (with the optimiser, each epoch), ``RUN_DIR/best.pt`` (lowest validation loss)
  and ``RUN_DIR/curve.jsonl`` (one line per epoch: losses overall and per class, seconds).
* ``gate`` writes one JSON record: ppg with 95% CI of the candidate against the previous generation and each
  ``--opponent``; with ``--cube-reference``, also both models' money cube errors on held-out long rollouts, paired
  (:mod:`training.cubegate`). Accepted: the lower 95% end of the ppg above 0, and the cube decisions not worse.

No GNU Backgammon output is used anywhere here: positions come from the model's own self-play, targets from the engine's
own search and rollouts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import io
import json
import math
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import cast

import numpy as np
import torch

from bgbot import files
from bgbot.errors import BgbotError, int_at_least
from bgbot.evaluation import checkpoint, encoding, features, search, specialists
from bgbot.evaluation.evaluator import position_probabilities
from bgbot.evaluation.network import NetConfig, ValueNet, set_threads
from bgbot.evaluation.specialists import evaluator_for
from bgbot.progress import progress_bar
from bgbot.rules.outcomes import flip_probabilities

from .selfplay import SelfPlay

BACKGAME = 4
"""Sample class code of a contact or crashed position where a side holds two or more points in the other side's home
board (GNU Backgammon's ``I_BACKG`` situation)."""
SAMPLE_CLASSES = {1: "contact", 2: "crashed", 3: "race", BACKGAME: "backgame"}
DEFAULT_KEEP = {"contact": 0.04, "crashed": 0.3, "race": 0.04, "backgame": 0.3}
TARGET_KINDS = ("ply0", "ply1", "ply2", "rollout")


class StageError(BgbotError):
    """A stage that cannot run as asked (missing inputs, mismatched files, bad settings)."""


def _git() -> str | None:
    return checkpoint.git_revision()


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def save_npz(path: Path, **arrays) -> Path:
    """Write ``arrays`` to ``path`` (.npz) atomically; a ``meta`` dict is stored as a JSON string."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if "meta" in arrays:
        arrays["meta"] = np.array(json.dumps(arrays["meta"]))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return files.write_atomic(path, buffer.getvalue())


def load_npz(path: Path) -> dict:
    """Read a stage file: its arrays, and ``meta`` decoded from JSON.

    Checks the shapes every stage relies on: ``positions`` ``(K, 26)`` integers, ``classes`` ``(K,)`` and ``targets``
    ``(K, 5)`` where present.

    Raises:
        StageError: the file is missing, not an .npz archive, truncated, or holds a bad ``meta`` or bad shapes.
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            out = {k: z[k] for k in z.files}
        if "meta" in out:
            out["meta"] = json.loads(str(out["meta"]))
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        what = "not an .npz archive" if isinstance(e, ValueError) and "pickled" in str(e) else e
        raise StageError(f"{str(path)!r} is not a readable stage file: {what}") from None
    if "meta" in out and not isinstance(out["meta"], dict):
        raise StageError(f"{str(path)!r} is not a readable stage file: its meta is not a JSON object")
    pos = out.get("positions")
    if pos is not None and (pos.ndim != 2 or pos.shape[1] != 26 or pos.dtype.kind not in "iu"):
        raise StageError(f"{str(path)!r}: positions must be (K, 26) integers, got {pos.shape} {pos.dtype}")
    k = None if pos is None else len(pos)
    for name, shape in (("classes", (k,)), ("targets", (k, 5))):
        a = out.get(name)
        if a is not None and a.shape != shape:
            raise StageError(f"{str(path)!r}: {name} must have shape {shape} for its {k} positions, got {a.shape}")
    return out


def first_rows(positions: np.ndarray) -> np.ndarray:
    """Row indices ``(U,)`` int64, ascending, of the first occurrence of each distinct position in ``positions``
    ``(N, 26)`` int8 (exact: each row's 26 bytes compared whole)."""
    rows = np.ascontiguousarray(positions, dtype=np.int8).view(np.dtype((np.void, 26))).ravel()
    return np.sort(np.unique(rows, return_index=True)[1]).astype(np.int64)


def _same(key: str, old, new) -> bool:
    """Whether a recorded setting ``old`` equals ``new``: paths (keys :data:`_PATH_KEYS`) by the file they name from
    here, dicts key by key over the keys recorded (older files record fewer), anything else by ``==``."""
    if key in _PATH_KEYS:
        olds, news = (v if isinstance(v, list) else [v] for v in (old, new))
        return len(olds) == len(news) and all(Path(a).resolve() == Path(b).resolve() for a, b in zip(olds, news))
    if isinstance(old, dict) and isinstance(new, dict):
        return all(k not in new or _same(k, v, new[k]) for k, v in old.items())
    return old == new


_PATH_KEYS = {"model", "sources", "positions_from", "init", "targets"}


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
        StageError: a part of ``out`` is unreadable, of another stage, or made with other settings.
    """
    hint = f"remove {str(out)!r} or pick another --out"
    for path in sorted(out.glob("part-*.npz")) if out.is_dir() else []:
        meta = load_npz(path).get("meta") or {}
        if meta.get("stage", stage) != stage:
            raise StageError(f"{str(path)!r} is a {meta['stage']} part, not a {stage} part: {hint}")
        check_settings(meta, settings | (names or {}).get(path.name, {}), repr(str(path)), hint)


def _load_model(path: str):
    net, meta = checkpoint.load(path)
    return net, evaluator_for(net), meta


# --- sample --------------------------------------------------------------------------------------------------------


def sample_classes(positions: np.ndarray) -> np.ndarray:
    """Class codes for sampling, ``(N, 26)`` int8 -> ``(N,)`` int8: :func:`specialists.classify` (0 over, 1 contact,
    2 crashed, 3 race), with contact and crashed positions where a side holds >= 2 points in the other side's home
    board marked :data:`BACKGAME`."""
    cls = specialists.classify(positions)
    mine, theirs = features.gnubg_halves(positions)
    anchors = np.maximum((mine[:, 18:24] >= 2).sum(axis=1), (theirs[:, 18:24] >= 2).sum(axis=1))
    cls[((cls == 1) | (cls == 2)) & (anchors >= 2)] = BACKGAME
    return cls


def sample_part(evaluator, seed: int, part: int, size: int, keep: dict[str, float], games_in_flight: int):
    """Play self-play games at 0-ply (the model's own choices) until ``size`` positions are kept.

    Every pre-roll position is kept with the probability of its sample class (``keep``, by name of
    :data:`SAMPLE_CLASSES`), once per part. Returns ``(positions (size, 26) int8, classes (size,) int8, games_finished)``.
    """
    rng = np.random.default_rng([seed, part])
    sp = SelfPlay(games_in_flight, rng)
    rates = np.zeros(5)
    for code, name in SAMPLE_CLASSES.items():
        rates[code] = keep[name]
    got_p, got_c, n = [], [], 0
    seen: set[bytes] = set()  # no position twice in a part (every game starts from the same position)
    while n < size:
        positions, _ = sp.step(evaluator)
        if not len(positions):
            continue
        cls = sample_classes(positions)
        fresh = []
        for i in np.flatnonzero(rng.random(len(positions)) < rates[cls]):
            key = positions[i].tobytes()
            if key not in seen:
                seen.add(key)
                fresh.append(i)
        got_p.append(positions[fresh])
        got_c.append(cls[fresh])
        n += len(fresh)
    return np.concatenate(got_p)[:size], np.concatenate(got_c)[:size], sp.games_finished


def run_sample(args: argparse.Namespace) -> dict:
    keep = dict(DEFAULT_KEEP)
    for item in args.keep or []:
        name, _, val = item.partition("=")
        if name not in keep:
            raise StageError(f"--keep takes CLASS=RATE with CLASS one of {list(keep)}, got {item!r}")
        keep[name] = float(val)
    out = Path(args.out)
    settings = {
        "generation": args.generation,
        "model": args.model,
        "seed": args.seed,
        "part_size": args.part_size,
        "keep": keep,
        "games_in_flight": args.games_in_flight,
    }
    check_out(out, "sample", settings)
    _, evaluator, meta = _load_model(args.model)
    n_parts = -(-args.positions // args.part_size)
    summary = {"parts": n_parts, "made": 0, "skipped": 0, "seconds": 0.0, "games": 0}
    for part in progress_bar(range(n_parts), desc="sample", unit="part", enabled=not args.quiet):
        path = out / f"part-{part:05d}.npz"
        if path.exists():
            summary["skipped"] += 1
            continue
        t0 = time.perf_counter()
        pos, cls, games = sample_part(evaluator, args.seed, part, args.part_size, keep, args.games_in_flight)
        sec = time.perf_counter() - t0
        info = {
            "stage": "sample",
            **settings,
            "model_games_trained": meta.games_trained,
            "part": part,
            "games": games,
            "seconds": sec,
            "class_counts": {SAMPLE_CLASSES[c]: int((cls == c).sum()) for c in SAMPLE_CLASSES},
            "git_revision": _git(),
            "created": _now(),
        }
        save_npz(path, positions=pos, classes=cls, meta=info)
        summary["made"] += 1
        summary["seconds"] += sec
        summary["games"] += games
    summary["positions_per_s"] = summary["made"] * args.part_size / max(summary["seconds"], 1e-9)
    return summary


# --- select --------------------------------------------------------------------------------------------------------


def select_positions(
    evaluator, positions: np.ndarray, classes: np.ndarray, keep_classes: set[int], win: tuple[float, float]
) -> np.ndarray:
    """Rows of ``positions`` ``(N, 26)`` int8 (side on roll) to keep: sample class (``classes`` ``(N,)`` int8, codes of
    :data:`SAMPLE_CLASSES`) in ``keep_classes`` and the evaluator's 0-ply win probability for the side on roll in
    ``[win[0], win[1]]``. Returns ``(K,)`` int64 row indices, ascending."""
    rows = np.flatnonzero(np.isin(classes, sorted(keep_classes)))
    if not len(rows):
        return rows.astype(np.int64)
    p = position_probabilities(evaluator, positions[rows])
    return rows[(p[:, 0] >= win[0]) & (p[:, 0] <= win[1])].astype(np.int64)


def run_select(args: argparse.Namespace) -> dict:
    names = {v: k for k, v in SAMPLE_CLASSES.items()}
    wanted = [c.strip() for c in args.classes.split(",")]
    if not all(c in names for c in wanted) or len(set(wanted)) < len(wanted):
        raise StageError(f"--classes takes distinct names from {list(names)}, comma-separated, got {args.classes!r}")
    lo, hi = args.win
    if not 0.0 <= lo <= hi <= 1.0:
        raise StageError(f"--win takes LO HI with 0 <= LO <= HI <= 1, got {lo} {hi}")
    out = Path(args.out)
    settings = {
        "model": args.model,
        "sources": [str(d) for d in args.positions],
        "classes": wanted,
        "win": [lo, hi],
        "part_size": args.part_size,
        "max": args.max,
    }
    check_out(out, "select", settings)
    _, evaluator, meta = _load_model(args.model)
    src = [p for d in args.positions for p in sorted(Path(d).glob("part-*.npz"))]
    if not src:
        raise StageError(f"no positions parts (part-*.npz) in {args.positions!r}")
    kept_p, kept_c, scanned = [], [], 0
    for path in progress_bar(src, desc="select", unit="part", enabled=not args.quiet):
        data = load_npz(path)
        pos, cls = data["positions"], data.get("classes")
        if cls is None or len(cls) != len(pos):
            raise StageError(f"{str(path)!r} holds no sample classes for its positions")
        scanned += len(pos)
        rows = select_positions(evaluator, pos, cls, {names[c] for c in wanted}, (lo, hi))
        kept_p.append(pos[rows].astype(np.int8))
        kept_c.append(cls[rows])
    first = first_rows(np.concatenate(kept_p))  # a position met twice is kept once, where first met
    kept_pos, kept_cls = np.concatenate(kept_p)[first], np.concatenate(kept_c)[first]
    if args.max:
        kept_pos, kept_cls = kept_pos[: args.max], kept_cls[: args.max]
    made = 0
    for part, start in enumerate(range(0, len(kept_pos), args.part_size)):
        path = out / f"part-{part:05d}.npz"
        if path.exists():
            continue
        info = {
            "stage": "select",
            **settings,
            "model_games_trained": meta.games_trained,
            "part": part,
            "scanned": scanned,
            "git_revision": _git(),
            "created": _now(),
        }
        chunk = slice(start, start + args.part_size)
        save_npz(path, positions=kept_pos[chunk], classes=kept_cls[chunk], meta=info)
        made += 1
    return {"scanned": scanned, "kept": len(kept_pos), "parts": -(-len(kept_pos) // args.part_size), "made": made}


# --- targets -------------------------------------------------------------------------------------------------------


def ply_targets(evaluator, positions: np.ndarray, plies: int) -> np.ndarray:
    """The side on roll's probabilities ``(K, 5)`` float32 of pre-roll positions ``(K, 26)`` at ``plies`` lookahead.

    0-ply: the net itself (finished games exact). ``k`` >= 1: the mean over the 21 rolls of the best play (chosen at
    0-ply) valued at ``k - 1`` plies (:func:`bgbot.evaluation.search.afterstate_values`: a pre-roll position is the
    afterstate of the other side's play).
    """
    if plies == 0:
        return position_probabilities(evaluator, positions)
    return flip_probabilities(search.afterstate_values(evaluator, positions, plies))


def _part_number(path: Path) -> int:
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


ROLLOUT_OPTIONS = {"trials": 36, "horizon": 8, "seed": 1, "workers": 1, "ray": None, "variance_reduction": True}
"""The options of ``targets`` that only ``--kind rollout`` takes (argparse leaves them None), with their defaults."""


def run_targets(args: argparse.Namespace) -> dict:
    if args.kind not in TARGET_KINDS:
        raise StageError(f"--kind is one of {TARGET_KINDS}, got {args.kind!r}")
    given = [name for name in ROLLOUT_OPTIONS if getattr(args, name, None) is not None]
    if args.kind != "rollout" and given:
        flags = ["--no-variance-reduction" if n == "variance_reduction" else f"--{n}" for n in given]
        raise StageError(f"{', '.join(flags)}: only for --kind rollout, not --kind {args.kind}")
    for name, default in ROLLOUT_OPTIONS.items():
        if getattr(args, name, None) is None:
            setattr(args, name, default)
    if args.kind == "rollout":
        from .rollout import rollout

        def compute(ev, pos, part):
            seed = args.seed * 100_003 + part
            return rollout(
                ev,
                pos,
                trials=args.trials,
                horizon=args.horizon,
                seed=seed,
                workers=args.workers,
                ray=args.ray,
                variance_reduction=args.variance_reduction,
            )[0]
    else:
        plies = int(args.kind[3:])

        def compute(ev, pos, part):
            return ply_targets(ev, pos, plies)

    src = sorted(Path(args.positions).glob("part-*.npz"))
    if not src:
        raise StageError(f"no positions parts (part-*.npz) in {args.positions!r}")
    if args.limit:
        src = src[: args.limit]
    out = Path(args.out)
    settings = {
        "kind": args.kind,
        "rollout": {
            "trials": args.trials,
            "horizon": args.horizon,
            "seed": args.seed,
            "variance_reduction": args.variance_reduction,
            "chunk": args.chunk,  # the dice of a rollout chunk are seeded by its first row
        }
        if args.kind == "rollout"
        else None,
        "model": args.model,
    }
    check_out(out, "targets", settings, {path.name: {"positions_from": str(path)} for path in src})
    _, evaluator, meta = _load_model(args.model)
    summary = {"parts": len(src), "made": 0, "skipped": 0, "positions": 0, "seconds": 0.0, "cpu_seconds": 0.0}
    bar = progress_bar(total=len(src), desc=f"targets {args.kind}", unit="part", enabled=not args.quiet)
    for path in src:
        dst = out / path.name
        if dst.exists():
            summary["skipped"] += 1
            bar.update(1)
            continue
        data = load_npz(path)
        pos = data["positions"]
        t0, c0 = time.perf_counter(), time.process_time()
        part = _part_number(path)
        tg = np.concatenate(
            [compute(evaluator, pos[i : i + args.chunk], part * 1000 + i) for i in range(0, len(pos), args.chunk)]
        ).astype(np.float32)
        sec, cpu = time.perf_counter() - t0, time.process_time() - c0
        info = {
            "stage": "targets",
            **settings,
            "model_games_trained": meta.games_trained,
            "positions_from": str(path),
            "positions_meta": data.get("meta"),
            "seconds": sec,
            "positions_per_s": len(pos) / max(sec, 1e-9),
            "cpu_seconds_per_position": cpu / max(len(pos), 1),
            "git_revision": _git(),
            "created": _now(),
        }
        save_npz(dst, positions=pos, classes=data.get("classes", np.zeros(len(pos), np.int8)), targets=tg, meta=info)
        summary["made"] += 1
        summary["positions"] += len(pos)
        summary["seconds"] += sec
        summary["cpu_seconds"] += cpu
        bar.update(1)
    bar.close()
    summary["positions_per_s"] = summary["positions"] / max(summary["seconds"], 1e-9)
    summary["cpu_seconds_per_position"] = summary["cpu_seconds"] / max(summary["positions"], 1)
    return summary


# --- fit -----------------------------------------------------------------------------------------------------------


def _load_targets(dirs: list[str], last_wins: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
    """Positions ``(N, 26)`` int8, targets ``(N, 5)`` float32, their standard errors ``(N, 5)`` float32 (0 where a part
    records none: search targets) and each part's file, kind and model, from the ``part-*.npz`` of ``dirs`` in order
    (each directory's parts sorted by name). ``last_wins``: a position held by several parts is kept once, with the
    target of the last part that holds it (rollout targets of some positions, listed after the 2-ply targets of them
    all, replace those)."""
    pos, tg, se, metas = [], [], [], []
    for d in dirs:
        parts = sorted(Path(d).glob("part-*.npz"))
        if not parts:
            raise StageError(f"no target parts (part-*.npz) in {d!r}")
        for p in parts:
            z = load_npz(p)
            if "targets" not in z:
                raise StageError(f"{str(p)!r} holds no targets (a positions part?)")
            pos.append(z["positions"])
            tg.append(z["targets"])
            se.append(z.get("stderr", np.zeros_like(z["targets"])))
            metas.append({"file": str(p), "kind": z["meta"].get("kind"), "model": z["meta"].get("model")})
    positions, targets = np.concatenate(pos), np.concatenate(tg).astype(np.float32)
    stderr = np.concatenate(se).astype(np.float32)
    if last_wins:
        keep = np.sort(len(positions) - 1 - first_rows(positions[::-1]))  # each position's last occurrence
        positions, targets, stderr = positions[keep], targets[keep], stderr[keep]
    return positions, targets, stderr, metas


def stderr_weights(stderr: np.ndarray, scale: float) -> np.ndarray:
    """Per-output weights of targets by their standard errors: ``scale^2 / (scale^2 + se^2)``, ``(N, 5)`` float32.

    Weighted least squares with each target's error variance ``se^2`` beside a common variance ``scale^2`` that the
    net cannot fit anyway (its approximation error): a target known to within its ``se`` counts in proportion to the
    inverse of its total error variance, normalised so that an exact target (se = 0: search targets, databases)
    weighs 1. ``scale`` is in the targets' units (probability), e.g. 0.02.
    """
    s2 = np.float32(scale) ** 2
    return (s2 / (s2 + np.asarray(stderr, dtype=np.float32) ** 2)).astype(np.float32)


def run_fit(args: argparse.Namespace) -> dict:
    set_threads(None)
    run_dir = Path(args.run_dir)
    latest = run_dir / "latest.pt"
    if latest.exists() and not args.resume:
        raise StageError(f"{run_dir} already holds a fit (latest.pt); pass --resume or pick another --run-dir")
    if args.resume and not latest.exists():
        raise StageError(f"nothing to resume: {latest} does not exist")
    for name in ("lr", "lr_final"):
        value = getattr(args, name, None)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise StageError(f"--{name.replace('_', '-')} must be a finite number >= 0, got {value}")
    if not 0 < args.val_frac < 1:
        raise StageError(f"--val-frac must lie strictly between 0 and 1, got {args.val_frac}")
    arch = getattr(args, "arch", "specialists")
    encoding_version = _FIT_ENCODINGS.get(getattr(args, "encoding", None) or "")
    race_encoding = _FIT_ENCODINGS.get(getattr(args, "race_encoding", None) or "")
    fit_classes = sorted(set(getattr(args, "classes", None) or specialists.CLASSES))
    if race_encoding is not None and arch != "specialists":
        raise StageError("--race-encoding widens the race specialist: it needs --arch specialists")
    if fit_classes != sorted(specialists.CLASSES) and arch != "specialists":
        raise StageError("--classes fits some specialists only: it needs --arch specialists")
    data_settings = {  # a resumed fit must see the same positions, split and steps
        "init": args.init,
        "targets": list(args.targets),
        "classes": fit_classes,
        "race_encoding": race_encoding,
        "last_wins": getattr(args, "last_wins", False),
        "val_frac": args.val_frac,
        "lr": args.lr,
        "lr_final": getattr(args, "lr_final", None),
        "batch": args.batch,
        "seed": args.seed,
        "stderr_scale": getattr(args, "stderr_scale", None),
    }
    hint = "resume with the run's own settings, or start a new fit (--init RUN_DIR/latest.pt)"
    meta: checkpoint.CheckpointMeta | None = None
    if args.resume:
        loaded, meta = checkpoint.load(latest)
        net = _fit_model(loaded, arch, encoding_version, resumed=True)
        check_settings(meta.training_config, data_settings, str(latest), hint)
    pos, tg, se, metas = _load_targets(args.targets, getattr(args, "last_wins", False))
    scale = data_settings["stderr_scale"]
    if scale is not None and not (math.isfinite(scale) and scale > 0):
        raise StageError(f"--stderr-scale must be a finite number > 0, got {scale}")
    weights = None if scale is None else stderr_weights(se, scale)
    digest = hashlib.sha256(  # what a resumed fit must see again
        pos.tobytes() + tg.tobytes() + (b"" if weights is None else weights.tobytes())
    ).hexdigest()
    if meta is not None:
        check = {"positions": len(pos), "data_sha256": digest}
        check_settings(meta.training_config, check, str(latest), "the target parts changed; " + hint)
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(pos))
    n_val = max(1, int(len(pos) * args.val_frac))
    val, train = order[:n_val], order[n_val:]
    if fit_classes != sorted(specialists.CLASSES):  # split first: the held-out rows are those of the full fit
        pos, tg, weights, val, train = _select_classes(pos, tg, weights, val, train, fit_classes)
    torch.manual_seed(args.seed)
    if meta is not None:
        epoch0 = meta.training_config["epoch"]
        best = meta.training_config["best_val"]
    else:
        base, _ = checkpoint.load(args.init)
        net = _fit_model(base, arch, encoding_version, resumed=False)
        if race_encoding is not None:
            try:
                net = specialists.with_race_encoding(cast(specialists.ClassNets, net), race_encoding)
            except specialists.ClassNetsError as e:
                raise StageError(f"--race-encoding: {e}") from None
        epoch0, best, meta = 0, float("inf"), None
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    if meta is not None and meta.optimizer_state is not None:
        opt.load_state_dict(meta.optimizer_state)
    settings = {
        "stage": "fit",
        **data_settings,
        "positions": len(pos),
        "data_sha256": digest,
        "val_positions": n_val,
        "epochs": args.epochs,
        "arch": arch,
        "encoding": net.config.encoding_version,
    }

    data = EncodedTargets(net, pos, tg, weights)

    def val_loss() -> dict:
        with torch.no_grad():
            net.eval()
            out = {"all": float(data.loss(val))}
            cls = specialists.classify(pos[val])
            for code, name in enumerate(specialists.CLASSES, start=1):
                rows = val[cls == code]
                if len(rows):
                    out[name] = float(data.loss(rows))
            net.train()
        return out

    if epoch0 == 0 and not args.resume:
        _append(run_dir / "curve.jsonl", {"epoch": 0, "train_loss": None, "val": val_loss(), "seconds": 0.0})
    for epoch in range(epoch0, args.epochs):
        t0 = time.perf_counter()
        lr = fit_lr(epoch, args.epochs, args.lr, getattr(args, "lr_final", None))
        for group in opt.param_groups:
            group["lr"] = lr
        perm = np.random.default_rng([args.seed, epoch]).permutation(train)
        losses = []
        for i in progress_bar(
            range(0, len(perm), args.batch), desc=f"fit epoch {epoch + 1}", enabled=not args.quiet, leave=False
        ):
            rows = perm[i : i + args.batch]
            loss = data.loss(rows)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        v = val_loss()
        rec = {
            "epoch": epoch + 1,
            "lr": lr,
            "train_loss": float(np.mean(losses)),
            "val": v,
            "seconds": time.perf_counter() - t0,
        }
        _append(run_dir / "curve.jsonl", rec)
        if v["all"] < best:
            best = v["all"]
            checkpoint.save(
                run_dir / "best.pt", _saved(net), games_trained=0, training_config=settings | {"epoch": epoch + 1}
            )
        cfg = settings | {"epoch": epoch + 1, "best_val": best, "target_files": len(metas)}
        checkpoint.save(latest, _saved(net), games_trained=0, training_config=cfg, optimizer=opt)
    return {"epochs": args.epochs, "best_val": best, "positions": len(pos), "run_dir": str(run_dir)}


def _select_classes(
    pos: np.ndarray,
    tg: np.ndarray,
    weights: np.ndarray | None,
    val: np.ndarray,
    train: np.ndarray,
    names: list[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """A fit's data cut to the positions of classes ``names`` (of :data:`specialists.CLASSES`; finished games count as
    race, as in :meth:`specialists.ClassNets.loss`): the positions ``(K, 26)``, targets ``(K, 5)``, weights and the
    validation and training rows renumbered into them, each keeping the order it had.

    Raises:
        StageError: no position of those classes in the validation or training rows.
    """
    cls = specialists.classify(pos)
    cls[cls == specialists.OVER] = specialists.RACE
    keep = np.isin(cls, [specialists.CLASSES.index(n) + 1 for n in names])
    index = np.full(len(pos), -1, dtype=np.int64)
    index[keep] = np.arange(int(keep.sum()))
    val, train = index[val[keep[val]]], index[train[keep[train]]]
    if len(val) == 0 or len(train) == 0:
        raise StageError(f"--classes {' '.join(names)}: the targets hold no such positions to train on and hold out")
    return pos[keep], tg[keep], None if weights is None else weights[keep], val, train


def fit_lr(epoch: int, epochs: int, lr: float, lr_final: float | None) -> float:
    """The learning rate of epoch ``epoch`` (0-based) of ``epochs``: ``lr`` throughout when ``lr_final`` is None, else
    cosine annealing from ``lr`` (epoch 0) to ``lr_final`` (the last epoch), SGDR's schedule without restarts
    (Loshchilov & Hutter 2017). A pure function of the epoch, so a resumed fit continues the same schedule."""
    if lr_final is None or epochs <= 1:
        return lr
    return lr_final + 0.5 * (lr - lr_final) * (1.0 + math.cos(math.pi * epoch / (epochs - 1)))


_FIT_ENCODINGS = {"v1": encoding.ENCODING_VERSION, "v2": specialists.ENCODING_V2, "v3": specialists.ENCODING_V3}
FIT_ARCHS = ("specialists", "single")


class _SingleFit(torch.nn.Module):
    """One :class:`ValueNet` for every position, with the loss :meth:`ClassNets.loss` computes (bgbot-1's shape: no
    dispatch and no features, so no speed cost)."""

    def __init__(self, net: ValueNet) -> None:
        super().__init__()
        self.net = net

    @property
    def config(self) -> NetConfig:
        return self.net.config

    def loss(self, positions: np.ndarray, targets: np.ndarray) -> torch.Tensor:
        x = torch.from_numpy(specialists.ENCODERS[self.net.config.encoding_version][0](positions))
        return ((self.net(x) - torch.from_numpy(targets)) ** 2).mean()

    def saved(self) -> ValueNet:
        return self.net


class EncodedTargets:
    """A fit's positions encoded once, each by the net that values it, so that an epoch only gathers rows.

    ``loss(rows)`` equals ``net.loss(positions[rows], targets[rows])`` (:meth:`ClassNets.loss`: mean squared error
    over the five outputs, finished games to the race net) without encoding again. Memory: 4 bytes an input, e.g.
    253 MB for 250,000 positions on encoding v2.
    """

    def __init__(
        self,
        net: _SingleFit | specialists.ClassNets,
        positions: np.ndarray,
        targets: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> None:
        if isinstance(net, _SingleFit):
            self.nets: list[ValueNet] = [net.net]
            group = np.zeros(len(positions), dtype=np.int64)
        else:
            self.nets = [net.net(name) for name in specialists.CLASSES]
            cls = specialists.classify(positions)
            cls[cls == specialists.OVER] = specialists.RACE
            group = cls.astype(np.int64) - 1
        self.group = group
        self.within = np.zeros(len(positions), dtype=np.int64)
        self.inputs: list[torch.Tensor] = []
        for g, sub in enumerate(self.nets):
            rows = np.flatnonzero(group == g)
            self.within[rows] = np.arange(len(rows))
            encode = specialists.ENCODERS[sub.config.encoding_version][0]
            x = encode(positions[rows]) if len(rows) else np.zeros((0, sub.config.n_inputs), dtype=np.float32)
            self.inputs.append(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)))
        self.targets = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))
        self.weights = None if weights is None else torch.from_numpy(np.ascontiguousarray(weights, dtype=np.float32))

    def loss(self, rows: np.ndarray) -> torch.Tensor:
        """Mean squared error over the five outputs of ``rows`` ``(K,)`` int64 (autograd on), each squared error times
        its weight when the targets have weights (:func:`stderr_weights`)."""
        total = torch.zeros(())
        groups = self.group[rows]
        for g, sub in enumerate(self.nets):
            sel = rows[groups == g]
            if len(sel) == 0:
                continue
            out = sub(self.inputs[g][torch.from_numpy(self.within[sel])])
            sq = (out - self.targets[torch.from_numpy(sel)]) ** 2
            total = total + (sq if self.weights is None else sq * self.weights[torch.from_numpy(sel)]).sum()
        return total / (5 * max(len(rows), 1))


def _saved(net: _SingleFit | specialists.ClassNets) -> ValueNet | specialists.ClassNets:
    """What a fit checkpoint holds: the single net itself, or the specialists."""
    return net.net if isinstance(net, _SingleFit) else net


def _fit_model(
    base: torch.nn.Module, arch: str, encoding_version: str | None, *, resumed: bool
) -> _SingleFit | specialists.ClassNets:
    """The model ``fit`` trains: ``base`` as is or turned into ``arch`` on ``encoding_version``.

    Raises:
        StageError: ``base`` cannot become ``arch`` (specialists cannot become one net; a run resumed with another
            ``--arch`` than it started with).
    """
    is_classes = bool(getattr(base, "is_class_nets", False))
    if arch == "single":
        if is_classes:
            what = "this run holds specialist nets" if resumed else "--init holds specialist nets"
            raise StageError(f"--arch single needs a single net: {what}")
        if encoding_version is not None and base.config.encoding_version != encoding_version:  # type: ignore[union-attr]
            raise StageError(
                f"--arch single keeps the net's encoding ({base.config.encoding_version}); "  # type: ignore[union-attr]
                f"--encoding asked for {encoding_version}"
            )
        return _SingleFit(cast(ValueNet, base))
    if not is_classes:
        if resumed:
            raise StageError("this run holds a single net: resume it with --arch single")
        return specialists.from_single(cast(ValueNet, base), encoding_version or specialists.ENCODING_V2)
    return cast(specialists.ClassNets, base)


def _append(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")


# --- gate ----------------------------------------------------------------------------------------------------------


def run_gate(args: argparse.Namespace) -> dict:
    from bgbot.arena.benchmark import benchmark

    for p in (args.candidate, args.against):
        if p.endswith(".pt") and not Path(p).is_file() or p is args.candidate and not p.endswith(".pt"):
            raise StageError(f"no checkpoint file at {p!r}")
    record = {"stage": "gate", "candidate": args.candidate, "against": args.against, "created": _now(), "results": {}}
    for opp in [args.against, *(args.opponent or [])]:
        t0 = time.perf_counter()
        r = benchmark(args.candidate, opp, games=args.games, seed=args.seed, workers=args.workers, plies=args.ply)
        r["seconds"] = time.perf_counter() - t0
        record["results"][opp] = r
    first = record["results"][args.against]
    record["accepted"] = bool(first["ci_low"] > 0)
    if getattr(args, "cube_reference", None):
        from .cubegate import cube_check

        if not args.against.endswith(".pt"):
            raise StageError("--cube-reference compares two checkpoints: --against must be a .pt file")
        record["cube"] = cube_check(args.candidate, args.against, args.cube_reference)
        record["accepted"] = record["accepted"] and record["cube"]["not_worse"]
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(out, json.dumps(record, indent=2))
    return record


# --- command line --------------------------------------------------------------------------------------------------


def run_campaign(args: argparse.Namespace) -> dict:
    from .campaign import run_campaign as run

    return run(args)


STAGES = {
    "sample": run_sample,
    "select": run_select,
    "targets": run_targets,
    "fit": run_fit,
    "gate": run_gate,
    "campaign": run_campaign,
}
"""Each stage's name and its function (``python -m training STAGE``; ``bgbot train STAGE`` forwards here)."""


def _directory(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("a directory name, got an empty one")
    return text


def build_parser(prog: str = "python -m training") -> argparse.ArgumentParser:
    """The stages' parser; ``prog`` names the command in usage and error lines (``bgbot train`` when forwarded)."""
    p = argparse.ArgumentParser(prog=prog, description="Training stages after TD pre-training.")
    sub = p.add_subparsers(dest="stage", required=True)
    s = sub.add_parser("sample", help="sample positions from the model's self-play")
    s.add_argument("--model", required=True)
    s.add_argument("--out", required=True, type=_directory, help="directory of part-NNNNN.npz files")
    s.add_argument("--positions", type=int_at_least(1), required=True)
    s.add_argument("--part-size", type=int_at_least(1), default=500)
    s.add_argument("--seed", type=int_at_least(0), default=1)
    s.add_argument("--generation", type=int_at_least(1), default=1)
    s.add_argument("--games-in-flight", type=int_at_least(1), default=256)
    s.add_argument("--keep", action="append", metavar="CLASS=RATE", help=f"keep rates, defaults {DEFAULT_KEEP}")
    c = sub.add_parser("select", help="keep sampled positions of given classes and 0-ply winning chances")
    c.add_argument("--model", required=True, help="the model whose 0-ply win probability selects")
    c.add_argument("--positions", required=True, nargs="+", help="sample (or target) directories")
    c.add_argument("--out", required=True, type=_directory)
    c.add_argument(
        "--classes",
        default="contact,crashed,backgame",
        help=f"comma-separated names of {list(SAMPLE_CLASSES.values())}",
    )
    c.add_argument(
        "--win", type=float, nargs=2, metavar=("LO", "HI"), default=(0.0, 1.0), help="side on roll's 0-ply win range"
    )
    c.add_argument("--part-size", type=int_at_least(1), default=500)
    c.add_argument("--max", type=int_at_least(0), default=0, help="keep at most N positions (0: all)")
    t = sub.add_parser("targets", help="compute targets of sampled positions with the engine")
    t.add_argument("--model", required=True)
    t.add_argument("--positions", required=True, help="a sample directory")
    t.add_argument("--out", required=True, type=_directory)
    t.add_argument("--kind", default="ply2", choices=TARGET_KINDS)
    t.add_argument("--chunk", type=int_at_least(1), default=100, help="positions searched together")
    t.add_argument("--limit", type=int_at_least(0), default=0, help="only the first N parts (0: all)")
    t.add_argument(
        "--trials", type=int_at_least(1), help="rollout: trials per position (default 36: each first roll once)"
    )
    t.add_argument(
        "--horizon", type=int_at_least(0), help="rollout: half-moves before the net values the position (default 8)"
    )
    t.add_argument("--seed", type=int_at_least(0), help="rollout: dice seed (default 1)")
    t.add_argument(
        "--workers", type=int_at_least(1), help="rollout: worker processes (default 1; the targets do not depend on it)"
    )
    t.add_argument("--ray", metavar="ADDRESS", help="rollout: run on Ray ('local' or HOST:PORT); the same targets")
    t.add_argument(
        "--no-variance-reduction",
        dest="variance_reduction",
        action="store_const",
        const=False,
        help="rollout: plain trials (no luck estimation; cheaper per unit of accuracy for full rollouts)",
    )
    f = sub.add_parser("fit", help="fit the next generation's nets to targets")
    f.add_argument("--init", required=True, help="checkpoint to start from (v1 single net or specialists)")
    f.add_argument("--targets", required=True, nargs="+", help="target directories")
    f.add_argument(
        "--last-wins",
        action="store_true",
        help="a position in several target parts is fitted once, to the last part's target (list rollouts last)",
    )
    f.add_argument("--run-dir", required=True, type=_directory)
    f.add_argument("--epochs", type=int_at_least(1), default=10)
    f.add_argument("--lr", type=float, default=1e-4)
    f.add_argument(
        "--lr-final", type=float, help="anneal the learning rate from --lr to this by the last epoch (cosine)"
    )
    f.add_argument("--batch", type=int_at_least(1), default=128)
    f.add_argument("--val-frac", type=float, default=0.05)
    f.add_argument("--seed", type=int_at_least(0), default=1)
    f.add_argument(
        "--arch",
        choices=FIT_ARCHS,
        default="specialists",
        help="specialists: a net per class (contact, crashed, race); single: one net, the --init net's shape",
    )
    f.add_argument(
        "--encoding",
        choices=sorted(_FIT_ENCODINGS),
        help="inputs: v1 (bgbot-1's 203), v2 (plus GNU-style features, 253) or v3 (plus GNU Backgammon's race inputs, "
        "283); default: v2 for specialists made "
        "from a single net, else --init's own",
    )
    f.add_argument(
        "--race-encoding",
        choices=sorted(_FIT_ENCODINGS),
        help="widen the race specialist to this encoding before fitting (v3: plus GNU Backgammon's race inputs, "
        "one-hot borne-off counts and crossovers, new inputs starting at weight 0); a fresh fit only",
    )
    f.add_argument(
        "--classes",
        nargs="+",
        choices=specialists.CLASSES,
        help="fit only the positions of these classes (the split into training and held-out rows is made over all "
        "positions first, so the held-out rows are those the full fit holds out); default: all",
    )
    f.add_argument(
        "--stderr-scale",
        type=float,
        metavar="TAU",
        help="weigh each target by TAU^2 / (TAU^2 + se^2), se its standard error (rollouts; 0 for search targets), "
        "e.g. 0.02",
    )
    f.add_argument("--resume", action="store_true")
    g = sub.add_parser("gate", help="duplicate games of a candidate against the previous generation")
    g.add_argument("--candidate", required=True)
    g.add_argument("--against", required=True, help="the previous generation (.pt) or a player spec (gnubg:0, ...)")
    g.add_argument("--games", type=int, required=True)
    g.add_argument("--opponent", action="append", help="more opponents to record (pubeval, gnubg:0, ...)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--workers", type=int, default=1)
    g.add_argument("--ply", type=int, default=0)
    g.add_argument("--out", help="JSON record file")
    g.add_argument(
        "--cube-reference",
        nargs="+",
        metavar="STORE",
        help="campaign stores of held-out long rollouts: accept only if the candidate's money cube decisions on them "
        "are not worse than --against's (training.cubegate)",
    )
    from .campaign import add_parser as add_campaign

    add_campaign(sub)
    for sp in (s, c, t, f, g, sub.choices["campaign"]):
        sp.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str], prog: str = "python -m training") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        summary = STAGES[args.stage](args)
    except (BgbotError, OSError) as e:  # bad input (a player spec, games), a failed write: one line, status 2
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return 0
