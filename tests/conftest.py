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


def cluster_skip_reason(slurm: bool = True, site: bool = False) -> str | None:
    if os.geteuid() != 0:
        return "the test cluster needs root (namespaces, mounts, one sshd per node)"
    missing = missing_tools(slurm, site)
    if missing:
        return (f"the test cluster needs {', '.join(missing)} "
                "(apt-get install openssh-server openssh-client mpich slurm-wlm munge iproute2 nftables"
                f"{' mariadb-server slurmdbd lmod' if site else ''})")
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


CLUSTER_FIXTURES = {"cluster", "cpu_cluster", "site_cluster"}


def pytest_addoption(parser):
    parser.addoption("--part", choices=("timing", "cluster", "rest"), default=None,
                     help="run only the tests marked timing (timing); or, of the others, only those of the test "
                          "cluster (cluster) or only the rest (rest): make test runs timing alone, then cluster "
                          "and rest side by side")  # fmt: skip


def on_the_cluster(item) -> bool:
    """A test of the one-machine test cluster: its fixtures, its mark, or its module's name says so."""
    return bool(CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ()))) or \
        item.get_closest_marker("cluster") is not None or "_cluster" in item.path.name


def in_part(item, part: str) -> bool:
    """Whether --part PART runs ITEM: a test that judges wall-clock time runs in the timing part only (alone, so
    that another process's load cannot make a healthy node look slow); the others by where they run."""
    if item.get_closest_marker("timing") is not None:
        return part == "timing"
    return part != "timing" and on_the_cluster(item) == (part == "cluster")


def pytest_collection_modifyitems(config, items):
    part = config.getoption("--part")
    if part:
        runs = {id(item): in_part(item, part) for item in items}
        config.hook.pytest_deselected(items=[item for item in items if not runs[id(item)]])
        items[:] = [item for item in items if runs[id(item)]]


def _print_skip(reason: str) -> None:
    print(f"\nSKIP cluster tests: {reason}")


def session_cluster(name: str, site: bool = False, **kw):
    """A cluster of this test session in its own dir (TEST_CLUSTERS/NAME<pid>), up while the fixture lasts, then
    down and removed; skipped (saying why) where this machine cannot run it."""
    reason = cluster_skip_reason(site=site)
    if reason:
        _print_skip(reason)
        pytest.skip(reason)
    _reap_dead_sessions()
    d = TEST_CLUSTERS / f"{name}{os.getpid()}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "owner.pid").write_text(f"{os.getpid()}\n")
    c = Cluster(d, site=site, **kw)
    try:
        c.up()
        yield c
    finally:
        c.down()
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster():
    """A 4-node cluster (tests/cluster/default.yaml: healthy GPU nodes), sshd + Slurm + MPICH."""
    yield from session_cluster("s", nodes=4)


SITE_SPEC = REPO / "tests" / "cluster" / "site.yaml"
SITE_MIN_JOB_AGE = 10  # seconds slurmctld remembers a finished job: then only sacct knows it


@pytest.fixture(scope="session")
def site_cluster():
    """A 3-node real Slurm site (tests/cluster/site.py, site.yaml): slurmdbd on MariaDB with
    AccountingStorageEnforce=associations,limits,qos (root: account proj1, QOS normal and short; proj2 is not
    root's), Lmod modules cuda/12.4 and nccl/2.21, node features (node1, node2: fast; node3: slow), CPU nodes with
    the venv's real torch, MinJobAge=10 s. Its own dir, started once per session and shared by every site test:
    use `site_cluster.env()` (SLURM_CONF, MODULEPATH, BASH_ENV) for Slurm commands and clusterdoc."""
    yield from session_cluster("site", site=True, nodes=3, spec=SITE_SPEC, min_job_age=SITE_MIN_JOB_AGE)


# A healthy CPU node: the default spec's toolkit and driver, the venv's real torch, no GPU.
CPU_NODE = {"gpus": [], "torch": "real", "deepspeed": None}


@pytest.fixture(scope="module")
def cpu_cluster(cluster):
    """The cluster with every node planted as a CPU node with real torch (for real jobs across nodes)."""
    with cluster.planted({n.name: CPU_NODE for n in cluster.nodes}):
        yield cluster
