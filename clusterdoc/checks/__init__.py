"""Checks: small pure functions from node facts (see clusterdoc/probe/) to findings.

Like `flutter doctor`'s validators, each check gives every node one result (its worst status)
made of several messages; here each message is a finding:
    {"node": str, "check": str, "status": "ok"|"warn"|"fail", "message": str, "fix": str}
Cluster-wide findings (consistency, mesh pairs) name a hostlist in "node" and list the nodes
they concern in "nodes". No check runs commands: they only compare facts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # typing.NotRequired is Python 3.11; at run time a TypedDict's keys are not enforced anyway
    from typing_extensions import NotRequired

OK, WARN, FAIL = "ok", "warn", "fail"
RANK = {OK: 0, WARN: 1, FAIL: 2}

# Column order of the report; "mesh" (node-to-node ssh) lives in checks/ssh.py.
ALL_CHECKS = (
    "ssh",
    "mesh",
    "net",
    "nccl",
    "port",
    "mpi",
    "kernel",
    "cuda",
    "arch",
    "gpu",
    "fabric",
    "resources",
    "clock",
    "files",
    "consistency",
    "comm",
    "perf",
)

# Which check a probe error (facts["errors"][].probe) belongs to, and how bad it is.
PROBE_ERROR_CHECK = {
    "kernel": ("kernel", FAIL),
    "gpus": ("arch", FAIL),
    "gpuhealth": ("gpu", FAIL),
    "nvcc": ("cuda", FAIL),
    "gcc": ("cuda", WARN),
    "torch": ("cuda", FAIL),
    "deepspeed": ("arch", WARN),
    "mpirun": ("mpi", FAIL),
    "mpi4py": ("mpi", WARN),
    "libaio": ("arch", WARN),
    "mesh": ("mesh", FAIL),
    "python3": ("ssh", WARN),
    "net": ("net", WARN),
    "nccl": ("nccl", WARN),
    "port": ("port", WARN),
    "resources": ("resources", WARN),
    "clock": ("clock", WARN),
    "files": ("files", FAIL),
}


class Finding(TypedDict):
    """One message of one check about one node (or, with `nodes`, about several: then `node` is their
    hostlist). The JSON report's "findings" are these, as they are."""

    node: str
    check: str
    status: str  # ok | warn | fail
    message: str
    fix: str  # what to do; "" for ok
    nodes: NotRequired[list[str]]
    traceback: NotRequired[str]  # only when the check itself crashed


def finding(node: str, check: str, status: str, message: str, fix: str = "", nodes=None) -> Finding:
    f: Finding = {"node": node, "check": check, "status": status, "message": message, "fix": fix}
    if nodes is not None:
        f["nodes"] = list(nodes)
    return f


def worst(findings) -> str | None:
    statuses = [f["status"] for f in findings]
    return max(statuses, key=RANK.__getitem__) if statuses else None


def probe_errors(node: str, facts: dict, check: str) -> list[Finding]:
    """The node's probe errors that belong to `check`, as findings."""
    out = []
    for err in facts.get("errors") or []:
        name = err.get("probe", "")
        target, status = PROBE_ERROR_CHECK.get(name.split()[0], ("cuda", WARN))
        if target == check:
            out.append(
                finding(
                    node,
                    check,
                    status,
                    f"probe {name}: {err.get('message')}",
                    "run the command by hand on the node to see why it fails or hangs",
                )
            )
    return out


MALFORMED_LABELS = {
    "driver": "driver version",
    "gpus": "GPU list",
    "gpus[*]": "GPU entry",
    "gpus[*].driver": "GPU driver version",
    "gpus[*].name": "GPU name",
    "gpus[*].capability": "GPU compute capability",
    "kernel.release": "kernel release",
    "hostname": "host name",
}


def malformed(node: str, facts: dict, checks) -> list[Finding]:
    """A FAIL per value the node sent in a form it cannot have (see clusterdoc/untrusted.py): the value
    was dropped before judging, so the check it belongs to cannot be ok. Filed under that check only: a
    check the run skips (--skip mpi) judges nothing of the node, so its malformed values are not reported."""
    out, seen = [], set()
    for m in facts.get("malformed") or []:
        check = m["check"]
        if check not in checks:
            continue
        field = re.sub(r"\[\d+\]", "[*]", m["field"])  # gpus[0].name .. gpus[7].name: one finding
        if (check, field, m["value"]) in seen:
            continue
        seen.add((check, field, m["value"]))
        out.append(
            finding(
                node,
                check,
                FAIL,
                f"the node sent a malformed {MALFORMED_LABELS.get(field, field)}: "
                f"{m['value']} (not trusted, not judged)",
                "look at what produces it on the node (for GPUs: nvidia-smi --query-gpu=name,"
                "driver_version --format=csv | cat -v): a broken install or a tampered tool",
            )
        )
    return out
