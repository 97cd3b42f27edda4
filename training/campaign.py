"""The rollout campaign: a committed, append-only store of the engine's own full rollouts, resumable after any stop.

    python -m training campaign plan   --store DIR --model M --pool DIR [DIR ...] [--exclude DIR ...] [--size N]
                                       [--trials T] [--ply N] [--variance-reduction] [--seed S] [--part-size K]
                                       [--plays] [--move-filter]
    python -m training campaign run    --store DIR [--workers N | --ray ADDRESS] [--parts K]
    python -m training campaign status --store DIR

**Why.** The nets' judgement is worst where 2-ply targets of the previous generation cannot see (primes, back games,
cube windows, races decided by a few pips); the engine's own full rollouts can (``docs/HISTORY.md``). Every engine at
this level was fitted to rollouts of its own play at scale (GNU Backgammon 0.14: 1,296 trials at 0-ply; wildbg:
100,000+ positions x 1,296 trials a generation). Such a store takes many CPU-hours, so it is built a part at a time by
a process that may be stopped at any moment and resumed later, on this machine or another.

**The store** (a directory under ``models/candidates/``, committed part by part):

* ``campaign.json``: the settings, fixed when the store is planned: model (path and SHA-256 of its file), rollout
  settings (:class:`bgbot.arena.rollout.RolloutSettings`: trials, plies, variance reduction, quasi-random dice,
  databases, truncation), dice seed, part size, the selection rules and the plan's SHA-256.
* ``plan.npz``: the queue, ``positions`` ``(P, 26)`` int8 (side on roll), ``classes`` ``(P,)`` int8 (sample classes of
  :data:`training.sample.SAMPLE_CLASSES`), ``reasons`` ``(P,)`` int8 (:class:`Reason`: the rule that chose it) and the
  0-ply ``probabilities`` ``(P, 5)`` float32 of the model that chose them. Part ``n`` rolls out rows
  ``[n * part_size, (n + 1) * part_size)`` with the dice of seed ``(seed, n)``, so a part is the same whichever run,
  worker count or Ray cluster made it.
* ``part-NNNNN.npz``: ``positions``, ``classes``, ``reasons``, ``targets`` ``(K, 5)`` float32 (the rollout's mean
  cumulative probabilities for the side on roll, clipped to [0, 1]: what ``python -m training fit --targets`` reads),
  ``stderr`` ``(K, 5)`` float32 (their standard errors over the trials), ``meta`` (JSON: settings, part, plan rows,
  model SHA-256, git revision) and ``cost`` (JSON: CPU seconds, wall seconds, workers, host, time). Every array but
  ``cost`` (and the ``git_revision`` in ``meta``) is a pure function of the plan and the settings: a part made
  again is identical.

**Safety.** One process per store (an ``fcntl`` lock on ``DIR/.lock``, released by the kernel even after kill -9); a
part is written atomically (temporary file, fsync, rename), so a kill at any moment loses at most the part being
rolled out; on start every finished part is read back and checked (a torn or foreign part is refused by name); a
full disk stops the run with one line naming what is saved. SIGINT and SIGTERM stop after printing the progress.

**Positions are chosen by rule** from sampled self-play positions of the engine (never with GNU Backgammon's help),
each with its :class:`Reason`; see :func:`choose`.

**A plays store** (``plan --plays``, :mod:`training.plays`) plans checker-play decisions instead: its plan adds
``dice`` ``(P, 2)`` int8, one roll for each position; part ``n`` searches decisions ``[n * part_size, (n + 1) *
part_size)`` at 0 and 2 ply and rolls out the afterstates of those whose choices differ (:attr:`Reason.PLAY`), so a
part holds as many rows as it found (``K`` >= 0), with ``decisions`` ``(K,)`` int32 (the plan row of each afterstate's
decision), ``choice`` ``(K,)`` int8 (:data:`training.plays.ZERO_PLY_CHOICE` / :data:`training.plays.DEEP_CHOICE`),
``rank2`` ``(K,)`` int8 and the searches' own ``ply0`` and ``ply2`` ``(K, 5)`` float32 (for the side on roll, as the
targets). ``campaign.json`` records the search under ``stream``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import errno
import fcntl
import hashlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bgbot.arena.rollout import RolloutSettings, rollout_positions
from bgbot.errors import check_distinct_paths, int_at_least
from bgbot.evaluation.evaluator import position_probabilities
from bgbot.evaluation.prune import file_sha256
from bgbot.formats.store import STORE_FILE, CampaignSettings, check_part, load_settings, n_parts, part_path
from bgbot.rules.outcomes import equity

from .parts import StageError, first_rows, git_revision, load_model, load_npz, now, save_npz
from .sample import BACKGAME, SAMPLE_CLASSES

PLAN_FILE = "plan.npz"
LOCK_FILE = ".lock"


class Reason(enum.IntEnum):
    """Why a position is in the plan: the first rule of :func:`choose` it meets, in this order. Each member's rule in
    words is its ``rule`` (also :data:`RULES`), the text ``campaign.json`` records."""

    rule: str

    def __new__(cls, value: int, rule: str) -> Reason:
        member = int.__new__(cls, value)
        member._value_ = value
        member.rule = rule
        return member

    CUBE = (
        1,
        "Contact, crashed or back game; the side on roll wins 55-90% with at least 5% gammons (0-ply): the "
        "doubling window, where take/pass decisions are made and the 0-ply take errors are largest.",
    )
    BACKGAME = (
        2,
        "A side holds two or more points in the other side's home board (GNU Backgammon's back-game situation): "
        "2-ply overrates the side on roll there by 0.058 in win probability against the engine's own rollouts.",
    )
    PRIME = (
        3,
        "A side has four or more consecutive made points with at least one checker of the other side behind them.",
    )
    CRASHED = 4, "GNU Backgammon's crashed class (few checkers left in play for a side's home board)."
    RACE_CUBE = 5, "A race (no contact) with the side on roll winning 55-90%: race cube decisions."
    BASE = 6, "None of the above: a broad base of the engine's own self-play positions."
    PLAY = (
        7,
        "An afterstate of a checker play of a self-play position and a random roll where the model's 0-ply and 2-ply "
        "choose different plays: the 0-ply choice and the 2-ply candidates best first (training.plays).",
    )


RULES = {reason: reason.rule for reason in Reason}
"""Each :class:`Reason`'s rule in words, as ``campaign.json`` records it under the reason's lower-case name."""

SCHEDULE = (Reason.CUBE, Reason.BACKGAME, Reason.CUBE, Reason.PRIME, Reason.CRASHED, Reason.CUBE, Reason.RACE_CUBE,
            Reason.BASE)  # fmt: skip
"""The order in which the plan takes positions from the streams of each reason, repeated (an exhausted stream is
skipped): three of eight from the cube window, one each from the others."""


# --- choosing positions --------------------------------------------------------------------------------------------


def primes_behind(positions: np.ndarray) -> np.ndarray:
    """Whether either side has a prime with a checker of the other side trapped behind it: ``(N, 26)`` int8 (side on
    roll) -> ``(N,)`` bool.

    A prime here is four or more consecutive points (bar excluded) each holding two or more of a side's checkers; a
    checker is behind it when it still has to pass it (for the side on roll's prime: an opponent checker on the bar or
    on a lower point than the prime's lowest).
    """
    pos = np.asarray(positions, dtype=np.int8)

    def mine(p: np.ndarray) -> np.ndarray:
        made = (p[:, 1:25] >= 2).astype(np.int8)  # (N, 24): my points 1..24
        run = made[:, 0:21] & made[:, 1:22] & made[:, 2:23] & made[:, 3:24]  # window [k+1, k+4]
        opp = p[:, 1:25] < 0
        idx = np.arange(1, 25)
        lowest_opp = np.where(opp, idx, 99).min(axis=1)
        lowest_opp = np.where(p[:, 0] < 0, 0, lowest_opp)  # a checker on the bar is behind every prime
        start = np.where(run, np.arange(1, 22), 0).max(axis=1)  # the highest window's lowest point (0: none)
        return (start > 0) & (lowest_opp < start)

    flipped = -pos[:, ::-1]
    return mine(pos) | mine(flipped)


def reasons_of(classes: np.ndarray, probabilities: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The :class:`Reason` code of each position, ``(N,)`` int8 (see :class:`Reason` for the rules).

    Args:
        classes: ``(N,)`` int8 sample classes (:func:`training.sample.sample_classes`: 1 contact, 2 crashed, 3 race,
            4 back game; 0 over).
        probabilities: ``(N, 5)`` float32 the side on roll's 0-ply cumulative probabilities.
        positions: ``(N, 26)`` int8, side on roll.
    """
    win, gammon = probabilities[:, 0], probabilities[:, 1]
    window = (win >= 0.55) & (win <= 0.90)
    contact = np.isin(classes, (1, 2, 4))
    out = np.full(len(classes), Reason.BASE, dtype=np.int8)
    rules = [
        (Reason.CUBE, contact & window & (gammon >= 0.05)),
        (Reason.BACKGAME, classes == BACKGAME),
        (Reason.PRIME, contact & primes_behind(positions)),
        (Reason.CRASHED, classes == 2),
        (Reason.RACE_CUBE, (classes == 3) & window),
    ]
    for reason, mask in reversed(rules):  # the first rule met wins
        out[mask] = reason
    return out


def interleave(reasons: np.ndarray, seed: int, size: int) -> np.ndarray:
    """Row order of the plan: each reason's rows shuffled (seeded), then taken in the order of :data:`SCHEDULE`,
    repeated, until ``size`` rows or every stream is used. ``reasons`` ``(N,)`` int8 -> ``(min(size, N'),)`` int64,
    where ``N'`` counts the rows whose reason the schedule holds."""
    rng = np.random.default_rng([seed, 7919])
    streams = {r: list(rng.permutation(np.flatnonzero(reasons == r))) for r in Reason}
    heads = dict.fromkeys(Reason, 0)
    order: list[int] = []
    while len(order) < size and any(heads[r] < len(streams[r]) for r in set(SCHEDULE)):
        for r in SCHEDULE:
            if heads[r] < len(streams[r]) and len(order) < size:
                order.append(int(streams[r][heads[r]]))
                heads[r] += 1
    return np.array(order, dtype=np.int64)


def choose(evaluator, positions: np.ndarray, classes: np.ndarray, seed: int, size: int):
    """The plan from a pool of sampled positions: distinct positions, their reasons and 0-ply probabilities.

    Args:
        evaluator: the campaign model's position evaluator (its 0-ply probabilities pick the cube windows).
        positions: ``(N, 26)`` int8 sampled pre-roll positions (side on roll); duplicates are dropped.
        classes: ``(N,)`` int8 their sample classes.
        seed: the order of each stream. size: rows in the plan at most.

    Returns:
        ``(positions (P, 26) int8, classes (P,) int8, reasons (P,) int8, probabilities (P, 5) float32)``.
    """
    if not len(positions):
        raise StageError("no positions to plan: the pool is empty once --exclude is applied")
    first = first_rows(positions)
    pos, cls = positions[first].astype(np.int8), classes[first].astype(np.int8)
    keep = cls > 0  # finished games have nothing to roll out
    pos, cls = pos[keep], cls[keep]
    if not len(pos):
        raise StageError("no positions to plan: the pool holds only finished games")
    prob = np.concatenate([position_probabilities(evaluator, pos[i : i + 8192]) for i in range(0, len(pos), 8192)])
    why = reasons_of(cls, prob, pos)
    order = interleave(why, seed, size)
    return pos[order], cls[order], why[order], prob[order].astype(np.float32)


def choose_decisions(evaluator, positions: np.ndarray, classes: np.ndarray, seed: int, size: int):
    """The plan of a plays store: distinct positions in a seeded random order, each with a roll.

    Args:
        evaluator: the campaign model's position evaluator (its 0-ply probabilities are recorded in the plan).
        positions: ``(N, 26)`` int8 sampled pre-roll positions (side on roll); duplicates and finished games dropped.
        classes: ``(N,)`` int8 their sample classes. seed: the order and the rolls. size: decisions at most.

    Returns:
        ``(positions (P, 26) int8, classes (P,) int8, reasons (P,) int8 all :attr:`Reason.PLAY`, probabilities
        (P, 5) float32, dice (P, 2) int8)``; each roll is drawn as the dice fall (a double 1/36, another roll 2/36).

    Raises:
        StageError: nothing to plan.
    """
    first = first_rows(positions)
    pos, cls = positions[first].astype(np.int8), classes[first].astype(np.int8)
    keep = cls > 0
    pos, cls = pos[keep], cls[keep]
    if not len(pos):
        raise StageError("no positions to plan: the pool is empty once --exclude and finished games are dropped")
    rng = np.random.default_rng([seed, 7927])
    order = rng.permutation(len(pos))[:size]
    pos, cls = pos[order], cls[order]
    dice = rng.integers(1, 7, size=(len(pos), 2)).astype(np.int8)
    prob = np.concatenate([position_probabilities(evaluator, pos[i : i + 8192]) for i in range(0, len(pos), 8192)])
    return pos, cls, np.full(len(pos), Reason.PLAY, dtype=np.int8), prob.astype(np.float32), dice


# --- the store -----------------------------------------------------------------------------------------------------


def model_path(store: Path, model: str) -> Path:
    """The checkpoint a store names: ``model`` as recorded (a path relative to the repository root where the store was
    planned, e.g. ``models/bgbot-5.pt``), found from the current directory or, failing that, from each folder above
    the store (so a store's commands also work from elsewhere). Returns the path as recorded when neither exists."""
    path = Path(model)
    if path.is_file() or path.is_absolute():
        return path
    for parent in store.resolve().parents:
        if (parent / path).is_file():
            return parent / path
    return path


def load_plan(store: Path, settings: CampaignSettings) -> dict:
    """The plan's arrays, checked against the SHA-256 recorded in the settings.

    Raises:
        StageError: the plan is missing, unreadable or not the one the settings were made with.
    """
    path = store / PLAN_FILE
    if not path.is_file() or file_sha256(path) != settings.plan_sha256:
        raise StageError(f"{str(path)!r} is missing or not the plan {STORE_FILE} was made with")
    return load_npz(path)


@contextlib.contextmanager
def locked(store: Path) -> Iterator[None]:
    """Hold the store's lock (``fcntl.flock`` on ``DIR/.lock``; the kernel drops it when the process dies).

    Raises:
        StageError: another process holds it.
    """
    fd = os.open(store / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise StageError(f"{str(store)!r} is being rolled out by {holder}: one process per store") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} (process group {os.getpgrp()}) on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def check_store_path(store: Path) -> None:
    """Refuse, before any work, a ``--store`` that cannot be a store's directory.

    Raises:
        StageError: ``store`` is an existing file (or other non-directory), or a folder above it is a file.
    """
    if store.exists() and not store.is_dir():
        raise StageError(f"--store {str(store)!r} is a file, not a directory: give a directory for the store")
    for parent in store.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StageError(
                    f"--store {str(store)!r} cannot be created: {str(parent)!r} is a file, not a directory"
                )
            break


def setting_differences(old: CampaignSettings, new: CampaignSettings) -> list[str]:
    """Each setting in which ``new`` (a plan asked for) differs from ``old`` (a store's), as ``"NAME: OLD in the
    store, NEW asked"``, a rollout setting named ``rollout.KEY`` (``"rollout.trials: 1296 in the store, 36 asked"``);
    empty when they are the same. The model is its SHA-256, not its path: the same file by another path, or a copy
    of it, is the same model; another is ``"model: 'a.pt' (SHA-256 1a2b3c4d5e6f...) in the store, 'b.pt' (SHA-256
    ...) asked"``. The plan's SHA-256 and the rules' wording are records, not settings: never listed."""
    out = []
    for field in dataclasses.fields(CampaignSettings):
        if field.name in ("plan_sha256", "rules", "model_sha256"):
            continue
        a, b = getattr(old, field.name), getattr(new, field.name)
        if field.name == "model":
            if old.model_sha256 != new.model_sha256:
                out.append(
                    f"model: {a!r} (SHA-256 {old.model_sha256[:12]}...) in the store, "
                    f"{b!r} (SHA-256 {new.model_sha256[:12]}...) asked"
                )
        elif field.name == "rollout":
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    out.append(f"rollout.{key}: {a.get(key)!r} in the store, {b.get(key)!r} asked")
        elif a != b:
            out.append(f"{field.name}: {a!r} in the store, {b!r} asked")
    return out


def plan_store(args: argparse.Namespace) -> dict:
    """``campaign plan``: choose the positions and fix the settings of a new store (a store that exists is left as it
    is if asked the same, refused otherwise, naming each setting that differs: :func:`setting_differences`).

    Raises:
        StageError: a ``--pool`` directory given twice, no model or positions, or a store planned otherwise.
    """
    store = Path(args.store)
    check_store_path(store)
    check_distinct_paths(args.pool, "--pool", StageError)
    model = Path(args.model)
    if not model.is_file():
        raise StageError(f"no checkpoint file at {args.model!r}")
    move_filter = bool(getattr(args, "move_filter", False))
    if move_filter:
        from bgbot.evaluation import prune

        if prune.filter_for(model) is None:
            raise StageError(f"--move-filter: {args.model!r} has no move filter of its own (prune/<name>.pt)")
    rollout = RolloutSettings(
        args.trials, args.truncate, args.ply, args.seed, args.variance_reduction, True, True, move_filter=move_filter
    ).to_json()
    src = [p for d in args.pool for p in sorted(Path(d).glob("part-*.npz"))]
    if not src:
        raise StageError(f"no positions parts (part-*.npz) in {args.pool!r}")
    _, evaluator, _ = load_model(args.model)
    pos, cls = [], []
    for path in src:
        data = load_npz(path)
        if "classes" not in data:
            raise StageError(f"{str(path)!r} holds no sample classes for its positions")
        pos.append(data["positions"].astype(np.int8))
        cls.append(data["classes"].astype(np.int8))
    positions, classes = np.concatenate(pos), np.concatenate(cls)
    if args.exclude:
        held_parts = [load_npz(p)["positions"] for d in args.exclude for p in sorted(Path(d).glob("*.npz"))]
        if not held_parts:
            raise StageError(f"no positions (*.npz) in --exclude {args.exclude!r}")
        held = np.concatenate(held_parts)
        keys = {row.tobytes() for row in held.astype(np.int8)}
        keep = np.array([row.tobytes() not in keys for row in positions], dtype=bool)
        positions, classes = positions[keep], classes[keep]
    stream = None
    extra = {}
    if getattr(args, "plays", False):
        from . import plays

        p, c, r, prob, dice = choose_decisions(evaluator, positions, classes, args.seed, args.size)
        extra = {"dice": dice}
        stream = {"kind": "plays", "ply": plays.PLY, "candidates": plays.CANDIDATES, "chunk": plays.CHUNK}
        rules = {"play": Reason.PLAY.rule}
    else:
        p, c, r, prob = choose(evaluator, positions, classes, args.seed, args.size)
        rules = {reason.name.lower(): reason.rule for reason in Reason if reason != Reason.PLAY}
        rules["schedule"] = " ".join(s.name.lower() for s in SCHEDULE)
    store.mkdir(parents=True, exist_ok=True)
    plan_file = store / PLAN_FILE
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, positions=p, classes=c, reasons=r, probabilities=prob, **extra)
    settings = CampaignSettings(
        model=str(model),
        model_sha256=file_sha256(model),
        rollout=rollout,
        seed=args.seed,
        part_size=args.part_size,
        plan_sha256=hashlib.sha256(buffer.getvalue()).hexdigest(),
        plan_rows=len(p),
        sources=[str(d) for d in args.pool],
        rules=rules,
        stream=stream,
    )
    if (store / STORE_FILE).exists():
        old = load_settings(store)
        # the rules' wording is a record, not a setting (a store planned before it was fixed stays the same store)
        differ = setting_differences(old, settings)
        if differ:
            raise StageError(
                f"{str(store)!r} holds a campaign planned with other settings ({'; '.join(differ)}): pick another "
                "--store"
            )
        if not plan_file.is_file():
            raise StageError(f"{str(store)!r} holds {STORE_FILE} but no {PLAN_FILE}: pick another --store")
        if old.plan_sha256 != settings.plan_sha256:
            raise StageError(f"{str(store)!r} was planned from other positions: pick another --store")
        return {"store": str(store), "planned": False, "rows": old.plan_rows}
    from bgbot import files

    files.write_atomic(plan_file, buffer.getvalue())
    files.write_atomic(store / STORE_FILE, json.dumps(settings.to_json(), indent=1) + "\n")
    counts = {k.name.lower(): int((r == k).sum()) for k in Reason if (r == k).any()}
    return {"store": str(store), "planned": True, "rows": len(p), "parts": n_parts(settings), "reasons": counts}


class Stop(Exception):
    """SIGINT or SIGTERM arrived: stop after saying what is saved."""


def _raise_stop(signum, frame) -> None:
    raise Stop(signal.Signals(signum).name)


def roll_part(
    evaluator, settings: CampaignSettings, plan: dict, n: int, workers: int, ray: str | None, players=None
) -> dict:
    """Roll out part ``n`` of the plan -> the part's arrays (see the module docstring), without ``cost``.

    ``evaluator`` is the store's model; ``players`` the rollout players' evaluator (the model with its move filter
    when the store's rollouts use it, :func:`players_for`; None: ``evaluator``)."""
    players = evaluator if players is None else players
    rows = slice(n * settings.part_size, (n + 1) * settings.part_size)
    ro = settings.rollout
    how = RolloutSettings(
        trials=ro["trials"],
        truncate=ro["truncate"],
        plies=ro["plies"],
        seed=settings.seed * 100_003 + n,
        variance_reduction=ro["variance_reduction"],
        quasi_random=ro["quasi_random"],
        databases=ro["databases"],
        move_filter=ro.get("move_filter", False),
    )
    if settings.plays:
        return _roll_plays_part(evaluator, players, settings, plan, n, how, workers, ray)
    pos = plan["positions"][rows]
    mean, se = rollout_positions(pos, players, how, workers, ray)
    meta = {
        "stage": "campaign",
        "settings": settings.to_json(),
        "part": n,
        "rows": [rows.start, rows.start + len(pos)],
        "git_revision": git_revision(),
    }
    return {
        "positions": pos.astype(np.int8),
        "classes": plan["classes"][rows],
        "reasons": plan["reasons"][rows],
        "targets": np.clip(mean, 0.0, 1.0).astype(np.float32),
        "stderr": se.astype(np.float32),
        "meta": meta,
    }


def players_for(evaluator, settings: CampaignSettings, model: Path):
    """The rollout players' evaluator of a store: ``evaluator``, wrapped in ``model``'s own move filter
    (:class:`bgbot.evaluation.prune.PrunedEvaluator`) when the store's rollout settings say ``move_filter``.

    Raises:
        StageError: the store's rollouts use a move filter and ``model`` has none of its own.
    """
    if not settings.rollout.get("move_filter"):
        return evaluator
    from bgbot.evaluation import prune

    found = prune.filter_for(model)
    if found is None:
        raise StageError(f"{str(model)!r} has no move filter of its own (prune/<name>.pt), and this store uses one")
    return prune.PrunedEvaluator(evaluator, found)


def _select_task(task: tuple) -> object:
    """One selection task of a plays part (top-level, for a process pool or Ray): ``(evaluator, positions, dice, ply,
    keep)`` -> :class:`training.plays.Selected`."""
    from . import plays

    evaluator, positions, dice, ply, keep = task
    return plays.select(evaluator, positions, dice, ply, keep)


def _roll_plays_part(evaluator, players, settings: CampaignSettings, plan: dict, n: int, how, workers, ray) -> dict:
    """A plays store's part ``n``: its decisions searched (:func:`training.plays.select`, in fixed chunks of
    ``stream["chunk"]`` decisions), the disagreeing decisions' afterstates rolled out."""
    from bgbot.arena import distributed

    from . import plays
    from .sample import sample_classes

    lo = n * settings.part_size
    pos = plan["positions"][lo : lo + settings.part_size]
    dice = plan["dice"][lo : lo + settings.part_size]
    st = settings.stream or {}
    chunk = int(st["chunk"])
    starts = list(range(0, len(pos), chunk))
    tasks = [
        (evaluator, pos[a : a + chunk], dice[a : a + chunk], int(st["ply"]), int(st["candidates"])) for a in starts
    ]
    found = distributed.run_tasks(_select_task, tasks, workers=workers, ray=ray)
    sel = plays.Selected.concatenate(found, [lo + a for a in starts])
    if len(sel.afterstates):
        mean, se = rollout_positions(sel.afterstates, players, how, workers, ray)
    else:
        mean, se = np.zeros((0, 5)), np.zeros((0, 5))
    meta = {
        "stage": "campaign",
        "settings": settings.to_json(),
        "part": n,
        "rows": [lo, lo + len(pos)],
        "git_revision": git_revision(),
    }
    return {
        "positions": sel.afterstates,
        "classes": sample_classes(sel.afterstates).astype(np.int8),
        "reasons": np.full(len(sel.afterstates), Reason.PLAY, dtype=np.int8),
        "targets": np.clip(mean, 0.0, 1.0).astype(np.float32).reshape(-1, 5),
        "stderr": se.astype(np.float32).reshape(-1, 5),
        "decisions": sel.decision,
        "choice": sel.choice,
        "rank2": sel.rank2,
        "ply0": sel.ply0,
        "ply2": sel.ply2,
        "meta": meta,
    }


def status(store: Path) -> dict:
    """What a store holds: its rollouts' trials and truncation, parts and positions done, CPU-hours, positions per
    reason, mean standard error of the win probability, and per reason the gap between the rollouts and the planning
    model's 0-ply probabilities (mean and root mean square of rollout minus 0-ply, in win probability and in cubeless
    equity): where the model's 0-ply misses what its own play knows.

    Raises:
        StageError: not a store, or a part is torn or foreign.
    """
    settings = load_settings(store)
    plan = load_plan(store, settings)
    total = n_parts(settings)
    kinds = [Reason.PLAY] if settings.plays else [r for r in Reason if r != Reason.PLAY]
    gaps: dict[str, list[np.ndarray]] = {r.name.lower(): [] for r in kinds}
    done, cpu, wall, per_reason, se = 0, 0.0, 0.0, dict.fromkeys((r.name.lower() for r in kinds), 0), []
    positions = 0
    examined = 0
    chosen: dict[str, list[np.ndarray]] = {k: [] for k in ("decisions", "choice", "targets", "ply0", "ply2")}
    for n in range(total):
        path = part_path(store, n)
        if not path.exists():
            continue
        data = check_part(path, n, settings, plan)
        done += 1
        positions += len(data["positions"])
        cost = json.loads(str(data["cost"])) if "cost" in data else {}
        cpu += cost.get("cpu_seconds", 0.0)
        wall += cost.get("wall_seconds", 0.0)
        for k in kinds:
            per_reason[k.name.lower()] += int((data["reasons"] == k).sum())
        se.append(data["stderr"][:, 0])
        lo = n * settings.part_size
        if settings.plays:
            examined += min(settings.part_size, settings.plan_rows - lo)
            for name in chosen:
                chosen[name].append(data[name])
            zero_ply = data["ply0"].astype(np.float64)
        else:
            zero_ply = plan["probabilities"][lo : lo + len(data["positions"])].astype(np.float64)
        rolled = data["targets"].astype(np.float64)
        d = np.stack([rolled[:, 0] - zero_ply[:, 0], equity(rolled) - equity(zero_ply)], axis=1)
        for k in kinds:
            gaps[k.name.lower()].append(d[data["reasons"] == k])
    gap = {}
    for name, chunks in gaps.items():
        d = np.concatenate(chunks) if chunks else np.zeros((0, 2))
        gap[name] = {
            "positions": len(d),
            "win_mean": float(d[:, 0].mean()) if len(d) else None,
            "win_rms": float(np.sqrt((d[:, 0] ** 2).mean())) if len(d) else None,
            "equity_mean": float(d[:, 1].mean()) if len(d) else None,
            "equity_rms": float(np.sqrt((d[:, 1] ** 2).mean())) if len(d) else None,
        }
    out: dict = {}
    if settings.plays:
        from . import plays

        cat = {k: np.concatenate(v) if v else np.zeros((0, 5) if k in ("targets", "ply0", "ply2") else 0)
               for k, v in chosen.items()}  # fmt: skip
        out["plays"] = {"decisions_examined": examined} | plays.agreement(
            cat["decisions"], cat["choice"], cat["targets"], cat["ply0"], cat["ply2"]
        )
    return out | {
        "store": str(store),
        "model": settings.model,
        "trials": settings.rollout["trials"],
        "truncate": settings.rollout["truncate"],
        "parts_done": done,
        "parts_total": total,
        "positions": positions,
        "positions_planned": settings.plan_rows,
        "cpu_hours": cpu / 3600,
        "cpu_seconds_per_position": cpu / max(positions, 1),
        "win_stderr_mean": float(np.concatenate(se).mean()) if se else None,
        "by_reason": per_reason,
        "rollout_minus_0ply": gap,
    }


def _save_part(path: Path, arrays: dict, cost: dict) -> None:
    """Write a part atomically; a full disk becomes a StageError naming what is saved."""
    try:
        save_npz(path, **arrays, cost=np.array(json.dumps(cost)))
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StageError(
                f"no space left on the device writing {str(path)!r}: the parts before it are saved and complete; "
                "free space and run again to continue"
            ) from None
        raise


def run_store(args: argparse.Namespace, out=sys.stderr) -> dict:
    """``campaign run``: roll out the plan's missing parts in order (at most ``--parts`` of them), each saved as it
    finishes. SIGINT/SIGTERM stop it; what is saved stays, and the next run continues from there."""
    store = Path(args.store)
    settings = load_settings(store)
    plan = load_plan(store, settings)
    model = model_path(store, settings.model)
    if not model.is_file() or file_sha256(model) != settings.model_sha256:
        raise StageError(f"{settings.model!r} is missing or is not the model this store was planned with")
    if args.workers > 1 and args.ray:
        raise StageError("give --workers or --ray, not both")
    summary: dict = {"made": 0, "positions": 0, "cpu_seconds": 0.0, "stopped": None}
    old = {s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with locked(store):
            for stale in store.glob(".part-*.tmp"):  # a part being written when a run was killed
                stale.unlink()
            total = n_parts(settings)
            todo = []
            for n in range(total):
                path = part_path(store, n)
                if path.exists():
                    check_part(path, n, settings, plan)
                else:
                    todo.append(n)
            if args.parts:
                todo = todo[: args.parts]
            _, evaluator, _ = load_model(str(model))
            players = players_for(evaluator, settings, model)
            for n in todo:
                t0, c0 = time.perf_counter(), _cpu()
                arrays = roll_part(evaluator, settings, plan, n, args.workers, args.ray, players)
                cost = {
                    "cpu_seconds": _cpu() - c0,
                    "wall_seconds": time.perf_counter() - t0,
                    "workers": args.workers,
                    "ray": args.ray,
                    "host": socket.gethostname(),
                    "created": now(),
                }
                _save_part(part_path(store, n), arrays, cost)
                summary["made"] += 1
                summary["positions"] += len(arrays["positions"])
                summary["cpu_seconds"] += cost["cpu_seconds"]
                if not args.quiet:
                    print(
                        f"part {n} of {total}: {len(arrays['positions'])} positions, "
                        f"{cost['cpu_seconds'] / max(len(arrays['positions']), 1):.2f} CPU-s a position",
                        file=out,
                        flush=True,
                    )
    except Stop as e:
        summary["stopped"] = str(e)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    summary["store"] = status(store)
    return summary


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the local worker pool)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def add_parser(sub) -> None:
    """The ``campaign`` stage's parser, on the stages' subparsers ``sub``."""
    c = sub.add_parser("campaign", help="a resumable store of the engine's own full rollouts (plan, run, status)")
    c.add_argument("action", choices=("plan", "run", "status"))
    c.add_argument("--store", required=True, help="the store directory (e.g. models/candidates/campaign-1)")
    c.add_argument("--model", help="plan: the checkpoint that rolls out and whose 0-ply choose the cube windows")
    c.add_argument("--pool", nargs="+", help="plan: directories of sampled positions (part-*.npz with classes)")
    c.add_argument("--exclude", nargs="+", help="plan: directories whose positions are never planned (held-out sets)")
    c.add_argument("--size", type=int_at_least(1), default=60_000, help="plan: positions in the plan at most")
    c.add_argument("--trials", type=int_at_least(2), default=1296, help="plan: trials a position (default 1,296)")
    c.add_argument("--ply", type=int_at_least(0), default=0, help="plan: the rollout players' ply (default 0)")
    c.add_argument(
        "--variance-reduction",
        action="store_true",
        help="plan: luck estimation in every trial (default: plain trials, cheaper per unit of accuracy at 0-ply)",
    )
    c.add_argument(
        "--truncate",
        type=int_at_least(0),
        default=0,
        metavar="PLIES",
        help="plan: value each trial by the model's 0-ply after PLIES half-moves (0: play to the end; "
        "RolloutSettings.truncate). Truncated variance-reduced trials cost a tenth of full ones for the plays stream "
        "(models/candidates/campaign-3/plays-bias*.json)",
    )
    c.add_argument("--seed", type=int_at_least(0), default=21, help="plan: the plan's order and the dice")
    c.add_argument("--part-size", type=int_at_least(1), default=100, help="plan: positions a part")
    c.add_argument("--workers", type=int_at_least(1), default=1, help="run: local worker processes")
    c.add_argument("--ray", metavar="ADDRESS", help="run: a Ray cluster ('local' or HOST:PORT)")
    c.add_argument("--parts", type=int_at_least(0), default=0, help="run: stop after this many parts (0: all)")
    c.add_argument(
        "--plays",
        action="store_true",
        help="plan: a plays store (training.plays): --size decisions (a pool position and a roll), each searched at 0 "
        "and 2 ply; the afterstates of those that disagree are rolled out (--part-size decisions a part)",
    )
    c.add_argument(
        "--move-filter",
        action="store_true",
        help="plan: the rollout players choose among the candidates of the model's own move filter (faster; "
        "RolloutSettings.move_filter)",
    )


PLAN_OPTIONS = {  # option -> its default: given to run or status, it would be ignored
    "model": None,
    "pool": None,
    "exclude": None,
    "size": 60_000,
    "trials": 1296,
    "ply": 0,
    "variance_reduction": False,
    "truncate": 0,
    "seed": 21,
    "part_size": 100,
    "plays": False,
    "move_filter": False,
}
RUN_OPTIONS = {"workers": 1, "ray": None, "parts": 0}


def run_campaign(args: argparse.Namespace) -> dict:
    """Dispatch ``campaign plan|run|status``.

    Raises:
        StageError: an option of another action (``run --truncate 3``: a store's settings are fixed when planned).
    """
    foreign = {"plan": RUN_OPTIONS, "run": PLAN_OPTIONS, "status": PLAN_OPTIONS | RUN_OPTIONS}[args.action]
    given = [name for name, default in foreign.items() if getattr(args, name, default) != default]
    if given:
        flags = ", ".join("--" + n.replace("_", "-") for n in given)
        owner = "run" if args.action == "plan" else "plan (a store's settings are fixed when it is planned)"
        raise StageError(f"campaign {args.action} does not take {flags}: an option of campaign {owner}")
    if args.action == "plan":
        missing = [f"--{n}" for n in ("model", "pool") if not getattr(args, n)]
        if missing:
            raise StageError(f"campaign plan needs {' and '.join(missing)}")
        return plan_store(args)
    if args.action == "run":
        return run_store(args)
    return status(Path(args.store))


__all__ = ["Reason", "CampaignSettings", "SAMPLE_CLASSES", "choose", "reasons_of", "primes_behind", "status"]
