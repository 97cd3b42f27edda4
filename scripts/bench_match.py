"""Matches with the cube against the real GNU Backgammon program, bgbot as its external player.

Plays ``--matches`` matches to ``--length`` points (7 by default): GNU Backgammon 1.07 (``/usr/games/gnubg -t -q``)
makes its own checker and cube decisions at 0-ply (cubeful, no noise); bgbot (``bgbot external``,
:mod:`bgbot.protocols.external`) plays the other side at ``--ply`` with its own cube decisions (Janowski's formula on
its 0-ply probabilities). bgbot is GNU Backgammon's player 0 (named ``gnubg`` in the ``.mat`` files: GNU Backgammon
1.07 keeps its default names), GNU Backgammon player 1. Match ``i`` is played with GNU Backgammon's ``set seed
SEED + i``, so a run is repeatable; ``--workers`` matches run at once, each worker with its own ``bgbot external``
process and one GNU Backgammon process per match.

Each match is written as ``OUT/match-NNNN.mat`` (GNU Backgammon's ``export match mat``, moved into place whole;
``OUT`` is ``--out DIR``, by default a new temporary directory, named on stderr as the script starts and ends) and
then analysed by GNU Backgammon itself in a fresh process (``import mat``; ``analyse match`` with the chequerplay and
cube analysis at ``--analysis-ply``, 2 by default; ``show statistics match``). Prints one JSON object, also written to
``OUT/summary.json``: the match winning percentage of bgbot with its 95% interval (Wilson, :func:`bgbot.arena.stats.wilson`), games,
gammons and backgammons won by each side, each side's cube actions (doubles, takes, passes, from the ``.mat`` files),
and each side's error rates from GNU Backgammon's analysis (millipoints of normalised equity, EMG, per unforced move,
per close or actual cube decision, and overall; positive = equity lost), summed over the matches as GNU Backgammon
sums them (error total / decisions) and per match.

Interrupting it (Ctrl-C, SIGTERM) stops every GNU Backgammon and ``bgbot external`` process it started and prints the
matches finished so far (``"interrupted": true``); a match still being played is dropped, one being analysed is kept
without its analysis.

Usage: ``python scripts/bench_match.py [--matches 10] [--length 7] [--ply 0] [--seed 1] [--workers 1] [--out DIR]
[--model PATH] [--analysis-ply 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path

from bgbot.arena.stats import wilson
from bgbot.errors import BgbotError, int_at_least, run_script, whole_number
from bgbot.files import write_atomic
from bgbot.formats import matfile

GNUBG = "/usr/games/gnubg"
SIDES = ("bgbot", "gnubg")
"""GNU Backgammon's player 0 (bgbot) and player 1, in the order of the .mat files and its statistics columns."""
STAT_SECTIONS = {"Chequerplay statistics": "chequer", "Cube statistics": "cube", "Overall statistics": "overall"}
_PAIR = re.compile(r"([+-]?\d+(?:\.\d+)?)\s+\(\s*([+-]?\d+(?:\.\d+)?)%\)")
_COUNT = re.compile(r"^(\S.*?)\s{2,}(\d+)\s+(\d+)\s*$")


class MatchError(BgbotError):
    """A match that could not be played or analysed (GNU Backgammon or bgbot failed, stopped or timed out)."""


# ------------------------------------------------------------------------------------------------ processes


class Processes:
    """Every child process this script starts, each in its own session (a Ctrl-C at the terminal reaches only this
    script), so that :meth:`stop_all` ends them and their children, and nothing else."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[subprocess.Popen] = set()
        self.stopping = threading.Event()

    def start(self, args: list[str], **kw) -> subprocess.Popen:
        with self.lock:
            if self.stopping.is_set():
                raise MatchError("stopping")
            proc = subprocess.Popen(args, start_new_session=True, **kw)
            self.live.add(proc)
            return proc

    def done(self, proc: subprocess.Popen) -> None:
        with self.lock:
            self.live.discard(proc)

    @staticmethod
    def stop(proc: subprocess.Popen) -> None:
        """SIGTERM to the process's group, SIGKILL after 5 s, then reap it."""
        for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue

    def stop_all(self) -> None:
        self.stopping.set()
        with self.lock:
            procs = list(self.live)
        for proc in procs:
            self.stop(proc)
            self.done(proc)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _first_line(stream, timeout: float) -> str:
    """The first line of a text stream, stripped, or "" when none comes within ``timeout`` seconds."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return line[0].strip() if line else ""


def start_external(procs: Processes, model: str | None, ply: int) -> tuple[subprocess.Popen, int]:
    """A ``bgbot external`` process listening on a free port: ``(process, port)``. Raises MatchError when it does
    not start listening within 120 s."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for _ in range(3):  # a port taken between choosing and binding: try another
        port = _free_port()
        cmd = [sys.executable, "-m", "bgbot.cli", "external", "--port", str(port), "--ply", str(ply)]
        if model:
            cmd += ["--model", model]
        proc = procs.start(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stderr is not None
        err = _first_line(proc.stderr, 120.0)
        if "listening" in err:
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain it
            return proc, port
        Processes.stop(proc)
        procs.done(proc)
        if "cannot listen" not in err:
            raise MatchError(f"bgbot external did not start: {err or 'no answer in 120 s'}")
    raise MatchError("bgbot external found no free port")


def run_gnubg(procs: Processes, script: str, timeout: float) -> str:
    """Run headless GNU Backgammon on ``script`` (commands, one a line) and return its output. Raises MatchError on
    a timeout or when it cannot be run."""
    try:
        proc = procs.start(
            [GNUBG, "-t", "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    except OSError as err:
        raise MatchError(f"cannot run {GNUBG}: {err.strerror or err}") from None
    try:
        out, _ = proc.communicate(script, timeout=timeout)
    except subprocess.TimeoutExpired:
        Processes.stop(proc)
        raise MatchError(f"GNU Backgammon did not finish in {timeout:.0f} s") from None
    finally:
        procs.done(proc)
    return out or ""


# ------------------------------------------------------------------------------------------------- records


@dataclass
class MatchRecord:
    """One finished match, bgbot first in every pair.

    Attributes:
        index, seed: the match's number in the run and GNU Backgammon's seed for it.
        mat: path of its ``.mat`` file. winner: "bgbot" or "gnubg". score: final points (bgbot, gnubg).
        games: games played. wins, gammons, backgammons: games won, won with a gammon, with a backgammon (not by a
            pass), per side. doubles, takes, passes: cube actions per side (a take or pass is the taker's).
        analysis: GNU Backgammon's statistics per side (:func:`parse_statistics`), None when not analysed.
        seconds: wall time of play and analysis.
    """

    index: int
    seed: int
    mat: str
    winner: str
    score: list[int]
    games: int
    wins: list[int]
    gammons: list[int]
    backgammons: list[int]
    doubles: list[int]
    takes: list[int]
    passes: list[int]
    analysis: dict | None = None
    seconds: float = 0.0


def match_record(index: int, seed: int, path: Path) -> MatchRecord:
    """Read a finished match from its ``.mat`` file (player 0 = bgbot). Raises MatchError when no side reached the
    match length."""
    match = matfile.read_match(path.read_text(), str(path))
    score = [0, 0]
    wins, gammons, backgammons = [0, 0], [0, 0], [0, 0]
    doubles, takes, passes = [0, 0], [0, 0], [0, 0]
    for g in match.games:
        cube, passed = 1, False
        for t in g.game.turns:
            if isinstance(t, matfile.CubeAction):
                if t.kind == "double":
                    doubles[t.side] += 1
                    cube = t.value
                elif t.kind == "take":
                    takes[t.side] += 1
                else:
                    passes[t.side] += 1
                    passed = True
        w = g.game.winner
        score[w] += g.game.points
        wins[w] += 1
        if not passed and g.game.points >= 2 * cube:
            gammons[w] += 1
        if not passed and g.game.points >= 3 * cube:
            backgammons[w] += 1
    if max(score) < match.length:
        raise MatchError(f"{path}: the match is not finished (score {score[0]}-{score[1]} of {match.length})")
    return MatchRecord(
        index,
        seed,
        str(path),
        SIDES[int(score[1] > score[0])],
        score,
        len(match.games),
        wins,
        gammons,
        backgammons,
        doubles,
        takes,
        passes,
    )


def parse_statistics(text: str) -> dict:
    """GNU Backgammon 1.07's ``show statistics match`` as ``{"bgbot": {...}, "gnubg": {...}}``.

    Per side: ``chequer``, ``cube`` and ``overall`` each with ``error_total_emg`` and ``error_rate_memg`` (signs
    flipped: positive = equity lost), ``error_total_mwc_percent`` and ``error_rate_mwc_percent``; the counts
    ``unforced_moves`` and ``cube_decisions`` (close or actual ones) and the named cube errors (``missed_doubles``,
    ``wrong_doubles``, ``wrong_takes``, ``wrong_passes``).

    Raises:
        MatchError: the statistics are not in ``text``.
    """
    out: dict[str, dict] = {s: {"chequer": {}, "cube": {}, "overall": {}} for s in SIDES}
    section = None
    counts = {
        "Unforced moves": "unforced_moves",
        "Close or actual cube decisions": "cube_decisions",
        "Wrong takes (EMG (MWC))": "wrong_takes",
        "Wrong passes (EMG (MWC))": "wrong_passes",
    }
    summed = {
        "Missed doubles below CP (EMG (MWC))": "missed_doubles",
        "Missed doubles above CP (EMG (MWC))": "missed_doubles",
        "Wrong doubles below DP (EMG (MWC))": "wrong_doubles",
        "Wrong doubles above TG (EMG (MWC))": "wrong_doubles",
    }
    for s in SIDES:
        out[s]["missed_doubles"] = out[s]["wrong_doubles"] = 0
    found = False
    for line in text.splitlines():
        head = line.strip()
        if head in STAT_SECTIONS:
            section = STAT_SECTIONS[head]
            continue
        if section is None:
            continue
        for label, key in (("Error total EMG (MWC)", "total"), ("Error rate mEMG (MWC)", "rate")):
            if head.startswith(label):
                pairs = _PAIR.findall(head[len(label) :])
                if len(pairs) != 2:
                    raise MatchError(f"GNU Backgammon's statistics line not understood: {head!r}")
                for s, (emg, mwc) in zip(SIDES, pairs):
                    unit = "emg" if key == "total" else "memg"
                    out[s][section][f"error_{key}_{unit}"] = -float(emg)
                    out[s][section][f"error_{key}_mwc_percent"] = -float(mwc)
                found = True
        m = _COUNT.match(head)
        if m and (m.group(1) in counts or m.group(1) in summed):
            for s, v in zip(SIDES, (int(m.group(2)), int(m.group(3)))):
                if m.group(1) in counts:
                    out[s][counts[m.group(1)]] = v
                else:
                    out[s][summed[m.group(1)]] += v
    if not found or any("error_rate_memg" not in out[s]["overall"] for s in SIDES):
        raise MatchError("GNU Backgammon printed no match statistics (was the match analysed?)")
    return out


# ---------------------------------------------------------------------------------------------------- play


def play_script(port: int, seed: int, length: int, mat: Path) -> str:
    """GNU Backgammon's commands for one match: player 0 external (bgbot on ``port``), player 1 GNU Backgammon at
    0-ply (checker play and cube), the seed, the match, its export."""
    return "\n".join(
        [
            f"set player 0 external localhost:{port}",
            "set player 1 gnubg",
            "set player 1 chequerplay evaluation plies 0",
            "set player 1 cubedecision evaluation plies 0",
            "set display off",
            f"set seed {seed}",
            f"new match {length}",
            f"export match mat {mat}",
            "quit",
            "y",
            "",
        ]
    )


def analysis_script(mat: Path, plies: int) -> str:
    """GNU Backgammon's commands to import a match, analyse it at ``plies`` and show its statistics and score."""
    return "\n".join(
        [
            f"import mat {mat}",
            "show score",
            f"set analysis chequerplay evaluation plies {plies}",
            f"set analysis cubedecision evaluation plies {plies}",
            "analyse match",
            "show statistics match",
            "quit",
            "y",
            "",
        ]
    )


@dataclass
class Settings:
    length: int
    ply: int
    seed: int
    out: Path
    model: str | None
    analysis_ply: int | None
    timeout: float


def play_match(procs: Processes, port: int, index: int, s: Settings) -> MatchRecord:
    """Play and export match ``index`` against the external player on ``port``; returns its record (not analysed)."""
    seed = s.seed + index
    final = s.out / f"match-{index:04d}.mat"
    tmp = s.out / f".match-{index:04d}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    out = run_gnubg(procs, play_script(port, seed, s.length, tmp), s.timeout)
    if "has won the match" not in out or not tmp.exists():
        tmp.unlink(missing_ok=True)
        tail = " | ".join(line.strip() for line in out.strip().splitlines()[-4:])
        raise MatchError(f"match {index} (seed {seed}) did not finish: {tail[-400:]}")
    os.replace(tmp, final)
    return match_record(index, seed, final)


def analyse(procs: Processes, record: MatchRecord, s: Settings) -> dict:
    """GNU Backgammon's statistics of a finished match (:func:`parse_statistics`), with ``"imported_score"`` the final
    score GNU Backgammon reads back from the ``.mat`` file (bgbot, gnubg)."""
    assert s.analysis_ply is not None
    out = run_gnubg(procs, analysis_script(Path(record.mat), s.analysis_ply), s.timeout)
    stats = parse_statistics(out)
    m = re.search(r"The score \(after \d+ games?\) is: .*? (\d+), .*? (\d+) \(match to", out)
    stats["imported_score"] = [int(m.group(1)), int(m.group(2))] if m else None
    return stats


class Worker:
    """One ``bgbot external`` process, playing (and analysing) the matches handed to it one after another."""

    def __init__(self, procs: Processes, s: Settings):
        self.procs, self.s = procs, s
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def run(self, index: int, results: dict[int, MatchRecord]) -> MatchRecord:
        t0 = time.perf_counter()
        if self.proc is None or self.proc.poll() is not None:
            self.proc, self.port = start_external(self.procs, self.s.model, self.s.ply)
        record = play_match(self.procs, self.port, index, self.s)
        results[index] = record  # finished: reported even if the analysis is interrupted
        if self.s.analysis_ply is not None:
            record.analysis = analyse(self.procs, record, self.s)
        record.seconds = time.perf_counter() - t0
        return record


# ------------------------------------------------------------------------------------------------- summary


def _rate(records: list[MatchRecord], side: str, section: str, count_keys: tuple[str, ...]) -> float | None:
    """Error rate in millipoints over all analysed matches: the sum of error totals over the sum of decisions."""
    analysed = [r.analysis[side] for r in records if r.analysis]
    decisions = sum(a.get(k, 0) for a in analysed for k in count_keys)
    if not analysed or decisions == 0:
        return None
    return 1000.0 * sum(a[section]["error_total_emg"] for a in analysed) / decisions


def summary(records: list[MatchRecord], args: argparse.Namespace, interrupted: bool, failures: list[str]) -> dict:
    """The JSON report of the finished matches (see the module docstring)."""
    n = len(records)
    won = sum(r.winner == "bgbot" for r in records)
    if n:
        low, high = wilson(won, n)
        win = {"percent": 100.0 * won / n, "ci95_percent": [100.0 * low, 100.0 * high]}
    else:
        win = {"percent": None, "ci95_percent": None}

    def per_side(attr: str) -> dict:
        return {side: sum(getattr(r, attr)[k] for r in records) for k, side in enumerate(SIDES)}

    errors = {
        side: {
            "chequer_memg_per_unforced_move": _rate(records, side, "chequer", ("unforced_moves",)),
            "cube_memg_per_cube_decision": _rate(records, side, "cube", ("cube_decisions",)),
            "overall_memg_per_decision": _rate(records, side, "overall", ("unforced_moves", "cube_decisions")),
        }
        for side in SIDES
    }
    return {
        "opponent": f"GNU Backgammon 1.07 ({GNUBG}), checker play and cube at 0-ply",
        "bgbot": {"model": args.model or "shipped model", "ply": args.ply, "cube": "Janowski, 0-ply probabilities"},
        "length": args.length,
        "seed": args.seed,
        "matches": n,
        "matches_won": won,
        "match_winning": win,
        "interrupted": interrupted,
        "failures": failures,
        "games": sum(r.games for r in records),
        "games_won": per_side("wins"),
        "gammons_won": per_side("gammons"),
        "backgammons_won": per_side("backgammons"),
        "cube_actions": {"doubles": per_side("doubles"), "takes": per_side("takes"), "passes": per_side("passes")},
        "analysis_ply": args.analysis_ply,
        "analysed_matches": sum(r.analysis is not None for r in records),
        "error_rates": errors,
        "per_match": [asdict(r) for r in sorted(records, key=lambda r: r.index)],
        "out": str(args.out),
    }


def _terminate(signum, frame):  # SIGTERM ends the run as Ctrl-C does
    raise KeyboardInterrupt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int_at_least(1), default=10, help="matches to play (default 10)")
    ap.add_argument("--length", type=int_at_least(1), default=7, help="match length in points (default 7)")
    ap.add_argument("--ply", type=whole_number, choices=(0, 1, 2), default=0, help="bgbot's checker-play lookahead")
    ap.add_argument(
        "--seed", type=whole_number, default=1, help="GNU Backgammon's 'set seed' of the first match (default 1)"
    )
    ap.add_argument("--workers", type=int_at_least(1), default=1, help="matches played at once (default 1)")
    ap.add_argument(
        "--out",
        default=None,
        help="folder for the .mat files and summary.json (default: a new temporary folder, named on stderr)",
    )
    ap.add_argument("--model", default=None, help="bgbot checkpoint (default: the shipped model)")
    ap.add_argument(
        "--analysis-ply",
        type=whole_number,
        choices=(0, 1, 2),
        default=2,
        help="GNU Backgammon's analysis depth (default 2)",
    )
    ap.add_argument("--no-analysis", action="store_true", help="play and export only")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds a match or an analysis may take")
    args = ap.parse_args()
    if not os.access(GNUBG, os.X_OK):
        raise BgbotError(f"GNU Backgammon is not installed at {GNUBG}")
    if args.no_analysis:
        args.analysis_ply = None
    args.out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench_match-"))
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"bench_match: the .mat files and summary.json go to {args.out}", file=sys.stderr, flush=True)
    s = Settings(args.length, args.ply, args.seed, args.out.resolve(), args.model, args.analysis_ply, args.timeout)
    procs = Processes()
    results: dict[int, MatchRecord] = {}
    failures: list[str] = []
    interrupted = False
    workers = [Worker(procs, s) for _ in range(min(args.workers, args.matches))]
    free = list(workers)
    pending = list(range(args.matches))
    running: dict[Future, Worker] = {}
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also where a shell started it with SIGINT ignored
    pool = ThreadPoolExecutor(len(workers))
    try:
        while pending or running:
            while pending and free:
                w = free.pop()
                running[pool.submit(w.run, pending.pop(0), results)] = w
            done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
            for f in done:
                free.append(running.pop(f))
                err = f.exception()
                if err is not None:
                    if not isinstance(err, BgbotError):
                        raise err
                    failures.append(str(err))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        procs.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
    records = list(results.values())
    report = summary(records, args, interrupted, failures)
    write_atomic(args.out / "summary.json", json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"bench_match: {len(records)} .mat file(s) and summary.json in {args.out}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run_script(main)
