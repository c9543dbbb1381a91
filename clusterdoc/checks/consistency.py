"""consistency: every node should run the same software on the same hardware (like `clush --diff`)."""

from __future__ import annotations

from clusterdoc.checks import OK, WARN, Finding, finding
from clusterdoc.checks.spec import Check
from clusterdoc.hostfile import compress_hostlist

CHECK = "consistency"


def _gpu(facts, key):
    vals = sorted({str(g.get(key)) for g in facts.get("gpus") or []})
    return "+".join(vals) if vals else "none"


def _mpirun(facts):
    m = (facts.get("mpi") or {}).get("mpirun")
    return f"{m.get('flavour')} {m.get('version')}" if m else "none"


FIELDS = [  # (label, the facts field it comes from, how to read it from facts)
    ("torch", "torch", lambda f: (f.get("torch") or {}).get("version") or "none"),
    ("torch CUDA", "torch", lambda f: (f.get("torch") or {}).get("cuda") or "none"),
    ("NCCL", "torch", lambda f: (f.get("torch") or {}).get("nccl") or "none"),
    ("Python", "python", lambda f: (f.get("python") or {}).get("version") or "none"),
    ("DeepSpeed", "deepspeed", lambda f: (f.get("deepspeed") or {}).get("version") or "none"),
    ("GPU model", "gpus", lambda f: _gpu(f, "name")),
    ("GPU count", "gpus", lambda f: str(len(f.get("gpus") or []))),
    ("GPU memory MiB", "gpus", lambda f: _gpu(f, "memory_mib")),
    ("driver", "driver", lambda f: f.get("driver") or "none"),
    ("mpirun on PATH", "mpi.mpirun", lambda f: _mpirun(f)),
]


def _malformed(facts: dict, field: str) -> bool:
    """The node sent `field` (or part of it) malformed: it was dropped, so it is unknown, not "none"."""
    return any(m.get("field", "").startswith(field) for m in facts.get("malformed") or [])


NOTES = {
    "GPU model": "the slowest GPU sets the pace of every synchronous step",
    "GPU memory MiB": "the batch must fit the smallest GPU: memory above it sits idle",
    "GPU count": "ranks per node differ: use the same --gpus-per-node everywhere or expect idle GPUs",
}


def _hostlist(names) -> str:
    from clusterdoc.hostfile import compress_hostlist

    return compress_hostlist(names)


def check(all_facts: dict, compress=_hostlist) -> list[Finding]:
    """`all_facts`: {node: facts} of the nodes that answered with python facts. One warning per split field,
    naming the groups; the nodes outside the largest group carry it, or every node when no group is the
    largest (two nodes that disagree have no majority). `compress` turns names into a hostlist."""
    nodes = [n for n, f in all_facts.items() if f and f.get("probe") == "python"]
    out = []
    for label, field, read in FIELDS:
        groups: dict[str, list[str]] = {}
        for n in nodes:
            if not _malformed(all_facts[n], field):  # (that node's own `malformed` finding says it)
                groups.setdefault(read(all_facts[n]), []).append(n)
        if len(groups) < 2:
            continue
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        desc = "; ".join(f"{value} on {compress(ns)}" for value, ns in ordered)
        majority = len(ordered[0][1]) > len(ordered[1][1])
        odd = [n for _, ns in (ordered[1:] if majority else ordered) for n in ns]
        note = NOTES.get(label, "mixed versions across ranks can fail or hang at the first collective")
        fix = f"make {label} the same on every node " + (
            f"(the majority has {ordered[0][0]})" if majority else "(no majority: choose one)"
        )
        out.append(finding(compress(odd), CHECK, WARN, f"{label} differs: {desc} ({note})", fix, nodes=odd))
    warned = {n for f in out for n in f["nodes"]}
    for n in nodes:
        if n not in warned:
            out.append(
                finding(n, CHECK, OK, "same software and GPUs as the other nodes" if len(nodes) > 1 else "single node")
            )
    return out


CHECKS = (
    Check(
        "consistency",
        150,
        "every node runs the same versions",
        local=False,
        allocation=True,
        cluster=lambda c: check(dict(c.answered), compress_hostlist) if len(c.answered) > 1 else [],
        cluster_order=80,
    ),
)
