"""Cross-node checks (consistency, mpirun answers, comm) and the report, from fact fixtures: no SSH."""

import json
from pathlib import Path

from clusterdoc.doctor import render as report
from clusterdoc.checks import FAIL, OK, WARN, arch, comm, consistency, mpi

FACTS = Path(__file__).parent / "facts"


def load(name, hostname=None):
    f = json.loads((FACTS / f"{name}.json").read_text())
    if hostname:
        f["hostname"] = hostname
    return f


def cluster(n=4, **planted):
    return {f"node{i}": load(planted.get(f"node{i}", "healthy"), f"node{i}") for i in range(1, n + 1)}


def test_identical_nodes_are_consistent():
    out = consistency.check(cluster(4), compress=report.hostlist)
    assert {f["status"] for f in out} == {OK}
    assert sorted(f["node"] for f in out) == ["node1", "node2", "node3", "node4"]


def test_gpu_split_names_the_groups_and_the_pace_note():
    out = consistency.check(cluster(4, node4="h100_outside_arch_list"), compress=report.hostlist)
    warns = [f for f in out if f["status"] == WARN]
    labels = [f["message"].split(" differs")[0] for f in warns]
    assert labels == ["GPU model", "GPU memory MiB"]
    assert "NVIDIA A100-SXM4-80GB on node[1-3]; NVIDIA H100 80GB HBM3 on node4" in warns[0]["message"]
    assert "slowest GPU" in warns[0]["message"]
    assert "smallest GPU" in warns[1]["message"]
    assert all(f["nodes"] == ["node4"] for f in warns)


def test_torch_version_split():
    facts = cluster(3)
    facts["node2"]["torch"]["version"] = "2.2.0+cu121"
    warns = [f for f in consistency.check(facts) if f["status"] == WARN]
    assert len(warns) == 1 and warns[0]["nodes"] == ["node2"] and "2.3.1+cu121" in warns[0]["fix"]


def test_needed_arch_list_covers_every_gpu():
    assert arch.needed_arch_list(cluster(4, node3="h100_outside_arch_list")) == "8.0;9.0+PTX"
    assert arch.needed_arch_list({"a": load("local_machine")}) == ""


def test_mpirun_missing_node_is_named():
    hostnames = {"node1": "node1", "node2": "node2", "node3": "node3"}
    run = {"command": "mpirun -f hf -n 3 -ppn 1 hostname", "timed_out": True, "timeout": 5, "exit_code": None,
           "names": ["node1", "node3"], "stderr": ""}
    out = mpi.check_run(hostnames, run)
    assert [(f["node"], f["status"]) for f in out] == [("node1", OK), ("node2", FAIL), ("node3", OK)]
    assert "timed out after 5s" in out[1]["message"]


def test_comm_silent_rank_and_wrong_sum():
    result = {"world": 3, "master": "node1:29500", "ranks": {
        "node1": {"ok": True, "rank": 0, "sum": 6.0, "backend": "gloo"},
        "node2": {"ok": True, "rank": 1, "sum": 5.0, "backend": "gloo"},
        "node3": {"ok": False, "message": "timed out"}}}
    out = comm.check(result, ["node1", "node2", "node3", "node4"])
    assert [(f["node"], f["status"]) for f in out] == [("node1", OK), ("node2", FAIL), ("node3", FAIL), ("node4", FAIL)]
    assert "NCCL_DEBUG=INFO" in out[2]["fix"]


def test_comm_rank_line_that_is_not_json_is_that_nodes_finding():
    good = 'CLUSTERDOC-COMM {"rank": 0, "world": 2, "backend": "gloo", "sum": 3.0}'
    ranks = {"node1": comm.parse_rank_output("ok", good, "")}
    for line in ("CLUSTERDOC-COMM {not json", "CLUSTERDOC-COMM [1]", "CLUSTERDOC-COMM " + "[" * 100000,
                 'CLUSTERDOC-COMM {"rank": "0", "backend": "gloo"}'):
        ranks["node2"] = comm.parse_rank_output("ok", line, "")
        out = comm.check({"world": 2, "master": "node1:29500", "ranks": ranks}, ["node1", "node2"])
        assert [(f["node"], f["status"]) for f in out] == [("node1", OK), ("node2", FAIL)]
        assert "its output line is not the expected JSON record" in out[1]["message"]


def test_report_groups_identical_nodes_and_lists_fixes():
    facts = {f"node{i}": load("healthy", f"node{i}") for i in range(1, 65)}
    facts["node7"] = load("old_kernel", "node7")
    facts["node9"] = load("old_kernel", "node9")
    nodes = list(facts)
    checks = ["kernel", "consistency"]
    findings = []
    from clusterdoc.checks import kernel
    for n, f in facts.items():
        findings += kernel.check(n, f)
    findings += consistency.check(facts, compress=report.hostlist)
    text = report.render(nodes, findings, checks, "8.0+PTX")
    lines = text.splitlines()
    assert any(l.startswith("node[7,9]") and "FAIL" in l and " 2 " in l for l in lines)
    assert any(l.startswith("node[1-6,8,10-64]") and " 62 " in l for l in lines)
    assert "[FAIL] kernel node[7,9]: kernel 5.4.0-150-generic is older than 5.5" in text
    assert "    fix: upgrade the node's kernel" in text
    assert "TORCH_CUDA_ARCH_LIST this cluster needs: 8.0+PTX" in text
    assert len(lines) < 15  # 64 nodes stay readable
    assert report.exit_code(findings) == 1


def test_exit_codes_and_strict():
    warn = [{"node": "a", "check": "kernel", "status": WARN, "message": "m", "fix": "f"}]
    assert report.exit_code([]) == 0
    assert report.exit_code(warn) == 0
    assert report.exit_code(warn, strict=True) == 1


def test_json_shape():
    findings = [{"node": "a", "check": "kernel", "status": FAIL, "message": "m", "fix": "f"}]
    summ = report.summary(["a", "b"], findings, ["kernel"], "8.0+PTX")
    doc = json.loads(report.to_json([{"node": "a"}, {"node": "b"}], findings, summ))
    assert set(doc) == {"nodes", "findings", "summary"}
    assert doc["summary"]["nodes_fail"] == 1 and doc["summary"]["exit_code"] == 1
    assert doc["summary"]["needed_arch_list"] == "8.0+PTX"


def test_mesh_failures_to_one_node_merge_into_one_line():
    from clusterdoc.checks import ssh

    facts = {f"node{i}": load("healthy", f"node{i}") for i in range(1, 65)}
    findings = []
    for n, f in facts.items():
        f["mesh"] = {p: {"ok": p != "node5", "message": "ok" if p != "node5" else
                         "ssh: connect to host node5 port 22: Connection refused"} for p in facts if p != n}
        findings += ssh.check_mesh(n, f)
    text = report.render(list(facts), findings, ["mesh"], "")
    lines = [l for l in text.splitlines() if l.startswith("[FAIL]")]
    assert lines == ["[FAIL] mesh node[1-4,6-64]: ssh to node5 fails: ssh: connect to host node5 port 22: "
                     "Connection refused"]


# Open MPI 4.1.4 (mpirun.openmpi) when one host cannot be reached: the stderr seen on the test cluster, shortened
OPENMPI_NO_DAEMON = """ssh: Could not resolve hostname nodex: Name or service not known
--------------------------------------------------------------------------
ORTE was unable to reliably start one or more daemons.
This usually is caused by:

* not finding the required libraries and/or binaries on
  one or more nodes. Please check your PATH and LD_LIBRARY_PATH
--------------------------------------------------------------------------
--------------------------------------------------------------------------
ORTE does not know how to route a message to the specified daemon
be to set the MCA param routed=direct on the command line or
in your environment. We apologize for the problem.
--------------------------------------------------------------------------
"""


def test_mpirun_failure_reason_is_the_cause_not_open_mpis_banner_dashes():
    run = {"command": "mpirun.openmpi --hostfile hf -np 2 hostname", "timed_out": False, "exit_code": 255,
           "names": [], "stderr": OPENMPI_NO_DAEMON}
    out = mpi.check_run({"node1": "node1", "nodex": "nodex"}, run)
    assert out[1]["message"] == ("no rank started on nodex (nodex): mpirun exited 255: "
                                 "ssh: Could not resolve hostname nodex: Name or service not known")
    without_ssh = OPENMPI_NO_DAEMON.split("\n", 1)[1]
    assert mpi.stderr_reason(without_ssh) == "ORTE was unable to reliably start one or more daemons."
    # MPICH Hydra: no banners, the last line as before
    assert mpi.stderr_reason("[mpiexec@head] HYDU_sock_write\n[mpiexec@head] control_cb: proxy failed\n") \
        == "[mpiexec@head] control_cb: proxy failed"


def test_same_failure_on_several_nodes_is_one_problem():
    from clusterdoc.checks import ssh

    nodes = ["node1", "node2", "node3", "node10"]
    findings = [f for n in nodes[1:] for f in ssh.check(
        n, {"status": "unreachable", "message": f"{n}: name does not resolve (Name or service not known)"}, None)]
    findings += ssh.check("node1", {"status": "ok"}, {"probe": "python"})
    text = report.render(nodes, findings, ["ssh"], "")
    fails = [l for l in text.splitlines() if l.startswith("[FAIL]")]
    assert fails == ["[FAIL] ssh node[2-3,10]: node[2-3,10]: name does not resolve (Name or service not known)"]
    assert "fix: check the node's name or address" in text
    assert text.endswith("4 node(s) checked: 1 problem(s) on 3 node(s), 0 warning(s)")
    assert report.summary(nodes, findings, ["ssh"], "")["problems"] == {WARN: 0, FAIL: 1}


def test_a_cluster_wide_finding_counts_once():
    f = {"node": "node[1-4]", "nodes": ["node1", "node2", "node3", "node4"], "check": "mpi", "status": FAIL,
         "message": "mpi4py allreduce gave [1], expected 4", "fix": "x"}
    text = report.render(["node1", "node2", "node3", "node4"], [f], ["mpi"], "")
    assert text.endswith("1 problem(s) on 4 node(s), 0 warning(s)")


def test_two_nodes_that_disagree_have_no_majority():
    facts = cluster(2)
    facts["node2"]["torch"]["version"] = "9.9.9"
    (warn,) = [f for f in consistency.check(facts) if f["status"] == WARN and f["message"].startswith("torch ")]
    assert "majority" not in warn["fix"].replace("no majority", "")
    assert warn["nodes"] == ["node1", "node2"] and warn["node"] == "node[1-2]"
    facts = cluster(3)
    facts["node3"]["torch"]["version"] = "9.9.9"
    (warn,) = [f for f in consistency.check(facts) if f["status"] == WARN and f["message"].startswith("torch ")]
    assert "the majority has" in warn["fix"] and warn["nodes"] == ["node3"]


def test_a_closed_pipe_keeps_the_exit_code():
    import subprocess
    import sys

    code = ("import sys\nfrom clusterdoc import cli\n"
            "def fake(args):\n    [print('line', i) for i in range(50000)]\n    return 1\n"
            "cli.cmd_hosts = fake\nsys.exit(cli.main(['hosts', '--nodelist', 'a']))\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()  # like `| head -1`
    assert p.wait(timeout=60) == 1
    assert b"Traceback" not in p.stderr.read()


def test_a_node_the_head_cannot_reach_is_one_finding_and_nothing_else():
    from clusterdoc.checks import ALL_CHECKS
    from clusterdoc.doctor import Gathered, judge

    nodes = ["nosuchhost", "node1", "node2"]
    ok = {"status": "ok", "message": "", "elapsed": 0.1, "exit_code": 0}
    conns = {"node1": ok, "node2": ok, "nosuchhost": {
        "status": "unreachable", "message": "nosuchhost: name does not resolve (Name or service not known)",
        "elapsed": 0.0, "exit_code": None}}
    facts = {"nosuchhost": None, **cluster(2)}
    checks = [c for c in ALL_CHECKS if c != "comm"]
    findings = judge(Gathered(nodes, conns, facts, checks))
    bad = [f for f in findings if f["status"] != OK]
    assert [(f["node"], f["check"]) for f in bad] == [("nosuchhost", "ssh")], bad
    assert bad[0]["message"].startswith("nosuchhost: name does not resolve")
    assert bad[0]["message"].endswith("; not tested because of this: " + ", ".join(c for c in checks if c != "ssh"))
    assert "DNS" in bad[0]["fix"]
