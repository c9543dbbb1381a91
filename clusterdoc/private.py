"""Job folder files: created private (folders 0700, files 0600) and read without following symlinks.

A job folder holds what ranks printed and how they ended; other users of a shared cluster must not read it,
and a file swapped for a symlink (to /etc/shadow, to a FIFO, to another user's file) must not be followed by
`clusterdoc logs` or `status`. Stdlib only: the ranks' shim writes through it too.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_READ = 64 * 1024 * 1024  # what `logs` reads of one file at most


def mkdir(path, parents: bool = False) -> Path:
    path = Path(path)
    path.mkdir(mode=0o700, parents=parents, exist_ok=True)
    return path


def open_fd(path, append: bool = True) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    return os.open(path, flags, 0o600)


def open_append(path, binary: bool = False):
    return os.fdopen(open_fd(path), "ab" if binary else "a")


def write(path, text: str) -> None:
    """Write whole: a temporary file, then rename (readers never see half a file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with os.fdopen(open_fd(tmp, append=False), "w") as f:
        f.write(text)
    os.replace(tmp, path)


def read(path, limit: int = MAX_READ) -> bytes:
    """The file's bytes (at most `limit`); OSError (ELOOP) when it is a symlink, ENXIO-safe for FIFOs."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit)
    finally:
        os.close(fd)
