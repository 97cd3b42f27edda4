"""Running fixed, seeded work units in this process, a local process pool, or on a Ray cluster.

Rollouts (:mod:`bgbot.arena.rollout`) and tournaments (:mod:`bgbot.arena.tournament`) cut their work into fixed
units whose results depend only on the unit (its seed and range), never on where or in which order it runs;
:func:`run_tasks` runs them and returns the results in task order, so the results for a seed are identical in this
process, with any number of pool workers, and on Ray. In :func:`run_tasks` with ``workers`` N > 1 the calling process
is one of the N: it runs units itself (taken from the end of the queue, with one torch and one BLAS thread, as a
worker) beside a spawn pool of N - 1 processes, so a run starts one process fewer (each start costs about 1.5
CPU-seconds, mostly importing torch). :func:`run_pool` called without ``in_process`` (tournaments) keeps a pool of N.

**Failures.** A pool worker that dies breaks the pool: the units without a result are run again in a new pool (up
to :data:`MAX_ATTEMPTS` starts of a unit). On Ray, a unit whose worker process (or node) dies is submitted again
here, as the pool does, up to :data:`MAX_ATTEMPTS` starts, and each such death is reported to ``on_restart`` (an
exception raised by the unit is a bug and is raised here). A unit's result is stored once, by its index, so nothing
is counted twice.

**Interruption** (local work). :func:`interrupt_signals` turns SIGINT (Ctrl-C) and SIGTERM into :class:`Interrupted`
in the main process, so a long command can print what it has finished. Pool workers ignore SIGINT (a terminal's
Ctrl-C reaches the whole process group; the parent decides) and watch their parent: one whose parent is gone (killed,
even by SIGKILL) exits within :data:`PARENT_POLL_S` seconds. When the parent stops early (interrupted, or a unit
raised), it terminates the pool's workers before it returns, so no process it started outlives it. The units this
process runs itself hold the signals (:func:`_signals_held`) and take them at safe points: between units and where
the unit calls :func:`safe_point` (a rollout, between plies). A handler that raises at an arbitrary bytecode could
otherwise raise inside a library's code that drops the exception (the signal lost: a long rollout would run on) or
stop it halfway through a lock or a thread-limit change.

**Ray** (the optional extra ``pip install 'bgbot[ray]'``, pinned to the tested 2.60 series): ``ray="local"`` starts
(or joins, when this process has already called ``ray.init``) a Ray instance on this machine; ``ray="HOST:PORT"`` (or
``"ray://HOST:PORT"``) joins a running cluster (started with ``ray start --head`` on one machine and ``ray start
--address=HOST:PORT`` on the others; see the README). An address that does not answer is a :class:`DistributedError`
within :data:`CONNECT_TIMEOUT_S` seconds (a TCP probe before Ray is asked, since Ray itself waits much longer).

*Token authentication* (Ray 2.60 turns it on for a cluster whose head finds a token, ``~/.ray/auth_token``, which
every local ``ray.init`` creates): as Ray does for a cluster it finds by itself, this process sends its token when it
has one (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``) and ``RAY_AUTH_MODE`` is not set; a
cluster that refuses the token (or its absence) is a :class:`DistributedError` that says so and how to give the
cluster's token.

*Output*: the driver prints neither the workers' output (``log_to_driver=False``) nor Ray's own error lines (``(raylet)
A worker died ...``, which Ray writes to stdout): stdout stays the command's (``--json`` parses); a dead worker is
counted instead (``on_restart``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import os
import pickle
import signal
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from bgbot.errors import BgbotError

__all__ = [
    "DistributedError",
    "CRASH_ENV",
    "MAX_ATTEMPTS",
    "CONNECT_TIMEOUT_S",
    "run_tasks",
    "connect_ray",
    "AUTH_HELP",
    "worker_init",
    "watch_parent",
    "Interrupted",
    "interrupt_signals",
    "safe_point",
    "run_pool",
    "stop_pool",
    "PARENT_POLL_S",
]

MAX_ATTEMPTS = 3
"""How often a unit is started before its dying worker is reported as an error."""
CONNECT_TIMEOUT_S = 10.0
"""How long the TCP probe of a Ray address waits."""


class DistributedError(BgbotError):
    """Ray not installed, a Ray address that cannot be reached, a unit whose worker died :data:`MAX_ATTEMPTS` times."""


PARENT_POLL_S = 0.5
"""How often a pool worker checks that its parent is alive."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived while :func:`interrupt_signals` was in force; ``signum`` says which. A
    KeyboardInterrupt (SIGTERM included): not an error of the work, it passes through ``except Exception``."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """The shell's convention for a process ended by the signal: 128 + its number (130 SIGINT, 143 SIGTERM)."""
        return 128 + self.signum


@contextlib.contextmanager
def interrupt_signals():
    """For the duration, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (the previous handlers are
    restored afterwards). Elsewhere than in the main thread, nothing changes (Python delivers signals there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def watch_parent(poll_s: float = PARENT_POLL_S) -> None:
    """In a pool worker: ignore SIGINT (the parent handles Ctrl-C and stops the pool) and start a daemon thread that
    ends this process (``os._exit``) as soon as its parent is gone (its parent pid changes: it was killed, even by
    SIGKILL, and this process was handed to init or a subreaper)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="bgbot-watch-parent", daemon=True).start()


def worker_init() -> None:
    """A pool worker's start: :func:`watch_parent`, then one BLAS and one torch thread (the workers are the
    parallelism)."""
    watch_parent()
    _one_thread()


def _one_thread() -> None:
    """One BLAS and one torch thread in this process."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


CRASH_ENV = "BGBOT_TEST_CRASH_DIR"
"""Test hook: when this names a directory holding a file ``armed``, the first pool or Ray worker to start a unit
renames it to ``fired`` and dies (``os._exit``), to show that a dead worker's unit is run again and counted once."""


def _call_one_thread(fn: Callable, task: Any) -> Any:
    """``fn(task)`` in a worker, with one BLAS and torch thread (torch may have been imported by the task itself)."""
    crash = os.environ.get(CRASH_ENV)
    if crash:
        try:
            os.rename(os.path.join(crash, "armed"), os.path.join(crash, "fired"))
        except OSError:
            pass
        else:
            os._exit(17)
    _one_thread()
    return fn(task)


def _probe(address: str) -> None:
    """Raise :class:`DistributedError` unless ``HOST:PORT`` accepts a TCP connection within the timeout."""
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise DistributedError(f"a Ray address is HOST:PORT, ray://HOST:PORT or 'local', got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        raise DistributedError(
            f"cannot reach the Ray cluster at {address!r} ({e}); start one with 'ray start --head' "
            "and give its address, or use --ray local"
        ) from e


AUTH_HELP = (
    "give this machine the cluster's token (on the head machine 'ray get-auth-token' prints it; here export "
    "RAY_AUTH_TOKEN=<token> or copy it to ~/.ray/auth_token) and start every node with RAY_AUTH_MODE=token"
)
"""The fix named by the error for a cluster that refuses this machine's authentication token."""


def _use_token_if_available() -> None:
    """Send this machine's Ray token when it has one and ``RAY_AUTH_MODE`` is unset: the rule Ray 2.60 applies to
    ``ray start --head`` and to a cluster ``ray.init`` finds by itself, but not to an explicit address."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    log = logging.getLogger(maybe_enable_token_auth_if_token_available.__module__)
    level = log.level
    log.setLevel(logging.ERROR)  # not Ray's warning that the *cluster* enabled token authentication: it is a client
    try:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        log.setLevel(level)


def _is_auth_failure(e: BaseException) -> bool:
    """Whether Ray's join failure ``e`` (or an exception it was raised from) is the cluster refusing the token; Ray
    2.60 wraps the :class:`ray.exceptions.AuthenticationError` in a RuntimeError's text."""
    seen: set[int] = set()
    c: BaseException | None = e
    while c is not None and id(c) not in seen:
        seen.add(id(c))
        if type(c).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(c):
            return True
        c = c.__cause__ or c.__context__
    return False


def _quiet_driver(ray) -> None:
    """Keep Ray's own error lines (``(raylet) A worker died ...``, printed to stdout by the driver's error listener
    even with ``log_to_driver=False``) off this process's stdout; the deaths are counted by :func:`run_tasks`."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if worker is not None and hasattr(worker, "_worker_logs_enabled"):
        worker._worker_logs_enabled = False


@contextlib.contextmanager
def _fd2_captured() -> Iterator[list[str]]:
    """What this process (and Ray's C++ code in it) writes to file descriptor 2 inside the block, as the one item of
    the yielded list once the block ends; stderr is restored even when the block raises."""
    sys.stderr.flush()
    saved = os.dup(2)
    captured: list[str] = []
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            f.seek(0)
            captured.append(f.read().decode(errors="replace"))


def connect_ray(address: str, num_cpus: int | None = None):
    """Ray, initialised for ``address`` (``"local"`` or a cluster address); an already initialised Ray is reused.

    Raises:
        DistributedError: Ray is not installed, the address does not answer (within :data:`CONNECT_TIMEOUT_S`), or
            the cluster refuses this machine's authentication token (the message names the fix, :data:`AUTH_HELP`).
    """
    try:
        import ray
    except ImportError as e:
        raise DistributedError("--ray needs the optional package ray: pip install 'bgbot[ray]'") from e
    if address != "local":
        _probe(address)
    if ray.is_initialized():
        _quiet_driver(ray)
        return ray
    if address == "local":
        ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        _quiet_driver(ray)
        return ray
    _use_token_if_available()
    # The GCS answered the probe: Ray's ~20 one-second connection attempts only delay the error (a refused token).
    wait = "RAY_gcs_server_port_wait_time_s"
    before = os.environ.get(wait)
    os.environ.setdefault(wait, str(int(CONNECT_TIMEOUT_S)))
    error: Exception | None = None
    try:
        with _fd2_captured() as captured:  # Ray's C++ client logs each refused attempt on stderr
            try:
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
            except Exception as e:  # Ray raises ConnectionError, RuntimeError, TimeoutError ...
                error = e
    finally:
        if before is None:
            os.environ.pop(wait, None)
    if error is not None and _is_auth_failure(error):
        raise DistributedError(
            f"the Ray cluster at {address!r} uses token authentication and refused this machine's token "
            f"(or its absence): {AUTH_HELP}"
        ) from None
    sys.stderr.write(captured[0])  # anything else Ray said while joining is kept
    if error is not None:
        raise DistributedError(f"cannot join the Ray cluster at {address!r}: {error}") from error
    _quiet_driver(ray)
    return ray


def _ray_system_failures(ray) -> tuple[type[BaseException], ...]:
    """The Ray exceptions that mean a unit's worker process or node died (not the unit failing)."""
    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "ObjectLostError")
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


def _run_ray(
    fn: Callable,
    tasks: Sequence,
    ray_address: str,
    on_result: Callable[[Any], object] | None,
    on_restart: Callable[[], object] | None,
) -> list:
    ray = connect_ray(ray_address)
    died = _ray_system_failures(ray)
    # No retries by Ray: a unit whose worker dies is submitted again below, where the death can be counted.
    remote = ray.remote(num_cpus=1, max_retries=0, retry_exceptions=False)(_call_one_thread)
    fn_ref = ray.put(fn)
    attempts = dict.fromkeys(range(len(tasks)), 1)
    pending = {remote.remote(fn_ref, t): i for i, t in enumerate(tasks)}
    results: dict[int, Any] = {}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            try:
                value = ray.get(ref)
            except died as e:
                if on_restart is not None:
                    on_restart()
                attempts[i] += 1
                if attempts[i] > MAX_ATTEMPTS:
                    raise DistributedError(
                        f"work unit {i} failed {MAX_ATTEMPTS} times (its Ray worker died each time): "
                        f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                    ) from e
                pending[remote.remote(fn_ref, tasks[i])] = i
                continue
            except ray.exceptions.RayTaskError as e:
                raise e.as_instanceof_cause() from None
            if i not in results:
                results[i] = value
                if on_result is not None:
                    on_result(value)
    return [results[i] for i in range(len(tasks))]


class _Plain:
    """An object that the pool's pickler sends as the bytes of the standard pickler (made when the unit is sent)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __reduce__(self):
        return _unplain, (pickle.dumps(self.obj),)


def _unplain(blob: bytes) -> Any:
    """The object :class:`_Plain` sent."""
    return pickle.loads(blob)


def _call_plain(unit: Any) -> Any:
    """``fn(task)`` of a unit ``(fn, task)`` sent by :func:`run_pool`."""
    fn, task = unit
    return fn(task)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: cancel what has not started, terminate the workers (SIGTERM, then SIGKILL after 5 s) and
    wait for them, so that none outlives the caller (:meth:`ProcessPoolExecutor.shutdown` alone waits for running
    units to finish)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # the executor keeps its workers there
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 5.0
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()


QUEUED_PER_WORKER = 2
"""Units handed to each pool worker ahead (one running, one waiting) when this process works too (:func:`run_pool`'s
``in_process``): a worker finds its next unit queued while this process is busy with one of its own."""


def run_pool(
    fn: Callable,
    tasks: Sequence,
    workers: int,
    on_result: Callable[[int, Any], object] | None = None,
    initializer: Callable[[], object] = worker_init,
    too_many: Callable[[int], BaseException] | None = None,
    in_process: Callable[[Any], Any] | None = None,
) -> tuple[list, int]:
    """``[fn(t) for t in tasks]`` in a spawn process pool of ``workers`` (at most one per task) -> (results in task
    order, pool restarts). A worker that dies breaks the pool: the units without a result are run again in a new pool,
    each started at most :data:`MAX_ATTEMPTS` times. Whatever stops the run early (an exception of ``fn``, an
    :class:`Interrupted`) terminates the workers first (:func:`stop_pool`).

    Args:
        on_result: called as ``on_result(index, result)`` with each result as it arrives, once per task.
        initializer: run in each worker first (it should call :func:`watch_parent`).
        too_many: the exception for unit ``i`` that failed :data:`MAX_ATTEMPTS` times (default :class:`DistributedError`).
        in_process: this process works too, as one of the ``workers``: the pool has ``workers - 1`` processes (one
            process start, mostly importing torch, saved) and this process runs units with ``in_process(task)``
            (which must compute what ``fn(task)`` does in a worker) between collecting the workers' results.

    Raises:
        DistributedError: see ``too_many``; whatever ``fn`` or ``in_process`` raises.
    """
    results: dict[int, Any] = {}
    attempts = dict.fromkeys(range(len(tasks)), 0)
    ctx = multiprocessing.get_context("spawn")
    restarts = 0
    here = in_process is not None

    def store(i: int, value: Any) -> None:
        if i not in results:
            results[i] = value
            if on_result is not None:
                on_result(i, value)

    while len(results) < len(tasks):
        todo = [i for i in range(len(tasks)) if i not in results]
        for i in todo:
            attempts[i] += 1
            if attempts[i] > MAX_ATTEMPTS:
                if too_many is not None:
                    raise too_many(i)
                raise DistributedError(f"work unit {i} failed {MAX_ATTEMPTS} times (a worker process died each time)")
        procs = min(workers, len(todo)) - here
        if procs < 1:  # one unit left and this process works: no pool
            assert in_process is not None
            for i in todo:
                with _signals_held():  # a signal stops the unit at a safe point (safe_point) or after it
                    store(i, in_process(tasks[i]))
            break
        pool = ProcessPoolExecutor(procs, mp_context=ctx, initializer=initializer)
        depth = procs * QUEUED_PER_WORKER if here else len(todo)
        pending = deque(todo)
        futures: dict[Future, int] = {}
        try:
            try:
                while pending or futures:
                    with _signals_held():  # never stopped halfway through the pool's or a future's lock
                        while pending and len(futures) < depth:
                            # Each unit travels as plain pickle bytes: the pool's own pickler would send torch tensors
                            # (a net player, an evaluator) by file descriptor, through a /tmp/pymp-* socket directory
                            # that a killed parent leaves.
                            i = pending.popleft()
                            futures[pool.submit(_call_plain, _Plain((fn, tasks[i])))] = i
                    if here and pending:  # this process's share: the units at the end of the queue
                        i = pending.pop()
                        assert in_process is not None
                        with _signals_held():  # a signal stops the unit at a safe point (safe_point) or after it
                            store(i, in_process(tasks[i]))
                        with _signals_held():
                            done = {f for f in futures if f.done()}
                    else:
                        done = wait(futures, return_when=FIRST_COMPLETED).done
                    with _signals_held():
                        for fut in done:
                            store(futures.pop(fut), fut.result())
            except BrokenProcessPool:
                restarts += 1
                for fut, i in futures.items():
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        store(i, fut.result())
        except BaseException:
            stop_pool(pool)
            raise
        pool.shutdown(wait=True)
    return [results[i] for i in range(len(tasks))], restarts


def _run_pool(fn: Callable, tasks: Sequence, workers: int, on_result: Callable[[Any], object] | None) -> list:
    def arrived(i: int, value: Any) -> None:
        if on_result is not None:
            on_result(value)

    def here(task: Any) -> Any:
        with _one_thread_here():
            return fn(task)

    return run_pool(functools.partial(_call_one_thread, fn), tasks, workers, arrived, in_process=here)[0]


_HOLDS: list[tuple[list[int], dict]] = []
"""The :func:`_signals_held` blocks in force (main thread), innermost last: the signals each has caught and not yet
delivered, and the handlers it replaced."""


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM that arrive during the block take effect at its end or at a :func:`safe_point` inside it
    (their handlers, such as :func:`interrupt_signals`', run then), so that the exception a handler raises never leaves
    a lock of the pool or of a future held (which would hang the pool's shutdown), never stops a thread-limit change
    halfway, and is never raised inside a library's code that would drop it (the signal lost). Only in the main
    thread, where Python runs handlers; a handler not set from Python is left alone."""
    names = (signal.SIGINT, signal.SIGTERM)
    old = {s: signal.getsignal(s) for s in names}
    if threading.current_thread() is not threading.main_thread() or any(h is None for h in old.values()):
        yield
        return
    caught: list[int] = []
    for s in names:
        signal.signal(s, lambda signum, frame: caught.append(signum))
    _HOLDS.append((caught, old))
    try:
        yield
    finally:
        _HOLDS.pop()
        for s, h in old.items():
            signal.signal(s, h)
        _deliver(caught, old)


def _deliver(signums: list[int], old: dict) -> None:
    """Run the handlers ``old`` (by signal) of the held signals ``signums``: a Python handler is called (it may
    raise), the default action is taken (SIGINT and SIGTERM end the process), an ignored signal is dropped."""
    for signum in signums:
        handler = old[signal.Signals(signum)]
        if callable(handler):
            handler(signum, None)
        elif handler == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)


def safe_point() -> None:
    """A point where this process's work may stop: inside a :func:`_signals_held` block (a unit that :func:`run_tasks`
    or :func:`run_pool` runs in this process), the signals it has caught are delivered now (their handlers run here:
    :func:`interrupt_signals`' raises :class:`Interrupted`) and later ones are still held. Elsewhere (a pool worker,
    another thread, no block in force) it does nothing. Costs a list lookup: call it as often as a stop should be
    prompt (a rollout calls it every ply)."""
    if not _HOLDS or not _HOLDS[-1][0]:
        return
    caught, old = _HOLDS[-1]
    signums = caught[:]
    del caught[: len(signums)]
    _deliver(signums, old)


@contextlib.contextmanager
def _one_thread_here() -> Iterator[None]:
    """For the duration, one torch and one BLAS thread in this process, as in a worker (the same floating-point
    results); torch's previous thread count is restored after."""
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    try:
        if torch is not None:
            torch.set_num_threads(1)
        with threadpool_limits(1, user_api="blas"):
            yield
    finally:
        if torch is not None and threads is not None:
            torch.set_num_threads(threads)


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: Sequence,
    workers: int = 1,
    ray: str | None = None,
    on_result: Callable[[Any], object] | None = None,
    on_restart: Callable[[], object] | None = None,
) -> list:
    """``[fn(t) for t in tasks]``, in this process (``workers <= 1``), in this process and a spawn process pool of
    ``workers - 1`` (:func:`run_pool`'s ``in_process``), or on Ray (``ray`` an address or ``"local"``; then ``workers``
    is ignored: the cluster's CPUs are the workers).

    Args:
        fn: a picklable top-level function of one task; tasks picklable.
        on_result: called with each result as it arrives (progress), once per task.
        on_restart: on Ray, called once for each death of a unit's worker process or node (the unit is run again).

    Returns:
        The results in task order.

    Raises:
        DistributedError: see the module docstring; whatever ``fn`` raises.
    """
    if ray is not None:
        return _run_ray(fn, tasks, ray, on_result, on_restart)
    if workers <= 1 or len(tasks) <= 1:
        out = []
        # as in a worker: the same floating-point results; a signal stops the work at a safe point (safe_point, or
        # between units), never halfway through the thread limits or inside a library's code
        with _signals_held(), _one_thread_here():
            for t in tasks:
                r = fn(t)
                if on_result is not None:
                    on_result(r)
                out.append(r)
                safe_point()
        return out
    return _run_pool(fn, tasks, workers, on_result)
