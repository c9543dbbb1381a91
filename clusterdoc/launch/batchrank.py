"""A rank of a user's own batch script, taken over at start-up by the job's sitecustomize
(launch/rankhook/sitecustomize.py): its script or module runs under clusterdoc.run, with the same records in the
job folder (rank<R>.out/.err/.start/.exit/.where) as a rank of a job clusterdoc wrote, then the process ends as
the interpreter would (threads joined, atexit handlers run, streams flushed) with the script's exit code.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from clusterdoc import run

RANK_PID = "CLUSTERDOC_RANK_PID"  # set in a rank: its children (spawned workers, helpers) are not ranks


def take_over(rank: int, kind: str, target: str, args: list[str], log_dir: str) -> None:
    os.environ[RANK_PID] = str(os.getpid())
    argv = ["--log-dir", log_dir, *(["--module"] if kind == "module" else []), target, *args]
    code = run.main(argv)
    if code == 0:
        try:
            threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter does at exit: join threads
        except Exception:
            pass
        try:
            atexit._run_exitfuncs()
        except Exception:
            pass
    run._flush()
    os._exit(code)  # never back to site.py: the interpreter must not run the script a second time
