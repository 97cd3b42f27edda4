"""The batched game engine, the arena's statistics, and the tournament command's hostile inputs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats as scipy_stats

from bgbot.arena import engine, stats, tournament
from bgbot.arena.players import NetPlayer, PubevalPlayer
from bgbot.cli import main
from bgbot.errors import BgbotError
from bgbot.evaluation import checkpoint
from bgbot.evaluation.network import NetConfig, ValueNet
from bgbot.formats import matfile
from tests.positions import position

ROOT = Path(__file__).resolve().parents[1]


def _fixed_dice(d1: int, d2: int):
    def roll(table, idx):
        return np.tile(np.array([d1, d2], dtype=np.int8), (len(idx), 1))

    return roll


# -- the engine -----------------------------------------------------------------------------------------------------


def test_games_from_given_positions_end_and_score_with_the_cube():
    """Rollout-style starts: given positions, seats and dice; a bear-off that wins a backgammon, a gammon under the
    Jacoby rule with the cube centred (1 point), and a single game doubled to 4."""
    bg = position({1: 2}, {24: 1, 6: 14})  # I bear off my last two; it has a checker in my home board, none off
    gammon = position({1: 2}, {20: 15})  # none off, nothing in my home: a gammon
    single = position({1: 2}, {20: 14})  # it has one checker off: a single game
    t = engine.Table.create(3)
    t.start(np.arange(3), seat=np.array([0, 1, 0]), positions=np.stack([bg, gammon, single]))
    t.cube[2] = 4
    t.owner[2] = 1
    ends = []
    ply = engine.play_ply(
        t,
        _fixed_dice(6, 5),
        (PubevalPlayer(), PubevalPlayer()),
        cube=engine.CubePhase(engine.CubeRules(0, jacoby=True)),
        on_end=lambda tab, idx, w, p, k: ends.append((idx.tolist(), w.tolist(), p.tolist(), k.tolist())),
    )
    assert ply.result.tolist() == [3, 2, 1] and not t.active.any()
    assert ply.ended.tolist() == [0, 1, 2] and ply.winner.tolist() == [0, 1, 0]
    assert ply.points.tolist() == [1, 1, 4]  # Jacoby: centred cube scores single; the owned cube of 4 counts
    assert ply.kind.tolist() == [3, 2, 1]
    assert ends == [([0, 1, 2], [0, 1, 0], [1, 1, 4], [3, 2, 1])]
    assert (t.turn == 1).all() and t.seat.tolist() == [1, 0, 1]
    # Without the cube phase the engine scores cubeless: 3, 2, 1 times the cube.
    t.start(np.arange(3), seat=0, positions=np.stack([bg, gammon, single]))
    ply = engine.play_ply(t, _fixed_dice(6, 5), (PubevalPlayer(),))
    assert ply.points.tolist() == [3, 2, 1] and ply.mover.tolist() == [0, 0, 0]


class _SureWinner(PubevalPlayer):
    """Pubeval's checker play; before the roll it claims a sure win (so it doubles and its opponent passes)."""

    def probabilities(self, positions):
        return np.tile([1.0, 0.0, 0.0, 0.0, 0.0], (len(positions), 1))


def test_cube_phase_before_the_first_ply_only_when_asked():
    """A game started from a position has no cube action before its first ply unless ``first_ply`` (rollouts of a
    play, where the opponent may double at once)."""
    pos = position({6: 3, 5: 3}, {19: 3, 20: 3})
    for first_ply, doubled in ((False, []), (True, [0])):
        t = engine.Table.create(1)
        t.start(np.arange(1), positions=pos[None])
        phase = engine.CubePhase(engine.CubeRules(0, jacoby=False), first_ply=first_ply)
        ply = engine.play_ply(t, _fixed_dice(2, 1), (_SureWinner(), _SureWinner()), cube=phase)
        assert ply.doubled.tolist() == doubled
        if first_ply:  # too good? the sure winner's double is passed by its opponent, also a sure winner
            assert ply.ended.tolist() == [0] and ply.kind.tolist() == [0] and ply.points.tolist() == [1]


def test_a_game_past_the_ply_limit_raises():
    t = engine.Table.create(1)
    t.start(np.arange(1))
    t.turn[0] = 10
    with pytest.raises(engine.EngineError, match="past 10 plies"):
        engine.play_ply(t, _fixed_dice(3, 1), (PubevalPlayer(), PubevalPlayer()), max_plies=10)


class NanEvaluator:
    def evaluate(self, positions):
        return np.full((len(positions), 5), np.nan, dtype=np.float32)


def test_nan_outputs_during_play_stop_with_a_clear_error():
    p = NetPlayer(NanEvaluator(), name="nan")
    with pytest.raises(BgbotError, match="NaN"):
        tournament.play_games(p, PubevalPlayer(), 0, 0, 0, 2)
    with pytest.raises(BgbotError, match="finite"):  # the cube phase reads the same probabilities
        engine.play_ply(
            _table_after_opening(),
            _fixed_dice(3, 1),
            (p, PubevalPlayer()),
            cube=engine.CubePhase(engine.CubeRules(0)),
        )


def _table_after_opening() -> engine.Table:
    t = engine.Table.create(1)
    t.start(np.arange(1))
    t.turn[:] = 1
    return t


def test_a_model_with_nan_weights_in_a_tournament_is_one_error_line(tmp_path, capsys):
    net = ValueNet(NetConfig(n_hidden=4))
    with torch.no_grad():
        for v in net.parameters():
            v.fill_(float("nan"))
    path = checkpoint.save(tmp_path / "nan.pt", net, games_trained=0, training_config={})
    code = main(["tournament", "--player", str(path), "--player", "pubeval", "--games", "4", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "nan" in err.lower() or "finite" in err.lower()


# -- statistics -------------------------------------------------------------------------------------------------------


def test_t_interval_and_wilson_known_values():
    r = stats.t_interval(np.array([1.0, 0.0, -1.0, 0.0]))
    # sd = sqrt(2/3), se = sd / 2, t(0.975, 3) = 3.182446
    assert r["stderr"] == pytest.approx(0.4082483) and r["ci_half_width"] == pytest.approx(3.1824463 * 0.4082483)
    # Wilson 95% for 8 of 10: (0.4902, 0.9433) (Newcombe 1998's formula: centre 0.7212, half 0.2266)
    lo, hi = stats.wilson(8, 10)
    assert lo == pytest.approx(0.49016, abs=1e-4) and hi == pytest.approx(0.94332, abs=1e-4)
    assert stats.wilson(10, 10)[1] == 1.0 and stats.wilson(0, 10)[0] == 0.0
    with pytest.raises(stats.StatsError):
        stats.t_interval(np.array([1.0]))


def test_match_win_interval_never_exceeds_100_percent():
    """The reported case: 10 matches where the t-interval over pairs gave [62.2%, 117.8%]."""
    won = np.array([True, True, True, True, True, True, True, True, True, False])
    r = stats.summarize_wins(won)
    assert r["match_win_rate"] == 0.9 and 0 <= r["ci_low"] < r["ci_high"] <= 1
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((0.59585, 0.98212), abs=1e-4)


def test_ranking_interval_equals_the_pairing_interval_with_two_players():
    r = tournament.run(["pubeval", "random"], tournament.TournamentSettings(20, seed=2, workers=1))
    row = r["pairings"][0]
    a, b = sorted(r["ranking"], key=lambda x: x["player"] != "pubeval")
    assert (a["ci_low"], a["ci_high"]) == (row["ci_low"], row["ci_high"])
    assert (b["ci_low"], b["ci_high"]) == (-row["ci_high"], -row["ci_low"])
    assert row["ppg"] == 2.55 and row["ci_low"] == pytest.approx(2.2368185, abs=1e-6)
    m = tournament.run(["pubeval", "random"], tournament.TournamentSettings(10, seed=2, workers=1, match_length=1))
    row = m["pairings"][0]
    lo, hi = stats.wilson(row["wins_a"], 10)
    assert (row["ci_low"], row["ci_high"]) == (lo, hi) and hi <= 1
    a, b = sorted(m["ranking"], key=lambda x: x["player"] != "pubeval")
    assert (a["ci_low"], a["ci_high"]) == (lo, hi)
    assert (b["ci_low"], b["ci_high"]) == pytest.approx(stats.wilson(10 - row["wins_a"], 10))


def test_ranking_over_several_pairings_uses_welch_satterthwaite():
    rows = [
        {"ppg": 0.5, "stderr": 0.1, "df": 9, "ci_low": 0, "ci_high": 1},
        {"ppg": 0.1, "stderr": 0.2, "df": 4, "ci_low": 0, "ci_high": 1},
    ]
    r = stats.ranking(["x", "y", "z"], [(0, 1), (0, 2)], rows)
    x = next(e for e in r if e["player"] == "x")
    var = 0.01 + 0.04
    df = var**2 / (0.01**2 / 9 + 0.04**2 / 4)
    half = scipy_stats.t.ppf(0.975, df) * np.sqrt(var) / 2
    assert x["value"] == pytest.approx(0.3) and x["ci_half_width"] == pytest.approx(half)


# -- the tournament command: hostile inputs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--workers", "0"], "workers"),
        (["--workers", "-1"], "workers"),
        (["--seed", "18446744073709551616"], "seed"),
        (["--seed", "-1"], "seed"),
        (["--games", "10101010101010101010"], "at most"),
        (["--games", "2"], "even number >= 4"),
        (["--jacoby", "off"], "--cube"),
        (["--match-length", "0"], "--match-length"),
        (["--cube", "--match-length", "3", "--jacoby", "on"], "matches"),
        (["--out", ""], "--out"),
    ],
)
def test_hostile_tournament_arguments_are_one_error_line(extra, message, capsys):
    argv = ["tournament", "--player", "random", "--player", "pubeval", "--games", "4", "--workers", "1", *extra]
    t0 = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - t0 < 5  # refused up front, nothing played
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("error: ") and out.err.count("\n") == 1 and message in out.err


def test_runaway_game_count_is_refused_in_bounded_memory():
    """The reported runaway (5.8 GB in 16 s): a separate process, its peak memory measured."""
    code = (  # VmHWM: this process's peak resident memory (ru_maxrss would include the parent's, kept across exec)
        "from bgbot.cli import main\n"
        "rc = main(['tournament', '--player', 'random', '--player', 'pubeval', '--games', '10101010101010101010'])\n"
        "hwm = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')][0]\n"
        "print(rc, hwm)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    rc, peak_kib = map(int, r.stdout.split())
    assert rc == 2 and "at most 10,000,000" in r.stderr, r.stderr
    assert peak_kib < 400 * 1024, peak_kib  # KiB: the interpreter, numpy and scipy, no game state


def test_unwritable_out_keeps_the_results(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    argv = ["tournament", "--player", "pubeval", "--player", "random", "--games", "4", "--workers", "1", "--json"]
    assert main([*argv, "--out", str(blocker / "sub")]) == 2
    out = capsys.readouterr()
    r = json.loads(out.out)  # the results were printed in full before the files were tried
    assert r["pairings"][0]["games"] == 4 and r["pairings"][0]["mat_file"].endswith("01_pubeval_vs_random.mat")
    assert out.err.startswith("error: 1 of 1 .mat file(s) not written") and "results above are complete" in out.err


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tiny tmpfs needs root (CI runs as root)")
def test_full_disk_keeps_the_results_and_leaves_no_truncated_mat(tmp_path, capsys):
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)]).returncode != 0:
        pytest.fail("cannot mount a tmpfs as root")
    try:
        argv = ["tournament", "--player", "pubeval", "--player", "random", "--games", "40", "--workers", "1"]
        assert main([*argv, "--out", str(mnt)]) == 2
        out = capsys.readouterr()
        assert "Ranking" in out.out and "not written" in out.err
        assert list(mnt.iterdir()) == []  # no truncated file, no temporary file
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_write_atomic_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "a.mat"
    matfile.write_atomic(path, "old")

    def fail(*a):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        matfile.write_atomic(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.mat"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_only_and_not_with_quiet(monkeypatch, capsys):
    argv = ["tournament", "--player", "pubeval", "--player", "random", "--games", "4", "--workers", "1"]
    for extra, shown in (([], True), (["--quiet"], False)):
        err = _Tty()
        monkeypatch.setattr(sys, "stderr", err)
        assert main(argv + extra) == 0
        assert ("game" in err.getvalue()) == shown
    monkeypatch.undo()
    assert main(argv) == 0  # stderr captured by pytest: not a terminal, no bar
    assert capsys.readouterr().err == ""
