"""``bgbot serve`` started on a free loopback port for the tests that talk to it (the JSON API, the web page)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

BGBOT = [sys.executable, "-m", "bgbot.cli"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(*options: str) -> Iterator[str]:
    """Run ``bgbot serve --port P *options`` until the block ends; yields its base URL once ``/v1/health`` answers.
    The server is terminated (and waited for) however the block ends."""
    port = free_port()
    proc = subprocess.Popen([*BGBOT, "serve", "--port", str(port), *options], stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in (proc.stderr.readline() if proc.stderr else "")
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(url + "/v1/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
