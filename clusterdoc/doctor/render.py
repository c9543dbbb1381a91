"""Draw the doctor's result: a nodes x checks table with identical nodes grouped, the problems with
their fixes, the TORCH_CUDA_ARCH_LIST the cluster needs; or the same as JSON. Also the exit code."""

from __future__ import annotations

import re
import sys

from clusterdoc.checks import FAIL, OK, RANK, WARN, Finding, worst
from clusterdoc.untrusted import json_text, printable

MARK = {OK: "ok", WARN: "WARN", FAIL: "FAIL", None: "-"}
NODE = "\0NODE\0"  # stands for the node's name in a merged finding


def _natural(name: str):
    from clusterdoc.hostfile import natural_key

    return natural_key(name)


def hostlist(names) -> str:
    """node1,node2,node3,node7 -> node[1-3,7]: the one folding of the project (hostfile.compress_hostlist)."""
    from clusterdoc.hostfile import compress_hostlist

    return compress_hostlist(names)


def _node_free(f: dict) -> tuple[str, str]:
    """A per-node finding's message and fix with its node's name made a placeholder, so the same failure
    on many nodes ("n5: name does not resolve") merges into one line. A finding about one node that a
    cluster-wide rule made (nodes=[that node]) is per-node too; one naming several nodes stays as it is."""
    if f.get("nodes") and list(f["nodes"]) != [f["node"]]:
        return f["message"], f["fix"]
    name = re.compile(r"(?<![\w.-])" + re.escape(f["node"]) + r"(?![\w.-])")
    return name.sub("\0NODE\0", f["message"]), name.sub("\0NODE\0", f["fix"] or "")


def problems(findings, verbose=0) -> dict:
    """{(check, status, message, fix): nodes}: identical findings merged across nodes; one entry is one
    problem, however many nodes it concerns."""
    merged: dict = {}
    for f in findings:
        if f["status"] == OK and not verbose:
            continue
        message, fix = _node_free(f)
        nodes = merged.setdefault((f["check"], f["status"], message, fix), [])
        nodes.extend(n for n in (f.get("nodes") or [f["node"]]) if n not in nodes)
    return merged


def _counts(findings) -> dict:
    merged = problems(findings)
    return {s: sum(1 for key in merged if key[1] == s) for s in (WARN, FAIL)}


def node_status(findings, nodes, checks) -> dict:
    """{node: {check: worst status or None}}; cluster-wide findings count for every node they name."""
    table: dict[str, dict[str, list[Finding]]] = {n: {c: [] for c in checks} for n in nodes}
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
        "nodes_ok": counts[OK],
        "nodes_warn": counts[WARN],
        "nodes_fail": counts[FAIL],
        "findings": {s: sum(1 for f in findings if f["status"] == s) for s in (OK, WARN, FAIL)},
        "problems": _counts(findings),  # identical findings on several nodes count once
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
    return json_text({"nodes": nodes_json, "findings": findings, "summary": summ}, indent=2, sort_keys=False)


def render(
    nodes, findings, checks, needed_arch_list, verbose=0, elapsed=None, transport="ssh", not_applicable=()
) -> str:
    from tabulate import tabulate  # only the text report needs it

    status = node_status(findings, nodes, checks)
    # Group nodes whose whole row is identical (clush -b / dshbak -c style).
    groups: dict[tuple, list[str]] = {}
    for n in nodes:
        groups.setdefault(tuple(status[n][c] for c in checks), []).append(n)
    rows = sorted(
        groups.items(), key=lambda kv: (-max((RANK.get(s, -1) for s in kv[0]), default=-1), _natural(kv[1][0]))
    )
    table = [[printable(hostlist(ns)), len(ns)] + [MARK[s] for s in key] for key, ns in rows]
    lines = [tabulate(table, headers=["nodes", "#"] + list(checks), tablefmt="simple")]

    # Problems, identical ones merged across nodes.
    merged = problems(findings, verbose)
    order = sorted(
        merged.items(),
        key=lambda kv: (-RANK[kv[0][1]], checks.index(kv[0][0]) if kv[0][0] in checks else 99, _natural(kv[1][0])),
    )
    if order:
        lines.append("")
        for (check, st, message, fix), ns in order:
            # messages carry what nodes sent: escaped again here, whatever the check did
            names = hostlist(ns)
            lines.append(f"[{MARK[st]}] {check} {printable(names)}: {printable(message.replace(NODE, names))}")
            if fix and st != OK:
                lines.append(f"    fix: {printable(fix.replace(NODE, names))}")
    crashed = [f for f in findings if f.get("traceback")]
    if crashed and verbose:
        for f in crashed:
            lines += ["", f"check {f['check']} on {printable(f['node'])} crashed:"]
            lines += ["    " + line for line in f["traceback"].splitlines()]
    elif crashed:
        lines += ["", "(a check crashed: -v shows its traceback)"]
    lines.append("")
    lines.append(
        f"TORCH_CUDA_ARCH_LIST this cluster needs: {needed_arch_list}"
        if needed_arch_list
        else "TORCH_CUDA_ARCH_LIST this cluster needs: (no GPU found on any node)"
    )
    took = f" in {elapsed:.1f}s" if elapsed is not None else ""
    how = " through srun (no SSH)" if transport == "srun" else ""
    lines.append(
        f"{len(nodes)} node(s) checked{how}{took}: {_tally(merged, FAIL, 'problem')}, {_tally(merged, WARN, 'warning')}"
    )
    if not_applicable:
        lines.append(
            f"not applicable through {transport}: {', '.join(not_applicable)} (they need SSH between the nodes or "
            "from here: node-to-node logins for mpirun, the head's port plan)"
        )
    return "\n".join(lines)


def _tally(merged: dict, status: str, word: str) -> str:
    """'2 problem(s) on 5 node(s)': each merged line once, with the nodes it concerns."""
    keys = [k for k in merged if k[1] == status]
    nodes = {n for k in keys for n in merged[k]}
    return f"{len(keys)} {word}(s)" + (f" on {len(nodes)} node(s)" if keys else "")


class Progress:
    """'probed 12/64 (1 failed)' on stderr, rewritten in place; silent when stderr is not a terminal."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = total > 0 and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.total, self.done, self.failed = total, 0, 0

    def update(self, failed: bool = False):
        self.done += 1
        self.failed += bool(failed)
        self.note()

    def note(self, doing: str = ""):
        """The count, and what the check is doing after the probes (so a wait does not look like a hang)."""
        if self.enabled:
            extra = f" ({self.failed} unreachable)" if self.failed else ""
            doing = f"; {doing}" if doing else ""
            self.stream.write(f"\r\033[Kclusterdoc check: {self.done}/{self.total} nodes answered{extra}{doing}  ")
            self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
