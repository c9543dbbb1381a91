"""Where this rank is in its collectives, in a file that outlives its process: <log dir>/rank<R>.where.

A rank that is stopped (the launcher's SIGTERM after a peer failed, SIGKILL, a frozen node) writes no exit
record, its last heartbeat may be a second old, and the job's store (on rank 0) may be gone with rank 0. So the
tracker (track.py) writes the rank's place here as it enters and leaves each group collective: one pwrite of a
small JSON object at offset 0, whole or not at all, kept by the page cache whatever becomes of the process (a few
microseconds a call; bench/bench_tracking.py). The launcher's summary and `clusterdoc why` read it for a rank that
left no exit record (hang/early.py: the ranks a rank that left early stranded are told by where they were).

    {"time": T, "current": {op, seq, group, dtype, shape, site, start}}   in that collective (the oldest open one)
    {"time": T, "last": {...}}                                          between collectives, that one done last

Point-to-point ops and what C++ issues out of the wrappers' sight are not written (they are not a group's place).
clusterdoc.run starts it (with --log-dir); a script's own shim.init() without clusterdoc.run writes nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from clusterdoc import private

SIZE = 4096  # bytes at most: a longer record loses its call site, then it is not written


class Where:
    def __init__(self, fd: int):
        self.fd = fd
        self.size = 0  # the longest record written: a shorter one is padded over it
        self.shown = None  # the open Record the file names (None: it names the last one done)
        self.lock = threading.Lock()  # async ops end on torch's threads

    def began(self, rec) -> None:
        """A collective was issued: it is the rank's place unless an older one is still open."""
        with self.lock:
            if self.shown is None:
                self.shown = rec
                self._put("current", rec)

    def ended(self, rec, oldest) -> None:
        """`rec` completed (or failed); `oldest()`: the tracker's oldest open record now."""
        with self.lock:
            if rec is not self.shown:
                return
            self.shown = oldest = oldest()
            if oldest is not None:
                self._put("current", oldest)
            else:
                self._put("last", rec)

    def _put(self, key: str, rec) -> None:
        d = rec.to_dict()
        data = json.dumps({"time": time.time(), key: d}, separators=(",", ":")).encode()
        if len(data) > SIZE:
            d.pop("site", None)
            data = json.dumps({"time": time.time(), key: d}, separators=(",", ":")).encode()
            if len(data) > SIZE:
                return
        try:
            os.pwrite(self.fd, data + b" " * (self.size - len(data)), 0)
        except OSError:  # a full disk: the place is a diagnosis aid, never the job's failure
            return
        self.size = max(self.size, len(data))


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
