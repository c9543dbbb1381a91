"""python -m clusterdoc.run: the script runs as __main__ with the shim on; how it ends is recorded."""

import json
import os
import subprocess
import sys

import pytest

from clusterdoc.launch.job import OOM_EXIT_CODE, OOM_MARKER


def run(tmp_path, script_text, args=(), run_args=(), env_extra=None, timeout=120):
    script = tmp_path / "script.py"
    script.write_text(script_text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update({"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "0", "HOME": str(tmp_path)},
               **(env_extra or {}))
    env.pop("MASTER_PORT")
    return subprocess.run([sys.executable, "-m", "clusterdoc.run", *run_args, str(script), *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=timeout)


SCRIPT = """
import sys, torch.distributed as dist
from clusterdoc import shim
print("name", __name__, "argv", sys.argv[1:])
print("initialized", dist.is_initialized(), dist.get_world_size())
dist.init_process_group("gloo")          # a torchrun-style script does this itself: must not fail
shim.init()                              # and a shim-aware one this
print("debug", shim.debug_enabled())
import logging
print("level", logging.getLevelName(shim.get_logger("x").logger.getEffectiveLevel()))
"""


def test_script_runs_as_main_with_its_args_shim_switches_and_its_own_init(tmp_path):
    res = run(tmp_path, SCRIPT, args=["--lr", "0.1", "pos"], run_args=["--debug", "--log-level", "warning"])
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "name __main__ argv ['--lr', '0.1', 'pos']" in out
    assert "initialized True 1" in out            # shim.init() ran before the script
    assert "debug True" in out and "level WARNING" in out


def test_config_file_and_env_reach_the_rank(tmp_path):
    (tmp_path / "clusterdoc.yaml").write_text("debug: true\nlog-level: ERROR\n")
    res = run(tmp_path, SCRIPT, env_extra={"CLUSTERDOC_LOG_LEVEL": "DEBUG"})
    assert res.returncode == 0, res.stderr
    assert "debug True" in res.stdout and "level DEBUG" in res.stdout  # env beats the file


def test_exit_codes_exceptions_and_log_dir(tmp_path):
    logs = tmp_path / "logs"
    res = run(tmp_path, "import sys\nprint('out line')\nprint('err line', file=sys.stderr)\nsys.exit(3)\n",
              run_args=["--log-dir", str(logs)])
    assert res.returncode == 3 and res.stdout == ""
    assert (logs / "rank0.out").read_text() == "out line\n"
    assert "err line" in (logs / "rank0.err").read_text()
    assert json.loads((logs / "rank0.exit").read_text())["code"] == 3

    res = run(tmp_path, "def f():\n    raise ValueError('boom')\nf()\n")
    assert res.returncode == 1
    tb = res.stderr
    assert "ValueError: boom" in tb and 'script.py", line 3' in tb
    assert "clusterdoc/run.py" not in tb and "runpy" not in tb  # the user's frames only


def test_out_of_memory_is_marked_for_oom_retry(tmp_path):
    logs = tmp_path / "logs"
    res = run(tmp_path, "import torch\ntorch.empty(1 << 42, dtype=torch.uint8)\n", run_args=["--log-dir", str(logs)])
    assert res.returncode == OOM_EXIT_CODE
    err = (logs / "rank0.err").read_text()
    assert f"{OOM_MARKER} on rank 0" in err
    assert json.loads((logs / "rank0.exit").read_text())["oom"] is True


def test_bad_config_in_the_rank_is_a_clear_error(tmp_path):
    (tmp_path / "clusterdoc.yaml").write_text("debug: perhaps\n")
    res = run(tmp_path, "print('never')\n")
    assert res.returncode == 2 and "never" not in res.stdout
    assert "clusterdoc.yaml:1: key 'debug' must be true or false" in res.stderr


@pytest.mark.parametrize("environ,rank", [
    ({"RANK": "3"}, 3), ({"PMI_RANK": "2"}, 2), ({"OMPI_COMM_WORLD_RANK": "5"}, 5),
    ({"SLURM_PROCID": "1", "SLURM_STEP_ID": "0"}, 1), ({"SLURM_PROCID": "1"}, 0),  # batch shell: not a rank
    ({}, 0),
])
def test_rank_for_the_log_file_names(environ, rank):
    from clusterdoc.run import env_rank

    assert env_rank(environ) == rank


def test_an_inconsistent_rank_environment_is_one_clear_line(tmp_path):
    # Python started by sbatch without srun: SLURM_NTASKS=4 but no SLURM_STEP_ID (reference.md §5)
    script = tmp_path / "s.py"
    script.write_text("print('never')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    env.update(SLURM_NTASKS="4", SLURM_JOB_ID="7", HOME=str(tmp_path))
    res = subprocess.run([sys.executable, "-m", "clusterdoc.run", str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "never" not in res.stdout
    assert "clusterdoc.run: rank 0: Slurm: this process runs in the batch shell of job 7" in res.stderr
    assert "Traceback" not in res.stderr


def test_mpi_ranks_named_the_torchrun_way_only_under_clusterdoc_mpirun():
    from clusterdoc.run import torchrun_vars_from_mpi

    ompi = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "MASTER_ADDR": "node1", "MASTER_PORT": "29500"}
    assert torchrun_vars_from_mpi({**ompi, "CLUSTERDOC_LAUNCHER": "mpirun"}) == \
        {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    hydra = {"PMI_RANK": "0", "PMI_SIZE": "2", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "1", "MASTER_PORT": "1",
             "CLUSTERDOC_LAUNCHER": "mpirun"}
    assert torchrun_vars_from_mpi(hydra)["WORLD_SIZE"] == "2"
    assert torchrun_vars_from_mpi(ompi) == {}  # a hand-run mpirun: the shim agrees through mpi4py as usual
    assert torchrun_vars_from_mpi({**hydra, "MASTER_PORT": ""}) == {}
