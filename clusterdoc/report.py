"""Show the doctor's result: a nodes x checks table with identical nodes grouped, the problems with
their fixes, the TORCH_CUDA_ARCH_LIST the cluster needs; or the same as JSON. Also the exit code."""

from __future__ import annotations

import json
import re
import sys

from clusterdoc.checks import FAIL, OK, RANK, WARN, worst
from clusterdoc.untrusted import printable

MARK = {OK: "ok", WARN: "WARN", FAIL: "FAIL", None: "-"}


def _natural(name: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def hostlist(names) -> str:
    """node1,node2,node3,node7 -> node[1-3,7] (sorted naturally first, like `dshbak -c`)."""
    from clusterdoc.hostfile import compress_hostlist

    return compress_hostlist(sorted(set(names), key=_natural))


def node_status(findings, nodes, checks) -> dict:
    """{node: {check: worst status or None}}; cluster-wide findings count for every node they name."""
    table = {n: {c: [] for c in checks} for n in nodes}
    for f in findings:
        for n in f.get("nodes") or [f["node"]]:
            if n in table and f["check"] in table[n]:
                table[n][f["check"]].append(f)
    return {n: {c: worst(fs) for c, fs in row.items()} for n, row in table.items()}


def summary(nodes, findings, checks, needed_arch_list, strict=False) -> dict:
    status = node_status(findings, nodes, checks)
    per_node = {n: worst([{"status": s} for s in row.values() if s]) for n, row in status.items()}
    counts = {s: sum(1 for v in per_node.values() if v == s) for s in (OK, WARN, FAIL)}
    return {
        "nodes": len(nodes),
        "nodes_ok": counts[OK], "nodes_warn": counts[WARN], "nodes_fail": counts[FAIL],
        "findings": {s: sum(1 for f in findings if f["status"] == s) for s in (OK, WARN, FAIL)},
        "checks": list(checks),
        "needed_arch_list": needed_arch_list,
        "exit_code": exit_code(findings, strict),
    }


def exit_code(findings, strict=False) -> int:
    w = worst(findings)
    if w == FAIL or (strict and w == WARN):
        return 1
    return 0


def to_json(nodes_json, findings, summ) -> str:
    return json.dumps({"nodes": nodes_json, "findings": findings, "summary": summ}, indent=2, sort_keys=False)


def render(nodes, findings, checks, needed_arch_list, verbose=0, elapsed=None) -> str:
    from tabulate import tabulate  # only the text report needs it

    status = node_status(findings, nodes, checks)
    # Group nodes whose whole row is identical (clush -b / dshbak -c style).
    groups = {}
    for n in nodes:
        groups.setdefault(tuple(status[n][c] for c in checks), []).append(n)
    rows = sorted(groups.items(), key=lambda kv: (-max((RANK.get(s, -1) for s in kv[0]), default=-1), _natural(kv[1][0])))
    table = [[printable(hostlist(ns)), len(ns)] + [MARK[s] for s in key] for key, ns in rows]
    lines = [tabulate(table, headers=["nodes", "#"] + list(checks), tablefmt="simple")]

    # Problems, identical ones merged across nodes.
    problems = {}
    for f in findings:
        if f["status"] == OK and not verbose:
            continue
        key = (f["check"], f["status"], f["message"], f["fix"])
        problems.setdefault(key, []).extend(f.get("nodes") or [f["node"]])
    order = sorted(problems.items(), key=lambda kv: (-RANK[kv[0][1]], checks.index(kv[0][0]) if kv[0][0] in checks else 99,
                                                     _natural(kv[1][0])))
    if order:
        lines.append("")
        for (check, st, message, fix), ns in order:
            # messages carry what nodes sent: escaped again here, whatever the check did
            lines.append(f"[{MARK[st]}] {check} {printable(hostlist(ns))}: {printable(message)}")
            if fix and st != OK:
                lines.append(f"    fix: {printable(fix)}")
    lines.append("")
    lines.append(f"TORCH_CUDA_ARCH_LIST this cluster needs: {needed_arch_list}" if needed_arch_list
                 else "TORCH_CUDA_ARCH_LIST this cluster needs: (no GPU found on any node)")
    n_fail = sum(1 for f in findings if f["status"] == FAIL)
    n_warn = sum(1 for f in findings if f["status"] == WARN)
    took = f" in {elapsed:.1f}s" if elapsed is not None else ""
    lines.append(f"{len(nodes)} node(s) checked{took}: {n_fail} problem(s), {n_warn} warning(s)")
    return "\n".join(lines)


class Progress:
    """'probed 12/64 (1 failed)' on stderr, rewritten in place; silent when stderr is not a terminal."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = total > 0 and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.total, self.done, self.failed = total, 0, 0

    def update(self, failed: bool = False):
        self.done += 1
        self.failed += bool(failed)
        if self.enabled:
            extra = f" ({self.failed} unreachable)" if self.failed else ""
            self.stream.write(f"\rclusterdoc check: {self.done}/{self.total} nodes answered{extra}  ")
            self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()
