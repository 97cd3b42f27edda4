"""Decision quality: equity lost per checker play and per money cube decision, referee GNU Backgammon 2-ply.

Prints one JSON object. The set (``--set``, default ``tests/data/decision_set.txt``, committed; made by ``--make-set``):
positions of ``tests/data/decision_source.txt`` (40,000 positions of GNU Backgammon 0-ply self-play, see its header) in
its order, each with a roll drawn once (seed 2026, one per source line) and stored with it, taken class by class until
each class holds its quota of checker-play decisions (positions with at least two legal plays for the roll): 2,000
contact, 1,000 crashed, 1,000 race (``--contact-decisions``, ``--crashed-decisions``, ``--race-decisions``). Positions
of a class with fewer than two legal plays met before its quota is full are kept for the cube decisions. The set's
header records its counts and the command that made it. The set changed on 2026-12-02: before, it held 2,000
positions of ``tests/data/gnubg_selfplay_positions.txt`` (all 344 crashed ones, only 219 of them checker-play
decisions, and the first others), kept as ``tests/data/decision_set_2000.txt``; ``--set
tests/data/decision_set_2000.txt`` reproduces the figures measured on it.

* **Checker play** (positions with at least two legal plays): the candidate (a bgbot checkpoint at ``--ply``) and, in the
  same run, GNU Backgammon 0-ply (``gnubg_nn.probabilities(board, 0)`` of each resulting position, the anchor) each
  choose a play. The referee values resulting positions with ``gnubg_nn.probabilities(board, 2)`` as cubeless money
  equity for the mover. Which plays it values: GNU Backgammon's own move filter at 0-ply (up to 8 plays within 0.16 of
  the 0-ply best) plus every play a contestant chose; the referee's best is the best of those. Error of a choice =
  referee best minus referee value of the chosen play.
* **Cube** (money, cube centred, Jacoby off): referee = its 2-ply cubeless probabilities of the position through bgbot's
  Janowski money formulas (:func:`bgbot.cube.decision.decide`, the class's cube efficiency). Doubling decisions: in
  positions where GNU Backgammon 0-ply gives the side on roll 55-97% wins; a contestant doubles when its own
  ``decide`` prefers doubling; error = the referee's error of that action. Take/pass decisions: in positions where the
  referee says double; a contestant takes when its ``decide`` has double/take below double/pass; error = the referee's
  take or pass error. Figures in millipoints (1/1000 of the cube value) per decision. The model's decision: its
  ``--cube-ply`` probabilities through ``decide`` (Janowski at the root), or with ``--cube-search`` the cubeful search
  at ``--cube-ply`` (:func:`bgbot.arena.cubesearch.decide_searched`: Janowski at the leaves, averaged over the rolls);
  from the model's cube nets where it has them (:func:`bgbot.evaluation.evaluator.for_cube`).
  Reported overall (``double``, ``take``) and by class (``double_contact``, ``take_race``, ...).
* Split by position class (:func:`bgbot.evaluation.specialists.classify`: contact, crashed, race).
* ``checker_play_ratio_vs_gnubg0``: per class and overall, the candidate's mean checker-play error over GNU
  Backgammon 0-ply's on the same decisions, with a 95% paired percentile bootstrap interval over the decisions
  (:func:`bgbot.arena.stats.ratio_interval`, 10,000 resamples, seed 2026; an upper end of ``null`` is unbounded, GNU
  Backgammon 0-ply erring on none of a resample's decisions). Decisions of one game are resampled independently,
  so the interval ignores the correlation between the plies of a game.

* **The model's own rollouts** (``--cube-rollout KIND``, a third cube contestant ``bgbot_rollout``): each cube position
  is rolled out cubeless by the model's checker-play evaluator (the one the checker-play contestant uses, not its cube
  nets) at 0-ply, the rollout kind ``KIND`` of :func:`training.rollout.rollout_kind` (``vr72``: 72 variance-reduced full
  trials, ``plain324``, ``vr108-h8``: truncated after 8 half-moves), seed ``--rollout-seed``, on ``--workers`` processes
  (a position's result does not depend on them); all the cube positions in one call. The means, made consistent
  (:func:`bgbot.rules.outcomes.check_probabilities` with ``repair``: a variance-reduced mean can have ``lbg > lg``), go
  through the same ``decide``. This measures the ceiling of fitting the cube nets to such rollouts: a cube net that
  reproduced them exactly would decide no better. Cost: about 2 CPU-s a position for ``vr72`` (bgbot-6 on the 2-core
  machine beside other work: 1,268 CPU-s for the 644 cube positions of ``--positions 2000``), 0.47 for ``plain324``:
  the committed set's 1,595 cube positions take about 50 CPU-minutes at ``vr72``. Each position's rollout (5 means, 5 standard errors) is cached
  in ``--cache`` under a key naming the kind, the seed, the model file's SHA-256 (first 16 hex digits) and the Position
  ID, so a rerun with the same settings rolls out nothing. ``cube_rollout`` records the kind, seed, workers, the
  rollouts made and their CPU seconds, the mean standard error of the win probability, the positions whose means needed
  repair, and the cubeless equity ``rmse`` and ``bias`` over the cube positions of rollout minus referee, cube nets (at
  ``--cube-ply``) minus referee and cube nets minus rollout.

The referee's values are cached (``--cache``, a JSON file keyed by position ID and play), so a second model costs only
the plays no earlier run asked about. A measuring stick only: never a training signal, never used to choose training
positions or targets.

With ``--filter PATH`` (a move filter, :mod:`bgbot.evaluation.prune`, ``--keep``/``--extra``/``--margin``), the model
at 0-ply through the filter is a third checker-play contestant (``bgbot_filtered``) on the same decisions, and
``filter_minus_exact`` summarises its errors less the model's, decision by decision (paired), overall and by class.

Usage: ``python scripts/bench_decisions.py [--model PATH] [--ply 0] [--cube-ply 0] [--cube-search] [--set PATH]
[--positions N] [--classes race ...] [--cache FILE] [--cube-rollout KIND [--rollout-seed 1] [--workers 1]]
[--filter PATH [--keep 4] [--extra 10] [--margin 0.3]]``
(``--make-set [--source PATH] [--contact-decisions 2000] [--crashed-decisions 1000] [--race-decisions 1000]``: write
the set ``--set`` and exit).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the training package of this checkout

from bgbot.api import DEFAULT_MODEL  # noqa: E402
from bgbot.arena import cubesearch  # noqa: E402
from bgbot.arena.players import to_gnubg  # noqa: E402
from bgbot.arena.rollout import RolloutError, RolloutSettings, rollout_positions  # noqa: E402
from bgbot.arena.stats import ratio_interval  # noqa: E402
from bgbot.cube.decision import decide  # noqa: E402
from bgbot.errors import BgbotError, int_at_least, run_script, whole_number  # noqa: E402
from bgbot.evaluation import checkpoint, search, specialists  # noqa: E402
from bgbot.evaluation.classes import efficiency_for  # noqa: E402
from bgbot.evaluation.evaluator import for_cube, position_probabilities  # noqa: E402
from bgbot.evaluation.prune import file_sha256  # noqa: E402
from bgbot.evaluation.specialists import evaluator_for  # noqa: E402
from bgbot.files import write_atomic  # noqa: E402
from bgbot.formats import positionid  # noqa: E402
from bgbot.rules.board import game_result, pip_counts  # noqa: E402
from bgbot.rules.movegen import generate_plays  # noqa: E402
from bgbot.rules.outcomes import check_probabilities, equity, flip_probabilities  # noqa: E402
from bgbot.rules.state import CubeState, MatchState  # noqa: E402
from training.rollout import ROLLOUT_KINDS, rollout_kind  # noqa: E402

SOURCE = ROOT / "tests" / "data" / "decision_source.txt"
SET = ROOT / "tests" / "data" / "decision_set.txt"
CLASS_NAMES = {1: "contact", 2: "crashed", 3: "race"}
QUOTAS = {"contact": 2000, "crashed": 1000, "race": 1000}
"""Checker-play decisions (positions with at least two legal plays for their roll) per class in a set made by
:func:`make_set`."""
SEED = 2026
KINDS = ("double", "take")
"""Cube decisions: doubling (no double / double) and take/pass."""
MONEY = MatchState(jacoby=False)


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it, else as given."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _ids(path: Path) -> list[str]:
    """The Position IDs of a positions file (one a line, ``#`` comments). Raises :class:`BgbotError` naming the file
    when it is missing or holds none."""
    try:
        text = path.read_text()
    except OSError as err:
        raise BgbotError(f"cannot read the positions file {str(path)!r}: {err.strerror}") from None
    ids = [s.split()[0] for s in text.splitlines() if s.strip() and not s.startswith("#")]
    if not ids:
        raise BgbotError(f"{str(path)!r} holds no position IDs")
    return ids


def make_set(
    source: Path = SOURCE, out: Path = SET, quotas: dict[str, int] | None = None, seed: int = SEED
) -> dict[str, dict[str, int]]:
    """Write the decision set ``out`` from the positions file ``source`` (GNU Backgammon self-play, one Position ID a
    line): unfinished positions in the source's order, each with a roll (``numpy.random.default_rng(seed)``, one roll
    per source line, so a position's roll does not depend on the quotas), taken while its class
    (:func:`bgbot.evaluation.specialists.classify`) has fewer than ``quotas[class]`` checker-play decisions (positions
    with at least two legal plays for the roll); the ones with fewer met on the way are kept for the cube decisions.
    Written atomically, one ``ID d1 d2`` line per position under a header that records the counts and the command.

    Returns:
        ``{"positions": {class: count}, "checker_play": {class: count}}``.

    Raises:
        BgbotError: the source cannot be read, holds no IDs, or runs out before a class has its quota.
    """
    quotas = dict(QUOTAS if quotas is None else quotas)
    ids = _ids(source)
    pos = np.stack([positionid.decode(i) for i in ids])
    live = game_result(pos) == 0
    classes = specialists.classify(pos)
    dice = np.random.default_rng(seed).integers(1, 7, size=(len(ids), 2)).astype(np.int8)
    positions = dict.fromkeys(quotas, 0)
    decisions = dict.fromkeys(quotas, 0)
    chosen = []
    for i in np.flatnonzero(live):
        name = CLASS_NAMES[int(classes[i])]
        if decisions[name] >= quotas[name]:
            if all(decisions[k] >= quotas[k] for k in quotas):
                break
            continue
        chosen.append(i)
        positions[name] += 1
        decisions[name] += len(generate_plays(pos[i : i + 1], dice[i : i + 1]).afterstates) >= 2
    short = {k: f"{decisions[k]} of {quotas[k]}" for k in quotas if decisions[k] < quotas[k]}
    if short:
        raise BgbotError(
            f"{_shown(source)} ({len(ids)} positions) runs out before the set is full: checker-play decisions "
            + ", ".join(f"{k} {v}" for k, v in short.items())
            + "; make a longer source (scripts/make_bench_positions.py --positions N --out PATH)"
        )
    command = "python scripts/bench_decisions.py --make-set"
    if source.resolve() != SOURCE:
        command += f" --source {_shown(source)}"
    if out.resolve() != SET:
        command += f" --set {_shown(out)}"
    for k in quotas:
        if quotas[k] != QUOTAS[k]:
            command += f" --{k}-decisions {quotas[k]}"
    counts = ", ".join(f"{k} {positions[k]} ({decisions[k]})" for k in quotas)
    lines = [
        f"# {len(chosen)} positions of {source.name} (GNU Backgammon 0-ply self-play) in its order, taken by class "
        f"until each holds its checker-play decisions (at least two legal plays for the roll); positions (decisions): "
        f"{counts}",
        f"# rolls drawn with seed {seed}, one per source line; made by: {command}",
    ]
    lines += [f"{ids[i]} {dice[i, 0]} {dice[i, 1]}" for i in chosen]
    write_atomic(out, "\n".join(lines) + "\n")
    return {"positions": positions, "checker_play": decisions}


def load_set(path: Path = SET, n: int | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The first ``n`` (all when None) positions of the set ``path``: IDs, positions ``(N, 26)`` int8 and their rolls
    ``(N, 2)`` int8. Raises :class:`BgbotError` naming the file when it is missing, empty or has a bad line."""
    try:
        text = path.read_text()
    except OSError as err:
        raise BgbotError(f"cannot read the decision set {str(path)!r}: {err.strerror}") from None
    rows = [s.split() for s in text.splitlines() if s.strip() and not s.startswith("#")][:n]
    if not rows:
        raise BgbotError(f"the decision set {str(path)!r} holds no positions")
    bad = next((" ".join(r) for r in rows if len(r) != 3 or not (r[1] in "123456" and r[2] in "123456")), None)
    if bad is not None:
        raise BgbotError(f"the decision set {str(path)!r} has a line that is not 'ID d1 d2' with dice 1..6: {bad!r}")
    try:
        pos = np.stack([positionid.decode(r[0]) for r in rows])
    except BgbotError as err:
        raise BgbotError(f"the decision set {str(path)!r}: {err}") from None
    ids = [r[0] for r in rows]
    dice = np.array([[int(r[1]), int(r[2])] for r in rows], dtype=np.int8)
    return ids, pos, dice


def _mover_equity_gnubg(gnubg_nn, afterstates: np.ndarray, ply: int) -> np.ndarray:
    """Cubeless money equity for the mover of afterstates (opponent on roll), GNU Backgammon at ``ply``."""
    probs = np.array([gnubg_nn.probabilities(to_gnubg(a), ply) for a in afterstates], dtype=np.float64)
    return equity(flip_probabilities(probs.reshape(-1, 5)))


def _read_cache(path: Path) -> dict:
    """The referee cache at ``path``: a JSON object. Raises :class:`BgbotError` naming the file when it is not one."""
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BgbotError(
            f"the referee cache {str(path)!r} is not JSON ({err}); delete it or give another --cache"
        ) from None
    if not isinstance(data, dict):
        raise BgbotError(f"the referee cache {str(path)!r} is not a JSON object; delete it or give another --cache")
    return data


class Referee:
    """GNU Backgammon 2-ply values of resulting positions and positions, cached by position ID; the cache file also
    holds the model's own rollouts of cube positions (:func:`cube_rollouts`, :func:`rollout_key`)."""

    def __init__(self, gnubg_nn, cache: Path | None):
        self.g = gnubg_nn
        self.path = cache
        self.data = _read_cache(cache) if cache and cache.exists() else {}
        self.calls = 0

    def after(self, afterstates: np.ndarray) -> np.ndarray:
        out = np.empty(len(afterstates))
        for i, a in enumerate(afterstates):
            key = "a" + positionid.encode(a)
            if key not in self.data:
                p = np.array(self.g.probabilities(to_gnubg(a), 2), dtype=np.float64)[None]
                self.data[key] = float(equity(flip_probabilities(p))[0])
                self.calls += 1
            out[i] = self.data[key]
        return out

    def probs(self, position: np.ndarray) -> np.ndarray:
        key = "p" + positionid.encode(position)
        if key not in self.data:
            self.data[key] = [float(v) for v in self.g.probabilities(to_gnubg(position), 2)]
            self.calls += 1
        return np.array(self.data[key])[None]

    def save(self) -> None:
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(self.data))


def rollout_settings(kind: str, seed: int = 0) -> RolloutSettings:
    """The settings of the rollout kind ``kind`` (:func:`training.rollout.rollout_kind`: ``vr72``, ``plain324``,
    ``vr108-h8``) with ``seed``: 0-ply cubeless trials of the model's checker play, quasi-random dice, exact bear-off
    databases.

    Raises:
        BgbotError: ``kind`` is no rollout kind's name, or its trials or horizon are out of range (one line naming
            the kind and the form).
    """
    try:
        settings = rollout_kind(kind, seed)
    except RolloutError as err:
        raise BgbotError(f"rollout kind {kind!r}: {err}") from None
    if settings is None:
        raise BgbotError(f"unknown rollout kind {kind!r}: {ROLLOUT_KINDS}, e.g. vr72, plain324, vr108-h8")
    return settings


def _kind_argument(text: str) -> str:
    """argparse ``type=`` of ``--cube-rollout``: a rollout kind's name, else argparse's usage error (status 2)."""
    try:
        rollout_settings(text)
    except BgbotError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its finished child processes so far."""
    return sum(
        r.ru_utime + r.ru_stime
        for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


@dataclass
class CubeRollouts:
    """The model's own cubeless rollouts of the cube positions.

    Attributes:
        mean: ``(N, 5)`` float64 the side on roll's probabilities as rolled out (a variance-reduced mean may be
            inconsistent, e.g. ``lbg > lg``: :func:`bgbot.rules.outcomes.check_probabilities` with ``repair``
            makes them consistent before a cube decision).
        se: ``(N, 5)`` float64 their standard errors over the trials.
        made: positions rolled out in this call (the others came from the cache).
        cpu_seconds: CPU seconds of those rollouts (this process and its worker processes).
        model_sha256: the first 16 hex digits of the model file's SHA-256 (part of the cache key).
    """

    mean: np.ndarray
    se: np.ndarray
    made: int
    cpu_seconds: float
    model_sha256: str


def rollout_key(kind: str, seed: int, model_sha256: str, position: np.ndarray) -> str:
    """The referee cache's key of a position's rollout: it names everything the rollout depends on, the kind, the
    seed, the model file (the first 16 hex digits of its SHA-256) and the position (its Position ID)."""
    return f"r|{kind}|{seed}|{model_sha256[:16]}|{positionid.encode(position)}"


def cube_rollouts(
    ref: Referee, positions: np.ndarray, kind: str, seed: int, model: str, evaluator, workers: int = 1
) -> CubeRollouts:
    """Cubeless rollouts (``kind``, ``seed``: :func:`rollout_settings`) of ``positions`` ``(N, 26)`` int8 (side on
    roll) by ``evaluator``, the model file ``model``'s checker-play evaluator (or that path itself), on ``workers``
    processes, cached in ``ref``'s cache (:func:`rollout_key`: 5 means then 5 standard errors a position): the
    positions not cached are rolled out together in one call and the cache is saved at once.

    A position's result does not depend on ``workers`` (the work units are a function of the settings and the number
    of positions, :func:`bgbot.arena.rollout.chunk_tasks`) nor, but for the last bits of the net's outputs, on the
    other positions rolled out with it (trial ``i``'s dice are a hash of the seed, ``i`` and the turn).

    Raises:
        BgbotError: a bad kind, or a cached rollout that is not 10 numbers (naming the cache).
    """
    settings = rollout_settings(kind, seed)
    sha = file_sha256(model)[:16]
    keys = [rollout_key(kind, seed, sha, p) for p in positions]
    todo: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k not in ref.data:
            todo.setdefault(k, i)  # a position met twice is rolled out once
    cpu = 0.0
    if todo:
        before = _cpu_seconds()
        mean, se = rollout_positions(positions[list(todo.values())], evaluator, settings, workers)
        cpu = _cpu_seconds() - before
        for k, m, e in zip(todo, mean, se, strict=True):
            ref.data[k] = [float(v) for v in (*m, *e)]
        ref.save()
    rows = [ref.data[k] for k in keys]
    bad = next((k for k, r in zip(keys, rows) if not (isinstance(r, list) and len(r) == 10)), None)
    if bad is not None:
        raise BgbotError(
            f"the referee cache {str(ref.path)!r} holds {bad!r} as something other than 10 numbers; delete the cache "
            "or give another --cache"
        )
    got = np.array(rows, dtype=np.float64).reshape(-1, 10)
    return CubeRollouts(got[:, :5], got[:, 5:], len(todo), cpu, sha)


def _equity_gap(a: np.ndarray, b: np.ndarray) -> dict:
    """Cubeless money equity of probabilities ``a`` less that of ``b`` (both ``(N, 5)``): ``rmse`` (root mean square)
    and ``bias`` (mean); both None when N is 0."""
    if not len(a):
        return {"rmse": None, "bias": None}
    d = equity(np.asarray(a, dtype=np.float64)) - equity(np.asarray(b, dtype=np.float64))
    return {"rmse": float(np.sqrt(np.mean(d**2))), "bias": float(d.mean())}


def _summary(errors: dict[str, list[float]]) -> dict:
    out = {}
    for k, v in errors.items():
        a = np.asarray(v, dtype=np.float64)
        out[k] = {
            "decisions": len(a),
            "mean_millipoints": float(a.mean() * 1000) if len(a) else None,
            "ci95_millipoints": float(1.96 * a.std(ddof=1) / np.sqrt(len(a)) * 1000) if len(a) > 1 else None,
            "error_rate": float((a > 1e-9).mean()) if len(a) else None,
        }
    return out


def _ratios(model: dict[str, list[float]], anchor: dict[str, list[float]]) -> dict:
    """Per class (and ``all``): the model's mean error over the anchor's on the same decisions, with its 95% paired
    bootstrap interval (:func:`bgbot.arena.stats.ratio_interval`); ``None`` for a class with fewer than two decisions,
    and an unbounded end (+inf) written as ``None``."""
    out: dict = {}
    for k in model:
        if len(model[k]) < 2:
            out[k] = None
            continue
        r = ratio_interval(np.asarray(model[k]), np.asarray(anchor[k]))
        out[k] = {key: (v if not isinstance(v, float) or np.isfinite(v) else None) for key, v in r.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    ap.add_argument(
        "--ply", type=whole_number, choices=range(search.MAX_PLIES + 1), default=0, help="the model's lookahead"
    )
    ap.add_argument(
        "--cube-ply",
        type=whole_number,
        choices=range(search.MAX_PLIES + 1),
        default=0,
        help="lookahead of the model's cubeless probabilities for cube decisions (bgbot cube --ply)",
    )
    ap.add_argument(
        "--cube-search",
        action="store_true",
        help="the model's cube decisions by cubeful search at --cube-ply (bgbot cube --cube-search): Janowski's "
        "cubeful equities at the leaves, averaged over the rolls, instead of its --cube-ply probabilities through "
        "Janowski once",
    )
    ap.add_argument(
        "--cube-rollout",
        type=_kind_argument,
        default=None,
        metavar="KIND",
        help="a third cube contestant, bgbot_rollout: the model's own cubeless rollouts of each cube position (a "
        "rollout kind: plainT, vrT, plainT-hH or vrT-hH, e.g. vr72, about 2 CPU-s a position) through the same "
        "Janowski decision: the ceiling of cube nets fitted to such rollouts; cached in --cache",
    )
    ap.add_argument("--rollout-seed", type=int_at_least(0), default=1, help="--cube-rollout: the rollouts' seed")
    ap.add_argument(
        "--workers", type=int_at_least(1), default=1, help="--cube-rollout: processes (results do not depend on it)"
    )
    ap.add_argument("--set", default=str(SET), help="the decision set (default: tests/data/decision_set.txt)")
    ap.add_argument("--positions", type=int_at_least(1), default=None, help="the first N of the set (default: all)")
    ap.add_argument(
        "--classes",
        nargs="+",
        choices=list(CLASS_NAMES.values()),
        default=None,
        help="only the positions of these classes among the first --positions (default: all)",
    )
    ap.add_argument(
        "--cache",
        default=str(ROOT / "runs" / "bench_decisions_cache.json"),
        help="referee cache (and --cube-rollout's rollouts)",
    )
    ap.add_argument("--make-set", action="store_true", help="(re)write the set --set from --source and exit")
    ap.add_argument(
        "--source", default=str(SOURCE), help="--make-set: the positions (default: tests/data/decision_source.txt)"
    )
    for name, quota in QUOTAS.items():
        ap.add_argument(
            f"--{name}-decisions",
            type=int_at_least(0),
            default=quota,
            help=f"--make-set: {name} checker-play decisions (at least two legal plays) in the set",
        )
    ap.add_argument(
        "--filter",
        default=None,
        help="a move filter's net (bgbot.evaluation.prune): the model at 0-ply through it is a third checker-play "
        "contestant, bgbot_filtered, and filter_minus_exact its paired errors less the model's (0-ply only)",
    )
    ap.add_argument("--keep", type=int_at_least(1), default=4, help="the filter's plays always kept")
    ap.add_argument("--extra", type=int_at_least(0), default=10, help="the filter's further plays within --margin")
    ap.add_argument("--margin", type=float, default=0.3, help="equity margin of the --extra plays")
    args = ap.parse_args()
    if args.filter and args.ply != 0:
        ap.error("--filter compares 0-ply play: leave --ply at 0")
    set_path = Path(args.set)
    if args.make_set:
        quotas = {name: getattr(args, f"{name}_decisions") for name in QUOTAS}
        counts = make_set(Path(args.source), set_path, quotas)
        print(json.dumps({"written": _shown(set_path), **counts}))
        return
    import gnubg_nn

    model = args.model or str(DEFAULT_MODEL)
    net, meta = checkpoint.load(model)
    ev = evaluator_for(net)
    cube_ev = for_cube(ev)  # the model's cube nets where it has them
    ref = Referee(gnubg_nn, Path(args.cache) if args.cache else None)
    ids, pos, dice = load_set(set_path, args.positions)
    classes = specialists.classify(pos)
    if args.classes:
        read = len(pos)
        chosen_rows = np.flatnonzero(np.isin(classes, [c for c, n in CLASS_NAMES.items() if n in args.classes]))
        ids, pos, dice, classes = (
            [ids[i] for i in chosen_rows],
            pos[chosen_rows],
            dice[chosen_rows],
            classes[chosen_rows],
        )
        if not len(pos):
            raise BgbotError(
                f"no {' or '.join(args.classes)} position among the first {read} of {_shown(set_path)}: "
                "nothing to measure (raise --positions or drop --classes)"
            )
    t0 = time.perf_counter()
    # cube decisions: where GNU Backgammon 0-ply gives the side on roll 55-97% wins
    g0_cube = np.array([gnubg_nn.probabilities(to_gnubg(p), 0) for p in pos], dtype=np.float64).reshape(-1, 5)
    cube_rows = np.flatnonzero((g0_cube[:, 0] >= 0.55) & (g0_cube[:, 0] <= 0.97))
    rolled = None
    if args.cube_rollout:
        rolled = cube_rollouts(
            ref,
            pos[cube_rows],
            args.cube_rollout,
            args.rollout_seed,
            model,
            ev if args.workers == 1 else model,  # a path: each worker loads the same evaluator once
            args.workers,
        )
        rollout_p = check_probabilities(rolled.mean, repair=True)
    cube_index = {int(i): j for j, i in enumerate(cube_rows)}
    net_p = np.zeros((len(cube_rows), 5))  # the cube nets' --cube-ply probabilities
    ref_p = np.zeros((len(cube_rows), 5))
    contestants = ("bgbot", "gnubg0", *(("bgbot_rollout",) if rolled is not None else ()))
    play_err: dict[str, dict[str, list[float]]] = {"bgbot": {"all": []}, "gnubg0": {"all": []}}
    pruned = None
    if args.filter:
        from bgbot.evaluation import prune
        from bgbot.evaluation.evaluator import best_plays

        pruned = prune.PrunedEvaluator(
            ev, prune.MoveFilter(prune.load(args.filter), args.keep, args.extra, args.margin)
        )
        play_err["bgbot_filtered"] = {"all": []}
    cube_err: dict[str, dict[str, list[float]]] = {
        who: {f"{kind}{suffix}": [] for suffix in ("", *(f"_{c}" for c in CLASS_NAMES.values())) for kind in KINDS}
        for who in contestants
    }
    for who in play_err:
        for name in CLASS_NAMES.values():
            play_err[who][name] = []
    for i in range(len(pos)):
        cname = CLASS_NAMES.get(int(classes[i]), "race")
        plays = generate_plays(pos[i : i + 1], dice[i : i + 1])
        after = plays.afterstates
        if len(after) >= 2:
            if args.ply == 0:
                ours = int(np.argmax(equity(flip_probabilities(position_probabilities(ev, after)))))
            else:
                _, chosen = search.choose(ev, pos[i : i + 1], dice[i : i + 1], args.ply)
                ours = int(chosen[0])
            g0 = _mover_equity_gnubg(gnubg_nn, after, 0)
            theirs = int(np.argmax(g0))
            keep = search.filter_candidates(g0, np.zeros(len(after), dtype=np.int64))
            keep[[ours, theirs]] = True
            chosen = {"bgbot": ours, "gnubg0": theirs}
            if pruned is not None:
                chosen["bgbot_filtered"] = int(best_plays(pruned, pos[i : i + 1], dice[i : i + 1])[1][0])
                keep[chosen["bgbot_filtered"]] = True
            rows = np.flatnonzero(keep)
            vals = dict(zip(rows.tolist(), ref.after(after[rows]).tolist()))
            best = max(vals.values())
            for who, row in chosen.items():
                e = best - vals[row]
                play_err[who]["all"].append(e)
                play_err[who][cname].append(e)
        # cube, money, centred
        if i in cube_index:
            j = cube_index[i]
            x = efficiency_for("contact" if classes[i] in (1, 2) else "race", int(pip_counts(pos[i])[0]))
            rp = ref.probs(pos[i])
            ref_p[j] = rp[0]
            r = decide(rp, CubeState(), MONEY, x)
            r_double = min(r.equities["double_take"], r.equities["double_pass"]) > r.equities["no_double"]
            if args.cube_ply == 0:
                net_p[j] = position_probabilities(cube_ev, pos[i : i + 1])[0]
            elif not args.cube_search or rolled is not None:
                net_p[j] = flip_probabilities(search.afterstate_values(cube_ev, pos[i : i + 1], args.cube_ply))[0]
            if args.cube_search:
                net_cube = cubesearch.decide_searched(ev, pos[i : i + 1], CubeState(), MONEY, args.cube_ply)[0]
            else:
                net_cube = decide(net_p[j : j + 1], CubeState(), MONEY, x)
            decisions = [("bgbot", net_cube), ("gnubg0", decide(g0_cube[i : i + 1], CubeState(), MONEY, x))]
            if rolled is not None:
                decisions.append(("bgbot_rollout", decide(rollout_p[j : j + 1], CubeState(), MONEY, x)))
            for who, c in decisions:
                doubles = min(c.equities["double_take"], c.equities["double_pass"]) > c.equities["no_double"]
                e = r.errors["double"] if doubles else r.errors["no_double"]
                cube_err[who]["double"].append(e)
                cube_err[who][f"double_{cname}"].append(e)
                if r_double:
                    takes = c.equities["double_take"] < c.equities["double_pass"]
                    e = r.errors["take"] if takes else r.errors["pass"]
                    cube_err[who]["take"].append(e)
                    cube_err[who][f"take_{cname}"].append(e)
        if i % 100 == 99:
            ref.save()
    ref.save()
    out = {
        "model": model,
        "model_games_trained": meta.games_trained,
        "ply": args.ply,
        "cube_ply": args.cube_ply,
        "cube_search": args.cube_search,
        "positions": len(pos),
        "classes": args.classes or list(CLASS_NAMES.values()),
        "set": _shown(set_path),
        "referee": "gnubg_nn.probabilities(board, 2) (GNU Backgammon 2-ply), cubeless money; cube: its probabilities "
        "through bgbot.cube.decision.decide, money, cube centred, Jacoby off",
        "checker_play": {who: _summary(v) for who, v in play_err.items()},
        "cube": {who: _summary(v) for who, v in cube_err.items()},
        "referee_calls": ref.calls,
        "seconds": time.perf_counter() - t0,
    }
    if pruned is not None:
        out["filter"] = {"net": args.filter, "keep": args.keep, "extra": args.extra, "margin": args.margin}
        out["filter_minus_exact"] = _summary(
            {k: np.subtract(play_err["bgbot_filtered"][k], play_err["bgbot"][k]) for k in play_err["bgbot"]}
        )
    if rolled is not None:
        out["cube_rollout"] = {
            "kind": args.cube_rollout,
            "seed": args.rollout_seed,
            "workers": args.workers,
            "model_sha256": rolled.model_sha256,
            "positions": len(cube_rows),
            "rollouts_made": rolled.made,
            "cpu_seconds": rolled.cpu_seconds,
            "cpu_seconds_per_rollout": rolled.cpu_seconds / rolled.made if rolled.made else None,
            "win_se_mean": float(rolled.se[:, 0].mean()) if len(cube_rows) else None,
            "repaired": int(np.sum(np.any(np.abs(rollout_p - rolled.mean) > 0, axis=1))),
            "cube_ply": args.cube_ply,
            "equity": {
                "rollout_minus_referee": _equity_gap(rollout_p, ref_p),
                "cube_nets_minus_referee": _equity_gap(net_p, ref_p),
                "cube_nets_minus_rollout": _equity_gap(net_p, rollout_p),
            },
        }
    out["checker_play_ratio_vs_gnubg0"] = _ratios(play_err["bgbot"], play_err["gnubg0"])
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    run_script(main)
