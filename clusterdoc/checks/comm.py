"""comm (--comm): judge a real torch.distributed all_reduce + barrier, one rank per node.

The rank script below is what doctor sends to every node (python3 -, over SSH; doctor/ranks.py starts the
ranks); this module only parses its output and judges the result."""

from __future__ import annotations

import json

from clusterdoc.checks import FAIL, OK, Finding, finding
from clusterdoc.checks.spec import Check

CHECK = "comm"

# argv: rank, world size, master address, port, timeout seconds. Each node is given its rank (not found by
# its host name: two nodes of a cloned image may both call themselves node1).
RANK_SCRIPT = r"""
import datetime, json, os, sys
rank, world, port, timeout = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[4]), float(sys.argv[5])
master = sys.argv[3]
import torch
import torch.distributed as dist
backend = "nccl" if torch.cuda.is_available() else "gloo"
dist.init_process_group(backend, init_method="tcp://%s:%d" % (master, port), rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=timeout))
t = torch.tensor([float(rank + 1)])
if backend == "nccl":
    t = t.cuda()
dist.all_reduce(t)
dist.barrier()
print("CLUSTERDOC-COMM " + json.dumps({"rank": rank, "world": world, "backend": backend, "sum": float(t.item())}))
sys.stdout.flush()
dist.destroy_process_group()
"""


def parse_rank_output(status: str, stdout: str, stderr: str, message: str = "") -> dict:
    for line in stdout.splitlines():
        if line.startswith("CLUSTERDOC-COMM "):
            try:  # the node's output is untrusted: a line that is not our record is that node's finding
                record = json.loads(line[len("CLUSTERDOC-COMM ") :][:65536])
            except (ValueError, RecursionError):
                record = None
            if not (isinstance(record, dict) and isinstance(record.get("rank"), int)
                    and isinstance(record.get("backend"), str)):  # fmt: skip
                return {"ok": False, "message": "its output line is not the expected JSON record"}
            return dict(record, ok=True)
    tail = (stderr.strip().splitlines() or [message or status])[-1]
    return {"ok": False, "message": tail[:300] if status == "ok" else (message or status)}


def check(result: dict, nodes: list[str]) -> list[Finding]:
    """`result`: {world, master, ranks: {node: {ok, rank, sum, backend} | {ok: False, message}}} or {error}."""
    if result.get("error"):
        return [
            finding(n, CHECK, FAIL, f"comm test not run: {result['error']}", "install torch in the nodes' python3")
            for n in nodes
        ]
    world = result.get("world", 0)
    expected = world * (world + 1) / 2
    ranks = result.get("ranks", {})
    silent = [n for n, r in ranks.items() if not r.get("ok")]
    out = []
    for n, r in ranks.items():
        if r.get("ok") and r.get("sum") == expected:
            out.append(finding(n, CHECK, OK, f"rank {r['rank']}/{world}: {r['backend']} all_reduce + barrier ok"))
        elif r.get("ok"):
            out.append(
                finding(
                    n,
                    CHECK,
                    FAIL,
                    f"rank {r['rank']}: all_reduce gave {r.get('sum')}, expected {expected}",
                    "rerun with NCCL_DEBUG=INFO (or TORCH_DISTRIBUTED_DEBUG=DETAIL) to see the transport",
                )
            )
        else:
            out.append(
                finding(
                    n,
                    CHECK,
                    FAIL,
                    f"rank did not finish ({len(silent)} of {world} silent, master {result.get('master')}): "
                    f"{r.get('message')}",
                    "rerun with NCCL_DEBUG=INFO; check that every node reaches the master address and port "
                    "(firewall, NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME)",
                )
            )
    for n in nodes:
        if n not in ranks:
            out.append(
                finding(
                    n,
                    CHECK,
                    FAIL,
                    "no torch on this node: it cannot take a rank",
                    "install torch in the nodes' python3",
                )
            )
    return out


CHECKS = (
    Check(
        "comm",
        160,
        "a real torch.distributed all_reduce, one rank per node",
        default=False,
        ssh_only=True,
        cluster=lambda c: check(c.comm, list(c.answered)) if c.comm is not None else [],
        cluster_order=90,
    ),
)
