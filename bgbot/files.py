"""Files written atomically: a kill or a full disk at any moment leaves either the old file or the new one, never a
truncated mix. One helper for every file bgbot writes (checkpoints, databases, .mat files, records)."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

Writer = Callable[[BinaryIO], object]
"""A function that writes a file's content into the open binary file it is given (e.g. ``lambda f: torch.save(payload,
f)``, which then streams into the temporary file instead of building the whole file in memory first)."""


def write_atomic(path: str | Path, data: bytes | str | Writer, *, sync_dir: bool = False) -> Path:
    """Write ``data`` to ``path``: a temporary file in the same directory, flushed and fsynced, made readable by
    everyone (0644; mkstemp makes 0600), then renamed over ``path`` with ``os.replace`` (atomic on POSIX). On any
    failure the temporary file is removed and ``path`` is left as it was.

    Args:
        data: bytes; text, written as UTF-8; or a :data:`Writer` called once with the open temporary file.
        sync_dir: also fsync the directory afterwards (:func:`sync_directory`), so that the rename itself survives a
            power cut.

    Returns:
        ``path`` as a :class:`pathlib.Path`.

    Raises:
        OSError: the directory is missing or not writable, or the disk is full; ``path`` is there and is not a regular
            file (a directory, a device such as ``/dev/null``: the rename would replace it).
        Exception: whatever a :data:`Writer` raises (torch reports a full disk as ``RuntimeError``), ``path``
            unchanged.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise OSError(errno.EEXIST, "it is there and is not a regular file, not replaced", str(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync_dir:
        sync_directory(path.parent)
    return path


def sync_directory(directory: str | Path) -> None:
    """fsync ``directory`` itself, so that the names created, renamed or removed in it survive a power cut (a file's
    own fsync does not cover its directory entry).

    Raises:
        OSError: ``directory`` is missing or cannot be opened.
    """
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def not_a_file(name: str, path: str | Path, want: str) -> str:
    """The one-line message for a path that must be a regular file and is not (a directory): ``"NAME 'PATH' is not a
    regular file (a directory?): give WANT"``; ``name`` is how the user gave the path (``"--save"``, ``"FILE.mat"``),
    ``want`` what to give instead (``"the .mat file's name"``)."""
    return f"{name} {str(path)!r} is not a regular file (a directory?): give {want}"


def not_a_directory(name: str, path: str | Path, want: str) -> str:
    """The one-line message for an output path that must be a directory and is not: ``"NAME 'PATH' exists and is not
    a directory: give WANT"`` (``want``: ``"a directory for the parts"``)."""
    return f"{name} {str(path)!r} exists and is not a directory: give {want}"


def unreadable(name: str, path: str | Path, err: OSError, want: str) -> str:
    """The one-line message for an input file that could not be opened or read: ``"NAME 'PATH' is not a regular file
    (a directory?): give WANT"`` for a directory, else ``"cannot read NAME 'PATH': REASON"`` with the system's reason
    (``No such file or directory``, ``Permission denied``) instead of Python's ``[Errno N] ...``.

    Args:
        name: how the user gave the path: an option (``"--batch"``) or an argument's metavar (``"FILE.mat"``).
        path: the path as given.
        err: the error opening or reading it raised.
        want: what to give instead, e.g. ``"the .mat file's name"``.
    """
    if isinstance(err, IsADirectoryError) or Path(path).is_dir():
        return not_a_file(name, path, want)
    return f"cannot read {name} {str(path)!r}: {err.strerror or err}"
