"""What NCCL will load, and how it is told to run, on the test cluster (issue 31): the real nvidia-nccl-cu12 and
-cu13 wheels on a node's python path, NCCL_SOCKET_IFNAME naming an interface a node lacks (eth9) and one it has
but that reaches no other node (lo), a 4-task-per-node submit on 2-GPU nodes. Each named with its node and fix;
the healthy node gets nothing. Unit tests of the rules: tests/test_nccl.py."""

import pytest

from tests.test_doctor_cluster import check, names, problems
from tests.test_gcc_limit_real import pip_target
from tests.test_nccl import WHEELS
from tests.test_submit_cluster import JOBS, backend_args, submit

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TWO_GPUS = [{"model": "NVIDIA A100-SXM4-80GB", "capability": "8.0", "memory_mib": 81920, "count": 2}]


def test_nccl_plants_are_named_with_node_and_fix(cluster):
    site = pip_target("nccl-cu12-cu13", WHEELS)
    plants = {
        "node2": {"env": {"PYTHONPATH": str(site)}},  # the job's python sees both wheels
        "node3": {"env": {"NCCL_SOCKET_IFNAME": "eth9"}},
        "node4": {"env": {"NCCL_SOCKET_IFNAME": "lo"}},
    }
    with cluster.planted(plants):
        code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 20,
                          "--checks", "net,nccl")
    assert problems(doc) == {("node2", "nccl"), ("node3", "net"), ("node4", "net")}, doc["findings"]
    assert code == 1
    bad = {(f["node"], f["message"]): f["fix"] for f in doc["findings"] if f["status"] != "ok"}
    (node, msg), fix = next((k, v) for k, v in bad.items() if k[0] == "node2")
    assert msg.startswith("nvidia-nccl-cu12 2.32.3 and nvidia-nccl-cu13 2.32.3 are both installed in the job's "
                          f"python on node2 ({site})"), msg
    assert fix.startswith("on node2: pip uninstall -y nvidia-nccl-cu12 nvidia-nccl-cu13 && pip install nvidia-nccl-cu12")
    (node, msg), fix = next((k, v) for k, v in bad.items() if k[0] == "node3")
    assert msg == "NCCL_SOCKET_IFNAME=eth9 (set on the node) matches no interface on node3 (it has: lo, eth0)"
    assert "set NCCL_SOCKET_IFNAME to the cluster network's interface" in fix
    (node, msg), fix = next((k, v) for k, v in bad.items() if k[0] == "node4")
    assert msg.startswith("NCCL_SOCKET_IFNAME=lo (set on the node) on node4 picks lo (127.0.0.1/8), the loopback interface")
    assert fix.startswith("on node4: set NCCL_SOCKET_IFNAME to the cluster network's interface (=eth0")


def test_four_tasks_per_node_on_two_gpu_nodes_stop_the_submit(cluster, tmp_path):
    with cluster.planted({n.name: {"gpus": TWO_GPUS} for n in cluster.nodes}):
        res = submit(cluster, tmp_path, *backend_args(cluster, "mpirun"), "--nodes", 2, "--tasks-per-node", 4,
                     "--wait", JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    # one finding per node; the report joins the same finding of several nodes under their hostlist
    assert ("[FAIL] nccl node[1-2]: 4 tasks per node on node[1-2], which has 2 GPU(s): local ranks 2..3 get no GPU "
            "of their own") in res.stderr
    assert "run 2 task(s) per node (--tasks-per-node 2" in res.stderr
    assert "preflight found problems; job not submitted" in res.stderr


def test_two_tasks_per_node_on_one_gpu_nodes_stop_the_slurm_job_in_its_allocation(cluster, tmp_path):
    """Under Slurm the preflight runs in the allocation (one srun task per node) and judges the same layout (the
    test cluster's slurmd nodes have 2 CPUs: 2 tasks per node on 1-GPU nodes)."""
    one = [dict(TWO_GPUS[0], count=1)]
    with cluster.planted({n.name: {"gpus": one} for n in cluster.nodes}):
        res = submit(cluster, tmp_path, "--backend", "slurm", "--nodes", 2, "--tasks-per-node", 2, "--wait",
                     JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    report = (jd / "preflight.txt").read_text()
    assert "2 tasks per node on node[1-2], which has 1 GPU(s)" in report, report
    assert "preflight FAILED" in report and "[rank " not in res.stderr
