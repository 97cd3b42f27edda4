"""The ``sample`` stage: positions from the model's own self-play at 0-ply, kept at random by class.

``python -m training sample --model M --out DIR --positions N [--seed S] [--generation G]`` writes
``DIR/part-NNNNN.npz``: ``positions`` ``(K, 26)`` int8 (side on roll), ``classes`` ``(K,)`` int8 (:func:`sample_classes`)
and ``meta`` (JSON: generation, model, seed, part, keep rates, games played, seconds, git revision). Part ``p`` is
played with the dice of seed ``(seed, p)``, so the parts are the same whichever order or session made them.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bgbot.evaluation import features, specialists
from bgbot.evaluation.classes import PositionClass
from bgbot.progress import progress_bar

from .parts import StageError, check_out, git_revision, load_model, now, save_npz
from .selfplay import SelfPlay

__all__ = ["BACKGAME", "SAMPLE_CLASSES", "DEFAULT_KEEP", "SampleConfig", "sample_classes", "sample_part", "run_sample"]

BACKGAME = PositionClass.BACKGAME.stored
"""Sample class code of a contact or crashed position where a side holds two or more points in the other side's home
board (GNU Backgammon's ``I_BACKG`` situation)."""
SAMPLE_CLASSES = {
    c.stored: c.label
    for c in (PositionClass.CONTACT, PositionClass.CRASHED, PositionClass.RACE, PositionClass.BACKGAME)
}
"""Sample class code -> name, ``{1: "contact", 2: "crashed", 3: "race", 4: "backgame"}``
(:attr:`bgbot.evaluation.classes.PositionClass.stored`)."""
DEFAULT_KEEP = {"contact": 0.04, "crashed": 0.3, "race": 0.04, "backgame": 0.3}
"""The probability that a pre-roll position of each sample class is kept, unless ``--keep`` says otherwise."""


@dataclass(frozen=True)
class SampleConfig:
    """The settings of ``sample``.

    Attributes:
        model: the checkpoint that plays.
        out: the directory of the parts.
        positions: positions in all, in parts of ``part_size``.
        part_size: positions a part.
        seed: the dice (part ``p`` plays with seed ``(seed, p)``).
        generation: recorded in every part.
        games_in_flight: self-play games advanced together.
        keep: keep rates by sample class name (:data:`DEFAULT_KEEP` with ``--keep`` applied).
        quiet: no progress bar.
    """

    model: str
    out: Path
    positions: int
    part_size: int = 500
    seed: int = 1
    generation: int = 1
    games_in_flight: int = 256
    keep: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_KEEP))
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SampleConfig:
        """The config of ``sample``'s parsed command line.

        Raises:
            StageError: a ``--keep`` that is not ``CLASS=RATE`` with a class of :data:`DEFAULT_KEEP` and a RATE
                from 0 to 1, or rates that keep nothing (every rate 0: self-play would never end).
        """
        keep = dict(DEFAULT_KEEP)
        for item in args.keep or []:
            name, _, val = item.partition("=")
            if name not in keep:
                raise StageError(f"--keep takes CLASS=RATE with CLASS one of {list(keep)}, got {item!r}")
            try:
                rate = float(val)
            except ValueError:
                rate = math.nan
            if not 0.0 <= rate <= 1.0:  # NaN fails too
                raise StageError(f"--keep takes CLASS=RATE with RATE a probability from 0 to 1, got {item!r}")
            keep[name] = rate
        if not any(keep.values()):
            raise StageError(f"--keep rates {keep} keep no position: give at least one class a rate above 0")
        return cls(
            model=args.model,
            out=Path(args.out),
            positions=args.positions,
            part_size=args.part_size,
            seed=args.seed,
            generation=args.generation,
            games_in_flight=args.games_in_flight,
            keep=keep,
            quiet=args.quiet,
        )


def sample_classes(positions: np.ndarray) -> np.ndarray:
    """Class codes for sampling, ``(N, 26)`` int8 -> ``(N,)`` int8: :func:`specialists.classify` (0 over, 1 contact,
    2 crashed, 3 race), with contact and crashed positions where a side holds >= 2 points in the other side's home
    board marked :data:`BACKGAME`."""
    cls = specialists.classify(positions)
    mine, theirs = features.gnubg_halves(positions)
    anchors = np.maximum((mine[:, 18:24] >= 2).sum(axis=1), (theirs[:, 18:24] >= 2).sum(axis=1))
    cls[((cls == specialists.CONTACT) | (cls == specialists.CRASHED)) & (anchors >= 2)] = BACKGAME
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


def run_sample(cfg: SampleConfig) -> dict:
    """Make the missing parts of ``cfg.out`` -> a summary: parts, made, skipped, seconds, games, positions_per_s.

    Raises:
        StageError: ``cfg.out`` holds parts made with other settings.
    """
    settings = {
        "generation": cfg.generation,
        "model": cfg.model,
        "seed": cfg.seed,
        "part_size": cfg.part_size,
        "keep": cfg.keep,
        "games_in_flight": cfg.games_in_flight,
    }
    check_out(cfg.out, "sample", settings)
    _, evaluator, meta = load_model(cfg.model)
    n_parts = -(-cfg.positions // cfg.part_size)
    summary = {"parts": n_parts, "made": 0, "skipped": 0, "seconds": 0.0, "games": 0}
    for part in progress_bar(range(n_parts), desc="sample", unit="part", enabled=not cfg.quiet):
        path = cfg.out / f"part-{part:05d}.npz"
        if path.exists():
            summary["skipped"] += 1
            continue
        t0 = time.perf_counter()
        pos, cls, games = sample_part(evaluator, cfg.seed, part, cfg.part_size, cfg.keep, cfg.games_in_flight)
        sec = time.perf_counter() - t0
        info = {
            "stage": "sample",
            **settings,
            "model_games_trained": meta.games_trained,
            "part": part,
            "games": games,
            "seconds": sec,
            "class_counts": {SAMPLE_CLASSES[c]: int((cls == c).sum()) for c in SAMPLE_CLASSES},
            "git_revision": git_revision(),
            "created": now(),
        }
        save_npz(path, positions=pos, classes=cls, meta=info)
        summary["made"] += 1
        summary["seconds"] += sec
        summary["games"] += games
    summary["positions_per_s"] = summary["made"] * cfg.part_size / max(summary["seconds"], 1e-9)
    return summary
