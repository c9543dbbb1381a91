"""A main thread blocked in a DataLoader: its workers' PIDs, the one it waits for, and that worker's stack.

A worker is another process, so its stack comes from the worker itself: faulthandler, registered for
LOADER_SIGNAL in the rank before the DataLoader forks its workers (they inherit the handler and the file), is
asked for it by the watchdog when it answers a dump request. Not had with a 'spawn' start method, or when the
job has its own handler for the signal: then the PIDs alone (py-spy dump --pid PID shows the rest).
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import time

from clusterdoc import private

from .progress import internal_file

LOADER_SIGNAL = signal.SIGUSR2  # dumps a DataLoader worker's stack (faulthandler, inherited through fork)
_loader_file = None
_loader_path = ""


def watch_loader_workers(path) -> None:
    """Make forked DataLoader workers dump their Python stacks into `path` on LOADER_SIGNAL (registered here,
    before the workers fork; not done when the job has its own handler for that signal)."""
    global _loader_file, _loader_path
    if _loader_file is not None or signal.getsignal(LOADER_SIGNAL) not in (signal.SIG_DFL, None):
        return
    try:
        _loader_file = private.open_append(path)  # kept open: the handler writes to its descriptor
        _loader_path = str(path)
        faulthandler.register(LOADER_SIGNAL, file=_loader_file, all_threads=True, chain=False)
    except (OSError, ValueError, RuntimeError):
        _loader_file = None


def loader_wait(frame) -> dict | None:
    """When the main thread waits for a DataLoader's worker: its workers' PIDs, the one awaited, and that
    worker's stack where it can be had (faulthandler, see watch_loader_workers)."""
    it = None
    while frame is not None:
        me = frame.f_locals.get("self") if frame.f_code.co_name in ("_next_data", "_get_data") else None
        if type(me).__name__ == "_MultiProcessingDataLoaderIter":
            it = me
            break
        frame = frame.f_back
    if it is None:
        return None
    try:
        pids = [w.pid for w in it._workers]
        info = it._task_info.get(it._rcvd_idx) or ()
        worker = info[0] if info else None
    except Exception:  # torch internals that moved: the PIDs are a bonus
        return None
    out: dict = {"workers": pids}
    if isinstance(worker, int) and 0 <= worker < len(pids):
        out["worker"], out["pid"] = worker, pids[worker]
        stack = _worker_stack(pids[worker])
        if stack:
            out["stack"], out["site"] = stack, worker_site(stack)
    return out


def _worker_stack(pid: int, limit: int = 4000) -> str | None:
    if _loader_file is None:
        return None
    try:
        start = os.path.getsize(_loader_path)
        os.kill(pid, LOADER_SIGNAL)
        for _ in range(20):
            time.sleep(0.05)
            if os.path.getsize(_loader_path) > start:
                break
        time.sleep(0.05)
        with open(_loader_path, "rb") as f:
            f.seek(start)
            return f.read(limit).decode("utf-8", "replace") or None
    except OSError:
        return None


def worker_site(stack: str) -> list | None:
    """The user's innermost frame in a faulthandler dump ('File "x", line N in f', most recent call first)."""
    for m in re.finditer(r'File "([^"]+)", line (\d+) in (\S+)', stack):
        if not internal_file(m.group(1)):
            return [m.group(1), int(m.group(2)), m.group(3)]
    return None
