"""The process group the shim made, taken down at the interpreter's exit, and never a rank that cannot exit.

Left to the interpreter's exit, torch's group threads abort the process ("terminate called without an active
exception"), so the group the shim made is the shim's to take down. Two things can keep that from ending:
- torch before 2.8 destroys a gloo group holding the GIL, and joins its worker threads. A worker that has just
  finished a collective drops the work's tensors; a tensor whose Python object the job already dropped needs the
  GIL to free it, and waits for the main thread, which waits for the worker: both wait forever
  (pytorch/pytorch#56297; torch 2.8 releases the GIL there, pytorch/pytorch#154976). Seen here on torch 2.4.1
  under load: a job whose last line was printed never ended. The main thread sleeps first (the GIL released) so
  that the workers drop what they hold.
- any backend's destroy may block on a peer or a driver. A guard that needs no GIL (faulthandler's own thread)
  ends the rank after EXIT_GUARD seconds with the threads' stacks on stderr and exit status 1: late and
  visible, never a job that does not end.
"""

from __future__ import annotations

import faulthandler
import sys
import time

SETTLE = 0.2  # seconds the workers of a gloo group get to drop their finished work, before its destroy
EXIT_GUARD = 60.0  # seconds the destroy may take before the rank leaves anyway


def gil_held_in_destroy(torch_version: str) -> bool:
    """Whether this torch destroys a process group holding the GIL (before 2.8: pytorch/pytorch#154976)."""
    try:
        major, minor = (int(x) for x in torch_version.split("+")[0].split(".")[:2])
    except ValueError:  # a build we cannot read: assume the old behaviour, the sleep costs SETTLE seconds
        return True
    return (major, minor) < (2, 8)


def destroy_group(dist, torch_version: str) -> None:
    """Take the default process group down (best effort, bounded by EXIT_GUARD)."""
    if not dist.is_initialized():
        return
    if dist.get_backend() == "gloo" and gil_held_in_destroy(torch_version):
        time.sleep(SETTLE)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        faulthandler.dump_traceback_later(EXIT_GUARD, exit=True, file=sys.__stderr__ or sys.stderr)
    except (ValueError, OSError, AttributeError):  # no stderr with a file descriptor: the destroy goes unguarded
        pass
    try:
        dist.destroy_process_group()
    finally:
        faulthandler.cancel_dump_traceback_later()
