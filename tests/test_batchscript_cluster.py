"""`clusterdoc submit FILE` with the user's own batch script on the site test cluster (accounts, node features,
Lmod: tests/cluster/site.py): sbatch runs the
script as it is; every python rank it starts (`srun python`, `srun torchrun` built in a variable and expanded per
task) runs under the shim with its records in the job folder, so `why`, `status` and `logs` work on it."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TRAIN = '''\
import os
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"rank {rank} of {dist.get_world_size()} on {os.environ.get('SLURMD_NODENAME')}, "
      f"cuda module {os.environ.get('SITE_CUDA_VERSION')}", flush=True)
dist.barrier()
if rank == 1 and os.environ.get("FAIL_RANK1"):
    raise RuntimeError("planted failure in rank 1")  # line 10
dist.barrier()
print(f"rank {rank} done", flush=True)
'''

FAILING = '''\
#!/bin/bash
# a user's script, as written for sbatch
#SBATCH --job-name=mine
#SBATCH --nodes=2 --ntasks-per-node=1   # one rank per node
#SBATCH --time=0:10:00
#SBATCH -A proj1 -C fast
set -euo pipefail
module load cuda/12.4
export FAIL_RANK1=1
srun python train.py
'''

TORCHRUN = '''\
#!/bin/bash
#SBATCH --nodes 2
#SBATCH --ntasks-per-node=1
set -euo pipefail
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
LAUNCHER="python -m torch.distributed.run --nnodes $SLURM_NNODES --nproc_per_node 2 --rdzv_backend c10d \\
  --rdzv_endpoint $head:$((20000 + SLURM_JOB_ID % 10000)) --rdzv_id $SLURM_JOB_ID --node_rank \\$SLURM_PROCID"
srun bash -c "$LAUNCHER train.py"
echo script done
'''

ACCELERATE = '''\
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
set -euo pipefail
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export LAUNCHER="accelerate launch --cpu --num_machines $SLURM_NNODES --num_processes 2 --main_process_ip $head \\
  --main_process_port $((20000 + SLURM_JOB_ID % 10000)) --machine_rank \\$SLURM_NODEID --rdzv_backend c10d"
srun bash -c "$LAUNCHER train.py"
false  # after the ranks: the script's own failure
'''

ONE_SHELL = '''\
#!/bin/bash
#SBATCH --nodes=1
set -euo pipefail
python helper.py
python -c "print('and a one-liner')"
srun -N1 -n1 python helper.py  # a one-task step: a helper too
'''

SLEEPER = '''\
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node 1
srun python sleeper.py
'''


def env_for(cluster):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(cluster.env(), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `python` in the script
    return env


def cli(cluster, cwd, *args, timeout=300):
    return subprocess.run([sys.executable, "-m", "clusterdoc", *map(str, args)], cwd=cwd, env=env_for(cluster),
                          capture_output=True, text=True, timeout=timeout)


def job_dir(tmp_path, stderr):
    return Path(re.search(r"logs: (\S+)", stderr).group(1))


def test_srun_python_failing_rank_is_named_by_why_with_its_line(site_cluster, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "job.sbatch").write_text(FAILING)
    # the command line over the script's line (as with sbatch): --time 7 against its 0:10:00
    res = cli(site_cluster, tmp_path, "submit", "--time", 7, "--wait", "job.sbatch")
    assert res.returncode == 1, res.stderr[-4000:]
    assert "[preflight] preflight ok: starting the ranks" in res.stderr, res.stderr[-4000:]
    assert "job failed: rank 1 exited with code 1" in res.stderr, res.stderr[-4000:]
    jd = job_dir(tmp_path, res.stderr)
    for rank in (0, 1):  # the records of a rank clusterdoc started
        for kind in ("start", "exit", "out", "err"):
            assert (jd / f"rank{rank}.{kind}").is_file(), (rank, kind, sorted(p.name for p in jd.iterdir()))
    assert "RuntimeError: planted failure in rank 1" in (jd / "rank1.err").read_text()
    slurm_id = re.search(r"slurm job (\d+) submitted", res.stderr).group(1)
    acct = ""
    for _ in range(60):  # slurmdbd's row lags slurmctld: a step's record may come first ('allocation||proj1|node1')
        acct = subprocess.run(["sacct", "-j", slurm_id, "-X", "-n", "-P", "-o",
                               "JobName,Timelimit,Account,NodeList,State"], env=env_for(site_cluster),
                              capture_output=True, text=True, timeout=30).stdout.strip()
        if acct.startswith("mine|") and not acct.endswith(("|PENDING", "|RUNNING", "|COMPLETING")):
            break
        time.sleep(1)
    # -C fast: node1 and node2; its state FAILED or CANCELLED (submit cancels the job once a rank failed)
    assert acct.rsplit("|", 1)[0] == "mine|00:07:00|proj1|node[1-2]", acct
    why = cli(site_cluster, tmp_path, "why", jd.name)
    assert re.search(r"cause\s+code: rank 1 on node\d raised RuntimeError: planted failure in rank 1 at train.py:10",
                     why.stdout), why.stdout + why.stderr
    st = cli(site_cluster, tmp_path, "status", slurm_id)
    assert f"job {jd.name}: FAILED" in st.stdout, st.stdout + st.stderr
    logs = cli(site_cluster, tmp_path, "logs", jd.name, "--rank", 1)
    assert re.search(r"rank 1 of 2 on node[12], cuda module 12.4", logs.stdout), logs.stdout  # the module loaded


def test_srun_torchrun_built_in_a_variable_completes_with_every_worker_under_the_shim(site_cluster, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "tr.sbatch").write_text(TORCHRUN)
    res = cli(site_cluster, tmp_path, "submit", "--no-preflight", "--wait", "tr.sbatch")
    assert res.returncode == 0, res.stderr[-4000:]
    assert "job completed: all 4 ranks exited 0" in res.stderr, res.stderr[-4000:]
    jd = job_dir(tmp_path, res.stderr)
    # four workers (2 per node), each its own records; the torchrun agents are no ranks
    assert sorted(p.name for p in jd.glob("rank*.exit")) == [f"rank{r}.exit" for r in range(4)]
    for r in range(4):
        assert f"rank {r} done" in (jd / f"rank{r}.out").read_text()
    st = cli(site_cluster, tmp_path, "status", jd.name)
    assert "COMPLETED" in st.stdout and "2 node(s) x 2 rank(s)" in st.stdout, st.stdout


def test_srun_accelerate_launch_and_a_failure_of_the_script_itself(site_cluster, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "acc.sbatch").write_text(ACCELERATE)
    res = cli(site_cluster, tmp_path, "submit", "--no-preflight", "--wait", "acc.sbatch")
    assert res.returncode == 1, res.stderr[-4000:]
    # every rank accelerate started ran under the shim and exited 0; the script's `false` failed the job
    assert re.search(r"job failed: no rank recorded a failure; the batch script exited with 1 \(its output: "
                     r"\S+slurm-\d+\.out\)", res.stderr), res.stderr[-4000:]
    jd = job_dir(tmp_path, res.stderr)
    exits = sorted(jd.glob("rank*.exit"))
    assert len(exits) == 2, sorted(p.name for p in jd.iterdir())
    for r in range(2):
        assert f"rank {r} done" in (jd / f"rank{r}.out").read_text()


def test_no_wait_then_status_stacks_and_cancel(site_cluster, tmp_path):
    (tmp_path / "sleeper.py").write_text("import time\nprint('sleeping', flush=True)\ntime.sleep(600)\n")
    (tmp_path / "sleep.sbatch").write_text(SLEEPER)
    res = cli(site_cluster, tmp_path, "submit", "--no-preflight", "--no-wait", "sleep.sbatch")
    assert res.returncode == 0, res.stderr
    job = res.stdout.strip()
    jd = tmp_path / "clusterdoc-jobs" / job
    try:
        for _ in range(240):  # both ranks started under the shim (their place files say where they are)
            if all((jd / f"rank{r}.where").exists() for r in range(2)):
                break
            time.sleep(0.5)
        st = cli(site_cluster, tmp_path, "status", job)
        assert f"job {job}: RUNNING" in st.stdout, st.stdout + st.stderr
        stacks = cli(site_cluster, tmp_path, "stacks", job)
        assert "2 of 2 ranks answered" in stacks.stdout + stacks.stderr, stacks.stdout + stacks.stderr
        assert "sleeper.py:3" in stacks.stdout + stacks.stderr, stacks.stdout + stacks.stderr
    finally:
        done = cli(site_cluster, tmp_path, "cancel", job)
    assert done.returncode == 0 and "cancelled" in done.stdout, done.stdout + done.stderr
    for _ in range(120):
        st = cli(site_cluster, tmp_path, "status", job)
        if "CANCELLED" in st.stdout.splitlines()[0]:
            break
        time.sleep(1)
    assert f"job {job}: CANCELLED" in st.stdout, st.stdout


def test_pythons_of_the_batch_shell_are_no_ranks_and_the_script_s_exit_decides(site_cluster, tmp_path):
    (tmp_path / "helper.py").write_text("print('helper in the batch shell')\n")
    (tmp_path / "one.sbatch").write_text(ONE_SHELL)
    res = cli(site_cluster, tmp_path, "submit", "--no-preflight", "--wait", "one.sbatch")
    assert res.returncode == 0, res.stderr[-4000:]
    assert "job completed: the batch script exited 0; none of its pythons ran as a rank" in res.stderr, res.stderr
    jd = job_dir(tmp_path, res.stderr)
    assert not list(jd.glob("rank*")), sorted(p.name for p in jd.iterdir())


def test_the_preflight_refuses_the_allocation_before_the_script_s_first_line(site_cluster, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "job.sbatch").write_text(FAILING.replace("set -euo pipefail\n", "set -euo pipefail\ntouch ran\n"))
    with site_cluster.planted({"node2": {"kernel": "4.4.0-210-generic"}}):
        res = cli(site_cluster, tmp_path, "submit", "--wait", "job.sbatch")
    assert res.returncode == 1, res.stderr[-4000:]
    assert re.search(r"\[preflight\] .*kernel node2: kernel 4.4.0-210-generic is older than 5.5", res.stderr), res.stderr
    assert "the preflight step refused the allocation" in res.stderr.strip().splitlines()[-1], res.stderr[-2000:]
    assert "[rank " not in res.stderr and not (tmp_path / "ran").exists()  # the script itself never started


def test_a_retry_s_excluded_node_reaches_sbatch(site_cluster, tmp_path, monkeypatch):
    """--retries leaves a blamed node out: for a batch script, on sbatch's command line (over the script's lines)."""
    from dataclasses import replace

    from clusterdoc.jobs.folder import reserve_job_dir
    from clusterdoc.launch import slurm
    from clusterdoc.launch.job import JobSpec, init_job_dir

    for key, value in env_for(site_cluster).items():
        monkeypatch.setenv(key, value)
    script = tmp_path / "one.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=1 --exclude=node1\nsrun sleep 60\n")
    spec = JobSpec(script=str(script), script_args=[], backend="slurm", nodes=1, batch_script=True, preflight=False,
                   cwd=str(tmp_path))
    spec = replace(spec, exclude=["node3"])  # what retry.next_attempt makes of it
    jd = init_job_dir(reserve_job_dir(tmp_path / "jobs", "slurm"), spec)
    job = slurm.BatchScriptJob(spec, jd, [])
    try:
        shown = subprocess.run(["scontrol", "show", "job", job.backend_id], capture_output=True, text=True,
                               timeout=30).stdout
    finally:
        job.cancel()
    assert "--exclude=node1,node3" in (jd.path / "sbatch.cmd").read_text()
    # the command line's --exclude replaces the script's line: both the script's node and the blamed one are on it
    assert "ExcNodeList=node[1,3]" in shown, shown


SITE_OPTIONS = '''\
#!/bin/bash
#SBATCH -A proj2 -N 2 --ntasks-per-node=1   # an account root is not in: the command line's wins
#SBATCH --time=0:05:00
set -euo pipefail
srun python show.py
'''


def test_the_command_line_s_site_options_and_setup_reach_a_batch_script_s_job(site_cluster, tmp_path):
    """--account over the script's -A, --mem on sbatch's command line, --setup before the script's first line."""
    (tmp_path / "show.py").write_text("import os\nprint('cuda module', os.environ.get('SITE_CUDA_VERSION'))\n")
    (tmp_path / "site.sbatch").write_text(SITE_OPTIONS)
    res = cli(site_cluster, tmp_path, "submit", "--account", "proj1", "--setup", "module load cuda/12.4",
              "--mem", "500M", "--wait", "site.sbatch")
    assert res.returncode == 0, res.stderr[-4000:]
    assert "[preflight] preflight ok: starting the ranks" in res.stderr, res.stderr[-4000:]
    jd = job_dir(tmp_path, res.stderr)
    for rank in (0, 1):  # the setup line's module, in each rank
        assert "cuda module 12.4" in (jd / f"rank{rank}.out").read_text()
    assert (jd / "sbatch.cmd").read_text().startswith("sbatch --parsable --export=ALL --account=proj1 --mem=500M /")
    slurm_id = re.search(r"slurm job (\d+) submitted", res.stderr).group(1)
    row = ""
    for _ in range(60):  # slurmdbd gets the record from slurmctld shortly after the end
        row = subprocess.run(["sacct", "-j", slurm_id, "-X", "-n", "-P", "-o", "Account,ReqMem,State"],
                             env=env_for(site_cluster), capture_output=True, text=True, timeout=30).stdout.strip()
        if row.endswith("COMPLETED"):
            break
        time.sleep(1)
    # --mem is per node: the job's ReqMem is both nodes' (Slurm before 21.08 said it per node, 500Mn)
    assert row in ("proj1|1000M|COMPLETED", "proj1|500Mn|COMPLETED"), row
    # a setup line that fails stops the batch shell before the script's first line, and says which
    res = cli(site_cluster, tmp_path, "submit", "--account", "proj1", "--setup", "module load cuda/99.9", "--wait",
              "site.sbatch")
    assert res.returncode == 1, res.stderr[-4000:]
    assert "job failed: --setup line 1 failed (exit 1): module load cuda/99.9, in the batch script; no rank started" \
        in res.stderr, res.stderr[-4000:]
