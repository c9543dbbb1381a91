"""clusterdoc submit on the one-machine test cluster: real slurmctld/slurmd through submitit, real MPICH
mpirun over the nodes' sshd, real gloo process groups; preflight refusing a node with a planted failure.

The nodes run the venv's real torch (spec `torch: real`) and have no GPUs, so the example trains with gloo.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CPU_NODE
from tests.shim_helpers import logged_in_rank_order

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "jobs"
pytestmark = [pytest.mark.cluster, pytest.mark.slow]

# A healthy CPU node: the default spec's toolkit and driver, real torch, no GPU.
def submit(cluster, cwd, *args, timeout=420):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(cluster.env(), HOME=str(cwd))
    return subprocess.run([sys.executable, "-m", "clusterdoc", "submit", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def backend_args(cluster, backend):
    if backend == "mpirun":
        return ["--backend", "mpirun", "--hostfile", cluster.hostfile("plain"), "--ssh-config", cluster.ssh_config,
                "--mpirun", cluster.mpirun]
    return ["--backend", backend]


@pytest.mark.parametrize("backend", ["local", "slurm", "mpirun"])
def test_example_runs_to_completion_with_rank_tagged_ordered_logs(cpu_cluster, tmp_path, backend):
    # the preflight is exercised below (and under Slurm it is the job's own first step, kept on here)
    pre = [] if backend == "slurm" else ["--no-preflight"]
    res = submit(cpu_cluster, tmp_path, *backend_args(cpu_cluster, backend), "--nodes", 4, *pre, "--wait",
                 JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "job completed: all 4 ranks exited 0" in res.stderr
    # a healthy job: rank 0's pace summary ends it, and no straggler is named, whichever launcher started it
    assert "[rank 0] clusterdoc: per-rank pace (" in res.stderr, res.stderr[-3000:]
    assert "straggler" not in (res.stdout + res.stderr).lower(), res.stderr[-3000:]
    done = [l for l in res.stderr.splitlines() if "done after" in l]
    assert sorted(re.match(r"\[rank (\d)\]", l).group(1) for l in done) == ["0", "1", "2", "3"], res.stderr[-3000:]
    assert logged_in_rank_order(done), res.stderr[-3000:]  # the records' times (the screen's order is the launcher's)
    if backend == "local":  # one machine's pipes, read in turn: the screen keeps the order
        assert [re.match(r"\[rank (\d)\]", l).group(1) for l in done] == ["0", "1", "2", "3"], res.stderr[-3000:]
    done.sort(key=lambda l: re.match(r"\[rank (\d)\]", l).group(1))
    for r, line in enumerate(done):
        # the launcher's tag and the shim's own (rank/world host): on the cluster each rank is on its node
        host = "node" if backend != "local" else ""
        assert re.search(rf"\[rank {r}/4 {host}", line), line
    if backend != "local":
        assert {re.search(r"\[rank \d/4 (\S+)\]", l).group(1) for l in done} == {"node1", "node2", "node3", "node4"}
    if backend == "slurm":
        assert "[preflight] preflight ok: starting the ranks" in res.stderr
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    assert all((jd / f"rank{r}.out").exists() and (jd / f"rank{r}.exit").exists() for r in range(4))


@pytest.mark.parametrize("backend", ["slurm", "mpirun"])
def test_a_failing_rank_is_named_without_a_hang(cpu_cluster, tmp_path, backend):
    res = submit(cpu_cluster, tmp_path, *backend_args(cpu_cluster, backend), "--nodes", 4, "--no-preflight", "--wait",
                 JOBS / "fail_exit_code.py", "--rank", 2, "--code", 3, timeout=300)
    assert res.returncode == 1, res.stderr[-3000:]
    assert "job failed: rank 2 exited with code 3" in res.stderr.strip().splitlines()[-1]


def test_slurm_preflight_refuses_a_planted_old_kernel(cpu_cluster, tmp_path):
    with cpu_cluster.planted({"node2": {**CPU_NODE, "kernel": "4.4.0-210-generic"}}):
        res = submit(cpu_cluster, tmp_path, "--backend", "slurm", "--nodes", 4, "--wait", JOBS / "train_ddp.py")
    assert res.returncode == 1, res.stderr[-3000:]
    assert re.search(r"\[preflight\] .*kernel node2: kernel 4.4.0-210-generic is older than 5.5", res.stderr)
    assert "the preflight step refused the allocation" in res.stderr
    assert "[rank " not in res.stderr  # no rank started
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    assert "preflight FAILED" in (jd / "preflight.txt").read_text()


def test_mpirun_preflight_refuses_a_planted_old_kernel_before_submitting(cpu_cluster, tmp_path):
    with cpu_cluster.planted({"node3": {**CPU_NODE, "kernel": "4.4.0-210-generic"}}):
        res = submit(cpu_cluster, tmp_path, *backend_args(cpu_cluster, "mpirun"), "--nodes", 4, "--wait",
                     JOBS / "train_ddp.py")
    assert res.returncode == 1, res.stderr[-3000:]
    assert "kernel node3: kernel 4.4.0-210-generic is older than 5.5" in res.stderr
    assert "preflight found problems; job not submitted" in res.stderr
    assert not (tmp_path / "clusterdoc-jobs").exists()


def test_auto_picks_slurm_and_no_wait_returns_ids_that_status_and_logs_accept(cpu_cluster, tmp_path):
    import time

    script = tmp_path / "hello.py"
    script.write_text("import os, socket\nprint('hello from rank', os.environ['RANK'], 'on', socket.gethostname())\n")
    res = submit(cpu_cluster, tmp_path, "--nodes", 2, "--no-preflight", "--no-wait", script)
    assert res.returncode == 0, res.stderr
    # the environment chose Slurm: the first line says so, and how to run here instead
    assert res.stderr.splitlines()[0] == "backend: slurm (SLURM_CONF is set; --backend local to run here)", res.stderr
    job_id = res.stdout.strip()
    assert job_id.startswith("slurm-"), res.stderr
    slurm_id = re.search(r"slurm job (\d+)", res.stderr).group(1)
    env = {**os.environ, **cpu_cluster.env(), "HOME": str(tmp_path)}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "clusterdoc", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        st = cli("status", slurm_id)  # the Slurm id finds the job too
        if re.search(r": (COMPLETED|FAILED|CANCELLED|LOST)", st.stdout.splitlines()[0]):
            break
        time.sleep(2)
    assert f"job {job_id}: COMPLETED" in st.stdout and f"(id {slurm_id})" in st.stdout, st.stdout
    logs = cli("logs", job_id, "--rank", "1")
    assert "[rank 1] hello from rank 1 on node2" in logs.stdout


def test_a_slurm_job_that_can_never_start_fails_instead_of_pending_forever(cpu_cluster, tmp_path):
    res = submit(cpu_cluster, tmp_path, "--backend", "slurm", "--nodes", 8, "--no-preflight", "--wait",
                 JOBS / "train_ddp.py", timeout=120)
    assert res.returncode == 1
    assert re.search(r"Slurm will never start job \d+: Partition\w+ \(.*\); cancelled it", res.stderr), res.stderr


def test_a_slurm_job_sbatch_refuses_is_not_reported_as_submitted(cluster, tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    res = submit(cluster, tmp_path, "--backend", "slurm", "--partition", "nosuch", "--no-preflight", "--no-wait",
                 script, timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout == ""  # no job id: nothing was submitted
    assert "was not submitted: could not start: sbatch refused the job" in res.stderr, res.stderr
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    env = {**os.environ, **cluster.env(), "HOME": str(tmp_path)}
    st = subprocess.run([sys.executable, "-m", "clusterdoc", "status", jd.name], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=60)
    assert st.returncode == 1
    (reason,) = [line for line in st.stdout.splitlines() if line.strip().startswith("reason")]
    assert "Invalid partition name" in reason and "(fix: check --partition" in reason, st.stdout
    assert "no exit record" not in st.stdout
