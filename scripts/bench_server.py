"""Benchmark ``bgbot serve``: 200 ``GET /v1/move`` requests sent one after another against the same 200 sent at once.

Starts ``bgbot serve`` (this checkout's, ``python -m bgbot.cli serve``) on a free local port, sends every request once
in each mode untimed (warm-up: the timing is of a server in its steady state), then runs ``--repeat`` rounds; each
round sends the requests sequentially (each after the previous answer, on one keep-alive connection) and concurrently
(all in flight together; the server batches them through the evaluator), alternating which goes first. Wall time is
measured on the client, over real HTTP on the loopback, client and server sharing the machine. The default client is
a minimal HTTP/1.1 client on asyncio streams (:func:`fire_raw`), whose own CPU cost is small; ``--client httpx`` uses
``httpx.AsyncClient``, which spends about 2.5 ms of CPU a request on the cores the server needs, so that its
concurrent requests reach the server one by one and the figure measures the client. Every concurrent answer must
equal the sequential one (up to the last digit of the 6-decimal rounding, as ``tests/test_server.py`` compares them).
The evaluator batches the server used are read from ``/v1/health`` before and after each run.

The JSON printed: per round the wall seconds of each mode, their ratio (sequential / concurrent: how many times faster
the concurrent requests were answered together), the evaluator batches, the CPU seconds of client and server (Linux;
``server_cpu_ratio``: the server's CPU seconds sequential / concurrent, less disturbed by other jobs than wall time)
and the latency percentiles (p50, p99, milliseconds, from a request's start to its answer on the client); the figures
of the median round (by ratio) at the top; and the machine's load average before and after (the machine may be
shared: other jobs on its cores lengthen both modes and change the ratio).

The requests: the first 200 positions after the first of ``tests/data/gnubg_selfplay_positions.txt`` (GNU Backgammon
self-play), request ``i`` with dice ``(1 + i % 6)(1 + 7i % 6)``, 0 ply, money play.

The hint latency (``"hint_latency_ms"``): ``--hint-requests`` of the same requests sent one after another at each
ply of ``--hint-plies`` (``GET /v1/move?ply=N``, what the web page's Hint asks), after one untimed round; the
server-side latency of each is its answer's ``server-timing`` header (from the request's arrival to the answer's
start), reported as p50 and p99 in milliseconds.

Usage: ``python scripts/bench_server.py [--requests 200] [--repeat 3] [--client raw|httpx] [--model PATH]
[--hint-plies 1,2] [--hint-requests 100]`` (needs ``bgbot[server]``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

from bgbot.errors import int_at_least, run_script

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "gnubg_selfplay_positions.txt"


def move_requests(n: int) -> list[dict[str, str]]:
    """``n`` query dicts for ``/v1/move`` (see the module docstring)."""
    ids = [x.split()[0] for x in DATA.read_text().splitlines() if x.strip() and not x.startswith("#")]
    if n + 1 > len(ids):
        raise SystemExit(f"--requests at most {len(ids) - 1}")
    return [{"position": pid, "dice": f"{1 + i % 6}{1 + (i * 7) % 6}"} for i, pid in enumerate(ids[1 : n + 1])]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: str | None) -> tuple[subprocess.Popen, str]:
    """A ``bgbot serve`` subprocess on a free port, answering ``/v1/health``; its URL."""
    port = free_port()
    argv = [sys.executable, "-m", "bgbot.cli", "serve", "--port", str(port)] + (["--model", model] if model else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline() if proc.stderr else ""
    if "listening" not in line:
        proc.kill()
        raise SystemExit(f"bgbot serve did not start: {line.strip()}")
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/v1/health", timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("bgbot serve did not answer /v1/health within a minute")


async def fire_httpx(
    url: str, requests: list[dict[str, str]], concurrent: bool
) -> tuple[list[dict], list[float], float]:
    """With ``httpx.AsyncClient`` (connections opened as needed, inside the timing): the answers, each request's
    latency (seconds) and the wall seconds of all of them."""
    limits = httpx.Limits(max_connections=len(requests), max_keepalive_connections=len(requests))
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def one(params: dict[str, str]) -> tuple[dict, float]:
            t = time.perf_counter()
            r = await client.get("/v1/move", params=params)
            if r.status_code != 200:
                raise SystemExit(f"/v1/move {params} answered {r.status_code}: {r.text}")
            return r.json(), time.perf_counter() - t

        await one(requests[0])  # a connection ready
        start = time.perf_counter()
        if concurrent:
            done = await asyncio.gather(*(one(p) for p in requests))
        else:
            done = [await one(p) for p in requests]
        wall = time.perf_counter() - start
    return [a for a, _ in done], [t for _, t in done], wall


async def fire_raw(url: str, requests: list[dict[str, str]], concurrent: bool) -> tuple[list[dict], list[float], float]:
    """With a minimal HTTP/1.1 client on asyncio streams (keep-alive connections opened before the clock starts: one
    for the sequential requests, one per request for the concurrent ones), so that the client's own cost -- about
    2.5 ms of CPU a request for httpx, on the cores the server uses -- does not hide the server's: the answers, each
    request's latency (seconds) and the wall seconds of all of them."""
    host, _, port = url.removeprefix("http://").partition(":")
    paths = [f"/v1/move?{urlencode(p)}" for p in requests]
    conns = [await asyncio.open_connection(host, int(port)) for _ in range(len(requests) if concurrent else 1)]

    async def one(conn, path: str) -> tuple[dict, float]:
        reader, writer = conn
        t = time.perf_counter()
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode("ascii"))
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length: *(\d+)", head)
        if not head.startswith(b"HTTP/1.1 200") or length is None:
            raise SystemExit(f"GET {path} answered {head!r}")
        body = await reader.readexactly(int(length.group(1)))
        return json.loads(body), time.perf_counter() - t

    try:
        await one(conns[0], paths[0])  # the server's first request on a connection
        start = time.perf_counter()
        if concurrent:
            done = await asyncio.gather(*(one(c, p) for c, p in zip(conns, paths)))
        else:
            done = [await one(conns[0], p) for p in paths]
        wall = time.perf_counter() - start
    finally:
        for _, writer in conns:
            writer.close()
    return [a for a, _ in done], [t for _, t in done], wall


def close(a, b, tol: float = 2e-6) -> bool:
    """Equal JSON up to ``tol`` on floats; plays compared by position (near-ties may swap ranks)."""
    if isinstance(a, dict) and "plays" in a:
        pa, pb = ({p["position_id"]: {k: v for k, v in p.items() if k != "rank"} for p in x["plays"]} for x in (a, b))
        return (
            pa.keys() == pb.keys()
            and all(close(pa[k], pb[k], tol) for k in pa)
            and close({k: v for k, v in a.items() if k != "plays"}, {k: v for k, v in b.items() if k != "plays"}, tol)
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tol
    return a == b


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process has used so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``, in milliseconds."""
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))], 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int_at_least(1), default=200, help="move requests per mode (default 200)")
    parser.add_argument("--repeat", type=int_at_least(1), default=3, help="rounds, the median reported (default 3)")
    parser.add_argument(
        "--client", choices=("raw", "httpx"), default="raw", help="HTTP client (default raw: see fire_raw)"
    )
    parser.add_argument("--model", default=None, help="checkpoint for bgbot serve (default: the shipped model)")
    parser.add_argument("--hint-plies", default="1,2", help="plies of the hint latency (default 1,2; '' for none)")
    parser.add_argument("--hint-requests", type=int_at_least(1), default=100, help="hint requests per ply")
    args = parser.parse_args(argv)
    try:
        hint_plies = [int(x) for x in args.hint_plies.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"error: --hint-plies takes plies like 1,2, got {args.hint_plies!r}") from None
    requests = move_requests(args.requests)
    load_before = os.getloadavg()
    proc, url = start_server(args.model)
    try:
        fire = fire_raw if args.client == "raw" else fire_httpx
        for concurrent in (False, True):  # warm-up, every request once in each mode: steady state is measured
            asyncio.run(fire(url, requests, concurrent))
        rounds = []
        for r in range(args.repeat):
            result = {}
            for concurrent in (r % 2 == 1, r % 2 == 0):
                before = httpx.get(url + "/v1/health").json()
                cpu = time.process_time(), server_cpu(proc.pid)
                answers, latency, wall = asyncio.run(fire(url, requests, concurrent))
                cpu = time.process_time() - cpu[0], server_cpu(proc.pid) - cpu[1]
                after = httpx.get(url + "/v1/health").json()
                result["concurrent" if concurrent else "sequential"] = (answers, latency, wall, after, before, cpu)
            seq, con = result["sequential"], result["concurrent"]
            mismatched = sum(not close(a, b) for a, b in zip(seq[0], con[0]))
            if mismatched:
                raise SystemExit(f"round {r}: {mismatched} concurrent answers differ from the sequential ones")
            rounds.append(
                {
                    "sequential_s": round(seq[2], 3),
                    "concurrent_s": round(con[2], 3),
                    "ratio": round(seq[2] / con[2], 2),
                    "concurrent_batches": con[3]["batches"] - con[4]["batches"] - 1,  # less the warm-up request
                    "sequential_batches": seq[3]["batches"] - seq[4]["batches"] - 1,
                    "server_cpu_ratio": round(seq[5][1] / con[5][1], 2) if con[5][1] else None,
                    "cpu_s": {
                        mode: {"client": round(x[5][0], 3), "server": round(x[5][1], 3)}
                        for mode, x in (("sequential", seq), ("concurrent", con))
                    },
                    "latency_ms": {
                        mode: {"p50": percentile(x[1], 50), "p99": percentile(x[1], 99)}
                        for mode, x in (("sequential", seq), ("concurrent", con))
                    },
                }
            )
        hint_latency = {}
        with httpx.Client(base_url=url, timeout=120) as client:
            for ply in hint_plies:
                hints = requests[: args.hint_requests]
                for params in hints[:10]:  # warm-up
                    client.get("/v1/move", params={**params, "ply": ply})
                server_ms = []
                for params in hints:
                    got = client.get("/v1/move", params={**params, "ply": ply})
                    got.raise_for_status()
                    server_ms.append(float(got.headers["server-timing"].split("dur=")[1]) / 1000)
                hint_latency[f"ply_{ply}"] = {
                    "requests": len(server_ms),
                    "p50": percentile(server_ms, 50),
                    "p99": percentile(server_ms, 99),
                }
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    median = sorted(rounds, key=lambda x: x["ratio"])[len(rounds) // 2]
    print(
        json.dumps(
            {
                "benchmark": "bgbot serve: GET /v1/move, sequential vs concurrent, over HTTP",
                "client": args.client,
                "requests": len(requests),
                "answers_equal": True,
                "sequential_s": median["sequential_s"],
                "concurrent_s": median["concurrent_s"],
                "ratio": median["ratio"],
                "median_ratio": statistics.median(x["ratio"] for x in rounds),
                "concurrent_batches": median["concurrent_batches"],
                "server_cpu_ratio": statistics.median(x["server_cpu_ratio"] or 0 for x in rounds),
                "latency_ms": median["latency_ms"],
                "hint_latency_ms": hint_latency,
                "rounds": rounds,
                "cpus": os.cpu_count(),
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    run_script(main)
