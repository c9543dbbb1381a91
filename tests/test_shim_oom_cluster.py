"""The OOM retry across collectives under Slurm on the one-machine test cluster: jobs/train_ddp_oom.py on four
nodes through `clusterdoc submit --backend slurm`, rank 1 running out of memory in its backward while the
others are in DDP's gradient all_reduce (written against the cluster fixtures, not addresses)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shim_helpers import logged_in_rank_order

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_slurm_job_with_one_rank_oom_in_backward_finishes_on_one_batch_everywhere(cpu_cluster, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(cpu_cluster.env(), HOME=str(tmp_path))
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "slurm", "--nodes", "4",
                          "--no-preflight", "--wait", str(ROOT / "jobs" / "train_ddp_oom.py"), "--fits", "200",
                          "--oom-at", "backward"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "job completed: all 4 ranks exited 0" in res.stderr
    done = re.findall(r"\[rank (\d)/4 (\S+)\].*trained with batch size (\d+), parameter checksum (\S+)", res.stderr)
    assert sorted(d[0] for d in done) == ["0", "1", "2", "3"], res.stderr[-3000:]
    lines = [l for l in res.stderr.splitlines() if "trained with batch size" in l]
    assert logged_in_rank_order(lines), res.stderr[-3000:]  # the records' times (the screen's order is srun's)
    assert {d[1] for d in done} == {"node1", "node2", "node3", "node4"}
    assert {(d[2], d[3]) for d in done} == {("186", done[0][3])}  # 256, 230, 207 fail on rank 1; 186 fits
