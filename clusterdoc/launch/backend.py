"""The one interface every launcher backend implements, and the table that names them (submitit's Executor and
AutoExecutor): a new backend is a class here and its module, found by name in BACKENDS, never by `getattr` on a
module.

A backend says when it fits unasked (`affinity`: Slurm when a controller answers, mpirun when a hostfile is given,
local otherwise, in BACKENDS' order), checks a job's settings (`validate`) and what it can know before anything
starts (`check_ready`), runs the doctor on the job's nodes (`preflight`, over `nodes`), starts an attempt (`start`
-> a Handle: poll, cancel, each rank's code), and for a job on record gives the scheduler's word on its state
(`live_state`), cancels it there (`cancel`), names its own log files (`extra_logs`) and the nodes a new attempt
could use (`available_nodes`). What submit, retry and status do differently per backend is said here, by its
attributes (`scheduler`, `start_word`, `leaves_out_nodes`, `waits`), never by its name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from clusterdoc.errors import UsageError
from clusterdoc.jobs import slurmcmd
from clusterdoc.jobs.folder import JobDir
from clusterdoc.launch import local, mpi, slurm
from clusterdoc.launch.job import JobSpec
from clusterdoc.launch.outcome import Outcome


class Handle(Protocol):
    """One running attempt."""

    backend_id: str
    pids: list[int]  # the processes `clusterdoc cancel` may stop when the launcher is gone ([] for Slurm)

    def poll(self) -> Outcome | None: ...  # None while it runs

    def cancel(self) -> str | None: ...  # None when stopped, else what the scheduler said

    def rank_codes(self) -> dict[int, int | None]: ...  # each rank's exit code as far as the backend can tell


@runtime_checkable
class Backend(Protocol):
    name: ClassVar[str]
    poll_interval: ClassVar[float]  # seconds between polls of a running attempt
    scheduler: ClassVar[str | None]  # the scheduler that gives the job its id, in words; None: our own processes
    start_word: ClassVar[str | None]  # "NAME job ID <start_word>" once an attempt started; None: nothing said
    leaves_out_nodes: ClassVar[bool]  # a node to blame can be left out of the next attempt (--retries)
    waits: ClassVar[bool]  # submit waits for the end when neither --wait nor --no-wait is given
    runs_batch_scripts: ClassVar[bool]  # a user's own batch script (#SBATCH lines) can be submitted through it

    def affinity(self, settings: Mapping, environ: Mapping[str, str]) -> str | None:
        """Why this backend, when it fits a job that names none; None when it does not."""
        ...

    def validate(self, settings: Mapping) -> None: ...  # UsageError for settings this backend cannot run

    def check_ready(self) -> None: ...

    def nodes(self, spec: JobSpec) -> list[str] | None: ...  # the nodes the job may use, None: not known yet

    def preflight(self, spec: JobSpec, job_id: str) -> tuple[bool, str]: ...  # (ok, the doctor's report)

    def start(self, spec: JobSpec, jd: JobDir, script_args: list[str]) -> Handle: ...

    def live_state(self, jd: JobDir, rec: dict) -> str | None:
        """The scheduler's state of a job on record; None when it has none to give (slurmcmd.Unreachable when the
        scheduler does not answer)."""
        ...

    def cancel(self, jd: JobDir, rec: dict) -> str | None: ...  # None when done, else what the scheduler said

    def extra_logs(self, jd: JobDir) -> dict[str, Path]: ...

    def available_nodes(self, spec: JobSpec) -> list[str] | None: ...  # for a new attempt; None: not known


def slurm_answers(timeout: float = 5.0) -> bool:
    if not shutil.which("squeue"):
        return False
    try:
        return subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class _Processes:
    """What local and mpirun share: the ranks are processes of this machine's launcher, no scheduler to ask."""

    poll_interval: ClassVar[float] = 0.1  # a process poll is cheap
    scheduler: ClassVar[str | None] = None
    runs_batch_scripts: ClassVar[bool] = False

    def check_ready(self) -> None:
        return None

    def live_state(self, jd: JobDir, rec: dict) -> str | None:
        return None

    def cancel(self, jd: JobDir, rec: dict) -> str | None:
        return None  # its launcher, or the recorded processes, are stopped by the caller

    def extra_logs(self, jd: JobDir) -> dict[str, Path]:
        return {}

    name: ClassVar[str]

    def no_srun(self, settings: Mapping) -> None:
        """--srun-option changes what the ranks run in (a container): refused where no srun starts them."""
        if settings.get("srun_option"):
            raise UsageError(
                f"--srun-option is for the ranks' srun: the {self.name} backend starts no srun",
                hint="drop it, or submit with --backend slurm (--setup lines work on every backend)",
            )


class Local(_Processes):
    name: ClassVar[str] = "local"
    start_word: ClassVar[str | None] = None  # the ranks' output is what a local job shows
    leaves_out_nodes: ClassVar[bool] = False  # this machine alone
    waits: ClassVar[bool] = True

    def affinity(self, settings: Mapping, environ: Mapping[str, str]) -> str | None:
        return "no Slurm answers here and no --hostfile; --backend slurm or --hostfile to run on a cluster"

    def validate(self, settings: Mapping) -> None:
        self.no_srun(settings)

    def nodes(self, spec: JobSpec) -> list[str] | None:
        return ["localhost"]

    def preflight(self, spec: JobSpec, job_id: str) -> tuple[bool, str]:
        from clusterdoc.launch import preflight  # start-up cost: the doctor's checks load for a preflight only

        return preflight.run_local(spec)

    def start(self, spec: JobSpec, jd: JobDir, script_args: list[str]) -> Handle:
        return local.start(spec, jd, script_args)

    def available_nodes(self, spec: JobSpec) -> list[str] | None:
        return None


class Mpirun(_Processes):
    name: ClassVar[str] = "mpirun"
    start_word: ClassVar[str | None] = "started"
    leaves_out_nodes: ClassVar[bool] = True
    waits: ClassVar[bool] = False

    def affinity(self, settings: Mapping, environ: Mapping[str, str]) -> str | None:
        return "--hostfile given and no Slurm here; --backend local to run here" if settings["hostfile"] else None

    def validate(self, settings: Mapping) -> None:
        self.no_srun(settings)
        if not settings["hostfile"]:
            raise UsageError("the mpirun backend needs --hostfile", hint="or use --backend local / slurm")
        from clusterdoc import hostfile

        count = len(hostfile.parse_file(settings["hostfile"]))
        if count < settings["nodes"]:
            raise UsageError(
                f"--nodes {settings['nodes']} but the hostfile lists {count} host(s)", where=settings["hostfile"]
            )

    def nodes(self, spec: JobSpec) -> list[str] | None:
        from clusterdoc.launch import preflight  # start-up cost: the doctor's checks load for a preflight only

        return preflight.hostfile_nodes(spec)

    def preflight(self, spec: JobSpec, job_id: str) -> tuple[bool, str]:
        from clusterdoc.launch import preflight  # start-up cost: the doctor's checks load for a preflight only

        return preflight.run_mpirun(spec, job_id)

    def start(self, spec: JobSpec, jd: JobDir, script_args: list[str]) -> Handle:
        return mpi.start(spec, jd, script_args)

    def extra_logs(self, jd: JobDir) -> dict[str, Path]:
        return mpi.extra_logs(jd)

    def available_nodes(self, spec: JobSpec) -> list[str] | None:
        if not spec.hostfile:
            return None
        from clusterdoc import hostfile

        return [h.host for h in hostfile.parse_file(spec.hostfile)]


class Slurm:
    name: ClassVar[str] = "slurm"
    poll_interval: ClassVar[float] = 1.0  # squeue is a request to slurmctld: poll gently
    scheduler: ClassVar[str | None] = "Slurm"
    runs_batch_scripts: ClassVar[bool] = True  # sbatch runs it as it is (slurm.BatchScriptJob)
    start_word: ClassVar[str | None] = "submitted"
    leaves_out_nodes: ClassVar[bool] = True
    waits: ClassVar[bool] = False

    def affinity(self, settings: Mapping, environ: Mapping[str, str]) -> str | None:
        if not slurm_answers():
            return None
        because = "SLURM_CONF is set" if environ.get("SLURM_CONF") else "a Slurm controller answers here (squeue)"
        return f"{because}; --backend local to run here"

    def validate(self, settings: Mapping) -> None:
        return None

    def check_ready(self) -> None:
        slurm.check_ready()

    def nodes(self, spec: JobSpec) -> list[str] | None:
        return None  # Slurm picks them when it allocates the job

    def preflight(self, spec: JobSpec, job_id: str) -> tuple[bool, str]:
        from clusterdoc.launch.accounting import check_association

        # accounting first (a site that enforces associations): a job Slurm would refuse is never queued
        refused = check_association(getattr(spec, "account", None), spec.partition, getattr(spec, "qos", None))
        if refused:
            return False, f"preflight FAILED: {refused}"
        return True, "preflight: runs in the allocation as the job's first step (see preflight.txt in the log folder)"

    def start(self, spec: JobSpec, jd: JobDir, script_args: list[str]) -> Handle:
        return slurm.start(spec, jd, script_args)

    def live_state(self, jd: JobDir, rec: dict) -> str | None:
        if not rec.get("backend_id"):
            return None
        return slurm.query_state(slurmcmd.checked_id(rec["backend_id"], jd.record_path))

    def cancel(self, jd: JobDir, rec: dict) -> str | None:
        if not rec.get("backend_id"):
            return None
        return slurmcmd.scancel(slurmcmd.checked_id(rec["backend_id"], jd.record_path))  # retried while away

    def extra_logs(self, jd: JobDir) -> dict[str, Path]:
        return slurm.extra_logs(jd)

    def available_nodes(self, spec: JobSpec) -> list[str] | None:
        return slurmcmd.usable_nodes(spec.partition)


# Name -> backend, in the order `auto` asks them (the first that fits runs the job; local always fits).
BACKENDS: dict[str, Backend] = {b.name: b for b in (Slurm(), Mpirun(), Local())}


def backend_for(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise UsageError(f"unknown backend {name!r}", hint=f"one of: auto, {', '.join(sorted(BACKENDS))}") from None


def of_record(rec: dict) -> Backend:
    """The backend of a job on record. job.json is data its owner may have edited: a name this table does not
    know is a job with no scheduler to ask (its recorded processes are what `cancel` stops), not an error."""
    return BACKENDS.get(str(rec["spec"]["backend"]), BACKENDS["local"])


def by_affinity(settings: Mapping, environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(the backend for a job that names none, why, in words)."""
    for b in BACKENDS.values():
        why = b.affinity(settings, environ)
        if why is not None:
            return b.name, why
    raise AssertionError("local always fits")
