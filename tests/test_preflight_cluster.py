"""Issue 12 item 5 on the test cluster: the mpirun preflight judges the job's interpreter, like Slurm's.

The default spec's nodes have 8 GPUs each and a CUDA torch for their python3; the job's python is this
venv's, whose torch is the CPU build: the preflight must refuse it (it probed python3 before). With the
`cpu` spec (no GPU, the venv's torch) the same job passes the preflight and runs.
"""

import re

import pytest

from tests.cluster import spec as specs
from tests.test_submit_cluster import JOBS, ROOT, backend_args, submit

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_mpirun_preflight_refuses_a_cpu_only_job_python_on_gpu_nodes(cluster, tmp_path):
    res = submit(cluster, tmp_path, *backend_args(cluster, "mpirun"), "--nodes", 4, "--wait",
                 JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    assert re.search(r"cuda node\[1-4\]: torch \S+ is a CPU-only build but the node has 8 GPU", res.stderr)
    assert "preflight found problems; job not submitted" in res.stderr


def test_mpirun_preflight_passes_the_cpu_spec(cluster, tmp_path):
    cpu = specs.load(ROOT / "tests" / "cluster" / "cpu.yaml")["defaults"]
    with cluster.planted({n.name: cpu for n in cluster.nodes}):
        res = submit(cluster, tmp_path, *backend_args(cluster, "mpirun"), "--nodes", 4, "--wait",
                     JOBS / "train_ddp.py", "--epochs", 1)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "job completed: all 4 ranks exited 0" in res.stderr
