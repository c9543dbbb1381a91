"""Step 2 of the doctor (judge): facts in, findings out. Pure: no probe, no I/O (a test feeds it a facts file).

Each check of checks/* is called through `_guarded`, and so is what several checks share (the arch list the
cluster needs, the nodes' views of each other): a check that raises becomes one `fail` finding for that node
and check ("check cuda crashed: ..."), as flutter doctor turns a crashing validator into a result; the report
is never lost. The traceback is kept in the finding, shown with -v. The facts were checked against their
schema at the edge (untrusted.clean_facts): a node's value of the wrong type or form is a `malformed` finding
of that node, so one bad node does not reach the rules that compare nodes.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import replace

from clusterdoc.checks import FAIL, Finding, finding, malformed, registry
from clusterdoc.checks.spec import Check, Context
from clusterdoc.doctor import jobenv
from clusterdoc.doctor.facts import Gathered
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.hostfile import compress_hostlist
from clusterdoc.untrusted import printable


def judge(g: Gathered, opts: CheckOptions | None = None) -> list[Finding]:
    """Every registered check of the run (g.checks), in three passes: what checks share, computed once; each
    node's rules in column order (a check declared `without_facts` first, then the node's malformed values,
    then the others); the cluster-wide rules in their `cluster_order`."""
    opts = opts or CheckOptions()
    everyone = compress_hostlist(g.nodes)
    chosen = [c for c in registry.registry() if c.name in g.checks]
    base = Context(
        everyone, {}, {}, g.nodes, everyone, g.facts, g.answered(), g.conns, list(g.checks), opts,
        g.head_mpirun, g.mpirun, g.comm, g.perf,
    )  # fmt: skip
    findings: list[Finding] = []
    shared: dict = {}
    for c in chosen:
        for s in c.prepare:
            box: list = []
            findings.extend(_guarded(everyone, c.name, lambda s=s, box=box: box.append(s.compute(base)) or [],
                                     nodes=g.nodes))  # fmt: skip
            shared[s.key] = box[0] if box else s.default
    base = replace(base, shared=shared)
    first = [c for c in chosen if c.node and c.without_facts]
    rest = [c for c in chosen if c.node and not c.without_facts]
    for n in g.nodes:
        f = g.facts.get(n)
        ctx = replace(base, node=n, facts=f or {}, conn=g.conns[n])
        findings.extend(_node_rules(first, ctx))
        if not f:
            continue
        findings.extend(_guarded(n, "ssh", malformed, n, f, g.checks))
        findings.extend(_node_rules(rest, ctx))
    for c in sorted((c for c in chosen if c.cluster), key=lambda c: c.cluster_order):
        assert c.cluster is not None
        findings.extend(_guarded(everyone, c.name, c.cluster, base, nodes=g.nodes))
    for x in findings:  # where each NAME=VALUE quoted came from: the node, the shell (through the launcher), --env
        _, facts = _facts_of(g, x)
        jobenv.annotate(x, jobenv.node_values(facts), g.job_env)
    for x in findings:  # messages quote what nodes sent (mpirun's stderr, rank output): escaped for --json too
        x["message"], x["fix"] = printable(x["message"]), printable(x["fix"])
    return findings


def _node_rules(checks: list[Check], ctx: Context) -> list[Finding]:
    """The node rules of `checks` for one node; a check that needs other nodes (local=False) skips a node
    reached as this machine."""
    out: list[Finding] = []
    for c in checks:
        if c.node and (c.local or ctx.conn.get("status") != "local"):
            out.extend(_guarded(ctx.node, c.name, c.node, ctx))
    return out


def _facts_of(g: Gathered, x: Finding) -> tuple[str | None, dict | None]:
    """The node a finding is about and its facts (a cluster-wide finding: the first node it names)."""
    for n in [x["node"], *(x.get("nodes") or [])]:
        if g.facts.get(n):
            return n, g.facts[n]
    return None, None


def _guarded(node: str, check: str, rule: Callable[..., list], *args, nodes: list[str] | None = None) -> list[Finding]:
    try:
        return rule(*args)
    except Exception as err:  # a crashing check is a finding, never a lost report
        f = finding(
            node,
            check,
            FAIL,
            f"check {check} crashed: {type(err).__name__}: {printable(err, 200)}",
            "a bug in clusterdoc, or facts of a form it did not expect: run with -v for the traceback "
            "and report it (with the node's facts: --save-facts DIR)",
            nodes=nodes,
        )
        f["traceback"] = "\n".join(printable(line) for line in "".join(traceback.format_exception(err)).splitlines())
        return [f]
