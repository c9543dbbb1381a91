"""The test cluster as a real Slurm site (tests/cluster/site.py): accounting enforced, QOS, features, Lmod."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster import spec
from tests.cluster.nodes import make_nodes
from tests.cluster.slurm import Slurm


def test_features_and_min_job_age_in_slurm_conf(tmp_path):
    nodes = make_nodes(3)
    s = Slurm(tmp_path)
    s.write_config(nodes, 17000, [17001, 17002, 17003], {}, "198.18.0.1", {"node1": ["fast", "a100"], "node3": []},
                   min_job_age=10)
    conf = s.conf.read_text().splitlines()
    lines = {line.split()[0]: line for line in conf if line.startswith("NodeName=")}
    assert lines["NodeName=node1"].endswith("Feature=fast,a100 State=UNKNOWN")
    assert "Feature" not in lines["NodeName=node2"] + lines["NodeName=node3"]
    assert "MinJobAge=10" in conf and "AccountingStorageType=accounting_storage/none" in conf
    s.write_config(nodes, 17000, [17001, 17002, 17003], {}, "198.18.0.1")  # the plain cluster: as before
    assert "MinJobAge=300" in s.conf.read_text().splitlines() and "Feature" not in s.conf.read_text()


@pytest.mark.parametrize("bad", [["a b"], "fast", [1], ["x;y"]])
def test_bad_features_are_refused(bad):
    with pytest.raises(spec.SpecError, match="features"):
        spec.check_features(spec.merge(spec.BASE, {"features": bad}), "site.yaml: node1")


def _run(argv: list[str], env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.slow
@pytest.mark.cluster
def test_site_enforces_accounts_and_qos_runs_modules_on_featured_nodes(site_cluster, tmp_path):
    env = dict(os.environ, **site_cluster.env())
    assoc = _run(["sacctmgr", "-P", "-n", "show", "assoc", "where", "user=root", "format=Account,QOS"], env)
    assert {tuple(line.split("|")) for line in assoc.stdout.split()} >= {("proj1", "normal,short")}, assoc
    wrong = _run(["sbatch", "-A", "proj2", "--wrap", "true"], env)
    assert wrong.returncode == 1 and "Invalid account or account/partition combination" in wrong.stderr
    over = _run(["sbatch", "-q", "short", "-N", "2", "--wrap", "true"], env)
    assert over.returncode == 1 and "QOSMaxNodePerJobLimit" in over.stderr

    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -N 2 -C fast -A proj1 -q normal\nmodule load cuda/12.4 nccl/2.21\n"
                      'srun bash -c \'echo "$(site-cuda) nccl=$SITE_NCCL_VERSION"\'\n')
    out = tmp_path / "job.out"
    sub = _run(["sbatch", "--parsable", "-o", str(out), str(script)], env)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 120
    row = ""
    while time.monotonic() < deadline:
        res = _run(["sacct", "-X", "-n", "-P", "-j", job, "-o", "Account,QOS,State,NodeList"], env)
        row = res.stdout.strip()
        if row.endswith(("COMPLETED|node[1-2]", "FAILED|node[1-2]")) or "CANCELLED" in row:
            break
        time.sleep(1)
    assert row == "proj1|normal|COMPLETED|node[1-2]", (row, Path(out).read_text() if out.exists() else "")
    lines = sorted(out.read_text().splitlines())
    assert lines == ["cuda/12.4 loaded on node1 nccl=2.21", "cuda/12.4 loaded on node2 nccl=2.21"]
