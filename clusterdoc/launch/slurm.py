"""Slurm backend through submitit: one sbatch job, one srun task per rank, rank env exported in each task.

submitit writes the batch script (nodes, ntasks-per-node, gpus-per-node, time, partition) and starts
`srun ... python -m submitit.core._submit` once per task; its pickled callable here (RankTask) exports
torchrun's variables from the task's SLURM_* ones and execs `python -m clusterdoc.run`, so the training
process is the srun task itself (signals, exit codes and --kill-on-bad-exit act on it directly).

Clusters without accounting storage: `sacct` fails there and submitit's job state stays UNKNOWN, so the
state comes from `squeue`, then `scontrol show job` (kept MinJobAge seconds after the end), then the ranks'
own exit records; a job that none of them knows any more ends the wait instead of hanging it.

A controller that does not answer (a slurmctld restart, an overloaded one) says nothing about the job: its
state is unknown, the ranks go on, and the wait goes on for --slurm-wait seconds (default 600) of silence
before submit gives up with UNKNOWN (never a failure, never a new attempt: the job may still be running).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from pathlib import Path

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.jobs.slurmcmd import (  # noqa: F401 (slurm.X users)
    CMD_TIMEOUT,
    Unreachable,
    _run,
    checked_id,
    read_job,
    scancel,
    scontrol_job,
    squeue_state_reason,
)
from clusterdoc.launch.job import JobDir, JobSpec
from clusterdoc.launch.outcome import Outcome, outcome_from_records

GONE_AFTER = 30.0  # a job neither squeue nor scontrol knows for this long is over
COMPLETING = 5.0  # after our scancel, a job still COMPLETING this long (a dead node) is over for us
TERMINAL = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
    "REVOKED",
    "SPECIAL_EXIT",
}


PING_TIMEOUT = 8.0
NO_CONF = "Could not establish a configuration source"  # what every Slurm command says without slurm.conf
DEFAULT_CONF = "/etc/slurm/slurm.conf"
CONF_HINT = (
    "point SLURM_CONF to the cluster's slurm.conf (export SLURM_CONF=/path/to/slurm.conf), or submit from a "
    "machine where Slurm is set up; --backend local runs the job here"
)


def no_conf_error(environ=os.environ) -> UsageError:
    conf = environ.get("SLURM_CONF")
    where = f"SLURM_CONF={conf} does not exist" if conf else f"SLURM_CONF is not set and {DEFAULT_CONF} does not exist"
    return UsageError(f"Slurm is not configured here: slurm.conf not found ({where})", hint=CONF_HINT)


def check_ready(environ=os.environ) -> None:
    """What sbatch needs, checked before anything is submitted (seconds at most): sbatch on PATH, a
    slurm.conf, a controller that answers. Raises UsageError saying which and what to do."""
    if not shutil.which("sbatch"):
        raise UsageError(
            "sbatch is not on PATH: this machine cannot submit Slurm jobs",
            hint="submit from the cluster's login node, or use --backend local / --hostfile HOSTS",
        )
    conf = environ.get("SLURM_CONF")
    if conf and not Path(conf).is_file():
        raise no_conf_error(environ)  # Slurm itself would retry reading it for 60 s
    res = _run(["scontrol", "ping"], PING_TIMEOUT)
    if res is None:
        raise UsageError(
            f"the Slurm controller did not answer within {PING_TIMEOUT:g}s (scontrol ping)",
            hint="check that slurmctld is up (scontrol ping), or retry when it is less busy",
        )
    text = f"{res.stdout}\n{res.stderr}"
    if NO_CONF in text:
        raise no_conf_error(environ)
    if res.returncode != 0 or " is DOWN" in res.stdout:
        said = next((line.strip() for line in text.splitlines() if line.strip()), f"exit {res.returncode}")
        raise UsageError(
            f"the Slurm controller does not answer: {said}",
            hint="start slurmctld, or check SlurmctldHost in slurm.conf; test with: scontrol ping",
        )


def sbatch_refused(message: str) -> UsageError:
    """sbatch's refusal, with the fix for what it says."""
    last = message.strip().splitlines()[-1] if message.strip() else "no message"
    if NO_CONF in message:
        return UsageError(f"sbatch refused the job: {last}: slurm.conf not found", hint=CONF_HINT)
    return UsageError(f"sbatch refused the job: {last}", hint="check --partition, --nodes and --time against 'sinfo'")


# pending reasons that only a change of the request or of the cluster's config can resolve
HOPELESS = {
    "PartitionNodeLimit": "the partition has fewer nodes than requested (--nodes)",
    "PartitionConfig": "the request does not fit the partition's configuration",
    "PartitionTimeLimit": "--time exceeds the partition's limit",
    "BadConstraints": "no node satisfies the request (GPUs, memory or constraints)",
    "InvalidAccount": "the account is not valid",
    "InvalidQOS": "the QOS is not valid",
}


# pending reasons that say the nodes the job may use are not there (down, drained, excluded): a wait that ends only
# when a node comes back. A retry that excluded a node pends so when Slurm has meanwhile marked another one down.
NODES_GONE = ("ReqNodeNotAvail", "Nodes_required_for_job_are_DOWN", "Resources", "BeginTime")
NODES_GRACE = 20.0  # seconds a job may pend so, with too few usable nodes, before submit ends it


def short_of_nodes(reason: str, usable: list[str] | None, exclude: list[str], needed: int) -> str | None:
    """Why a pending job cannot start (None: it can, or that is not known): fewer usable nodes than it needs, once
    the excluded ones are left out. `usable`: sinfo's nodes in a usable state (None: sinfo did not answer)."""
    if usable is None or not reason.startswith(NODES_GONE):
        return None
    short = {n.split(".")[0] for n in exclude}
    left = [n for n in usable if n not in exclude and n.split(".")[0] not in short]
    if len(left) >= needed:
        return None
    without = f" without {', '.join(exclude)}" if exclude else ""
    return (
        f"only {len(left)} usable node(s) left{without} (the others are down, drained or excluded), the job needs "
        f"{needed}; Slurm says {reason.split(',')[0]}"
    )


def squeue_state(job_id: str) -> str | None:
    return squeue_state_reason(job_id)[0]


def query_state(job_id: str) -> str | None:
    """Slurm's state of the job; None when Slurm has forgotten it; Unreachable when the controller is away."""
    return squeue_state(job_id) or read_job(job_id).get("JobState")


def _master_addr(environ) -> str:
    """Rank 0 runs on the first node of the step. Its name may not resolve everywhere (reference.md §5);
    srun's own launch address (the batch host, which is that first node) always does."""
    from clusterdoc.hostfile import expand_hostlist
    from clusterdoc.shim.env import first_resolvable

    nodelist = environ.get("SLURM_STEP_NODELIST") or environ.get("SLURM_JOB_NODELIST") or ""
    try:
        hosts = expand_hostlist(nodelist) if nodelist else []
    except UsageError:
        hosts = []
    host = first_resolvable(hosts[:1])
    return host or environ.get("SLURM_LAUNCH_NODE_IPADDR") or "127.0.0.1"


class RankTask:
    """The callable submitit pickles: becomes the rank process (exec), with torchrun's variables set."""

    def __init__(self, argv: list[str], env: dict[str, str], tasks_per_node: int):
        self.argv, self.env, self.tasks_per_node = argv, env, tasks_per_node

    def environment(self, e) -> dict[str, str]:
        from clusterdoc.shim.env import port_from_job_id

        return {
            **e,
            **self.env,
            "RANK": e["SLURM_PROCID"],
            "WORLD_SIZE": e["SLURM_NTASKS"],
            "LOCAL_RANK": e["SLURM_LOCALID"],
            "LOCAL_WORLD_SIZE": str(self.tasks_per_node),
            "NODE_RANK": e.get("SLURM_NODEID", "0"),
            "MASTER_ADDR": e.get("MASTER_ADDR") or _master_addr(e),
            "MASTER_PORT": e.get("MASTER_PORT")
            or str(port_from_job_id(e.get("SLURM_JOB_ID", "0"), e.get("SLURM_STEP_ID", "0"))),
        }

    def __call__(self):
        os.execve(self.argv[0], self.argv, self.environment(os.environ))


def preflight_setup(spec: JobSpec, jd: JobDir) -> list[str]:
    """The job's first step: probe every allocated node (one task each), judge, stop the job on failure."""
    from clusterdoc.launch.preflight import record_shell

    record_shell(jd.path)  # the submitting shell's NCCL_* etc., which --export=ALL hands to the job
    py, d = shlex.quote(spec.python), shlex.quote(str(jd.path))
    return [
        # the doctor through srun: one task per node, whatever --ntasks-per-node the job has
        f"{py} -m clusterdoc.launch.preflight --judge {d} --nodes {spec.nodes} "
        f"--tasks-per-node {spec.tasks_per_node} || exit 3",
    ]


WARNED = "slurm-warned"  # in the job folder: Slurm's time-limit (or preemption) warning came


def signal_setup(jd: JobDir) -> list[str]:
    """Bash for the batch script: srun (the ranks' step, which submitit starts in the foreground) runs in the
    background so that the shell's USR1 trap runs at once; the trap notes the warning in the job folder and
    forwards USR1 to srun, which signals every task (rank)."""
    mark = shlex.quote(str(jd.path / WARNED))
    return [
        'srun() { command srun "$@" & CLUSTERDOC_SRUN=$!; while :; do wait "$CLUSTERDOC_SRUN"; rc=$?; '
        'kill -0 "$CLUSTERDOC_SRUN" 2>/dev/null || return "$rc"; done; }',
        f"trap 'date +%s > {mark}; echo \"clusterdoc: SIGUSR1 from Slurm (time limit or preemption ahead): "
        'passing it to the ranks" >&2; kill -USR1 "$CLUSTERDOC_SRUN" 2>/dev/null\' USR1',
    ]


class SlurmJob:
    backend = "slurm"
    pids: list[int] = []  # the ranks are Slurm's, not processes of this machine

    def __init__(self, spec: JobSpec, jd: JobDir, script_args: list[str], preflight: bool = False):
        import submitit

        self.spec, self.jd = spec, jd
        ex = submitit.SlurmExecutor(folder=jd.path / "submitit", python=shlex.quote(spec.python))
        params = dict(
            nodes=spec.nodes,
            ntasks_per_node=spec.tasks_per_node,
            time=spec.time,
            job_name=f"clusterdoc-{Path(spec.script).stem}",
            srun_args=["--kill-on-bad-exit=1"],
            signal_delay_s=90,
        )
        if spec.gpus_per_node:
            params["gpus_per_node"] = spec.gpus_per_node
        if spec.partition:
            params["partition"] = spec.partition
        if spec.exclude:
            params["exclude"] = ",".join(spec.exclude)
        setup = preflight_setup(spec, jd) if preflight else []
        ahead = min(spec.signal_ahead, spec.time * 15)  # a short job: a quarter of it, not all of it
        if ahead > 0:
            # Slurm's warning goes to the batch shell (B:, so a container in the step cannot swallow it), which
            # passes it on to the ranks as SIGUSR1: their chance to checkpoint before the kill
            params["signal_delay_s"] = ahead
            params["additional_parameters"] = {"signal": f"B:USR1@{ahead}"}
            setup += signal_setup(jd)
        if setup:
            params["setup"] = setup
        ex.update_parameters(**params)
        env = {**spec.shim_env(), **({"MASTER_PORT": str(spec.port)} if spec.port else {})}
        task = RankTask(spec.rank_command(jd.path, script_args), env, spec.tasks_per_node)
        try:
            job = ex.submit(task)
        except Exception as exc:  # submitit raises its own errors wrapping sbatch's message
            raise sbatch_refused(str(exc)) from None
        self.backend_id = str(job.job_id)
        self.unknown_since: float | None = None
        self.reason = "None"  # squeue's reason for a job that is just waiting its turn
        self.cancelled = False
        self.cancelled_at: float | None = None
        self.unreachable_since: float | None = None  # the controller has not answered since then
        self.short_since: float | None = None  # pending with too few usable nodes since then

    def poll(self) -> Outcome | None:
        try:
            outcome = self._poll()
        except Unreachable as exc:
            return self.controller_away(str(exc))
        if self.unreachable_since is not None:
            away = time.monotonic() - self.unreachable_since
            self.unreachable_since = None
            self.say(f"the Slurm controller answers again after {away:.0f}s; job {self.backend_id} goes on")
        return outcome

    def say(self, line: str) -> None:
        self.jd.log_attempt(line)
        print(f"clusterdoc: {line}", file=sys.stderr, flush=True)

    def controller_away(self, said: str) -> Outcome | None:
        """The controller did not answer: the job's state is unknown, not ended. Wait for it up to --slurm-wait;
        then every rank's own exit record decides COMPLETED, else UNKNOWN (the job may still be running)."""
        now = time.monotonic()
        wait = self.spec.slurm_wait
        if self.unreachable_since is None:
            self.unreachable_since = now
            self.say(
                f"slurm job {self.backend_id}: state unknown, the Slurm controller does not answer ({said}); "
                f"the ranks go on; waiting up to {wait}s for it (--slurm-wait)"
            )
        if any((r := self.jd.rank_exit(rank)) and r["code"] != 0 for rank in range(self.spec.world_size)):
            self.cancel(tries=1)  # srun --kill-on-bad-exit does it on the nodes; this asks the controller too
        if now - self.unreachable_since < wait:
            return None
        return away_outcome(self.jd, self.spec.world_size, self.backend_id, wait, said)

    def _poll(self) -> Outcome | None:
        state, reason = squeue_state_reason(self.backend_id)
        if state == "PENDING" and reason in HOPELESS:
            self.cancel()
            return Outcome(
                state="FAILED",
                message=f"Slurm will never start job {self.backend_id}: {reason} ({HOPELESS[reason]}); cancelled it",
            )
        if state == "PENDING" and reason and reason != self.reason:
            self.reason = reason
            print(f"slurm job {self.backend_id} pending ({reason})", file=sys.stderr, flush=True)
        short = self.short_of_nodes(reason) if state == "PENDING" else None
        if short is not None:
            return short
        if state and state not in TERMINAL:
            if any((r := self.jd.rank_exit(rank)) and r["code"] != 0 for rank in range(self.spec.world_size)):
                self.cancel()  # srun --kill-on-bad-exit does it too; this makes it immediate
            if not (state == "COMPLETING" and self.cancelled_at and time.monotonic() - self.cancelled_at > COMPLETING):
                return None
            # a dead node keeps the job COMPLETING until Slurm declares it down (SlurmdTimeout, minutes): what
            # its ranks did is on record already, and the next attempt must not wait for it
        info = read_job(self.backend_id)
        state = state or info.get("JobState")
        if state == "COMPLETING":  # we cancelled it (above): over for us
            state = "CANCELLED"
        if state is None or state not in TERMINAL:
            # not listed any more and not known to scontrol (or still completing): give it a moment
            if self.unknown_since is None:
                self.unknown_since = time.monotonic()
            if time.monotonic() - self.unknown_since < GONE_AFTER:
                return None
            state = "LOST"
        code = None
        if "ExitCode" in info:
            code = int(info["ExitCode"].split(":")[0] or 0)
        message = ""
        if state == "FAILED" and code == 3 and not any(self.jd.rank_exit(r) for r in range(self.spec.world_size)):
            message = f"the preflight step refused the allocation (see {self.jd.path / 'preflight.txt'})"
        elif state in ("TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "LOST"):
            message = f"Slurm says {state}"
        outcome = outcome_from_records(
            self.jd, self.spec.world_size, code if state != "LOST" else None, message=message
        )
        if outcome.ok and self.stopped_on_warning():  # they checkpointed on the warning: not finished
            outcome.state = "TIMEOUT"
            outcome.message = "the ranks stopped after Slurm's SIGUSR1 warning (time limit or preemption ahead)"
        if not outcome.ok and state == "CANCELLED" and not outcome.failed:
            outcome.state = "CANCELLED"
        return outcome

    def short_of_nodes(self, reason: str) -> Outcome | None:
        """A job pending for nodes that are not there: said at once, ended after NODES_GRACE (a node that comes
        back meanwhile lets it start), never a wait without a word."""
        from clusterdoc.jobs.slurmcmd import usable_nodes

        why = short_of_nodes(reason, usable_nodes(self.spec.partition), list(self.spec.exclude), self.spec.nodes)
        if why is None:
            self.short_since = None
            return None
        now = time.monotonic()
        if self.short_since is None:
            self.short_since = now
            self.say(f"slurm job {self.backend_id} cannot start: {why}; ending it in {NODES_GRACE:.0f}s unless "
                     "a node comes back")  # fmt: skip
        if now - self.short_since < NODES_GRACE:
            return None
        self.cancel()
        return Outcome(state="FAILED", message=f"Slurm cannot start job {self.backend_id}: {why}; cancelled it",
                       unstartable=True)  # fmt: skip

    def rank_codes(self) -> dict[int, int | None]:
        return {}  # the ranks' own exit records say it (jd.rank_exit); Slurm has no per-rank code to poll

    def stopped_on_warning(self) -> bool:
        """Slurm's warning came (the batch shell's trap wrote its time) before some rank ended."""
        try:
            warned = float(private.read(self.jd.path / WARNED, limit=64).decode().strip())
        except (OSError, ValueError):
            return False
        ends = [(self.jd.rank_exit(r) or {}).get("time") for r in range(self.spec.world_size)]
        return any(not isinstance(t, (int, float)) or t >= warned - 1 for t in ends)

    def cancel(self, tries: int = 3) -> str | None:
        """scancel (tried again while the controller is away); None when done, else what the last try said."""
        if self.cancelled:
            return None
        failed = scancel(self.backend_id, tries=tries)
        if failed is None:
            self.cancelled = True
            self.cancelled_at = time.monotonic()
        return failed


def away_outcome(jd: JobDir, world_size: int, job_id: str, wait: float, said: str) -> Outcome:
    """After --slurm-wait seconds without the controller: every rank recorded exit 0 -> COMPLETED (their own
    word); else UNKNOWN, with the failures on record: Slurm may still be running the job."""
    codes = {r: (rec["code"] if (rec := jd.rank_exit(r)) else None) for r in range(world_size)}
    if all(c == 0 for c in codes.values()):
        return Outcome(
            state="COMPLETED",
            codes=codes,
            message=f"every rank recorded exit 0; the Slurm controller did not answer for {wait}s ({said})",
        )
    bad = sorted((rec.get("time", 0.0), r) for r in range(world_size) if (rec := jd.rank_exit(r)) and rec["code"])
    return Outcome(
        state="UNKNOWN",
        codes=codes,
        failed=[bad[0][1]] if bad else [],
        message=f"the Slurm controller did not answer for {wait}s ({said}): job {job_id} may still be running "
        f"(squeue -j {job_id}; clusterdoc cancel stops it); not retried",
    )


def start(spec: JobSpec, jd: JobDir, script_args: list[str]) -> SlurmJob:
    return SlurmJob(spec, jd, script_args, preflight=spec.preflight)


def extra_logs(jd: JobDir) -> dict[str, Path]:
    return {"preflight": jd.path / "preflight.txt"}
