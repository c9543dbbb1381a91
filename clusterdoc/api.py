"""The Python API: `check()` returns a Report, `submit()` a Job, `build_wheel()` a WheelResult.

The CLI (cli.py) parses arguments into the same options objects and calls the same cores; these functions
only spell the options as keyword arguments. User mistakes raise UsageError (a ValueError) with the message
the CLI prints.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from clusterdoc.doctor import CheckOptions, Report
from clusterdoc.jobs.folder import JobDir, find_job
from clusterdoc.launch.job import JobSpec
from clusterdoc.launch.options import SubmitOptions
from clusterdoc.launch.outcome import Outcome
from clusterdoc.wheel.options import WheelOptions, WheelResult

ENDED = ("COMPLETED", "FAILED", "CANCELLED")


def check(
    hostfile: str | None = None,
    *,
    checks: list[str] | str | None = None,
    local: bool = False,
    facts_dir: str | None = None,
    **options,
) -> Report:
    """The doctor: `check("hostfile")`, `check(nodelist=["gpu[01-04]"])`, `check(local=True)`, or
    `check(facts_dir="saved/")`. Keyword options are CheckOptions' fields (timeout, ssh_config, skip, ...)."""
    from clusterdoc import doctor

    options.setdefault("progress", False)  # a library call draws nothing unless asked
    opts = CheckOptions(hostfile=hostfile, checks=checks, local=local, facts_dir=facts_dir, **options)

    return doctor.check(opts)


def submit(script: str, args: list[str] | tuple[str, ...] = (), **options) -> Job:
    """Run `script` (with `args`) after a preflight check, under a supervisor of its own, and return at once.
    Keyword options are SubmitOptions' fields (nodes, backend, debug, hostfile, ...); what is not given comes
    from CLUSTERDOC_<KEY>, the YAML config, or the default, as for `clusterdoc submit`. Raises
    PreflightFailed (its str() is the doctor's report) when the preflight finds problems."""
    from clusterdoc.launch import submit as core

    return Job(core.start(SubmitOptions(script=script, script_args=list(args), **options)))


def build_wheel(**options) -> WheelResult:
    """`clusterdoc build-wheel`; with dry_run=True, the plan (environment and commands) and nothing built.
    Keyword options are WheelOptions' fields (arch_list, hostfile, ops, install, ...)."""
    from clusterdoc.wheel import build_wheel as core

    return core(WheelOptions(**options))


class Job:
    """A submitted job, on any backend (like submitit's Job): its folder is the record, so a Job found later
    (`Job.find`) knows as much as the one `submit()` returned."""

    def __init__(self, folder: JobDir | str | Path):
        self._dir = folder if isinstance(folder, JobDir) else JobDir(Path(folder))
        self._record = self._dir.read()

    @classmethod
    def find(cls, job: str | Path, folder: str | None = None) -> Job:
        """By clusterdoc job id, log folder, or Slurm job id (as `clusterdoc status`)."""
        return cls(find_job(str(job), folder))

    @property
    def id(self) -> str:
        return self._dir.id

    @property
    def folder(self) -> Path:
        return self._dir.path

    @property
    def spec(self) -> JobSpec:
        return JobSpec(**self._record["spec"])

    @property
    def backend(self) -> str:
        return self.spec.backend

    @property
    def backend_id(self) -> str | None:
        """Slurm's job id, or the launcher's process id."""
        bid = self._dir.read().get("backend_id")
        return None if bid is None else str(bid)

    @property
    def state(self) -> str:
        """PENDING, RUNNING, COMPLETED, FAILED or CANCELLED (Slurm's words). A job whose supervisor died
        without a word (LOST) and Slurm's other ends (TIMEOUT, NODE_FAIL, ...) are FAILED. The job has ended
        when its supervisor has recorded how (so the outcome is there to read), not when Slurm says so."""
        from clusterdoc.launch import control

        record = self._dir.read()
        state = control.live_state(self._dir, record)
        if record.get("state") not in ("PENDING", "RUNNING") or state == "LOST":
            return _slurm_word(record.get("state") if state != "LOST" else "FAILED")
        return "PENDING" if state == "PENDING" else "RUNNING"

    def done(self) -> bool:
        return self.state in ENDED

    def wait(self, timeout: float | None = None, poll: float = 0.5) -> Outcome:
        """Block until the job ends; its Outcome says which ranks failed, with their codes. A failed job is
        an outcome, not an exception; TimeoutError only when `timeout` seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.done():
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} still {self.state} after {timeout:g} s")
            time.sleep(poll)
        return self.outcome()

    def outcome(self) -> Outcome:
        record = self._dir.read()
        saved = record.get("outcome")
        if not saved:
            return Outcome(state=self.state, message="the job ended without an outcome record (its supervisor died?)")
        return Outcome(**{**saved, "codes": {int(k): v for k, v in saved["codes"].items()}})

    def logs(self, rank: int | None = None) -> str:
        """One rank's stdout then stderr, or every rank's with "[rank R] " before each line."""
        from clusterdoc.launch import control

        text, _refused = control.rank_logs(self._dir, rank)
        if rank is None:
            return text
        prefix = f"[rank {rank}] "
        return "".join(line[len(prefix) :] if line.startswith(prefix) else line for line in text.splitlines(True))

    def cancel(self) -> None:
        """Stop every rank (scancel for Slurm); returns when they are gone. A Slurm controller that does not
        answer is said on stderr, as `clusterdoc cancel` says it: the job may still run."""
        from clusterdoc.launch import control

        done = control.cancel(self._dir)
        if not done.ok:
            print(f"clusterdoc cancel: {done.message}", file=sys.stderr)

    def __repr__(self) -> str:
        return f"Job({self.id!r}, backend={self.backend!r}, folder={str(self.folder)!r})"


def _slurm_word(state: str | None) -> str:
    if state and state.startswith("CANCELLED"):
        return "CANCELLED"
    return state if state in ENDED else "FAILED"
