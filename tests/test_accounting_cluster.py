"""Accounting as evidence on the test cluster as a real site (issue 42): jobs the controller has forgotten
(MinJobAge 10 s) explained by `why` and shown by `status` from sacct, ours and not ours, and the association
check before anything is queued. The two time-limited jobs start together when the module does (a minute of
time limit, then slurmctld's 30 s check: ~90 s), so the module takes about as long as one of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterdoc.launch import accounting

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

LONG = "import time\nfor i in range(600):\n    print('step', i, flush=True)\n    time.sleep(1)\n"


def env_of(cluster, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "SBATCH_", "PMI_"))}
    return {**env, **cluster.env(), "HOME": str(home)}


def run(argv, cluster, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env_of(cluster, cwd), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def clusterdoc(cluster, cwd: Path, *args, timeout: float = 90) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "clusterdoc", *args], cluster, cwd, timeout)


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def sbatch(cluster, cwd: Path, *args) -> str:
    res = run(["sbatch", "--parsable", *args], cluster, cwd)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().split(";")[0]


def forgotten(cluster, cwd: Path, job: str, state: str) -> bool:
    """slurmctld no longer knows the job and accounting has its end."""
    show = run(["scontrol", "show", "job", job], cluster, cwd)
    if "Invalid job id specified" not in show.stderr:
        return False
    acct = run(["sacct", "-n", "-P", "-X", "-j", job, "-o", "State"], cluster, cwd)
    return acct.stdout.strip().startswith(state)


@pytest.fixture(scope="module", autouse=True)
def timed_out(site_cluster, tmp_path_factory):
    """Two jobs with a one-minute time limit, started at once before the module's first test (the others run
    while they wait): one sbatch'ed by hand (its output sbatch's default slurm-JOB.out), one clusterdoc's own
    whose `submit` was SIGKILLed (nothing recorded its end)."""
    cwd = tmp_path_factory.mktemp("timeout")
    foreign = sbatch(site_cluster, cwd, "-t", "1", "-N", "1", "--wrap", "echo start; sleep 600")
    (cwd / "long.py").write_text(LONG)
    sub = clusterdoc(site_cluster, cwd, "submit", "--backend", "slurm", "--nodes", "1", "--time", "1",
                     "--no-preflight", "--hang-timeout", "0", "long.py")
    assert sub.returncode == 0, sub.stderr
    (jd,) = (cwd / "clusterdoc-jobs").iterdir()
    rec = wait_until(lambda: (r := json.loads((jd / "job.json").read_text())).get("backend_id") and r, 60,
                     "the Slurm job id on record")
    pid = rec["supervisor_pid"]
    if f"--supervise {jd}" in Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " "):
        os.kill(pid, signal.SIGKILL)  # ours: the supervisor that submit detached
    return cwd, foreign, jd.name, rec["backend_id"]


def test_a_wrong_account_is_refused_with_the_accounts_the_user_has(site_cluster, monkeypatch):
    for key, value in site_cluster.env().items():
        monkeypatch.setenv(key, value)
    refused = accounting.check_association("proj2", None, None)
    assert refused is not None, "proj2 is not root's: Slurm refuses it"
    assert "account 'proj2' is not one of root's" in refused.message and "proj1 (QOS normal,short)" in refused.message
    assert refused.hint.startswith("--account proj1")
    assert accounting.check_association("proj1", "debug", "short") is None
    qos = accounting.check_association("proj1", None, "nosuchqos")
    assert qos is not None and "normal, short" in qos.message


def test_a_job_the_user_cancels_is_cancelled_by_that_user(site_cluster, tmp_path):
    job = sbatch(site_cluster, tmp_path, "-N", "2", "--wrap", "srun sleep 600")
    wait_until(lambda: run(["squeue", "-h", "-j", job, "-o", "%T"], site_cluster, tmp_path).stdout.strip()
               == "RUNNING", 60, "the job to run")
    assert run(["scancel", job], site_cluster, tmp_path).returncode == 0
    wait_until(lambda: forgotten(site_cluster, tmp_path, job, "CANCELLED"), 90, "the controller to forget it")
    why = clusterdoc(site_cluster, tmp_path, "why", job, "--no-probe")
    assert why.returncode == 1 and "cause     scheduler: the job was cancelled by root (uid 0)" in why.stdout, why
    status = clusterdoc(site_cluster, tmp_path, "status", job)
    assert status.stdout.startswith(f"slurm job {job}: CANCELLED by root (uid 0)\n"), status
    assert "from    accounting (sacct)" in status.stdout


def test_a_foreign_job_ended_by_its_time_limit_and_forgotten(site_cluster, timed_out):
    cwd, job, _, _ = timed_out
    wait_until(lambda: forgotten(site_cluster, cwd, job, "TIMEOUT"), 240, "the time limit, then the forgetting")
    why = clusterdoc(site_cluster, cwd, "why", job, "--no-probe")
    assert why.returncode == 1, why
    assert "cause     scheduler: Slurm ended the job: the time limit (00:01:00, ran " in why.stdout, why.stdout
    assert f"read      {cwd / f'slurm-{job}.out'}" in why.stdout
    status = clusterdoc(site_cluster, cwd, "status", job)
    assert status.returncode == 1 and status.stdout.startswith(f"slurm job {job}: TIMEOUT\n"), status


def test_our_job_ended_by_its_time_limit_with_submit_killed(site_cluster, timed_out):
    cwd, _, ours, slurm_id = timed_out
    wait_until(lambda: forgotten(site_cluster, cwd, slurm_id, "TIMEOUT"), 240, "the time limit, then the forgetting")
    status = clusterdoc(site_cluster, cwd, "status", ours)
    assert f"job {ours}: TIMEOUT" in status.stdout, status
    why = clusterdoc(site_cluster, cwd, "why", ours, "--no-probe")
    assert "cause     scheduler: Slurm ended the job: the time limit" in why.stdout, why.stdout
