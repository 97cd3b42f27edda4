"""The decision benchmark's committed set (``tests/data/decision_set.txt``), how ``--make-set`` builds one from its
source, the source's generator (``scripts/make_bench_positions.py``), and the paired bootstrap interval of the ratio of
mean errors that ``scripts/bench_decisions.py`` reports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena.stats import MIN_INTERVAL_DECISIONS, StatsError, mean_interval, ratio_interval
from bgbot.errors import BgbotError
from bgbot.evaluation import specialists
from bgbot.rules.board import game_result
from bgbot.rules.movegen import generate_plays

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _decisions(pos: np.ndarray, dice: np.ndarray) -> dict[str, tuple[int, int]]:
    """Per class: (positions, positions with at least two legal plays for their roll)."""
    classes = specialists.classify(pos)
    plays = np.array([len(generate_plays(pos[i : i + 1], dice[i : i + 1]).afterstates) for i in range(len(pos))])
    names = {1: "contact", 2: "crashed", 3: "race"}
    return {n: (int((classes == c).sum()), int(((classes == c) & (plays >= 2)).sum())) for c, n in names.items()}


def test_the_committed_set_holds_a_thousand_race_and_crashed_checker_play_decisions():
    """At least 1,000 crashed and 1,000 race positions with two or more legal plays for their stored roll, and 2,000
    contact ones, all unfinished, each a line of the source with that line's roll (seed 2026); the header's counts
    are the file's."""
    bench = _load("bench_decisions")
    ids, pos, dice = bench.load_set(DATA / "decision_set.txt")
    counts = _decisions(pos, dice)
    assert counts["crashed"][1] >= 1000 and counts["race"][1] >= 1000
    assert counts["contact"][1] == 2000
    assert (game_result(pos) == 0).all()
    header = (DATA / "decision_set.txt").read_text().splitlines()[0]
    assert f"{len(ids)} positions of decision_source.txt" in header
    for name, (n, d) in counts.items():
        assert f"{name} {n} ({d})" in header
    source = bench._ids(DATA / "decision_source.txt")
    rolls = np.random.default_rng(2026).integers(1, 7, size=(len(source), 2))
    j = 0  # the set is a subsequence of the source, each position with its line's roll (the opening recurs)
    for pid, roll in zip(ids, dice):
        while j < len(source) and (source[j] != pid or tuple(rolls[j]) != tuple(roll)):
            j += 1
        assert j < len(source), pid
        j += 1


def test_the_old_set_is_kept_unchanged():
    """``--set tests/data/decision_set_2000.txt`` reproduces the figures measured before the set grew: its 2,000
    positions (344 crashed) are those of ``tests/data/gnubg_selfplay_positions.txt``, which the new source begins with."""
    bench = _load("bench_decisions")
    ids, pos, _ = bench.load_set(DATA / "decision_set_2000.txt")
    assert len(ids) == 2000 and int((specialists.classify(pos) == specialists.CRASHED).sum()) == 344
    old = bench._ids(DATA / "gnubg_selfplay_positions.txt")
    assert set(ids) <= set(old)
    assert bench._ids(DATA / "decision_source.txt")[: len(old)] == old


def test_make_set_fills_each_class_quota_in_source_order(tmp_path):
    """Small quotas: the written set holds exactly that many decisions of each class, the positions are the first of
    each class in the source (those with one legal play kept too), and the header names the command."""
    bench = _load("bench_decisions")
    out = tmp_path / "set.txt"
    quotas = {"contact": 30, "crashed": 4, "race": 6}
    counts = bench.make_set(DATA / "decision_source.txt", out, quotas)
    assert counts["checker_play"] == quotas
    ids, pos, dice = bench.load_set(out)
    got = _decisions(pos, dice)
    assert {k: v[1] for k, v in got.items()} == quotas
    assert {k: v[0] for k, v in got.items()} == counts["positions"]
    source = bench._ids(DATA / "decision_source.txt")
    assert ids[:5] == source[:5]
    text = out.read_text()
    assert "--contact-decisions 30 --crashed-decisions 4 --race-decisions 6" in text.splitlines()[1]
    assert f"--set {out.resolve()}" in text


def test_make_set_refuses_a_source_too_short(tmp_path):
    bench = _load("bench_decisions")
    short = tmp_path / "short.txt"
    short.write_text("# ten positions\n" + "\n".join(bench._ids(DATA / "decision_source.txt")[:10]) + "\n")
    with pytest.raises(
        BgbotError, match="runs out before the set is full: checker-play decisions contact 7 of 2000, crashed 0 of 1000"
    ):
        bench.make_set(short, tmp_path / "set.txt")
    assert not (tmp_path / "set.txt").exists()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("# nothing\n", "holds no positions"),
        ("4HPwATDgc/ABMA 3\n", "not 'ID d1 d2'"),
        ("4HPwATDgc/ABMA 3 7\n", "not 'ID d1 d2'"),
        ("4HPwATDgc/ABM! 3 1\n", "decision set"),
    ],
)
def test_a_bad_set_is_a_bgbot_error_naming_it(tmp_path, text, match):
    bench = _load("bench_decisions")
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    with pytest.raises(BgbotError, match=match):
        bench.load_set(bad)
    with pytest.raises(BgbotError, match="cannot read the decision set"):
        bench.load_set(tmp_path / "missing.txt")


def test_make_bench_positions_out_writes_the_same_games_elsewhere(monkeypatch, tmp_path):
    """``--out`` writes there, never over the default file; one seed's games are one stream, so 50 positions are the
    first 50 lines of the committed 6,000, and the header gives the command."""
    make = _load("make_bench_positions")
    out = tmp_path / "p.txt"
    before = (DATA / "gnubg_selfplay_positions.txt").read_bytes()
    monkeypatch.setattr(sys, "argv", ["make_bench_positions.py", "--positions", "50", "--out", str(out)])
    make.main()
    lines = out.read_text().splitlines()
    assert lines[0].endswith(f"made by: python scripts/make_bench_positions.py --positions 50 --seed 2026 --out {out}")
    assert lines[1:] == before.decode().splitlines()[1:51]
    assert (DATA / "gnubg_selfplay_positions.txt").read_bytes() == before


def test_ratio_interval_of_exact_multiples_is_that_multiple():
    """Model errors exactly 2.5 times the anchor's on every decision: every resample's ratio is 2.5."""
    rng = np.random.default_rng(1)
    anchor = rng.exponential(1.0, 500) * (rng.random(500) < 0.3)
    r = ratio_interval(2.5 * anchor, anchor)
    assert r["ratio"] == pytest.approx(2.5) and r["ci_low"] == pytest.approx(2.5) and r["ci_high"] == pytest.approx(2.5)
    assert r["decisions"] == 500 and r["resamples"] == 10_000


def test_ratio_interval_matches_the_delta_method_and_covers_the_true_ratio():
    """Independent errors with known means 3 and 1 (zero-inflated exponentials, as decision errors are): the interval
    is near the delta method's 3 +- 1.96 se, and over 200 independent data sets it covers 3 about 95% of the time."""
    rng = np.random.default_rng(7)

    def data(n: int) -> tuple[np.ndarray, np.ndarray]:
        hits = rng.random((2, n)) < 0.25
        return rng.exponential(12.0, n) * hits[0], rng.exponential(4.0, n) * hits[1]

    m, a = data(4000)
    r = ratio_interval(m, a)
    ratio = m.mean() / a.mean()
    se = ratio * np.sqrt(m.var(ddof=1) / m.mean() ** 2 / 4000 + a.var(ddof=1) / a.mean() ** 2 / 4000)
    assert r["ratio"] == pytest.approx(ratio)
    assert r["ci_low"] == pytest.approx(ratio - 1.96 * se, abs=0.15 * se * 1.96)
    assert r["ci_high"] == pytest.approx(ratio + 1.96 * se, abs=0.25 * se * 1.96)
    covered = 0
    for seed in range(200):
        m, a = data(400)
        r = ratio_interval(m, a, resamples=1000, seed=seed)
        covered += r["ci_low"] <= 3.0 <= r["ci_high"]
    assert 180 <= covered <= 197


def test_ratio_interval_pairs_the_decisions():
    """Errors that move together (the hard decisions hard for both): the paired interval is much narrower than the
    one of the same values with the pairs broken."""
    rng = np.random.default_rng(3)
    hard = rng.exponential(5.0, 2000)
    m, a = hard * rng.uniform(1.5, 2.5, 2000), hard
    paired = ratio_interval(m, a)
    broken = ratio_interval(m, rng.permutation(a))
    assert paired["ci_high"] - paired["ci_low"] < 0.5 * (broken["ci_high"] - broken["ci_low"])
    assert paired["ci_low"] < 2.0 < paired["ci_high"]


def test_ratio_interval_zero_anchor_and_bad_input():
    """An anchor with no error: the ratio and its upper end are unbounded (+inf), both zero gives 0; fewer than two
    pairs, shapes that differ and negative or NaN errors are StatsErrors."""
    r = ratio_interval(np.array([0.0, 1.0, 0.0]), np.zeros(3), resamples=100)
    assert r["ratio"] == np.inf and r["ci_high"] == np.inf
    assert ratio_interval(np.zeros(4), np.zeros(4), resamples=100)["ratio"] == 0.0
    for num, den in (([1.0], [1.0]), ([1.0, 2.0], [1.0, 2.0, 3.0]), ([1.0, -1.0], [1.0, 1.0]), ([1.0, np.nan], [1, 1])):
        with pytest.raises(StatsError):
            ratio_interval(np.array(num), np.array(den), resamples=100)


def test_mean_interval_of_a_loss_never_reaches_below_zero():
    """Six decisions, five losing nothing and one 50 mp (plus 2 mp): the normal interval, 8.7 +- 16.1 mp, reaches
    below 0; the bootstrap's lower end is 0 (a resample of the five zeros), and six decisions are marked too few."""
    loss = np.array([0.0, 0.0, 0.0, 50.0, 0.0, 2.0])
    normal_low = loss.mean() - 1.96 * loss.std(ddof=1) / np.sqrt(len(loss))
    assert normal_low < -7
    r = mean_interval(loss)
    assert r["mean"] == pytest.approx(52 / 6) and r["ci_low"] == 0.0 and 25.0 <= r["ci_high"] <= 52.0
    assert r["n"] == 6 and r["interval_reliable"] is False
    assert r["interval_note"] == f"too few decisions for a 95% interval: 6 (at least {MIN_INTERVAL_DECISIONS})"


def test_mean_interval_matches_the_normal_one_with_many_decisions_and_refuses_bad_input():
    """4,000 zero-inflated exponential losses: the bootstrap interval is the normal one within a few percent of its
    half-width, reliable; a paired difference may be negative; one sample or a NaN is a StatsError."""
    rng = np.random.default_rng(11)
    loss = rng.exponential(20.0, 4000) * (rng.random(4000) < 0.3)
    r = mean_interval(loss)
    half = 1.96 * loss.std(ddof=1) / np.sqrt(4000)
    assert r["ci_low"] == pytest.approx(loss.mean() - half, abs=0.1 * half)
    assert r["ci_high"] == pytest.approx(loss.mean() + half, abs=0.1 * half)
    assert r["interval_reliable"] is True and r["interval_note"] is None
    diff = mean_interval(loss - loss[::-1] - 1.0)
    assert diff["mean"] == pytest.approx(-1.0) and diff["ci_low"] < diff["mean"] < diff["ci_high"] < 0
    for bad in ([1.0], [1.0, np.nan]):
        with pytest.raises(StatsError):
            mean_interval(np.array(bad))


def test_bench_ratios_write_an_unbounded_end_as_null():
    bench = _load("bench_decisions")
    out = bench._ratios({"all": [1.0, 2.0, 0.0], "race": [1.0]}, {"all": [0.0, 0.0, 0.0], "race": [0.5]})
    assert out["race"] is None
    assert out["all"]["ratio"] is None and out["all"]["ci_high"] is None and out["all"]["decisions"] == 3
