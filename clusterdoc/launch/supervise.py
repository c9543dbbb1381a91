"""--no-wait and `clusterdoc.submit()`: the attempts run under a supervisor in its own session
(`python -m clusterdoc.launch.submit --supervise JOBDIR`), which outlives the command that started it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.jobs.folder import JobDir
from clusterdoc.launch import lifeline
from clusterdoc.launch.attempts import cancel_on_signals, run_attempts
from clusterdoc.launch.backend import backend_for
from clusterdoc.launch.job import JobSpec
from clusterdoc.launch.outcome import Outcome


def detach(spec: JobSpec, jd: JobDir, quiet: bool = False) -> int:
    """--no-wait: a supervisor in its own session runs the attempts (stops ranks on failure, OOM retries)."""
    log = private.open_append(jd.path / "supervisor.log", True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterdoc.launch.submit", "--supervise", str(jd.path)],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=spec.cwd,
    )
    log.close()
    jd.update(supervisor_pid=proc.pid, supervisor_start=lifeline.start_time(proc.pid))
    # a scheduler's id (Slurm's) is worth waiting a moment for: it is what users pass to squeue / scancel
    if backend_for(spec.backend).scheduler:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not jd.read().get("backend_id"):
            time.sleep(0.2)
        rec = jd.read()
        bid = rec.get("backend_id")
        if not bid and proc.poll() is not None:  # sbatch refused it: say why instead of an id
            why = (rec.get("outcome") or {}).get("message") or f"see {jd.path / 'supervisor.log'}"
            if quiet:
                raise UsageError(f"job {jd.id} was not submitted: {why}")
            print(f"clusterdoc submit: job {jd.id} was not submitted: {why}", file=sys.stderr)
            return 1
        if bid and not quiet:
            print(f"{spec.backend} job {bid}", file=sys.stderr)
    if not quiet:
        print(jd.id)
    return 0


def supervise(path: str) -> int:
    jd = JobDir(Path(path))
    rec = jd.read()
    spec = JobSpec(**rec["spec"])
    cancel_on_signals()  # `clusterdoc cancel` sends SIGTERM: stop the ranks, record CANCELLED
    try:
        outcome = run_attempts(spec, jd, stream=False)
    except KeyboardInterrupt:
        return 130
    except UsageError as exc:  # could not start (sbatch refused it): on record already, for `status`
        print(f"clusterdoc: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # recorded for `clusterdoc status`
        jd.update(state="FAILED", outcome=Outcome(state="FAILED", message=f"supervisor error: {exc}").to_json())
        raise
    return 0 if outcome.ok else 1
