"""`clusterdoc check`: probe every node in one SSH round trip each, then judge the facts.

Flow: targets -> one paramiko session per node (bounded fan-out, per-node timeout) running
clusterdoc/probe.py from stdin in `python3 -` (or the shell fallback where python3 is missing),
with the node-to-node ssh test inside that same round trip; meanwhile the head runs one mpirun
across all nodes. Then the pure checks (clusterdoc/checks/*) turn facts into findings and
clusterdoc/report.py shows them. A dead node costs one timeout, once.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from clusterdoc import probe, report
from clusterdoc.checks import ALL_CHECKS, FAIL, arch, comm, consistency, cuda, finding, kernel, malformed, mpi, ssh
from clusterdoc.errors import UsageError
from clusterdoc.untrusted import MAX_STREAM, MAX_TEXT, clean_facts, escape_all, printable

# Parts of probe.py only the head uses (the shell fallback's text and parser), left out of what is sent.
HEAD_ONLY = {"SHELL_PROBE", "shell_probe", "_sections", "_rc", "parse_shell_output"}


def probe_payload() -> bytes:
    """probe.py as sent to every node: without docstrings and head-only parts. Compiling it is a good
    part of the probe's cost on each node, so the smaller source shows in the check's wall time."""
    import ast

    tree = ast.parse(Path(probe.__file__).read_text())
    tree.body = [n for n in tree.body if getattr(n, "name", None) not in HEAD_ONLY and not (
        isinstance(n, ast.Assign) and any(getattr(t, "id", None) in HEAD_ONLY for t in n.targets))]
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body and \
                isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) and \
                isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return (ast.unparse(tree) + "\n").encode()


PROBE_SOURCE = probe_payload()


# --- options -----------------------------------------------------------------------------------

def selected_checks(args) -> list[str]:
    def parse(text, flag):
        names = [c.strip() for c in (text or "").split(",") if c.strip()]
        unknown = [c for c in names if c not in ALL_CHECKS]
        if unknown:
            raise UsageError(f"{flag}: unknown check(s) {', '.join(unknown)}",
                             hint=f"choose from {','.join(ALL_CHECKS)}")
        return names

    chosen = parse(getattr(args, "checks", None), "--checks") or [c for c in ALL_CHECKS if c != "comm"]
    if getattr(args, "comm", False) and "comm" not in chosen:
        chosen.append("comm")
    skip = set(parse(getattr(args, "skip", None), "--skip"))
    if getattr(args, "no_mesh", False):
        skip.add("mesh")
    return [c for c in ALL_CHECKS if c in chosen and c not in skip]


def probe_timeout(node_timeout: float) -> float:
    """Per-command limit inside the probe: well under the node's timeout, so a hung command is
    reported by the probe itself (with the other facts) instead of losing the whole node."""
    return max(1.0, min(8.0, node_timeout * 0.35))


def remote_command(timeout: float, peers: list[str] | None, budget: float | None = None,
                   head_mpirun: str | None = None, python: str | None = None) -> str:
    """`python` (the job's interpreter; default python3 on PATH) reads the probe from stdin, so its torch and
    packages are what is judged; without it the shell fallback runs (it ignores stdin)."""
    python = python or "python3"
    argv = [python, "-", "--timeout", f"{timeout:g}"]
    if budget:
        argv += ["--budget", f"{budget:g}"]
    if head_mpirun:
        argv += ["--head-mpirun", head_mpirun]
    if peers:
        argv += ["--mesh"] + peers
    py = " ".join(shlex.quote(a) for a in argv)
    return (f"if command -v {shlex.quote(python)} >/dev/null 2>&1; then exec {py}; else\n"
            f"{probe.shell_probe(timeout)}\nfi")


def with_proxy(command: str, proxy: list[str] | None) -> str:
    """Start this node's MPI proxy (Hydra manual launch) in the background of the same round trip."""
    if not proxy:
        return command
    return "(" + " ".join(shlex.quote(a) for a in proxy) + ") </dev/null >/dev/null 2>&1 &\n" + command


def parse_output(stdout: str) -> dict | None:
    """Facts from a node's output (the probe's JSON line, or the shell fallback's sections), checked
    and escaped (clusterdoc/untrusted.py): what a node prints is never trusted."""
    if "@@clusterdoc-shell-probe" in stdout:
        return clean_facts(probe.parse_shell_output(stdout))
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return clean_facts(json.loads(line))
            except (ValueError, RecursionError):
                return None
    return None


# --- mpirun from the head -------------------------------------------------------------------------

# One write per rank: print() with several arguments writes them in pieces, which interleave between ranks.
MPI4PY_TEST = ("import sys; from mpi4py import MPI; c = MPI.COMM_WORLD; s = c.allreduce(1); "
               "sys.stdout.write('CLUSTERDOC-MPI %d %d %s %d\\n' % (c.Get_rank(), c.Get_size(), "
               "MPI.Get_processor_name(), s)); sys.stdout.flush()")


def _ssh_wrapper(args, tmp: str) -> str | None:
    """An ssh command for mpirun's launcher carrying our --ssh-config / -i (mpirun cannot take them)."""
    extra = []
    if getattr(args, "ssh_config", None):
        extra += ["-F", os.path.abspath(args.ssh_config)]
    for key in getattr(args, "identity", None) or []:
        extra += ["-i", os.path.abspath(key)]
    if getattr(args, "user", None):
        extra += ["-l", args.user]
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


def run_mpirun(args, hosts, head: dict | None, use_mpi4py: str | None, timeout: float) -> dict:
    """Run the flavour's `mpirun ... hostname` (or the mpi4py allreduce when every node has mpi4py,
    `use_mpi4py` being the nodes' python) across all hosts; never longer than `timeout`."""
    if not head:
        return {"error": "no mpirun on the head's PATH (pass --mpirun)"}
    with tempfile.TemporaryDirectory(prefix="clusterdoc-mpi-") as tmp:
        hf = os.path.join(tmp, "hostfile")
        write_mpi_hostfile(head, hosts, hf)
        program = [use_mpi4py, "-c", MPI4PY_TEST] if use_mpi4py else ["hostname"]
        argv = mpirun_argv(head, hosts, hf, _ssh_wrapper(args, tmp), program)
        env = dict(os.environ, HYDRA_LAUNCHER="ssh")
        result = {"command": " ".join(shlex.quote(a) for a in argv), "timeout": timeout, "timed_out": False,
                  "exit_code": None, "names": [], "stderr": "", "mpi4py": bool(use_mpi4py)}
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, start_new_session=True)
        except OSError as err:
            return {"error": f"{argv[0]}: {err.strerror}"}
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
        result["names"] = [l.strip() for l in out.splitlines() if l.strip()]
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
        self.error = None
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            self.proc, self.error = None, f"{self.argv[0]}: {exc.strerror}"
            self.ready.set()
            return
        self.out_reader = CappedReader(self.proc.stdout, self._line)
        self.readers = [self.out_reader, CappedReader(self.proc.stderr)]
        threading.Thread(target=lambda: (self.out_reader.join(), self.ready.set()), daemon=True).start()

    def _line(self, line: str):
        if line.startswith("HYDRA_LAUNCH: "):
            self.launch.append(shlex.split(line[len("HYDRA_LAUNCH: "):]))
        elif line.startswith("HYDRA_LAUNCH_END"):
            self.ready.set()
        elif line.strip():
            self.names.append(line.strip())

    def proxies(self) -> list[list[str]] | None:
        """One proxy argv per host (hostfile order = proxy id), or None when mpirun printed none in time."""
        self.ready.wait(self.timeout)
        return self.launch if len(self.launch) == len(self.hosts) else None

    def finish(self, grace: float = 2.0) -> dict:
        """Wait for mpirun (at most until the node timeout, or `grace` after the probes), then judge."""
        if self.error:
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
        return {"command": " ".join(shlex.quote(a) for a in self.argv), "timeout": self.timeout,
                "timed_out": timed_out, "exit_code": None if timed_out else self.proc.returncode,
                "names": list(self.names), "stderr": self.readers[1].text()[-2000:], "mpi4py": False,
                "launcher": "manual (proxies started in each node's probe session)",
                "user_command": f"mpirun -f HOSTFILE -n {len(self.hosts)} -ppn 1 hostname"}


def head_mpirun(args) -> dict | None:
    path = getattr(args, "mpirun", None)
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


# --- gathering ------------------------------------------------------------------------------------

def gather_remote(args, hosts, checks, progress, proxies=None, head_path=None) -> tuple[dict, dict]:
    """{node: conn}, {node: facts|None} from one SSH round trip per node. `proxies`: each host's MPI
    proxy command (HydraManual), started in the same round trip."""
    from clusterdoc import remote

    opts = remote.SSHOptions.from_args(args)
    fanout = getattr(args, "fanout", 32)
    if fanout < 1:
        raise UsageError(f"--fanout must be at least 1, got {fanout}")
    peers = [h.host for h in hosts] if "mesh" in checks and len(hosts) > 1 else None
    # The probe must answer before the node's timeout: the mesh stops at 75% of it.
    python = getattr(args, "python", None)
    command = remote_command(probe_timeout(opts.timeout), peers, round(opts.timeout * 0.75, 1), head_path, python)
    if proxies:  # one command per host: each starts its own MPI proxy in the same round trip
        proxy_of = {h.host: proxies[i] for i, h in enumerate(hosts)}
        command_for = lambda h: with_proxy(command, proxy_of[h.host])  # noqa: E731
    else:
        command_for = command
    results = remote.run_many(hosts, command_for, opts, stdin=PROBE_SOURCE, fanout=fanout,
                              on_done=lambda r: progress.update(r.status != "ok"))
    conns, facts = {}, {}
    for h in hosts:
        r = results[h.host]
        conns[h.host] = {"status": r.status, "message": r.message, "elapsed": round(r.elapsed, 3),
                         "exit_code": r.exit_code}
        conns[h.host]["message"] = printable(r.message, MAX_TEXT)
        f = parse_output(r.stdout) if r.status in ("ok", "timeout") else None
        if f is None and r.status == "ok":
            tail = (r.stderr.strip().splitlines() or [f"exit {r.exit_code}, no output"])[-1]
            conns[h.host]["message"] = printable(tail, 300)
        if f is not None and r.status == "timeout":
            conns[h.host]["status"] = "ok"  # the facts came; whatever hung is in its errors
        if f and f.get("mesh"):  # every node gets the same peer list: keep the others, drop itself
            f["mesh"] = {p: v for p, v in f["mesh"].items() if p in (peers or []) and p != h.host}
        if f and f.get("probe") == "shell" and python:
            f["python_missing"] = python  # the job's interpreter is not there: its ranks cannot start
        facts[h.host] = f
    return conns, facts


def gather_local(python: str | None, timeout: float, head_mpirun: str | None = None) -> dict:
    """This machine's facts as seen by `python` (the job's interpreter): in this process when it is this
    interpreter, else the probe runs under it, exactly as on a remote node. `head_mpirun`: the mpirun
    the check uses (here the head is the node)."""
    if not python or os.path.realpath(shutil.which(python) or python) == os.path.realpath(sys.executable):
        return probe.gather(timeout=probe_timeout(timeout), budget=timeout * 0.9, head_mpirun=head_mpirun)
    exe = shutil.which(python)
    if not exe:
        raise UsageError(f"--python {python!r} is not an executable here", hint="give the python the ranks run")
    argv = [exe, "-", "--timeout", f"{probe_timeout(timeout):g}", "--budget", f"{timeout * 0.9:g}"] + \
        (["--head-mpirun", head_mpirun] if head_mpirun else [])
    try:
        r = subprocess.run(argv, input=PROBE_SOURCE, capture_output=True, timeout=timeout + 5)
    except subprocess.TimeoutExpired:
        raise UsageError(f"the probe under {python} did not answer in {timeout:g}s")
    facts = parse_output(r.stdout.decode(errors="replace"))
    if not facts:
        tail = (r.stderr.decode(errors="replace").strip().splitlines() or [f"exit {r.returncode}"])[-1]
        raise UsageError(f"the probe does not run under {python}: {tail[:200]}",
                         hint="the ranks' python must be Python 3.6 or newer")
    return facts


def comm_test(args, hosts, facts, timeout) -> dict:
    """A real torch.distributed all_reduce + barrier, one rank per node, launched over SSH."""
    from clusterdoc import remote

    alive = [h for h in hosts if facts.get(h.host) and (facts[h.host].get("torch") or None)]
    if len(alive) < 1:
        return {"error": "no node has torch"}
    ranks = {facts[h.host]["hostname"]: i for i, h in enumerate(alive)}
    port = 29500 + (os.getpid() % 400)
    argv = ["python3", "-", json.dumps(ranks), alive[0].host, str(port), f"{max(5.0, timeout - 5):g}"]
    opts = remote.SSHOptions.from_args(args)
    opts.timeout = timeout
    res = remote.run_many(alive, " ".join(shlex.quote(a) for a in argv), opts, stdin=comm.RANK_SCRIPT.encode(),
                          fanout=max(len(alive), 1))
    return {"world": len(alive), "master": f"{alive[0].host}:{port}",
            "ranks": {h.host: comm.parse_rank_output(res[h.host].status, res[h.host].stdout, res[h.host].stderr,
                                                     res[h.host].message)
                      for h in alive}}


# --- main -----------------------------------------------------------------------------------------

def judge(nodes, conns, facts, checks, args, head, mpirun_result, comm_result) -> list[dict]:
    answered = {n: f for n, f in facts.items() if f}
    needed = arch.needed_arch_list(answered)
    findings = []
    for n in nodes:
        f = facts.get(n)
        if "ssh" in checks:
            findings += ssh.check(n, conns[n], f)
        if not f:
            continue
        findings += malformed(n, f, checks)
        if "mesh" in checks and conns[n]["status"] != "local":
            findings += _judged(n, "mesh", ssh.check_mesh, n, f)
        if "mpi" in checks:
            findings += _judged(n, "mpi", mpi.check, n, f, head)
        if "kernel" in checks:
            findings += _judged(n, "kernel", kernel.check, n, f)
        if "cuda" in checks:
            findings += _judged(n, "cuda", cuda.check, n, f)
        if "arch" in checks:
            findings += _judged(n, "arch", arch.check, n, f, getattr(args, "arch_list", None), needed)
    if "mpi" in checks and mpirun_result is not None:
        findings += mpi.check_run({n: answered[n].get("hostname") for n in nodes if n in answered}, mpirun_result)
    if "consistency" in checks and len(answered) > 1:
        findings += consistency.check(answered, compress=report.hostlist)
    if "comm" in checks and comm_result is not None:
        findings += comm.check(comm_result, list(answered))
    return findings


def _judged(node: str, check: str, rule, *args) -> list[dict]:
    """One node's rule; facts a node sent that still trip the rule become a finding, not a traceback."""
    try:
        return rule(*args)
    except Exception as err:
        return [finding(node, check, FAIL, f"the node's facts could not be judged ({type(err).__name__}: "
                        f"{printable(err, 200)}): it sent values of an unexpected form",
                        "run `python3 - < clusterdoc/probe.py` on the node and look at what it prints")]


def main(args) -> int:
    start = time.monotonic()
    checks = selected_checks(args)
    if getattr(args, "arch_list", None):
        entries, bad = arch.parse_arch_entries(args.arch_list)
        if bad or not entries:
            raise UsageError(f"--arch-list {args.arch_list!r}: {', '.join(bad) or 'empty'} is not X.Y or X.Y+PTX",
                             hint='give compute capabilities like "8.0;9.0"')
    timeout = getattr(args, "timeout", 20.0)
    if timeout <= 0:
        raise UsageError(f"--timeout must be above 0 seconds, got {timeout}")
    hostfile, nodelists = getattr(args, "hostfile", None), getattr(args, "nodelist", None)
    local = getattr(args, "local", False) or not (hostfile or nodelists)
    if getattr(args, "local", False) and (hostfile or nodelists):
        raise UsageError("--local checks this machine only; drop it or the hostfile/--nodelist")
    head = head_mpirun(args) if "mpi" in checks else None

    mpirun_result = comm_result = None
    if local:
        node = "localhost"
        nodes = [node]
        conns = {node: {"status": "local", "message": "", "elapsed": 0.0, "exit_code": 0}}
        facts = {node: clean_facts(gather_local(getattr(args, "python", None), timeout, (head or {}).get("path")))}
        checks = [c for c in checks if c not in ("mesh", "consistency")]  # one node: nothing to compare
        if "comm" in checks:
            comm_result = comm.run_local(facts[node], timeout)
    else:
        from clusterdoc.hostfile import load_targets

        hosts = load_targets(hostfile, nodelists)
        if not hosts:
            raise UsageError("no hosts to check", where=hostfile or "--nodelist", hint="the hostfile lists no host")
        nodes = [h.host for h in hosts]
        progress = report.Progress(len(hosts))
        # The head's mpirun runs while the probes run. MPICH: its proxies start inside the probes' round
        # trips (HydraManual); other flavours: mpirun's own ssh launcher, in a thread.
        mpi_box, mpi_thread, manual, proxies = {}, None, None, None
        if "mpi" in checks and head and head.get("flavour") == "mpich":
            manual = HydraManual(hosts, head, timeout)
            proxies = manual.proxies()
        elif "mpi" in checks:
            mpi_thread = threading.Thread(target=lambda: mpi_box.update(r=run_mpirun(args, hosts, head, None, timeout)),
                                          daemon=True)
            mpi_thread.start()
        try:
            conns, facts = gather_remote(args, hosts, checks, progress, proxies, (head or {}).get("path"))
        finally:
            progress.close()
        reachable = [h for h in hosts if facts.get(h.host)]
        if manual:
            mpirun_result = manual.finish()
        if mpi_thread:
            mpi_thread.join(timeout + 5)
            mpirun_result = mpi_box.get("r", {"error": "mpirun did not return"})
            if len(reachable) < len(hosts) and reachable and not _all_answered(mpirun_result, reachable, facts):
                # One dead node aborts the whole mpirun: judge the others by a run without it.
                mpirun_result = run_mpirun(args, reachable, head, None, timeout)
        if mpirun_result is not None and reachable:
            mpi4py_python = _mpi4py_python(facts, head)
            if mpi4py_python and not mpirun_result.get("error"):
                mpirun_result = run_mpirun(args, reachable, head, mpi4py_python, timeout)
        if "comm" in checks:
            comm_result = comm_test(args, hosts, facts, max(timeout, 30.0))

    findings = judge(nodes, conns, facts, checks, args, head, mpirun_result, comm_result)
    for f in findings:  # messages quote what nodes sent (mpirun's stderr, rank output): escaped for --json too
        f["message"], f["fix"] = printable(f["message"]), printable(f["fix"])
    needed = arch.needed_arch_list({n: f for n, f in facts.items() if f})
    strict = getattr(args, "strict", False)
    elapsed = time.monotonic() - start
    if getattr(args, "json", False):
        status = report.node_status(findings, nodes, checks)
        nodes_json = [{"node": n, "ssh": conns[n], "status": status[n], "facts": facts.get(n)} for n in nodes]
        summ = report.summary(nodes, findings, checks, needed, strict)
        summ["elapsed"] = round(elapsed, 3)
        summ["head_mpirun"] = head
        if mpirun_result is not None:
            summ["mpirun"] = escape_all({k: v for k, v in mpirun_result.items() if k != "stderr"})
        print(report.to_json(nodes_json, findings, summ))
    else:
        print(report.render(nodes, findings, checks, needed, getattr(args, "verbose", 0), elapsed))
    return report.exit_code(findings, strict)


def _all_answered(result: dict, hosts, facts) -> bool:
    names = set(result.get("names") or [])
    return all(h.host in names or facts[h.host].get("hostname") in names for h in hosts)


def _mpi4py_python(facts, head) -> str | None:
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
