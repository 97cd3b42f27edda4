"""Progress bars: drawn on a terminal, never into a pipe or a file; every bar in bgbot and training goes through
bgbot.progress.progress_bar (one rule for when a bar is drawn)."""

import io
import re
import subprocess
import sys
from pathlib import Path

from bgbot.progress import progress_bar

ROOT = Path(__file__).resolve().parents[1]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_only_on_a_terminal():
    for stream, enabled, drawn in (
        (_Terminal(), True, True),
        (_Terminal(), False, False),
        (io.StringIO(), True, False),
    ):
        assert list(progress_bar(range(5), file=stream, enabled=enabled, mininterval=0)) == list(range(5))
        assert ("5/5" in stream.getvalue()) == drawn


def test_piped_stderr_gets_no_bar(tmp_path):
    """A rollout with its progress bar on (the default), stderr a pipe: nothing on stderr."""
    argv = ["rollout", "4HPwATDgc/ABMA", "--trials", "36", "--truncate", "2", "--seed", "1", "--workers", "1"]
    run = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == "" and "± SE" in run.stdout


def test_every_bar_goes_through_the_helper():
    users = [
        p
        for folder in ("bgbot", "training", "scripts")
        for p in (ROOT / folder).rglob("*.py")
        if re.search(r"^\s*(from tqdm|import tqdm)", p.read_text(), re.M) and p.name != "progress.py"
    ]
    assert users == []
