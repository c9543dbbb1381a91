"""mpirun backend: MPICH (Hydra) or Open MPI, each with its own flags (reference.md §6).

              MPICH Hydra                        Open MPI
hostfile      host:slots, -f FILE                host slots=N, --hostfile FILE
placement     -n W -ppn K                        -np W --map-by ppr:K:node
environment   -genv K V (all env propagated)     -x K=V (only -x variables reach remote ranks)
ssh           -launcher ssh -launcher-exec CMD   --mca plm_rsh_agent CMD (v5: PRTE_MCA_plm_ssh_agent)
root          -                                  --allow-run-as-root
The flavour comes from `mpirun --version`. MASTER_ADDR is the first host of the hostfile (rank 0 runs there)
and MASTER_PORT is derived from the job id, so no rank has to ask MPI for them (nor needs mpi4py).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

from clusterdoc import hostfile, private
from clusterdoc.errors import UsageError
from clusterdoc.launch import lifeline
from clusterdoc.launch.job import JobDir, JobSpec
from clusterdoc.launch.outcome import Outcome, outcome_from_records
from clusterdoc.probe import parse_mpirun_version
from clusterdoc.shim.env import port_from_job_id

STOP_GRACE = 5.0
FAILURE_GRACE = 3.0
# what a rank needs from the launcher's environment when only listed variables travel (Open MPI)
_FORWARD = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "HOME")


def version_text(mpirun: str, timeout: float = 10.0) -> str:
    """What `mpirun --version` prints (both streams): the flavour and version are read from it."""
    try:
        res = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise UsageError(
            f"mpirun not found: {mpirun}", hint="install MPICH or Open MPI, or give --mpirun PATH"
        ) from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"'{mpirun} --version' did not answer within {timeout:.0f} s") from None
    return res.stdout + res.stderr


def flavour_from_version(text: str, mpirun: str = "mpirun") -> str:
    flavour, _ = parse_mpirun_version(text)
    if flavour == "other":
        raise UsageError(
            f"cannot tell which MPI '{mpirun}' is from its --version output",
            hint="MPICH (Hydra) and Open MPI are supported; give --mpirun mpirun.mpich or mpirun.openmpi",
        )
    return flavour


def openmpi_major(text: str) -> int:
    _, version = parse_mpirun_version(text)
    return int(version.split(".")[0]) if version and version.split(".")[0].isdigit() else 4


def ssh_wrapper(jd: JobDir, ssh_config: str) -> Path:
    """A one-line launcher script: both flavours take a program path for their ssh agent, not a command line."""
    path = jd.path / "ssh-launcher.sh"
    private.write(path, "#!/bin/sh\nexec ssh -F " + shlex.quote(ssh_config) + ' -o BatchMode=yes "$@"\n', mode=0o700)
    return path


def excluded(host: str, exclude: list[str]) -> bool:
    """A hostfile entry is left out when it names an excluded node (or its short name does)."""
    return host in exclude or host.split(".")[0] in exclude


def build_command(
    spec: JobSpec,
    jd: JobDir,
    script_args: list[str],
    flavour: str,
    mpirun: str,
    version_text: str = "",
    is_root: bool | None = None,
) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment for mpirun itself)."""
    if spec.hostfile is None:
        raise UsageError("the mpirun backend needs --hostfile", hint="or use --backend local / slurm")
    hosts = [h for h in hostfile.parse_file(spec.hostfile) if not excluded(h.host, spec.exclude)]
    if len(hosts) < spec.nodes:
        without = f" without {', '.join(spec.exclude)}" if spec.exclude else ""
        raise UsageError(
            f"--nodes {spec.nodes} but the hostfile lists {len(hosts)} host(s){without}", where=spec.hostfile
        )
    hosts = [hostfile.Host(h.host, slots=spec.tasks_per_node, user=h.user) for h in hosts[: spec.nodes]]
    hf = jd.path / f"hostfile.{flavour}"
    private.write(hf, hostfile.format_hosts(hosts, to=flavour) + "\n")
    env = {
        **spec.shim_env(),
        "MASTER_ADDR": hosts[0].host,
        "MASTER_PORT": str(spec.port or port_from_job_id(jd.id)),
        "CLUSTERDOC_LAUNCHER": "mpirun",
    }  # clusterdoc.run: ranks from the MPI variables, no mpi4py needed
    launcher_env: dict[str, str] = {}
    agent = ssh_wrapper(jd, spec.ssh_config) if spec.ssh_config else None
    w = str(spec.world_size)
    if flavour == "mpich":
        argv = [mpirun, "-f", str(hf), "-n", w, "-ppn", str(spec.tasks_per_node), "-wdir", spec.cwd]
        if agent:
            argv += ["-launcher", "ssh", "-launcher-exec", str(agent)]
        for k, v in env.items():
            argv += ["-genv", k, v]
    else:
        argv = [
            mpirun,
            "--hostfile",
            str(hf),
            "-np",
            w,
            "--map-by",
            f"ppr:{spec.tasks_per_node}:node",
            "--wdir",
            spec.cwd,
        ]
        if is_root if is_root is not None else os.geteuid() == 0:
            argv.append("--allow-run-as-root")
        if agent:
            if openmpi_major(version_text) >= 5:
                launcher_env["PRTE_MCA_plm_ssh_agent"] = str(agent)
            else:
                argv += ["--mca", "plm_rsh_agent", str(agent)]
        for k, v in env.items():
            argv += ["-x", f"{k}={v}"]
        for k in _FORWARD:
            if k in os.environ:
                argv += ["-x", k]
    return argv + spec.rank_command(jd.path, script_args), launcher_env


class MpiJob:
    backend = "mpirun"

    def __init__(self, spec: JobSpec, jd: JobDir, script_args: list[str]):
        self.spec, self.jd = spec, jd
        mpirun = spec.mpirun or "mpirun"
        if not shutil.which(mpirun):
            raise UsageError(f"mpirun not found: {mpirun}", hint="install MPICH or Open MPI, or give --mpirun PATH")
        version = version_text(mpirun)
        self.flavour = flavour_from_version(version, mpirun)
        argv, launcher_env = build_command(spec, jd, script_args, self.flavour, mpirun, version)
        private.write(jd.path / "mpirun.cmd", " ".join(shlex.quote(a) for a in argv) + "\n")
        with (
            private.open_append(jd.path / "mpirun.out", True) as out,
            private.open_append(jd.path / "mpirun.err", True) as err,
        ):
            # SIGINT when we die, as cancel(): Hydra and ORTE stop the remote ranks
            self.proc = lifeline.start(argv, {**os.environ, **launcher_env}, spec.cwd, out, err, signal.SIGINT)
        self.backend_id = str(self.proc.pid)
        self.pids = [self.proc.pid]
        self.failed_seen: float | None = None
        self.children: set[tuple[int, int]] = set()  # (pid, start time) of what mpirun started (its ssh, one a node)

    def poll(self) -> Outcome | None:
        code = self.proc.poll()
        if code is None:
            self.children |= children(self.proc.pid)
            # a failed rank is on record before Hydra / ORTE act on it: give them a moment to end the
            # job their own way, then stop it ourselves
            if any((r := self.jd.rank_exit(rank)) and r["code"] != 0 for rank in range(self.spec.world_size)):
                self.failed_seen = self.failed_seen or time.monotonic()
                if time.monotonic() - self.failed_seen < FAILURE_GRACE:
                    return None
                self.cancel()
                code = self.proc.returncode
            else:
                return None
        self.reap()
        return outcome_from_records(self.jd, self.spec.world_size, code)

    def reap(self) -> None:
        """mpirun has ended: what it started on this machine ends too. Its ssh to a node cut off the network
        outlives it (blocked on a link that does not answer; issue 43's campaign, netdrop and linkdown) and holds that
        node's session, ranks included, open for when the link comes back. Hydra starts each ssh in a session of its
        own: they are the children seen while mpirun ran (each checked by its start time: never a reused pid); then
        what is left in mpirun's own process group."""
        for pid, started in self.children:
            if start_time(pid) == started:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def rank_codes(self) -> dict[int, int | None]:
        return {}  # one mpirun process for all ranks: their own exit records say it

    def cancel(self) -> None:
        """SIGINT to mpirun first: Hydra and ORTE then kill the remote ranks themselves (ssh would not)."""
        steps = (
            (lambda: os.kill(self.proc.pid, signal.SIGINT), STOP_GRACE),
            (lambda: os.killpg(self.proc.pid, signal.SIGTERM), STOP_GRACE),
            (lambda: os.killpg(self.proc.pid, signal.SIGKILL), None),
        )
        for send, grace in steps:
            if self.proc.poll() is not None:
                break
            try:
                send()
            except ProcessLookupError:
                break
            try:
                self.proc.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        self.reap()


def start_time(pid: int) -> int | None:
    """A process's start time (clock ticks after boot, /proc/PID/stat's 22nd field), None when it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def children(pid: int) -> set[tuple[int, int]]:
    """(pid, start time) of a process's children now (/proc/PID/task/TID/children)."""
    out: set[tuple[int, int]] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks[:256]:
        try:
            kids = Path(f"/proc/{pid}/task/{tid}/children").read_text().split()
        except OSError:
            continue
        for kid in kids[:4096]:
            started = start_time(int(kid))
            if started is not None:
                out.add((int(kid), started))
    return out


def start(spec: JobSpec, jd: JobDir, script_args: list[str]) -> MpiJob:
    return MpiJob(spec, jd, script_args)


def extra_logs(jd: JobDir) -> dict[str, Path]:
    return {"mpirun": jd.path / "mpirun.err"}
