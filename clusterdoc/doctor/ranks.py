"""The head's rank tests (--comm, --perf): one rank per node started over SSH with a script on stdin, or one
rank on this machine (--local --comm). What the ranks print is judged by checks/comm.py and checks/perf.py,
which hold their scripts and parsers; this module is the part that starts processes.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from clusterdoc.checks import comm, perf
from clusterdoc.doctor.options import CheckOptions


def run_ranks(ssh, hosts, facts, timeout, script: str, argv_for, parse, port_base: int) -> dict:
    """One rank per node that has torch, launched over SSH with `script` on stdin (comm, perf):
    {world, master, order: [node by rank], ranks: {node: parse(its output)}} or {error}."""
    from dataclasses import replace

    from clusterdoc import remote

    alive = [h for h in hosts if facts.get(h.host) and (facts[h.host].get("torch") or None)]
    if len(alive) < 1:
        return {"error": "no node has torch"}
    port = port_base + (os.getpid() % 400)
    rank = {h.host: i for i, h in enumerate(alive)}

    def command_for(h) -> str:
        argv = ["python3", "-", *argv_for(rank[h.host], len(alive), alive[0].host, port, max(5.0, timeout - 5))]
        return shlex.join(argv)

    res = remote.run_many(alive, command_for, replace(ssh, timeout=timeout), stdin=script.encode(),
                          fanout=max(len(alive), 1))  # fmt: skip
    return {
        "world": len(alive),
        "master": f"{alive[0].host}:{port}",
        "order": [h.host for h in alive],
        "ranks": {
            h.host: parse(res[h.host].status, res[h.host].stdout, res[h.host].stderr, res[h.host].message)
            for h in alive
        },
    }


def comm_test(ssh, hosts, facts, timeout) -> dict:
    """A real torch.distributed all_reduce + barrier, one rank per node, launched over SSH."""

    def argv_for(rank, world, master, port, limit):
        return [str(rank), str(world), master, str(port), f"{limit:g}"]

    return run_ranks(ssh, hosts, facts, timeout, comm.RANK_SCRIPT, argv_for, comm.parse_rank_output, 29500)


def perf_test(ssh, hosts, facts, opts: CheckOptions) -> dict:
    """Compute per node and pair rounds over the links (checks/perf.py), one rank per node. At least 90 s: a node
    whose link drops packets logs in and starts late, and each round with its stalled pair costs the round's time."""
    timeout = max(opts.timeout, 90.0)

    def argv_for(rank, world, master, port, limit):
        return perf.rank_argv(rank, world, master, port, limit, opts)

    result = run_ranks(ssh, hosts, facts, timeout, perf.rank_script(), argv_for, perf.parse_rank_output, 30000)
    # what the head asked each pair to move: a pair's figure is judged against this, not a node's claim of it
    return result if result.get("error") else dict(result, bytes=int(opts.perf_mib * 2**20), iters=perf.DEFAULT_ITERS)


def comm_local(facts: dict, timeout: float) -> dict:
    """--local --comm: a world of one rank on this machine (still a real process group)."""
    if not facts.get("torch"):
        return {"error": "torch is not installed here"}
    argv = [
        sys.executable,
        "-c",
        comm.RANK_SCRIPT,
        "0",
        "1",
        "127.0.0.1",
        "29517",
        str(max(5.0, timeout - 5)),
    ]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout)
        rank = comm.parse_rank_output("ok", p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        rank = {"ok": False, "message": f"timed out after {timeout:g}s"}
    return {"world": 1, "master": "127.0.0.1:29517", "ranks": {"localhost": rank}}
