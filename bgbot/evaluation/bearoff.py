"""Exact bear-off databases, built by the package itself (vectorised numpy) and cached on disk.

**One-sided database** (GNU Backgammon's ``gnubg_os0.bd``): for each of the 54,264 ways to place up to 15 checkers
on the six home points, two distributions of the number of rolls (index ``k`` = exactly ``k`` rolls, ``k`` =
0..:data:`MAX_ROLLS` - 1):

* ``off``: rolls to bear off every checker, playing each roll to minimise the expected number of rolls;
* ``first``: rolls to bear off the first checker of a side that has all 15 on the board (what gammon chances need),
  with its own optimal play (minimise the expected number of rolls to the first checker off). As gnubg stores it,
  a position with fewer than 15 checkers (one already off) has ``first`` = 0 rolls.

Both come from the recursion ``D(s) = sum over the 21 rolls r of P(r) * shift(D(best(s, r)))`` in order of increasing
pip count (every play lowers it), gnubg makebearoff.c's ``BearOff``; bgbot keeps float64 where gnubg rounds to 16 bits,
so near-ties between plays may break differently.

**Two-sided database** (gnubg's ``gnubg_ts0.bd``, 6 points x 6 checkers): for every pair (side on roll, opponent) of
the 924 positions of at most :data:`TS_CHECKERS` checkers, the side on roll's exact cubeless winning chance with best
play, and the cubeful money equities gnubg stores (makebearoff.c ``BearOff2``/``CubeEquity``): the side on roll's
equity, normalised to the cube, before its cube decision (its "no double" value), with the cube owned by it
(``own``), centred (``centre``) or owned by the opponent (``opp``), every later cube decision of either side optimal
(double when ``2 * DT >= ND`` and ``DP >= ND``; take when ``2 * DT < DP``). With at most 6 checkers a side no gammon is
possible, so the values are the same with or without the Jacoby rule. Order: pairs by increasing total pip count.

**Cache**: ``bearoff-v1.npz`` in ``$BGBOT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/bgbot``, else
``~/.cache/bgbot``. The file holds a format version and a SHA-256 of its arrays; a missing, unreadable, truncated or
altered file (or an unwritable directory) is rebuilt in memory (and rewritten atomically when possible), never used.

Public API::

    load() -> Databases              # built or read once per process
    os_index(counts (M, 6)) -> (M,) int64;  ts_index(counts (M, 6)) -> (M,) int64 (-1 outside the 6-checker set)
    bearoff_probabilities(positions (M, 26), two_sided (M,) bool) -> (M, 5) float32
    two_sided_equities(position (26,)) -> dict  {"win", "own", "centre", "opp"}
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot import files
from bgbot.rules.movegen import ROLL_WEIGHTS, ROLLS

FORMAT_VERSION = 1
MAX_ROLLS = 32
"""Length of a distribution (0..31 rolls, as gnubg stores them; 15 checkers never need more than 30)."""
TS_CHECKERS = 6
"""Most checkers a side has in the two-sided database (924 positions a side)."""
N_OS = 54264
N_TS = 924
CACHE_ENV = "BGBOT_CACHE_DIR"
CACHE_NAME = f"bearoff-v{FORMAT_VERSION}.npz"


class BearoffError(RuntimeError):
    """The bear-off databases could not be built (a bug: they are derived from the rules alone)."""


# ----------------------------------------------------------------------------------------------- positions


def _key(counts: np.ndarray) -> np.ndarray:
    """``(M, 6)`` checker counts on points 1..6 -> ``(M,)`` int64 key ``sum c_i * 16**(i-1)``."""
    return (np.asarray(counts).astype(np.int64) << (4 * np.arange(6))).sum(axis=-1)


def _enumerate() -> np.ndarray:
    """All one-sided positions ``(54264, 6)`` int8, in increasing key order (index 0: no checker).

    Built a point at a time: each partial position ``(K, j)`` gets every count that keeps its total at most 15."""
    c = np.zeros((1, 0), dtype=np.int8)
    for _ in range(6):
        room = 16 - c.sum(axis=1, dtype=np.int64)  # counts 0 .. 15 - total fit on the next point
        rows = np.repeat(np.arange(len(c)), room)
        count = np.arange(len(rows)) - np.repeat(np.cumsum(room) - room, room)
        c = np.column_stack([c[rows], count.astype(np.int8)])
    return c[np.argsort(_key(c), kind="stable")]


_POSITIONS = _enumerate()
_KEYS = _key(_POSITIONS)
_PIPS = (_POSITIONS.astype(np.int64) * np.arange(1, 7)).sum(axis=1)
_CHECKERS = _POSITIONS.astype(np.int64).sum(axis=1)
_TS_ROWS = np.flatnonzero(_CHECKERS <= TS_CHECKERS)  # (924,) one-sided index of each two-sided index
_TS_OF_OS = np.full(N_OS, -1, dtype=np.int64)
_TS_OF_OS[_TS_ROWS] = np.arange(len(_TS_ROWS))


def os_positions() -> np.ndarray:
    """Checker counts on points 1..6 of every one-sided index: ``(54264, 6)`` int8 (a read-only view)."""
    v = _POSITIONS.view()
    v.setflags(write=False)
    return v


def os_index(counts: np.ndarray) -> np.ndarray:
    """One-sided index of checker counts on points 1..6: ``(M, 6)`` ints (at most 15 in all) -> ``(M,)`` int64."""
    return np.searchsorted(_KEYS, _key(counts))


def ts_index(counts: np.ndarray) -> np.ndarray:
    """Two-sided index ``(M,)`` int64 of counts ``(M, 6)``; -1 where a side has more than :data:`TS_CHECKERS`."""
    return _TS_OF_OS[os_index(counts)]


# ------------------------------------------------------------------------------------------------ plays


def _apply_die(keys: np.ndarray, parent: np.ndarray, die: int) -> tuple[np.ndarray, np.ndarray]:
    """Every way to play one die in bear-off positions given by their keys ``(K,)`` int64 (:func:`_key`: 4 bits a
    point) -> ``(keys, parent)``, duplicates per parent removed.

    A checker on point ``s`` moves to ``s - die``; it bears off when ``s == die``, or when ``s < die`` and no checker
    is on a higher point. An empty position stays empty (the game is over: the rest of the roll is not played).
    In a bear-off a die can always be played while a checker is left, so the rule of playing both dice (or the
    larger) never bites.
    """
    nibbles = (keys[:, None] >> (4 * np.arange(6))) & 15  # (K, 6) counts on points 1..6
    occupied = nibbles > 0
    highest = np.where(occupied.any(axis=1), 5 - np.argmax(occupied[:, ::-1], axis=1), -1)  # 0-based point
    src = np.arange(6)
    legal = occupied & ((src + 1 >= die) | (src == highest[:, None]))  # (K, 6)
    rows, cols = np.nonzero(legal)
    dest = cols - die
    new = keys[rows] - (np.int64(1) << (4 * cols)) + np.where(dest >= 0, np.int64(1) << (4 * np.maximum(dest, 0)), 0)
    empty = keys == 0
    return _dedupe(np.concatenate([new, keys[empty]]), np.concatenate([parent[rows], parent[empty]]))


def _dedupe(keys: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    joint = np.sort((parent.astype(np.int64) << 24) | keys)
    joint = joint[np.r_[True, joint[1:] != joint[:-1]]]  # (np.unique hashes: much slower here)
    return joint & 0xFFFFFF, joint >> 24


def _successors(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct position after a legal play of each roll from one-sided positions ``rows`` ``(N,)``.

    Returns ``(pair, succ)``: ``pair`` ``(S,)`` int64 = ``i * 21 + j`` for ``rows[i]`` and roll ``ROLLS[j]``, sorted;
    ``succ`` ``(S,)`` int64 one-sided indices.
    """
    start = _KEYS[rows]
    parent = np.arange(len(rows), dtype=np.int64)
    one = {d: _apply_die(start, parent, d) for d in range(1, 7)}  # each die played first, shared by the rolls
    pairs, succs = [], []
    for j, (a, b) in enumerate(ROLLS):
        a, b = int(a), int(b)
        if a == b:
            s, p = one[a]
            for _ in range(3):
                s, p = _apply_die(s, p, a)
        else:
            s1, p1 = _apply_die(*one[a], b)
            s2, p2 = _apply_die(*one[b], a)
            s, p = _dedupe(np.concatenate([s1, s2]), np.concatenate([p1, p2]))
        pairs.append(p * 21 + j)
        succs.append(np.searchsorted(_KEYS, s))
    pair, succ = np.concatenate(pairs), np.concatenate(succs)
    order = np.argsort(pair, kind="stable")
    return pair[order], succ[order]


# ------------------------------------------------------------------------------------------------ builds


def _segment_best(values: np.ndarray, segment: np.ndarray, n: int, maximise: bool) -> np.ndarray:
    """Row of the best value per segment (``segment`` sorted, all of 0..n-1 present), first on ties."""
    key = -values if maximise else values
    order = np.lexsort((np.arange(len(values)), key, segment))
    starts = np.searchsorted(segment[order], np.arange(n))
    return order[starts]


def build_one_sided() -> tuple[np.ndarray, np.ndarray]:
    """Build the one-sided database: ``(off, first)``, each ``(54264, MAX_ROLLS)`` float64 (see the module doc)."""
    pair, succ = _successors(np.arange(N_OS))
    parent = pair // 21
    off = np.zeros((N_OS, MAX_ROLLS))
    first = np.zeros((N_OS, MAX_ROLLS))
    off[0, 0] = 1.0
    first[_CHECKERS < 15, 0] = 1.0
    mean_off = np.zeros(N_OS)
    mean_first = np.zeros(N_OS)
    k = np.arange(MAX_ROLLS)
    weights = ROLL_WEIGHTS
    # entries grouped by the pip count of their parent: every successor has fewer pips
    by_level = np.argsort(_PIPS[parent], kind="stable")
    level_of = _PIPS[parent][by_level]
    bounds = np.searchsorted(level_of, np.arange(_PIPS.max() + 2))
    for level in range(1, int(_PIPS.max()) + 1):
        e = by_level[bounds[level] : bounds[level + 1]]  # entries of this level, in pair order
        if len(e) == 0:
            continue
        e = np.sort(e)
        p_pair = pair[e]
        uniq, seg = np.unique(p_pair, return_inverse=True)
        pos = uniq // 21
        w = weights[uniq % 21]
        for dist, mean, rows in ((off, mean_off, None), (first, mean_first, _CHECKERS[uniq // 21] == 15)):
            best = e[_segment_best(mean[succ[e]], seg, len(uniq), maximise=False)]
            contrib = np.zeros((len(uniq), MAX_ROLLS))
            contrib[:, 1:] = dist[succ[best], :-1] * w[:, None]
            if rows is not None:
                contrib, pos_r = contrib[rows], pos[rows]
            else:
                pos_r = pos
            if len(pos_r) == 0:
                continue
            starts = np.flatnonzero(np.r_[True, pos_r[1:] != pos_r[:-1]])
            touched = pos_r[starts]
            dist[touched] = np.add.reduceat(contrib, starts, axis=0)
            mean[touched] = dist[touched] @ k
    if np.abs(off.sum(axis=1) - 1).max() > 1e-9 or np.abs(first.sum(axis=1) - 1).max() > 1e-9:
        raise BearoffError("one-sided distributions do not sum to 1 (MAX_ROLLS too small?)")
    return off, first


def _cube_equity(nd: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """gnubg makebearoff.c ``CubeEquity(ND, DT, DP = +1)``: the doubler's value after its optimal cube action, given
    its no-double value ``nd`` and ``dt`` its value with the opponent owning the cube (not yet doubled)."""
    double = (2 * dt >= nd) & (1.0 >= nd)
    return np.where(double, np.minimum(2 * dt, 1.0), nd)


def build_two_sided() -> np.ndarray:
    """Build the two-sided database: ``(4, 924, 924)`` float64 ``[win, own, centre, opp]`` indexed
    ``[.., side on roll, opponent]`` by two-sided index (see the module doc)."""
    pair, succ = _successors(_TS_ROWS)  # sorted by pair = a * 21 + roll: a CSR table of the plays
    succ = _TS_OF_OS[succ]
    roll = pair % 21
    first_entry = np.searchsorted(pair, np.arange(N_TS) * 21)
    n_entries = np.searchsorted(pair, np.arange(N_TS) * 21 + 21) - first_entry
    pips = _PIPS[_TS_ROWS]
    win = np.zeros((N_TS, N_TS))
    own, centre, opp = (np.zeros((N_TS, N_TS)) for _ in range(3))
    # index 0 (no checker left): the side with none has won
    win[0, :], win[:, 0] = 1.0, 0.0
    for arr in (own, centre, opp):
        arr[0, :], arr[:, 0] = 1.0, -1.0
    a_grid, b_grid = np.meshgrid(np.arange(1, N_TS), np.arange(1, N_TS), indexing="ij")
    a_all, b_all = a_grid.ravel(), b_grid.ravel()
    total = pips[a_all] + pips[b_all]
    order = np.argsort(total, kind="stable")
    bounds = np.searchsorted(total[order], np.arange(total.max() + 2))
    for level in range(int(total.min()), int(total.max()) + 1):
        sel = order[bounds[level] : bounds[level + 1]]
        if len(sel) == 0:
            continue
        a, b = a_all[sel], b_all[sel]
        counts = n_entries[a]
        rep = np.repeat(np.arange(len(a)), counts)  # (E,) pair of each entry
        idx = np.arange(len(rep)) - np.repeat(np.cumsum(counts) - counts, counts) + first_entry[a][rep]
        s, bb = succ[idx], b[rep]  # my position after the play, the opponent (now on roll)
        v_win, v_own, v_centre, v_opp = win[bb, s], own[bb, s], centre[bb, s], opp[bb, s]
        cand = np.stack([1.0 - v_win, -v_opp, -_cube_equity(v_centre, v_opp), -_cube_equity(v_own, v_opp)])
        r = roll[idx]
        seg = np.flatnonzero(np.r_[True, (rep[1:] != rep[:-1]) | (r[1:] != r[:-1])])  # (n * 21,) each (pair, roll)
        best = np.maximum.reduceat(cand, seg, axis=1).reshape(4, len(a), 21)  # best play of each roll
        win[a, b], own[a, b], centre[a, b], opp[a, b] = best @ ROLL_WEIGHTS
    return np.stack([win, own, centre, opp])


# ------------------------------------------------------------------------------------------------ cache


@dataclass(frozen=True)
class Databases:
    """The databases: ``off``/``first`` ``(54264, 32)`` float64 one-sided distributions, their cumulative sums
    ``off_cdf``/``first_cdf``, and ``ts`` ``(4, 924, 924)`` float64 two-sided ``[win, own, centre, opp]``."""

    off: np.ndarray
    first: np.ndarray
    ts: np.ndarray

    @property
    def off_cdf(self) -> np.ndarray:
        return _cdf(self, "off")

    @property
    def first_cdf(self) -> np.ndarray:
        return _cdf(self, "first")


_CDFS: dict = {}


def _cdf(db: Databases, name: str) -> np.ndarray:
    key = (id(db), name)
    if key not in _CDFS:
        _CDFS[key] = np.cumsum(getattr(db, name), axis=1)
    return _CDFS[key]


PATH_ENV = (CACHE_ENV, "XDG_CACHE_HOME", "HOME")
"""The environment variables :func:`cache_path` depends on (``HOME``: ``Path.home()``)."""
_PATHS: dict[tuple[str | None, ...], Path] = {}
"""The values of :data:`PATH_ENV` -> the cache path they resolve to."""


def cache_path() -> Path:
    """Where the databases are cached: ``$BGBOT_CACHE_DIR``, else ``$XDG_CACHE_HOME/bgbot``, else
    ``~/.cache/bgbot``; file :data:`CACHE_NAME`. Resolved once per set of values of :data:`PATH_ENV` (then a dict
    lookup: :func:`load` asks on every bear-off evaluation)."""
    env = tuple(os.environ.get(name) for name in PATH_ENV)
    path = _PATHS.get(env)
    if path is None:
        base = env[0]
        if base:
            path = Path(base) / CACHE_NAME
        else:
            xdg = env[1] or str(Path.home() / ".cache")
            path = Path(xdg) / "bgbot" / CACHE_NAME
        _PATHS[env] = path
    return path


def _digest(arrays: dict) -> str:
    h = hashlib.sha256(f"v{FORMAT_VERSION}".encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


_SHAPES = {"off": (N_OS, MAX_ROLLS), "first": (N_OS, MAX_ROLLS), "ts": (4, N_TS, N_TS)}


def _read(path: Path) -> Databases | None:
    """The databases from ``path``, or None when the file is missing, unreadable or fails its checks."""
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in _SHAPES}
            version = int(f["version"])
            digest = str(f["sha256"])
    except Exception:  # missing, truncated, not an npz, a member missing: rebuild
        return None
    if version != FORMAT_VERSION or any(arrays[k].shape != s for k, s in _SHAPES.items()):
        return None
    if digest != _digest(arrays):
        return None
    return Databases(**{k: v.astype(np.float64) for k, v in arrays.items()})


def _write(path: Path, db: Databases) -> None:
    """Write atomically (temp file + os.replace); silently skipped when the directory is not writable."""
    arrays = {"off": db.off, "first": db.first, "ts": db.ts}
    buf = io.BytesIO()
    np.savez_compressed(buf, version=np.int64(FORMAT_VERSION), sha256=np.str_(_digest(arrays)), **arrays)  # type: ignore[arg-type]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(path, buf.getvalue())
    except OSError:
        pass


def build() -> Databases:
    """Build both databases from the rules (a few seconds)."""
    off, first = build_one_sided()
    return Databases(off, first, build_two_sided())


_LOADED: dict[Path, Databases] = {}


def load() -> Databases:
    """The databases, read from :func:`cache_path` or built (and cached) there; once per process and path.

    A cached file that fails its checks (version, shapes, SHA-256) is rebuilt and overwritten, never used.
    """
    path = cache_path()
    db = _LOADED.get(path)
    if db is None:
        db = _read(path)
        if db is None:
            db = build()
            _write(path, db)
        _LOADED[path] = db
    return db


# ------------------------------------------------------------------------------------------------ evaluation


def split_sides(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Home-board counts of bear-off positions ``(M, 26)``: ``(mine, theirs)`` each ``(M, 6)`` int8, points 1..6 in
    each side's own numbering (the opponent's point q is my index 25 - q)."""
    p = np.asarray(positions, dtype=np.int8)
    return p[:, 1:7], -p[:, 24:18:-1]


def _at_least(cdf: np.ndarray) -> np.ndarray:
    """Cumulative distributions ``(M, K)`` float64 (column ``k``: ``P(rolls <= k)``, :func:`_cdf`) -> ``(M, K)``
    float64 ``P(rolls >= k)``: 1 for ``k = 0``, else ``1 - cdf[:, k - 1]``."""
    out = np.empty_like(cdf)
    out[:, 0] = 1.0
    np.subtract(1.0, cdf[:, :-1], out=out[:, 1:])
    return out


def bearoff_probabilities(positions: np.ndarray, two_sided: np.ndarray, db: Databases | None = None) -> np.ndarray:
    """Exact 0-ply probabilities of bear-off positions (both sides only on their home points, none off the board
    elsewhere): ``(M, 26)`` int8 -> ``(M, 5)`` float32 for the side on roll.

    Rows with ``two_sided`` ``(M,)`` bool set (both sides at most 6 checkers) read the two-sided database; the others
    use the one-sided distributions as gnubg's ``BearoffEval`` does: with ``a``/``b`` the side on roll's/opponent's
    rolls to bear off and ``fa``/``fb`` to the first checker off, ``w = P(a <= b)`` (I roll first),
    ``wg = P(a <= fb)`` when the opponent has 15 checkers left (else 0), ``lg = P(b < fa)`` when I have 15; no
    backgammon is possible.
    """
    db = db or load()
    mine, theirs = split_sides(positions)
    out = np.zeros((len(mine), 5), dtype=np.float32)
    ts = np.asarray(two_sided, dtype=bool)
    if ts.any():
        out[ts, 0] = db.ts[0, ts_index(mine[ts]), ts_index(theirs[ts])]
    os_rows = ~ts
    if os_rows.any():
        i, j = os_index(mine[os_rows]), os_index(theirs[os_rows])
        a = db.off[i]
        w = (a * _at_least(db.off_cdf[j])).sum(axis=1)
        # the gammon terms only where they can be non-zero (each row's sum is the same on a subset of the rows)
        wg = np.zeros(len(i))
        g = np.flatnonzero(_CHECKERS[j] == 15)
        if len(g):
            wg[g] = (a[g] * _at_least(db.first_cdf[j[g]])).sum(axis=1)
        lg = np.zeros(len(i))
        g = np.flatnonzero(_CHECKERS[i] == 15)
        if len(g):
            lg[g] = (db.off[j[g]] * (1.0 - db.first_cdf[i[g]])).sum(axis=1)
        out[os_rows, 0] = w
        out[os_rows, 1] = wg
        out[os_rows, 3] = lg
    return np.clip(out, 0.0, 1.0, out=out)  # float rounding (1 - 1.0000000000000002) stays inside [0, 1]


def two_sided_equities(position: np.ndarray, db: Databases | None = None) -> dict[str, float]:
    """The two-sided database's values of one position ``(26,)`` (both sides at most 6 checkers, all home):
    ``{"win": cubeless winning chance, "own", "centre", "opp": cubeful money equity normalised to the cube, before the
    side on roll's cube decision, with the cube owned by it, centred, owned by the opponent}``."""
    db = db or load()
    mine, theirs = split_sides(np.asarray(position)[None])
    i, j = int(ts_index(mine)[0]), int(ts_index(theirs)[0])
    if i < 0 or j < 0:
        raise ValueError("two_sided_equities needs at most 6 checkers a side, all on the home points")
    return {name: float(db.ts[k, i, j]) for k, name in enumerate(("win", "own", "centre", "opp"))}
