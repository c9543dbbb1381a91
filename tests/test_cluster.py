"""The one-machine test cluster: real sshd per node, node spec realised as real files, MPICH, Slurm."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster import Cluster, cuda_facts, fakes, spec
from tests.cluster.procs import listeners
from tests.conftest import cluster_skip_reason

FACTS = r"""
echo "hostname=$(hostname)"
echo "uname_r=$(uname -r)"
echo "osrelease=$(cat /proc/sys/kernel/osrelease)"
echo "gpus=$(nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits | head -1)"
echo "gpu_count=$(nvidia-smi -L | wc -l)"
echo "banner=$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*')"
echo "nvcc=$(nvcc --version | grep release)"
echo "gcc=$(gcc -dumpfullversion)"
echo "cuda_home=$CUDA_HOME"
echo "arch=$TORCH_CUDA_ARCH_LIST"
echo "host_config=$(grep -o '__GNUC__ > [0-9]*' $CUDA_HOME/include/crt/host_config.h | head -1)"
echo "python=$(command -v python3 || echo none)"
if command -v python3 >/dev/null; then
  python3 -c 'import torch, platform; print("torch=%s %s %s %d %s %s" % (torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_capability(0) if torch.cuda.is_available() else None, torch.cuda.nccl.version())); print("platform_release=" + platform.release())'
fi
"""


def facts(cluster, node: str) -> dict:
    proc = cluster.ssh(node, FACTS)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


@pytest.mark.cluster
def test_every_node_has_its_own_hostname_and_the_default_spec(cluster):
    assert [(n.name, n.addr) for n in cluster.nodes] == [(f"node{i}", f"127.0.0.{i + 1}") for i in range(1, 5)]
    for node in cluster.nodes:
        f = facts(cluster, node.name)
        assert f["hostname"] == node.name
        assert f["uname_r"] == f["osrelease"] == f["platform_release"] == "5.15.0-105-generic"
        assert f["gpus"] == "0, NVIDIA A100-SXM4-80GB, 8.0, 81920, 550.54.14"
        assert f["gpu_count"] == "8"
        assert f["banner"] == "CUDA Version: 12.4"
        assert f["nvcc"] == "Cuda compilation tools, release 12.1, V12.1.105"
        assert f["gcc"] == "11.4.0"
        assert f["cuda_home"] == "/usr/local/cuda-12.1"
        assert f["arch"] == "8.0"
        assert f["host_config"] == "__GNUC__ > 12"
        assert f["torch"] == "2.3.1+cu121 12.1 True 8 (8, 0) (2, 20, 5)"


@pytest.mark.cluster
def test_nvidia_smi_answers_any_field_order_and_refuses_unknown_fields(cluster):
    out = cluster.ssh("node1", "nvidia-smi --query-gpu=driver_version,memory.total,index --format=csv -i 3")
    assert out.stdout.splitlines() == ["driver_version, memory.total [MiB], index", "550.54.14, 81920 MiB, 3"]
    bad = cluster.ssh("node1", "nvidia-smi --query-gpu=index,bogus --format=csv")
    assert bad.returncode == 2 and 'Field "bogus" is not a valid field to query.' in bad.stdout


@pytest.mark.cluster
def test_planting_changes_one_node_and_restoring_brings_it_back(cluster):
    change = {
        "node2": {"kernel": "5.4.0-150-generic", "driver": "470.182.03", "toolkits": ["11.8", "12.4"],
                  "path_toolkit": "11.8", "ld_toolkit": "12.4", "cuda_home": "11.8", "gcc": "13.2.0",
                  "gpus": [{"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 2}],
                  "torch": {"cuda": "12.4", "version": "2.4.0+cu124"}, "env": {"TORCH_CUDA_ARCH_LIST": "Ampere"}},
        "node3": {"python": "none"},
    }
    with cluster.planted(change):
        f2 = facts(cluster, "node2")
        assert f2["hostname"] == "node2" and f2["uname_r"] == "5.4.0-150-generic"
        assert f2["platform_release"] == "5.4.0-150-generic"
        # driver 470 predates the compute_cap query field, like a real one
        assert "not a valid field" in f2["gpus"]
        assert f2["gpu_count"] == "2" and f2["banner"] == "CUDA Version: 11.7"
        assert f2["nvcc"] == "Cuda compilation tools, release 11.8, V11.8.89"
        assert f2["gcc"] == "13.2.0" and f2["cuda_home"] == "/usr/local/cuda-11.8" and f2["arch"] == "Ampere"
        assert f2["host_config"] == "__GNUC__ > 11"
        # torch built for CUDA 12.4 does not initialise on a 470 driver
        assert f2["torch"].startswith("2.4.0+cu124 12.4 False 0")
        ld = cluster.ssh("node2", "echo $LD_LIBRARY_PATH; readlink /usr/local/cuda; ls /usr/local/cuda-12.4/lib64")
        assert ld.stdout.split() == ["/usr/local/cuda-12.4/lib64", "cuda-11.8", "libcudart.so", "libcudart.so.12",
                                     "libcudart.so.12.4.131"]
        f3 = facts(cluster, "node3")
        assert f3["python"] == "none" and "torch" not in f3
        assert cluster.ssh("node3", "ls /usr/bin/python3").returncode != 0
        assert facts(cluster, "node1")["uname_r"] == "5.15.0-105-generic"  # the others are untouched
        with cluster.planted({"node2": {"kernel": "6.1.0-18-amd64"}}):  # plants nest
            assert cluster.ssh("node2", "uname -r").stdout.strip() == "6.1.0-18-amd64"
        assert cluster.ssh("node2", "uname -r; gcc -dumpfullversion").stdout.split() == ["5.4.0-150-generic", "13.2.0"]
    for name in ("node2", "node3"):
        f = facts(cluster, name)
        assert f["uname_r"] == "5.15.0-105-generic" and f["gpu_count"] == "8" and f["python"] == "/usr/bin/python3"
        assert f["torch"] == "2.3.1+cu121 12.1 True 8 (8, 0) (2, 20, 5)"


@pytest.mark.cluster
def test_hang_fail_deepspeed_and_real_torch(cluster):
    plant = {"node1": {"hang": ["nvidia-smi"], "fail": ["nvcc"]},
             "node2": {"deepspeed": {"version": "0.14.4", "ops": ["cpu_adam", "async_io"]}, "libaio": False},
             "node4": {"torch": "real"}}
    with cluster.planted(plant):
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            cluster.ssh("node1", "nvidia-smi", timeout=2)
        assert time.monotonic() - t0 < 10
        failed = cluster.ssh("node1", "nvcc --version")
        assert failed.returncode != 0 and "nvcc" in failed.stderr
        ds = cluster.ssh("node2", "python3 -c 'import deepspeed.git_version_info as g; "
                                  "print(g.version, sorted(k for k, v in g.installed_ops.items() if v))'; "
                                  "ls /usr/local/lib/libaio.so.1")
        assert ds.stdout.splitlines()[0] == "0.14.4 ['async_io', 'cpu_adam']"
        assert ds.returncode != 0  # libaio planted absent
        real = cluster.ssh("node4", "python3 -c 'import torch, sys; print(torch.__version__, sys.prefix)'", timeout=120)
        assert real.returncode == 0, real.stderr
        assert "+cpu" in real.stdout and ".venv" in real.stdout
    assert cluster.ssh("node1", "nvcc --version").returncode == 0
    assert cluster.ssh("node2", "ls /usr/local/lib/libaio.so.1").returncode == 0


@pytest.mark.cluster
def test_node_to_node_ssh_and_a_broken_mesh_pair(cluster):
    cmd = "for n in node1 node2 node3 node4; do ssh -o BatchMode=yes $n hostname || echo FAIL-$n; done"
    assert cluster.ssh("node1", cmd).stdout.split() == ["node1", "node2", "node3", "node4"]
    with cluster.planted({"node1": {"mesh_broken_to": ["node3"]}}):
        out = cluster.ssh("node1", cmd + " 2>&1")
        assert "Host key verification failed" in out.stdout
        assert [w for w in out.stdout.split() if w.startswith(("node", "FAIL"))] == \
            ["node1", "node2", "FAIL-node3", "node4"]
        assert cluster.ssh("node3", "ssh node1 hostname").stdout.strip() == "node1"  # only that direction
    assert cluster.ssh("node1", "ssh node3 hostname").stdout.strip() == "node3"


@pytest.mark.cluster
def test_mpirun_reaches_every_node_through_the_cluster_ssh_config(cluster):
    for by in ("name", "addr"):
        hostfile = cluster.hostfile("mpich", by=by)
        proc = subprocess.run(cluster.mpirun_cmd("-n", "4", "-ppn", "1", "hostname", hostfile=hostfile),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert sorted(proc.stdout.split()) == ["node1", "node2", "node3", "node4"]


@pytest.mark.cluster
def test_srun_ranks_land_on_their_nodes_and_sbatch_runs(cluster, tmp_path):
    env = dict(os.environ, **cluster.env())
    proc = subprocess.run(["srun", "-N", "4", "--ntasks-per-node=1", "sh", "-c",
                           "echo $SLURM_PROCID $(hostname) $SLURM_NTASKS"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == [f"{i} node{i + 1} 4" for i in range(4)]
    gpus = subprocess.run(["srun", "-N", "2", "--gpus-per-node=2", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert gpus.stdout.split() == ["0,1", "0,1"], gpus.stderr
    script = tmp_path / "job.sh"
    out = tmp_path / "job.out"
    script.write_text(f"#!/bin/sh\n#SBATCH -N 2\n#SBATCH -o {out}\nsrun hostname\n")
    job = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        state = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, env=env).stdout
        if "JobState=COMPLETED" in state or "JobState=FAILED" in state:
            break
        time.sleep(0.5)
    assert "JobState=COMPLETED" in state
    assert sorted(out.read_text().split()) == ["node1", "node2"]


@pytest.mark.slow
@pytest.mark.cluster
def test_up_twice_crash_and_down_leave_nothing_behind(tmp_path):
    reason = cluster_skip_reason()
    if reason:
        pytest.skip(reason)
    c = Cluster(tmp_path / "c", nodes=2)
    try:
        assert c.up() is True
        pids = c.our_pids()
        assert c.up() is False and c.our_pids() == pids  # second up notices and changes nothing
        # crash: every process killed, stale pid files and state left behind
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)
        assert not c.is_running() and (c.dir / "cluster.json").exists()
        assert c.up() is True  # cleans up and starts again
        env = dict(os.environ, **c.env())
        proc = subprocess.run(["srun", "-N", "2", "hostname"], capture_output=True, text=True, timeout=120, env=env)
        assert sorted(proc.stdout.split()) == ["node1", "node2"], proc.stderr
        in_nodes = subprocess.Popen(  # an ssh session still running at stop time
            ["ssh", "-F", str(c.ssh_config), "node2", "sleep 300"], stdout=subprocess.DEVNULL)
        time.sleep(1)
    finally:
        c.down()
    in_nodes.wait(timeout=10)
    assert c.our_pids() == set()
    prefix = str(c.dir) + "/"
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if prefix in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").replace("\0", " "):
                leftovers.append(pid)
            if prefix in Path(f"/proc/{pid}/mountinfo").read_text():
                leftovers.append(f"mount in {pid}")
        except OSError:
            pass
    assert leftovers == []
    assert not any((n.addr, c.port) in listeners() for n in c.nodes)


# ---- the fakes and spec handling on their own (no root, no cluster: these run everywhere, fast)

def test_nvcc_arch_list_follows_the_reference_table():
    assert cuda_facts.gpu_arches("12.1")[0] == "compute_50" and "compute_90" in cuda_facts.gpu_arches("12.1")
    assert "compute_35" in cuda_facts.gpu_arches("11.8") and "compute_35" not in cuda_facts.gpu_arches("12.0")
    assert cuda_facts.max_gcc("11.8") == 11 and cuda_facts.max_gcc("12.1") == 12 and cuda_facts.max_gcc("13.0") == 15
    assert cuda_facts.driver_cuda("550.54.14") == "12.4" and cuda_facts.driver_cuda("535.104.05") == "12.2"


def test_fake_nvcc_13_lists_the_same_archs_as_a_real_one_when_present(tmp_path):
    nvcc = shutil.which("nvcc")
    real = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True) if nvcc else None
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout if nvcc else ""
    if not real or real.returncode != 0 or "release 13.0" not in version:
        pytest.skip("needs a real CUDA 13.0 nvcc on PATH to compare with")
    fake = tmp_path / "nvcc"
    fakes.script(fake, fakes.nvcc("13.0"))
    ours = subprocess.run([str(fake), "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
    assert sorted(ours) == sorted(real.stdout.split())
    assert subprocess.run([str(fake), "--version"], capture_output=True, text=True).stdout.splitlines()[3] == \
        version.splitlines()[3]


def test_spec_files_refuse_unknown_keys_with_the_file_named(tmp_path):
    bad = tmp_path / "spec.yaml"
    bad.write_text("defaults:\n  kernal: 5.4.0\n")
    with pytest.raises(spec.SpecError, match=r"spec.yaml: defaults: unknown spec key\(s\) kernal"):
        spec.load(bad)
    merged = spec.resolve({"defaults": {"torch": {"version": "2.3.1", "cuda": "12.1"}},
                           "nodes": {"node2": {"torch": {"cuda": "11.8"}}}}, "node2")
    assert merged["torch"] == {"version": "2.3.1", "cuda": "11.8"}
