"""Rollouts: positions played out many times by the engine, averaged, with variance reduction and quasi-random dice.

A *trial* is one game started from a given position (the side on roll in seat 0) and advanced by the one game engine,
:func:`bgbot.arena.engine.play_ply`, together with every other trial of its work unit: each ply is one batched
move generation and one evaluator call for all trials in flight; there is no Python loop over trials or checkers.
The side whose value the rollout estimates is the *root*: the side on roll in a position rollout, the side that
made the play in a checker-play rollout (whose trials start from the afterstate, the opponent on roll).

**Dice** (:class:`RolloutDice`). Trial ``i`` rolls, at its ``t``-th turn (``t = 0`` for the first roll of the
trial), the dice of a counter-based hash of ``(seed, i, t)`` (:func:`bgbot.rules.dice.hash_words`), so a trial's
dice never depend on the batch or the worker, and every candidate play of a checker-play rollout meets the same dice
in trial ``i`` (common random numbers: differences between plays are measured more precisely than the plays).
*Quasi-random dice* (default), as GNU Backgammon's ``QuasiRandomDice`` (rollout.c): when the number of trials is a
multiple of 36, the first roll of trial ``i`` is the ``i mod 36``-th of the 36 ordered rolls, and when it is a
multiple of 1296 the second roll is the ``(i div 36) mod 36``-th, so the first two rolls run through all 36 x 36
sequences exactly once per 1296 trials; a seeded permutation of the 36 rolls makes them depend on the seed. Unlike
GNU Backgammon, the opening position rolled out before the roll is not special-cased (its first roll may be a double).

**Variance reduction** (GNU Backgammon's ``BasicCubefulRollout`` in rollout.c, luck estimation): before every
half-move, for each of the 21 rolls the best play at 0-ply is found and its afterstate valued at 0-ply (GNU
Backgammon values it at the rollout's ply minus one; at 0 and 1 ply that is 0-ply); the mean over the 36 rolls minus
the value after the roll actually drawn (the *luck* of the roll, in the root's perspective) is added to the trial's
result. The added terms have expectation zero whatever the players do, so the estimate stays unbiased, and they
cancel most of the dice's noise. At 0-ply the play of the drawn roll is the one already found (no second search).

**Ends of a trial.** A trial ends when its game ends (the result's exact probabilities), at ``truncate`` plies
(valued by the evaluator's 0-ply probabilities of the position, the side on roll), or, with ``databases`` on, as soon
as the side on roll faces a position that a bear-off database values exactly (GNU Backgammon's "truncate at two-sided
bear-off database"); where the databases are available (:mod:`bgbot.evaluation.bearoff`), ``databases=False`` also
switches them off inside the trial's evaluations (net-only players), for exactness tests.

**Move filter** (``move_filter``, 0-ply trials only, off by default). The players choose each play among the
candidates of the model's own move filter (:mod:`bgbot.evaluation.prune`: a small net ranks every play, the model
evaluates the few best), as self-play does, instead of among all legal plays; with variance reduction each of the 21
rolls' best play is also the best candidate (the luck terms keep their zero expectation: any value of (position,
roll) does). The dice stay those of the trial, but where the filter drops the model's best play the trial's game
differs, so the estimate is that of a slightly different player (its bias is measured by ``scripts/filter_bias.py``).
Off, every play is evaluated, even by an evaluator that carries a filter.

**Work units.** Trials are cut into fixed chunks (:func:`chunk_tasks`, a function of the settings and the number of
starts, never of the worker count: the batches the net sees, hence its floating-point results, are the same for any
number of workers, with or without Ray), each chunk holding the same trial range of a block of start positions (at
most :data:`CHUNK_GAMES` games in flight): :data:`CHUNK_TRIALS` trials of each start, or, for plain, untruncated,
cubeless trials of few starts, more (a ply's batch is then hundreds of games, not 72, which more than doubles their
speed; their results, the games' outcomes, do not depend on the chunks unless a play is decided by the last bit of an
equity). Per-trial results are kept and concatenated in trial order, so a rollout for a seed is bit-identical however
it was run.

**Cubeful rollouts** (``cube=True``, money play only): the cube is played inside every trial by the engine's cube
phase (each side doubles, takes and passes by :mod:`bgbot.cube` from its own probabilities at the rollout's ply, as
``bgbot cube --ply N`` decides: Janowski's cubeful equities of the N-ply cubeless probabilities); a trial's cubeful value is the points it won (cube and Jacoby rule included) divided by the position's
cube; a truncated (or database-stopped) trial is valued by Janowski's cubeful money equity of the position at that
point (:func:`bgbot.cube.janowski.money_cubeful`, cube efficiency by position class), times the cube. A position's
cube decision (:func:`cube_rollout`) rolls out No double and Double/Take together (the same dice in each trial), as
GNU Backgammon does; in a rollout of plays the opponent may double at its first turn. Whether the proper action
is significant at the trials run is a z-test of each decisive difference (double or not, take or pass) against its
paired standard error (:func:`cube_significance`). Variance reduction adjusts the cubeful
equity too, as GNU Backgammon does: each roll's luck is also measured in Janowski's cubeful equity after the best
0-ply play of every roll (:func:`_cubeful_luck`, the cube as it is at that turn). Cubeful rollouts at a match score
are not implemented.

**Significance.** A difference between two plays (:func:`rank_candidates`) or two cube actions
(:func:`cube_significance`) is significant when it exceeds 1.96 of its paired standard error: a normal approximation
of the mean per-trial difference, which a few dozen trials do not support (their differences are skewed: most
trials differ little, a few by a gammon). Below :data:`MIN_SIGNIFICANCE_TRIALS` trials nothing is called significant
and ``significance_note`` says "too few trials to judge" (:func:`significance_note`).

**Interruption.** Under :func:`bgbot.arena.distributed.interrupt_signals` (``bgbot rollout``), SIGINT or SIGTERM stops
the work (pool workers included) and raises :class:`RolloutInterrupted` carrying the per-trial results of the whole
work units finished for every start: the estimates of those trials, with their standard errors, are the partial
result. A unit run in this process takes the signal at the start of its next ply
(:func:`bgbot.arena.distributed.safe_point`), never inside the evaluator's or a library's code.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bgbot.arena import ranking
from bgbot.arena.distributed import Interrupted, safe_point
from bgbot.arena.engine import CubePhase, CubeRules, Table, efficiencies, game_value, play_ply
from bgbot.cube.janowski import money_cubeful
from bgbot.errors import BgbotError, is_int
from bgbot.evaluation import search
from bgbot.evaluation.evaluator import (
    PositionEvaluator,
    afterstate_probabilities,
    best_plays,
    for_cube,
    position_probabilities,
)
from bgbot.evaluation.selection import segment_argmax
from bgbot.formats import notation, positionid
from bgbot.formats.plays import legal_plays
from bgbot.rules.board import flip, game_result, validate
from bgbot.rules.dice import hash_words
from bgbot.rules.movegen import ROLL_WEIGHTS, ROLLS, generate_all_rolls, position_keys
from bgbot.rules.outcomes import equity, flip_probabilities

__all__ = [
    "CHUNK_TRIALS",
    "MAX_TRIALS",
    "RolloutError",
    "RolloutInterrupted",
    "RolloutSettings",
    "RolloutDice",
    "Estimate",
    "Candidate",
    "play_chunk",
    "chunk_tasks",
    "players_evaluator",
    "RolloutUnit",
    "run_chunk",
    "rollout_positions",
    "candidates",
    "rollout_plays",
    "paired_difference",
    "rank_candidates",
    "cube_rollout",
    "cube_result",
    "taker_answer",
    "cube_significance",
    "MIN_SIGNIFICANCE_TRIALS",
    "significance_note",
    "se_excludes_truncation_bias",
]

CHUNK_TRIALS = 72
"""Trials per work unit (of each start position in it): 18 units for 1296 trials of up to 28 candidates."""
CHUNK_GAMES = 2048
"""Most games in flight in one work unit (bounds memory: a ply's plays of all 21 rolls of every game)."""
WHOLE_GAME_UNITS = 4
"""Fewest work units that a rollout of whole-game trials of few starts is cut into (:func:`chunk_tasks`)."""
WHOLE_GAME_TRIALS = 1296
"""Most trials of one start in a work unit of whole-game trials (the 36 x 36 strata of the first two rolls)."""
MAX_TRIALS = 10_000_000
"""Most trials per rollout (per-trial results are kept in memory, 40 bytes a trial and candidate)."""
MIN_TRIALS = 2
"""Fewest trials: a standard error needs two."""
MIN_SIGNIFICANCE_TRIALS = 144
"""Fewest trials from which a difference is called significant (module docstring, "Significance"): two work units
(:data:`CHUNK_TRIALS`), four passes of the quasi-random first roll through the 36 rolls."""
MAX_TRUNCATE = 10_000
MAX_SEED = 2**63 - 1
ROLLOUT_KEY = 0x526F6C6C  # "Roll": keeps rollout dice apart from tournament dice of the same seed

_ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
for _j, (_a, _b) in enumerate(ROLLS):
    _ROLL_INDEX[_a, _b] = _ROLL_INDEX[_b, _a] = _j
_ORDERED = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)  # (36, 2) ordered rolls
_DIFF_FLIP = np.array([0, 3, 4, 1, 2])


class RolloutError(BgbotError):
    """Bad rollout settings (trial counts, truncation, seed), unknown or illegal plays, no candidates."""


@dataclass(frozen=True)
class RolloutSettings:
    """How a rollout is played (see the module docstring).

    Attributes:
        trials: trials per start position, :data:`MIN_TRIALS` .. :data:`MAX_TRIALS`.
        truncate: plies per trial before it is valued by the evaluator; 0 = play to the end.
        plies: lookahead of the players inside the rollout (0 or 1; 2 is allowed but slow).
        seed: 0 .. 2**63 - 1.
        variance_reduction: luck estimation (on by default).
        quasi_random: stratified first two rolls.
        databases: stop at (and evaluate with) the exact bear-off databases where available.
        cube: cubeful money rollout (the cube played inside every trial; module docstring).
        jacoby: the Jacoby rule in cubeful trials.
        move_filter: 0-ply trials choose each play among the candidates of the model's own move filter
            (:mod:`bgbot.evaluation.prune`, :func:`bgbot.evaluation.prune.filter_for`) instead of among all legal
            plays, and variance reduction values each roll's best candidate: faster, and no longer exactly the
            model's 0-ply play (a trial may take a play the full evaluation would not; module docstring). Off: every
            play is evaluated, even by an evaluator that carries a filter. Needs ``plies=0``.

    Raises:
        RolloutError: a setting out of range. bgbot.evaluation.search.SearchError: ``plies`` not a whole number
            0 .. 2 (:func:`bgbot.evaluation.search.check_ply`).
    """

    trials: int = 1296
    truncate: int = 0
    plies: int = 0
    seed: int = 0
    variance_reduction: bool = True
    quasi_random: bool = True
    databases: bool = True
    cube: bool = False
    jacoby: bool = True
    move_filter: bool = False

    def __post_init__(self) -> None:
        if not is_int(self.trials) or not MIN_TRIALS <= self.trials <= MAX_TRIALS:
            raise RolloutError(f"trials must be an integer {MIN_TRIALS} .. {MAX_TRIALS}, got {self.trials!r}")
        if not is_int(self.truncate) or not 0 <= self.truncate <= MAX_TRUNCATE:
            raise RolloutError(
                f"truncate must be an integer 0 .. {MAX_TRUNCATE} plies (0 = none), got {self.truncate!r}"
            )
        search.check_ply(self.plies)
        if not is_int(self.seed) or not 0 <= self.seed <= MAX_SEED:
            raise RolloutError(f"seed must be an integer 0 .. 2**63 - 1, got {self.seed!r}")
        if self.move_filter and self.plies:
            raise RolloutError("the move filter is for 0-ply trials: it needs plies=0")

    def to_json(self) -> dict:
        """The settings as a dict of their fields; ``move_filter`` only when on (settings recorded before it existed,
        such as a campaign store's, compare equal)."""
        out = asdict(self)
        if not self.move_filter:
            del out["move_filter"]
        return out


# ----------------------------------------------------------------------------------------------------------- dice


class RolloutDice:
    """The dice of rollout trials, a :data:`bgbot.arena.engine.Roll` (module docstring).

    Args:
        settings: the seed, the trial count (stratification needs a multiple of 36 / 1296) and ``quasi_random``.
        trial: ``(G,)`` int64 the global trial number of each table slot.
    """

    def __init__(self, settings: RolloutSettings, trial: np.ndarray) -> None:
        self.seed = int(settings.seed)
        self.trial = np.asarray(trial, dtype=np.int64)
        quasi = settings.quasi_random
        self.first = quasi and settings.trials % 36 == 0
        self.second = quasi and settings.trials % 1296 == 0
        perm = hash_words(self.seed, ROLLOUT_KEY, np.arange(2)[:, None], np.arange(36)[None, :])  # (2, 36)
        self.perm = np.argsort(perm, axis=1, kind="stable")

    def roll(self, trial: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """Dice ``(K, 2)`` int8 of trials ``trial`` ``(K,)`` at their turns ``turn`` ``(K,)`` (0 = first roll)."""
        trial = np.asarray(trial, dtype=np.int64)
        turn = np.asarray(turn, dtype=np.int64)
        h = hash_words(self.seed, ROLLOUT_KEY, trial, turn)
        hi = (h >> np.uint64(32)) % np.uint64(6)
        lo = (h & np.uint64(0xFFFFFFFF)) % np.uint64(6)
        out = (np.stack([hi, lo], axis=-1) + 1).astype(np.int8)
        if self.first:
            m = turn == 0
            out[m] = _ORDERED[self.perm[0, trial[m] % 36]]
        if self.second:
            m = turn == 1
            out[m] = _ORDERED[self.perm[1, (trial[m] // 36) % 36]]
        return out

    def __call__(self, table: Table, idx: np.ndarray) -> np.ndarray:
        return self.roll(self.trial[idx], table.turn[idx])


# -------------------------------------------------------------------------------------------------- the players


class _RolloutPlayer:
    """The players inside a rollout (both sides): checker play at ``plies``, and, with variance reduction, the luck
    of every roll it is given (:attr:`luck` ``(N, 5)`` float64, the mover's perspective, of the last :meth:`choose`)."""

    name = "rollout"

    def __init__(self, evaluator: PositionEvaluator, plies: int, variance_reduction: bool) -> None:
        self.evaluator = evaluator
        self.plies = plies
        self.vr = variance_reduction
        self.luck = np.zeros((0, 5))
        self._cube_cache: tuple[np.ndarray, np.ndarray] | None = None
        self.roll_afterstates = np.zeros((0, 21, 26), dtype=np.int8)
        self.roll_values = np.zeros((0, 21, 5))
        self.position_of = np.zeros(0, dtype=np.int64)
        self.drawn = np.zeros(0, dtype=np.int64)

    def probabilities(self, positions: np.ndarray) -> np.ndarray:
        """Probabilities ``(N, 5)`` of the side on roll in ``positions`` ``(N, 26)`` at the rollout's ply, for the cube
        phase of cubeful trials: what ``bgbot cube --ply N`` decides from (:meth:`bgbot.api.Bot.evaluate`; 0-ply the
        evaluator's own, N-ply the mean over the 21 rolls of the best play valued at N - 1 ply). The doubler's and the
        taker's questions about the same positions (one player plays both sides) are answered by one search. The
        model's cube nets answer where it has them (:func:`bgbot.evaluation.evaluator.for_cube`)."""
        positions = np.asarray(positions, dtype=np.int8)
        cube_evaluator = for_cube(self.evaluator)
        if self.plies == 0:
            return position_probabilities(cube_evaluator, positions)
        if self._cube_cache is not None and np.array_equal(self._cube_cache[0], positions):
            return self._cube_cache[1]
        p = flip_probabilities(search.afterstate_values(cube_evaluator, positions, self.plies))
        self._cube_cache = (positions.copy(), p)
        return p

    def choose(self, positions: np.ndarray, dice: np.ndarray) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int8)
        if not self.vr:
            if self.plies == 0:
                plays, chosen, _ = best_plays(self.evaluator, positions, dice)
            else:
                plays, chosen = search.choose(self.evaluator, positions, dice, self.plies)
            return plays.afterstates[chosen]
        # Luck: the 21 rolls of each distinct position (trials often share positions early on).
        _, first, inv = np.unique(position_keys(positions), axis=0, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        u = positions[first]
        plays, _ = generate_all_rolls(u)  # parent u * 21 + r
        move_filter = getattr(self.evaluator, "move_filter", None)
        if move_filter is None:
            first_row, row_of = _distinct_rows(position_keys(plays.afterstates))  # ~10% of afterstates repeat
            probs = afterstate_probabilities(self.evaluator, plays.afterstates[first_row])[row_of]  # (M, 5) the mover's
            best = segment_argmax(equity(probs), plays.parent).reshape(len(u), 21)
            v = probs[best].astype(np.float64)  # (U, 21, 5)
        else:  # each roll's best play among the filter's candidates (RolloutSettings.move_filter)
            kept = np.flatnonzero(move_filter.candidates(np.repeat(u, 21, axis=0), plays))  # (M',) every parent's
            first_row, row_of = _distinct_rows(position_keys(plays.afterstates[kept]))
            probs = afterstate_probabilities(self.evaluator, plays.afterstates[kept[first_row]])[row_of]  # (M', 5)
            best_kept = segment_argmax(equity(probs), plays.parent[kept]).reshape(len(u), 21)
            v = probs[best_kept].astype(np.float64)  # (U, 21, 5)
            best = kept[best_kept]
        mean = np.einsum("urf,r->uf", v, ROLL_WEIGHTS)
        d = np.asarray(dice, dtype=np.int64)
        r = _ROLL_INDEX[d[:, 0], d[:, 1]]
        self.luck = mean[inv] - v[inv, r]
        # For the cubeful luck (play_chunk): each roll's best afterstate and its value, per distinct position.
        self.roll_afterstates = plays.afterstates[best]  # (U, 21, 26)
        self.roll_values, self.position_of, self.drawn = v, inv, r
        if self.plies == 0:
            return plays.afterstates[best[inv, r]]
        chosen_plays, chosen = search.choose(self.evaluator, positions, dice, self.plies)
        return chosen_plays.afterstates[chosen]


def _distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``keys`` ``(M, 2)`` uint64 (exact comparison of both words) -> ``(first, inverse)``: the row
    of each distinct key ``(U,)`` and each row's distinct key ``(M,)``, so ``keys[first][inverse] == keys``."""
    by_second = np.argsort(keys[:, 1], kind="stable")  # np.lexsort's order, by two stable sorts (about 1.4x faster)
    order = by_second[np.argsort(keys[by_second, 0], kind="stable")]
    ks = keys[order]
    new = np.ones(len(ks), dtype=bool)
    new[1:] = (ks[1:] != ks[:-1]).any(axis=1)
    inverse = np.empty(len(ks), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


# ------------------------------------------------------------------------------------------ databases and classes


@contextlib.contextmanager
def _databases(enabled: bool) -> Iterator[None]:
    """The evaluator's dispatch by class (exact bear-off databases) on or off for the duration, where it exists."""
    from bgbot.evaluation import evaluator as evmod

    setter = getattr(evmod, "set_class_dispatch", None)
    if setter is None:
        yield
        return
    previous = setter(enabled)
    try:
        yield
    finally:
        setter(previous)


def _exact_mask(positions: np.ndarray) -> np.ndarray:
    """Which positions ``(N, 26)`` a two-sided bear-off database values exactly, ``(N,)`` bool (all False where the
    databases are not available)."""
    classes = importlib.import_module("bgbot.evaluation.classes")
    classify = getattr(classes, "classify_batch", None)
    if classify is None or len(positions) == 0:
        return np.zeros(len(positions), dtype=bool)
    return classify(positions) == classes.BEAROFF_TS


def _to_root(p: np.ndarray, is_root: np.ndarray) -> np.ndarray:
    """Probabilities ``(N, 5)`` of one side -> the root's, flipping rows where ``is_root`` ``(N,)`` is False."""
    out = np.asarray(p, dtype=np.float64).copy()
    other = ~is_root
    out[other] = out[other][:, _DIFF_FLIP]
    out[other, 0] = 1.0 - out[other, 0]
    return out


def _diff_to_root(d: np.ndarray, is_root: np.ndarray) -> np.ndarray:
    """Differences of probabilities ``(N, 5)`` of one side -> the root's (the linear part of the flip)."""
    out = np.asarray(d, dtype=np.float64).copy()
    other = ~is_root
    out[other] = out[other][:, _DIFF_FLIP]
    out[other, 0] = -out[other, 0]
    return out


# ------------------------------------------------------------------------------------------------- one work unit


def play_chunk(
    evaluator: PositionEvaluator,
    starts: np.ndarray,
    root_on_roll: np.ndarray,
    lo: int,
    hi: int,
    settings: RolloutSettings,
    on_ply: Callable[[int], None] | None = None,
    cube_state: np.ndarray | None = None,
) -> np.ndarray:
    """Trials ``lo .. hi - 1`` of every start position, all advancing together through the engine.

    Args:
        evaluator: the players' position evaluator.
        starts: ``(K, 26)`` int8 start positions, the side on roll to move (not rolled yet).
        root_on_roll: ``(K,)`` bool, whether the side on roll at the start is the root (position rollouts) or its
            opponent (checker-play rollouts: the start is the afterstate of the root's play).
        lo, hi: the global trial numbers (they select the dice).
        settings: :class:`RolloutSettings`.
        on_ply: called with the number of trials still in flight after each ply (progress).
        cube_state: cubeful only, ``(K, 3)`` int64 per start: the cube value, its owner (-1 centred, 0 the side on roll
            at the start, 1 the other side) and the cube the cubeful equity is normalised to (the position's own).

    Returns:
        ``(K, hi - lo, 5)`` float64 (cubeful: ``(K, hi - lo, 6)``): each trial's result in the root's perspective
        (probabilities of win, win gammon, win backgammon, lose gammon, lose backgammon; with variance reduction the
        luck terms are included, so single trials may lie outside [0, 1]; cubeful: then the points won, normalised).
    """
    evaluator = players_evaluator(evaluator, settings.move_filter)
    starts = np.asarray(starts, dtype=np.int8).reshape(-1, 26)
    k, t = len(starts), hi - lo
    g = k * t
    start_of = np.repeat(np.arange(k), t)
    trial = np.tile(np.arange(lo, hi, dtype=np.int64), k)
    table = Table.create(g, seats=np.zeros((g, 2), dtype=np.int64))
    table.start(np.arange(g), seat=0, positions=starts[start_of])
    root_seat = np.where(np.asarray(root_on_roll, dtype=bool)[start_of], 0, 1)
    values = np.zeros((g, 5), dtype=np.float64)
    luck = np.zeros((g, 5), dtype=np.float64)
    dice = RolloutDice(settings, trial)
    player = _RolloutPlayer(evaluator, settings.plies, settings.variance_reduction)
    phase = None
    points = np.zeros(g, dtype=np.float64)
    points_luck = np.zeros(g, dtype=np.float64)
    base = np.ones(g, dtype=np.float64)
    if settings.cube:
        cs = np.asarray(cube_state if cube_state is not None else [[1, -1, 1]] * k, dtype=np.int64).reshape(k, 3)
        table.cube[:] = cs[start_of, 0]
        table.owner[:] = cs[start_of, 1]
        base = cs[start_of, 2].astype(np.float64)
        # Trials of a play start with the opponent on roll, who may double at once; a position rollout's first
        # cube decision (no double / double, take) is the one being rolled out.
        phase = CubePhase(CubeRules(0, settings.jacoby), first_ply=not bool(np.all(root_on_roll)))

    def on_end(tab: Table, idx: np.ndarray, winner_seat: np.ndarray, pts: np.ndarray, kind: np.ndarray) -> None:
        won = np.zeros((len(idx), 5), dtype=np.float64)
        won[:, 0] = 1.0
        won[:, 1] = kind >= 2
        won[:, 2] = kind >= 3
        values[idx] = _to_root(won, winner_seat == root_seat[idx])
        passed = kind == 0
        if passed.any():  # a double passed: the cubeless outputs are the doubler's evaluation (as GNU Backgammon)
            s_idx = idx[passed]
            p = position_probabilities(evaluator, tab.positions[s_idx])
            values[s_idx] = _to_root(p, tab.seat[s_idx] == root_seat[s_idx])
        points[idx] = np.where(winner_seat == root_seat[idx], pts, -pts) / base[idx]

    # A start whose game is already over (the afterstate of a play that bore off the last checker) is scored as the
    # game that ended on that play: each of its trials is the result, with no luck.
    over = game_result(table.positions)
    ended = np.flatnonzero(over != 0)
    if len(ended):
        kind = np.abs(over[ended]).astype(np.int64)
        winner = np.where(over[ended] > 0, table.seat[ended], 1 - table.seat[ended])
        value = kind if phase is None else game_value(kind, table.owner[ended], phase.rules)
        on_end(table, ended, winner, value * table.cube[ended], kind)
        table.active[ended] = False

    with _databases(settings.databases):
        while True:
            safe_point()  # a held SIGINT or SIGTERM stops the unit here (bgbot.arena.distributed.safe_point)
            idx = np.flatnonzero(table.active)
            if len(idx) == 0:
                break
            stop = np.zeros(len(idx), dtype=bool)
            if settings.truncate:
                stop |= table.turn[idx] >= settings.truncate
            if settings.databases:
                stop |= _exact_mask(table.positions[idx])
            if stop.any():
                s = idx[stop]
                p = position_probabilities(evaluator, table.positions[s])
                is_root = table.seat[s] == root_seat[s]
                values[s] = _to_root(p, is_root)
                if settings.cube:
                    cf = _cubeful_now(table, s, p, settings.jacoby)
                    points[s] = np.where(is_root, cf, -cf) / base[s]
                table.active[s] = False
                if not table.active.any():
                    break
            seat_before = table.seat.copy()
            # The luck is that of this ply's checker plays only: when the cube phase ends every game in flight (all
            # doubles passed), no play is chosen and the previous ply's luck must not be added again.
            player.luck = np.zeros((0, 5))
            ply = play_ply(table, dice, [player], phase, on_end)
            if settings.variance_reduction and len(ply.idx):
                luck[ply.idx] += _diff_to_root(player.luck, seat_before[ply.idx] == root_seat[ply.idx])
                if settings.cube:
                    mover = seat_before[ply.idx]
                    cf = _cubeful_luck(player, table.owner[ply.idx], mover, settings.jacoby) * table.cube[ply.idx]
                    points_luck[ply.idx] += np.where(mover == root_seat[ply.idx], cf, -cf) / base[ply.idx]
            if on_ply is not None:
                on_ply(int(table.active.sum()))
    out = values + luck
    if settings.cube:
        out = np.column_stack([out, points + points_luck])
    return out.reshape(k, t, out.shape[1])


def _cubeful_luck(player: _RolloutPlayer, owner: np.ndarray, mover: np.ndarray, jacoby: bool) -> np.ndarray:
    """The cubeful luck of the rolls of :meth:`_RolloutPlayer.choose`'s last call, ``(N,)`` float64 in the mover's
    cubeful money equity for a cube of 1: the mean over the 36 rolls of the Janowski cubeful equity
    (:func:`bgbot.cube.janowski.money_cubeful`, the position's cube efficiency) after each roll's best 0-ply play,
    minus that after the roll drawn, as GNU Backgammon's cubeful variance reduction (rollout.c). ``owner`` ``(N,)``
    the cube's owner seat (-1 centred), ``mover`` ``(N,)`` the mover's seat. Any value of (position, roll) keeps the
    terms' expectation zero, so the estimate stays unbiased."""
    after = player.roll_afterstates  # (U, 21, 26), the opponent on roll
    u = len(after)
    x = efficiencies(after.reshape(-1, 26)).reshape(u, 21)
    q = flip_probabilities(player.roll_values.reshape(-1, 5)).reshape(u, 21, 5)  # the opponent's, on roll
    pos = player.position_of
    rel = np.where(owner == -1, 0, np.where(owner == mover, -1, 1))  # the cube seen by the opponent
    cf = np.zeros((len(pos), 21), dtype=np.float64)
    for o in (-1, 0, 1):
        m = np.flatnonzero(rel == o)
        if len(m):
            xs: Any = x[pos[m]].reshape(-1)  # money_cubeful takes one efficiency per row
            cf[m] = -money_cubeful(q[pos[m]].reshape(-1, 5), o, jacoby, xs).reshape(len(m), 21)
    return cf @ ROLL_WEIGHTS - cf[np.arange(len(pos)), player.drawn]


def _cubeful_now(table: Table, idx: np.ndarray, p: np.ndarray, jacoby: bool) -> np.ndarray:
    """Cubeful money equity in points (cube included) of the side on roll in slots ``idx``, from its probabilities
    ``p`` ``(K, 5)``: :func:`bgbot.cube.janowski.money_cubeful` with the position's cube efficiency (truncated or
    database-stopped cubeful trials)."""
    seat, owner = table.seat[idx], table.owner[idx]
    rel = np.where(owner == -1, 0, np.where(owner == seat, 1, -1))
    x = efficiencies(table.positions[idx])
    q = np.asarray(p, dtype=np.float64)
    out = np.zeros(len(idx), dtype=np.float64)
    for o in (-1, 0, 1):
        m = rel == o
        if m.any():
            out[m] = money_cubeful(q[m], o, jacoby, x[m])
    return out * table.cube[idx]


def players_evaluator(evaluator: PositionEvaluator, move_filter: bool) -> PositionEvaluator:
    """The evaluator the players of a rollout use (:attr:`RolloutSettings.move_filter`): ``evaluator`` itself with the
    move filter it carries (a :class:`bgbot.evaluation.prune.PrunedEvaluator`) when ``move_filter`` is on, the
    evaluator it wraps (every play evaluated) when off.

    Raises:
        RolloutError: ``move_filter`` is on and ``evaluator`` carries no move filter.
    """
    from bgbot.evaluation.prune import PrunedEvaluator

    if move_filter:
        if getattr(evaluator, "move_filter", None) is None:
            raise RolloutError(
                "move_filter is on but the evaluator has no move filter: wrap it in "
                "bgbot.evaluation.prune.PrunedEvaluator (the model's own: prune.filter_for), or give a model path"
            )
        return evaluator
    while isinstance(evaluator, PrunedEvaluator):
        evaluator = evaluator.evaluator
    return evaluator


def whole_game_trials(settings: RolloutSettings) -> bool:
    """Whether each trial's result is its game's outcome (or an exact bear-off database value): plain trials (no
    variance reduction), not truncated, cubeless. No net output enters such a result except through the plays."""
    return not (settings.variance_reduction or settings.truncate or settings.cube)


def chunk_tasks(settings: RolloutSettings, n_starts: int = 1) -> list[tuple[int, int, int, int]]:
    """The fixed work units of a rollout of ``n_starts`` start positions: ``[(first start, end start, lo, hi), ...]``,
    a range of trials of a block of starts, at most :data:`CHUNK_GAMES` games a unit (a function of the settings and
    ``n_starts`` only, never of the workers).

    A unit holds :data:`CHUNK_TRIALS` trials of each start of its block, except for :func:`whole_game_trials` of few
    starts: their units take ``trials / WHOLE_GAME_UNITS`` trials of each start (a multiple of 36, at least
    :data:`CHUNK_TRIALS`, at most :data:`WHOLE_GAME_TRIALS` and what :data:`CHUNK_GAMES` allows), so that a ply's
    batch is large (a rollout of one position: 324 games in flight in each of 4 units of 1296 trials, not 72 in each
    of 18). The batches the net sees move the last bit of a few of its outputs (the vectorised functions' remainders),
    which can reach a whole-game trial's result only by deciding a play (a tie of equities to the last bit); a rollout
    of many starts (28 or more, the campaign's) keeps units of :data:`CHUNK_TRIALS` trials."""
    step = min(CHUNK_TRIALS, settings.trials)
    if whole_game_trials(settings):
        want = -(-settings.trials // WHOLE_GAME_UNITS)
        want = -(-want // 36) * 36  # whole blocks of 36: the first roll's strata
        cap = min(WHOLE_GAME_TRIALS, CHUNK_GAMES // max(n_starts, 1) // 36 * 36)
        step = min(settings.trials, max(step, min(want, cap)))
    block = max(1, CHUNK_GAMES // step)
    return [
        (s0, min(s0 + block, n_starts), lo, min(lo + step, settings.trials))
        for s0 in range(0, n_starts, block)
        for lo in range(0, settings.trials, step)
    ]


_EVALUATORS: dict = {}


def _evaluator(spec, move_filter: bool = False) -> PositionEvaluator:
    """An evaluator object as it is, or a checkpoint path loaded once per process (with ``move_filter``, wrapped in
    the model file's own move filter, :func:`bgbot.evaluation.prune.filter_for`).

    Raises:
        RolloutError: ``move_filter`` for a model file that has no filter of its own.
    """
    if not isinstance(spec, str):
        return spec
    key = (spec, move_filter)
    if key not in _EVALUATORS:
        from bgbot.evaluation import prune
        from bgbot.evaluation.checkpoint import load
        from bgbot.evaluation.specialists import evaluator_for

        net, _ = load(spec)
        ev: Any = evaluator_for(net)
        if move_filter:
            found = prune.filter_for(spec)
            if found is None:
                raise RolloutError(f"{spec} has no move filter of its own (prune/<name>.pt fitted to that file)")
            ev = prune.PrunedEvaluator(ev, found)
        _EVALUATORS[key] = ev
    return _EVALUATORS[key]


@dataclass(frozen=True)
class RolloutUnit:
    """One work unit of a rollout (:func:`chunk_tasks`), picklable for a process pool or Ray.

    Attributes:
        index: the unit's number, so that results say which unit they are as they arrive (partial results of an
            interrupted rollout).
        evaluator: a position evaluator, or a checkpoint path (loaded once per process).
        starts: ``(K, 26)`` int8 the unit's start positions; ``root`` ``(K,)`` bool whether each is seen by the root.
        lo, hi: the trials ``lo .. hi - 1`` of each start.
        settings: the rollout's :class:`RolloutSettings`.
        cube_state: ``(K,)`` int64 the cube of cubeful trials (None: cubeless).
    """

    index: int
    evaluator: PositionEvaluator | str
    starts: np.ndarray
    root: np.ndarray
    lo: int
    hi: int
    settings: RolloutSettings
    cube_state: np.ndarray | None = None


def run_chunk(unit: RolloutUnit) -> tuple[int, tuple[int, np.ndarray]]:
    """Play one :class:`RolloutUnit` -> ``(index, (lo, (K, hi - lo, 5 or 6) results))``."""
    results = play_chunk(
        _evaluator(unit.evaluator, unit.settings.move_filter),
        unit.starts,
        unit.root,
        unit.lo,
        unit.hi,
        unit.settings,
        cube_state=unit.cube_state,
    )
    return unit.index, (unit.lo, results)


# ------------------------------------------------------------------------------------------------- estimates


@dataclass
class Estimate:
    """A rollout's estimate for one start: ``mean`` ``(5,)`` probabilities (root's perspective), ``se`` ``(5,)`` their
    standard errors, ``equity`` cubeless money equity and ``equity_se``, ``trials``; ``results`` ``(T, 5)`` the
    per-trial results (for paired comparisons)."""

    mean: np.ndarray
    se: np.ndarray
    equity: float
    equity_se: float
    trials: int
    results: np.ndarray
    cubeful: float | None = None
    cubeful_se: float | None = None

    @classmethod
    def of(cls, results: np.ndarray) -> Estimate:
        """From per-trial results ``(T, 5)`` (cubeful ``(T, 6)``): means, and standard errors ``sd / sqrt(T)`` (sample
        sd, ddof 1)."""
        r = np.asarray(results, dtype=np.float64)
        n = len(r)
        eq = equity(r[:, :5])
        cf = r[:, 5] if r.shape[1] > 5 else None
        return cls(
            r[:, :5].mean(axis=0),
            r[:, :5].std(axis=0, ddof=1) / np.sqrt(n),
            float(eq.mean()),
            float(eq.std(ddof=1) / np.sqrt(n)),
            n,
            r,
            None if cf is None else float(cf.mean()),
            None if cf is None else float(cf.std(ddof=1) / np.sqrt(n)),
        )

    def values(self) -> np.ndarray:
        """The per-trial value the rollout ranks by, ``(T,)``: cubeful points when cubeful, else cubeless equity."""
        return self.results[:, 5] if self.cubeful is not None else equity(self.results[:, :5])

    @property
    def value(self) -> float:
        return self.cubeful if self.cubeful is not None else self.equity


def _run(
    spec,
    starts: np.ndarray,
    root: np.ndarray,
    settings: RolloutSettings,
    workers: int = 1,
    ray: str | None = None,
    progress: Callable | None = None,
    cube_state: np.ndarray | None = None,
) -> np.ndarray:
    """All chunks of a rollout, run in this process, a process pool or on Ray -> ``(K, trials, 5 or 6)``."""
    from bgbot.arena import distributed

    units = chunk_tasks(settings, len(starts))
    cs = None if cube_state is None else np.asarray(cube_state, dtype=np.int64)
    tasks = [
        RolloutUnit(i, spec, starts[a:b], root[a:b], lo, hi, settings, None if cs is None else cs[a:b])
        for i, (a, b, lo, hi) in enumerate(units)
    ]
    out = np.empty((len(starts), settings.trials, 6 if settings.cube else 5), dtype=np.float64)
    done = np.zeros((len(starts), settings.trials), dtype=bool)

    def arrived(value: tuple[int, tuple[int, np.ndarray]]) -> None:
        i, (lo, r) = value
        a, b, lo2, hi = units[i]
        assert lo == lo2
        out[a:b, lo:hi] = r
        done[a:b, lo:hi] = True
        if progress is not None:
            progress((lo, r))

    try:
        distributed.run_tasks(run_chunk, tasks, workers=workers, ray=ray, on_result=arrived)
    except distributed.Interrupted as e:
        every = done.all(axis=0)  # the trials finished for every start (paired comparisons need the same trials)
        raise RolloutInterrupted(e.signum, out[:, every], np.flatnonzero(every)) from None
    assert done.all()
    return out


class RolloutInterrupted(Interrupted):
    """A rollout stopped by SIGINT or SIGTERM (:func:`bgbot.arena.distributed.interrupt_signals`) before all its
    trials finished: ``results`` ``(K, n, 5 or 6)`` float64 the per-trial results (as :func:`play_chunk`'s) of the
    ``n`` trials finished for every start, ``trials`` ``(n,)`` int64 their trial numbers (whole work units)."""

    def __init__(self, signum: int, results: np.ndarray, trials: np.ndarray) -> None:
        super().__init__(signum)
        self.results = results
        self.trials = trials


def rollout_positions(
    positions: np.ndarray,
    evaluator,
    settings: RolloutSettings,
    workers: int = 1,
    ray: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Roll out positions before the roll (cubeless) -> ``(probabilities (N, 5), standard errors (N, 5))`` float64,
    for the side on roll of each position.

    The API for training targets (truncated, variance-reduced rollouts of a batch of positions) and scripts.

    Args:
        positions: ``(N, 26)`` int8, side on roll.
        evaluator: a position evaluator (picklable for ``workers > 1`` / Ray) or a checkpoint path.
        settings: :class:`RolloutSettings` (cubeless: its ``cube`` and ``jacoby`` are not used).
        workers: processes (1 = this process). ray: a Ray address or ``"local"`` (:mod:`bgbot.arena.distributed`).

    Raises:
        RolloutError: bad settings. bgbot.rules.board.PositionError: a bad position.
        bgbot.arena.distributed.DistributedError: Ray not installed or not reachable.
    """
    if settings.cube:
        raise RolloutError(
            "rollout_positions rolls out cubeless: give settings with cube=False (cube_rollout is cubeful)"
        )
    pos = np.asarray(positions, dtype=np.int8).reshape(-1, 26)
    for p in pos:
        validate(p)
    res = _run(evaluator, pos, np.ones(len(pos), dtype=bool), settings, workers, ray)
    est = [Estimate.of(r) for r in res]
    return np.array([e.mean for e in est]).reshape(-1, 5), np.array([e.se for e in est]).reshape(-1, 5)


# ---------------------------------------------------------------------------------------- checker-play rollouts


@dataclass
class Candidate:
    """A play to roll out: its ``play`` text (GNU Backgammon's notation) and ``afterstate`` ``(26,)`` int8 (opponent on
    roll); after the rollout, its :class:`Estimate`."""

    play: str
    afterstate: np.ndarray
    estimate: Estimate | None = None


def check_max_candidates(max_candidates: int | None) -> None:
    """The one check of a rollout's most candidates (``--candidates``, the HTTP API's ``candidates``): None (no
    limit) or a whole number >= 1.

    Raises:
        RolloutError: ``"the number of candidates must be at least 1, got 0"``.
    """
    if max_candidates is not None and (not is_int(max_candidates) or max_candidates < 1):
        raise RolloutError(f"the number of candidates must be at least 1, got {max_candidates!r}")


def candidates(
    evaluator: PositionEvaluator,
    position: np.ndarray,
    dice: tuple[int, int],
    plays: Sequence[str] = (),
    max_candidates: int | None = None,
) -> list[Candidate]:
    """The plays to roll out: ``plays`` as typed (any spelling :func:`bgbot.formats.notation.parse_play` accepts),
    then the best others GNU Backgammon's 0-ply move filter keeps (the best :data:`bgbot.evaluation.search.FILTER_KEEP`
    within :data:`bgbot.evaluation.search.FILTER_WINDOW` of the best 0-ply equity, best first), ``max_candidates`` in
    all (fewer when the filter keeps fewer). Without ``max_candidates``: ``plays`` alone when given, else all the
    filter keeps.

    Raises:
        RolloutError: an unknown, illegal or repeated play; ``max_candidates`` < 1, or fewer than the plays given.
    """
    check_max_candidates(max_candidates)
    if max_candidates is not None and max_candidates < len(plays):
        raise RolloutError(
            f"{max_candidates} candidate{'' if max_candidates == 1 else 's'} cannot hold the {len(plays)} plays "
            f"given: ask for at least {len(plays)} "
            "(the plays given, then the best others by the move filter)"
        )
    position = validate(position)
    names = {bytes(lp.afterstate): lp.play for lp in legal_plays(position, dice)}
    out: list[Candidate] = []
    seen: set[bytes] = set()
    for text in plays:
        try:
            p = notation.parse_play(position, dice, text)
        except BgbotError as e:
            raise RolloutError(f"unknown play {text!r}: {e}") from e
        after = flip(np.asarray(p.afterstate, dtype=np.int8))
        key = bytes(after.astype(np.int8))
        if key in seen:
            raise RolloutError(f"play {text!r} is given twice (as {names.get(key, text)!r})")
        seen.add(key)
        out.append(Candidate(names.get(key, text), after.astype(np.int8)))
    wanted = len(out) if plays and max_candidates is None else max_candidates
    if wanted is not None and len(out) >= wanted:
        return out
    found = ranking.rank(evaluator, position[None, :], np.array([dice]))
    keep = search.filter_candidates(equity(found.probabilities), found.plays.parent)
    for i in found.order:
        after = found.plays.afterstates[i]
        if keep[i] and bytes(after) not in seen and (wanted is None or len(out) < wanted):
            out.append(Candidate(names[bytes(after)], after))
    return out


def rollout_plays(
    evaluator,
    cands: list[Candidate],
    settings: RolloutSettings,
    workers: int = 1,
    ray: str | None = None,
    progress: Callable | None = None,
    cube: tuple[int, int] = (1, 0),
) -> list[Candidate]:
    """Roll out each candidate's afterstate (trials start with the opponent on roll; the root is the side that
    played) with the same dice per trial; fills each candidate's :attr:`Candidate.estimate`. ``cube`` (cubeful
    settings only): the cube value and owner seen by the root (0 centred, +1 the root, -1 the opponent)."""
    starts = np.array([c.afterstate for c in cands], dtype=np.int8)
    cs = None
    if settings.cube:
        value, owner = cube
        seat = {0: -1, 1: 1, -1: 0}[owner]  # seats: 0 = the opponent (on roll at the start), 1 = the root
        cs = np.tile([value, seat, value], (len(cands), 1))
    res = _run(evaluator, starts, np.zeros(len(cands), dtype=bool), settings, workers, ray, progress, cs)
    for c, r in zip(cands, res):
        c.estimate = Estimate.of(r)
    return cands


def paired_difference(e: Estimate, base: Estimate) -> tuple[float, float]:
    """``e`` minus ``base``, paired over trials (rolled out together: the same dice in trial ``i``, the same number of
    trials): the mean of the per-trial differences of :meth:`Estimate.values` (cubeful points when cubeful, else
    cubeless money equity, for the root) and its standard error (sample sd, ddof 1, / sqrt(T); 0.0 for one trial)."""
    diff = e.values() - base.values()
    return float(diff.mean()), _se(diff) if len(diff) > 1 else 0.0


def significance_note(trials: int) -> str | None:
    """Why no difference of a rollout of ``trials`` trials is judged significant, or None when one can be (``trials``
    at least :data:`MIN_SIGNIFICANCE_TRIALS`).

    >>> significance_note(12)
    'too few trials to judge significance: 12 (at least 144)'
    >>> significance_note(144) is None
    True
    """
    if trials >= MIN_SIGNIFICANCE_TRIALS:
        return None
    return f"too few trials to judge significance: {trials} (at least {MIN_SIGNIFICANCE_TRIALS})"


def rank_candidates(cands: list[Candidate], z: float = 1.96) -> list[dict]:
    """Candidates best first by rolled-out equity, each with its difference from the best, the standard error of
    that difference (paired over trials: :func:`paired_difference`), whether it is significant (two-sided 95%,
    ``|difference| > z * se``, and at least :data:`MIN_SIGNIFICANCE_TRIALS` trials) and ``significance_note``
    (:func:`significance_note`: "too few trials to judge", or None). Returns JSON-ready dicts."""
    est = [c.estimate for c in cands]
    assert all(e is not None for e in est)
    order = sorted(range(len(cands)), key=lambda i: -est[i].value)  # type: ignore[union-attr]
    best = est[order[0]]
    assert best is not None
    note = significance_note(best.trials)
    out = []
    for rank, i in enumerate(order, 1):
        e = est[i]
        assert e is not None
        difference, se = paired_difference(e, best)
        out.append(
            {
                "rank": rank,
                "play": cands[i].play,
                "position_id": positionid.encode(cands[i].afterstate),
                **estimate_json(e),
                "difference": difference,
                "difference_se": se,
                "significant": bool(rank > 1 and note is None and abs(difference) > z * se),
                "significance_note": note,
            }
        )
    return out


PROBABILITY_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


def se_excludes_truncation_bias(settings: RolloutSettings, starts: np.ndarray) -> bool:
    """Whether a rollout's standard errors leave out the bias of the model's valuation where truncated trials stop
    (``bgbot rollout --json``'s ``se_excludes_truncation_bias``): the trials are truncated (``settings.truncate`` >
    0) and the game of at least one of ``starts`` ``(K, 26)`` int8 (the positions rolled out: candidates' afterstates,
    or the position before the roll) goes on. A start whose game is over scores its result in every trial, exactly.
    """
    return settings.truncate > 0 and bool((game_result(np.asarray(starts)) == 0).any())


def estimate_json(e: Estimate) -> dict:
    """``{"probabilities", "probabilities_se", "equity", "equity_se", "trials"}`` (+ ``"cubeful_equity"``,
    ``"cubeful_equity_se"`` when cubeful)."""
    out = {
        "probabilities": dict(zip(PROBABILITY_NAMES, map(float, e.mean))),
        "probabilities_se": dict(zip(PROBABILITY_NAMES, map(float, e.se))),
        "equity": e.equity,
        "equity_se": e.equity_se,
        "trials": e.trials,
    }
    if e.cubeful is not None:
        out["cubeful_equity"] = e.cubeful
        out["cubeful_equity_se"] = e.cubeful_se
    return out


def cube_rollout(
    evaluator,
    position: np.ndarray,
    settings: RolloutSettings,
    cube: tuple[int, int] = (1, 0),
    workers: int = 1,
    ray: str | None = None,
    progress: Callable | None = None,
) -> dict:
    """A cubeful money rollout of the cube decision of the side on roll: No double (the cube as it is) and
    Double/Take (the cube doubled and given to the opponent) rolled out together with the same dice; Double/Pass is
    +1 (the position's cube). ``cube``: the cube value and owner seen by the side on roll (0 centred, +1 its own).

    Returns:
        ``{"no_double", "double_take"}`` each :func:`estimate_json` of its trials, ``"double_pass": 1.0``,
        ``"action"`` (GNU Backgammon's wording, :func:`bgbot.cube.decision.action_text`), ``"double_take_minus_no_double"``
        with its paired standard error, and whether the action is significant (:func:`cube_significance`'s fields).

    Raises:
        RolloutError: the settings are not cubeful, or the side on roll cannot double (the opponent owns the cube).
        RolloutInterrupted: SIGINT or SIGTERM under :func:`bgbot.arena.distributed.interrupt_signals` (the trials
            finished so far ride on it; :func:`cube_result` of them is the partial answer).
    """
    if not settings.cube:
        raise RolloutError("a cube rollout needs cubeful settings (cube=True)")
    value, owner = cube
    if owner < 0:
        raise RolloutError("the side on roll cannot double: the opponent owns the cube")
    pos = validate(position)
    starts = np.array([pos, pos], dtype=np.int8)
    cs = np.array([[value, -1 if owner == 0 else 0, value], [2 * value, 1, value]], dtype=np.int64)
    res = _run(evaluator, starts, np.ones(2, dtype=bool), settings, workers, ray, progress, cs)
    return cube_result(res, owner, settings.jacoby)


def cube_result(res: np.ndarray, owner: int, jacoby: bool) -> dict:
    """:func:`cube_rollout`'s answer from the per-trial results ``(2, T, 6)`` of No double (row 0) and Double/Take
    (row 1), ``T >= 2`` (also those of an interrupted rollout, :attr:`RolloutInterrupted.results`); ``owner`` 0 centred,
    1 the side on roll's cube."""
    from bgbot.cube import decision as cubemod

    nd, dt = Estimate.of(res[0]), Estimate.of(res[1])
    assert nd.cubeful is not None and dt.cubeful is not None
    diff = res[1][:, 5] - res[0][:, 5]
    gammon = bool(nd.mean[1] > 0 or nd.mean[3] > 0)
    _, action = cubemod.action_text(
        nd.cubeful, dt.cubeful, 1.0, gammon, gammon and (owner != 0 or not jacoby), owner == 1
    )
    return {
        "no_double": estimate_json(nd),
        "double_take": estimate_json(dt),
        "double_pass": 1.0,
        "double_take_minus_no_double": float(diff.mean()),
        "double_take_minus_no_double_se": _se(diff),
        "action": action,
        **cube_significance(res[0][:, 5], res[1][:, 5]),
    }


def taker_answer(cube: dict, beavers: bool = False) -> dict:
    """A cube rollout's answer (:func:`cube_result`) of a position where a double awaits the answer, answered as
    ``bgbot cube`` answers then: ``"action"`` becomes the taker's (``"Take"``, ``"Pass"``, or ``"Beaver"`` where
    ``beavers`` and taking is worth more than 0 to the taker), the doubler's action moves to ``"doubler_action"``, and
    ``"taker"`` holds ``{"action", "take", "pass"}``, the taker's cubeful money equities normalised to the cube before
    the double (:func:`bgbot.cube.decision.take_action`). Returns a new dict; ``cube`` is unchanged."""
    from bgbot.cube import decision as cubemod

    dt, dp = cube["double_take"]["cubeful_equity"], cube["double_pass"]
    answer = cubemod.take_action(dt, dp, -dt, beavers).value
    return {
        **cube,
        "action": answer,
        "doubler_action": cube["action"],
        "taker": {"action": answer, "take": -dt, "pass": -dp},
    }


def _se(x: np.ndarray) -> float:
    """Standard error of the mean of ``x`` ``(T,)``: sample sd (ddof 1) / sqrt(T)."""
    return float(x.std(ddof=1) / np.sqrt(len(x)))


def cube_significance(no_double: np.ndarray, double_take: np.ndarray, z: float = 1.96) -> dict:
    """Whether a cube rollout's proper action is significant, from the per-trial cubeful values ``(T,)`` float64 of
    No double and Double/Take (the same dice in trial ``i``; Double/Pass is +1 in every trial).

    The action rests on two comparisons, each tested as GNU Backgammon marks rollout results, by a two-sided z-test
    (95%: ``|difference| > z * se``) of the mean per-trial difference against its standard error:

    * to double or not: ``min(DT, DP) - ND`` (the doubler gets the taker's better answer; per trial ``DT_i - ND_i``
      when the rolled-out Double/Take is below +1, else ``1 - ND_i``);
    * to take or pass: ``DT - DP`` (per trial ``DT_i - 1``).

    Fewer than :data:`MIN_SIGNIFICANCE_TRIALS` trials judge nothing: neither difference is significant.

    Returns:
        ``{"double_minus_no_double", "double_minus_no_double_se", "double_significant", "take_minus_pass",
        "take_minus_pass_se", "take_significant", "significant", "significance_note", "z"}``: the two differences (the
        doubler's perspective, cubeful equity per the position's cube), their standard errors, whether each is
        significant, ``significant``, whether both are (the proper action would not change with more trials, at 95%
        each), and :func:`significance_note` (None, or why nothing is judged).
    """
    nd = np.asarray(no_double, dtype=np.float64)
    dt = np.asarray(double_take, dtype=np.float64)
    take = dt - 1.0
    double = (dt if dt.mean() < 1.0 else np.ones_like(dt)) - nd
    d_se, t_se = _se(double), _se(take)
    note = significance_note(len(nd))
    d_sig = bool(note is None and abs(double.mean()) > z * d_se)
    t_sig = bool(note is None and abs(take.mean()) > z * t_se)
    return {
        "double_minus_no_double": float(double.mean()),
        "double_minus_no_double_se": d_se,
        "double_significant": d_sig,
        "take_minus_pass": float(take.mean()),
        "take_minus_pass_se": t_se,
        "take_significant": t_sig,
        "significant": d_sig and t_sig,
        "significance_note": note,
        "z": z,
    }
