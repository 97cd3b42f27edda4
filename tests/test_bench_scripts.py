"""The benchmark scripts' own game loops: the bare GNU Backgammon reference of scripts/bench_selfplay.py plays only
legal plays (checked against ``gnubg_nn.moves``), so its games/s is that of real games."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import gnubg_nn
import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bare_gnubg_loop_plays_legal_games():
    bench = _load("bench_selfplay")
    rng = random.Random(5)
    start = gnubg_nn.board_from_position_id("4HPwATDgc/ABMA")
    lengths = []
    for g in range(20):
        board = [list(start[0]), list(start[1])]
        gnubg_turn, plies = g % 2 == 0, 0
        d1, d2 = 3, 1
        while True:
            opp, me = board
            legal = set(gnubg_nn.moves(board, d1, d2))
            if gnubg_turn:
                steps = gnubg_nn.best_move(board, d1, d2, n=0) or ()
            else:
                flat = gnubg_nn.pub_best_move(board, d1, d2) or []
                steps = [(flat[i] + 1, flat[i + 1] + 1) for i in range(0, len(flat), 2)]
            bench._play(me, opp, steps)
            plies += 1
            assert min(me + opp) >= 0 and not any(me[i] and opp[23 - i] for i in range(24))
            assert not legal or gnubg_nn.key_of_board([opp, me]) in legal
            if sum(me) == 0:
                break
            board, gnubg_turn = [me, opp], not gnubg_turn
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        lengths.append(plies)
    assert 30 < sum(lengths) / len(lengths) < 100
    assert bench.bare_gnubg_speed(4, seed=1) > 0


def test_profile_selfplay_finds_every_stage_of_the_loop():
    """Each stage that scripts/profile_selfplay.py reports names a function the loop really calls: a renamed function
    would drop out of ``share`` silently. bgbot-5 (specialists on encoding v2) with learning on runs all of them."""
    prof = _load("profile_selfplay")
    config = prof.TrainConfig.load("full")
    out = prof.profile(
        str(SCRIPTS.parent / "models" / "bgbot-5.pt"),
        plies=8,
        games_in_flight=16,
        learn=True,
        config=config,
        top=5,
        warmup=8,
    )
    assert set(out["share"]) == set(prof.STAGES)
    assert all(0 < v <= 1 for v in out["share"].values())
    assert out["share"]["inputs"] <= out["share"]["evaluate"] and out["share"]["features"] <= out["share"]["inputs"]
    assert len(out["top"]) == 5 and out["profiled_games_per_s"] >= 0


def test_run_script_reports_bad_input_as_one_line(capsys):
    """``bgbot.errors.run_script``: bad input (a BgbotError, an OSError) is one ``error:`` line and status 2, a return
    value is the status, a bug keeps its traceback."""
    from bgbot.errors import BgbotError, run_script

    def bad() -> None:
        raise BgbotError("no checkpoint file at 'x.pt'")

    with pytest.raises(SystemExit) as done:
        run_script(bad)
    assert done.value.code == 2 and capsys.readouterr().err == "error: no checkpoint file at 'x.pt'\n"
    with pytest.raises(SystemExit) as done:
        run_script(lambda: 3)
    assert done.value.code == 3
    with pytest.raises(SystemExit) as done:
        run_script(lambda: None)
    assert done.value.code == 0
    with pytest.raises(ZeroDivisionError):
        run_script(lambda: 1 // 0)


def test_a_benchmark_given_a_missing_checkpoint_says_so_in_one_line(tmp_path):
    """A benchmark script run on a checkpoint that does not exist: one ``error:`` line naming it, status 2, no
    traceback."""
    missing = tmp_path / "missing.pt"
    run = subprocess.run(
        [sys.executable, str(SCRIPTS / "profile_selfplay.py"), "--model", str(missing), "--plies", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [f"error: no checkpoint file at {str(missing)!r}"]
    assert run.stdout == ""
