"""Long commands stopped early: Ctrl-C (SIGINT) and SIGTERM print the partial result and exit non-zero, kill -9
leaves no worker behind, and a stopped tournament is finished by ``--resume`` with the totals of an uninterrupted
run. The commands run as subprocesses; the processes they start are found in /proc."""

from __future__ import annotations

import json
import os
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

CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from bgbot.cli import main; sys.exit(main(sys.argv[1:]))"
)
"""The command in a child Python. SIGINT is Python's default first: a pytest started in the background of a
non-interactive shell ignores SIGINT and its children inherit that, so a Ctrl-C sent while the command still loads
(before it sets its own handlers) would be ignored and a long rollout would run on."""
ROOT = Path(__file__).resolve().parents[1]


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
        # Stopped while loading (a plain Ctrl-C then; during the imports, before bgbot.cli.main runs, with a
        # KeyboardInterrupt's traceback) or before a unit finished: try again, waiting longer.
        stopped = b"too few for an estimate" in err or err.rstrip().endswith(b"KeyboardInterrupt")
        assert not err.strip() or stopped, err.decode()[-2000:]
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


def _swallowing(sig: int) -> None:
    """Signal this process inside code that drops every exception, as a library's C code that clears the error of a
    Python callback does: a handler that raised here would lose the signal."""
    try:
        os.kill(os.getpid(), sig)
        time.sleep(0.05)  # a raising handler would run here, between two bytecodes, and be dropped below
    except BaseException:
        pass


def test_a_signal_inside_code_that_drops_exceptions_still_stops_the_units_run_here():
    """The units run_tasks runs in this process hold the signals: the SIGINT that arrives inside unit 1's swallowing
    code is not lost there but stops the work after that unit."""
    from bgbot.arena import distributed

    ran = []

    def unit(i: int) -> int:
        ran.append(i)
        if i == 1:
            _swallowing(signal.SIGINT)
        return i

    with pytest.raises(distributed.Interrupted) as stopped, distributed.interrupt_signals():
        distributed.run_tasks(unit, list(range(5)), workers=1)
    assert ran == [0, 1] and stopped.value.signum == signal.SIGINT


def test_a_held_signal_stops_a_rollout_unit_at_its_next_ply(monkeypatch):
    """A SIGTERM that arrives inside the third ply of a rollout's only unit (in swallowing code) stops it at the start
    of the fourth (bgbot.arena.distributed.safe_point), not at the unit's end: no trial finished."""
    from bgbot.arena import distributed
    from bgbot.arena import rollout as ro
    from bgbot.evaluation.checkpoint import load
    from bgbot.evaluation.specialists import evaluator_for
    from bgbot.rules.board import starting_position

    ev = evaluator_for(load(ROOT / "bgbot" / "data" / "default_model.pt")[0])
    real, plies = ro.play_ply, []

    def ply(*args, **kwargs):
        plies.append(1)
        if len(plies) == 3:
            _swallowing(signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(ro, "play_ply", ply)
    settings = ro.RolloutSettings(trials=72, truncate=10, seed=1)
    assert len(ro.chunk_tasks(settings, 1)) == 1
    with pytest.raises(ro.RolloutInterrupted) as stopped, distributed.interrupt_signals():
        ro._run(ev, starting_position()[None], np.ones(1, dtype=bool), settings)
    assert len(plies) == 3 and stopped.value.signum == signal.SIGTERM and stopped.value.results.shape == (1, 0, 5)


# -- gates ----------------------------------------------------------------------------------------------------------

GATE_CODE = """
import sys
from bgbot.arena import tournament

tournament.CHUNK_PAIRS = 10
run_chunks = tournament.run_chunks


def reporting(tasks, workers, progress, ray, on_chunk):
    def done(chunk):
        on_chunk(chunk)
        print("unit finished", file=sys.stderr, flush=True)

    return run_chunks(tasks, workers, progress, ray, done)


tournament.run_chunks = reporting
if sys.argv[1] == "training":
    from training.cli import main
else:
    from bgbot.cli import main
sys.exit(main(sys.argv[2:]))
"""
"""The gate's command (``training ...`` or ``bgbot ...``) with units of 10 duplicate pairs and a line on stderr as each
finishes."""


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> tuple[str, str]:
    import torch

    from bgbot.evaluation import checkpoint
    from bgbot.evaluation.network import NetConfig, ValueNet

    d = tmp_path_factory.mktemp("gate")
    paths = []
    for seed, name in ((1, "candidate.pt"), (2, "current.pt")):
        torch.manual_seed(seed)
        paths.append(
            str(checkpoint.save(d / name, ValueNet(NetConfig(n_hidden=8)), games_trained=0, training_config={}))
        )
    return paths[0], paths[1]


def _ignores_sigint(pid: int) -> bool:
    """Whether process ``pid`` ignores SIGINT (its SigIgn mask in /proc; a process gone counts as ignoring it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(mask >> (signal.SIGINT - 1) & 1)


def _interrupted_gate(args: list[str], sig: int, group: bool) -> tuple[subprocess.Popen, bytes, bytes, set[int]]:
    """Start a gate with 2 workers, send ``sig`` once a unit of games has finished (to the whole process group, as a
    terminal's Ctrl-C does, when ``group``) -> (the process, stdout, stderr, the processes it had started)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", GATE_CODE, *args, "--games", "20000", "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=group,
    )
    assert proc.stderr is not None
    kids: set[int] = set()
    seen = []
    while not seen or seen[-1] != b"unit finished\n":
        line = proc.stderr.readline()
        assert line, b"".join(seen).decode()[-2000:]  # the command ended before a unit finished
        seen.append(line)
        kids |= _children(proc.pid)
    kids |= _children(proc.pid)
    if group:  # once every process it started ignores SIGINT (the workers do from their start, as the parent decides)
        end = time.monotonic() + 120
        while not (len(kids) >= 3 and all(_ignores_sigint(k) for k in _alive(kids))):
            assert time.monotonic() < end, "the workers did not start"
            time.sleep(0.1)
            kids |= _children(proc.pid)
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return proc, out, b"".join(seen) + err, kids


def test_sigterm_stops_the_training_gate_and_prints_its_partial_record(two_models, tmp_path):
    candidate, current = two_models
    record = tmp_path / "gate.json"
    before = _pymp()
    args = ["training", "gate", "--candidate", candidate, "--against", current, "--out", str(record)]
    proc, out, err, kids = _interrupted_gate(args, signal.SIGTERM, group=False)
    assert proc.returncode == 143, err.decode()[-2000:]
    assert len(kids) >= 3  # two pool workers and the resource tracker
    assert not _gone(kids)
    assert not (_pymp() - before)
    assert b"leaked" not in err and b"Traceback" not in err, err.decode()[-2000:]
    partial = json.loads(out)
    assert partial["complete"] is False and partial["interrupted"] == "SIGTERM" and partial["accepted"] is False
    r = partial["results"][current]
    done = r["games"]
    assert 20 <= done < 20000 and done % 20 == 0 and r["pairs"] == done // 2  # whole units of whole pairs
    assert r["complete"] is False and r["ci_low"] <= r["ppg"] <= r["ci_high"] and r["ci_low"] < r["ci_high"]
    assert err.decode().splitlines()[-1] == (
        f"error: interrupted (SIGTERM) after {done} of 20000 games against {current!r} (partial): not accepted; "
        f"--out {str(record)!r} not written"
    )
    assert not record.exists() and not list(tmp_path.iterdir())


def test_ctrl_c_stops_bgbot_gate_and_prints_the_partial_result(two_models, tmp_path):
    candidate, current = two_models
    models = Path(current).parent
    before = sorted(p.name for p in models.iterdir())
    proc, out, err, kids = _interrupted_gate(["bgbot", "gate", candidate, "--against", current], signal.SIGINT, True)
    assert proc.returncode == 130, err.decode()[-2000:]
    assert not _gone(kids)
    assert b"leaked" not in err and b"Traceback" not in err, err.decode()[-2000:]
    line = out.decode()
    assert " over " in line, err.decode()[-2000:]
    done = int(line.split(" over ")[1].split()[0])
    assert 20 <= done < 20000 and done % 20 == 0
    assert line.startswith(f"{candidate} vs {current}: ") and " ppg, 95% CI [" in line
    assert line.endswith(f" over {done} games of 20000 (seed 0): INTERRUPTED (SIGINT), partial: not judged\n")
    assert err.decode().splitlines()[-1] == (
        f"error: interrupted (SIGINT) after {done} of 20000 games (partial, not judged): nothing promoted, the "
        "registry not touched"
    )
    assert sorted(p.name for p in models.iterdir()) == before  # no README.md, no promoted copy
