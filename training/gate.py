"""The ``gate`` stage: duplicate games of a candidate against the previous generation (and more opponents, recorded).

``python -m training gate --candidate C --against P --games N [--opponent pubeval ...] [--cube-reference STORE]
--out FILE.json`` writes one JSON record: ppg with 95% CI of the candidate against the previous generation and each
``--opponent`` (:func:`bgbot.arena.benchmark.benchmark`); with ``--cube-reference``, also both models' money cube
errors on held-out long rollouts, paired (:func:`bgbot.arena.benchmark.cube_check`, as ``bgbot gate
--cube-reference``). Accepted: by the gate's rule
(:func:`bgbot.arena.benchmark.accepts`: the lower 95% end of the ppg against the previous generation above 0), and
the cube decisions not worse. Unlike ``bgbot gate`` it promotes nothing into ``models/`` and writes no registry line.
Its exit status, as ``bgbot gate``'s: 0 accepted, 1 rejected (:func:`gate_status`), 2 an error.

Ctrl-C or SIGTERM stops the workers: the record so far is printed, marked ``"complete": false`` with the signal's
name in ``"interrupted"`` (the opponent being played has the partial result of its whole duplicate pairs finished,
``"complete": false``), never accepted, and ``--out`` is not written; the exit status is 130 (SIGINT) or 143
(SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from bgbot import files
from bgbot.arena.benchmark import EXIT_ACCEPTED, EXIT_REJECTED
from bgbot.errors import duplicate_path

from .parts import StageError, StageStopped, now

__all__ = ["GATE_EXIT_STATUS", "GateConfig", "gate_status", "run_gate"]

GATE_EXIT_STATUS = (
    f"Exit status: {EXIT_ACCEPTED} accepted, {EXIT_REJECTED} rejected (the record printed and written either way), 2 an "
    "error (bad input, a failed write), 130 (Ctrl-C) or 143 (SIGTERM) interrupted: the record so far printed, marked "
    "incomplete, never accepted, --out not written."
)
"""The exit statuses of ``python -m training gate``, as its ``--help`` gives them."""


@dataclass(frozen=True)
class GateConfig:
    """The settings of ``gate``.

    Attributes:
        candidate: the candidate checkpoint (.pt).
        against: the previous generation (.pt) or a player spec (``gnubg:0``, ...).
        games: games against each opponent (even).
        opponents: more opponents to record (player specs).
        seed: the dice.
        workers: worker processes.
        ply: the candidate's lookahead.
        out: the JSON record file (None: printed only).
        cube_reference: campaign stores of held-out long rollouts for the cube check (None: no check).
        cube: the games are cubeful money games (Jacoby on): the ppg that sees the cube decisions, the gate of a
            candidate that changes only them (separate cube nets, :mod:`training.combine`).
    """

    candidate: str
    against: str
    games: int
    opponents: tuple[str, ...] = ()
    seed: int = 0
    workers: int = 1
    ply: int = 0
    out: str | None = None
    cube_reference: tuple[str, ...] | None = None
    cube: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> GateConfig:
        """The config of ``gate``'s parsed command line (checked by :func:`run_gate`)."""
        return cls(
            candidate=args.candidate,
            against=args.against,
            games=args.games,
            opponents=tuple(args.opponent or ()),
            seed=args.seed,
            workers=args.workers,
            ply=args.ply,
            out=args.out,
            cube_reference=None if args.cube_reference is None else tuple(args.cube_reference),
            cube=args.cube,
        )


def gate_status(record: dict) -> int:
    """The exit status of a finished gate's ``record`` (:func:`run_gate`'s): ``EXIT_ACCEPTED`` (0) when it accepted
    the candidate, ``EXIT_REJECTED`` (1) when not, as ``bgbot gate`` (:mod:`bgbot.arena.benchmark`)."""
    return EXIT_ACCEPTED if record["accepted"] else EXIT_REJECTED


def run_gate(cfg: GateConfig) -> dict:
    """Play the gate's games -> the record (also written to ``cfg.out``): stage, candidate, against, created,
    results (by opponent: :func:`bgbot.arena.benchmark.benchmark`'s fields and seconds), accepted, and ``cube``
    (:meth:`bgbot.arena.benchmark.CubeGate.to_json`) with a cube reference.

    Raises:
        StageStopped: SIGINT or SIGTERM (or a failing player or worker) before the record was complete: its
            ``summary`` is the record so far (``complete`` False, ``interrupted``, never accepted); ``out`` not
            written.
        StageError: a missing candidate or ``against`` checkpoint; ``against`` the candidate itself (compared
            resolved); ``out`` there and not a regular file; a cube reference with
            ``against`` not a checkpoint.
        bgbot.formats.store.StoreError: a cube reference that is not a held-out cube reference
            (:func:`bgbot.arena.cubegate.check_reference`), checked before any game.
        bgbot.errors.BgbotError: a bad player spec or game count (the tournament's errors).
    """
    from bgbot.arena import distributed
    from bgbot.arena.benchmark import GamesStopped, accepts, benchmark

    if duplicate_path((cfg.candidate, cfg.against)):
        raise StageError(
            f"--against {cfg.against!r} is the candidate {cfg.candidate!r}: a candidate cannot be gated against itself"
        )
    for p in (cfg.candidate, cfg.against):
        if p.endswith(".pt") and not Path(p).is_file() or p is cfg.candidate and not p.endswith(".pt"):
            raise StageError(f"no checkpoint file at {p!r}")
    if cfg.out and Path(cfg.out).exists() and not Path(cfg.out).is_file():  # before the games, not after them
        raise StageError(files.not_a_file("--out", cfg.out, "the JSON record's file name"))
    if cfg.cube_reference:  # before the games, not after them
        from bgbot.arena.cubegate import check_reference

        if not cfg.against.endswith(".pt"):
            raise StageError("--cube-reference compares two checkpoints: --against must be a .pt file")
        for store in cfg.cube_reference:
            check_reference(store)
    record = {
        "stage": "gate",
        "candidate": cfg.candidate,
        "against": cfg.against,
        "created": now(),
        "cube_games": cfg.cube,
        "results": {},
    }
    opp = cfg.against
    try:
        with distributed.interrupt_signals():  # Ctrl-C, SIGTERM: stop the workers, print the record so far
            for opp in [cfg.against, *cfg.opponents]:
                t0 = time.perf_counter()
                r = benchmark(
                    cfg.candidate,
                    opp,
                    games=cfg.games,
                    seed=cfg.seed,
                    workers=cfg.workers,
                    plies=cfg.ply,
                    cube=cfg.cube,
                )
                r["seconds"] = time.perf_counter() - t0
                record["results"][opp] = r
            accepted = accepts(record["results"][cfg.against])
            if cfg.cube_reference:
                from bgbot.arena.benchmark import cube_check

                checked = cube_check(cfg.candidate, cfg.against, list(cfg.cube_reference))
                record["cube"] = checked.to_json()
                accepted = accepted and checked.not_worse
    except (GamesStopped, distributed.Interrupted) as stop:
        if isinstance(stop, GamesStopped):
            if stop.partial is not None:
                record["results"][opp] = stop.partial | {"complete": False}
            note = "partial" if stop.partial is not None else "too few for an estimate"
            signal_name, why = stop.signal, f"{stop} against {opp!r} ({note})"
        else:  # a signal outside the games: the cube check
            signal_name = signal.Signals(stop.signum).name
            why = f"interrupted ({signal_name}) before the gate finished"
        record |= {"accepted": False, "complete": False, "interrupted": signal_name}
        written = f"; --out {cfg.out!r} not written" if cfg.out else ""
        raise StageStopped(record, f"{why}: not accepted{written}", stop.exit_status) from None
    record["accepted"] = accepted
    if cfg.out:
        out = Path(cfg.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(out, json.dumps(record, indent=2))
    return record
