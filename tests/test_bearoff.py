"""Exact endgames: position classes, bear-off databases, outcome constraints, class dispatch.

Oracles: gnubg-nn (``bearoff_probabilities``, ``probabilities(board, 0)``, ``classify``) and Debian's GNU Backgammon
one-sided database through ``bearoffdump`` (skipped where it is not installed). The full comparisons are run once by
``scripts/check_bearoff.py``; here samples.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import gnubg_nn
import numpy as np
import pytest

from bgbot.api import Bot
from bgbot.evaluation import bearoff, classes
from bgbot.evaluation.evaluator import classified_probabilities, set_class_dispatch
from bgbot.formats.positionid import decode
from bgbot.rules.board import flip
from bgbot.rules.outcomes import constrain_probabilities, possible_outcomes
from tests.gnubg_oracle import to_gnubg
from tests.positions import make_positions

DATA = Path(__file__).parent / "data"
BEAROFFDUMP = "/usr/games/bearoffdump"
OS_FILE = "/usr/share/gnubg/gnubg_os0.bd"


@pytest.fixture(scope="session")
def db(bearoff_db) -> bearoff.Databases:
    return bearoff_db


@pytest.fixture(scope="session")
def bot() -> Bot:
    return Bot.load()


def _selfplay_positions() -> np.ndarray:
    ids = [line.strip() for line in (DATA / "gnubg_selfplay_positions.txt").read_text().splitlines()]
    return np.stack([decode(i) for i in ids if i and not i.startswith("#")])


def _bearoff_position(rng, n_mine: int, n_theirs: int) -> np.ndarray:
    p = np.zeros(26, dtype=np.int8)
    for pt in rng.integers(1, 7, size=n_mine):
        p[pt] += 1
    for pt in rng.integers(1, 7, size=n_theirs):
        p[25 - pt] -= 1
    return p


# ----------------------------------------------------------------------------------------------- classes


def test_classes_match_gnubg_classify():
    positions = np.concatenate([_selfplay_positions(), make_positions(3000, seed=11)])
    ours = classes.classify_batch(positions)
    theirs = np.array([gnubg_nn.classify(to_gnubg(p)) for p in positions])
    np.testing.assert_array_equal(ours, theirs)  # gnubg-nn's codes are the same: over 0 ... contact 5
    assert set(np.unique(ours)) >= {classes.BEAROFF_OS, classes.RACE, classes.CONTACT, classes.CRASHED}


def test_classify_names():
    assert classes.classify(decode("TwAAwB0AAAAAAA")) == "bearoff-two-sided"
    assert classes.classify(decode("4P8PAAABAAAAAA")) == "bearoff-one-sided"
    assert classes.classify(decode("mxmAQ4PbAQAAAA")) == "race"
    assert classes.classify(decode("4HPwATDgc/ABMA")) == "contact"
    assert classes.efficiency_for("crashed") == 0.68 and classes.efficiency_for("bearoff-two-sided") == 0.6


# ----------------------------------------------------------------------------------------------- one-sided


def _gnubg_off(counts) -> np.ndarray:
    """gnubg's distribution in our indexing (index k = k rolls; gnubg's list starts at 1 roll)."""
    g = np.asarray(gnubg_nn.bearoff_probabilities(tuple(int(c) for c in counts)))
    out = np.zeros(bearoff.MAX_ROLLS)
    out[1 : 1 + len(g)] = g
    return out


def test_one_sided_against_gnubg_sample(db):
    rng = np.random.default_rng(5)
    rows = np.r_[1:200, rng.choice(np.arange(200, bearoff.N_OS), 1800, replace=False)]
    ours = db.off[rows]
    theirs = np.stack([_gnubg_off(c) for c in bearoff.os_positions()[rows]])
    k = np.arange(bearoff.MAX_ROLLS)
    assert np.abs(ours @ k - theirs @ k).max() < 5e-4
    diff = np.abs(ours - theirs).max(axis=1)
    assert diff.max() < 5e-3
    assert (diff < 1e-4).mean() >= 0.99


def test_one_sided_known_values(db):
    one = bearoff.os_index(np.array([[1, 0, 0, 0, 0, 0]]))[0]
    assert db.off[one, 1] == 1.0 and db.off[0, 0] == 1.0
    assert db.first[one, 0] == 1.0  # fewer than 15 checkers: one already off
    three = bearoff.os_index(np.array([[3, 0, 0, 0, 0, 0]]))[0]
    np.testing.assert_allclose(db.off[three, 1:3], [1 / 6, 5 / 6])  # one roll with a double, else two
    fifteen = bearoff.os_index(np.array([[0, 0, 0, 0, 0, 15]]))[0]
    assert db.first[fifteen, 1] == pytest.approx(17 / 36)  # a 6 bears one off at once (gnubg: 47.222%)


def _bearoffdump_first(gnubg_id: int) -> np.ndarray:
    """The "Bearing at least one chequer off" Opponent column of ``bearoffdump gnubg_os0.bd -n ID``."""
    text = subprocess.run([BEAROFFDUMP, OS_FILE, "-n", str(gnubg_id)], capture_output=True, text=True).stdout
    out = np.zeros(bearoff.MAX_ROLLS)
    for m in re.finditer(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", text, re.M):
        out[int(m.group(1))] = float(m.group(5)) / 100
    return out


@pytest.mark.skipif(not (shutil.which(BEAROFFDUMP) and Path(OS_FILE).exists()), reason="GNU Backgammon not installed")
def test_first_checker_off_against_gnubg_file_sample(db):
    rng = np.random.default_rng(3)
    fifteen = np.flatnonzero(bearoff.os_positions().sum(axis=1) == 15)
    for gid in rng.choice(54264, 400, replace=False):
        counts = np.array(gnubg_nn.bearoff_id_2_pos(int(gid)))
        if counts.sum() != 15:
            continue
        i = bearoff.os_index(counts[None])[0]
        assert i in fifteen
        np.testing.assert_allclose(db.first[i], _bearoffdump_first(int(gid)), atol=1e-4)  # gnubg: 16 bits


# ----------------------------------------------------------------------------------------------- two-sided


def test_two_sided_win_against_gnubg(db):
    rng = np.random.default_rng(1)
    positions = np.stack(
        [_bearoff_position(rng, rng.integers(1, 7), rng.integers(1, 7)) for _ in range(6000)]
    )  # 6,000 positions of 1..6 checkers a side
    assert (classes.classify_batch(positions) == classes.BEAROFF_TS).all()
    ours = bearoff.bearoff_probabilities(positions, np.ones(len(positions), dtype=bool), db)
    theirs = np.array([gnubg_nn.probabilities(to_gnubg(p), 0) for p in positions])
    assert np.abs(ours[:, 0] - theirs[:, 0]).max() < 1e-4
    assert (ours[:, 1:] == 0).all()


def test_one_sided_bearoff_probabilities_against_gnubg(db):
    rng = np.random.default_rng(2)
    positions = np.stack(
        [_bearoff_position(rng, rng.integers(1, 16), rng.integers(7, 16)) for _ in range(3000)]
    )  # the opponent has 7+: outside the two-sided database
    assert (classes.classify_batch(positions) == classes.BEAROFF_OS).all()
    ours = bearoff.bearoff_probabilities(positions, np.zeros(len(positions), dtype=bool), db)
    theirs = np.array([gnubg_nn.probabilities(to_gnubg(p), 0) for p in positions])
    err = np.abs(ours - theirs)
    assert err[:, 0].mean() < 0.01 and err.max() < 1e-3


def test_one_sided_probabilities_are_the_formula_bit_for_bit(db):
    """The one-sided values equal the formula written out on whole rows (``w = sum a * P(b >= k)``, the gammons
    where a side has 15 checkers left, else 0), bit for bit, on positions with and without 15 checkers a side."""
    rng = np.random.default_rng(9)
    positions = np.stack(
        [
            _bearoff_position(rng, rng.choice([rng.integers(1, 16), 15]), rng.choice([rng.integers(7, 16), 15]))
            for _ in range(2000)
        ]
    )
    mine, theirs = bearoff.split_sides(positions)
    i, j = bearoff.os_index(mine), bearoff.os_index(theirs)
    checkers = bearoff.os_positions().astype(np.int64).sum(axis=1)
    assert (checkers[i] == 15).any() and (checkers[j] == 15).any() and (checkers[j] < 15).any()
    a, b = db.off[i], db.off[j]
    zero = np.zeros((len(i), 1))
    ge_b = 1.0 - np.concatenate([zero, db.off_cdf[j][:, :-1]], axis=1)
    ge_fb = 1.0 - np.concatenate([zero, db.first_cdf[j][:, :-1]], axis=1)
    expected = np.zeros((len(i), 5), dtype=np.float32)
    expected[:, 0] = (a * ge_b).sum(axis=1)
    expected[:, 1] = np.where(checkers[j] == 15, (a * ge_fb).sum(axis=1), 0.0)
    expected[:, 3] = np.where(checkers[i] == 15, (b * (1.0 - db.first_cdf[i])).sum(axis=1), 0.0)
    np.clip(expected, 0.0, 1.0, out=expected)
    ours = bearoff.bearoff_probabilities(positions, np.zeros(len(positions), dtype=bool), db)
    assert np.array_equal(ours, expected)


def test_tiny_two_sided_by_hand(db):
    p = np.zeros(26, dtype=np.int8)
    p[1], p[24] = 1, -1  # each side one checker on its 1-point: I win on my roll
    assert bearoff.two_sided_equities(p, db) == {"win": 1.0, "own": 1.0, "centre": 1.0, "opp": 1.0}
    p[1], p[6] = 0, 1  # my checker on the 6-point: 6 -> off needs 6+ (or 3-3 etc.)...
    v = bearoff.two_sided_equities(p, db)
    # I win at once with any roll of 6 pips that reaches: 6-x, 5-1, 4-2, 3-3, 2-2 (8 pips), 4-3.. : all sums >= 6
    sums = np.array([a + b if a != b else 4 * a for a in range(1, 7) for b in range(1, 7)])
    assert v["win"] == pytest.approx((sums >= 6).mean())


# ----------------------------------------------------------------------------------------------- cache


def test_cache_rejects_truncated_and_altered_files(db, tmp_path, monkeypatch):
    monkeypatch.setenv(bearoff.CACHE_ENV, str(tmp_path))
    path = bearoff.cache_path()
    assert path.parent == tmp_path
    bearoff._write(path, db)
    good = bearoff._read(path)
    assert good is not None and np.array_equal(good.ts, db.ts)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert bearoff._read(path) is None
    assert bearoff._read(_altered(db, tmp_path)) is None
    # load() rebuilds (here: a stand-in build) and rewrites a bad file
    path.write_bytes(b"not a database")
    calls = []
    monkeypatch.setattr(bearoff, "build", lambda: calls.append(1) or db)
    assert bearoff.load() is db and calls == [1]
    assert bearoff._read(path) is not None


def _altered(db, tmp_path) -> Path:
    """A well-formed file whose checksum no longer matches its arrays."""
    out = tmp_path / "altered.npz"
    bearoff._write(out, db)
    with np.load(out, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["off"] = arrays["off"].copy()
    arrays["off"][5, 3] += 0.01
    np.savez(out, **arrays)
    return out


# ----------------------------------------------------------------------------------------------- outcomes


def test_constraints_rules():
    p = np.zeros(26, dtype=np.int8)
    p[[1, 2]] = [3, 2]  # me: 5 checkers (10 off)
    p[[10, 20]] = [-7, -8]  # them: 15, no contact, none in my home board
    ok = possible_outcomes(p[None])[0]
    assert ok.tolist() == [True, True, False, False, False]
    q = constrain_probabilities(np.array([[0.9, 0.95, 0.2, 0.3, 0.1]], dtype=np.float32), ok[None])
    np.testing.assert_allclose(q, [[0.9, 0.9, 0.0, 0.0, 0.0]])
    p[[10, 5]] = [0, -7]  # seven of theirs in my home board: a backgammon is possible
    assert possible_outcomes(p[None])[0].tolist() == [True, True, True, False, False]


def test_no_impossible_outcomes_on_real_and_generated_positions(bot):
    positions = np.concatenate([_selfplay_positions(), make_positions(3000, seed=7)])
    positions = np.concatenate([positions, flip(positions)])  # both sides
    probs, codes = classified_probabilities(bot.evaluator, positions)
    ok = possible_outcomes(positions)
    assert (probs[~ok] == 0).all()
    w, wg, wbg, lg, lbg = probs.T
    assert (wbg <= wg).all() and (wg <= w).all() and (lbg <= lg).all() and (lg <= 1 - w + 1e-7).all()
    assert ((probs >= 0) & (probs <= 1)).all()
    assert (~ok).sum() > 500  # the test has teeth: many outcomes are impossible here


def test_dispatch_switch(bot):
    positions = np.stack([decode("mxmAQ4PbAQAAAA"), decode("TwAAwB0AAAAAAA")])
    exact, codes = classified_probabilities(bot.evaluator, positions)
    assert [classes.CLASS_NAMES[c] for c in codes] == ["race", "bearoff-two-sided"]
    assert exact[0, 1] == 0.0 and exact[1, 0] == pytest.approx(0.7734, abs=1e-4)
    previous = set_class_dispatch(False)
    try:
        raw, _ = classified_probabilities(bot.evaluator, positions)
    finally:
        set_class_dispatch(previous)
    np.testing.assert_array_equal(raw, bot.evaluator.evaluate(positions))


# ----------------------------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    "args, action, key, value, evaluator",
    [
        (("4P8PAAABAAAAAA", "--jacoby", "off"), "Too good to double, pass", "no_double", 2.0, "bearoff-one-sided"),
        (("4P8PAAABAAAAAA", "--jacoby", "on"), "Double, pass", "double_take", 4.0, "bearoff-one-sided"),
        (("4P8HAIAAAAAAAA",), "Double, pass", "double_take", 2.0, "bearoff-one-sided"),
        (("TwAAwB0AAAAAAA", "--jacoby", "off"), "Double, pass", "no_double", 0.753, "bearoff-two-sided"),
    ],
)
def test_exact_cube_answers(bot, args, action, key, value, evaluator):
    from bgbot.commands import cube

    ns = type("A", (), {"jacoby": None, "probabilities": None, "ply": 0, "cube_search": False})()
    if "--jacoby" in args:
        ns.jacoby = args[2]
    result = cube.answer(bot, args[0], ns)
    assert result["action"] == action
    assert result["equities"][key] == pytest.approx(value, abs=5e-4)
    assert result["evaluator"] == evaluator
    if args[0] == "TwAAwB0AAAAAAA":
        assert result["probabilities"]["win"] == pytest.approx(0.773, abs=5e-4)
        assert result["equities"]["double_take"] == pytest.approx(1.094, abs=5e-4)


def test_gammons_exactly_zero_once_borne_off(bot):
    p, evaluator = bot.evaluate_with_class("mxmAQ4PbAQAAAA")
    assert p.win_gammon == 0.0 and p.win_backgammon == 0.0 and evaluator == "race"


def test_move_ends_the_game_first(bot):
    plays = bot.rank_plays("2W8AAFAAAAAAAA", "61")
    assert plays[0].play == "2/off 1/off" and plays[0].evaluator == "over"
    assert plays[1].evaluator == "bearoff-one-sided"
    assert plays[0].to_json()["evaluator"] == "over"


def test_one_sided_positions_are_every_count_of_at_most_15_checkers_in_key_order():
    """The one-sided index: C(21, 6) = 54,264 distinct positions (every way to put 0..15 checkers on six points, by
    stars and bars), none over 15 checkers, in strictly increasing key order from the empty board."""
    pos = bearoff.os_positions()
    assert pos.shape == (54264, 6) and pos.dtype == np.int8
    assert pos.min() == 0 and pos.sum(axis=1).max() == 15
    keys = (pos.astype(np.int64) << (4 * np.arange(6))).sum(axis=1)
    assert keys[0] == 0 and (np.diff(keys) > 0).all()
    assert bearoff.os_index(pos).tolist() == list(range(len(pos)))


def test_cache_path_follows_the_environment_after_it_is_resolved(monkeypatch, tmp_path):
    monkeypatch.setenv(bearoff.CACHE_ENV, str(tmp_path / "a"))
    first = bearoff.cache_path()
    assert first == tmp_path / "a" / bearoff.CACHE_NAME and bearoff.cache_path() is first  # the second: a lookup
    monkeypatch.setenv(bearoff.CACHE_ENV, str(tmp_path / "b"))
    assert bearoff.cache_path() == tmp_path / "b" / bearoff.CACHE_NAME
    monkeypatch.delenv(bearoff.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert bearoff.cache_path() == tmp_path / "xdg" / "bgbot" / bearoff.CACHE_NAME
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert bearoff.cache_path() == tmp_path / "home" / ".cache" / "bgbot" / bearoff.CACHE_NAME
    monkeypatch.setenv(bearoff.CACHE_ENV, str(tmp_path / "a"))
    assert bearoff.cache_path() == first
