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
    assert argv[i - 4 : i] == ["sh", "-c", srun.NAME_FIRST, srun.MARK]  # slurmd's node name first, then the probe
    assert argv[i - 5] == "--container-image=img.sqsh" and argv[i + 3 : i + 5] == ["/venv/bin/python", "-c"]
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


def task_lines(task, name, facts, monkeypatch, claim=None):
    """One task's lines as srun --label writes them: NAME_FIRST's line (slurmd's name), then the probe's."""
    lines = chunked(claim or name, facts, monkeypatch)
    return [f"{task}: {srun.MARK} node {name}"] + [f"{task}: {x}" for x in lines]


def facts_of(name):
    return {"schema": 1, "hostname": name, "errors": [{"probe": "x", "message": name * 30}]}


def test_answers_are_bound_to_slurms_task_not_to_the_nodes_claim(monkeypatch):
    """Task 2 runs on node3 (its first line, from slurmd's SLURMD_NODENAME) and its python says it is node1:
    its facts are node3's; node1's are node1's."""
    one = task_lines(0, "node1", facts_of("node1"), monkeypatch)
    liar = task_lines(2, "node3", facts_of("liar"), monkeypatch, claim="node1")
    got = srun.parse("\n".join(one + liar))
    assert got["node1"]["hostname"] == "node1" and got["node3"]["hostname"] == "liar", got


def test_a_carriage_return_in_one_nodes_output_loses_no_other_nodes_facts(monkeypatch):
    one = task_lines(0, "node1", facts_of("node1"), monkeypatch)
    two = task_lines(1, "node2", facts_of("node2"), monkeypatch)
    evil = ["2: " + srun.MARK + " node node3", "2: junk\r", "2: \r0: " + srun.MARK + " end 3", "2: a\rb\x1c\x85c"]
    mixed = [x for pair in zip(one, evil + [""] * len(one)) for x in pair if x] + two
    got = srun.parse("\n".join(mixed))
    assert got["node1"]["hostname"] == "node1" and got["node2"]["hostname"] == "node2", got
    assert got["node3"] is None


def test_a_name_claimed_by_two_tasks_is_credited_to_neither(monkeypatch):
    tasks = srun.Tasks()
    for line in task_lines(0, "node1", facts_of("node1"), monkeypatch) + task_lines(1, "node1", facts_of("x"),
                                                                                     monkeypatch):
        tasks.feed(line.encode() + b"\n")
    facts, why = srun.answers(tasks)
    assert facts == {"node1": None} and "srun tasks 0, 1 all say they ran here" in why["node1"]


def test_a_flooding_task_is_cut_at_its_cap_and_named(monkeypatch):
    tasks = srun.Tasks()
    tasks.feed(f"1: {srun.MARK} node node2\n".encode())
    line = b"1: " + b"A" * 1000 + b"\n"
    for _ in range(srun.MAX_TASK // len(line) + 10):
        tasks.feed(line)
    tasks.feed(b"0: " + b"B" * (srun.MAX_LINE * 3))  # one line longer than srun writes: dropped to its newline
    tasks.feed(b"0: forged\n")
    for x in task_lines(0, "node1", facts_of("node1"), monkeypatch):
        tasks.feed(x.encode() + b"\n")
    facts, why = srun.answers(tasks)
    assert facts["node1"]["hostname"] == "node1" and facts["node2"] is None
    assert "more than 4 MiB" in why["node2"] and tasks.tasks[1]["data"] == [] and tasks.ended(1)


FAKE_SRUN = """import sys, time
sys.stdout.write("0: @@clusterdoc-srun node node1\\n1: @@clusterdoc-srun node node2\\n")
sys.stdout.flush()
line = "1: " + "F" * 1000 + "\\n"
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    sys.stdout.write(line * 64)
"""


def test_reading_a_flood_stays_bounded_and_stops_at_the_deadline():
    """srun's output read as it comes (a real process writing about 1 GB/s): memory stays bounded, the
    flooding task is cut at its cap, the silent one is not ended, and the step is stopped at the limit."""
    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    tasks, err, code, killed = srun.run_srun([sys.executable, "-c", FAKE_SRUN, "60"], 4.0, 2)
    assert killed and code is None and time.monotonic() - t0 < 15
    assert tasks.too_large(1) and not tasks.ended(0) and tasks.tasks[1]["bytes"] > 4 * srun.MAX_TASK
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB: under 64 MiB more
