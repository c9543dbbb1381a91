"""mpi: the MPI flavour/version on each node against the head's, and an mpirun across all nodes."""

from __future__ import annotations

from collections import Counter

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check, Context

CHECK = "mpi"


def _label(m: dict | None) -> str:
    if not m:
        return "none"
    flavour = m.get("flavour")
    name = {"mpich": "MPICH", "openmpi": "Open MPI"}.get(flavour or "", flavour)
    return f"{name} {m.get('version') or '?'}"


def check(node: str, facts: dict, head: dict | None) -> list[Finding]:
    """Per node: its mpirun and mpi4py against the head's mpirun (`head`: {path, flavour, version})."""
    out = probe_errors(node, facts, CHECK)
    mpi = facts.get("mpi") or {}
    if facts.get("probe") == "shell":
        return out
    # What matters is the head's MPI on this node (its proxies run here); else the node's own mpirun.
    mine = mpi.get("head_mpirun") or mpi.get("mpirun")
    if mine and mine.get("missing"):
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"the head's mpirun {mine['path']} ({_label(head)}) is not on this node",
                "install the same MPI (flavour and version) on every node, at the same path",
            )
        )
    elif mine and head and (mine.get("flavour"), mine.get("version")) != (head.get("flavour"), head.get("version")):
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"mpirun here is {_label(mine)} ({mine.get('path')}), the head's is "
                f"{_label(head)}: ranks may fail to start or talk",
                "install the same MPI (flavour and version) on every node",
            )
        )
    elif mine:
        own = mpi.get("mpirun")
        extra = (
            f"; first on PATH: {_label(own)} ({own.get('path')})" if own and own.get("path") != mine.get("path") else ""
        )
        out.append(finding(node, CHECK, OK, f"{_label(mine)} ({mine.get('path')}){extra}"))
    m4 = mpi.get("mpi4py")
    if m4:
        lib = m4.get("library") or ""
        if m4.get("error"):
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"mpi4py {m4.get('version') or ''} cannot load its MPI: {m4['error']}",
                    "install mpi4py against this node's MPI (pip install mpi4py mpich, or "
                    "MPICC=mpicc pip install --no-binary mpi4py mpi4py)",
                )
            )
        elif (
            head
            and head.get("flavour") == "mpich"
            and "MPICH" not in lib
            and "HYDRA" not in lib.upper()
            or head
            and head.get("flavour") == "openmpi"
            and "Open MPI" not in lib
        ):
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"mpi4py {m4.get('version')} is bound to '{lib}' but mpirun is "
                    f"{_label(head)}: ranks would fail in MPI_Init or each be "
                    "'rank 0 of size 1'",
                    _mpi4py_fix(lib),
                )
            )
        else:
            out.append(finding(node, CHECK, OK, f"mpi4py {m4.get('version')} ({lib})"))
    return out


def _mpi4py_fix(lib: str) -> str:
    """The easy way out first: the mpirun of mpi4py's own MPI, by name (Debian installs both side by side)."""
    own = "mpich" if "MPICH" in lib or "HYDRA" in lib.upper() else "openmpi" if "Open MPI" in lib else None
    rebuild = "rebuild mpi4py against the MPI that mpirun belongs to"
    return f"use the mpirun of mpi4py's MPI: --mpirun mpirun.{own} (or {rebuild})" if own else rebuild


def stderr_reason(text: str) -> str:
    """The line of mpirun's stderr that says why: ssh's own complaint if any; else the headline of Open MPI's
    first dashed banner (its last line is a banner's dashes, or the tail of a paragraph); else the last line."""
    lines = [line.strip() for line in text.splitlines()]
    for line in lines:
        if line.startswith("ssh:") or "Permission denied" in line or "Host key verification failed" in line:
            return line
    for before, line in zip(lines, lines[1:]):
        if before and set(before) == {"-"} and line and set(line) != {"-"}:
            return line
    return next((line for line in reversed(lines) if line and set(line) != {"-"}), "")


def check_run(hostnames: dict, run: dict | None) -> list[Finding]:
    """Judge the head's `mpirun ... hostname` (or mpi4py test) against the hostnames the probes saw.

    `hostnames`: {node: hostname from its probe}; `run`: {command, exit_code, timed_out, names, stderr,
    allreduce (expected sum or None), sums [...]} as doctor.run_mpirun gives it."""
    if run is None:
        return []
    if run.get("error"):
        return [
            finding(n, CHECK, FAIL, f"mpirun could not run: {run['error']}", "install MPI on the head or pass --mpirun")
            for n in hostnames
        ]
    seen = list(run.get("names") or [])
    out = []
    cmd = run.get("user_command") or run.get("command", "mpirun")
    claims = Counter(hostnames.values())
    for node, hostname in hostnames.items():
        if hostname and claims[hostname] > 1 and seen.count(hostname) < claims[hostname]:
            # nodes sharing a host name (ssh.check_names says so): some answered, which ones cannot be told
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"{seen.count(hostname)} rank(s) answered mpirun as {hostname}, which {claims[hostname]} nodes "
                    f"call themselves: whether one started on {node} cannot be told",
                    "give each node its own host name, then check again",
                )
            )
        elif hostname in seen or node in seen:
            msg = "answered mpirun" + (" (mpi4py allreduce ok)" if run.get("allreduce_ok") else "")
            out.append(finding(node, CHECK, OK, msg))
        else:
            out.append(_no_rank(node, hostname, run, cmd))
    if run.get("allreduce_ok") is False and not run.get("timed_out"):
        out.append(
            finding(
                ",".join(hostnames),
                CHECK,
                FAIL,
                f"mpi4py allreduce gave {run.get('sums')}, expected {run.get('allreduce')}",
                "check that mpi4py on the nodes uses the MPI of this mpirun",
                nodes=list(hostnames),
            )
        )
    return out


def _no_rank(node: str, hostname: str | None, run: dict, cmd: str) -> Finding:
    why = f"timed out after {run.get('timeout')}s" if run.get("timed_out") else f"exited {run.get('exit_code')}"
    reason = stderr_reason(run.get("stderr") or "")
    return finding(
        node,
        CHECK,
        FAIL,
        f"no rank started on {node} ({hostname}): mpirun {why}" + (f": {reason[:200]}" if reason else ""),
        f"run by hand: {cmd}; check passwordless ssh from the head to {node} and that the same MPI is installed there",
    )


def _run(c: Context) -> list[Finding]:
    if c.mpirun is None:
        return []
    return check_run({n: c.answered[n].get("hostname") for n in c.nodes if n in c.answered}, c.mpirun)


CHECKS = (
    Check(
        "mpi",
        60,
        "mpirun and mpi4py agree, and a real mpirun across the nodes",
        reads=("mpi",),
        probe_errors={"mpirun": FAIL, "mpi4py": WARN},
        node=lambda c: check(c.node, c.facts, c.head_mpirun),
        cluster=_run,
        cluster_order=50,
    ),
)
