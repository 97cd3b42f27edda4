"""Running fixed, seeded work units in this process, a local process pool, or on a Ray cluster.

Rollouts (:mod:`bgbot.arena.rollout`) and tournaments (:mod:`bgbot.arena.tournament`) cut their work into fixed
units whose results depend only on the unit (its seed and range), never on where or in which order it runs;
:func:`run_tasks` runs them and returns the results in task order, so the results for a seed are identical in this
process, with any number of pool workers, and on Ray.

**Failures.** A pool worker that dies breaks the pool: the units without a result are run again in a new pool (up
to :data:`MAX_ATTEMPTS` starts of a unit). On Ray, a unit whose worker process (or node) dies is submitted again
here, as the pool does, up to :data:`MAX_ATTEMPTS` starts, and each such death is reported to ``on_restart`` (an
exception raised by the unit is a bug and is raised here). A unit's result is stored once, by its index, so nothing
is counted twice.

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
import logging
import multiprocessing
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
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
]

MAX_ATTEMPTS = 3
"""How often a unit is started before its dying worker is reported as an error."""
CONNECT_TIMEOUT_S = 10.0
"""How long the TCP probe of a Ray address waits."""


class DistributedError(BgbotError):
    """Ray not installed, a Ray address that cannot be reached, a unit whose worker died :data:`MAX_ATTEMPTS` times."""


def worker_init() -> None:
    """One BLAS and one torch thread per worker process (the workers are the parallelism)."""
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
    worker_init()
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


def _run_pool(fn: Callable, tasks: Sequence, workers: int, on_result: Callable[[Any], object] | None) -> list:
    results: dict[int, Any] = {}
    attempts = dict.fromkeys(range(len(tasks)), 0)
    ctx = multiprocessing.get_context("spawn")

    def store(i: int, value: Any) -> None:
        if i not in results:
            results[i] = value
            if on_result is not None:
                on_result(value)

    while len(results) < len(tasks):
        todo = [i for i in range(len(tasks)) if i not in results]
        for i in todo:
            attempts[i] += 1
            if attempts[i] > MAX_ATTEMPTS:
                raise DistributedError(f"work unit {i} failed {MAX_ATTEMPTS} times (a worker process died each time)")
        with ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx, initializer=worker_init) as pool:
            futures = {pool.submit(_call_one_thread, fn, tasks[i]): i for i in todo}
            try:
                for fut in as_completed(futures):
                    store(futures[fut], fut.result())
            except BrokenProcessPool:
                for fut, i in futures.items():
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        store(i, fut.result())
    return [results[i] for i in range(len(tasks))]


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: Sequence,
    workers: int = 1,
    ray: str | None = None,
    on_result: Callable[[Any], object] | None = None,
    on_restart: Callable[[], object] | None = None,
) -> list:
    """``[fn(t) for t in tasks]``, in this process (``workers <= 1``), a spawn process pool of ``workers``, or on Ray
    (``ray`` an address or ``"local"``; then ``workers`` is ignored: the cluster's CPUs are the workers).

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
        from threadpoolctl import threadpool_limits

        out = []
        torch = sys.modules.get("torch")
        threads = torch.get_num_threads() if torch is not None else None
        try:
            if torch is not None:
                torch.set_num_threads(1)
            with threadpool_limits(1, user_api="blas"):  # as in a worker: the same floating-point results
                for t in tasks:
                    r = fn(t)
                    if on_result is not None:
                        on_result(r)
                    out.append(r)
        finally:
            if torch is not None and threads is not None:
                torch.set_num_threads(threads)
        return out
    return _run_pool(fn, tasks, workers, on_result)
