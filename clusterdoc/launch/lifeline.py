"""What ties a job's processes to the launcher, so that a job leaves nothing behind.

`die_with_parent(sig)` is a Popen preexec_fn: the child gets `sig` the moment the process that started it
dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG). Local ranks get SIGTERM; mpirun gets SIGTERM too, and
Hydra / ORTE then stop the remote ranks themselves. A job records each process it starts as its pid and its
start time (`start_time`); `clusterdoc cancel` signals a recorded pid only when `same_process` says the process
with that pid now is the one recorded: a pid can be reused (by anything, another clusterdoc job included), and
only a process of this job may be stopped.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
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


def start(argv: list[str], env: dict, cwd: str | None, out, err, sig: int) -> subprocess.Popen:
    """A job's process (a rank, or the launcher that starts them): in a session of its own (a terminal's Ctrl-C
    reaches it through us), no stdin, its output to the job's files, and `sig` the moment we die."""
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=out,
        stderr=err,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=die_with_parent(sig),
    )


def start_time(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (/proc/PID/stat field 22); None when there is no such
    process (or only its zombie). Together with the pid, it names one process for as long as the machine runs."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            stat = f.read(4096)
        # field 2 (the command name, in parentheses) may hold spaces and ')': count from the last ')'
        fields = stat[stat.rindex(b")") + 2 :].split()
        return None if fields[0] == b"Z" else int(fields[19])  # a zombie has ended: nothing left to stop
    except (OSError, ValueError, IndexError):
        return None


def same_process(pid, started) -> bool:
    """Is `pid` alive and the very process recorded with start time `started`? (Values from a job record:
    anything that is not a positive int is no process of ours.)"""
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (pid, started)):
        return False
    return start_time(pid) == started
