"""files (submit's preflight): the job's --python and script exist on every node with the same content (sha256)."""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, Finding, finding
from clusterdoc.checks.spec import Check

CHECK = "files"


def _hostlist(names) -> str:
    from clusterdoc.hostfile import compress_hostlist

    return compress_hostlist(list(names))


def check(all_facts: dict[str, dict | None], nodes: list[str]) -> list[Finding]:
    out = []
    reported = {n: (all_facts.get(n) or {}).get("files") for n in nodes}
    have: dict[str, dict] = {n: f for n, f in reported.items() if isinstance(f, dict)}
    paths = sorted({p for f in have.values() for p in f})
    bad: set[str] = set()
    for path in paths:
        missing: dict[str, list[str]] = {}
        hashes: dict[str, list[str]] = {}
        for n, f in have.items():
            e = f.get(path) or {"error": "not reported"}
            if e.get("sha256"):
                hashes.setdefault(e["sha256"], []).append(n)
            else:
                missing.setdefault(e.get("error") or "unreadable", []).append(n)
        for err, who in sorted(missing.items()):
            bad.update(who)
            out.append(
                finding(
                    _hostlist(who),
                    CHECK,
                    FAIL,
                    f"{path} is not usable on {_hostlist(who)}: {err}",
                    f"copy it to {_hostlist(who)} at the same path (or put the job on a shared file system)",
                    nodes=who,
                )
            )
        if len(hashes) > 1:
            ordered = sorted(hashes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            odd = (
                [n for _, ns in ordered[1:] for n in ns]
                if len(ordered[0][1]) > len(ordered[1][1])
                else [n for _, ns in ordered for n in ns]
            )
            bad.update(odd)
            desc = "; ".join(f"sha256 {h[:12]} on {_hostlist(ns)}" for h, ns in ordered)
            out.append(
                finding(
                    _hostlist(odd),
                    CHECK,
                    FAIL,
                    f"{path} differs between nodes: {desc}",
                    f"copy the same {path} to every node (rsync -a), or run from a shared file system",
                    nodes=odd,
                )
            )
    for n in have:
        if n not in bad:
            out.append(finding(n, CHECK, OK, f"{len(paths)} file(s) the same as on the other nodes"))
    return out


CHECKS = (
    Check(
        "files",
        140,
        "the job's files are the same on every node",
        reads=("files",),
        probe_errors={"files": FAIL},
        default=False,
        cluster=lambda c: check(dict(c.all_facts), c.nodes),
        cluster_order=40,
    ),
)
