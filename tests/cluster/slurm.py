"""munged + slurmctld + one `slurmd -N nodeN` per node (multiple-slurmd), all private to the cluster dir.

slurmd runs inside its node's UTS + mount + network namespaces (nsenter into the node's sshd), so job steps
see the node's hostname, files and network; slurmctld runs on the head and is reached at the head's bridge
address, each slurmd at its node's address (NodeAddr). No accounting storage: sacct does not work, squeue / scontrol do (a site cluster has
it: site.py).
"""
from __future__ import annotations

import os
import resource
import socket
import stat
import subprocess
from pathlib import Path

from .nodes import Node
from .procs import ClusterError, alive, listeners, read_pid, tail, track, wait_for

MUNGED = "/usr/sbin/munged"
SLURMCTLD = "/usr/sbin/slurmctld"
SLURMD = "/usr/sbin/slurmd"


class Slurm:
    def __init__(self, cluster_dir: Path):
        self.dir = cluster_dir / "slurm"
        self.munge_dir = cluster_dir / "munge"
        self.conf = self.dir / "slurm.conf"
        self.socket = self.munge_dir / "munge.socket"

    def env(self) -> dict:
        return {"SLURM_CONF": str(self.conf)}

    # ------------------------------------------------------------ config
    def write_config(self, nodes: list[Node], ctld_port: int, node_ports: list[int], gpus: dict[str, int],
                     head_addr: str, features: dict[str, list[str]] | None = None, min_job_age: int | None = None,
                     accounting: list[str] | None = None) -> None:
        """features: node -> its Feature= list; min_job_age: MinJobAge (None: 300); accounting: the lines a site
        with slurmdbd has instead of accounting_storage/none (site.Site.slurm_conf_lines)."""
        for sub in ("state", "spool", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        host = socket.gethostname().split(".")[0]
        d = self.dir
        lines = [
            "# slurm.conf of the clusterdoc test cluster (multiple-slurmd on one host)",
            "ClusterName=clusterdoc",
            f"SlurmctldHost={host}({head_addr})",
            f"SlurmctldPort={ctld_port}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={self.socket}", "CredType=cred/munge",
            f"StateSaveLocation={d}/state", f"SlurmdSpoolDir={d}/spool/%n",
            f"SlurmctldPidFile={d}/slurmctld.pid", f"SlurmdPidFile={d}/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log", f"SlurmdLogFile={d}/log/slurmd-%n.log",
            "SlurmctldDebug=info", "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            *(accounting or ["AccountingStorageType=accounting_storage/none",
                             "JobAcctGatherType=jobacct_gather/none"]),
            "JobCompType=jobcomp/none", "MpiDefault=none", "SwitchType=switch/none",
            "SchedulerType=sched/backfill", "ReturnToService=2", "MailProg=/bin/true",
            "SlurmctldTimeout=30", "SlurmdTimeout=60", "MessageTimeout=10", "InactiveLimit=0", "KillWait=5",
            f"MinJobAge={300 if min_job_age is None else min_job_age}", "PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm",
        ]
        if any(gpus.values()):
            lines.append("GresTypes=gpu")
        for node, port in zip(nodes, node_ports):
            gres = f" Gres=gpu:{gpus[node.name]}" if gpus.get(node.name) else ""
            feature = f" Feature={','.join(features[node.name])}" if (features or {}).get(node.name) else ""
            lines.append(f"NodeName={node.name} NodeHostname={node.name} NodeAddr={node.addr} Port={port} "
                         f"CPUs=2 RealMemory=2048{gres}{feature} State=UNKNOWN")
        lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        gres_lines = ["# gres.conf: counts only (the GPUs are fakes, there are no device files)", "AutoDetect=off"]
        # slurmd ignores file-less GPUs and wants a character device per GPU: each gets a stand-in with
        # /dev/null's numbers (harmless to open; task/none never constrains it). Jobs asking for GPUs then
        # get CUDA_VISIBLE_DEVICES like on a real node.
        dev = self.dir / "dev"
        dev.mkdir(exist_ok=True)
        for i in range(max(gpus.values(), default=0)):
            path = dev / f"nvidia{i}"
            if not path.exists():
                os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        gres_lines += [f"NodeName={n.name} Name=gpu File={dev}/nvidia[0-{gpus[n.name] - 1}]"
                       for n in nodes if gpus.get(n.name)]
        (self.dir / "gres.conf").write_text("\n".join(gres_lines) + "\n")

    # ------------------------------------------------------------ daemons
    def _popen(self, argv: list[str], log: Path) -> subprocess.Popen:
        env = dict(os.environ, SLURM_CONF=str(self.conf))
        with open(log, "ab") as out:
            return track(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                          cwd="/", env=env, start_new_session=True))

    def start_munge(self) -> int:
        m = self.munge_dir
        m.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(m, 0o700)
        key = m / "munge.key"
        if not key.exists():
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(1024))
        log = m / "munged.log"
        proc = self._popen([MUNGED, "-F", "--force", f"--key-file={key}", f"--socket={self.socket}",
                            f"--pid-file={m / 'munged.pid'}", f"--log-file={log}", f"--seed-file={m / 'munged.seed'}",
                            "--num-threads=2"], m / "munged.out")

        def ready():
            if proc.poll() is not None:
                raise ClusterError(f"munged exited with {proc.returncode}; log {log}:\n{tail(log)}\n"
                                   f"{tail(m / 'munged.out')}")
            return self.socket.exists()
        wait_for(ready, 15, "munged to create its socket", log)
        return proc.pid

    def start_ctld(self, ctld_port: int, clear: bool = True) -> int:
        """clear: a fresh controller (-c); False: it recovers its saved state (jobs included), as a restart does."""
        log = self.dir / "log" / "slurmctld.log"
        argv = [SLURMCTLD, "-D", *(["-c"] if clear else []), "-i", "-f", str(self.conf)]
        proc = self._popen(argv, self.dir / "log" / "slurmctld.out")

        def ready():
            if proc.poll() is not None:
                raise ClusterError(f"slurmctld exited with {proc.returncode}; log {log}:\n{tail(log)}\n"
                                   f"{tail(self.dir / 'log' / 'slurmctld.out')}")
            return any(port == ctld_port for _, port in listeners())
        wait_for(ready, 30, f"slurmctld to listen on port {ctld_port}", log)
        return proc.pid

    def ctld_port(self) -> int:
        for line in self.conf.read_text().splitlines():
            if line.startswith("SlurmctldPort="):
                return int(line.split("=", 1)[1])
        raise ClusterError(f"no SlurmctldPort in {self.conf}")

    def stop_ctld(self, timeout: float = 30) -> None:
        """slurmctld stopped as an admin (or a crash-free restart) does: SIGTERM, it saves its state and exits."""
        import signal
        pid = read_pid(self.dir / "slurmctld.pid")
        if alive(pid):
            os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not alive(pid), timeout, "slurmctld to exit", self.dir / "log" / "slurmctld.log")

    def restart_ctld(self) -> int:
        """slurmctld back after stop_ctld, with the jobs it saved (not -c)."""
        return self.start_ctld(self.ctld_port(), clear=False)

    def start_slurmd(self, node: Node, holder_pid: int, memlock: int | None = None) -> subprocess.Popen:
        (self.dir / "spool" / node.name).mkdir(parents=True, exist_ok=True)
        proc = self._popen(["nsenter", "-t", str(holder_pid), "-u", "-m", "-n", "--", SLURMD, "-D", "-N", node.name,
                            "-f", str(self.conf)], self.dir / "log" / f"slurmd-{node.name}.out")
        if memlock:  # nsenter execs slurmd: this pid is slurmd's, before it has started a step
            hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
            resource.prlimit(proc.pid, resource.RLIMIT_MEMLOCK, (memlock, hard))
        return proc

    def wait_nodes_idle(self, nodes: list[Node], procs: dict[str, subprocess.Popen], timeout: float) -> None:
        names = {n.name for n in nodes}

        def ready():
            for name, proc in procs.items():
                if proc.poll() is not None:
                    log = self.dir / "log" / f"slurmd-{name}.log"
                    raise ClusterError(f"slurmd -N {name} exited with {proc.returncode}; log {log}:\n{tail(log)}\n"
                                       f"{tail(self.dir / 'log' / f'slurmd-{name}.out')}")
            states = self.node_states()
            return states and all(states.get(n, "").startswith(("idle", "mix", "alloc")) for n in names)
        try:
            wait_for(ready, timeout, "all slurmd nodes to be idle", interval=0.3)
        except ClusterError as exc:
            states = self.node_states()
            bad = sorted(n for n in names if not states.get(n, "").startswith("idle"))
            raise ClusterError(f"{exc}; node states {states}; log of {bad[0] if bad else '?'}:\n"
                               f"{tail(self.dir / 'log' / f'slurmd-{bad[0] if bad else nodes[0].name}.log')}\n"
                               f"slurmctld log:\n{tail(self.dir / 'log' / 'slurmctld.log')}") from None

    def node_states(self) -> dict[str, str]:
        try:
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], capture_output=True, text=True, timeout=10,
                                 env=dict(os.environ, **self.env())).stdout
        except (OSError, subprocess.TimeoutExpired):
            return {}
        return dict(line.split(None, 1) for line in out.splitlines() if len(line.split(None, 1)) == 2)

    def pids(self) -> set[int]:
        files = [self.munge_dir / "munged.pid", self.dir / "slurmctld.pid", *self.dir.glob("slurmd-*.pid")]
        return {p for p in (read_pid(f) for f in files) if alive(p)}
