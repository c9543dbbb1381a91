"""`clusterdoc submit`, `status`, `logs`, `cancel`: what the user sees. The jobs behind them are each their own
module: settings.py (settings -> spec, backend choice), attempts.py (starting, waiting, retrying), supervise.py
(--no-wait's detached supervisor), control.py (a job on record: state, status, cancel, logs, as data); the backends
behind backend.py's interface only start ranks, poll them and cancel them.
"""

from __future__ import annotations

import sys

from clusterdoc.jobs.folder import JobDir, default_root, discard, find_job, reserve_job_dir
from clusterdoc.launch import control
from clusterdoc.launch.attempts import cancel_on_signals, hold_signals, lowered, run_attempts  # noqa: F401 (lowered: submit.X users)
from clusterdoc.launch.backend import backend_for
from clusterdoc.launch.control import live_state, rank_logs  # noqa: F401 (submit.X users)
from clusterdoc.launch.errors import LaunchError
from clusterdoc.launch.job import JobSpec, init_job_dir
from clusterdoc.launch.options import SubmitOptions
from clusterdoc.launch.settings import (  # noqa: F401 (submit.X users)
    backend_and_why,
    batch_note,
    build_spec,
    choose_backend,
    resolve,
)
from clusterdoc.launch.supervise import detach, supervise
from clusterdoc.untrusted import printable_lines


def check_ready(spec: JobSpec) -> None:
    """What the backend can know before anything starts (Slurm: sbatch, slurm.conf, the controller)."""
    backend_for(spec.backend).check_ready()


def preflight(spec: JobSpec, job_id: str, out=sys.stderr) -> None:
    """The doctor on the job's nodes; raises PreflightFailed (with the report) when it finds problems."""
    ok, text = backend_for(spec.backend).preflight(spec, job_id)
    if text and out is not None:
        print(text, file=out)
    if not ok:
        raise PreflightFailed(text)


class PreflightFailed(LaunchError):
    """The preflight found problems: the job was not submitted. str() is the doctor's report."""


def start(opts: SubmitOptions) -> JobDir:
    """Preflight, then the job under a detached supervisor (what `clusterdoc.submit()` does): returns at once."""
    spec, settings, _why = resolve(opts)
    check_ready(spec)
    jd = reserve_job_dir(default_root(settings["folder"]), spec.backend)  # its id: the rendezvous port's seed
    try:
        if spec.preflight:
            preflight(spec, jd.id, out=None)
        init_job_dir(jd, spec)
    except BaseException:
        discard(jd)
        raise
    detach(spec, jd, quiet=True)
    return jd


def main(opts: SubmitOptions) -> int:
    """`clusterdoc submit`: with --wait (the default for local) streams the ranks' output until the end."""
    spec, settings, why = resolve(opts)
    backend = spec.backend
    print(f"backend: {backend} ({why})", file=sys.stderr, flush=True)
    check_ready(spec)
    root = default_root(settings["folder"])
    wait = settings["wait"] if settings["wait"] is not None else backend_for(backend).waits
    note = batch_note(spec, root) if root.is_dir() else None
    if note:
        print(note, file=sys.stderr)
    jd = reserve_job_dir(root, backend)  # its id is known before the preflight: the rendezvous port derives from it
    try:
        if not settings["no_preflight"]:
            preflight(spec, jd.id)
        init_job_dir(jd, spec)
    except PreflightFailed:
        discard(jd)
        print(
            "clusterdoc submit: preflight found problems; job not submitted "
            "(fix them, or pass --no-preflight to submit anyway)",
            file=sys.stderr,
        )
        return 1
    except BaseException:
        discard(jd)
        raise
    print(
        f"job {jd.id} ({backend}, {spec.nodes} node(s) x {spec.tasks_per_node} rank(s)); logs: {jd.path}",
        file=sys.stderr,
    )
    if not wait:
        return detach(spec, jd)
    cancel_on_signals()
    try:
        outcome = run_attempts(spec, jd, stream=True)
    except KeyboardInterrupt:
        hold_signals()
        print(f"clusterdoc submit: cancelled; logs kept in {jd.path}", file=sys.stderr)
        return 130
    print(f"clusterdoc submit: {outcome.describe()} (logs: {jd.path})", file=sys.stderr)
    return 0 if outcome.ok else 1


def status_main(job: str, folder: str | None) -> int:
    import re

    from clusterdoc.errors import UsageError

    try:
        jd = find_job(job, folder)
    except UsageError as exc:
        if not re.fullmatch(r"\d{1,12}(_\d{1,9})?", job):
            raise
        lines, code = control.slurm_status(job, exc.message)
    else:
        lines, code = control.status(jd)
    for line in lines:  # escaped: another user may have shaped the folder's files
        print(printable_lines(line))
    return code


def cancel_main(job: str, folder: str | None, grace: float = 30.0) -> int:
    done = control.cancel(find_job(job, folder), grace)
    if not done.ok:
        print(f"clusterdoc cancel: {done.message}", file=sys.stderr)
        return 1
    print(done.message)
    return 0


def logs_main(job: str, folder: str | None, rank: int | None) -> int:
    jd = find_job(job, folder)
    text, refused = rank_logs(jd, rank)
    # all on stdout: this is the command's output, for grep and less; escaped (a rank's output, or a file
    # someone put in the folder, must not drive the terminal): the files themselves hold the raw bytes
    sys.stdout.write(printable_lines(text.removesuffix("\n")) + "\n" if text else "")
    sys.stdout.flush()
    if refused:
        print(
            f"clusterdoc logs: not following symlinks in {jd.path}: {', '.join(refused)} (a rank file must be "
            "a file the rank wrote; someone replaced it)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--supervise":
        raise SystemExit(supervise(sys.argv[2]))
    raise SystemExit("usage: python -m clusterdoc.launch.submit --supervise JOBDIR")
