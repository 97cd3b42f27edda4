"""GNU Backgammon (``/usr/games/gnubg``) reading a ``.mat`` file back, for the tests of the files bgbot writes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

GNUBG = "/usr/games/gnubg"


def imported_score(mat: str | Path, setup: str = "") -> tuple[int, int]:
    """The final score GNU Backgammon reads from a ``.mat`` match or money session (``import mat``, ``show score``),
    as (left player, right player). ``setup``: commands to run first (e.g. ``"set jacoby off\\n"``). Fails the test
    when GNU Backgammon warns about the file."""
    script = f"{setup}import mat {mat}\nshow score\nquit\ny\n"
    out = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=120).stdout
    assert "WARNING" not in out and "garbage" not in out, out[-2000:]
    m = re.search(r"The score \(after \d+ games?\) is: .*? (\d+), .*? (\d+) \((?:match to|money session)", out)
    assert m, out[-1000:]
    return int(m.group(1)), int(m.group(2))
