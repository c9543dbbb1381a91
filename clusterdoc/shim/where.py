"""Where this rank is in its collectives, in a file that outlives its process: <log dir>/rank<R>.where.

A rank that is stopped (the launcher's SIGTERM after a peer failed, SIGKILL, a frozen node) writes no exit
record, its last heartbeat may be a second old, and the job's store (on rank 0) may be gone with rank 0. So the
tracker (track.py) writes the rank's place here as it enters and leaves each group collective: at the start one
pwrite of a small JSON object at offset 0, at the end one byte of it; each write is whole or not at all (one
page), and the page cache keeps it whatever becomes of the process. A few microseconds a call (the record's
JSON is made once per call site and shape; bench/bench_tracking.py). The launcher's summary and `clusterdoc why`
read it for a rank that left no exit record (hang/early.py: the ranks a rank that left early stranded are told
by where they were).

    {"in":1,"call":{op, group, dtype, shape, site, seq, start}}   in that collective (the oldest one open)
    {"in":0,"call":{...}}                                         between collectives: that one done last
    {"in":2,"call":{...}}                                         that one failed (then stopped before its record)

Point-to-point ops and what C++ issues out of the wrappers' sight are not written (they are not a group's place).
clusterdoc.run starts it (with --log-dir); a script's own shim.init() without clusterdoc.run writes nothing. A
full disk loses the place (ENOSPC), never the rank.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from clusterdoc import private

SIZE = 4000  # bytes at most (one page): a longer record is not written
IN = len(b'{"in":')  # the offset of the "in" flag's digit


class Where:
    def __init__(self, fd: int):
        self.fd = fd
        self.size = 0  # the longest record written: a shorter one is padded over it
        self.shown = None  # the open Record the file names (None: it names the last one done, or none)
        self.lock = threading.Lock()  # async ops end on torch's threads

    def began(self, rec) -> None:
        """A collective was issued: it is the rank's place unless an older one is still open."""
        with self.lock:
            if self.shown is None:
                self._show(rec)

    def ended(self, rec, oldest) -> None:
        """`rec` completed (or failed); `oldest()`: the tracker's oldest open record now."""
        with self.lock:
            if rec is not self.shown:
                return
            self.shown = None
            other = oldest()
            if other is not None:
                self._show(other)
            else:  # 2: it failed there (a peer gone): the rank was in it, not past it
                self._write(b"2" if getattr(rec, "error", None) else b"0", IN)

    def _show(self, rec) -> None:
        data = b'{"in":1,"call":' + body(rec) + b"}"
        if len(data) <= SIZE and self._write(data + b" " * (self.size - len(data)), 0):
            self.shown, self.size = rec, max(self.size, len(data))

    def _write(self, data: bytes, offset: int) -> bool:
        try:
            os.pwrite(self.fd, data, offset)
        except OSError:  # a full disk: the place is a diagnosis aid, never the job's failure
            return False
        return True


_encoded: dict = {}  # (op, group, dtype, shape, site, note) -> their JSON: the same few on every step


def body(rec) -> bytes:
    """The record's JSON as Record.to_dict has it (less what only its end adds), in about a microsecond: it runs at
    every collective."""
    key = (rec.op, rec.group, rec.dtype, rec.shape, rec.site, rec.note)
    head = _encoded.get(key)
    if head is None:
        d = {"op": rec.op, "group": rec.group, "dtype": None, "shape": None}
        if rec.dtype is not None:
            d["dtype"] = str(rec.dtype).replace("torch.", "")
        if rec.shape is not None:
            d["shape"] = list(rec.shape)
        if rec.site and len(str(rec.site[0])) <= 1000:
            d["site"] = list(rec.site)
        if rec.note:
            d["note"] = rec.note
        if len(_encoded) >= 4096:
            _encoded.clear()
        head = _encoded[key] = json.dumps(d, separators=(",", ":"))[:-1].encode()
    return head + b',"seq":%d,"start":%r}' % (rec.seq, rec.start)


def start(log_dir: Path, rank: int) -> bool:
    """Write this rank's place into log_dir/rank<R>.where from now on (after shim.init(): the tracker is in)."""
    from . import track

    if not track.installed() or track.TRACKER.where is not None:
        return False
    try:
        fd = private.open_fd(Path(log_dir) / f"rank{rank}.where", append=False)
    except OSError:
        return False
    track.TRACKER.where = Where(fd)
    return True
