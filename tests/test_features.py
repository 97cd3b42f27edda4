"""GNU Backgammon-class features: the vectorised code against its scalar twin and against the first vectorised
version (kept verbatim in tests/features_reference.py: trained v2 nets depend on the exact values), hand-counted values,
symmetry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from bgbot.evaluation import features as F
from bgbot.rules.board import flip, starting_position
from bgbot.rules.movegen import generate_plays
from tests import features_reference
from tests.positions import make_positions, position
from tests.test_properties import positions as any_position

TARGETS = Path(__file__).resolve().parent.parent / "models" / "candidates" / "gen2" / "ply2-targets"


@pytest.fixture(scope="module")
def diverse() -> np.ndarray:
    p = make_positions(1500, seed=12)  # self-play, random play, bar-heavy, bear-off and closed boards
    return np.concatenate([p, flip(p)])


def test_vectorised_equals_scalar_twin(diverse):
    mine, theirs = F.gnubg_halves(diverse)
    assert (mine[:, 24] == 1).sum() > 50 and (mine[:, 24] >= 2).sum() > 50  # every bar case is exercised
    vec = F.side_features(mine, theirs)
    ref = np.array([F.side_features_scalar(list(map(int, a)), list(map(int, b))) for a, b in zip(mine, theirs)])
    assert vec.shape == (len(diverse), F.N_SIDE) and vec.dtype == np.float32
    for k, name in enumerate(F.NAMES):
        np.testing.assert_allclose(vec[:, k], ref[:, k], rtol=0, atol=1e-6, err_msg=name)
    # every feature varies over the set (a constant column would be a dead input)
    assert (vec.std(axis=0) > 0).all(), [n for n, s in zip(F.NAMES, vec.std(axis=0)) if s == 0]


def test_starting_position_by_hand():
    f = dict(zip(F.NAMES, F.features(starting_position()[None])[0, : F.N_SIDE].tolist()))
    # break contact: the opponent's back checkers are on its 24-point (ob = 0); my checkers on 0-based indices
    # 23 (2), 12 (5), 7 (3), 5 (5) need (i + 1) pips each: 2*24 + 5*13 + 3*8 + 5*6 = 167 -> 1.0
    assert f["break_contact"] == pytest.approx(1.0)
    assert f["back_chequer"] == pytest.approx(23 / 24) and f["back_anchor"] == pytest.approx(23 / 24)
    assert f["forward_anchor"] == pytest.approx(1 / 6)  # the anchor on their 1-point (my 24)
    assert f["off1"] == f["off2"] == f["off3"] == 0.0
    assert f["piploss"] == f["p1"] == f["p2"] == 0.0  # no blots
    assert f["backescapes"] == pytest.approx(24 / 36)  # as the v1 escapes input (tests/test_encoding.py)
    # timing: 13-point 5 -> 3 spare (t 36, 3), 8-point 3 (t 57, 6), 6-point 5 -> 3 spare (t 72, 9); then the empty
    # points 5, 4, 3, 2 each take 2 of the spare checkers (t -= 8, 6, 4, 2): 52; the 1-point (needs 2, 1 left) no
    assert f["timing"] == pytest.approx(0.52)
    assert f["enter"] == 0.0 and f["enter2"] == pytest.approx((36 - 25) / 36)  # they hold one home point
    assert f["backg"] == 0.0 and f["backg1"] == pytest.approx(2 / 8)  # one anchor in their home, 2 checkers
    assert f["freepip"] == 0.0


def test_one_shot_by_hand():
    # My checker on my 8-point, the opponent's blot on my 5-point (3 away), its other 14 on my 19 (its 6-point).
    # Hitting rolls: any 3 (11), 21 (2), 11 (1) = 14; the blot loses 5 pips each time.
    x = position({8: 1}, {5: 1, 19: 14})
    f = F.features(x[None])[0]
    mine, theirs = f[: F.N_SIDE], f[F.N_SIDE :]
    assert mine[F.COL["p1"]] == pytest.approx(14 / 36) and mine[F.COL["p2"]] == 0.0
    assert mine[F.COL["piploss"]] == pytest.approx(14 * 5 / 432)
    # the opponent's blot hits back the same way (its 20-point to its 17-point): also 14 rolls; my blot on my 8-point
    # (8 pips to go) goes back to the bar (25): 17 pips lost
    assert theirs[F.COL["p1"]] == pytest.approx(14 / 36)
    assert theirs[F.COL["piploss"]] == pytest.approx(14 * 17 / 432)
    assert mine[F.COL["off1"]] == 1.0 and mine[F.COL["off2"]] == 1.0 and mine[F.COL["off3"]] == pytest.approx(4 / 5)


def test_bar_entering_by_hand():
    # Two of mine on the bar against their closed 6-, 5- and 4-points (my 19, 20, 21).
    x = position({25: 2, 6: 13}, {19: 2, 20: 2, 21: 2, 1: 9})
    f = F.features(x[None])[0]
    closed = 0b111000  # their points 4, 5, 6
    assert f[F.COL["enter2"]] == pytest.approx((36 - 9) / 36)
    assert f[F.COL["enter"]] == pytest.approx(F._enter_loss(closed, True) / (36 * 49 / 6))


def test_flip_swaps_the_halves(diverse):
    a, b = F.features(diverse), F.features(flip(diverse))
    np.testing.assert_array_equal(a[:, : F.N_SIDE], b[:, F.N_SIDE :])
    np.testing.assert_array_equal(a[:, F.N_SIDE :], b[:, : F.N_SIDE])


def test_equals_the_first_version_on_real_positions_and_afterstates(diverse):
    """Self-play positions of the engine (the gen2 target files), afterstates of their legal plays (one random roll
    each), and the diverse set (bar-heavy, bear-offs, closed boards): every value bit for bit as first shipped."""
    files = sorted(TARGETS.glob("*.npz"))
    assert len(files) >= 10
    rng = np.random.default_rng(3)
    real = np.concatenate([np.load(f)["positions"] for f in files[::3]])  # 20,000 positions
    after = generate_plays(real[:3000], rng.integers(1, 7, (3000, 2))).afterstates
    x = np.concatenate([real, after, diverse])
    mine, theirs = F.gnubg_halves(x)
    assert (mine[:, 24] == 1).sum() > 500 and (mine[:, 24] >= 2).sum() > 500 and (mine.sum(axis=1) < 15).sum() > 500
    new, ref = F.features(x), features_reference.features(x)
    assert new.dtype == np.float32 and new.shape == (len(x), 2 * F.N_SIDE)
    for k in range(2 * F.N_SIDE):
        np.testing.assert_array_equal(new[:, k], ref[:, k], err_msg=F.NAMES[k % F.N_SIDE])
    np.testing.assert_array_equal(F.features_t(x), ref.T)
    for n in (1, 2, 3, 5, 8, 13):  # batches that are not a multiple of the packing width
        np.testing.assert_array_equal(F.features(x[-n:]), ref[-n:])
    assert F.features(x[:0]).shape == (0, 2 * F.N_SIDE) and F.features_t(x[:0]).shape == (2 * F.N_SIDE, 0)
    out = np.full((50, 60), -1.0, dtype=np.float32)
    assert F.features(x[:50], out=out[:, 5:55]) is not None
    np.testing.assert_array_equal(out[:, 5:55], ref[:50])
    assert (out[:, :5] == -1).all() and (out[:, 55:] == -1).all()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_position())
def test_equals_the_first_version_on_random_positions(pos):
    both = np.stack([pos, flip(pos)])
    np.testing.assert_array_equal(F.features(both), features_reference.features(both))


def test_shared_masks_equal_the_v1_encodings_own(diverse):
    """Encoding v2 hands the features' point masks to the v1 sparse encoding: they must be exactly the masks the v1
    encoding computes itself (bars, empty boards, borne-off sides included), and its rows must not change."""
    from bgbot.evaluation import encoding

    x = np.concatenate([diverse, np.zeros((3, 26), dtype=np.int8)])  # and finished, empty boards
    mine, theirs, mine2, theirs2 = encoding._masks(x)
    own = (mine, theirs, mine2, theirs2, encoding._reverse(mine), encoding._reverse(theirs), encoding._reverse(mine2))
    for n in (len(x), 1, 7):
        f_t, masks = F.features_t_and_masks(x[:n])
        np.testing.assert_array_equal(f_t, F.features_t(x[:n]))
        assert len(masks) == 7
        for k, (got, want) in enumerate(zip(masks, own)):
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want[:n], err_msg=f"mask {k}")
        np.testing.assert_array_equal(encoding.sparse_encode(x[:n], masks), encoding.sparse_encode(x[:n]))
    f_t, masks = F.features_t_and_masks(x[:0])
    assert f_t.shape == (2 * F.N_SIDE, 0) and all(m.shape == (0,) for m in masks)


def test_v2_parts_hand_the_sparse_encoding_its_masks_and_borne_off_counts(diverse):
    """The v2 evaluators' inputs (``v2_parts``): the features less each side's first ``skip``, the masks, and the
    borne-off counts that let the v1 sparse encoding skip its own counting: its rows must not change."""
    from bgbot.evaluation import encoding

    x = np.concatenate([diverse, np.zeros((3, 26), dtype=np.int8)])  # and finished, empty boards
    full = F.features_t(x)
    for n in (len(x), 1, 7):
        for skip in (0, 3):
            f_t, masks, off = F.v2_parts(x[:n], skip)
            keep = [k for k in range(2 * F.N_SIDE) if k % F.N_SIDE >= skip]
            np.testing.assert_array_equal(f_t, full[keep, :n])
            assert off.shape == (n, 2) and off.dtype == np.int32
            np.testing.assert_array_equal(encoding.sparse_encode(x[:n], masks, off), encoding.sparse_encode(x[:n]))
    np.testing.assert_array_equal(F.OFF_VALUES[off[:, 0]], full[:3, :n].T)  # the folded borne-off features
    f_t, masks, off = F.v2_parts(x[:0], 3)
    assert f_t.shape == (2 * (F.N_SIDE - 3), 0) and off.shape == (0, 2)


def test_small_batches_take_the_same_values_along_the_rows(diverse, monkeypatch):
    """Batches of at most ``FEW_COLUMNS`` columns (both sides of each position) pack their masks and sum their
    counts along the rows in one numpy call each: every feature and mask equals the row-at-a-time path's, on both
    sides of the threshold."""
    half = F.FEW_COLUMNS // 2  # positions whose stacked batch (rounded up to 4) has FEW_COLUMNS columns
    sizes = (1, 2, 5, 31, half - 1, half, half + 1, half + 4)
    fast = {n: F.v2_parts(diverse[-n:], 3) for n in sizes}
    monkeypatch.setattr(F, "FEW_COLUMNS", -1)  # the row-at-a-time path for every batch
    for n in sizes:
        f_t, masks, off = F.v2_parts(diverse[-n:], 3)
        np.testing.assert_array_equal(fast[n][0], f_t)
        np.testing.assert_array_equal(fast[n][2], off)
        for got, want in zip(fast[n][1], masks):
            np.testing.assert_array_equal(got, want)
    assert len(np.unique(np.concatenate([fast[n][0].ravel() for n in sizes]))) > 100  # real, varied values
