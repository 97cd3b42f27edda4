"""JSON Lines logs of training runs and stages (``log.jsonl``, ``eval.jsonl``, a fit's ``curve.jsonl``): one record a
line, appended whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["append_jsonl"]


def append_jsonl(path: str | Path, record: dict) -> None:
    """Append ``record`` to ``path`` as one JSON line, with a single write, then flush and fsync; a failed write is cut
    back off, so the file holds whole lines only. The directory is made when missing.

    Raises:
        OSError: the line could not be written (a full disk, a read-only directory).
    """
    path = Path(path)
    line = (json.dumps(record) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as f:
        size = f.tell()
        try:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        except OSError:
            f.truncate(size)  # no half line left behind (a full disk may take part of the write)
            raise
