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
MAX_OUTPUT = 64 << 20


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
    if prefix:
        probe += ["--wrapped", shlex.join(prefix)]
    return argv + list(prefix or []) + probe


def parse(stdout: str) -> dict[str, dict | None]:
    """{Slurm node name: facts | None (output incomplete)} from srun --label's lines of every task."""
    tasks: dict[str, dict] = {}
    for line in stdout.splitlines():
        label, sep, rest = line.partition(": ")
        if not sep or not rest.startswith(MARK + " ") or not label.strip().isdigit():
            continue
        t = tasks.setdefault(label.strip(), {"node": None, "data": [], "end": None})
        kind, _, value = rest[len(MARK) + 1 :].partition(" ")
        if kind == "node":
            t["node"] = value.strip()
        elif kind == "data":
            t["data"].append(value)
        elif kind == "end" and value.strip().isdigit():
            t["end"] = int(value)
    out: dict[str, dict | None] = {}
    for t in tasks.values():
        name = t["node"]
        if not name or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,252}", name):
            continue
        text = "".join(t["data"])
        out[name] = parse_output(text) if t["end"] == len(text) else None
    return out


def gather(
    timeout: float,
    nodes: list[str] | None = None,
    count: int | None = None,
    partition: str | None = None,
    python: str | None = None,
    env: dict | None = None,
    srun_options: list[str] | None = None,
    prefix: list[str] | None = None,
) -> tuple[list[str], dict, dict]:
    """(nodes in order, {node: conn}, {node: facts | None}) from one srun step: the same probe and facts as over
    SSH, every node's conn says transport srun. A node that gave no facts gets srun's own words."""
    argv = srun_argv(timeout, nodes, count, partition, python, env, srun_options, prefix)
    sent = time.time()
    try:
        # the step's own limit: srun waits for a node that hangs; the probe answers within its budget
        r = subprocess.run(argv, capture_output=True, timeout=timeout * 2 + 30)
        stdout, stderr, code = r.stdout[:MAX_OUTPUT].decode("utf-8", "replace"), r.stderr, r.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = (exc.stdout or b"")[:MAX_OUTPUT].decode("utf-8", "replace")
        stderr, code = (exc.stderr or b"") + b"\nsrun did not return in time (killed)", None
    except OSError as exc:
        stdout, stderr, code = "", str(exc).encode(), None
    received = time.time()
    facts = parse(stdout)
    why = printable((stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1], 300)
    names = list(nodes or []) or sorted(facts, key=_natural)
    if not names:
        names = [f"srun-{i}" for i in range(count or 1)]  # nothing came back: say so, per node asked
    conns, out = {}, {}
    for n in names:
        f = facts.get(n)
        if f and isinstance(f.get("clock"), dict):
            f["clock"]["head_sent"], f["clock"]["head_received"] = sent, received
        ok = f is not None
        conns[n] = {
            "status": "ok" if ok else "error",
            "message": "" if ok else printable(f"srun (exit {code}): {why}", MAX_TEXT),
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
