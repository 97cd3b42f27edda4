"""The ``select`` stage: the distinct positions of given sample classes whose 0-ply win probability lies in a range.

``python -m training select --model M --positions DIR [DIR ...] --out DIR [--classes C,...] [--win LO HI]`` writes
``OUT/part-NNNNN.npz`` as ``sample`` does, from sample or target directories (e.g. the doubling and take positions of a
sample, to be rolled out). A position met twice is kept once, where first met.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot.evaluation.evaluator import position_probabilities
from bgbot.progress import progress_bar

from .parts import StageError, check_out, first_rows, git_revision, load_model, load_npz, now, save_npz
from .sample import SAMPLE_CLASSES

__all__ = ["SelectConfig", "select_positions", "run_select"]


@dataclass(frozen=True)
class SelectConfig:
    """The settings of ``select``.

    Attributes:
        model: the checkpoint whose 0-ply win probability selects.
        positions: sample (or target) directories, read in order.
        out: the directory of the parts.
        classes: names of :data:`training.sample.SAMPLE_CLASSES` to keep, distinct.
        win: the side on roll's 0-ply win probability range ``(lo, hi)``, ``0 <= lo <= hi <= 1``.
        part_size: positions a part.
        max: keep at most this many positions (0: all).
        quiet: no progress bar.
    """

    model: str
    positions: tuple[str, ...]
    out: Path
    classes: tuple[str, ...] = ("contact", "crashed", "backgame")
    win: tuple[float, float] = (0.0, 1.0)
    part_size: int = 500
    max: int = 0
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SelectConfig:
        """The config of ``select``'s parsed command line.

        Raises:
            StageError: ``--classes`` not distinct names of sample classes; ``--win`` not ``0 <= LO <= HI <= 1``.
        """
        names = set(SAMPLE_CLASSES.values())
        wanted = [c.strip() for c in args.classes.split(",")]
        if not all(c in names for c in wanted) or len(set(wanted)) < len(wanted):
            raise StageError(
                f"--classes takes distinct names from {list(SAMPLE_CLASSES.values())}, comma-separated, "
                f"got {args.classes!r}"
            )
        lo, hi = args.win
        if not 0.0 <= lo <= hi <= 1.0:
            raise StageError(f"--win takes LO HI with 0 <= LO <= HI <= 1, got {lo} {hi}")
        return cls(
            model=args.model,
            positions=tuple(args.positions),
            out=Path(args.out),
            classes=tuple(wanted),
            win=(lo, hi),
            part_size=args.part_size,
            max=args.max,
            quiet=args.quiet,
        )


def select_positions(
    evaluator, positions: np.ndarray, classes: np.ndarray, keep_classes: set[int], win: tuple[float, float]
) -> np.ndarray:
    """Rows of ``positions`` ``(N, 26)`` int8 (side on roll) to keep: sample class (``classes`` ``(N,)`` int8, codes of
    :data:`training.sample.SAMPLE_CLASSES`) in ``keep_classes`` and the evaluator's 0-ply win probability for the
    side on roll in ``[win[0], win[1]]``. Returns ``(K,)`` int64 row indices, ascending."""
    rows = np.flatnonzero(np.isin(classes, sorted(keep_classes)))
    if not len(rows):
        return rows.astype(np.int64)
    p = position_probabilities(evaluator, positions[rows])
    return rows[(p[:, 0] >= win[0]) & (p[:, 0] <= win[1])].astype(np.int64)


def run_select(cfg: SelectConfig) -> dict:
    """Make the missing parts of ``cfg.out`` -> a summary: scanned, kept, parts, made.

    Raises:
        StageError: ``cfg.out`` holds parts made with other settings; no positions parts, or a part without classes.
    """
    codes = {v: k for k, v in SAMPLE_CLASSES.items()}
    lo, hi = cfg.win
    settings = {
        "model": cfg.model,
        "sources": [str(d) for d in cfg.positions],
        "classes": list(cfg.classes),
        "win": [lo, hi],
        "part_size": cfg.part_size,
        "max": cfg.max,
    }
    check_out(cfg.out, "select", settings)
    _, evaluator, meta = load_model(cfg.model)
    src = [p for d in cfg.positions for p in sorted(Path(d).glob("part-*.npz"))]
    if not src:
        raise StageError(f"no positions parts (part-*.npz) in {list(cfg.positions)!r}")
    kept_p, kept_c, scanned = [], [], 0
    for path in progress_bar(src, desc="select", unit="part", enabled=not cfg.quiet):
        data = load_npz(path)
        pos, cls = data["positions"], data.get("classes")
        if cls is None or len(cls) != len(pos):
            raise StageError(f"{str(path)!r} holds no sample classes for its positions")
        scanned += len(pos)
        rows = select_positions(evaluator, pos, cls, {codes[c] for c in cfg.classes}, (lo, hi))
        kept_p.append(pos[rows].astype(np.int8))
        kept_c.append(cls[rows])
    first = first_rows(np.concatenate(kept_p))  # a position met twice is kept once, where first met
    kept_pos, kept_cls = np.concatenate(kept_p)[first], np.concatenate(kept_c)[first]
    if cfg.max:
        kept_pos, kept_cls = kept_pos[: cfg.max], kept_cls[: cfg.max]
    made = 0
    for part, start in enumerate(range(0, len(kept_pos), cfg.part_size)):
        path = cfg.out / f"part-{part:05d}.npz"
        if path.exists():
            continue
        info = {
            "stage": "select",
            **settings,
            "model_games_trained": meta.games_trained,
            "part": part,
            "scanned": scanned,
            "git_revision": git_revision(),
            "created": now(),
        }
        chunk = slice(start, start + cfg.part_size)
        save_npz(path, positions=kept_pos[chunk], classes=kept_cls[chunk], meta=info)
        made += 1
    return {"scanned": scanned, "kept": len(kept_pos), "parts": -(-len(kept_pos) // cfg.part_size), "made": made}
