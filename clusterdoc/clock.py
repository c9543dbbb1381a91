"""The ranks' clock: wall-clock seconds that a step of the node's clock does not move.

A node's CLOCK_REALTIME can jump mid-job (NTP or chrony stepping a drifted clock, an admin's `date -s`); the
monotonic clock never steps. Durations measured on the wall clock then jump with it: a rank's collective has
"waited an hour" (a stall claimed on a healthy job), its compute time or its wait is an hour (a straggler named
that is none). `now()` is the wall time when this process first asked, carried forward by the monotonic clock:
durations between two readings are true, and timestamps stay comparable with the other nodes' as long as the clocks
agreed when the ranks started (issue 43's campaign: a clock jump on one node).
"""

from __future__ import annotations

import time

_WALL0 = time.time()
_MONO0 = time.monotonic()


def now() -> float:
    """Seconds since the epoch, as this process's wall clock read at its start, advanced by the monotonic clock."""
    return _WALL0 + (time.monotonic() - _MONO0)


def stepped() -> float:
    """How far the wall clock has been stepped since this process started (seconds; 0 when it has not): what to
    take off a wall-clock time read elsewhere in this process (torch's flight recorder) to set it against now()."""
    return time.time() - now()
