"""Shared fixtures. `cluster`: the one-machine test cluster (tests/cluster), one per test session.

Each session gets its own cluster dir under .cache/cluster-test/ (so sessions run side by side; the sshd
port is picked free), and clusters of sessions that died are stopped and removed before a new one starts.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cluster import Cluster, ClusterError, missing_tools
from tests.cluster.fakes import REPO
from tests.cluster.procs import alive, read_pid

TEST_CLUSTERS = Path(os.environ.get("CLUSTERDOC_TEST_CLUSTER_DIR") or REPO / ".cache" / "cluster-test")


def cluster_skip_reason(slurm: bool = True) -> str | None:
    if os.geteuid() != 0:
        return "the test cluster needs root (namespaces, mounts, one sshd per node)"
    missing = missing_tools(slurm)
    if missing:
        return (f"the test cluster needs {', '.join(missing)} "
                "(apt-get install openssh-server openssh-client mpich slurm-wlm munge iproute2 nftables)")
    return None


def _reap_dead_sessions() -> None:
    """Stop the clusters of test sessions that crashed (their owner pid is gone)."""
    if not TEST_CLUSTERS.is_dir():
        return
    for d in TEST_CLUSTERS.iterdir():
        owner = read_pid(d / "owner.pid")
        if d.is_dir() and not alive(owner):
            try:
                Cluster(d).down()
            except ClusterError:
                continue
            shutil.rmtree(d, ignore_errors=True)


def _print_skip(reason: str) -> None:
    print(f"\nSKIP cluster tests: {reason}")


@pytest.fixture(scope="session")
def cluster():
    """A 4-node cluster (tests/cluster/default.yaml: healthy GPU nodes), sshd + Slurm + MPICH."""
    reason = cluster_skip_reason()
    if reason:
        _print_skip(reason)
        pytest.skip(reason)
    _reap_dead_sessions()
    d = TEST_CLUSTERS / f"s{os.getpid()}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "owner.pid").write_text(f"{os.getpid()}\n")
    c = Cluster(d, nodes=4)
    try:
        c.up()
        yield c
    finally:
        c.down()
        shutil.rmtree(d, ignore_errors=True)


# A healthy CPU node: the default spec's toolkit and driver, the venv's real torch, no GPU.
CPU_NODE = {"gpus": [], "torch": "real", "deepspeed": None}


@pytest.fixture(scope="module")
def cpu_cluster(cluster):
    """The cluster with every node planted as a CPU node with real torch (for real jobs across nodes)."""
    with cluster.planted({n.name: CPU_NODE for n in cluster.nodes}):
        yield cluster
