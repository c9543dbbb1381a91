"""`clusterdoc why` and `submit --retries` on the test cluster, with real Slurm: a node dies mid-run.

Five CPU nodes (tests/cluster/cpu.yaml), a 4-rank job (jobs/train_resume.py, a checkpoint every K steps) on
node1-4; mid-run every process of node3 (rank 2's node) is killed and its slurmd with it, as when a node
crashes. `why` names node3 and the evidence; `--retries 1` runs the job again without node3, the script
resumes from its checkpoint and ends at the same step as an undisturbed run, repeating at most K steps; the
same on mpirun. Slurm's warning ahead of the time limit checkpoints and requeues. (A rank's own exception is
not retried: tests/test_why.py, on the local backend: the decision is the same on every backend.)
"""

from __future__ import annotations

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

from tests.cluster import Cluster
from tests.cluster.procs import read_pid
from tests.conftest import TEST_CLUSTERS, _print_skip, cluster_skip_reason

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "jobs" / "train_resume.py"
STEPS, EVERY = 30, 5
pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster5():
    reason = cluster_skip_reason()
    if reason:
        _print_skip(reason)
        pytest.skip(reason)
    d = TEST_CLUSTERS / f"why{os.getpid()}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "owner.pid").write_text(f"{os.getpid()}\n")
    c = Cluster(d, nodes=5, spec=ROOT / "tests" / "cluster" / "cpu.yaml")
    try:
        c.up()
        yield c
    finally:
        c.down()
        shutil.rmtree(d, ignore_errors=True)


def env_for(cluster, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    return {**env, **cluster.env(), "HOME": str(home)}


def cli(cluster, cwd, *args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "clusterdoc", *map(str, args)], cwd=cwd, env=env_for(cluster, cwd),
                          capture_output=True, text=True, timeout=timeout, **kw)


def kill_node(cluster, name: str) -> None:
    """The node crashes: its slurmd first (it would restart nothing), then every process on it, SIGKILL."""
    slurmd = read_pid(cluster.slurm.dir / f"slurmd-{name}.pid")
    for pid in [slurmd, *cluster.node_pids(name)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, TypeError):
            pass


def wait_for_step(ckpt_log: Path, step: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ckpt_log.exists() and re.search(rf"checkpoint at step {step}\b", ckpt_log.read_text(errors="replace")):
            return
        time.sleep(0.2)
    raise AssertionError(f"no checkpoint at step {step} in {ckpt_log}")


def backend_args(cluster, backend):
    if backend == "mpirun":
        return ["--backend", "mpirun", "--hostfile", cluster.hostfile("plain"), "--ssh-config", cluster.ssh_config,
                "--mpirun", cluster.mpirun]
    return ["--backend", backend]


@pytest.mark.parametrize("backend", ["slurm", "mpirun"])
def test_a_killed_node_is_named_and_the_job_completes_without_it(cluster5, tmp_path, backend):
    cmd = [sys.executable, "-m", "clusterdoc", "submit", *backend_args(cluster5, backend), "--nodes", 4,
           "--no-preflight", "--retries", 1, "--wait", "--hang-timeout", 0, JOB, "--steps", STEPS, "--every", EVERY,
           "--step-time", 0.1, "--ckpt", tmp_path / "ckpt"]
    proc = subprocess.Popen(list(map(str, cmd)), cwd=tmp_path, env=env_for(cluster5, tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / "clusterdoc-jobs").glob("*/rank0.out")) and time.monotonic() < deadline:
            time.sleep(0.2)
        (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
        wait_for_step(jd / "rank0.out", 10)
        assert json.loads((jd / "rank2.start").read_text())["host"] == "node3"
        kill_node(cluster5, "node3")
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-4000:]
    assert re.search(r"attempt 1 failed: node: node3 failed.*retrying without node3 \(attempt 2\)", err), err[-3000:]
    # attempt 1: the healthy ranks that noticed are not blamed; node3 is
    first = json.loads((jd / "job.json").read_text())["attempts"][0]
    assert first["why"]["category"] == "node" and first["why"]["nodes"] == ["node3"], first
    assert "node3 failed" in first["outcome"]["message"], first["outcome"]
    assert first["outcome"]["failed"] == [2], first["outcome"]
    # attempt 2: without node3, resumed from the checkpoint, the same final step
    hosts = {json.loads((jd / f"rank{r}.start").read_text())["host"] for r in range(4)}
    assert hosts == {"node1", "node2", "node4", "node5"}, hosts
    out0 = (jd / "rank0.out").read_text()
    resumed = re.search(r"resumed from step (\d+) \(restart 1, previous attempt (\S+)\)", out0)
    assert resumed and resumed.group(2) == str(jd / "attempt1"), out0
    done = [re.search(r"done after (\d+) steps \((\d+) executed", (jd / f"rank{r}.out").read_text()) for r in range(4)]
    assert all(d and int(d.group(1)) == STEPS for d in done), [(jd / f"rank{r}.out").read_text() for r in range(4)]
    at_kill = max(int(s) for s in re.findall(r"checkpoint at step (\d+)", (jd / "attempt1" / "rank0.out").read_text()))
    repeated = int(resumed.group(1))
    assert at_kill - repeated <= EVERY and STEPS - repeated == int(done[0].group(2))
    # why names node3 with the evidence, for the first attempt; status shows both attempts
    why = cli(cluster5, tmp_path, "why", jd.name, "--attempt", 1, "--ssh-config", cluster5.ssh_config)
    assert why.returncode == 1, why.stdout + why.stderr
    assert "cause     node: node3 failed: rank 2 there vanished without an exit record" in why.stdout, why.stdout
    # the ranks on the healthy nodes saw the connection drop (gloo); under MPICH mpirun saw its ssh session end
    # first and stopped them before they could
    witness = r"(rank [13] on node[24]|mpirun \(its ssh session\))"
    assert re.search(rf"evidence  {witness} lost its connection to node3's address: 198\.18\.\d+\.\d+", why.stdout)
    assert "code:" not in why.stdout, why.stdout  # no healthy rank is blamed
    status = cli(cluster5, tmp_path, "status", jd.name)
    assert "attempt 1:" in status.stdout and "attempt 2:" in status.stdout, status.stdout
    assert "why: node: node3 failed" in status.stdout and "next attempt without node3" in status.stdout, status.stdout
    assert f"job {jd.name}: COMPLETED" in status.stdout


def test_slurms_warning_before_the_time_limit_checkpoints_and_requeues(cluster5, tmp_path):
    """Slurm's `--signal=B:USR1@N` warning, sent to the batch shell as Slurm sends it (scancel --batch), reaches
    the ranks through the shell's trap: they checkpoint and stop, and the job runs again from the checkpoint."""
    cmd = [sys.executable, "-m", "clusterdoc", "submit", "--backend", "slurm", "--nodes", 4, "--no-preflight",
           "--retries", 1, "--wait", JOB, "--steps", STEPS, "--every", EVERY, "--step-time", 0.1,
           "--ckpt", tmp_path / "ckpt"]
    env = env_for(cluster5, tmp_path)
    proc = subprocess.Popen(list(map(str, cmd)), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / "clusterdoc-jobs").glob("*/rank0.out")) and time.monotonic() < deadline:
            time.sleep(0.2)
        (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
        wait_for_step(jd / "rank0.out", 10)
        slurm_id = json.loads((jd / "job.json").read_text())["backend_id"]
        subprocess.run(["scancel", "--batch", "--signal=USR1", slurm_id], env=env, check=True, timeout=30)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-4000:]
    assert "clusterdoc: SIGUSR1 from Slurm" in (jd / "submitit" / f"{slurm_id}_0_log.err").read_text()
    assert re.search(r"attempt 1 failed: scheduler: Slurm warned of the time limit.*retrying \(attempt 2\)", err), err
    stopped = re.search(r"rank 0: stopping at step (\d+) for the requeue", (jd / "attempt1" / "rank0.out").read_text())
    resumed = re.search(r"resumed from step (\d+) \(restart 1", (jd / "rank0.out").read_text())
    assert stopped and resumed and stopped.group(1) == resumed.group(1)  # nothing lost, nothing repeated
    assert f"done after {STEPS} steps" in (jd / "rank3.out").read_text()


def test_why_on_a_slurm_job_clusterdoc_did_not_start(cluster5, tmp_path):
    """`why SLURM_ID`: the output files come from `scontrol show job`; here a batch job that prints a real
    job's CUDA error (tests/fixtures/why/logs) and fails."""
    log = ROOT / "tests" / "fixtures" / "why" / "logs" / "codegeex-160-cuda-error.log"
    env = env_for(cluster5, tmp_path)
    res = subprocess.run(["sbatch", "--parsable", "-o", str(tmp_path / "slurm-%j.out"), "--wrap",
                          f"cat {log} >&2; exit 1"], env=env, capture_output=True, text=True, timeout=30, check=True)
    job = res.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], env=env, capture_output=True, text=True,
                               timeout=30).stdout.strip()
        if not state:
            break
        time.sleep(0.5)
    why = cli(cluster5, tmp_path, "why", job)
    assert why.returncode == 1, why.stdout + why.stderr
    assert "cause     code: a CUDA kernel read or wrote out of bounds" in why.stdout, why.stdout
    assert "RuntimeError: CUDA error: an illegal memory access was encountered" in why.stdout, why.stdout
