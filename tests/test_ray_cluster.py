"""A two-node Ray cluster on the loopback (``ray start --head`` and a second ``ray start --address``, one CPU each,
token authentication on as the README's cluster commands set it up), driven by ``bgbot ... --ray ADDRESS`` in
subprocesses: the results equal a local run's, ``--json`` parses even when a Ray worker is killed with SIGKILL
mid-run, the death is counted in ``worker_restarts``, and a refused token is one ``error:`` line that names the fix.

Ray is part of the test install (the ``ray`` extra): these tests never skip. Every process the cluster starts runs in
the sessions this module creates; the fixture's teardown kills those sessions' processes and checks that none is
left (``ray stop`` would stop every Ray process on the machine, other users' too).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bgbot.cli import main

pytestmark = pytest.mark.xdist_group("ray")

BIN = Path(sys.executable).parent
TIMING = ("elapsed_s", "games_per_s", "trials_per_s", "workers", "worker_restarts", "ray")
ROLLOUT = ["rollout", "4HPwATDgc/ABMA", "31", "--play", "8/5 6/5", "--play", "24/23 13/10"]
ROLLOUT += ["--trials", "216", "--truncate", "2", "--seed", "5", "--json"]
TOURNAMENT = ["tournament", "--player", "pubeval", "--player", "random", "--games", "1000", "--seed", "7", "--json"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_of(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[3])  # field 6, the session id: "pid (comm) state ppid pgrp session"


def _processes(sessions: set[int]) -> dict[int, str]:
    """pid -> command line of every live (not zombie) process in ``sessions``."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if _session_of(pid) in sessions:
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
                out[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                pass
    return out


class Cluster:
    """The two nodes, their sessions and the environments of the machines: ``env`` the head machine's (its home
    holds the token), ``stranger`` one whose token the cluster does not know."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sessions: set[int] = set()
        base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        base |= {"RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1"}
        self.env = base | {"HOME": str(root / "home")}
        self.stranger = base | {"HOME": str(root / "stranger"), "RAY_AUTH_TOKEN": "not-the-cluster-token"}
        self.address = ""

    def start(self, args: list[str], env: dict[str, str], **kw) -> subprocess.Popen:
        proc = subprocess.Popen(args, env=env, start_new_session=True, **kw)
        self.sessions.add(proc.pid)
        return proc

    def ray(self, args: list[str], env: dict[str, str]) -> str:
        proc = self.start([str(BIN / "ray"), *args], env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        return out

    def bgbot(self, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        return self.start(
            [str(BIN / "bgbot"), *args, "--ray", self.address],
            self.env if env is None else env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> None:
        for _ in range(50):
            live = _processes(self.sessions)
            if not live:
                return
            for pid in live:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        raise AssertionError(f"processes of the test's Ray cluster outlived it: {_processes(self.sessions)}")


@pytest.fixture(scope="module")
def cluster():
    """The README's cluster commands with token authentication, on the loopback: a token made on the head machine
    (``ray get-auth-token --generate``), the head started with ``RAY_AUTH_MODE=token``, the second node with the same
    mode and the head's token in ``RAY_AUTH_TOKEN`` (another machine's home has no token file)."""
    root = Path(tempfile.mkdtemp(prefix="bgray-"))  # short: Ray's socket paths live under it
    c = Cluster(root)
    try:
        token = c.ray(["get-auth-token", "--generate"], c.env).strip().splitlines()[-1]
        port = _free_port()
        common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
        head = c.env | {"RAY_AUTH_MODE": "token"}
        c.ray(["start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={root}/h", *common], head)
        c.address = f"127.0.0.1:{port}"
        node = c.stranger | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
        c.ray(["start", f"--address={c.address}", f"--temp-dir={root}/n", *common], node)
        deadline = time.monotonic() + 90  # the second node registers with the head a little after `ray start` returns
        status = c.ray(["status", f"--address={c.address}"], head)
        while "2.0 CPU" not in status and time.monotonic() < deadline:
            time.sleep(1)
            status = c.ray(["status", f"--address={c.address}"], head)
        assert "2.0 CPU" in status, status
        yield c
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


def _local(argv: list[str], capsys) -> dict:
    assert main([*argv, "--workers", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def _strip(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in TIMING}


def test_rollout_on_a_two_node_cluster_equals_the_local_run(cluster, capsys):
    """bgbot finds the head machine's token itself (``~/.ray/auth_token``; ``RAY_AUTH_MODE`` unset), as the README's
    ``bgbot ... --ray ADDRESS`` after ``ray start`` needs."""
    proc = cluster.bgbot(ROLLOUT)
    out, err = proc.communicate(timeout=150)
    assert proc.returncode == 0, err
    on_ray = json.loads(out)
    local = _local(ROLLOUT, capsys)
    assert on_ray["workers"] == "ray" and [p["play"] for p in on_ray["plays"]] == ["8/5 6/5", "24/23 13/10"]
    assert _strip(on_ray) == _strip(local)


def test_tournament_survives_a_killed_ray_worker_counts_it_and_keeps_stdout_json(cluster, capsys):
    """Two chunks of 250 duplicate pairs, one on each node; the first Ray worker seen running a chunk is killed with
    SIGKILL. Ray announces the death with a ``(raylet) A worker died ...`` line on the driver's stdout unless bgbot
    keeps it off; the chunk is run again and counted once in ``worker_restarts``."""
    proc = cluster.bgbot(TOURNAMENT)
    killed = None
    deadline = time.monotonic() + 150
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        busy = [pid for pid, cmd in _processes(cluster.sessions).items() if cmd.startswith("ray::_call_one_thread")]
        if busy:
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.02)
    out, err = proc.communicate(timeout=150)
    assert killed is not None, "no Ray worker was seen running a chunk"
    assert proc.returncode == 0, err
    on_ray = json.loads(out)
    local = _local(TOURNAMENT, capsys)
    assert on_ray["worker_restarts"] == 1 and local["worker_restarts"] == 0
    assert _strip(on_ray) == _strip(local) and on_ray["pairings"][0]["pairs"] == 500


def test_a_refused_token_is_one_error_line_naming_the_fix(cluster):
    """As the second machine before it is given the head's token (bgbot waits 3 s, not its default 10 s, for Ray)."""
    stranger = cluster.stranger | {"RAY_gcs_server_port_wait_time_s": "3"}
    proc = cluster.bgbot(["tournament", "--player", "pubeval", "--player", "random", "--games", "4"], stranger)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == ""
    lines = err.strip().splitlines()
    last = lines[-1]
    assert len(lines) == 1, err  # not Ray's log line of every refused attempt
    assert last.startswith(f"error: the Ray cluster at '{cluster.address}' uses token authentication"), err
    assert "RAY_AUTH_TOKEN" in last and "ray get-auth-token" in last and "RAY_AUTH_MODE=token" in last
