"""A reproducible, diverse list of test positions for move-generator, notation and Position ID tests.

``make_positions(n, seed)`` -> ``(n, 26)`` int8, each the side on roll's view (see bgbot/rules/board.py), no finished games.
The mix (fractions of n):

* 40 % from gnubg-nn 0-ply self-play games (``best_move``), every ply kept;
* 20 % from random-play games (a uniformly random legal play from bgbot.rules.movegen_scalar), every ply kept;
* 15 % bar-heavy: 1-4 of my checkers on the bar against 2-6 made points in the opponent's home board;
* 15 % bear-off: all my checkers home (some off), opponent checkers scattered, some as blots in my home board,
  and sometimes one of my checkers on the bar or just outside (hit during the bear-off);
* 10 % closed boards and primes: a full or nearly full opponent home board or a six-point prime, me on the bar.

About 5,000 positions take a few seconds. gnubg-nn is used only to make positions, never as the expected answer.
"""

from __future__ import annotations

import functools

import gnubg_nn
import numpy as np

from bgbot.rules.board import BAR, NUM_CHECKERS, apply_steps, flip, game_result, starting_position, validate
from bgbot.rules.movegen_scalar import legal_plays
from tests.gnubg_oracle import to_gnubg


def _finished(p: np.ndarray) -> bool:
    """True when either side has no checker left."""
    return bool(game_result(p) != 0)


def _games(rng: np.random.Generator, n: int, random_play: bool) -> list[np.ndarray]:
    """Positions from whole games, every ply (the side on roll's view)."""
    out: list[np.ndarray] = []
    while len(out) < n:
        p = starting_position()
        while len(out) < n and not _finished(p):
            out.append(p)
            d1, d2 = (int(d) for d in rng.integers(1, 7, 2))
            if random_play:
                plays = legal_plays(p, d1, d2)
                after = plays[rng.integers(len(plays))].afterstate if plays else p
            else:
                after = apply_steps(p, _gnubg_best_steps(p, d1, d2))
            p = flip(after)
    return out


def _gnubg_best_steps(p: np.ndarray, d1: int, d2: int):
    """gnubg-nn's 0-ply best play of ``p`` as (from, to) steps in our indices (``()`` when none)."""
    return gnubg_nn.best_move(to_gnubg(p), d1, d2, n=0)


def _scatter(rng: np.random.Generator, p: np.ndarray, sign: int, count: int, points) -> None:
    """Put ``count`` checkers of one side (sign +1 mine, -1 the opponent's) on random ``points`` it may use."""
    points = list(points)
    for _ in range(count):
        free = [q for q in points if p[q] * sign >= 0]
        p[rng.choice(free)] += sign


def _made_points(rng: np.random.Generator, p: np.ndarray, points, k: int) -> int:
    """Make ``k`` of ``points`` with 2-3 opponent checkers each; returns how many checkers that used."""
    used = 0
    for i, q in enumerate(rng.choice(points, size=k, replace=False)):
        c = 3 if rng.random() < 0.3 and used + 3 + 2 * (k - i - 1) <= 13 else 2
        p[q] -= c
        used += c
    return used


def _bar_heavy(rng: np.random.Generator) -> np.ndarray:
    p = np.zeros(26, dtype=np.int8)
    used = _made_points(rng, p, range(19, 25), int(rng.integers(2, 7)))
    p[0] -= int(rng.integers(0, 2))
    _scatter(rng, p, -1, max(0, NUM_CHECKERS - used + int(p[0]) - int(rng.integers(0, 3))), range(1, 25))
    p[BAR] = int(rng.integers(1, 5))
    _scatter(rng, p, +1, NUM_CHECKERS - int(p[BAR]) - int(rng.integers(0, 3)), range(1, 25))
    return p


def _bear_off(rng: np.random.Generator) -> np.ndarray:
    p = np.zeros(26, dtype=np.int8)
    blots = int(rng.integers(0, 3))
    for q in rng.choice(range(1, 7), size=blots, replace=False):
        p[q] = -1
    p[0] -= int(rng.integers(0, 2))
    _scatter(rng, p, -1, int(rng.integers(3, NUM_CHECKERS + 1)) - blots + int(p[0]), range(7, 25))
    mine = int(rng.integers(1, NUM_CHECKERS + 1))
    straggler = rng.random() < 0.25
    _scatter(rng, p, +1, mine - straggler, range(1, 7))
    if straggler:
        _scatter(rng, p, +1, 1, [BAR, 7, 8, 9])
    return p


def _closed(rng: np.random.Generator) -> np.ndarray:
    p = np.zeros(26, dtype=np.int8)
    if rng.random() < 0.6:
        block = list(rng.choice(range(19, 25), size=int(rng.integers(5, 7)), replace=False))
    else:
        start = int(rng.integers(8, 20))
        block = list(range(start, start + 6))
    used = 0
    for q in block:
        p[q] = -2
        used += 2
    _scatter(rng, p, -1, NUM_CHECKERS - used - int(rng.integers(0, 2)), range(1, 25))
    p[BAR] = int(rng.integers(0, 3))
    _scatter(rng, p, +1, NUM_CHECKERS - int(p[BAR]), range(1, 25))
    return p


def make_positions(n: int = 5000, seed: int = 20240601) -> np.ndarray:
    """``n`` reproducible, valid, diverse positions, ``(n, 26)`` int8 (the side on roll's view), as described in
    the module docstring; the same ``(n, seed)`` always gives the same array (a fresh copy, made once per process)."""
    return _make_positions(n, seed).copy()


@functools.lru_cache(maxsize=4)
def _make_positions(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n_self, n_random, n_bar, n_bear = int(0.4 * n), int(0.2 * n), int(0.15 * n), int(0.15 * n)
    n_closed = n - n_self - n_random - n_bar - n_bear
    out = _games(rng, n_self, random_play=False) + _games(rng, n_random, random_play=True)
    out += [_bar_heavy(rng) for _ in range(n_bar)]
    out += [_bear_off(rng) for _ in range(n_bear)]
    out += [_closed(rng) for _ in range(n_closed)]
    for p in out:
        validate(p)
    return np.stack(out).astype(np.int8)


def position(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A position from {index: count} for my checkers and the opponent's (counts positive; index 0 = their bar)."""
    p = np.zeros(26, dtype=np.int8)
    for i, c in mine.items():
        p[i] += c
    for i, c in theirs.items():
        p[i] -= c
    return p
