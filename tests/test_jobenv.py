"""The job's environment (doctor/jobenv.py): the shell's variables where the launcher passes them on, --env on top,
the node's own beneath; each finding saying where its value came from; the same finding on many nodes one line.
Pure: facts dicts in, findings and the rendered report out. On the test cluster: tests/test_jobenv_cluster.py."""

import copy
import json

import pytest

from clusterdoc.checks import FAIL, OK, WARN, finding
from clusterdoc.doctor import facts as facts_mod
from clusterdoc.doctor import jobenv, render
from clusterdoc.doctor.facts import Gathered, read_facts, save_facts
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.doctor.report import Report
from clusterdoc.doctor.rules import judge
from clusterdoc.errors import UsageError
from tests.test_checks_netres import NODES
from tests.test_nccl import healthy

SLURM = "from your shell, passed on by Slurm's --export=ALL"


# --- merging and precedence -------------------------------------------------------------------------


def test_the_shell_passes_only_the_judged_variables_and_no_secret():
    shell = {"NCCL_SOCKET_IFNAME": "lo", "GLOO_SOCKET_IFNAME": "eth0", "CUDA_VISIBLE_DEVICES": "0,1",
             "TORCH_CUDA_ARCH_LIST": "8.0", "NCCL_IB_HCA": "mlx5", "NCCL_IB_PKEY": "0x8001", "UCX_TLS": "rc",
             "HF_TOKEN": "hf_abc", "NCCL_AUTH_TOKEN": "s3cret", "NCCL_PASSWORD": "x", "PATH": "/usr/bin",
             "MASTER_ADDR": "node1", "AWS_SECRET_ACCESS_KEY": "k"}
    env = jobenv.merge(shell, None, "slurm")
    assert env.values == {"NCCL_SOCKET_IFNAME": "lo", "GLOO_SOCKET_IFNAME": "eth0", "CUDA_VISIBLE_DEVICES": "0,1",
                          "TORCH_CUDA_ARCH_LIST": "8.0", "NCCL_IB_HCA": "mlx5", "NCCL_IB_PKEY": "0x8001"}
    assert set(env.sources.values()) == {SLURM}
    assert "s3cret" not in json.dumps(env.to_json()) and "hf_abc" not in json.dumps(env.to_json())


@pytest.mark.parametrize(("launcher", "passed"), [("slurm", True), ("mpich", True), ("local", True),
                                                  ("openmpi", False), ("none", False)])
def test_which_launchers_pass_the_shell_on(launcher, passed):
    env = jobenv.merge({"NCCL_SOCKET_IFNAME": "lo"}, None, launcher)
    assert (env.values == {"NCCL_SOCKET_IFNAME": "lo"}) is passed


def test_env_wins_over_the_shell_and_the_shell_over_the_node():
    env = jobenv.merge({"NCCL_SOCKET_IFNAME": "lo", "NCCL_DEBUG": "INFO"}, {"NCCL_SOCKET_IFNAME": "eth0"}, "mpich")
    node = {"NCCL_SOCKET_IFNAME": "ib0", "NCCL_DEBUG": "WARN", "NCCL_IB_HCA": "mlx5_0", "GLOO_SOCKET_IFNAME": None}
    assert env.view(node) == {
        "NCCL_SOCKET_IFNAME": ("eth0", jobenv.FROM_ENV),
        "NCCL_DEBUG": ("INFO", "from your shell, passed on by MPICH's mpiexec"),
        "NCCL_IB_HCA": ("mlx5_0", jobenv.FROM_NODE),
    }
    # Open MPI passes only -x names: the node's own value stays, --env still wins
    env = jobenv.merge({"NCCL_SOCKET_IFNAME": "lo", "NCCL_DEBUG": "INFO"}, {"NCCL_IB_HCA": "mlx5_1"}, "openmpi")
    assert env.view(node)["NCCL_SOCKET_IFNAME"] == ("ib0", jobenv.FROM_NODE)
    assert env.view(node)["NCCL_IB_HCA"] == ("mlx5_1", jobenv.FROM_ENV)


def test_options_resolve_the_launcher_and_the_shell(monkeypatch):
    shell = {"NCCL_SOCKET_IFNAME": "lo"}
    opts = CheckOptions(nodelist="node[1-2]", environ=shell, launcher="openmpi", env=["NCCL_DEBUG=INFO"])
    assert facts_mod.job_environment(opts).values == {"NCCL_DEBUG": "INFO"}
    assert facts_mod.resolve_launcher(CheckOptions(local=True, environ=shell)) == "local"
    assert facts_mod.resolve_launcher(CheckOptions(transport="srun", nodelist="n1")) == "slurm"
    monkeypatch.setattr(facts_mod.shutil, "which", lambda name: "/usr/bin/sbatch" if name == "sbatch" else None)
    assert facts_mod.resolve_launcher(CheckOptions(nodelist="n1")) == "slurm"
    monkeypatch.setattr(facts_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(facts_mod.mpirun, "head_mpirun", lambda path: None)
    assert facts_mod.resolve_launcher(CheckOptions(nodelist="n1")) == "none"  # nothing here passes the shell on
    monkeypatch.setattr(facts_mod.mpirun, "head_mpirun", lambda path: {"flavour": "openmpi"})
    assert facts_mod.resolve_launcher(CheckOptions(nodelist="n1")) == "openmpi"
    with pytest.raises(UsageError, match="--launcher 'pbs'"):
        CheckOptions(launcher="pbs").validate()


# --- where each value came from ---------------------------------------------------------------------


def test_annotate_names_the_source_after_the_value_it_quotes():
    env = jobenv.merge({"NCCL_SOCKET_IFNAME": "lo"}, None, "slurm")
    f = finding("node1", "net", FAIL, "NCCL_SOCKET_IFNAME=lo on node1 picks lo", "on node1: set NCCL_SOCKET_IFNAME")
    jobenv.annotate(f, {"NCCL_SOCKET_IFNAME": "lo"}, env)
    assert f["message"] == f"NCCL_SOCKET_IFNAME=lo ({SLURM}) on node1 picks lo"
    assert f["fix"].endswith("it comes from your shell: change it there (export or unset NCCL_SOCKET_IFNAME) "
                             "before you run or submit the job")
    # a node whose own value differs from the shell's (Open MPI, or the shell unset): the node's
    f = finding("node2", "net", FAIL, "NCCL_SOCKET_IFNAME=lo0 matches no interface on node2", "x")
    jobenv.annotate(f, {"NCCL_SOCKET_IFNAME": "lo0"}, env)
    assert f["message"] == "NCCL_SOCKET_IFNAME=lo0 (set on the node) matches no interface on node2"
    assert f["fix"] == "x"
    # a value that is only the start of a longer one is not it
    f = finding("node2", "net", OK, "GLOO_SOCKET_IFNAME=eth0.5 -> eth0.5 (up)")
    jobenv.annotate(f, {"GLOO_SOCKET_IFNAME": "eth0"}, env)
    assert f["message"] == "GLOO_SOCKET_IFNAME=eth0.5 -> eth0.5 (up)"


def run(facts, job_env, checks=("net", "nccl")):
    g = Gathered(list(facts), {n: {"status": "ok", "message": "", "elapsed": 0.1, "exit_code": 0} for n in facts},
                 facts, list(checks), job_env=job_env)
    return g, judge(g, CheckOptions())


def shell_lo():
    """Four nodes whose probe was told NCCL_SOCKET_IFNAME=lo, the value of the shell the check ran from."""
    facts = healthy()
    for f in facts.values():
        f["net"]["ifname_env"]["NCCL_SOCKET_IFNAME"] = "lo"
        f["nccl"]["env"]["NCCL_SOCKET_IFNAME"] = "lo"
    return facts


def test_a_shell_value_on_every_node_is_one_fail_line_naming_the_nodes_and_the_shell():
    g, findings = run(shell_lo(), jobenv.merge({"NCCL_SOCKET_IFNAME": "lo"}, None, "slurm"))
    bad = [f for f in findings if f["status"] != OK]
    assert sorted(f["node"] for f in bad) == NODES  # the JSON keeps one finding per node
    report = Report.build(g, findings)
    lines = [line for line in report.render().splitlines() if line.startswith("[")]
    assert lines == [f"[FAIL] net node[1-4]: NCCL_SOCKET_IFNAME=lo ({SLURM}) on node[1-4] picks lo (127.0.0.1/8), "
                     "the loopback interface: the other nodes cannot reach the address it announces (the job hangs at "
                     "init, then 'Connection refused' / a timeout)"], report.render()
    assert report.summary()["problems"] == {WARN: 0, FAIL: 1}
    assert report.summary()["job_env"] == {"launcher": "slurm", "values": {"NCCL_SOCKET_IFNAME": "lo"},
                                           "sources": {"NCCL_SOCKET_IFNAME": SLURM}}
    assert len(json.loads(report.to_json())["findings"]) == len(findings)
    assert "change it there (export or unset NCCL_SOCKET_IFNAME)" in report.render()
    assert all(f["message"].startswith(f"NCCL_SOCKET_IFNAME=lo ({SLURM}) on {f['node']} ") for f in bad)


def test_the_same_value_given_as_env_says_so():
    _, findings = run(shell_lo(), jobenv.merge({}, {"NCCL_SOCKET_IFNAME": "lo"}, "slurm"))
    assert all("NCCL_SOCKET_IFNAME=lo (from --env) on node" in f["message"] for f in findings if f["status"] == FAIL)


def test_a_typo_in_the_shell_is_named_with_the_variable_nccl_reads():
    facts = healthy()
    for f in facts.values():
        f["nccl"]["env"]["NCCL_SOCKET_IFACE"] = "eth0"
    g, findings = run(facts, jobenv.merge({"NCCL_SOCKET_IFACE": "eth0"}, None, "slurm"))
    assert sorted((f["node"], f["status"]) for f in findings if f["status"] != OK) == [(n, WARN) for n in NODES]
    lines = [line for line in Report.build(g, findings).render().splitlines() if line.startswith("[")]
    assert lines == [f"[WARN] nccl node[1-4]: NCCL_SOCKET_IFACE=eth0 ({SLURM}) is set for the job on node[1-4], but "
                     "NCCL reads no such variable (did you mean NCCL_SOCKET_IFNAME?): the setting has no effect"]


def test_a_healthy_shell_gives_no_finding():
    facts = healthy()
    for f in facts.values():
        f["net"]["ifname_env"]["NCCL_SOCKET_IFNAME"] = "eth0"
        f["nccl"]["env"].update(NCCL_SOCKET_IFNAME="eth0", NCCL_DEBUG="INFO")
    _, findings = run(facts, jobenv.merge({"NCCL_SOCKET_IFNAME": "eth0", "NCCL_DEBUG": "INFO"}, None, "slurm"))
    assert [f for f in findings if f["status"] != OK] == []
    ok = next(f for f in findings if f["check"] == "net" and "NCCL_SOCKET_IFNAME" in f["message"])
    assert ok["message"] == f"NCCL_SOCKET_IFNAME=eth0 ({SLURM}) -> eth0 (up)"


def test_saved_facts_keep_where_the_values_came_from(tmp_path):
    g, _ = run(shell_lo(), jobenv.merge({"NCCL_SOCKET_IFNAME": "lo"}, None, "slurm"))
    save_facts(g, tmp_path)
    back = read_facts(tmp_path, ["net"])
    assert back.job_env == g.job_env
    assert jobenv.JobEnv.from_json({"values": {"A": 1}, "launcher": "pbs"}) == jobenv.JobEnv()


# --- folding identical findings over nodes ----------------------------------------------------------


def test_findings_differing_only_by_the_node_fold_into_one_line():
    names = [f"node{i}" for i in range(1, 65)]
    same = [finding(n, "net", FAIL, f"{n} cannot resolve its own name {n}: x", f"add {n} to /etc/hosts on {n}",
                    nodes=[n]) for n in names]
    merged = render.problems(same)
    assert list(merged.values()) == [names]
    out = render.render(names, same, ["net"], None)
    assert "[FAIL] net node[1-64]: node[1-64] cannot resolve its own name node[1-64]: x" in out
    assert "    fix: add node[1-64] to /etc/hosts on node[1-64]" in out


def test_findings_that_differ_otherwise_stay_apart():
    fs = [finding("node1", "net", FAIL, "node1 has MTU 1500"), finding("node10", "net", FAIL, "node10 has MTU 9000"),
          finding("node2", "net", FAIL, "node2 has MTU 1500 (node1 too)"),
          finding("node[3-4]", "port", FAIL, "node[3-4] cannot reach node1", nodes=["node3", "node4"]),
          finding("node[5-6]", "port", FAIL, "node[5-6] cannot reach node1", nodes=["node5", "node6"])]
    merged = render.problems(copy.deepcopy(fs))
    assert len(merged) == 5  # a finding about several nodes already names them: it is kept as it is
    out = render.render([f"node{i}" for i in range(1, 11)], fs, ["net", "port"], None)
    assert "[FAIL] net node1: node1 has MTU 1500" in out and "[FAIL] net node10: node10 has MTU 9000" in out


def test_a_slurm_submission_records_the_shells_judged_variables_only(tmp_path):
    from clusterdoc.launch import preflight

    assert preflight.recorded_shell(tmp_path) is None  # a job submitted before the record existed
    preflight.record_shell(tmp_path, {"NCCL_SOCKET_IFNAME": "lo", "HF_TOKEN": "hf_x", "PATH": "/bin",
                                      "CUDA_VISIBLE_DEVICES": "0"})
    assert preflight.recorded_shell(tmp_path) == {"NCCL_SOCKET_IFNAME": "lo", "CUDA_VISIBLE_DEVICES": "0"}
    assert "hf_x" not in (tmp_path / preflight.SHELL_FILE).read_text()
    (tmp_path / preflight.SHELL_FILE).write_text('["not", "a", "dict"]')
    assert preflight.recorded_shell(tmp_path) is None
