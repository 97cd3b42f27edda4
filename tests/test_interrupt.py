"""Long commands stopped early: Ctrl-C (SIGINT) and SIGTERM print the partial result and exit non-zero, kill -9
leaves no worker behind, and a stopped tournament is finished by ``--resume`` with the totals of an uninterrupted
run. The commands run as subprocesses; the processes they start are found in /proc."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena import players as players_mod
from bgbot.arena import tournament
from bgbot.cli import main

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

CLI = "import sys; from bgbot.cli import main; sys.exit(main(sys.argv[1:]))"


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(d.name))
    return out


def _alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (zombies count as gone)."""
    alive = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(p)
    return alive


def _pymp() -> set[str]:
    return {p.name for p in Path("/tmp").glob("pymp-*")}


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_workers(proc: subprocess.Popen, n: int, timeout: float = 120.0) -> set[int]:
    """The command's child processes once at least ``n`` are running."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = _children(proc.pid)
        if len(kids) >= n:
            return kids
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"the command did not start {n} processes in {timeout} s")


def _gone(pids: set[int], within: float = 5.0) -> set[int]:
    end = time.monotonic() + within
    while _alive(pids) and time.monotonic() < end:
        time.sleep(0.1)
    return _alive(pids)


ROLLOUT = ["rollout", "7bYFAAbtnDsAAA", "--trials", "1000000", "--truncate", "1", "--json", "--no-progress"]


def _interrupted_rollout(sig: int, workers: int) -> tuple[dict, int, set[int], set[str]]:
    """Start a long rollout, signal it once some work units have finished (waiting longer on each try), and return
    (its JSON, exit status, the processes it had started, new /tmp/pymp-* directories)."""
    before = _pymp()
    for wait in (10.0, 30.0, 60.0) if workers == 1 else (30.0, 90.0):  # pool workers start slowly (torch)
        proc = _start([*ROLLOUT, "--workers", str(workers)])
        kids = _wait_for_workers(proc, workers) if workers > 1 else set()
        time.sleep(wait)
        kids |= _children(proc.pid)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        if out.strip():
            return json.loads(out), proc.returncode, kids, _pymp() - before
        assert proc.returncode != 0
        # Stopped while loading (a plain Ctrl-C then) or before a unit finished: try again, waiting longer.
        assert not err.strip() or b"too few for an estimate" in err, err.decode()[-2000:]
    raise AssertionError("no work unit finished in time")


def test_sigint_prints_the_partial_rollout():
    out, rc, _, _ = _interrupted_rollout(signal.SIGINT, 1)
    assert rc == 130
    assert out["complete"] is False and out["interrupted"] == "SIGINT"
    done = out["trials_done"]
    assert done >= 72 and done % 72 == 0  # whole work units
    pos = out["position"]
    assert pos["trials"] == done and 0 < pos["equity_se"] < 0.05 and 0.3 < pos["equity"] < 0.8


def test_sigterm_stops_the_rollout_workers_and_prints_the_partial_result():
    out, rc, kids, tmp = _interrupted_rollout(signal.SIGTERM, 2)
    assert rc == 143 and out["interrupted"] == "SIGTERM" and out["trials_done"] >= 72
    assert len(kids) >= 2  # one pool worker (the command itself is the other of its two) and the resource tracker
    assert not _gone(kids)
    assert not tmp


def test_kill_9_of_the_rollout_leaves_no_worker():
    before = _pymp()
    proc = _start([*ROLLOUT, "--workers", "3"])
    kids = _wait_for_workers(proc, 3)  # two pool workers (the command is the third) and the resource tracker
    time.sleep(3)
    kids |= _children(proc.pid)
    proc.kill()
    proc.wait()
    assert not _gone(kids, within=5.0)  # the workers notice their parent died (PARENT_POLL_S)
    assert not (_pymp() - before)


# -- tournaments ----------------------------------------------------------------------------------------------------


def _strip(results: dict) -> dict:
    """A tournament's results without what depends on timing or on where it ran."""
    out = {k: v for k, v in results.items() if k not in ("elapsed_s", "games_per_s", "workers", "worker_restarts")}
    out["pairings"] = [{k: v for k, v in r.items() if k not in ("mat_file", "mat_files")} for r in out["pairings"]]
    return out


TOURNAMENT_CODE = (
    "import sys; from bgbot.arena import tournament; tournament.CHUNK_PAIRS = 10; "
    "from bgbot.cli import main; sys.exit(main(sys.argv[1:]))"
)


def test_sigterm_keeps_the_tournaments_finished_pairs_and_resume_finishes_it(tmp_path, capsys):
    out_dir = tmp_path / "t"
    args = ["tournament", "--player", "pubeval", "--player", "random", "--games", "200", "--seed", "7"]
    proc = subprocess.Popen(
        [sys.executable, "-c", TOURNAMENT_CODE, *args, "--workers", "2", "--out", str(out_dir), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    end = time.monotonic() + 180
    kids: set[int] = set()
    while len(list((out_dir / "chunks").glob("unit-*.pkl"))) < 2:
        assert time.monotonic() < end and proc.poll() is None, "no work unit saved in time"
        kids |= _children(proc.pid)
        time.sleep(0.1)
    kids |= _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err.decode()[-2000:]
    assert not _gone(kids)
    partial = json.loads(out)
    assert partial["complete"] is False and partial["pairs_total"] == 100
    done = partial["pairs_done"]
    assert 20 <= done < 100 and done % 10 == 0  # whole units of whole duplicate pairs
    assert partial["pairings"][0]["pairs_done"] == done
    assert b"--resume" in err
    assert (out_dir / "01_pubeval_vs_random.mat").exists()  # the finished games are written
    # Resumed (here, in this process), the totals are those of an uninterrupted run.
    capsys.readouterr()
    assert main(["tournament", "--resume", str(out_dir), "--workers", "1", "--json", "--quiet"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    ref, _ = tournament.play(["pubeval", "random"], tournament.TournamentSettings(200, seed=7, chunk_pairs=10))
    assert resumed["complete"] is True and _strip(resumed) == _strip(ref)


class _Failing(players_mod.PubevalPlayer):
    """pubeval that fails (as an external engine that dies) at its ``fail_at``-th batch of moves."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.calls = 0
        self.fail_at = fail_at
        self.name = "failing"

    def choose(self, positions: np.ndarray, dice: np.ndarray) -> np.ndarray:
        self.calls += 1
        if self.calls == self.fail_at:
            raise players_mod.PlayerSpecError("UBGI engine 'fake' exited")
        return super().choose(positions, dice)


def test_a_failing_player_keeps_the_finished_games(tmp_path):
    # A unit of 5 pairs takes some tens of batched plies for each player: the 150th falls in a later unit.
    with pytest.raises(tournament.TournamentStopped) as stop:
        tournament.play(
            [_Failing(150), "random"], tournament.TournamentSettings(40, seed=3, chunk_pairs=5, out_dir=tmp_path)
        )
    e = stop.value
    assert e.exit_status == 1 and "exited" in str(e) and e.resume_dir == tmp_path
    assert e.results["complete"] is False and 0 < e.results["pairs_done"] < 20
    assert len(list((tmp_path / "chunks").glob("unit-*.pkl"))) == e.results["pairs_done"] // 5
    # The finished games (written as the command writes them) are those of an uninterrupted run, pair by pair.
    tournament.write_files(e.results, e.files)
    tournament.run(
        [players_mod.PubevalPlayer(), "random"],
        tournament.TournamentSettings(40, seed=3, chunk_pairs=5, out_dir=tmp_path / "r"),
    )
    kept = (tmp_path / "01_failing_vs_random.mat").read_text()
    full = (tmp_path / "r" / "01_pubeval_vs_random.mat").read_text()
    n = e.results["pairs_done"] * 2
    assert kept.count(" Game ") == n and full.count(" Game ") == 40
    assert kept.replace("failing", "pubeval").split(f" Game {n + 1}")[0] in full


def test_sigterm_prints_the_chouettes_finished_games():
    args = ["chouette", "--player", "pubeval", "--player", "random", "--player", "random", "--games", "1000000"]
    for wait in (5.0, 20.0, 60.0):
        proc = _start([*args, "--json", "--quiet"])
        time.sleep(wait)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode != 0
        if out.strip():
            break
    res = json.loads(out)
    assert proc.returncode == 143 and res["complete"] is False and res["interrupted"] == "SIGTERM"
    done = res["games_done"]
    assert 0 < done < 1_000_000
    assert sum(s["games_in_box"] for s in res["stats"].values()) == done
    assert f"after {done} of 1000000 games".encode() in err


def test_a_signal_during_the_pools_bookkeeping_takes_effect_after_it():
    import os

    from bgbot.arena import distributed

    reached = []
    with pytest.raises(distributed.Interrupted) as stopped, distributed.interrupt_signals():
        with distributed._signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler would run here, between two bytecodes
            reached.append(True)
        reached.append(False)  # not reached: the handler raised at the end of the block
    assert reached == [True] and stopped.value.signum == signal.SIGTERM
