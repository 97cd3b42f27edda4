"""scripts/bench_match.py: a real match against GNU Backgammon 1.07 with bgbot as its external player; the JSON
report agrees with the .mat file, which GNU Backgammon imports back with the same final score; an interrupted run
prints what finished and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bgbot.formats import matfile
from tests.gnubg_import import imported_score

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "bench_match.py"
GNUBG = "/usr/games/gnubg"

pytestmark = pytest.mark.skipif(not os.access(GNUBG, os.X_OK), reason="GNU Backgammon is not installed")


def test_one_point_match_report_and_mat(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--matches", "1", "--length", "1", "--seed", "4", "--analysis-ply", "0"]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report == json.loads((tmp_path / "summary.json").read_text())
    assert report["matches"] == 1 and not report["interrupted"] and report["failures"] == []
    one = report["per_match"][0]
    won = one["winner"] == "bgbot"
    assert report["matches_won"] == int(won) and report["match_winning"]["percent"] == 100.0 * won
    low, high = report["match_winning"]["ci95_percent"]
    expected = (20.65, 100.0) if won else (0.0, 79.35)  # Wilson's interval of 1 of 1, 0 of 1
    assert (low, high) == pytest.approx(expected, abs=0.01)
    mat = Path(one["mat"])
    assert mat == tmp_path / "match-0000.mat"
    match = matfile.read_match(mat.read_text())
    assert match.length == 1 and len(match.games) == one["games"] == 1
    game = match.games[0].game
    assert one["score"][game.winner] == game.points >= 1 and one["score"][1 - game.winner] == 0
    assert report["gammons_won"][("bgbot", "gnubg")[game.winner]] == int(game.points >= 2)
    assert tuple(one["score"]) == imported_score(mat)
    assert one["analysis"]["imported_score"] == one["score"]
    for side in ("bgbot", "gnubg"):
        a = one["analysis"][side]
        assert a["unforced_moves"] >= 5 and a["overall"]["error_rate_memg"] >= 0.0
        rate = report["error_rates"][side]["chequer_memg_per_unforced_move"]
        assert rate == pytest.approx(1000 * a["chequer"]["error_total_emg"] / a["unforced_moves"])
    assert report["error_rates"]["gnubg"]["chequer_memg_per_unforced_move"] == 0.0  # its own 0-ply play, at 0-ply


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_interrupt_prints_finished_matches_and_leaves_no_process(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--matches", "50", "--length", "3", "--no-analysis", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    children: set[int] = set()
    deadline = time.time() + 300
    while not (tmp_path / "match-0000.mat").exists() and time.time() < deadline and proc.poll() is None:
        children |= {
            int(p)
            for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        }
        time.sleep(0.2)
    assert (tmp_path / "match-0000.mat").exists() and proc.poll() is None
    children |= {
        int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    }
    assert children, "bench_match started no process"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out)
    assert report["interrupted"] is True and 1 <= report["matches"] < 50
    assert sorted(r["index"] for r in report["per_match"]) == list(range(report["matches"]))
    assert not [pid for pid in children if _alive(pid)]


def test_without_out_the_files_go_to_a_new_temporary_folder_it_names(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    work = tmp_path / "work"  # the current directory: nothing may be written there
    work.mkdir()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--matches", "1", "--length", "1", "--seed", "4", "--no-analysis"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=work,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(work.iterdir()) == []
    out = Path(json.loads(done.stdout)["out"])
    assert out.parent == temp and out.name.startswith("bench_match-")
    assert sorted(p.name for p in out.iterdir()) == ["match-0000.mat", "summary.json"]
    assert f"go to {out}" in done.stderr and f"1 .mat file(s) and summary.json in {out}" in done.stderr
