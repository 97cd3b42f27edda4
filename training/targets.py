"""The ``targets`` stage: the engine's own values of sampled positions, by search or by rollout.

``python -m training targets --model M --positions DIR --out DIR --kind ply2|ply1|ply0|rollout`` writes
``OUT/part-NNNNN.npz`` for each positions part: ``positions``, ``classes``, ``targets`` ``(K, 5)`` float32 (the side on
roll's cumulative probabilities) and ``meta`` (kind, model, positions per second, ...). A rollout part's dice are
seeded by the part's number (:func:`training.parts.part_number`) and each chunk's first row, so the targets are the
same for any ``--workers`` or ``--ray`` and whichever order or session made the parts.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot.evaluation import search
from bgbot.evaluation.evaluator import position_probabilities
from bgbot.progress import progress_bar
from bgbot.rules.outcomes import flip_probabilities

from .parts import StageError, check_out, git_revision, load_model, load_npz, now, part_number, save_npz

__all__ = ["TARGET_KINDS", "ROLLOUT_OPTIONS", "TargetsConfig", "ply_targets", "run_targets"]

TARGET_KINDS = ("ply0", "ply1", "ply2", "rollout")
ROLLOUT_OPTIONS = {"trials": 36, "horizon": 8, "seed": 1, "workers": 1, "ray": None, "variance_reduction": True}
"""The options of ``targets`` that only ``--kind rollout`` takes (argparse leaves them None), with their defaults."""


@dataclass(frozen=True)
class TargetsConfig:
    """The settings of ``targets``.

    Attributes:
        model: the checkpoint that searches or rolls out.
        positions: a directory of positions parts.
        out: the directory of the target parts (one for each positions part, of the same name).
        kind: one of :data:`TARGET_KINDS`.
        chunk: positions searched (or rolled out) together; a rollout chunk's dice are seeded by its first row.
        limit: only the first N parts (0: all).
        trials, horizon, seed, workers, ray, variance_reduction: ``--kind rollout`` only (:data:`ROLLOUT_OPTIONS`):
            trials a position, half-moves before the net values the position, the dice, worker processes, a Ray
            address, luck estimation (:func:`training.rollout.rollout`).
        quiet: no progress bar.
    """

    model: str
    positions: str
    out: Path
    kind: str = "ply2"
    chunk: int = 100
    limit: int = 0
    trials: int = 36
    horizon: int = 8
    seed: int = 1
    workers: int = 1
    ray: str | None = None
    variance_reduction: bool = True
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TargetsConfig:
        """The config of ``targets``' parsed command line, the rollout options at their defaults where not given.

        Raises:
            StageError: an unknown ``--kind``; rollout options with another kind.
        """
        if args.kind not in TARGET_KINDS:
            raise StageError(f"--kind is one of {TARGET_KINDS}, got {args.kind!r}")
        given = {name: getattr(args, name) for name in ROLLOUT_OPTIONS if getattr(args, name) is not None}
        if args.kind != "rollout" and given:
            flags = ["--no-variance-reduction" if n == "variance_reduction" else f"--{n}" for n in given]
            raise StageError(f"{', '.join(flags)}: only for --kind rollout, not --kind {args.kind}")
        return cls(
            model=args.model,
            positions=args.positions,
            out=Path(args.out),
            kind=args.kind,
            chunk=args.chunk,
            limit=args.limit,
            quiet=args.quiet,
            **(ROLLOUT_OPTIONS | given),
        )

    def rollout_settings(self) -> dict | None:
        """What a part records of a rollout's settings (None for search targets)."""
        if self.kind != "rollout":
            return None
        return {
            "trials": self.trials,
            "horizon": self.horizon,
            "seed": self.seed,
            "variance_reduction": self.variance_reduction,
            "chunk": self.chunk,  # the dice of a rollout chunk are seeded by its first row
        }


def ply_targets(evaluator, positions: np.ndarray, plies: int) -> np.ndarray:
    """The side on roll's probabilities ``(K, 5)`` float32 of pre-roll positions ``(K, 26)`` at ``plies`` lookahead.

    0-ply: the net itself (finished games exact). ``k`` >= 1: the mean over the 21 rolls of the best play (chosen at
    0-ply) valued at ``k - 1`` plies (:func:`bgbot.evaluation.search.afterstate_values`: a pre-roll position is the
    afterstate of the other side's play).
    """
    if plies == 0:
        return position_probabilities(evaluator, positions)
    return flip_probabilities(search.afterstate_values(evaluator, positions, plies))


def _computer(cfg: TargetsConfig) -> Callable[[object, np.ndarray, int], np.ndarray]:
    """``compute(evaluator, positions, number)``: the targets of one chunk of ``cfg.kind`` (``number`` seeds a
    rollout's dice)."""
    if cfg.kind == "rollout":
        from .rollout import rollout

        def compute(ev, pos, part):
            seed = cfg.seed * 100_003 + part
            return rollout(
                ev,
                pos,
                trials=cfg.trials,
                horizon=cfg.horizon,
                seed=seed,
                workers=cfg.workers,
                ray=cfg.ray,
                variance_reduction=cfg.variance_reduction,
            )[0]

        return compute
    plies = int(cfg.kind[3:])

    def compute(ev, pos, part):
        return ply_targets(ev, pos, plies)

    return compute


def run_targets(cfg: TargetsConfig) -> dict:
    """Make the missing target parts of ``cfg.out`` -> a summary: parts, made, skipped, positions, seconds,
    cpu_seconds, positions_per_s, cpu_seconds_per_position.

    Raises:
        StageError: no positions parts; ``cfg.out`` holds parts of another kind, model or positions.
    """
    compute = _computer(cfg)
    src = sorted(Path(cfg.positions).glob("part-*.npz"))
    if not src:
        raise StageError(f"no positions parts (part-*.npz) in {cfg.positions!r}")
    if cfg.limit:
        src = src[: cfg.limit]
    settings = {"kind": cfg.kind, "rollout": cfg.rollout_settings(), "model": cfg.model}
    check_out(cfg.out, "targets", settings, {path.name: {"positions_from": str(path)} for path in src})
    _, evaluator, meta = load_model(cfg.model)
    summary = {"parts": len(src), "made": 0, "skipped": 0, "positions": 0, "seconds": 0.0, "cpu_seconds": 0.0}
    bar = progress_bar(total=len(src), desc=f"targets {cfg.kind}", unit="part", enabled=not cfg.quiet)
    for path in src:
        dst = cfg.out / path.name
        if dst.exists():
            summary["skipped"] += 1
            bar.update(1)
            continue
        data = load_npz(path)
        pos = data["positions"]
        t0, c0 = time.perf_counter(), time.process_time()
        part = part_number(path)
        tg = np.concatenate(
            [compute(evaluator, pos[i : i + cfg.chunk], part * 1000 + i) for i in range(0, len(pos), cfg.chunk)]
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
            "git_revision": git_revision(),
            "created": now(),
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
