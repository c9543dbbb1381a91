"""`check --perf` with 30 % of one node's packets dropped (issue 38: every node timed out and node3 was never named):
each pair's whole transfer runs in a group of its own within the round's time, so the lossy pair stalls alone,
counts as at most bytes / that time, and the planner's confirmation rounds tell the lossy node from its partners.
Over its lossy link node3's SSH login and python start take 5 to 40 s here (a CI run: over 60 s, and every rank
waited for it until all timed out): rank 0 waits for the ranks to join until a deadline, then measures those that
joined; a later one is named as late, never the others as not finishing."""

import time

import pytest

from tests.cluster.limits import packet_loss
from tests.conftest import CPU_NODE
from tests.test_perf_cluster import check

# a known failure (docs/check.md, "Known limit"): about half the runs here pass; it is kept as the reproduction,
# out of the default run (a test that may fail or pass is no test): `pytest -m known tests/test_perf_loss_cluster.py`
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.known]


def test_perf_names_the_node_that_drops_30_percent_of_its_packets(cluster):
    with cluster.planted({n.name: CPU_NODE for n in cluster.nodes}):
        ns = cluster.netns("node3")
        packet_loss(ns, 30)
        try:
            # the defaults (16 MiB per exchange), as the review ran it; thresholds as test_perf_cluster's
            start = time.monotonic()
            code, doc = check(cluster.hostfile(), "--ssh-config", cluster.ssh_config, "--checks", "ssh", "--perf",
                              "--busbw-fraction", 0.25, "--compute-fraction", 0.35, "--timeout", 60)
        finally:
            packet_loss(ns, None)
        took = time.monotonic() - start
    perf = [f for f in doc["findings"] if f["check"] == "perf"]
    failed = {f["node"] for f in perf if f["status"] == "fail"}
    assert failed == {"node3"}, [f for f in doc["findings"] if f["status"] != "ok" or f["check"] == "perf"]
    (named,) = [f for f in perf if f["status"] == "fail"]
    # measured and named as slow, or (its login over the lossy link slower than rank 0's wait) named as late
    measured = "node3's links carry" in named["message"]
    assert measured or "node3's rank did not join the perf test within" in named["message"], named
    assert not [f for f in perf if "did not finish" in f["message"]], perf  # nobody timed out
    healthy = {f["node"] for f in perf if f["status"] == "ok" and f["message"].startswith("links:")}
    assert healthy == {"node1", "node2", "node4"}, perf  # the others judged among themselves
    assert code == 1
    print(f"\nnode3 {'measured' if measured else 'late'}; check took {took:.0f}s")
    assert took < 200  # the probe's share under loss, then perf's own 90 s at most
