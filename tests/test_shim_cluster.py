"""shim.init() under real MPICH mpirun and real Slurm srun on the one-machine test cluster.

Each rank runs tests/shim_jobs/job.py init on its own node: rank/world/local rank from the launcher,
MASTER_ADDR/PORT agreed (mpi4py under mpirun, nodelist + job id under srun), a gloo all_reduce over
all four nodes. Also: an sbatch shell running Python without srun gets a clear error, not a hang.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.shim_helpers import parse_results

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "tests" / "shim_jobs" / "job.py"
pytestmark = [pytest.mark.cluster, pytest.mark.slow]
def clean_env(cluster, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_", "MASTER_", "RANK", "WORLD_SIZE", "LOCAL_"))}
    env.update(cluster.env(), PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               CLUSTERDOC_INIT_TIMEOUT="60", **extra)
    return env


def parse(stdout):
    return sorted(parse_results(stdout), key=lambda r: r["rank"])


def check_four_ranks(found, launcher):
    assert [r["rank"] for r in found] == [0, 1, 2, 3]
    for r in found:
        assert (r["world"], r["local"], r["lws"], r["launcher"], r["sum"]) == (4, 0, 1, launcher, 10.0), r
        assert r["same"] and r["backend"] == "gloo"
    assert sorted(r["host"] for r in found) == ["node1", "node2", "node3", "node4"]
    assert len({(r["addr"], r["port"]) for r in found}) == 1  # every rank met at the same place


def test_init_under_mpich_mpirun_agrees_through_mpi4py(cpu_cluster):
    cmd = cpu_cluster.mpirun_cmd("-n", "4", "-ppn", "1", sys.executable, str(JOB), "init")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=clean_env(cpu_cluster))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    found = parse(proc.stdout)
    check_four_ranks(found, "mpich")
    assert found[0]["addr"] == "node1"  # rank 0's own name, broadcast by rank 0


def test_init_under_srun_uses_the_nodelist_and_job_id(cpu_cluster):
    cmd = ["srun", "-N", "4", "--ntasks-per-node=1", sys.executable, str(JOB), "init"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=clean_env(cpu_cluster))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    found = parse(proc.stdout)
    check_four_ranks(found, "slurm")
    assert found[0]["addr"] == "node1" and 15000 <= int(found[0]["port"]) < 30000


def test_sbatch_shell_without_srun_is_a_clear_error(cpu_cluster, tmp_path):
    out = tmp_path / "job.out"
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/sh\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH -o {out}\n"
                      f"{sys.executable} {JOB} init\n")
    env = clean_env(cpu_cluster)
    job = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 180
    state = ""
    while time.monotonic() < deadline:
        state = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, env=env).stdout
        if any(s in state for s in ("JobState=COMPLETED", "JobState=FAILED", "JobState=CANCELLED")):
            break
        time.sleep(1)
    assert "JobState=FAILED" in state, state
    text = out.read_text()
    assert "RankEnvironmentError" in text and "srun" in text and "SLURM_NTASKS=2" in text, text[-2000:]
