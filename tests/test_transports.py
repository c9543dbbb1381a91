"""doctor/transports: the choice by name in one place, the probe request built once, and the srun, local and saved
transports' actions on real processes and files (the srun steps themselves: tests/test_transport_cluster.py)."""

import json

import pytest

from clusterdoc.doctor import facts, transports
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.doctor.payload import probe_argv
from clusterdoc.doctor.transports import ProbeRequest, resolve
from clusterdoc.doctor.transports.local import LocalTransport
from clusterdoc.doctor.transports.saved import SavedTransport
from clusterdoc.doctor.transports.srun import MAX_OUTPUT, SrunTransport, run_step
from clusterdoc.errors import UsageError


@pytest.fixture
def no_allocation(monkeypatch):
    for k in ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NODELIST"):
        monkeypatch.delenv(k, raising=False)


def test_resolve_is_the_one_choice(no_allocation, monkeypatch):
    assert resolve("auto", given=True) == "ssh"
    assert resolve("auto", given=False) == "local"
    assert resolve("srun", given=True) == "srun"
    assert resolve("auto", given=True, partition="gpu") == "srun"
    assert resolve("ssh", given=True) == "ssh"
    assert resolve("auto", given=False, facts_dir="x") == "saved"
    assert resolve("auto", given=False, local=True) == "local"
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert resolve("auto", given=False) == "srun"  # inside an allocation: its nodes
    assert resolve("auto", given=True) == "ssh"  # nodes named: SSH first, srun when every node refuses
    assert resolve("ssh", given=False) == "local"
    with pytest.raises(UsageError, match="--transport 'pdsh'"):
        resolve("pdsh")


def test_the_doctors_probe_arguments_come_from_one_request():
    opts = CheckOptions(nodelist=["a", "b"], env=["NCCL_DEBUG=INFO"], files=["/x"], job_folder="/j", port=29500)
    opts.job_env = facts.job_environment(opts)
    # the full SSH gather's request: the same probe_request, and each node's part of it
    request = facts.ssh_request(opts, ["a", "b"], ["net", "port", "mesh"], head_path="/usr/bin/mpirun")
    plan = request.ports["b"]
    args = request.args("b")
    assert args == {"peers": ["a", "b"], "env": {"NCCL_DEBUG": "INFO"}, "listen": plan["listen"],
                    "connect": plan["connect"], "space": ["/j"], "files": ["/x"]}  # fmt: skip
    assert request.argv("b") == probe_argv(args) and request.head_mpirun == "/usr/bin/mpirun"
    assert request.mesh == {"a": ["b"], "b": ["a"]} and request.trust and request.order[0] == "a"
    assert facts.probe_request(opts).args() == dict(args, peers=[], listen=[], connect=[])
    # through srun the probe gets --env alone, as before (its --wrap is the step's prefix)
    assert facts.probe_request(opts, python_only=True).argv() == ["--env", "NCCL_DEBUG=INFO"]


def test_a_node_answers_only_what_it_was_asked_over_ssh():
    """transports/ssh.answer: mesh pairs and trusted peers the request did not name are dropped (a node cannot add
    them), the head's send and receive times go beside the node's clock, a missing interpreter is named."""
    from clusterdoc.doctor.transports.ssh import answer
    from clusterdoc.remote import RunResult

    request = ProbeRequest(timeout=5, python="/opt/py/bin/python", mesh={"a": ["b"]})
    node = {"schema": 1, "mesh": {"b": {"ok": True}, "evil": {"ok": True}}, "clock": {"start": 1.0},
            "ssh_trust": {"known": {"a": [], "b": [], "c": []}}}  # fmt: skip
    r = RunResult("a", "timeout", None, json.dumps(node), "", 5.0, "a: did not finish", 10.0, 11.0)
    a = answer(r, request, ["a", "b"])
    assert a.status == "ok" and a.facts is not None  # the facts came: whatever hung is in its errors
    assert list(a.facts["mesh"]) == ["b"] and list(a.facts["ssh_trust"]["known"]) == ["b"]
    assert (a.facts["clock"]["head_sent"], a.facts["clock"]["head_received"]) == (10.0, 11.0)
    shell = answer(RunResult("a", "ok", 0, "@@clusterdoc-shell-probe\n"), request, ["a"])
    assert shell.facts is not None and shell.facts["python_missing"] == "/opt/py/bin/python"
    dead = answer(RunResult("a", "refused", None, message="a: connection refused"))
    assert dead.conn() == {"status": "refused", "message": "a: connection refused", "elapsed": 0.0, "exit_code": None}


def test_a_srun_step_runs_on_the_one_node_named(no_allocation):
    t = SrunTransport(partition="gpu", srun_options=["--container-image=x"])
    argv = t.step_argv("node3", 100, ["bash", "-c", "true"])
    assert argv[:6] == ["srun", "--nodes=1", "--ntasks=1", "--nodelist=node3", "--kill-on-bad-exit=0", "--quiet"]
    assert "--partition=gpu" in argv and "--time=3" in argv and argv[-4:] == ["--container-image=x", "bash", "-c",
                                                                                "true"]  # fmt: skip
    for bad in ("-w", "node1,node2", "a b", ""):
        with pytest.raises(UsageError, match="not a Slurm node name"):
            t.step_argv(bad, 10, ["true"])


def test_a_step_is_read_bounded_and_ended_at_its_timeout(monkeypatch):
    big = run_step("n1", ["sh", "-c", f"head -c {MAX_OUTPUT + 100000} /dev/zero; cat"], b"in", 20)
    assert big.status == "ok" and big.exit_code == 0 and len(big.stdout) == MAX_OUTPUT
    echo = run_step("n1", ["sh", "-c", "cat; echo oops >&2; exit 3"], b"hello", 20)
    assert (echo.stdout, echo.stderr.strip(), echo.exit_code) == ("hello", "oops", 3)
    assert "exited with 3" in echo.message
    monkeypatch.setattr("clusterdoc.doctor.transports.srun.STARTUP", 0.0)
    slow = run_step("n1", ["sleep", "30"], None, 1)
    assert slow.status == "timeout" and slow.exit_code is None and slow.elapsed < 15
    missing = run_step("n1", ["/nonexistent/srun"], None, 1)
    assert missing.status == "error" and "cannot start srun" in missing.message


def test_local_transport_runs_and_copies(tmp_path):
    t = LocalTransport()
    r = t.run(["localhost"], "cat; exit 2", 10, stdin=b"x")["localhost"]
    assert (r.status, r.exit_code, r.stdout) == ("ok", 2, "x")
    src = tmp_path / "a.whl"
    src.write_bytes(b"wheel")
    assert t.put("localhost", src, str(tmp_path / "b.whl"), 10).status == "ok"
    assert (tmp_path / "b.whl").read_bytes() == b"wheel"
    assert t.put("localhost", src, str(tmp_path / "no" / "c.whl"), 10).status == "error"


def test_saved_facts_answer_without_reaching_a_node(tmp_path):
    (tmp_path / "node1.json").write_text(json.dumps({"hostname": "node1"}))
    (tmp_path / "_run.json").write_text("{}")
    names, answers = SavedTransport(tmp_path).probe([], ProbeRequest(timeout=5))
    assert names == ["node1"] and answers["node1"].facts and answers["node1"].facts["hostname"] == "node1"
    _, answers = SavedTransport(tmp_path).probe(["node1", "node2"], ProbeRequest(timeout=5))
    assert answers["node2"].facts is None and answers["node2"].status == "error"
    with pytest.raises(UsageError, match="cannot run commands"):
        SavedTransport(tmp_path).run(["node1"], "true", 5)
    (tmp_path / "bad name.json").write_text("{}")
    with pytest.raises(UsageError, match="is not a host name"):
        SavedTransport(tmp_path).probe([], ProbeRequest(timeout=5))


class Refused:
    """A transport every node refuses (what SSH says where pam_slurm_adopt turns a user away)."""

    name = "ssh"

    def probe(self, nodes, request):
        return list(nodes), {n: transports.Answer("auth", f"{n}: no key accepted") for n in nodes}


def test_only_auto_falls_back_and_only_when_every_node_refused(monkeypatch):
    monkeypatch.setattr(transports.slurm_steps, "slurm_answers", lambda timeout: True)
    refused = {n: transports.Answer("auth") for n in ("a", "b")}
    assert transports.fall_back("auto", refused, 5)
    assert not transports.fall_back("ssh", refused, 5)
    assert not transports.fall_back("auto", dict(refused, c=transports.Answer("ok")), 5)
    assert not transports.fall_back("auto", {}, 5)
    carrier, names, answers = transports.probe("ssh", Refused(), ["a"], ProbeRequest(timeout=5))
    assert carrier.name == "ssh" and answers["a"].status == "auth"
    monkeypatch.setattr(transports.slurm_steps, "slurm_answers", lambda timeout: False)
    assert not transports.fall_back("auto", refused, 5)


def test_nodes_are_reached_through_the_transports_only():
    """Every node probe (check's full SSH gather, build-wheel's, why's) goes through doctor/transports/: only the
    SSH transport speaks remote.py's SSH itself, besides doctor/ranks.py (check --comm/--perf start one rank per
    node, a run, not a probe). A planted `remote.run_many` elsewhere fails here."""
    import ast
    from pathlib import Path

    import clusterdoc

    root = Path(clusterdoc.__file__).parent
    allowed = {"remote.py", "doctor/transports/ssh.py", "doctor/ranks.py"}
    speaks = {"run_many", "run_one", "reach", "put_file", "connect", "SSHContext"}
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in speaks and ast.unparse(node.value) == "remote":
                found.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "clusterdoc.remote":
                found += [f"{rel}:{node.lineno}" for a in node.names if a.name in speaks]
    assert not found, found
