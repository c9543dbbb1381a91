"""Slurm backend through submitit: one sbatch job, one srun task per rank, rank env exported in each task.

submitit writes the batch script (every option-table row with an sbatch name: nodes, ntasks-per-node, time, account,
qos, constraint..., and --sbatch-option's: `submitit_parameters`; the --setup lines before the preflight) and starts
`srun ... python -m submitit.core._submit` once per task; its pickled callable here (RankTask) exports
torchrun's variables from the task's SLURM_* ones and execs `python -m clusterdoc.run`, so the training
process is the srun task itself (signals, exit codes and --kill-on-bad-exit act on it directly).

Clusters without accounting storage: `sacct` fails there and submitit's job state stays UNKNOWN, so the
state comes from `squeue`, then `scontrol show job` (kept MinJobAge seconds after the end), then `sacct` where
the cluster keeps accounting, then the ranks' own exit records; a job that none of them knows any more ends the
wait instead of hanging it.

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
from dataclasses import asdict
from pathlib import Path

from clusterdoc import private
from clusterdoc.config import read_sbatch_env
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
from clusterdoc.launch.job import MAX_WORLD, JobDir, JobSpec, format_command
from clusterdoc.launch.outcome import Outcome, outcome_from_records
from clusterdoc.launch.refusal import CONF_HINT, NO_CONF, sbatch_refused  # noqa: F401 (slurm.X users)
from clusterdoc.launch.setup import SETUP_FAILED, script_lines
from clusterdoc.optiontable import OPTIONS, OWNED_ENV, sbatch_options
from clusterdoc.untrusted import printable

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
DEFAULT_CONF = "/etc/slurm/slurm.conf"


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


def submitit_parameters(sbatch: dict) -> dict:
    """{sbatch long option: value} (optiontable.sbatch_options; a batch script's options) -> submitit's
    update_parameters keywords: its own name where submitit has one (nodes, ntasks_per_node, account...: it counts
    the tasks from them), every other in additional_parameters (written `#SBATCH --KEY=VALUE`, or `--KEY` for True)."""
    import inspect

    from submitit.slurm.slurm import _make_sbatch_string

    named = set(inspect.signature(_make_sbatch_string).parameters) - {"command", "folder", "additional_parameters"}
    params: dict = {}
    extra: dict = {}
    for key, value in sbatch.items():
        if key.replace("-", "_") in named:
            params[key.replace("-", "_")] = value
        else:
            extra[key] = value
    if extra:
        params["additional_parameters"] = extra
    return params


def unset_for_sbatch(sbatch: dict, environ=os.environ) -> list[str]:
    """sbatch's variables to take out of its environment: sbatch lets SBATCH_X win over the script's line, and
    clusterdoc's settings already read SBATCH_X as a layer (below a flag and CLUSTERDOC_<KEY>): so every SBATCH_X
    it read goes (a CLUSTERDOC_EXCLUSIVE=0 then wins over SBATCH_EXCLUSIVE, as it says), and so does one it could
    not read where a value other than the default is written (--time 30 over SBATCH_TIMELIMIT=UNLIMITED), and those
    of the options it owns (output, signal...). Otherwise a form left to sbatch (SBATCH_EXCLUSIVE=user, UNLIMITED)
    stays: the default does not overrule it."""
    read = set(read_sbatch_env(environ))
    given = {o.sbatch_env for o in OPTIONS if o.sbatch_env and sbatch.get(o.sbatch, o.default) != o.default}
    ours = given | {o.sbatch_env for o in OPTIONS if o.sbatch_env and o.key in read}
    return sorted(n for n in ours | set(OWNED_ENV) if n in environ)


# pending reasons that only a change of the request or of the cluster's config can resolve
# squeue's states of a job Slurm has queued again after running it (a requeue: the same id runs again)
REQUEUED = ("PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED")

HOPELESS = {
    "PartitionNodeLimit": "the partition has fewer nodes than requested (--nodes)",
    "PartitionConfig": "the request does not fit the partition's configuration",
    "PartitionTimeLimit": "--time exceeds the partition's limit",
    "BadConstraints": "no node satisfies the request (GPUs, memory or constraints)",
    "InvalidAccount": "the account is not valid",
    "InvalidQOS": "the QOS is not valid",
    "ReqNodeNotAvail, Reserved for maintenance": "the nodes are reserved for maintenance",
    "QOSMaxWallDurationPerJobLimit": "--time exceeds the QOS's MaxWall (sacctmgr show qos)",
    "QOSMaxNodePerJobLimit": "--nodes exceeds the QOS's MaxTRES node=N per job (sacctmgr show qos)",
    "QOSMaxCpuPerJobLimit": "the CPUs asked exceed the QOS's MaxTRES cpu=N per job (sacctmgr show qos)",
    "QOSMaxGRESPerJob": "the GPUs asked exceed the QOS's MaxTRES gres/gpu=N per job (sacctmgr show qos)",
    "AssocMaxWallDurationPerJobLimit": "--time exceeds the association's MaxWall (sacctmgr show assoc)",
    "AssocMaxNodesPerJobLimit": "--nodes exceeds the association's MaxNodes per job (sacctmgr show assoc)",
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
    """Slurm's state of the job, from accounting (sacct) once the controller has forgotten it; None when neither
    knows it; Unreachable when the controller is away."""
    return squeue_state(job_id) or read_job(job_id).get("JobState") or accounted(job_id).get("JobState")


def accounted(job_id: str) -> dict[str, str]:
    """What accounting keeps of a job the controller forgot, in scontrol's keys; {} without accounting."""
    from clusterdoc.jobs import sacct

    acc = sacct.query(job_id)
    return acc.scontrol_like() if acc else {}


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
    srun = "".join(f" --srun-option={shlex.quote(o)}" for o in spec.srun_option or [])
    return [
        # the doctor through srun: one task per node, whatever --ntasks-per-node the job has; the probe runs in the
        # environment the --setup lines made (srun passes the batch shell's on) and with the ranks' srun options
        f"{py} -m clusterdoc.launch.preflight --judge {d} --nodes {spec.nodes} "
        f"--tasks-per-node {spec.tasks_per_node}{srun} || exit 3",
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


def batch_parameters(spec: JobSpec, jd: JobDir, preflight: bool) -> tuple[dict, list[str]]:
    """(submitit's parameters for the job's batch script, the SBATCH_* variables sbatch must not see): every
    option-table row with an sbatch name and --sbatch-option's, the excluded nodes, the time-limit warning; the
    --setup lines, then the preflight step, then the warning's trap, as the script's setup lines."""
    sbatch = sbatch_options(asdict(spec))  # every row with an sbatch name, and --sbatch-option's
    if spec.exclude:
        sbatch["exclude"] = ",".join(spec.exclude)
    ahead = min(spec.signal_ahead, spec.time * 15)  # a short job: a quarter of it, not all of it
    if ahead > 0:
        # Slurm's warning goes to the batch shell (B:, so a container in the step cannot swallow it), which
        # passes it on to the ranks as SIGUSR1: their chance to checkpoint before the kill
        sbatch["signal"] = f"B:USR1@{ahead}"
    params = dict(
        submitit_parameters(sbatch),
        job_name=f"clusterdoc-{Path(spec.script).stem}",
        srun_args=["--kill-on-bad-exit=1", *(spec.srun_option or [])],
        signal_delay_s=ahead if ahead > 0 else 90,
    )
    # the user's --setup lines first: the preflight's probe and the ranks then run in what they make
    setup = script_lines(spec.setup) + (preflight_setup(spec, jd) if preflight else [])
    if ahead > 0:
        setup += signal_setup(jd)
    if setup:
        params["setup"] = setup
    return params, unset_for_sbatch(sbatch)


def _executor_class() -> type:
    import submitit

    class Executor(submitit.SlurmExecutor):
        """submitit's, with sbatch run without the SBATCH_* variables that would overrule the script's lines."""

        unset: list[str] = []

        def _make_submission_command(self, submission_file_path):
            command = super()._make_submission_command(submission_file_path)
            return ["env", *(f"--unset={n}" for n in self.unset), *command] if self.unset else command

    return Executor


def _Executor(**kw):
    return _executor_class()(**kw)


class SlurmJob:
    backend = "slurm"
    pids: list[int] = []  # the ranks are Slurm's, not processes of this machine

    def __init__(self, spec: JobSpec, jd: JobDir, script_args: list[str], preflight: bool = False):
        self.spec, self.jd = spec, jd
        params, unset = batch_parameters(spec, jd, preflight)
        ex = _Executor(folder=jd.path / "submitit", python=shlex.quote(spec.python))
        ex.unset = unset
        ex.update_parameters(**params)
        env = {**spec.shim_env(), **({"MASTER_PORT": str(spec.port)} if spec.port else {})}
        task = RankTask(spec.rank_command(jd.path, script_args, setup=False), env, spec.tasks_per_node)
        try:
            job = ex.submit(task)
        except Exception as exc:  # submitit raises its own errors wrapping sbatch's message
            raise sbatch_refused(str(exc), spec) from None
        self.backend_id = str(job.job_id)
        self.unknown_since: float | None = None
        self.reason = "None"  # squeue's reason for a job that is just waiting its turn
        self.cancelled = False
        self.cancelled_at: float | None = None
        self.unreachable_since: float | None = None  # the controller has not answered since then
        self.short_since: float | None = None  # pending with too few usable nodes since then
        self.ran = False  # Slurm has run the job (RUNNING seen)
        self.requeues = 0  # times Slurm requeued it (preemption, scontrol requeue, a node failure) while we watched
        self.requeued_after: list[str] = []  # the failed nodes that made Slurm requeue it

    def setup_failure(self) -> str:
        return setup_failure(self.jd, self.backend_id)

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
        if state == "RUNNING":
            self.ran = True
        elif self.ran and state in REQUEUED:
            self.requeued(state, reason)
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
        info = read_job(self.backend_id) or accounted(self.backend_id)  # forgotten (MinJobAge): accounting
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
        no_rank = not any(self.jd.rank_exit(r) for r in range(self.spec.world_size))
        if state == "FAILED" and code == 3 and no_rank:
            message = f"{PREFLIGHT_REFUSED} (see {self.jd.path / 'preflight.txt'})"
        elif state == "FAILED" and code == SETUP_FAILED and no_rank and self.spec.setup:
            message = self.setup_failure()
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
        if self.requeues:
            times = "once" if self.requeues == 1 else f"{self.requeues} times"
            after = f" (after {', '.join(self.requeued_after)} failed)" if self.requeued_after else ""
            done = f"all {len(outcome.codes)} ranks exited 0" if outcome.ok and not outcome.message else ""
            outcome.message = "; ".join(filter(None, [done, outcome.message, f"requeued by Slurm {times}{after}"]))
        return outcome

    def requeued(self, state: str, reason: str) -> None:
        """Slurm stopped the job's processes and queued it again under the same id (a preemption, an admin's or
        submitit's `scontrol requeue`): said once per requeue; the run's exit records are moved aside (to
        requeue<N>/), so that the next run's own records decide the outcome."""
        self.ran = False
        self.requeues += 1
        n = self.requeues
        aside = self.jd.path / f"requeue{n}"
        try:
            aside.mkdir(exist_ok=True)
            for rank in range(self.spec.world_size):
                rec = self.jd.path / f"rank{rank}.exit"
                if rec.exists():
                    rec.replace(aside / rec.name)
        except OSError:
            pass  # the outcome then reads the old records: said below, not hidden
        failed = self.failed_nodes()
        self.requeued_after += [n for n in failed if n not in self.requeued_after]
        why = (
            f"after {', '.join(failed)} failed: sinfo has {'it' if len(failed) == 1 else 'them'} down; Slurm "
            "requeues a job whose node fails and runs it again on others"
            if failed
            else "a preemption or `scontrol requeue`"
        )
        self.say(
            f"slurm job {self.backend_id} requeued by Slurm ({state}{f', {reason}' if reason else ''}: {why}); its "
            "ranks were stopped; it runs again under the same id when Slurm starts it (resume from your checkpoint)"
        )

    def failed_nodes(self) -> list[str]:
        """The nodes the run just requeued ran on (its ranks' start records) that sinfo now lists as unusable
        (down, drained, failed): a node failure is why Slurm requeued it. [] when sinfo does not answer."""
        from clusterdoc.jobs.slurmcmd import usable_nodes

        hosts = set()
        for rank in range(self.spec.world_size):
            try:
                rec = private.read_json(self.jd.start_file(rank), limit=1 << 12)
            except (OSError, ValueError):
                continue
            host = rec.get("host") if isinstance(rec, dict) else None
            if isinstance(host, str) and host:
                hosts.add(printable(host, 64))
        usable = usable_nodes(self.spec.partition)
        return [] if usable is None else sorted(hosts - set(usable))

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
        recs = [self.jd.rank_exit(r) or {} for r in range(self.spec.world_size)]
        if recs and all(rec.get("usr1") == "ignored" for rec in recs):
            return False  # every rank went on past the warning to its own end (clusterdoc.run's record): done
        ends = [rec.get("time") for rec in recs]
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


SETUP_UNSAID = "a --setup line failed"


def setup_failure(jd: JobDir, job_id: str, err: Path | None = None) -> str:
    """What the batch script said when a --setup line failed (launch/setup.py's line in its stderr `err`, by default
    submitit's), in words."""
    err = err or jd.path / "submitit" / f"{job_id}_0_log.err"
    try:
        text = private.read(err, limit=1 << 20).decode("utf-8", "replace")
    except OSError:
        text = ""
    said = [ln for ln in text.splitlines() if ln.startswith("clusterdoc: --setup line ")]
    what = printable(said[-1].removeprefix("clusterdoc: "), 300) if said else SETUP_UNSAID
    return f"{what}, in the batch script; no rank started (the batch script's stderr: {err})"


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


class BatchScriptJob(SlurmJob):
    """The user's own batch script, submitted by sbatch as it is (launch/batchscript.py read its #SBATCH lines);
    the shim reaches its ranks through the environment exported to the job (clusterdoc/rankhook on PYTHONPATH)."""

    def __init__(self, spec: JobSpec, jd: JobDir, script_args: list[str]):
        self.spec, self.jd = spec, jd
        argv = ["sbatch", "--parsable", "--export=ALL", *spec.sbatch_args]
        if spec.exclude:  # a retry's blamed nodes, with the script's own: sbatch's command line replaces its line
            from clusterdoc.launch.batchscript import read_directives

            own = [d.value for d in read_directives(spec.script) if d.name == "exclude" and d.value]
            argv.append(f"--exclude={','.join([*own, *spec.exclude])}")
        argv += [spec.script, *script_args]
        res = _run_in(argv, batch_env(spec, jd), spec.cwd)
        if res is None:
            raise sbatch_refused(f"sbatch did not answer within {SBATCH_TIMEOUT:g}s")
        job_id = res.stdout.strip().split(";")[0]
        if res.returncode != 0 or not job_id.isdigit():
            raise sbatch_refused(res.stderr or res.stdout, spec)
        private.write(jd.path / "sbatch.cmd", format_command(argv) + "\n")
        self.backend_id = job_id
        self.unknown_since = None
        self.reason = "None"
        self.cancelled = False
        self.cancelled_at = None
        self.unreachable_since = None
        self.ran = False
        self.requeues = 0
        self.requeued_after = []

    def _poll(self) -> Outcome | None:
        world = recorded_world(self.jd) if self.jd.start_file(self.spec.world_size).exists() else 0
        if world > self.spec.world_size and world % self.spec.nodes == 0:  # torchrun per node: its workers
            self.spec.tasks_per_node = world // self.spec.nodes
            record = self.jd.read()
            record["spec"]["tasks_per_node"] = self.spec.tasks_per_node
            self.jd.update(spec=record["spec"])
        outcome = super()._poll()
        if (
            outcome is not None
            and outcome.message == f"{NO_RANK_FAILED} 0"
            and not any(self.jd.path.glob("rank*.start"))
        ):
            # no python of the script ran as a rank (one python in the batch shell, no srun): its exit is the job's
            return Outcome(
                state="COMPLETED",
                message="the batch script exited 0; none of its pythons ran as a rank (under srun, torchrun, "
                "accelerate), so there are no rank records",
            )
        if outcome is not None and outcome.message.startswith(PREFLIGHT_REFUSED) and self.preflight_passed():
            outcome.message = f"{NO_RANK_FAILED} 3"  # the script's own exit 3, after a preflight that passed
        if outcome is not None and outcome.message.startswith(NO_RANK_FAILED):
            # the launcher here is the user's script: say so, and where its own output is
            out = read_job(self.backend_id).get("StdOut")
            outcome.message = outcome.message.replace("the launcher exited", "the batch script exited", 1) + (
                f" (its output: {printable(out, 300)})" if out else ""
            )
        return outcome

    def setup_failure(self) -> str:
        """The failed --setup line the prelude (batch_env) wrote to the script's stderr; "" when none did (the
        script's own exit 4)."""
        err = read_job(self.backend_id).get("StdErr")
        said = setup_failure(self.jd, self.backend_id, Path(err)) if err else ""
        return "" if said.startswith(SETUP_UNSAID) else said

    def preflight_passed(self) -> bool:
        try:
            text = private.read(self.jd.path / "preflight.txt", limit=1 << 20).decode("utf-8", "replace")
        except OSError:
            return False
        return text.rstrip().endswith("preflight ok: starting the ranks")


PREFLIGHT_REFUSED = "the preflight step refused the allocation"  # SlurmJob._poll's words for exit 3 without ranks
SBATCH_TIMEOUT = 120.0  # a busy controller can take long to accept a job: not given up on quickly (a second copy)
NO_RANK_FAILED = "no rank recorded a failure; the launcher exited with"  # outcome_from_records' words


def recorded_world(jd: JobDir) -> int:
    """The largest world size the ranks' start records name (0 when none does yet)."""
    import json

    best = 0
    for rank in range(MAX_RANKS_SCANNED):
        try:
            rec = json.loads(private.read(jd.start_file(rank), limit=4096))
        except (OSError, ValueError):
            break
        world = rec.get("world") if isinstance(rec, dict) else None
        if isinstance(world, str) and world.isdigit():
            best = max(best, min(int(world), MAX_WORLD))
    return best


MAX_RANKS_SCANNED = 4096


def batch_env(spec: JobSpec, jd: JobDir, environ=os.environ) -> dict[str, str]:
    """sbatch's environment, exported to the job: the shim's switches and the start-up hook every python reads."""
    hook = jd.path / "pyhook"
    private.mkdir(hook)
    package = Path(__file__).resolve().parents[1]
    private.write(hook / "sitecustomize.py", (package / "rankhook" / "sitecustomize.py").read_text())
    # clusterdoc alone (not the rest of its environment), for a rank's python that lacks it (the hook adds it last)
    private.mkdir(hook / "lib")
    link = hook / "lib" / "clusterdoc"
    if not link.is_symlink():  # made by the first attempt
        link.symlink_to(package, target_is_directory=True)
    path = environ.get("PYTHONPATH")
    preflight = {}
    prelude = script_lines(spec.setup) + (preflight_setup(spec, jd) if spec.preflight else [])
    if prelude:
        # the --setup lines, then the doctor as the job's first step (which so sees what they load), in the batch
        # shell before the script's first line: bash reads BASH_ENV when it starts a script; srun's tasks
        # (SLURM_STEP_ID) and later shells skip it
        lines = "\n  ".join(prelude)
        user = environ.get("BASH_ENV")
        private.write(
            hook / "preflight.sh",
            'if [ -z "${SLURM_STEP_ID:-}" ] && [ -z "${CLUSTERDOC_PREFLIGHT_DONE:-}" ]; then\n'
            "  export CLUSTERDOC_PREFLIGHT_DONE=1\n"
            f"  {lines}\n"
            "fi\n" + (f". {shlex.quote(user)}\n" if user else ""),
        )
        preflight = {"BASH_ENV": str(hook / "preflight.sh")}
    return {
        **{k: v for k, v in environ.items() if not is_submitters_own(k)},
        **preflight,
        **spec.shim_env(),
        **({"MASTER_PORT": str(spec.port)} if spec.port else {}),
        "PYTHONPATH": str(hook) + (os.pathsep + path if path else ""),
        "CLUSTERDOC_BATCH_DIR": str(jd.path),
        "CLUSTERDOC_PACKAGE_ROOT": str(hook / "lib"),
        "CLUSTERDOC_PY_VERSION": "{}.{}".format(*sys.version_info[:2]),
    }


# the submitting process's own place, never the job's: sbatch from an interactive srun step passes SLURM_STEP_ID on
# to the batch shell (seen on Slurm 22.05), where it would make every python there look like an srun task
SUBMITTERS_OWN = ("RANK", "LOCAL_RANK", "CLUSTERDOC_RANK_PID", "CLUSTERDOC_PREFLIGHT_DONE")
SUBMITTERS_STEP = ("SLURM_STEP", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_TASK_PID", "SLURM_GTIDS")


def is_submitters_own(name: str) -> bool:
    return name in SUBMITTERS_OWN or name.startswith(SUBMITTERS_STEP)


def _run_in(argv: list[str], env: dict[str, str], cwd: str):
    import subprocess

    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=SBATCH_TIMEOUT, env=env, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None


def start(spec: JobSpec, jd: JobDir, script_args: list[str]) -> SlurmJob:
    if spec.batch_script:
        return BatchScriptJob(spec, jd, script_args)
    return SlurmJob(spec, jd, script_args, preflight=spec.preflight)


def extra_logs(jd: JobDir) -> dict[str, Path]:
    return {"preflight": jd.path / "preflight.txt"}
