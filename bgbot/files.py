"""Files written atomically: a kill or a full disk at any moment leaves either the old file or the new one, never a
truncated mix. One helper for every file bgbot writes (checkpoints, databases, .mat files, records)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes | str, *, sync_dir: bool = False) -> Path:
    """Write ``data`` (bytes, or text as UTF-8) to ``path``: a temporary file in the same directory, flushed and
    fsynced, made readable by everyone (0644; mkstemp makes 0600), then renamed over ``path`` with ``os.replace``
    (atomic on POSIX). On any failure the temporary file is removed and ``path`` is left as it was.

    Args:
        sync_dir: also fsync the directory afterwards, so that the rename itself survives a power cut.

    Returns:
        ``path`` as a :class:`pathlib.Path`.

    Raises:
        OSError: the directory is missing or not writable, or the disk is full; ``path`` is there and is not a regular
            file (a directory, a device such as ``/dev/null``: the rename would replace it).
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise OSError(errno.EEXIST, "it is there and is not a regular file, not replaced", str(path))
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync_dir:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return path
