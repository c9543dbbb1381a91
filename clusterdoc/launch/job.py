"""What every backend shares: the job spec, the rank command and environment, script-argument editing, and a
new job's first record. The folder itself (layout, job.json, reserving, finding a job) is clusterdoc/jobs/folder.py,
below launch and why both; its names are imported here for launch's modules."""

from __future__ import annotations

import os
import shlex
import socket
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.jobs.folder import (  # noqa: F401 (launch's users of job.X)
    MAX_WORLD,
    JobDir,
    check_record,
    default_root,
    discard,
    find_job,
    new_job_id,
    open_root,
    reserve_job_dir,
)
from clusterdoc.optiontable import default, rank_switches

OOM_EXIT_CODE = 75  # EX_TEMPFAIL: "try again", which is what --oom-retry does
OOM_MARKER = "clusterdoc.run: OUT OF MEMORY"


@dataclass
class JobSpec:
    script: str  # absolute path
    script_args: list[str]
    backend: str  # local | slurm | mpirun (auto already resolved)
    # the options' fields: their defaults are clusterdoc/optiontable.py's (tests/test_option_table.py)
    nodes: int = default("nodes")
    tasks_per_node: int = 1  # resolved: the GPUs per node, else 1 (settings.build_spec)
    gpus_per_node: int = default("gpus_per_node")
    hostfile: str | None = default("hostfile")
    ssh_config: str | None = default("ssh_config")
    partition: str | None = default("partition")
    time: int = default("time")
    # Slurm's, passed on as the sbatch option of their row (optiontable.sbatch_options)
    account: str | None = default("account")
    qos: str | None = default("qos")
    constraint: str | None = default("constraint")
    mem: str | None = default("mem")
    mem_per_gpu: str | None = default("mem_per_gpu")
    exclusive: bool = default("exclusive")
    cpus_per_task: int | None = default("cpus_per_task")
    reservation: str | None = default("reservation")
    sbatch_option: list[str] | None = default("sbatch_option")  # KEY=VALUE, checked (optiontable)
    srun_option: list[str] | None = default("srun_option")  # the ranks' srun and the preflight's
    setup: list[str] | None = default("setup")  # shell lines before the ranks (launch/setup.py)
    debug: bool = default("debug")
    log_level: str | None = default("log_level")
    overflow: bool = default("overflow")
    oom_retry: str | None = default("oom_retry")
    mpirun: str | None = default("mpirun")
    preflight: bool = not default("no_preflight")  # slurm runs it inside the allocation, as the job's first step
    python: str = sys.executable  # resolved: --python, else this one
    cwd: str = field(default_factory=os.getcwd)
    hang_timeout: int = default("hang_timeout")  # 0: no watchdog
    on_hang: str = default("on_hang")
    trace: bool = default("trace")
    straggler: int = default("straggler")
    port: int | None = default("port")  # None: derived from the job id; local: a free port
    retries: int = default("retries")  # `clusterdoc why` decides which failures are retried
    slurm_wait: int = default("slurm_wait")  # the job is UNKNOWN meanwhile
    signal_ahead: int = 90  # slurm: seconds before the time limit the ranks get SIGUSR1 (checkpoint, requeue)
    exclude: list[str] = field(default_factory=list)  # nodes left out (blamed by an earlier attempt)
    restart: int = 0  # this attempt's TORCHELASTIC_RESTART_COUNT
    previous_attempt: str | None = None  # the last attempt's folder (CLUSTERDOC_PREVIOUS_ATTEMPT)
    batch_script: bool = False  # script is the user's own batch script: sbatch runs it as it is (batchscript.py)
    sbatch_args: list[str] = field(default_factory=list)  # for it: sbatch options overriding its #SBATCH lines

    @property
    def world_size(self) -> int:
        return self.nodes * self.tasks_per_node

    def shim_env(self) -> dict[str, str]:
        """The switches clusterdoc.run reads in every rank (same names as the config's env layer)."""
        # the options every rank reads (debug, overflow, log level, the hang watch: optiontable's to_ranks rows)
        env = rank_switches(asdict(self))
        env["PYTHONUNBUFFERED"] = "1"  # rank logs appear as they are written, so --wait streams them live
        # torchrun's name for "this is a restart" (0 on the first attempt), and where the last one's files are
        env["TORCHELASTIC_RESTART_COUNT"] = str(self.restart)
        env["CLUSTERDOC_ATTEMPT"] = str(self.restart + 1)
        if self.previous_attempt:
            env["CLUSTERDOC_PREVIOUS_ATTEMPT"] = self.previous_attempt
        env["CLUSTERDOC_HANG_WATCHER"] = "launcher"  # the launcher prints the hang report (it knows who is gone)
        return env

    def rank_command(self, log_dir: Path, script_args: list[str] | None = None, setup: bool = True) -> list[str]:
        """The rank's command; after the --setup lines in a shell of its own (`setup`: Slurm runs them in the batch
        script instead)."""
        from clusterdoc.launch.setup import wrap_argv

        args = self.script_args if script_args is None else script_args
        argv = [self.python, "-m", "clusterdoc.run", "--log-dir", str(log_dir), self.script, *args]
        return wrap_argv(self.setup, argv) if setup and self.setup else argv


def rank_env(
    rank: int,
    world_size: int,
    local_rank: int,
    local_world_size: int,
    node_rank: int,
    master_addr: str,
    master_port: int,
) -> dict[str, str]:
    """torchrun's variable names: what shim.init() and plain torch.distributed scripts both read."""
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(local_world_size),
        "NODE_RANK": str(node_rank),
        "GROUP_RANK": str(node_rank),
        "MASTER_ADDR": master_addr,
        "MASTER_PORT": str(master_port),
    }


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


# --- a job's first record (the folder itself: clusterdoc/jobs/folder.py) -------------------------


def init_job_dir(jd: JobDir, spec: JobSpec) -> JobDir:
    """The first record of a reserved folder, and space set aside for its last one. A folder that cannot take
    them (full disk) is removed again: no half-made job is left behind."""
    private.reserve(jd.reserve_path)
    try:
        jd.write(
            {
                "id": jd.id,
                "spec": asdict(spec),
                "backend_id": None,
                "state": "PENDING",
                "submitted": time.time(),
                "attempts": [],
            }
        )
    except UsageError:
        discard(jd)
        raise
    return jd


def create_job_dir(root: Path, spec: JobSpec, job_id: str | None = None) -> JobDir:
    return init_job_dir(reserve_job_dir(root, spec.backend, job_id), spec)


def format_command(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


# --- script arguments ---------------------------------------------------------------------------


def get_arg(args: list[str], name: str) -> str | None:
    """Value of --name in a script's arguments (`--name V` or `--name=V`), else None."""
    flag = "--" + name
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a[len(flag) + 1 :]
    return None


def set_arg(args: list[str], name: str, value: str) -> list[str]:
    """A copy of args with --name set to value (replaced where it is, else appended)."""
    flag, out, i = "--" + name, [], 0
    replaced = False
    while i < len(args):
        a = args[i]
        if a == flag and i + 1 < len(args):
            out += [flag, value]
            i += 2
            replaced = True
            continue
        if a.startswith(flag + "="):
            out.append(f"{flag}={value}")
            replaced = True
        else:
            out.append(a)
        i += 1
    return out if replaced else out + [flag, value]
