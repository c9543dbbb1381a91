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

from clusterdoc.checks import (
    FAIL,
    Finding,
    arch,
    clock,
    comm,
    consistency,
    cuda,
    fabric,
    files,
    finding,
    gpuhealth,
    kernel,
    malformed,
    mpi,
    nccl,
    net,
    perf,
    resources,
    ssh,
)
from clusterdoc.doctor import jobenv
from clusterdoc.doctor.facts import Gathered
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.hostfile import compress_hostlist
from clusterdoc.untrusted import printable


def judge(g: Gathered, opts: CheckOptions | None = None) -> list[Finding]:
    opts = opts or CheckOptions()
    checks = g.checks
    answered = g.answered()
    findings: list[Finding] = []

    def run(node: str, check: str, rule: Callable[..., list], *args) -> None:
        if check in checks:
            findings.extend(_guarded(node, check, rule, *args, nodes=g.nodes if node == everyone else None))

    def shared(check: str, compute: Callable, default):
        """What several checks use, computed under the same guard: a crash is a finding, and `default` is used."""
        computed = []

        def rule() -> list:
            computed.append(compute())
            return []

        run(everyone, check, rule)
        return computed[0] if computed else default

    everyone = compress_hostlist(g.nodes)
    multi = len(g.nodes) > 1
    needed = shared("arch", lambda: arch.needed_arch_list(answered), "")
    views = shared("net", lambda: net.peer_views(answered), {}) if multi else {}
    gpus_expected, gpus_from = shared("gpu", lambda: gpuhealth.expected_counts(answered, opts.gpus_per_node), ({}, ""))
    pcie = shared("gpu", lambda: gpuhealth.pcie_reference(answered), {})

    for n in g.nodes:
        f = g.facts.get(n)
        untested = [c for c in checks if c != "ssh"] if not f and g.conns[n]["status"] != "ok" else []
        run(n, "ssh", ssh.check, n, g.conns[n], f, untested)
        if not f:
            continue
        findings.extend(_guarded(n, "ssh", malformed, n, f, checks))
        if g.conns[n]["status"] != "local":
            run(n, "mesh", ssh.check_mesh, n, f)
        run(n, "net", net.check_node, n, f, views.get(n), multi)
        run(n, "nccl", nccl.check, n, f, opts.tasks_per_node)
        run(n, "mpi", mpi.check, n, f, g.head_mpirun)
        run(n, "kernel", kernel.check, n, f)
        run(n, "cuda", cuda.check, n, f)
        run(n, "arch", arch.check, n, f, opts.arch_list, needed)
        run(n, "gpu", gpuhealth.check, n, f, gpus_expected.get(n), gpus_from, pcie)
        run(n, "fabric", fabric.check_node, n, f)
        run(n, "resources", resources.check, n, f)
        if g.conns[n]["status"] != "local":
            run(n, "clock", clock.check, n, f)
    if multi:
        run(everyone, "net", net.check_cluster, answered, g.nodes)
        # the port plan's nodes: those the head could connect to (the others were left out of it)
        planned = [n for n in g.nodes if g.conns[n]["status"] not in ssh.UNREACHABLE]
        run(everyone, "port", net.check_port, g.facts, planned or g.nodes, opts.port)
        run(everyone, "fabric", fabric.check_cluster, answered, compress_hostlist)
    run(everyone, "files", files.check, g.facts, g.nodes)
    if g.mpirun is not None:
        run(
            everyone, "mpi", mpi.check_run, {n: answered[n].get("hostname") for n in g.nodes if n in answered}, g.mpirun
        )
    if len(answered) > 1:
        run(everyone, "ssh", ssh.check_names, answered, compress_hostlist)
        run(everyone, "mesh", ssh.check_trust, answered)
        run(everyone, "consistency", consistency.check, answered, compress_hostlist)
    if g.comm is not None:
        run(everyone, "comm", comm.check, g.comm, list(answered))
    if g.perf is not None:
        limits = (opts.compute_fraction, opts.busbw_fraction, opts.min_busbw)
        run(everyone, "perf", perf.check, g.perf, list(answered), answered, *limits)
    for x in findings:  # where each NAME=VALUE quoted came from: the node, the shell (through the launcher), --env
        _, facts = _facts_of(g, x)
        jobenv.annotate(x, jobenv.node_values(facts), g.job_env)
    for x in findings:  # messages quote what nodes sent (mpirun's stderr, rank output): escaped for --json too
        x["message"], x["fix"] = printable(x["message"]), printable(x["fix"])
    return findings


def _facts_of(g: Gathered, x: Finding) -> tuple[str | None, dict | None]:
    """The node a finding is about and its facts (a cluster-wide finding: the first node it names)."""
    for n in [x["node"], *(x.get("nodes") or [])]:
        if g.facts.get(n):
            return n, g.facts[n]
    return None, None


def _guarded(node: str, check: str, rule: Callable[..., list], *args, nodes: list[str] | None = None) -> list[Finding]:
    try:
        return rule(*args)
    except Exception as err:  # noqa: BLE001 - a crashing check is a finding, never a lost report
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
