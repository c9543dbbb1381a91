"""Checks: small pure functions from node facts (see clusterdoc/probe/) to findings.

Like `flutter doctor`'s validators, each check gives every node one result (its worst status)
made of several messages; here each message is a finding:
    {"node": str, "check": str, "status": "ok"|"warn"|"fail", "message": str, "fix": str}
Cluster-wide findings (consistency, mesh pairs) name a hostlist in "node" and list the nodes
they concern in "nodes". No check runs commands: they only compare facts.

Each module declares its checks once, `CHECKS = (Check(...),)` (spec.py: name, column, facts read, default,
where it can run, its probe errors, its rules taking one `Context`); registry.py collects them, and
doctor/rules.judge, the options, the gather step, --checks and submit's preflight read that registry.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # typing.NotRequired is Python 3.11; at run time a TypedDict's keys are not enforced anyway
    from typing_extensions import NotRequired

OK, WARN, FAIL = "ok", "warn", "fail"
RANK = {OK: 0, WARN: 1, FAIL: 2}

# ALL_CHECKS (the report's columns, in order), PROBE_ERROR_CHECK ({probe: (check, status)}: which check a
# probe error, facts["errors"][].probe, belongs to, and how bad it is) and MALFORMED_LABELS come from the
# registry (checks/registry.py: what each module declares in CHECKS), read when first asked for.
_DERIVED = {"ALL_CHECKS": "names", "PROBE_ERROR_CHECK": "probe_error_check", "MALFORMED_LABELS": "malformed_labels"}


def __getattr__(name: str):
    if name in _DERIVED:
        from clusterdoc.checks import registry

        return getattr(registry, _DERIVED[name])()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    """The node's probe errors that belong to `check`, as findings (a probe no check claims: cuda's WARN)."""
    from clusterdoc.checks import registry

    out = []
    for err in facts.get("errors") or []:
        name = err.get("probe", "")
        target, status = registry.probe_error_check().get(name.split()[0], ("cuda", WARN))
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


def malformed(node: str, facts: dict, checks) -> list[Finding]:
    """A FAIL per value the node sent in a form it cannot have (see clusterdoc/untrusted.py): the value
    was dropped before judging, so the check it belongs to cannot be ok. Filed under that check only: a
    check the run skips (--skip mpi) judges nothing of the node, so its malformed values are not reported."""
    from clusterdoc.checks import registry

    labels = registry.malformed_labels()
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
                f"the node sent a malformed {labels.get(field, field)}: {m['value']} (not trusted, not judged)",
                "look at what produces it on the node (for GPUs: nvidia-smi --query-gpu=name,"
                "driver_version --format=csv | cat -v): a broken install or a tampered tool",
            )
        )
    return out
