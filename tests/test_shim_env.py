"""Rank environment rules, from environment dicts alone (no processes)."""
import subprocess
import sys

import pytest

from clusterdoc.shim.env import RankEnvironmentError, _local_tasks, port_from_job_id, resolve


def no_dns(host):
    raise OSError("does not resolve")


def test_torchrun_variables():
    env = resolve({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                   "MASTER_ADDR": "n1", "MASTER_PORT": "29500"})
    assert (env.launcher, env.rank, env.world_size, env.local_rank, env.local_world_size) == ("torchrun", 3, 8, 1, 2)
    assert env.exports()["MASTER_PORT"] == "29500"


def slurm_task(**extra):
    e = {"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": "5", "SLURM_NTASKS": "8",
         "SLURM_LOCALID": "1", "SLURM_NODEID": "2", "SLURM_JOB_NODELIST": "gpu[01-04]",
         "SLURM_STEP_TASKS_PER_NODE": "2(x4)"}
    e.update(extra)
    return e


def test_slurm_task_under_srun_picks_first_host_and_job_port():
    env = resolve(slurm_task(), resolve_host=lambda h: "10.0.0.1")
    assert (env.launcher, env.rank, env.world_size, env.local_rank, env.local_world_size) == ("slurm", 5, 8, 1, 2)
    assert env.master_addr == "gpu01"
    assert env.master_port == port_from_job_id("4242", "0")
    assert 15000 <= env.master_port < 30000


def test_slurm_skips_unresolvable_first_host():
    env = resolve(slurm_task(), resolve_host=lambda h: no_dns(h) if h == "gpu01" else "10.0.0.2")
    assert env.master_addr == "gpu02"


def test_slurm_no_host_resolves_is_a_clear_error():
    with pytest.raises(RankEnvironmentError, match="MASTER_ADDR"):
        resolve(slurm_task(), resolve_host=no_dns)


def test_sbatch_shell_without_srun_is_an_error_not_a_hang():
    e = slurm_task()
    del e["SLURM_STEP_ID"], e["SLURM_PROCID"]
    with pytest.raises(RankEnvironmentError, match="srun"):
        resolve(e)


def test_mpi_beats_slurm_inside_an_allocation():
    # Hydra launches its proxies with srun: SLURM_PROCID counts nodes there, PMI_RANK counts ranks.
    env = resolve({**slurm_task(), "PMI_RANK": "6", "PMI_SIZE": "8", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"})
    assert (env.launcher, env.rank, env.world_size, env.local_rank, env.local_world_size) == ("mpich", 6, 8, 0, 2)
    assert env.master_addr is None  # agreed through mpi4py at init


def test_openmpi_variables():
    env = resolve({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
                   "OMPI_COMM_WORLD_LOCAL_SIZE": "1"})
    assert (env.launcher, env.rank, env.world_size, env.local_rank, env.local_world_size) == ("openmpi", 2, 4, 0, 1)


def test_mpich_pmi_port_leaves_ranks_to_mpi4py():
    env = resolve({"PMI_PORT": "host:1234", "PMI_ID": "3"})
    assert env.launcher == "mpich" and env.rank == -1


def test_submitit_local():
    env = resolve({"SUBMITIT_LOCAL_GLOBALID": "1", "SUBMITIT_LOCAL_LOCALID": "1", "SUBMITIT_LOCAL_NTASKS": "2",
                   "SUBMITIT_LOCAL_JOB_ID": "777"})
    assert (env.launcher, env.rank, env.world_size, env.master_addr) == ("submitit-local", 1, 2, "127.0.0.1")
    assert env.master_port == port_from_job_id("777")


def test_plain_python_is_a_single_rank():
    env = resolve({})
    assert (env.launcher, env.rank, env.world_size) == ("single", 0, 1)


def test_bad_integer_names_the_variable():
    with pytest.raises(RankEnvironmentError, match="SLURM_PROCID"):
        resolve(slurm_task(SLURM_PROCID="x"), resolve_host=lambda h: "10.0.0.1")


def test_slurm_tasks_per_node_forms():
    assert [_local_tasks("2(x3),1", i) for i in range(4)] == [2, 2, 2, 1]
    assert _local_tasks("4", 0) == 4


def test_importing_the_shim_changes_nothing():
    code = ("import sys; import clusterdoc.shim as s; print('torch' in sys.modules); import torch.distributed as d;"
            "print(getattr(d.all_reduce, '__clusterdoc_original__', None) is None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout.split()
    assert out == ["False", "True"]


def test_debug_switch_by_environment():
    code = ("import clusterdoc.shim; import torch.distributed as d;"
            "print(hasattr(d.all_reduce, '__clusterdoc_original__'))")
    for var in ("CLUSTERDOC_DEBUG", "ACCELERATE_DEBUG_MODE"):
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                             check=True, env={"PATH": "/usr/bin:/bin", var: "1"}).stdout.split()
        assert out == ["True"], var


def test_missing_peer_fails_in_bounded_time_with_a_clear_error():
    import time

    from tests.shim_helpers import JOB, REPO, free_port

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "RANK": "0", "WORLD_SIZE": "2",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "CLUSTERDOC_INIT_TIMEOUT": "3"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-W", "ignore", str(JOB), "init"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode != 0
    assert "could not meet the other ranks at 127.0.0.1:" in proc.stderr and "within 3 s" in proc.stderr
    assert time.monotonic() - start < 60


def test_more_ranks_on_a_node_than_gpus_is_said_before_nccl_says_duplicate_gpu(monkeypatch):
    """Seen on a real one-GPU H100: torchrun --nproc-per-node 2 with NCCL stops at the first all_reduce."""
    from clusterdoc.shim.env import RankEnv, gpu_layout_problem

    two = RankEnv("torchrun", 1, 2, 1, 2, "127.0.0.1", 29500)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    msg = gpu_layout_problem("nccl", two, 1)
    assert "2 ranks on this node but 1 GPU(s)" in msg and "--nproc-per-node 1" in msg
    assert gpu_layout_problem("gloo", two, 1) is None
    assert gpu_layout_problem("nccl", two, 2) is None
    assert gpu_layout_problem("nccl", two, 0) is None  # no GPU: gloo is chosen, nothing to say
