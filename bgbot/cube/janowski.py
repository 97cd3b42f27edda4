"""Cubeless probabilities -> cubeful equity (money) or match winning chance (match), by Janowski's live/dead cube
interpolation as GNU Backgammon does it at 0 ply.

The formula layer under :mod:`bgbot.cube.decision`: it knows nothing of boards, only outcome probabilities and cube/score
numbers. Every function is vectorised over rows of probabilities.

Public API::

    money_cubeful(p, owner, jacoby, x) -> (N,) float64          # equity for a cube of 1 (normalised)
    MatchScore(away_me, away_opp, cube, crawford, met)            # one match score and cube value
    MatchScore.mwc_if(winner, points) -> float
    MatchScore.cube_alive -> bool                                  # gnubg's fDoCubeful
    match_cubeless_mwc(p, score) -> (N,) float64                   # dead cube: eq2mwc(Utility)
    match_cubeful_mwc(p, score, owner, x) -> (N,) float64
    emg_from_mwc(mwc, score) / mwc_from_emg(emg, score)

``p`` is ``(N, 5)`` float64, GNU Backgammon's cumulative (win, win gammon, win backgammon, lose gammon, lose
backgammon) for the side on roll ("me"). ``owner`` is 0 for a centred cube, +1 when I own it, -1 when the opponent
does. ``x`` is the cube efficiency in [0, 1] (0 = dead cube, 1 = fully live).

Sources (GNU Backgammon 1.07, read and re-expressed, not copied): eval.c ``Cl2CfMoney``/``MoneyLive`` (money),
``Cl2CfMatchCentered``/``Cl2CfMatchOwned``/``Cl2CfMatchUnavailable``/``fDoCubeful``/``Utility``/``eq2mwc``/``mwc2eq``;
matchequity.c ``GetPoints`` (live-cube cash points), ``getGammonPrice``, ``getME``. Janowski's money formulas:
R. Janowski, "Take-points in money games", 1993, www.bkgm.com/articles/Janowski/cubeformulae.pdf.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgbot.cube.met import MatchEquityTable

_EPS = 1e-7


def _split(p: np.ndarray) -> tuple[np.ndarray, ...]:
    p = np.asarray(p, dtype=np.float64)
    return p[:, 0], p[:, 1], p[:, 2], p[:, 3], p[:, 4]


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (the branch that would use it is never selected there)."""
    den = np.asarray(den, dtype=np.float64)
    safe = np.where(den == 0.0, 1.0, den)
    return np.where(den == 0.0, 0.0, num / safe)


def _lerp(p, p0, v0, p1, v1):
    """Value at p of the line through (p0, v0) and (p1, v1); v0 where p1 == p0."""
    return v0 + (v1 - v0) * _div(p - p0, p1 - p0)


# --------------------------------------------------------------------------------------------------------- money


def money_cubeful(p: np.ndarray, owner: int, jacoby: bool, x: float) -> np.ndarray:
    """Cubeful money equity of the side on roll, for a cube of 1, ``(N, 5)`` -> ``(N,)`` float64.

    ``(1 - x) * dead + x * live`` where dead is the cubeless equity (gammons count 0 under the Jacoby rule with a
    centred cube) and live interpolates linearly between Janowski's points with W = 1 + (wg + wbg) / w and
    L = 1 + (lg + lbg) / (1 - w), take point TP = (L - 1/2) / (W + L + 1/2), cash point CP = (L + 1) / (W + L + 1/2):
    centred: (0, -L) - (TP, -1) - (CP, +1) - (1, W), flat at -1/+1 outside [TP, CP] under the Jacoby rule;
    owned by me: (0, -L) - (CP, +1) - (1, W); owned by the opponent: (0, -L) - (TP, -1) - (1, W).
    Where w < 1e-7 or w > 1 - 1e-7 the cube is dead: the cubeless equity. (gnubg eval.c Cl2CfMoney, MoneyLive.)
    """
    w, wg, wbg, lg, lbg = _split(p)
    price = 0.0 if (jacoby and owner == 0) else 1.0
    dead = 2.0 * w - 1.0 + (wg - lg) * price + (wbg - lbg) * price
    W = 1.0 + _div(wg + wbg, w)
    L = 1.0 + _div(lg + lbg, 1.0 - w)
    tp = (L - 0.5) / (W + L + 0.5)
    cp = (L + 1.0) / (W + L + 0.5)
    if owner == 0:
        low = -np.ones_like(w) if jacoby else _lerp(w, 0.0, -L, tp, -1.0)
        high = np.ones_like(w) if jacoby else _lerp(w, cp, 1.0, 1.0, W)
        live = np.where(w < tp, low, np.where(w < cp, _lerp(w, tp, -1.0, cp, 1.0), high))
    elif owner > 0:
        live = np.where(w < cp, _lerp(w, 0.0, -L, cp, 1.0), _lerp(w, cp, 1.0, 1.0, W))
    else:
        live = np.where(w < tp, _lerp(w, 0.0, -L, tp, -1.0), _lerp(w, tp, -1.0, 1.0, W))
    out = dead * (1.0 - x) + live * x
    return np.where((w > _EPS) & (w < 1.0 - _EPS), out, dead)


# --------------------------------------------------------------------------------------------------------- match


@dataclass(frozen=True)
class MatchScore:
    """One match score seen from the side on roll, and the cube value.

    Attributes:
        away_me, away_opp: points each side still needs (>= 1).
        cube: the cube value (1, 2, 4, ...).
        crawford: this game is the Crawford game.
        met: the match equity table.
    """

    away_me: int
    away_opp: int
    cube: int
    crawford: bool
    met: MatchEquityTable

    @property
    def post_table(self) -> bool:
        """Results of this game are read from the post-Crawford table (a side is 1-away already)."""
        return self.crawford or self.away_me == 1 or self.away_opp == 1

    def mwc_if(self, winner: int, points: int) -> float:
        """My match winning chance after ``winner`` (0 = me, 1 = the opponent) scores ``points`` points."""
        return self.met.mwc(
            self.away_me - points * (winner == 0), self.away_opp - points * (winner == 1), self.post_table
        )

    def doubled(self) -> MatchScore:
        """The same score with the cube turned once."""
        return MatchScore(self.away_me, self.away_opp, 2 * self.cube, self.crawford, self.met)

    @property
    def cube_alive(self) -> bool:
        """gnubg's fDoCubeful: False in the Crawford game, at 2-away 2-away, or when the current cube already wins the
        match for either side (then the cubeful value is the cubeless one)."""
        if self.crawford:
            return False
        if self.away_me <= self.cube and self.away_opp <= self.cube:
            return False
        return not (self.away_me == 2 and self.away_opp == 2)

    def results(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """((W1, W2, W3), (L1, L2, L3)): my MWC when I win / lose 1, 2, 3 times the cube."""
        c = self.cube
        return (
            (self.mwc_if(0, c), self.mwc_if(0, 2 * c), self.mwc_if(0, 3 * c)),
            (self.mwc_if(1, c), self.mwc_if(1, 2 * c), self.mwc_if(1, 3 * c)),
        )


def emg_from_mwc(mwc, score: MatchScore):
    """Match winning chance -> normalised money equity (EMG) at this score and cube (gnubg mwc2eq)."""
    (w1, _, _), (l1, _, _) = score.results()
    return (2.0 * np.asarray(mwc) - (w1 + l1)) / (w1 - l1)


def mwc_from_emg(emg, score: MatchScore):
    """Normalised money equity (EMG) -> match winning chance at this score and cube (gnubg eq2mwc)."""
    (w1, _, _), (l1, _, _) = score.results()
    return 0.5 * (np.asarray(emg) * (w1 - l1) + (w1 + l1))


def _gammon_prices(score: MatchScore) -> tuple[float, float, float, float]:
    """(win gammon, lose gammon, win backgammon, lose backgammon) prices in EMG (gnubg getGammonPrice)."""
    (w1, w2, w3), (l1, l2, l3) = score.results()
    centre, half = 0.5 * (w1 + l1), 0.5 * (w1 - l1)
    if abs(half) <= 1e-7:
        return 0.0, 0.0, 0.0, 0.0
    wg = (w2 - centre) / half - 1.0
    lg = (centre - l2) / half - 1.0
    wb = (w3 - centre) / half - (wg + 1.0)
    lb = (centre - l3) / half - (lg + 1.0)
    return max(wg, 0.0), max(lg, 0.0), max(wb, 0.0), max(lb, 0.0)


def match_cubeless_mwc(p: np.ndarray, score: MatchScore) -> np.ndarray:
    """Cubeless (dead cube) match winning chance of the side on roll, ``(N, 5)`` -> ``(N,)`` float64."""
    w, wg, wbg, lg, lbg = _split(p)
    gw, gl, bw, bl = _gammon_prices(score)
    emg = 2.0 * w - 1.0 + wg * gw - lg * gl + wbg * bw - lbg * bl
    return mwc_from_emg(emg, score)


def _ratios(p: np.ndarray):
    """Gammon-only and backgammon fractions of my wins (g0, b0) and of my losses (g1, b1), each (N,)."""
    w, wg, wbg, lg, lbg = _split(p)
    g0, b0 = _div(wg - wbg, w), _div(wbg, w)
    g1, b1 = _div(lg - lbg, 1.0 - w), _div(lbg, 1.0 - w)
    return g0, b0, g1, b1


def _cube_prime(i: int, j: int, cube: int) -> int:
    """Cube value after the opponent's automatic redouble (gnubg GetCubePrimeValue); i, j are away - 1."""
    return 2 * cube if (i < 2 * cube and j >= 2 * cube) else cube


def cash_points(p: np.ndarray, score: MatchScore) -> tuple[np.ndarray, np.ndarray]:
    """Live-cube cash points (mine, the opponent's), each ``(N,)``: the winning chance (of that side) at which it
    should cash, found recursively from the highest cube level at which a double is still meaningful
    (gnubg matchequity.c GetPoints)."""
    g0, b0, g1, b1 = _ratios(p)
    g, b = (g0, g1), (b0, b1)
    i, j = score.away_me - 1, score.away_opp - 1
    top, levels = score.cube, 0
    while i >= 2 * top and j >= 2 * top:
        levels += 1
        top *= 2

    def mwc(k: int, winner: int, points: int) -> float:
        """MWC of side k (0 = me) when ``winner`` scores ``points``."""
        m = score.mwc_if(winner, points)
        return m if k == 0 else 1.0 - m

    live: dict[tuple[int, int], np.ndarray] = {}
    for n in range(levels, -1, -1):
        cv = score.cube * 2**n
        prime = (_cube_prime(i, j, cv), _cube_prime(j, i, cv))
        for k in (0, 1):
            o = 1 - k
            if i < 2 * cv or j < 2 * cv:
                pk = prime[k]
                dtl = (1 - g[o] - b[o]) * mwc(k, o, 2 * pk) + g[o] * mwc(k, o, 4 * pk) + b[o] * mwc(k, o, 6 * pk)
                dtw = (1 - g[k] - b[k]) * mwc(k, k, 2 * pk) + g[k] * mwc(k, k, 4 * pk) + b[k] * mwc(k, k, 6 * pk)
                live[k, n] = _div(dtl - mwc(k, k, cv), dtl - dtw)
            else:
                rdp, dp = mwc(k, o, 2 * cv), mwc(k, k, cv)
                dtw = (1 - g[k] - b[k]) * mwc(k, k, 2 * cv) + g[k] * mwc(k, k, 4 * cv) + b[k] * mwc(k, k, 6 * cv)
                live[k, n] = 1.0 - live[o, n + 1] * _div(dp - dtw, rdp - dtw)
    return live[0, 0], live[1, 0]


def match_cubeful_mwc(p: np.ndarray, score: MatchScore, owner: int, x: float) -> np.ndarray:
    """Cubeful match winning chance of the side on roll, ``(N, 5)`` -> ``(N,)`` float64.

    Cubeless where the cube is dead (:attr:`MatchScore.cube_alive`); otherwise ``(1 - x) * dead + x * live`` with live
    interpolated linearly in the winning chance w between: (0, lose with my gammon ratios), (opponent's too-good
    point 1 - CP_opp, opponent cashes), (my too-good point CP_me, I cash), (1, win with my gammon ratios); the points
    that the cube position makes unreachable are left out (gnubg Cl2CfMatchCentered / Owned / Unavailable).
    """
    dead = match_cubeless_mwc(p, score)
    if not score.cube_alive:
        return dead
    w = np.asarray(p, dtype=np.float64)[:, 0]
    g0, b0, g1, b1 = _ratios(p)
    (w1, w2, w3), (l1, l2, l3) = score.results()
    cp_me, cp_opp = cash_points(p, score)
    tg, opp_tg = cp_me, 1.0 - cp_opp
    lose = (1 - g1 - b1) * l1 + g1 * l2 + b1 * l3
    win = (1 - g0 - b0) * w1 + g0 * w2 + b0 * w3
    low = np.where(opp_tg > 0, _lerp(w, 0.0, lose, opp_tg, l1), lose)
    high = np.where(tg < 1, _lerp(w, tg, w1, 1.0, win), win)
    if owner == 0:
        live = np.where(w <= opp_tg, low, np.where(w < tg, _lerp(w, opp_tg, l1, tg, w1), high))
    elif owner > 0:
        live = np.where(w <= tg, np.where(tg > 0, _lerp(w, 0.0, lose, tg, w1), lose), high)
    else:
        live = np.where(w <= opp_tg, low, _lerp(w, opp_tg, l1, 1.0, win))
    return dead * (1.0 - x) + live * x
