"""Progress bars for long work (tqdm), drawn on stderr only for a person watching it: when the stream is a terminal.

Public API::

    progress_bar(iterable=None, *, enabled=True, file=sys.stderr, **tqdm_options) -> tqdm.tqdm

Piped or redirected stderr (a log file, a CI job, ``2>err.txt``) gets no bar at all, so logs hold only the program's
messages; ``enabled`` is the caller's own switch (``--quiet``, ``progress=False``).
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

__all__ = ["progress_bar"]


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress_bar(iterable=None, *, enabled: bool = True, **options) -> tqdm:
    """A tqdm bar (``iterable`` and ``options`` as tqdm takes them: total, desc, unit, leave, ...) on ``file``
    (default stderr), disabled unless ``enabled`` and that stream is a terminal. A disabled bar writes nothing and
    passes ``iterable`` through."""
    stream = options.pop("file", None) or sys.stderr
    return tqdm(iterable, file=stream, disable=not (enabled and _is_terminal(stream)), **options)
