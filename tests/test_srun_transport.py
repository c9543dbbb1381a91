"""The Slurm transport's parts without Slurm: the probe's chunked output put back together per task (srun --label
interleaves tasks and splits lines at 1024 bytes), the srun command, Slurm hostlists in the probe, the choice of
transport. On the test cluster: tests/test_srun_transport_cluster.py."""

import io
import json
import sys

import pytest

from clusterdoc.checks import FAIL, OK, ssh
from clusterdoc.doctor import srun
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.errors import UsageError
from clusterdoc.probe.gather import SRUN_CHUNK, expand_hostlist, print_chunked


def chunked(node, facts, monkeypatch):
    monkeypatch.setenv("SLURMD_NODENAME", node)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    print_chunked(json.dumps(facts))
    monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    return out.getvalue().splitlines()


def test_tasks_output_interleaved_is_put_back_per_node(monkeypatch):
    a = {"schema": 1, "hostname": "node1", "errors": [{"probe": "x", "message": f"x{i}" * 40} for i in range(50)]}
    b = {"schema": 1, "hostname": "node2", "errors": [{"probe": "y", "message": f"y{i}" * 40} for i in range(30)]}
    la, lb = chunked("node1", a, monkeypatch), chunked("node2", b, monkeypatch)
    assert max(len(x) for x in la) < 1000 and len(la) > 5
    mixed = []
    for i in range(max(len(la), len(lb))):  # srun --label: "TASK: line", tasks interleaved
        mixed += [f"0: {x}" for x in la[i : i + 1]] + [f" 1: {x}" for x in lb[i : i + 1]]
    mixed.insert(3, "1: some stray line a task printed")
    got = srun.parse("\n".join(mixed))
    assert got["node1"]["errors"] == a["errors"] and got["node2"]["errors"] == b["errors"]
    cut = [x for x in mixed if not (x.startswith(" 1:") and "data" in x)][: len(mixed) - 3]
    assert srun.parse("\n".join(cut))["node2"] is None  # incomplete: no facts, never half facts
    assert SRUN_CHUNK + len("@@clusterdoc-srun data ") + 8 < 1024


def test_srun_command_carries_the_probe_in_argv(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    argv = srun.srun_argv(20, count=4, partition="gpu", python="/venv/bin/python", env={"NCCL_DEBUG": "INFO"},
                          srun_options=["--container-image=img.sqsh"], prefix=["apptainer", "exec", "x.sif"])
    assert argv[:6] == ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--input=none", "--label", "--quiet"]
    assert "--nodes=4" in argv and "--partition=gpu" in argv and any(a.startswith("--time=") for a in argv)
    i = argv.index("apptainer")
    assert argv[i - 1] == "--container-image=img.sqsh" and argv[i + 3 : i + 5] == ["/venv/bin/python", "-c"]
    assert argv[argv.index("--env") + 1] == "NCCL_DEBUG=INFO" and "--srun" in argv
    assert argv[-2:] == ["--wrapped", "apptainer exec x.sif"]
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "3")
    inside = srun.srun_argv(20)
    assert "--nodes=3" in inside and not any(a.startswith("--time=") for a in inside)


def test_probe_expands_slurm_hostlists():
    assert expand_hostlist("node[1-3]") == ["node1", "node2", "node3"]
    assert expand_hostlist("gpu[001-002,010],login1") == ["gpu001", "gpu002", "gpu010", "login1"]
    assert expand_hostlist("") == []


def test_ssh_check_says_srun():
    ok = ssh.check("node1", {"status": "ok", "elapsed": 1.2, "transport": "srun"}, {"hostname": "node1"})
    assert [(f["status"], f["message"]) for f in ok] == [(OK, "reached through srun, no SSH (1.2s)")]
    bad = ssh.check("node2", {"status": "error", "message": "srun (exit 1): node2 is DOWN", "transport": "srun"},
                    None, ["cuda"])
    assert bad[0]["status"] == FAIL and "sinfo -N -n node2" in bad[0]["fix"] and "cuda" in bad[0]["message"]


def test_transport_choice(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert not CheckOptions().uses_srun and CheckOptions().is_local
    assert CheckOptions(srun_nodes=2).uses_srun and not CheckOptions(srun_nodes=2).is_local
    monkeypatch.setenv("SLURM_JOB_ID", "12")
    assert CheckOptions().uses_srun  # inside salloc/sbatch: the allocation's nodes
    assert not CheckOptions(local=True).uses_srun and not CheckOptions(nodelist=["n1"]).uses_srun
    assert not CheckOptions(transport="ssh").uses_srun
    with pytest.raises(UsageError):
        CheckOptions(transport="rsh").validate()
    with pytest.raises(UsageError):
        CheckOptions(transport="ssh", partition="gpu", nodelist=["n1"]).validate()


def test_wrapper_prefixes_the_probe_over_ssh_and_srun(monkeypatch):
    from clusterdoc.doctor import payload

    cmd = payload.remote_command(3.0, None, python="/opt/venv/bin/python", wrap="apptainer exec --nv 'my img.sif'")
    assert cmd.startswith("if command -v apptainer >/dev/null 2>&1; then exec apptainer exec --nv 'my img.sif' "
                          "/opt/venv/bin/python - --timeout 3 --wrapped")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    argv = srun.srun_argv(20, count=1, prefix=["enroot", "start", "img"])
    assert argv[argv.index("enroot") : argv.index("enroot") + 4] == ["enroot", "start", "img", "python3"]
    assert argv[argv.index("--wrapped") + 1] == "enroot start img"
