"""Job folder files: created private (folders 0700, files 0600), never through a symlink, read bounded.

A job folder holds what ranks printed and how they ended; other users of a shared cluster must not read it.
Its owner (or anyone who can write to it) may have swapped a file for a symlink (to /etc/shadow, to another
user's file), a FIFO or /dev/zero: `clusterdoc logs`, `status` or `trace`, perhaps run by an admin, must neither
follow it, block on it, load it without bound nor write through it. So every read and write of a job folder
(and of a file in a shared place) goes through here:
  - `read` / `read_json` open with O_NOFOLLOW | O_NONBLOCK, accept only a regular file, read at most a limit;
  - `write` writes a new file under a fresh name in the same folder (O_CREAT | O_EXCL | O_NOFOLLOW) and
    renames it over the target (rename replaces a symlink, it never writes through it); a failed write leaves
    no temporary behind;
  - `mkdir` refuses a folder that is a symlink;
  - `reserve` / `release`: a little space set aside so that the record of how a job ended can still be written
    when its file system is full (`write(..., reserve=...)` frees it on ENOSPC and tries once more).
Stdlib only: the ranks' shim writes through it too.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
from pathlib import Path

MAX_READ = 64 * 1024 * 1024  # what `logs` reads of one file at most
MAX_RECORD = 16 * 1024 * 1024  # a job.json, watch.json or exit record at most (they are a few KiB)
FULL = (errno.ENOSPC, errno.EDQUOT)
TEMP = re.compile(r"\.[^/]+\.[0-9a-f]{8}\.tmp")  # the name _write_new gives its temp


def size_text(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n >> 10} KiB" if not n % 1024 else f"{n} B"


def mkdir(path, parents: bool = False) -> Path:
    """A folder to write in (0700 when made here), checked as opened (O_DIRECTORY | O_NOFOLLOW): not a link, and
    this user's or its parent folder's owner's (one someone else made there first is refused)."""
    path = Path(path)
    path.mkdir(mode=0o700, parents=parents, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR) and path.is_symlink():
            raise OSError(errno.ELOOP, "is a symbolic link (not followed)", str(path)) from None
        raise
    try:
        uid = os.fstat(fd).st_uid
    finally:
        os.close(fd)
    if uid != os.geteuid() and uid != _folder_owner(path):
        raise OSError(errno.EPERM, f"refused: a folder made by another user (uid {uid})", str(path))
    return path


def open_fd(path, append: bool = True, exclusive: bool = False) -> int:
    """A file of ours to write: never through a symlink, never blocking on a FIFO; what was opened must be a regular
    file that belongs to this user (one someone else made there first, to read what we write, is refused), and it
    is made 0600 whatever it was. `exclusive`: it must not exist yet (O_EXCL)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags | (os.O_EXCL if exclusive else 0), 0o600)
    except OSError as err:
        raise _named(err, path) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() and st.st_uid != _folder_owner(path):
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(st.st_mode) else f"made by another user (uid {st.st_uid})"
        raise OSError(errno.EPERM, f"refused: {what}", str(path))
    if st.st_mode & 0o077:
        os.fchmod(fd, 0o600)
    os.set_blocking(fd, True)
    return fd


def _folder_owner(path) -> int | None:
    """The owner of the folder `path` is in (on NFS with root squash, root's files belong to nobody, as does the
    folder root made: the file is then as much its as the folder is)."""
    try:
        return os.stat(os.path.dirname(os.path.abspath(path)) or ".").st_uid
    except OSError:
        return None


def open_append(path, binary: bool = False, exclusive: bool = False):
    return os.fdopen(open_fd(path, exclusive=exclusive), "ab" if binary else "a")


def write(path, text: str | bytes, reserve=None, mode: int = 0o600) -> None:
    """Write whole, never through a symlink: a new file in the same folder, then rename (readers never see half a
    file). With `reserve` (a file made by `reserve()`), a full file system frees it and tries once more."""
    data = text.encode() if isinstance(text, str) else text
    try:
        _write_new(Path(path), data, mode)
    except OSError as err:
        if reserve is None or err.errno not in FULL or not release(reserve):
            raise
        _write_new(Path(path), data, mode)


def _write_new(path: Path, data: bytes, mode: int = 0o600) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    os.fchmod(fd, mode)  # whatever the umask
    try:
        with os.fdopen(fd, "wb") as f:  # closing flushes: a full disk may only show there
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_temps(folder) -> int:
    """Remove the temps write() leaves when its process is killed between create and rename (a rank stopped by an
    abort while it wrote its stacks): regular files with _write_new's temp name only, no link followed. Call it
    once the writers are gone. Returns how many were removed."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return 0
    removed = 0
    try:
        for entry in os.scandir(fd):
            if TEMP.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.name, dir_fd=fd)
                    removed += 1
                except OSError:
                    pass
    finally:
        os.close(fd)
    return removed


def reserve(path, size: int = 64 * 1024) -> None:
    """Set `size` bytes aside in `path` (best effort: no space, no reserve)."""
    try:
        _write_new(Path(path), bytes(size))
    except OSError:
        pass


def release(path) -> bool:
    """Give a reserve's space back; False when there was none."""
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def open_read(path):
    """A binary file object for reading `path`; never follows a symlink, never blocks: a FIFO, a device or a
    folder is an OSError at once."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        raise _named(err, path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder)", str(path))
    return os.fdopen(fd, "rb")


def read(path, limit: int = MAX_READ, whole: bool = False) -> bytes:
    """The file's bytes (at most `limit`; with `whole`, a longer file is an OSError naming the limit)."""
    with open_read(path) as f:
        data = f.read(limit + 1 if whole else limit)
    if whole and len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {size_text(limit)}, the most clusterdoc reads of it", str(path))
    return data


def read_json(path, limit: int = MAX_RECORD):
    """A JSON file read as `read(whole=True)` does. OSError for the file, ValueError (with the reason) for its
    contents: not JSON, NaN or Infinity (not JSON either), or nested too deep to parse."""
    text = read(path, limit, whole=True).decode("utf-8", "replace")
    return loads(text)


def loads(text: str):
    """json.loads without NaN / Infinity (Python's extension; other tools reject them) and without a
    RecursionError on deep nesting."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _named(err: OSError, path) -> OSError:
    if err.errno == errno.ELOOP:
        return OSError(errno.ELOOP, "is a symbolic link (not followed)", str(path))
    return err
