"""What ties a job's processes to the launcher, so that a job leaves nothing behind.

`die_with_parent(sig)` is a Popen preexec_fn: the child gets `sig` the moment the process that started it
dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG). Local ranks get SIGTERM; mpirun gets SIGTERM too, and
Hydra / ORTE then stop the remote ranks themselves. `clusterdoc cancel` uses `ours()` before it signals a
recorded pid: a pid can be reused, and only a process of this job may be stopped.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM):
    parent = os.getpid()
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec():
        signal.signal(sig, signal.SIG_DFL)  # a launcher started in the background has SIGINT ignored
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the launcher died before prctl took effect
            os.kill(os.getpid(), sig)

    return preexec


def ours(pid: int, marker: str) -> bool:
    """Is `pid` alive and one of this job's processes (its command line names the job folder)?"""
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as f:
            return marker.encode() in f.read()
    except OSError:
        return False
