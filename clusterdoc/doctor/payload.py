"""What the head sends to a node (the probe, made by clusterdoc/probe/payload.py, and the command that runs it) and
how it reads the answer."""

from __future__ import annotations

import json
import shlex

from clusterdoc import probe
from clusterdoc.probe.payload import (  # noqa: F401 (the doctor's and build-wheel's payload.X)
    MAIN,
    load_source,
    probe_payload,
    probe_source,
)
from clusterdoc.untrusted import clean_facts


def __getattr__(name: str):
    if name == "PROBE_SOURCE":  # the name other modules use
        return probe_source()
    raise AttributeError(name)


def probe_timeout(node_timeout: float) -> float:
    """Per-command limit inside the probe: well under the node's timeout, so a hung command is
    reported by the probe itself (with the other facts) instead of losing the whole node."""
    return max(1.0, min(8.0, node_timeout * 0.35))


def probe_argv(more: dict) -> list[str]:
    """The probe's arguments for probe.gather's keyword arguments peers/env/listen/connect/space/files."""
    argv = ["--peers", ",".join(more["peers"])] if more.get("peers") else []
    for k, v in sorted((more.get("env") or {}).items()):
        argv += ["--env", f"{k}={v}"]
    for port, mode, expect in more.get("listen") or []:
        argv += ["--listen", f"{port}/{mode}/{expect}"]
    if more.get("connect"):
        argv += ["--connect", ",".join(more["connect"])]
    for p in more.get("space") or []:
        argv += ["--space", p]
    for p in more.get("files") or []:
        argv += ["--file", p]
    return argv


def remote_command(
    timeout: float,
    peers: list[str] | None,
    budget: float | None = None,
    head_mpirun: str | None = None,
    python: str | None = None,
    more: list[str] | None = None,
    trust: bool = False,
    wrap: str | None = None,
) -> str:
    """`python` (the job's interpreter; default python3 on PATH) reads the probe from stdin, so its torch and
    packages are what is judged; without it the shell fallback runs (it ignores stdin). `peers`: the nodes it
    really logs in to; `more`: probe_argv's arguments; `trust`: report ssh trust towards the --peers nodes;
    `wrap`: the command prefix the ranks run under (a container: `apptainer exec IMG`), the probe runs under it."""
    python = python or "python3"
    prefix = shlex.split(wrap) if wrap else []
    argv = prefix + [python, "-", "--timeout", f"{timeout:g}"]
    if wrap:
        argv += ["--wrapped", wrap]
    if budget:
        argv += ["--budget", f"{budget:g}"]
    if head_mpirun:
        argv += ["--head-mpirun", head_mpirun]
    argv += more or []
    if trust:  # the node reports what decides ssh to each --peers node (judged from facts, not tried)
        argv += ["--trust"]
    if peers:
        argv += ["--mesh"] + peers
    py = " ".join(shlex.quote(a) for a in argv)
    first = prefix[0] if prefix else python  # wrapped: the python is inside, the wrapper must be here
    run = f"exec {py}"
    if budget:  # ended (with what it started) a little past the head's deadline, even a python that hangs
        run = f"command -v timeout >/dev/null 2>&1 && exec timeout -k 2 {end_after(budget)} {py}; {run}"
    return f"if command -v {shlex.quote(first)} >/dev/null 2>&1; then {run}; else\n{probe.shell_probe(timeout)}\nfi"


def end_after(budget: float) -> int:
    """Seconds after which a node's probe is ended whatever it does: a little past the head's deadline for the
    node (the budget is 75 % of it over SSH, 90 % through srun). MAIN's alarm uses the same."""
    return int(budget * 1.4) + 5


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
            try:  # NaN / Infinity in a field: clean_facts makes that field malformed, the rest is judged
                return clean_facts(json.loads(line))
            except (ValueError, RecursionError):
                return None
    return None
