"""The head's mpirun: which one it is, and one run across the nodes while they are probed.

MPICH: `mpirun -launcher manual` (HydraManual), each node starting its proxy inside its probe's SSH round
trip; other flavours: mpirun's own ssh launcher (run_mpirun), through a wrapper carrying our ssh options.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any

from clusterdoc import probe
from clusterdoc.errors import UsageError
from clusterdoc.targets import Targets
from clusterdoc.untrusted import MAX_STREAM

# One write per rank: print() with several arguments writes them in pieces, which interleave between ranks.
MPI4PY_TEST = (
    "import sys; from mpi4py import MPI; c = MPI.COMM_WORLD; s = c.allreduce(1); "
    "sys.stdout.write('CLUSTERDOC-MPI %d %d %s %d\\n' % (c.Get_rank(), c.Get_size(), "
    "MPI.Get_processor_name(), s)); sys.stdout.flush()"
)


def _ssh_wrapper(targets: Targets, tmp: str) -> str | None:
    """An ssh command for mpirun's launcher carrying our --ssh-config / -i (mpirun cannot take them)."""
    extra = []
    if targets.ssh_config:
        extra += ["-F", os.path.abspath(os.path.expanduser(targets.ssh_config))]
    for key in targets.identity:
        extra += ["-i", os.path.abspath(os.path.expanduser(key))]
    if targets.user:
        extra += ["-l", targets.user]
    if not extra:
        return None
    path = os.path.join(tmp, "ssh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec ssh -o BatchMode=yes " + " ".join(shlex.quote(a) for a in extra) + ' "$@"\n')
    os.chmod(path, 0o755)
    return path


def mpirun_argv(head: dict, hosts, hostfile: str, wrapper: str | None, program: list[str]) -> list[str]:
    n = str(len(hosts))
    if head["flavour"] == "openmpi":
        argv = [head["path"], "--hostfile", hostfile, "-np", n, "--map-by", "ppr:1:node"]
        if wrapper:
            argv += ["--mca", "plm_rsh_agent", wrapper]
        if os.geteuid() == 0:
            argv.append("--allow-run-as-root")
    else:  # MPICH Hydra (and look-alikes)
        argv = [head["path"], "-f", hostfile, "-n", n, "-ppn", "1", "-launcher", "ssh"]
        if wrapper:
            argv += ["-launcher-exec", wrapper]
    return argv + program


def write_mpi_hostfile(head: dict, hosts, path: str) -> None:
    with open(path, "w") as f:
        for h in hosts:
            f.write(f"{h.host} slots=1\n" if head["flavour"] == "openmpi" else f"{h.host}:1\n")


TOO_LARGE = f"\n(more than {MAX_STREAM >> 20} MiB: output too large, the rest was dropped)\n"


class CappedReader(threading.Thread):
    """Reads a pipe to its end, keeping only the first MAX_STREAM bytes (memory stays bounded whatever
    a node makes mpirun print); `text()` says when the rest was dropped."""

    def __init__(self, pipe, on_line=None):
        super().__init__(daemon=True)
        self.pipe, self.on_line, self.kept, self.size, self.partial = pipe, on_line, [], 0, b""
        self.start()

    def run(self):
        while chunk := os.read(self.pipe.fileno(), 65536):
            room = MAX_STREAM - self.size
            self.size += len(chunk)
            if room <= 0:
                continue  # drained and dropped
            self.kept.append(chunk[:room])
            if self.on_line:
                *lines, self.partial = (self.partial + chunk[:room]).split(b"\n")
                for line in lines:
                    self.on_line(line.decode(errors="replace"))
        if self.on_line and self.partial and self.size <= MAX_STREAM:
            self.on_line(self.partial.decode(errors="replace"))

    def text(self) -> str:
        return b"".join(self.kept).decode(errors="replace") + (TOO_LARGE if self.size > MAX_STREAM else "")


def run_mpirun(targets: Targets, hosts, head: dict | None, use_mpi4py: str | None, timeout: float) -> dict:
    """Run the flavour's `mpirun ... hostname` (or the mpi4py allreduce when every node has mpi4py,
    `use_mpi4py` being the nodes' python) across all hosts; never longer than `timeout`."""
    if not head:
        return {"error": "no mpirun on the head's PATH (pass --mpirun)"}
    with tempfile.TemporaryDirectory(prefix="clusterdoc-mpi-") as tmp:
        hf = os.path.join(tmp, "hostfile")
        write_mpi_hostfile(head, hosts, hf)
        program = [use_mpi4py, "-c", MPI4PY_TEST] if use_mpi4py else ["hostname"]
        argv = mpirun_argv(head, hosts, hf, _ssh_wrapper(targets, tmp), program)
        env = dict(os.environ, HYDRA_LAUNCHER="ssh")
        result: dict[str, Any] = {
            "command": " ".join(shlex.quote(a) for a in argv),
            "timeout": timeout,
            "timed_out": False,
            "exit_code": None,
            "names": [],
            "stderr": "",
            "mpi4py": bool(use_mpi4py),
        }
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return {"error": f"{argv[0]}: {exc.strerror}"}
        readers = CappedReader(proc.stdout), CappedReader(proc.stderr)
        try:
            result["exit_code"] = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # mpirun and its ssh children
            proc.wait()
            result["timed_out"] = True
        for r in readers:
            r.join(5)
    out, err = readers[0].text(), readers[1].text()
    result["stderr"] = err[-2000:]
    if use_mpi4py:
        sums = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 5 and parts[0] == "CLUSTERDOC-MPI":
                result["names"].append(parts[3])
                sums.append(int(parts[4]))
        result["allreduce"] = len(hosts)
        result["sums"] = sums
        result["allreduce_ok"] = bool(sums) and all(s == len(hosts) for s in sums) and len(sums) == len(hosts)
    else:
        result["names"] = [line.strip() for line in out.splitlines() if line.strip()]
    return result


class HydraManual:
    """`mpirun -launcher manual ... hostname` (MPICH Hydra): Hydra prints one proxy command per node
    and waits for the proxies to call back. Each node starts its proxy inside its probe's SSH round
    trip, so testing MPI costs no second SSH handshake per node (a whole `pdsh` worth of CPU at 64
    nodes). A node that cannot be reached never starts its proxy; the others still print their names."""

    def __init__(self, hosts, head: dict, timeout: float):
        self.hosts, self.timeout = hosts, timeout
        self.tmp = tempfile.TemporaryDirectory(prefix="clusterdoc-mpi-")
        hf = os.path.join(self.tmp.name, "hostfile")
        write_mpi_hostfile(head, hosts, hf)
        self.argv = [head["path"], "-launcher", "manual", "-f", hf, "-n", str(len(hosts)), "-ppn", "1", "hostname"]
        self.started = time.monotonic()
        self.launch: list[list[str]] = []
        self.names: list[str] = []
        self.ready = threading.Event()
        self.error: str | None = None
        self.proc: subprocess.Popen[bytes] | None
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            self.proc, self.error = None, f"{self.argv[0]}: {exc.strerror}"
            self.ready.set()
            return
        self.out_reader = CappedReader(self.proc.stdout, self._line)
        self.readers = [self.out_reader, CappedReader(self.proc.stderr)]

        def ready_at_end() -> None:  # mpirun printed all it will
            self.out_reader.join()
            self.ready.set()

        threading.Thread(target=ready_at_end, daemon=True).start()

    def _line(self, line: str):
        if line.startswith("HYDRA_LAUNCH: "):
            self.launch.append(shlex.split(line[len("HYDRA_LAUNCH: ") :]))
        elif line.startswith("HYDRA_LAUNCH_END"):
            self.ready.set()
        elif line.strip():
            self.names.append(line.strip())

    def proxies(self) -> list[list[str]] | None:
        """One proxy argv per host (hostfile order = proxy id), or None when mpirun printed none in time."""
        self.ready.wait(self.timeout)
        return self.launch if len(self.launch) == len(self.hosts) else None

    def stop(self) -> None:
        """Kill mpirun now (the check is ending without it)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.tmp.cleanup()

    def finish(self, grace: float = 2.0) -> dict:
        """Wait for mpirun (at most until the node timeout, or `grace` after the probes), then judge."""
        if self.proc is None:  # it did not start: self.error says why
            return {"error": self.error}
        deadline = max(self.started + self.timeout, time.monotonic() + grace)
        timed_out = False
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for t in self.readers:
            t.join(2)
        self.tmp.cleanup()
        return {
            "command": " ".join(shlex.quote(a) for a in self.argv),
            "timeout": self.timeout,
            "timed_out": timed_out,
            "exit_code": None if timed_out else self.proc.returncode,
            "names": list(self.names),
            "stderr": self.readers[1].text()[-2000:],
            "mpi4py": False,
            "launcher": "manual (proxies started in each node's probe session)",
            "user_command": f"mpirun -f HOSTFILE -n {len(self.hosts)} -ppn 1 hostname",
        }


def head_mpirun(path: str | None) -> dict | None:
    """The head's mpirun (`path`, else mpirun on PATH): its path, flavour and version; None when there is none."""
    if path:
        resolved = probe.which(path) if "/" not in path else path
        if not resolved or not os.access(resolved, os.X_OK):
            raise UsageError(f"--mpirun {path!r} is not an executable", hint="give a path or a name on PATH")
        path = resolved
    else:
        path = probe.which("mpirun")
        if not path:
            return None
    try:
        code, out, err = probe.run([path, "--version"], 10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"path": path, "flavour": "other", "version": None, "error": str(exc)}
    flavour, version = probe.parse_mpirun_version(out + err)
    return {"path": path, "flavour": flavour, "version": version}


def all_answered(result: dict, hosts, facts) -> bool:
    names = set(result.get("names") or [])
    return all(h.host in names or facts[h.host].get("hostname") in names for h in hosts)


def mpi4py_python(facts, head) -> str | None:
    """The nodes' python when every node has a working mpi4py of the head's flavour (else None)."""
    pythons = set()
    for f in facts.values():
        if not f:
            continue  # unreachable: not part of the run
        m4 = (f.get("mpi") or {}).get("mpi4py")
        if not m4 or m4.get("error") or not head:
            return None
        lib = m4.get("library") or ""
        if (head["flavour"] == "mpich") != ("MPICH" in lib):
            return None
        pythons.add((f.get("python") or {}).get("executable"))
    return pythons.pop() if len(pythons) == 1 and None not in pythons else None
