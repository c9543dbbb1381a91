"""One bad node cannot take the report down: every field of recorded facts is replaced by values of the wrong
type, sent through the edge (the node's stdout as the head parses it), and the whole doctor runs on it beside a
healthy node: judging, the cross-node checks, the report, --json, build-wheel's arch list. That node gets a
`fail`, the other its full report; no crash, valid JSON. Also: nodes that call themselves by one name.

tests/facts/cluster/ is a `--save-facts` of the test cluster's node1 and node2 (every field the probe gives;
without --comm, the GPU cluster's torch stub has no torch.distributed); nvidia_smi_hangs.json adds a probe error,
local_machine.json an mpi4py.
"""

import json
from pathlib import Path

import pytest

from clusterdoc.checks import comm, mpi, ssh
from clusterdoc.doctor import CheckOptions, Report, judge
from clusterdoc.doctor.facts import Gathered
from clusterdoc.doctor.payload import parse_output
from clusterdoc.hostfile import compress_hostlist
from clusterdoc.wheel.command import derive_arch_list

FACTS = Path(__file__).parent / "facts"
RUN = json.loads((FACTS / "cluster" / "_run.json").read_text())
HEALTHY = json.loads((FACTS / "cluster" / "node2.json").read_text())
SOURCES = {name: json.loads((FACTS / f"{name}.json").read_text())
           for name in ("cluster/node1", "nvidia_smi_hangs", "local_machine")}
WRONG = [None, [None], "x", {"x": None}, 10**400, float("nan")]


def field_paths(value, prefix=()):
    """Every field (dict keys; a list's first item) as a path of keys and indices."""
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, v in value.items():
            if key != "malformed":
                yield from field_paths(v, prefix + (key,))
    elif isinstance(value, list) and value:
        yield from field_paths(value[0], prefix + (0,))


def fields():
    seen = set()
    for name, facts in SOURCES.items():
        for path in field_paths(facts):
            if path not in seen:
                seen.add(path)
                yield pytest.param(name, path, id=f"{name.split('/')[-1]}:{'.'.join(map(str, path))}")


def replaced(facts, path, value):
    out = json.loads(json.dumps(facts))
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    if path != ("hostname",):
        out["hostname"] = "node1"
    return out


def kind(value):
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def doctor(node1_stdout: str):
    """The doctor on node1 (as it answered) and the recorded healthy node2: (findings, report, json text)."""
    facts = {"node1": parse_output(node1_stdout), "node2": parse_output(json.dumps(HEALTHY))}
    conns = {n: dict(RUN["conns"][n]) for n in facts}
    g = Gathered(["node1", "node2"], conns, facts, list(RUN["checks"]), RUN["head_mpirun"], RUN["mpirun"],
                 RUN["comm"])
    findings = judge(g, CheckOptions())
    report = Report.build(g, findings)
    report.render(verbose=1)
    return findings, report, report.to_json()


def strict_json(text):
    def refuse(constant):
        raise AssertionError(f"invalid JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


COMPARING = {"consistency", "port"}  # judged by comparing the nodes (the TCP test runs between them): node1 shows


def own(findings, node):
    """A node's own findings: about it alone, from checks that judge it by its facts."""
    return sorted((f["check"], f["status"], f["message"]) for f in findings
                  if f["node"] == node and "nodes" not in f and f["check"] not in COMPARING)


# node2's own findings beside each source as it was recorded
BASELINE = {name: own(doctor(json.dumps(dict(facts, hostname="node1")))[0], "node2") for name, facts in SOURCES.items()}


@pytest.mark.parametrize("source, path", list(fields()))
def test_a_wrong_type_in_any_field_fails_that_node_only(source, path):
    value_before = SOURCES[source]
    for key in path:
        value_before = value_before[key]
    for wrong in WRONG:
        sent = replaced(SOURCES[source], path, wrong)
        findings, report, text = doctor(json.dumps(sent))  # NaN goes over the wire as Python's json writes it
        where = (path, wrong)
        assert not [f for f in findings if "traceback" in f or "crashed" in f["message"]], where
        doc = strict_json(text)
        node1, node2 = doc["nodes"]
        # the healthy node: every check judged, its own findings as beside node1 as recorded
        assert None not in node2["status"].values() and own(findings, "node2") == BASELINE[source], where
        if wrong is not None and value_before is not None and (
                kind(wrong) != kind(value_before) or kind(wrong) in ("list", "number")):
            assert node1["status"] and "fail" in node1["status"].values(), where
            assert node1["facts"]["malformed"], where
        # build-wheel's arch list: node1 is a failure or contributes its GPUs; node2's GPUs always count
        archs, _, per_host, wheel_findings = derive_arch_list(None, {"node1": node1["facts"], "node2": node2["facts"]})
        assert per_host["node2"] and archs, where
        assert all(f.message.startswith("node1:") for f in wheel_findings), where


def test_a_node_answering_gpus_null_is_a_failure_of_its_own():
    """The issue's case, through the same edge: {"gpus": [null]}."""
    sent = dict(SOURCES["cluster/node1"], gpus=[None])
    findings, report, text = doctor(json.dumps(sent))
    mine = [f for f in findings if f["node"] == "node1" and f["status"] == "fail"]
    assert [f["message"] for f in mine] == ["the node sent a malformed GPU entry: null (not trusted, not judged)"]
    assert own(findings, "node2") == BASELINE["cluster/node1"]
    assert strict_json(text)["summary"]["needed_arch_list"] == "8.0+PTX"  # from node2's GPUs
    _, _, _, wheel = derive_arch_list(None, {"node1": report.nodes[0].facts, "node2": report.nodes[1].facts})
    assert [f.message for f in wheel] == ["node1: the node sent malformed GPU facts (gpus[0]: null): not trusted"]


# --- a node that claims another node's name ----------------------------------------------------------

def named(*hostnames):
    return {f"node{i}": dict(HEALTHY, hostname=h) for i, h in enumerate(hostnames, 1)}


def test_nodes_sharing_a_host_name_are_a_finding():
    out = ssh.check_names(named("node1", "node1", "node3"), compress_hostlist)
    assert [(f["status"], f["message"], f["nodes"]) for f in out] == [
        ("fail", "node1 and node2 both call themselves node1: MPI ranks and their failures cannot be told apart",
         ["node1", "node2"])]
    assert "all call themselves gpu" in ssh.check_names(named("gpu", "gpu", "gpu"), compress_hostlist)[0]["message"]
    assert ssh.check_names(named("node1", "node2"), compress_hostlist) == []


def test_mpirun_answers_under_a_shared_name_are_not_attributed():
    hostnames = {"node1": "node1", "node2": "node1", "node3": "node3"}
    run = {"command": "mpirun", "exit_code": 1, "timed_out": False, "stderr": "", "names": ["node1", "node3"]}
    status = {f["node"]: (f["status"], f["message"]) for f in mpi.check_run(hostnames, run)}
    # one rank answered as node1: it may be node2's (a clone), so neither node1 nor node2 is judged ok
    assert status["node3"][0] == "ok" and status["node1"][0] == status["node2"][0] == "fail"
    assert "cannot be told" in status["node2"][1]
    run["names"] = ["node1", "node1", "node3"]
    assert {f["status"] for f in mpi.check_run(hostnames, run)} == {"ok"}


def test_the_report_names_the_clone_and_comm_ranks_are_given_not_looked_up():
    sent = dict(HEALTHY, hostname="node2")  # node1 of a cloned image answers as node2
    findings, report, _ = doctor(json.dumps(sent))
    clone = [f for f in findings if f["check"] == "ssh" and f["status"] == "fail"]
    assert [f["message"].split(":")[0] for f in clone] == ["node1 and node2 both call themselves node2"]
    assert "socket.gethostname" not in comm.RANK_SCRIPT  # each node is given its rank on the command line


def test_what_several_checks_share_is_guarded_too(monkeypatch):
    """Belt and braces behind the schema: the arch list the cluster needs (outside any check until now) crashing
    is a finding, and the report is still built."""
    from clusterdoc.checks import arch

    def crash(_):
        raise TypeError("a bug")

    monkeypatch.setattr(arch, "needed_arch_list", crash)
    findings, report, text = doctor(json.dumps(SOURCES["cluster/node1"]))
    crashed = [f for f in findings if "crashed" in f["message"]]
    assert [(f["check"], f["status"], f["nodes"]) for f in crashed] == [("arch", "fail", ["node1", "node2"])]
    assert strict_json(text)["summary"]["needed_arch_list"] is None
