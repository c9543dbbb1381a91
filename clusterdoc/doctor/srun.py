"""The doctor's Slurm transport: the same probe, one task per node through `srun`, no SSH to the nodes.

Where a user may not SSH to compute nodes (pam_slurm_adopt) the doctor asks Slurm to run the probe: inside an
allocation (salloc/sbatch: SLURM_JOB_ID) on its nodes, or with --partition/--nodes as a step of its own. The
payload travels in the task's argv (zlib + base64, about 28 kB, under Linux's 128 kB per argument), not on stdin:
srun hands stdin to every task or to task 0 depending on version and --input, and a batch step's stdin is
/dev/null. Each task prints its facts in short marked lines (probe.gather.print_chunked: srun --label splits a
line at 1024 bytes), which are put back together per task here. `wrap`: a command prefix (apptainer exec IMAGE,
...) the probe runs under, and srun options (pyxis' --container-image): the job's environment is then the
container's (docs/check.md).
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import shutil
import subprocess
import time
import zlib

from clusterdoc.doctor.payload import parse_output, probe_source, probe_timeout
from clusterdoc.untrusted import MAX_TEXT, printable

MARK = "@@clusterdoc-srun"
BOOT = (
    "import sys,zlib,base64;s=zlib.decompress(base64.b64decode(sys.argv.pop(1)));"
    "exec(compile(s,'clusterdoc-probe','exec'))"
)
MAX_TASK = 4 << 20  # bytes of one task's output read at most (the facts are well under 1 MiB), as over SSH
MAX_LINE = 8192  # srun --label splits a task's lines at 1024 bytes: a longer one is not srun's, dropped
MAX_STDERR = 64 << 10
# each task's first line, before its python starts: the node name slurmd gave the task (SLURMD_NODENAME), not
# whatever the python on the node says; a later "node" line of the same task changes nothing
NAME_FIRST = 'printf "%s node %s\\n" "$0" "${SLURMD_NODENAME:-$(uname -n)}"; exec "$@"'
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,252}")
LABEL = re.compile(rb" {0,8}(\d{1,7}): ")


def in_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID"))


def slurm_answers(timeout: float = 5.0) -> bool:
    """Whether srun is here and the controller answers (sinfo)."""
    if not shutil.which("srun") or not shutil.which("sinfo"):
        return False
    try:
        return subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def payload_arg() -> str:
    return base64.b64encode(zlib.compress(probe_source(), 9)).decode()


def srun_argv(
    timeout: float,
    nodes: list[str] | None = None,
    count: int | None = None,
    partition: str | None = None,
    python: str | None = None,
    env: dict | None = None,
    srun_options: list[str] | None = None,
    prefix: list[str] | None = None,
    more: list[str] | None = None,
) -> list[str]:
    """srun running the probe once on each node: `nodes` by name, else `count` nodes (of the allocation when in
    one: all of them when neither is given)."""
    argv = ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--input=none", "--label", "--quiet"]
    if nodes:
        argv += [f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}", "--nodelist=" + ",".join(nodes)]
    elif count:
        argv += [f"--nodes={count}", f"--ntasks={count}"]
    elif in_allocation():
        n = os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or "1"
        argv += [f"--nodes={n}", f"--ntasks={n}"]
    if partition:
        argv += [f"--partition={partition}"]
    if not in_allocation():  # a step of its own: ask for no more time than the check takes
        argv += [f"--time={max(1, int(timeout * 2 // 60) + 1)}"]
    argv += list(srun_options or [])
    probe = [python or "python3", "-c", BOOT, payload_arg(), "--srun", "--timeout", f"{probe_timeout(timeout):g}"]
    probe += ["--budget", f"{timeout * 0.9:g}"]
    for k, v in sorted((env or {}).items()):
        probe += ["--env", f"{k}={v}"]
    probe += list(more or [])  # the request's other arguments (transports.ProbeRequest.argv)
    if prefix:
        probe += ["--wrapped", shlex.join(prefix)]
    return argv + ["sh", "-c", NAME_FIRST, MARK] + list(prefix or []) + probe


class Tasks:
    """srun --label's output, line by line, bound to the task Slurm labelled it with (never to what the line
    says): each task's node name (its first line, NAME_FIRST), its facts' chunks and end mark; at most MAX_TASK
    bytes of each task are kept (the rest is counted, not stored)."""

    def __init__(self):
        self.tasks: dict[int, dict] = {}
        self._partial = b""
        self._skipping = False  # inside a line longer than MAX_LINE: dropped up to its newline

    def feed(self, chunk: bytes) -> None:
        """Bytes as srun wrote them; only complete lines (split at \\n alone: a \\r is part of a line) count."""
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if self._skipping:
                self._skipping = False
            elif len(line) <= MAX_LINE:
                self.line(line)
        if len(self._partial) > MAX_LINE:
            self._partial, self._skipping = b"", True

    def line(self, line: bytes) -> None:
        m = LABEL.match(line)
        if not m:
            return
        task = int(m.group(1))
        t = self.tasks.get(task)
        if t is None:
            if len(self.tasks) >= 1 << 16:
                return
            t = self.tasks[task] = {"node": None, "data": [], "end": None, "bytes": 0, "lines": 0}
        t["bytes"] += len(line) + 1
        t["lines"] += 1
        if t["bytes"] > MAX_TASK:
            t["data"], t["end"] = [], None
            return
        rest = line[m.end() :].rstrip(b"\r").decode("utf-8", "replace")
        if not rest.startswith(MARK + " "):
            return
        kind, _, value = rest[len(MARK) + 1 :].partition(" ")
        if kind == "node":
            if t["lines"] == 1:  # the task's first line only: NAME_FIRST's, printed before the python runs
                t["node"] = value.strip()
        elif kind == "data":
            t["data"].append(value)
        elif kind == "end" and value.strip().isdigit() and len(value.strip()) < 10:
            t["end"] = int(value)

    def too_large(self, task: int) -> bool:
        return self.tasks.get(task, {}).get("bytes", 0) > MAX_TASK

    def ended(self, task: int) -> bool:
        t = self.tasks.get(task)
        return t is not None and (t["end"] is not None or t["bytes"] > MAX_TASK)


def answers(tasks: Tasks) -> tuple[dict[str, dict | None], dict[str, str]]:
    """({node: facts | None}, {node: why it has none}) from every task: each task's facts go to the node Slurm
    ran it on. Two tasks on one node name (a name slurmd would never give twice) are credited to neither."""
    by_name: dict[str, list[int]] = {}
    for task, t in tasks.tasks.items():
        if t["node"] and NAME.fullmatch(t["node"]):
            by_name.setdefault(t["node"], []).append(task)
    facts: dict[str, dict | None] = {}
    why: dict[str, str] = {}
    for name, ids in by_name.items():
        t = tasks.tasks[ids[0]]
        if len(ids) > 1:
            facts[name], why[name] = None, f"srun tasks {', '.join(map(str, sorted(ids)))} all say they ran here"
        elif tasks.too_large(ids[0]):
            facts[name], why[name] = None, f"the node printed more than {MAX_TASK >> 20} MiB: stopped reading it"
        else:
            text = "".join(t["data"])
            facts[name] = parse_output(text) if t["end"] == len(text) else None
            if facts[name] is None:
                why[name] = (
                    "did not answer: its output ended before the facts did"
                    if t["end"] is None
                    else ("its facts came back incomplete or malformed")
                )
    return facts, why


def parse(stdout: str) -> dict[str, dict | None]:
    """{Slurm node name: facts | None (output incomplete)} from srun --label's lines of every task."""
    tasks = Tasks()
    tasks.feed(stdout.encode("utf-8", "surrogateescape") + b"\n")
    return answers(tasks)[0]


def expected_tasks(nodes: list[str] | None, count: int | None) -> int | None:
    if nodes:
        return len(nodes)
    if count:
        return count
    if in_allocation():
        n = os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or ""
        return int(n) if n.isdigit() and len(n) < 7 else None
    return None


def allocation_nodes() -> list[str]:
    """The allocation's node names as Slurm gave them to this shell (SLURM_JOB_NODELIST), [] if unknown."""
    from clusterdoc.probe.gather import expand_hostlist

    text = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST") or ""
    try:
        names = expand_hostlist(text) if text else []
    except (ValueError, IndexError):
        return []
    return [n for n in names if NAME.fullmatch(n)][: 1 << 16]


def run_srun(argv: list[str], limit: float, expected: int | None) -> tuple[Tasks, bytes, int | None, bool]:
    """srun's output read as it comes, bounded: (tasks, stderr's tail, exit code, killed at `limit` seconds).
    Stops early, killing the step, once every expected task has ended (or overflowed)."""
    import selectors
    import threading

    tasks = Tasks()
    err = bytearray()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    errfd = proc.stderr.fileno() if proc.stderr is not None else -1

    def drain() -> None:
        for chunk in iter(lambda: os.read(errfd, 65536), b""):
            err.extend(chunk)
            del err[:-MAX_STDERR]

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    deadline = time.monotonic() + limit
    killed = False
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                killed = True
                break
            if not sel.select(min(left, 1.0)):
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            tasks.feed(chunk)
            if expected and all(tasks.ended(t) for t in range(expected)):
                break
    code = _stop(proc, 0 if killed else max(0.0, min(10.0, deadline - time.monotonic())))
    reader.join(5)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None and not reader.is_alive():
            pipe.close()
    return tasks, bytes(err), None if killed else code, killed


def _stop(proc: subprocess.Popen, grace: float) -> int:
    """srun's exit code: it may end by itself within `grace` s; else SIGTERM (srun then cancels the step, and Slurm
    stops what still runs on the nodes), then SIGKILL."""
    for sig_wait in (grace, 5.0):
        try:
            return proc.wait(timeout=sig_wait)
        except subprocess.TimeoutExpired:
            if sig_wait is grace:
                proc.terminate()
    proc.kill()
    return proc.wait()


def gather(
    argv: list[str], timeout: float, nodes: list[str] | None = None, count: int | None = None
) -> tuple[list[str], dict, dict]:
    """(nodes in order, {node: conn}, {node: facts | None}) from one srun step (`argv`: srun_argv's for the same
    timeout, nodes and count): the same probe and facts as over SSH, every node's conn says transport srun. A node
    that gave no facts is named with why (no answer, too much output, a name claimed twice) and srun's own last
    words."""
    expected = expected_tasks(nodes, count)
    sent = time.time()
    try:
        # the step's own limit: srun waits for a node that hangs; the probe answers within its budget
        tasks, stderr, code, killed = run_srun(argv, timeout * 2 + 30, expected)
    except OSError as exc:
        tasks, stderr, code, killed = Tasks(), str(exc).encode(), None, False
    if killed:
        stderr += b"\nsrun did not return in time (killed)"
    received = time.time()
    facts, why_not = answers(tasks)
    last = printable((stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1], 300)
    names = list(nodes or []) or allocation_nodes() or sorted(facts, key=_natural)
    names += [n for n in sorted(facts, key=_natural) if n not in names and not nodes]
    answered = {t for t, v in tasks.tasks.items() if v["node"]}
    silent = [t for t in range(expected or 0) if t not in answered]
    if len(names) < (expected or 0):  # tasks that never said where they ran: named by their task number
        names += [f"srun-task-{t}" for t in silent][: (expected or 0) - len(names)]
    if not names:
        names = [f"srun-{i}" for i in range(count or 1)]  # nothing came back: say so, per node asked
    conns, out = {}, {}
    for n in names:
        f = facts.get(n)
        if f and isinstance(f.get("clock"), dict):
            f["clock"]["head_sent"], f["clock"]["head_received"] = sent, received
        ok = f is not None
        reason = why_not.get(n) or "did not answer (no output from a task on it)"
        conns[n] = {
            "status": "ok" if ok else "error",
            "message": "" if ok else printable(f"{reason}; srun (exit {code}): {last}", MAX_TEXT),
            "elapsed": round(received - sent, 3),
            "exit_code": 0 if ok else code,
            "transport": "srun",
        }
        out[n] = f
    return names, conns, out


def _natural(name: str):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


def describe(argv: list[str]) -> str:
    return shlex.join(a if len(a) < 200 else "<probe>" for a in argv)
