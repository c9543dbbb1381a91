"""Slow-node plants at the real edge: a token bucket on a node's link and a share of one CPU for its processes.

link_rate_mbit: a `tc` tbf qdisc on both ends of the node's veth: the host-side end (its egress is the traffic
    going to the node) and the node's interface inside its netns (traffic leaving the node). Each goes away with
    its interface, so `cluster down` (which deletes the veths and namespaces) leaves no qdisc behind. (netem
    would do the same but is not in this machine's kernel.)
cpu_quota: a cgroup v1 under /sys/fs/cgroup/cpu/PREFIX-NODE with cpu.cfs_quota_us = quota x cpu.cfs_period_us,
    holding the node's sshd and slurmd; every ssh session and job step they start inherits it. Unplanting moves
    what is in it back to the root of the hierarchy and removes it; `cluster down` removes what is left.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .procs import ClusterError

TC = "/usr/sbin/tc" if os.access("/usr/sbin/tc", os.X_OK) else "/sbin/tc"
CPU_CGROUP = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000


def tc(argv: list[str], netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([TC] + (["-n", netns] if netns else []) + argv, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise ClusterError(f"tc {' '.join(argv)}{' in ' + netns if netns else ''} failed: {proc.stderr.strip()}")
    return proc


def shape(dev: str, rate_mbit: int | None, netns: str | None = None) -> None:
    """Give dev's egress a token bucket of rate_mbit, or take it away (None)."""
    if rate_mbit is None:
        if "tbf" in tc(["qdisc", "show", "dev", dev], netns, check=False).stdout:
            tc(["qdisc", "del", "dev", dev, "root"], netns)
        return
    # burst: 5 ms of traffic, at least 64 KiB (a GSO packet on a veth); queue: 100 ms of waiting at most
    burst = max(64 * 1024, rate_mbit * 1_000_000 // 8 // 200)
    tc(["qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{rate_mbit}mbit", "burst", str(burst),
        "latency", "100ms"], netns)


def cgroup_of(prefix: str, node_name: str) -> Path:
    return CPU_CGROUP / f"{prefix}-{node_name}"


def _empty(group: Path, timeout: float = 5) -> None:
    """Move every process of group to the hierarchy's root (new ones may be forked meanwhile: repeat)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pids = (group / "cgroup.procs").read_text().split()
        except FileNotFoundError:
            return
        if not pids:
            return
        for pid in pids:
            try:
                (CPU_CGROUP / "cgroup.procs").write_text(pid)
            except ProcessLookupError:
                pass  # exited meanwhile
        if time.monotonic() > deadline:
            raise ClusterError(f"{group}: processes keep appearing in it")


def remove_cgroup(group: Path, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while group.exists():
        _empty(group)
        try:
            group.rmdir()
        except FileNotFoundError:
            return
        except OSError as exc:  # EBUSY: a process still exiting
            if time.monotonic() > deadline:
                raise ClusterError(f"could not remove {group}: {exc}") from None
            time.sleep(0.05)


def limit_cpu(prefix: str, node_name: str, quota: float | None, pids: list[int]) -> None:
    """Put pids (the node's daemons) in the node's cgroup limited to quota CPUs, or remove it (None)."""
    group = cgroup_of(prefix, node_name)
    if quota is None:
        remove_cgroup(group)
        return
    group.mkdir(exist_ok=True)
    (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
    (group / "cpu.cfs_quota_us").write_text(str(max(1000, round(quota * PERIOD_US))))
    for pid in pids:
        (group / "cgroup.procs").write_text(str(pid))


def our_cgroups(prefix: str) -> list[Path]:
    try:
        return sorted(CPU_CGROUP / n for n in os.listdir(CPU_CGROUP) if n.startswith(prefix + "-"))
    except OSError:
        return []


def packet_loss(netns: str, percent: int | None) -> None:
    """Drop `percent` % of the packets leaving the node and of those reaching it (its netns, loopback spared) at
    random, as `tc netem loss` on its link would (netem is not in this machine's kernel: nftables' numgen does it);
    None takes it away."""
    table = "clusterdoc_loss"
    base = ["ip", "netns", "exec", netns, "nft"]
    subprocess.run(base + ["delete", "table", "inet", table], capture_output=True, timeout=30)
    if percent is None:
        return
    drop = ["numgen", "random", "mod", "100", "<", str(percent), "drop"]
    for argv in (["add", "table", "inet", table],
                 ["add", "chain", "inet", table, "out", "{ type filter hook output priority 0; }"],
                 ["add", "chain", "inet", table, "in", "{ type filter hook input priority 0; }"],
                 ["add", "rule", "inet", table, "out", "oifname", "!=", "lo", *drop],
                 ["add", "rule", "inet", table, "in", "iifname", "!=", "lo", *drop]):
        proc = subprocess.run(base + argv, capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            raise ClusterError(f"nft {' '.join(argv)} in {netns} failed: {proc.stderr.strip()}")
