"""The job's environment on the test cluster (issue 36): the NCCL_* of the shell that runs `clusterdoc check` or
`submit` are what the ranks get (Slurm's --export=ALL, MPICH's Hydra, the local backend), so they are judged, named
with their source, and the same finding on every node is one line. Unit tests: tests/test_jobenv.py."""

import os
import subprocess
import sys

import pytest

from tests.test_nccl_cluster import TWO_GPUS
from tests.test_submit_cluster import JOBS, backend_args

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SLURM = "from your shell, passed on by Slurm's --export=ALL"
JUDGED = ("NCCL_", "GLOO_", "CUDA_VISIBLE_DEVICES", "TORCH_CUDA_ARCH_LIST")


def shell(extra, cluster=None, home=None):
    """This process's environment without any judged variable, then `extra`: the user's shell."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(JUDGED + ("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    if cluster is not None:
        env.update(cluster.env())
    if home is not None:
        env["HOME"] = str(home)
    return {**env, **extra}


def check_text(cluster, extra, *args):
    """`clusterdoc check -w 'node[1-4]'` as a user runs it, from a shell with `extra` set: (exit code, report)."""
    first, last = cluster.nodes[0].name, cluster.nodes[-1].name
    assert (first, last) == ("node1", f"node{len(cluster.nodes)}")
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "-w", f"node[1-{len(cluster.nodes)}]",
                        "--ssh-config", str(cluster.ssh_config), "--timeout", "20", "--mpirun", str(cluster.mpirun),
                        *args], env=shell(extra), capture_output=True, text=True, timeout=180)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, p.stdout


def problem_lines(text):
    return [line for line in text.splitlines() if line.startswith(("[FAIL]", "[WARN]"))]


def test_the_shells_nccl_socket_ifname_is_one_fail_line_naming_every_node_and_the_shell(cluster):
    code, text = check_text(cluster, {"NCCL_SOCKET_IFNAME": "lo"})
    all_nodes = f"node[1-{len(cluster.nodes)}]"
    assert problem_lines(text) == [
        f"[FAIL] net {all_nodes}: NCCL_SOCKET_IFNAME=lo ({SLURM}) on {all_nodes} picks lo (127.0.0.1/8), the loopback "
        "interface: the other nodes cannot reach the address it announces (the job hangs at init, then 'Connection "
        "refused' / a timeout)"], text
    assert code == 1
    assert "change it there (export or unset NCCL_SOCKET_IFNAME)" in text
    assert f"{len(cluster.nodes)} node(s) checked" in text and "1 problem(s) on" in text


def test_a_typo_in_the_shell_is_named_and_a_healthy_shell_gives_nothing(cluster):
    code, text = check_text(cluster, {"NCCL_SOCKET_IFACE": "eth0"})
    all_nodes = f"node[1-{len(cluster.nodes)}]"
    assert problem_lines(text) == [
        f"[WARN] nccl {all_nodes}: NCCL_SOCKET_IFACE=eth0 ({SLURM}) is set for the job on {all_nodes}, but NCCL reads "
        "no such variable (did you mean NCCL_SOCKET_IFNAME?): the setting has no effect"], text
    assert code == 0  # a warning: the job runs, without the setting
    code, text = check_text(cluster, {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_DEBUG": "INFO"})
    assert problem_lines(text) == [] and code == 0, text


def test_open_mpi_passes_only_its_x_names_so_the_nodes_own_value_is_judged(cluster):
    code, text = check_text(cluster, {"NCCL_SOCKET_IFNAME": "lo"}, "--launcher", "openmpi", "--checks", "net,nccl")
    assert problem_lines(text) == [] and code == 0, text
    with cluster.planted({"node2": {"env": {"NCCL_SOCKET_IFNAME": "eth9"}}}):
        code, text = check_text(cluster, {"NCCL_SOCKET_IFNAME": "eth0"}, "--launcher", "openmpi",
                                "--checks", "net,nccl")
    assert problem_lines(text) == ["[FAIL] net node2: NCCL_SOCKET_IFNAME=eth9 (set on the node) matches no interface "
                                   "on node2 (it has: lo, eth0)"], text


def submit(cluster, cwd, extra, *args):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "submit", *map(str, args)], cwd=cwd,
                          env=shell(extra, cluster, cwd), capture_output=True, text=True, timeout=420)


def test_local_submit_preflight_judges_the_shells_value(cluster, tmp_path):
    res = submit(cluster, tmp_path, {"NCCL_SOCKET_IFNAME": "eth9"}, "--backend", "local", "--nodes", 1, "--wait",
                 JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    assert ("NCCL_SOCKET_IFNAME=eth9 (from your shell, inherited by the ranks started here) matches no interface "
            "on localhost") in res.stderr, res.stderr[-3000:]
    assert "preflight found problems; job not submitted" in res.stderr


def test_mpich_submit_preflight_judges_the_shells_value_on_every_node(cluster, tmp_path):
    res = submit(cluster, tmp_path, {"NCCL_SOCKET_IFNAME": "lo"}, *backend_args(cluster, "mpirun"), "--nodes", 2,
                 "--wait", JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    assert ("[FAIL] net node[1-2]: NCCL_SOCKET_IFNAME=lo (from your shell, passed on by MPICH's mpiexec) on node[1-2] "
            "picks lo (127.0.0.1/8), the loopback interface") in res.stderr, res.stderr[-3000:]
    assert "preflight found problems; job not submitted" in res.stderr


def test_slurm_preflight_in_the_allocation_judges_the_shells_value(cluster, tmp_path):
    """Under Slurm the preflight is the job's first step; its batch shell is the submitting shell (--export=ALL):
    CUDA_VISIBLE_DEVICES=0 there leaves the second task of each 2-GPU node without a GPU."""
    with cluster.planted({n.name: {"gpus": TWO_GPUS} for n in cluster.nodes}):
        res = submit(cluster, tmp_path, {"CUDA_VISIBLE_DEVICES": "0"}, "--backend", "slurm", "--nodes", 2,
                     "--tasks-per-node", 2, "--wait", JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    report = (jd / "preflight.txt").read_text()
    assert (f"[FAIL] nccl node[1-2]: 2 tasks per node on node[1-2], which has 2 GPU(s) (CUDA_VISIBLE_DEVICES=0 "
            f"({SLURM}) shows 1)") in report, report
    assert "preflight FAILED" in report and "[rank " not in res.stderr
