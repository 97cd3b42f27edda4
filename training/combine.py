"""The ``combine`` stage: one model whose play nets choose the checker plays and whose cube nets answer the cube.

Fitted to the campaign's rollouts alone, a generation's nets judge cube decisions far better than the nets fitted to
the whole 2-ply bulk but play checkers worse (``models/candidates/gen6/README.md``): the two jobs want different fits.
``python -m training combine --model PLAY.pt --cube CUBE.pt --out MODEL.pt`` writes a checkpoint (format 3,
:mod:`bgbot.evaluation.checkpoint`) holding ``PLAY.pt``'s specialist nets as they are and ``CUBE.pt``'s as its cube
nets (:func:`bgbot.evaluation.specialists.attach_cube_nets`); every cube decision of the result reads the cube nets
(:func:`bgbot.evaluation.evaluator.for_cube`), everything else the play nets. The training config of the result
records both sources (paths and weight checksums).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from bgbot.evaluation import checkpoint
from bgbot.evaluation.specialists import ClassNets, attach_cube_nets

from .parts import StageError, now

__all__ = ["CombineConfig", "run_combine"]


@dataclass(frozen=True)
class CombineConfig:
    """The settings of ``combine``.

    Attributes:
        model: the checkpoint whose specialist nets choose the plays (its own cube nets, if any, are replaced).
        cube: the checkpoint whose specialist nets answer the cube decisions: its play nets (those a fit trained);
            its cube nets, if any (a fit ``--init`` of a format-3 model carries them), are left out, with a ``note:``
            line on stderr that names where they came from.
        out: the checkpoint to write (atomically).
        force: replace a file already at ``out`` (without it, a file there is refused, never overwritten).
    """

    model: str
    cube: str
    out: str
    force: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CombineConfig:
        """The config of ``combine``'s parsed command line (checked by :func:`run_combine`)."""
        return cls(model=args.model, cube=args.cube, out=args.out, force=args.force)


def _source(path: str, role: str) -> tuple[ClassNets, checkpoint.CheckpointMeta]:
    net, meta = checkpoint.load(path)
    if not isinstance(net, ClassNets):
        raise StageError(f"--{role} {path!r} holds one net (checkpoint format 1); combine needs specialist nets")
    return net, meta


def _recorded_cube(meta: checkpoint.CheckpointMeta) -> str:
    """Where a combined checkpoint's cube nets came from, as ``combine`` recorded it, for the note on stderr."""
    config = meta.training_config if isinstance(meta.training_config, dict) else {}
    source = config.get("cube") if config.get("stage") == "combine" else None
    path = source.get("path") if isinstance(source, dict) else None
    return f"they came from {path!r}" if isinstance(path, str) else "where they came from is not recorded in it"


def run_combine(cfg: CombineConfig) -> dict:
    """Write ``cfg.out``: ``cfg.model``'s play nets with ``cfg.cube``'s nets as cube nets -> the summary (stage, out,
    model, cube, created, format_version).

    Raises:
        StageError: a source with one net, ``out`` naming one of the sources, or a file at ``out`` without ``force``.
        bgbot.evaluation.checkpoint.CheckpointError: a source that does not load; ``out`` not writable.
    """
    out = Path(cfg.out)
    for role, src in (("model", cfg.model), ("cube", cfg.cube)):
        if out.exists() and Path(src).exists() and out.resolve() == Path(src).resolve():
            raise StageError(f"--out {cfg.out!r} is the --{role} checkpoint: write the combined model elsewhere")
    if out.exists() and not cfg.force:
        raise StageError(f"--out {cfg.out!r} already exists: pass --force to replace it, or write elsewhere")
    play, play_meta = _source(cfg.model, "model")
    cube, cube_meta = _source(cfg.cube, "cube")
    if cube.cube_nets is not None:  # a fit --init of a format-3 model carries them: its play nets are the fit's
        print(
            f"note: --cube {cfg.cube!r} has cube nets of its own (checkpoint format 3); its play nets become the "
            f"cube nets, its cube nets are left out ({_recorded_cube(cube_meta)})",
            file=sys.stderr,
        )
        attach_cube_nets(cube, None)
    attach_cube_nets(play, cube)
    sources = {
        role: {"path": src, "checksum": meta.checksum, "games_trained": meta.games_trained}
        for role, src, meta in (("model", cfg.model, play_meta), ("cube", cfg.cube, cube_meta))
    }
    config = {"stage": "combine", **sources, "play_training_config": play_meta.training_config}
    checkpoint.save(out, play, games_trained=play_meta.games_trained, training_config=config)
    _, meta = checkpoint.load(out)  # what was written loads, checksum and sanity included
    return {
        "stage": "combine",
        "out": str(out),
        "model": cfg.model,
        "cube": cfg.cube,
        "created": now(),
        "format_version": meta.format_version,
    }
