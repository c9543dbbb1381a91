"""`clusterdoc check --perf` on the one-machine test cluster: a node whose link is shaped to 200 Mb/s (tc tbf on
its veth) and a node whose processes get a quarter of one CPU (cgroup quota) are named, each for what is slow."""

import json
import subprocess
import sys

import pytest

from clusterdoc.checks import linkplan
from tests.conftest import CPU_NODE

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timing]


def check(*args, timeout=300):
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--json", *map(str, args)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


def perf_check(cluster):
    """check --perf with 4 MiB per exchange: 0.17 s at 200 Mb/s, milliseconds between two healthy nodes. The
    thresholds leave room for this machine's noise (4 ranks on 2 cores shared with other work: a healthy pair's
    figure varies 3x here); the planted faults are 20x (link) and 4x (CPU) below."""
    code, doc = check(cluster.hostfile(), "--ssh-config", cluster.ssh_config, "--checks", "ssh", "--perf",
                      "--perf-mib", 4, "--busbw-fraction", 0.25, "--compute-fraction", 0.35, "--timeout", 60)
    perf = [f for f in doc["findings"] if f["check"] == "perf"]
    return code, doc, perf, {(f["node"], f["status"]) for f in perf if f["status"] != "ok"}


def test_perf_names_the_slow_link_and_the_throttled_node(cluster):
    with cluster.planted({n.name: CPU_NODE for n in cluster.nodes}):
        with cluster.planted({"node3": {"link_rate_mbit": 200}}):
            code, doc, perf, named = perf_check(cluster)
        assert named == {("node3", "fail")}, perf
        (link,) = [f for f in perf if f["status"] == "fail"]
        assert "node3's links carry" in link["message"] and "Mb/s busbw" in link["message"]
        assert "against a median of" in link["message"] and "Gb/s" in link["message"]
        assert "remove node3 from the hostfile" in link["fix"] and "ethtool" in link["fix"]
        figures = doc["summary"]["perf"]
        assert figures["slow"] == ["node3"] and figures["backend"] == "gloo"
        rounds = int(link["message"].split("found in ")[1].split()[0])
        assert rounds == figures["rounds"] <= linkplan.max_rounds(4)
        slow_pairs = [t for t in figures["busbw_bytes_per_s"] if "node3" in (t["a"], t["b"])]
        assert slow_pairs and all(t["busbw"] * 8 < 230e6 for t in slow_pairs)
        healthy = [t["busbw"] * 8 for t in figures["busbw_bytes_per_s"] if "node3" not in (t["a"], t["b"])]
        assert healthy and min(healthy) > 4 * 230e6, healthy
        assert code == 1

        with cluster.planted({"node2": {"cpu_quota": 0.25}}):
            code, doc, perf, named = perf_check(cluster)
        # a quarter of a CPU also slows node2's transfers (gloo copies on the CPU): its links may be named too
        assert {n for n, _ in named} == {"node2"}, perf
        (cpu,) = [f for f in perf if f["node"] == "node2" and f["status"] == "warn"]
        assert cpu["message"].startswith("compute ") and "GFLOP/s" in cpu["message"]
        assert "0.25 CPUs (a cgroup CPU quota)" in cpu["message"] and "remove node2 from the hostfile" in cpu["fix"]
        assert set(doc["summary"]["perf"]["compute_flops"]) == {n.name for n in cluster.nodes}
        assert code == (1 if ("node2", "fail") in named else 0)  # slow compute is a warning (fails with --strict)


# node1's python hands its peers a pickle whose __reduce__ would touch a file on whoever unpickles it, in the
# place of the JSON the rank script exchanges (the plan rank 0 broadcasts, the transfer times every rank gathers).
HOSTILE_EDIT = """import sys
src = sys.stdin.read()
if "CLUSTERDOC-PERF" in src:
    src = src.replace("def encode(obj):\\n    return json.dumps(obj).encode()", '''
class Evil:
    def __reduce__(self):
        import os
        return (os.system, ("touch MARKER",))


def encode(obj):
    import pickle
    return pickle.dumps(Evil())''')
    assert "pickle.dumps(Evil())" in src
sys.argv = ["-"] + sys.argv[1:]
exec(compile(src, "<stdin>", "exec"), {"__name__": "__main__"})
"""


def test_a_nodes_pickle_runs_nothing_anywhere_and_the_node_is_named(cluster, tmp_path):
    from tests.cluster.fakes import VENV_PYTHON

    marker = tmp_path / "pwned"
    edit = tmp_path / "edit.py"
    edit.write_text(HOSTILE_EDIT.replace("MARKER", str(marker)))
    hostile = tmp_path / "bin" / "python3.11"
    hostile.parent.mkdir()
    hostile.write_text(f'#!/bin/sh\n[ "$1" = "-" ] || exec {VENV_PYTHON} "$@"\nshift\nexec {VENV_PYTHON} {edit} "$@"\n')
    hostile.chmod(0o755)
    with cluster.planted({n.name: CPU_NODE for n in cluster.nodes}):
        with cluster.planted({"node1": {"torch": None, "python": str(hostile)}}):
            code, doc, perf, named = perf_check(cluster)
    assert not marker.exists()  # the pickle ran nowhere: not on node2-4, not at the head
    assert code == 1 and {n for n, _ in named} == {"node1"}, perf
    (claim,) = [f for f in perf if "not the expected JSON record" in f["message"]]
    assert claim["node"] == "node1" and "reported by node2, node3, node4" in claim["message"], claim
    assert {f["node"] for f in perf if f["status"] == "ok" and f["message"].startswith("compute")} >= {
        "node2", "node3", "node4"}  # fmt: skip
