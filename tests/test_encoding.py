"""Input encoding: the starting position written out by hand, symmetry, and the expert features against oracles."""

from __future__ import annotations

import numpy as np
import pytest

from bgbot.evaluation import encoding
from bgbot.rules import board
from bgbot.rules.board import BAR
from tests.gnubg_oracle import from_gnubg_after, to_gnubg


def _side_by_hand() -> list[float]:
    """One side of the starting position: 2 on 24, 5 on 13, 3 on 8, 5 on 6; nothing on the bar or off."""
    units = []
    for point in range(1, 25):
        units += {
            6: [1, 1, 1, 1.0],  # 5 checkers: >=1, >=2, >=3, (5-3)/2
            8: [1, 1, 1, 0.0],  # 3 checkers
            13: [1, 1, 1, 1.0],  # 5 checkers
            24: [1, 1, 0, 0.0],  # 2 checkers
        }.get(point, [0, 0, 0, 0.0])
    return units + [0.0, 0.0]  # bar / 2, off / 15


def test_starting_position_by_hand():
    # Escapes of the back checker on 24: the opponent holds my 19, 17 and 12 (distances 5, 7, 12). Blocked rolls:
    # sum 5 (14, 23: 4 rolls), sum 7 (16, 25, 34: 6), sum 12 (66: 1), and 55 (both single-die points blocked: 1) ->
    # 36 - 12 = 24 rolls escape.
    expert = [1.67, 1.67, 0.0, 0.0, 0.0, 24 / 36, 24 / 36]  # pips/100, race, shots (no blots), escapes
    expected = np.array(_side_by_hand() + _side_by_hand() + expert, dtype=np.float32)
    assert expected.shape == (encoding.N_FEATURES,) == (203,)
    x = encoding.encode(board.starting_position()[None])
    assert x.dtype == np.float32 and x.shape == (1, 203)
    np.testing.assert_allclose(x[0], expected, rtol=0, atol=1e-6)


def test_version_and_names():
    assert encoding.ENCODING_VERSION == "tesauro196+expert7/v1"
    assert len(encoding.FEATURE_NAMES) == encoding.N_FEATURES
    assert encoding.FEATURE_NAMES[encoding.I_RACE] == "race"


def _random_positions(n: int, seed: int) -> np.ndarray:
    """Random legal-looking positions: each side's 15 checkers spread over its points, bar and off."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 26), dtype=np.int8)
    for row in out:
        mine = np.bincount(rng.integers(0, 26, size=15) * (rng.random(15) < 0.9), minlength=26)  # index 0 = off
        theirs = np.bincount(rng.integers(0, 26, size=15) * (rng.random(15) < 0.9), minlength=26)
        mine[0] = 0
        theirs[0] = 0
        row[:] = mine
        for q in np.flatnonzero(theirs):  # opponent's index q (own numbering, 25 = bar) is my index 25 - q
            if row[25 - q] > 0 and 25 - q not in (0, 25):
                continue  # point taken by me: leave those checkers off
            row[25 - q] = -theirs[q]
    return out


def test_flip_swaps_sides():
    x = _random_positions(500, seed=1)
    a, b = encoding.encode(x), encoding.encode(board.flip(x))
    n = encoding.N_TESAURO_SIDE
    np.testing.assert_array_equal(a[:, :n], b[:, n : 2 * n])
    np.testing.assert_array_equal(a[:, n : 2 * n], b[:, :n])
    for i in (encoding.I_PIPS, encoding.I_SHOTS, encoding.I_ESCAPES):
        np.testing.assert_array_equal(a[:, i], b[:, i + 1])
    np.testing.assert_array_equal(a[:, encoding.I_RACE], b[:, encoding.I_RACE])


def test_units_against_scalar_twin():
    x = _random_positions(300, seed=2)
    enc = encoding.encode(x)
    for row, e in zip(x, enc):
        for p in range(1, 25):
            n = max(int(row[p]), 0)
            assert list(e[4 * (p - 1) : 4 * p]) == [n >= 1, n >= 2, n >= 3, max(n - 3, 0) / 2]
        assert e[96] == row[25] / 2 and e[97] == pytest.approx((15 - row[row > 0].sum()) / 15)
        assert e[196] == pytest.approx(sum(p * max(int(row[p]), 0) for p in range(26)) / 100)


def test_race_flag():
    p = np.zeros(26, dtype=np.int8)
    p[[3, 5]] = [7, 8]
    p[[10, 20]] = [-7, -8]
    assert encoding.is_race(p) and encoding.encode(p[None])[0, encoding.I_RACE] == 1.0
    p[11], p[5] = 1, 7
    assert not encoding.is_race(p) and not encoding.is_race(board.flip(p))


def test_shots_by_hand():
    p = np.zeros(26, dtype=np.int8)
    p[10] = 2  # my checkers on 10
    p[4] = -1  # an opponent blot 6 pips ahead
    p[20] = -14
    # Hitting 6 away: any roll with a 6 (11), 5-1, 4-2 (4), 3-3, 2-2 (2) -> 17 rolls.
    assert encoding.encode(p[None])[0, encoding.I_SHOTS] == pytest.approx(17 / 36)
    p[[7, 8]] = -2  # the opponent makes my 7 and 8: 4-2 (via 8 or 6... 6 open) stays, 3-3 via 7 blocked, 2-2 via 8
    # 6s: 11; 5-1: via 5 (open) -> 2; 4-2: via 6 (open) -> 2; 3-3: lands on 7 (blocked) -> 0; 2-2: 8 blocked -> 0.
    assert encoding.encode(p[None])[0, encoding.I_SHOTS] == pytest.approx(15 / 36)


def _exact_shots(position: np.ndarray) -> int:
    """Rolls (of 36) with which some legal play of the side on roll hits: gnubg-nn's move generator as the oracle."""
    import gnubg_nn

    gboard = to_gnubg(position)
    before = -int(position[0])
    count = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            keys = gnubg_nn.moves(gboard, d1, d2)
            after = [from_gnubg_after(gnubg_nn.board_from_position_key(k)) for k in keys]
            if any(a[25] > before for a in after):  # the opponent, now on roll, has more checkers on its bar
                count += 1 if d1 == d2 else 2
    return count


@pytest.mark.parametrize("on_bar", [False, True])
def test_shots_against_legal_plays(on_bar):
    """The shot count is the exact one up to the rare cases where the rules forbid a hitting checker's whole play
    (e.g. the second die cannot be played after the hit); on these samples it was exact on every position."""
    x = _random_positions(600, seed=4 + on_bar)
    x = x[((x[:, 25] > 0) == on_bar) & ~encoding.is_race(x)][:150]
    ours = np.rint(encoding.encode(x)[:, encoding.I_SHOTS] * 36).astype(int)
    exact = np.array([_exact_shots(p) for p in x])
    assert (ours > 0).mean() > 0.5
    assert (ours == exact).mean() > 0.97


def _scalar_shots(p: np.ndarray) -> int:
    """Rolls (of 36) with which the side on roll hits a blot by the rule the shot inputs state, one roll and one blot
    at a time: a twin of the vectorised count (``k`` checkers on the bar enter first; a non-double's other die moves
    any checker only when ``k == 1``; a checker may move on only through open points)."""
    k = int(p[BAR])
    open_ = [i == 0 or i == BAR or p[i] > -2 for i in range(26)]
    blot = [1 <= i <= 24 and p[i] == -1 for i in range(26)]

    def hits_from(start: int, steps: list[int]) -> bool:  # one checker moving the dice in order, hitting on the way
        at = start
        for s in steps:
            at -= s
            if at < 1 or not open_[at]:
                return False
            if blot[at]:
                return True
        return False

    checkers = [i for i in range(1, BAR) if p[i] > 0]
    count = 0
    for a in range(1, 7):
        for b in range(a, 7):
            if a != b:
                if k == 0:
                    hit = any(hits_from(c, [a, b]) or hits_from(c, [b, a]) for c in checkers)
                elif k == 1:
                    hit = any(
                        open_[BAR - e]
                        and (hits_from(BAR, [e]) or hits_from(BAR, [e, o]) or any(hits_from(c, [o]) for c in checkers))
                        for e, o in ((a, b), (b, a))
                    )
                else:
                    hit = hits_from(BAR, [a]) or hits_from(BAR, [b])
                count += 2 * hit
            else:
                if k and not open_[BAR - a]:
                    continue
                left = 4 - min(k, 4)  # moves after every checker on the bar has entered
                hit = (k > 0 and hits_from(BAR, [a] * (1 + left))) or any(hits_from(c, [a] * left) for c in checkers)
                count += hit
    return count


def test_shots_equal_a_scalar_twin():
    """The vectorised shot counts (every roll at once, positions with and without checkers on the bar in one pass)
    equal the rule played out one roll at a time, for both sides, with 0 to 4+ checkers on the bar."""
    rng = np.random.default_rng(12)
    x = _random_positions(400, seed=13)
    bar = _random_positions(400, seed=14)
    bar[:, BAR] = rng.integers(1, 6, size=len(bar))  # 1..5 on my bar, the rest of my checkers as they fell
    bar[:, 0] = np.where(rng.random(len(bar)) < 0.5, -rng.integers(1, 6, size=len(bar)), bar[:, 0])
    x = np.concatenate([x, bar])
    enc = encoding.encode(x)
    got = np.rint(enc[:, encoding.I_SHOTS : encoding.I_SHOTS + 2] * 36).astype(int)
    want = np.array([[_scalar_shots(p), _scalar_shots(board.flip(p))] for p in x])
    assert (want > 0).mean() > 0.5 and (x[:, BAR] > 1).sum() > 100
    np.testing.assert_array_equal(got, want)


def test_sparse_encoding_sums_to_the_dense_inputs():
    """Each position's inputs are the sum of its sparse rows: on random and on real GNU Backgammon self-play positions
    (the pip inputs differ only by float32 rounding), and every row index is in range."""
    from tests.test_movegen import selfplay_positions

    x = np.concatenate([_random_positions(1500, seed=11), selfplay_positions()[:3000], board.starting_position()[None]])
    slots = encoding.sparse_encode(x)
    assert slots.shape == (len(x), encoding.N_SLOTS) and slots.dtype == np.int32
    assert slots.min() >= 0 and slots.max() < encoding.N_SPARSE_ROWS
    np.testing.assert_allclose(encoding.SPARSE_ROWS[slots].sum(axis=1), encoding.encode(x), rtol=0, atol=2e-7)
    off = slots[:, encoding.OFF_SLOT] - encoding._R_OFF  # the one my-off slot: my borne-off count
    np.testing.assert_array_equal(off, board.off_counts(x)[:, 0])
    with pytest.raises(encoding.EncodingError):
        encoding.sparse_encode(np.zeros((3, 25), dtype=np.int8))
