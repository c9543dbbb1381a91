"""The doctor's Slurm transport on the test cluster (issue 31): with the user's key removed from the nodes (SSH
refused, as pam_slurm_adopt refuses a user without a job there), `clusterdoc check` inside an `salloc` of the 4
nodes reports on all 4 through srun, with the same findings as over SSH for the same plants; so does a check
given the nodes by name, which tried SSH first. Unit tests: tests/test_srun_transport.py."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from tests.cluster.fakes import BASE_PATH
from tests.test_doctor_cluster import check, names, problems

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PLANTED = {"node2": {"kernel": "5.4.0-150-generic"}, "node3": {"xid": [79]}, "node4": {"shm_mib": 64}}
SSH_ONLY = {"ssh", "mesh", "port"}


def test_check_in_salloc_goes_through_srun_with_the_same_findings(cluster, tmp_path):
    with cluster.planted(PLANTED):
        _, over_ssh = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 20,
                            "--mpirun", cluster.mpirun)
        # srun passes on the submitting shell's environment: give it the one a login on the nodes has (the spec's
        # toolkit on PATH, CUDA_HOME...), as a user's `module load` would
        login = dict(line.split("=", 1) for line in cluster.ssh("node1", "env").stdout.splitlines() if "=" in line)
        keys = cluster.dir / "authorized_keys"
        saved = keys.read_text()
        keys.write_text("")  # the user's key is gone from every node: sshd refuses the login
        try:
            me = [sys.executable, "-m", "clusterdoc", "check", "--json", "--timeout", "20", "--mpirun", cluster.mpirun]
            inner = (shlex.join(me) + f" > {tmp_path}/alloc.json; "
                     + shlex.join(me + ["-w", names(cluster), "--ssh-config", str(cluster.ssh_config)])
                     + f" > {tmp_path}/named.json; true")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "NCCL_", "CLUSTERDOC_"))}
            env.update(cluster.env(), PATH=BASE_PATH)
            env.update({k: login[k] for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST")
                        if k in login})
            p = subprocess.run(["salloc", "-N", "4", "--quiet", "bash", "-c", inner], env=env, capture_output=True,
                               text=True, timeout=240)
            assert p.returncode == 0, p.stderr[-3000:]
        finally:
            keys.write_text(saved)
    expected = {(n, c) for n, c in problems(over_ssh) if c not in SSH_ONLY}
    assert expected == {("node2", "kernel"), ("node3", "gpu"), ("node4", "resources")}, over_ssh["findings"]
    for name in ("alloc", "named"):
        doc = json.loads((tmp_path / f"{name}.json").read_text())
        assert doc["summary"]["transport"] == "srun", name
        assert [n["node"] for n in doc["nodes"]] == [n.name for n in cluster.nodes]
        assert all(n["facts"] for n in doc["nodes"]), name
        assert problems(doc) == expected, (name, [f for f in doc["findings"] if f["status"] != "ok"])
        assert set(doc["summary"]["not_applicable"]) >= {"mesh", "port"}
        ssh = [f["message"] for f in doc["findings"] if f["check"] == "ssh"]
        assert len(ssh) == 4 and all(m.startswith("reached through srun, no SSH") for m in ssh), ssh
