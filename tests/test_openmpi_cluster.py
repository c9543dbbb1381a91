"""The Open MPI paths on the one-machine test cluster: Debian's real Open MPI 4.1 (`mpirun.openmpi`, its orted
started on every node over the nodes' sshd) for `clusterdoc submit --backend mpirun` and for `clusterdoc check`'s
mpi check. Jobs run on `cpu_cluster` (conftest: CPU nodes with the venv's real torch). The MPICH variants are in
test_submit_cluster.py and test_doctor_cluster.py.

No interface flags are needed: orted's out-of-band TCP wire-up back to mpirun works over the cluster bridge as
is (each node in its own network namespace; of the head's addresses orted reaches only the bridge one, and the
others fail at once with no route; the ranks talk gloo, not MPI, so Open MPI's btl is not exercised). What Open MPI does
need (--allow-run-as-root, the ssh agent, `-x` for every variable) clusterdoc adds itself.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.shim_helpers import logged_in_rank_order

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "jobs"
OPENMPI = "/usr/bin/mpirun.openmpi"
pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(not (os.access(OPENMPI, os.X_OK) and shutil.which("orted")),
                                 reason=f"Open MPI is not installed ({OPENMPI}, orted): apt-get install openmpi-bin")]

def clean_env(cluster, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(cluster.env(), HOME=str(cwd))
    return env


def submit_openmpi(cluster, cwd, *args, timeout):
    argv = [sys.executable, "-m", "clusterdoc", "submit", "--backend", "mpirun", "--mpirun", OPENMPI,
            "--hostfile", cluster.hostfile("openmpi"), "--ssh-config", cluster.ssh_config, "--nodes", 4,
            "--no-preflight", "--wait", *args]
    return subprocess.run(list(map(str, argv)), cwd=cwd, env=clean_env(cluster, cwd), capture_output=True,
                          text=True, timeout=timeout)


def job_dir(cwd: Path) -> Path:
    (jd,) = (cwd / "clusterdoc-jobs").iterdir()
    return jd


def test_check_reports_open_mpi_and_every_node_answering(cluster, tmp_path):
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--json", str(cluster.hostfile("openmpi")),
                        "--ssh-config", str(cluster.ssh_config), "--mpirun", OPENMPI, "--checks", "ssh,mpi",
                        "--timeout", "30"], env=clean_env(cluster, tmp_path), capture_output=True, text=True,
                       timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    version = re.search(r"\(Open\s?(?:MPI|RTE)\) (\d[\w.]*)",
                        subprocess.run([OPENMPI, "--version"], capture_output=True, text=True).stdout).group(1)
    assert doc["summary"]["head_mpirun"] == {"path": OPENMPI, "flavour": "openmpi", "version": version}
    assert doc["summary"]["mpirun"]["exit_code"] == 0 and not doc["summary"]["mpirun"]["timed_out"]
    assert doc["summary"]["mpirun"]["command"].startswith(OPENMPI + " --hostfile ")
    mpi = [f for f in doc["findings"] if f["check"] == "mpi"]
    names = [n.name for n in cluster.nodes]
    for n in names:
        mine = [f for f in mpi if f["node"] == n]
        # the head's Open MPI (with its version) found on the node, and a rank of the real mpirun on it
        head_found = f"Open MPI {version} ({OPENMPI})"
        assert any(f["status"] == "ok" and f["message"].startswith(head_found) for f in mine), mine
        assert any(f["status"] == "ok" and f["message"].startswith("answered mpirun") for f in mine), mine
        # the only allowed remark: this machine's mpi4py (pip's MPICH) does not match Open MPI — true here
        for f in mine:
            if f["status"] != "ok":
                assert f["status"] == "warn" and "bound to 'MPICH" in f["message"] \
                       and f"mpirun is Open MPI {version}" in f["message"], f
    assert all(f["status"] == "ok" for f in doc["findings"] if f["check"] == "ssh")
    assert p.returncode == 0, p.stderr


def test_nodes_with_mpi4py_on_open_mpi_pass(cpu_cluster, tmp_path):
    """The nodes' real mpi4py (the venv's) bound to Debian's Open MPI: its library version string ends in a NUL
    byte. Every node passes, and the check's mpi4py allreduce runs across them under mpirun.openmpi."""
    libmpi = {"env": {"MPI4PY_LIBMPI": "/usr/lib/x86_64-linux-gnu/libmpi.so.40"}}
    with cpu_cluster.planted({n.name: libmpi for n in cpu_cluster.nodes}):
        p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--json",
                            str(cpu_cluster.hostfile("openmpi")), "--ssh-config", str(cpu_cluster.ssh_config),
                            "--mpirun", OPENMPI, "--checks", "ssh,mpi", "--timeout", "30"],
                           env=clean_env(cpu_cluster, tmp_path), capture_output=True, text=True, timeout=180)
    doc = json.loads(p.stdout)
    assert [f for f in doc["findings"] if f["status"] != "ok"] == [] and p.returncode == 0, doc["findings"]
    for node in doc["nodes"]:
        assert node["facts"]["malformed"] == []
        assert node["facts"]["mpi"]["mpi4py"]["library"].startswith("Open MPI v")
    assert doc["summary"]["mpirun"]["mpi4py"] and doc["summary"]["mpirun"]["allreduce_ok"]


def test_submit_runs_to_completion_with_rank_tagged_logs_from_every_node(cpu_cluster, tmp_path):
    res = submit_openmpi(cpu_cluster, tmp_path, JOBS / "train_ddp.py", "--epochs", 1, timeout=420)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "job completed: all 4 ranks exited 0" in res.stderr
    done = [l for l in res.stderr.splitlines() if "done after" in l]
    assert sorted(re.match(r"\[rank (\d)\]", l).group(1) for l in done) == ["0", "1", "2", "3"], res.stderr[-3000:]
    assert logged_in_rank_order(done), res.stderr[-3000:]  # the records' times (the screen's order is mpirun's)
    done.sort(key=lambda l: re.match(r"\[rank (\d)\]", l).group(1))
    for r, line in enumerate(done):
        assert re.search(rf"\[rank {r}/4 node{r + 1}\]", line), line  # ppr:1:node: rank r on the r-th host
    jd = job_dir(tmp_path)
    # it really was Open MPI, reaching the nodes through the cluster's ssh config
    cmd = (jd / "mpirun.cmd").read_text()
    assert cmd.startswith(f"{OPENMPI} --hostfile ") and "--map-by ppr:1:node" in cmd
    assert "--mca plm_rsh_agent" in cmd and "-x MASTER_ADDR=node1" in cmd
    assert (jd / "hostfile.openmpi").read_text().splitlines() == [f"node{i} slots=1" for i in range(1, 5)]
    assert all(json.loads((jd / f"rank{r}.exit").read_text())["code"] == 0 for r in range(4))


def test_a_failing_rank_is_named_with_its_exit_code_without_a_hang(cpu_cluster, tmp_path):
    # the other ranks block in an all_reduce the failed rank never joins: without a timeout this would hang
    res = submit_openmpi(cpu_cluster, tmp_path, JOBS / "fail_exit_code.py", "--rank", 2, "--code", 3, timeout=180)
    assert res.returncode == 1, res.stderr[-3000:]
    assert "job failed: rank 2 exited with code 3" in res.stderr.strip().splitlines()[-1]
    assert json.loads((job_dir(tmp_path) / "rank2.exit").read_text())["code"] == 3


def test_ctrl_c_stops_the_ranks_on_every_node(cpu_cluster, tmp_path):
    # the nodes share the machine's pid namespace: a rank left behind on any node shows in pgrep
    script = tmp_path / "sleeps_under_openmpi.py"
    script.write_text("import os, time\nprint('sleeping', os.environ['RANK'], flush=True)\ntime.sleep(600)\n")
    argv = [sys.executable, "-m", "clusterdoc", "submit", "--backend", "mpirun", "--mpirun", OPENMPI, "--hostfile",
            cpu_cluster.hostfile("openmpi"), "--ssh-config", cpu_cluster.ssh_config, "--nodes", 4, "--no-preflight",
            "--wait", script]
    proc = subprocess.Popen(list(map(str, argv)), cwd=tmp_path, env=clean_env(cpu_cluster, tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ranks_alive():
        return subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True).stdout.split()

    try:
        deadline = time.monotonic() + 120
        def sleeping():
            return sum("sleeping" in p.read_text() for p in tmp_path.glob("clusterdoc-jobs/*/rank?.out"))
        while sleeping() < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
        assert sleeping() == 4, "the 4 ranks never started"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-3000:]
    assert "clusterdoc submit: cancelled" in err
    time.sleep(1)  # orted's last kills
    assert ranks_alive() == [], subprocess.run(["ps", "-ef"], capture_output=True, text=True).stdout
