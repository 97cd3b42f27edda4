"""Dice: a counter-based random number generator (splitmix64 hashing) and the duplicate-dice streams of tournaments and
cubeful games, so that a game's rolls depend only on ``(seed, pairing, pair, turn)``, never on who plays it or on
how the work is split."""

from __future__ import annotations

import numpy as np

from bgbot.errors import BgbotError


class DiceError(BgbotError):
    """Dice that are not two integers in 1..6."""


_MIX = np.array([0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB], dtype=np.uint64)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, ``(...)`` uint64 -> ``(...)`` uint64: a fixed bijection that scrambles every bit."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=np.uint64) + _MIX[0]
        z = (z ^ (z >> np.uint64(30))) * _MIX[1]
        z = (z ^ (z >> np.uint64(27))) * _MIX[2]
        return z ^ (z >> np.uint64(31))


def hash_words(*words) -> np.ndarray:
    """Chain :func:`splitmix64` over integer words (scalars or arrays, broadcast) -> uint64: a counter-based random
    number generator (equal inputs, equal outputs; any change scrambles every bit)."""
    h: np.ndarray = np.asarray(np.uint64(0x6A09E667F3BCC908))
    with np.errstate(over="ignore"):
        for w in words:
            h = splitmix64(h ^ np.asarray(w).astype(np.uint64))
    return h


_OPENING_TRIES = 64


def _two_dice(h: np.ndarray) -> np.ndarray:
    """Two dice 1..6 from each 64-bit hash (high and low 32 bits), ``(...)`` -> ``(..., 2)`` int8."""
    hi = (h >> np.uint64(32)) % np.uint64(6)
    lo = (h & np.uint64(0xFFFFFFFF)) % np.uint64(6)
    return (np.stack([hi, lo], axis=-1) + 1).astype(np.int8)


def pair_dice(seed: int, pairing: int, pair: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """The roll of ``turn`` (>= 1, counted after the opening) in each game of pair ``pair``.

    ``pair``, ``turn`` ``(N,)`` ints -> ``(N, 2)`` int8 dice 1..6 (a hash of the arguments: :func:`hash_words`).
    """
    return _two_dice(hash_words(seed, pairing, pair, turn))


def opening_dice(seed: int, pairing: int, pair: np.ndarray) -> np.ndarray:
    """Each pair's opening roll ``(N,)`` -> ``(N, 2)`` int8: ``[:, 0]`` seat 0's die, ``[:, 1]`` seat 1's, never equal.

    Ties are rolled again: tries ``0, 1, ...`` come from the hash, and the first unequal one counts.
    """
    tries = opening_tries(seed, pairing, pair)  # (N, T, 2)
    first = np.argmax(tries[..., 0] != tries[..., 1], axis=1)
    return tries[np.arange(len(tries)), first]


def opening_tries(seed: int, pairing: int, pair: np.ndarray) -> np.ndarray:
    """The opening tries of each pair, ``(N,)`` -> ``(N, T, 2)`` int8 (one die per seat per try; a tie is rolled
    again, so the first unequal try is the opening roll and the ties before it are what automatic doubles count)."""
    pair = np.asarray(pair)
    return _two_dice(hash_words(seed, pairing, pair[:, None], -1 - np.arange(_OPENING_TRIES)[None, :]))
