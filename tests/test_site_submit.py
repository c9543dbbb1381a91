"""`clusterdoc submit` on the site test cluster (tests/cluster/site.py: accounting enforced, QOS, node features,
Lmod): a job with --account --qos --constraint --setup 'module load ...' runs on the featured nodes with the module
loaded in the ranks and in the preflight's probe, and accounting records its account and QOS (the flags over
sbatch's own SBATCH_* variables, which sbatch itself would let win over the script); a wrong account (from
SBATCH_ACCOUNT, as sbatch reads it), a QOS limit and a feature no node has are refused with what to do; a failed
setup line stops the job before any rank."""

import json
import os
import re
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SHOW = """\
import os, shutil, socket, subprocess
tool = shutil.which("site-cuda")
said = subprocess.run([tool], capture_output=True, text=True).stdout.strip() if tool else "no site-cuda"
print(f"site: {os.environ.get('SITE_CUDA_VERSION')} on {socket.gethostname()}: {said}", flush=True)
"""


def site_env(cluster, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "SBATCH_", "PMI_"))}
    env.update(cluster.env(), HOME=str(home))
    # a batch shell where `module` is not a function yet (no BASH_ENV): clusterdoc sources Lmod's init itself
    env.pop("BASH_ENV", None)
    return env


def submit(cluster, cwd, *args, timeout=240, env=None):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "slurm", *map(str, args)],
                          cwd=cwd, env={**site_env(cluster, cwd), **(env or {})}, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_a_site_job_runs_on_the_featured_nodes_with_its_module_in_the_ranks_and_the_preflight(site_cluster, tmp_path):
    script = tmp_path / "show.py"
    script.write_text(SHOW)
    # sbatch's own variables say otherwise: the flags win over them, as they do for sbatch
    res = submit(site_cluster, tmp_path, "--nodes", 2, "--account", "proj1", "--qos", "normal", "--constraint", "fast",
                 "--setup", "module load cuda/12.4", "--wait", script,
                 env={"SBATCH_ACCOUNT": "proj2", "SBATCH_QOS": "short", "SBATCH_CONSTRAINT": "slow"})
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    assert "[preflight] preflight ok: starting the ranks" in res.stderr, out[-4000:]
    seen = sorted(re.findall(r"\[rank (\d)\] site: (\S+) on (\S+): (.*)", out))
    assert [(r, v, h) for r, v, h, _ in seen] in ([("0", "12.4", "node1"), ("1", "12.4", "node2")],
                                                  [("0", "12.4", "node2"), ("1", "12.4", "node1")]), out[-4000:]
    assert all(said == f"cuda/12.4 loaded on {h}" for _, _, h, said in seen), seen  # the module's PATH, per node
    assert "[rank 0] clusterdoc: per-rank pace (" in out  # the shim ran in every rank
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    # the preflight's probe ran after the setup line: its facts show the module's PATH on each node it judged
    for node in ("node1", "node2"):
        facts = json.loads((jd / "preflight" / f"{node}.json").read_text())
        assert "/site/sw/cuda-12.4/bin" in (facts["env"]["PATH"] or ""), facts["env"]
    job = json.loads((jd / "job.json").read_text())["backend_id"]
    env = site_env(site_cluster, tmp_path)
    row = ""
    for _ in range(60):  # slurmdbd gets the record from slurmctld shortly after the end
        row = subprocess.run(["sacct", "-X", "-n", "-P", "-j", str(job), "-o", "Account,QOS,State"], env=env,
                             capture_output=True, text=True, timeout=60).stdout.strip()
        if row.endswith("COMPLETED"):
            break
        time.sleep(1)
    assert row == "proj1|normal|COMPLETED", row


def test_a_wrong_account_a_qos_limit_and_a_missing_feature_are_refused_with_the_fix(site_cluster, tmp_path):
    script = tmp_path / "show.py"
    script.write_text(SHOW)
    # the preflight asks accounting first (launch/accounting.py): nothing is queued
    res = submit(site_cluster, tmp_path, "--no-wait", script, env={"SBATCH_ACCOUNT": "proj2"})  # as sbatch reads it
    assert res.returncode == 1 and res.stdout == "", res.stderr
    assert "preflight FAILED: account 'proj2' is not one of root's" in res.stderr, res.stderr
    assert "--account proj1" in res.stderr and "job not submitted" in res.stderr, res.stderr
    # without it, sbatch's own refusal, with the same fix
    res = submit(site_cluster, tmp_path, "--no-preflight", "--no-wait", script, env={"SBATCH_ACCOUNT": "proj2"})
    assert res.returncode == 1 and res.stdout == "", res.stderr
    assert "Invalid account or account/partition combination specified (--account proj2)" in res.stderr
    assert re.search(r"your accounts: (\S+, )*proj1(, \S+)*; pass one with --account \(-A\)", res.stderr), res.stderr
    res = submit(site_cluster, tmp_path, "--qos", "short", "--nodes", 2, "--time", 5, "--no-wait", script)
    assert res.returncode == 1 and "Job violates accounting/QOS policy" in res.stderr, res.stderr
    assert "(--qos short): --nodes 2 is over its MaxTRESPerJob node=1" in res.stderr
    res = submit(site_cluster, tmp_path, "--constraint", "a100", "--no-wait", script)
    assert res.returncode == 1 and "Invalid feature specification (--constraint a100)" in res.stderr, res.stderr
    assert "the nodes' features: fast: node[1-2]; slow: node3; pass one of them with --constraint (-C)" in res.stderr


def test_a_failing_setup_line_stops_the_job_before_any_rank_and_says_which(site_cluster, tmp_path):
    script = tmp_path / "show.py"
    script.write_text(SHOW)
    res = submit(site_cluster, tmp_path, "--setup", "module load cuda/99.9", "--wait", script)
    assert res.returncode == 1, res.stderr[-3000:]
    assert "job failed: --setup line 1 failed (exit 1): module load cuda/99.9, in the batch script; no rank started" \
        in res.stderr, res.stderr[-3000:]
    assert "site:" not in res.stdout + res.stderr
