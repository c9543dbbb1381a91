"""Issue 13: the Python API (`clusterdoc.check()`, `submit()`, `Job`, `build_wheel()`), typed options under
the CLI, and the doctor's three steps (gather -> judge -> report) with --facts/--save-facts."""

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import clusterdoc
from clusterdoc import doctor
from clusterdoc.checks import cuda
from tests.conftest import CPU_NODE

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "facts"
JOBS = ROOT / "jobs"


def cli(*args, cwd=None, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "clusterdoc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def plain(findings):
    """Findings without what may differ between two runs of the same check (elapsed times in messages)."""
    return [(f["node"], f["check"], f["status"], f["fix"]) for f in findings]


# --- the doctor ------------------------------------------------------------------------------------

def test_check_local_is_the_cli_report():
    report = clusterdoc.check(local=True, skip=["mpi"])
    p = cli("check", "--local", "--skip", "mpi", "--json")
    doc = json.loads(p.stdout)
    assert report.exit_code == p.returncode == doc["summary"]["exit_code"]
    assert report.ok == (report.exit_code == 0)
    assert plain(report.findings) == plain(doc["findings"])
    assert [n.name for n in report.nodes] == ["localhost"] and report.nodes[0].facts["probe"] == "python"
    assert report.checks == doc["summary"]["checks"] and "mpi" not in report.checks
    text = str(report)
    assert text.startswith("nodes") and "TORCH_CUDA_ARCH_LIST this cluster needs" in text
    again = json.loads(report.to_json())
    assert set(again) == {"nodes", "findings", "summary"} and again["summary"]["nodes"] == 1


def facts_dir(tmp_path, **nodes):
    d = tmp_path / "facts"
    d.mkdir()
    for node, fixture in nodes.items():
        shutil.copy(FACTS / f"{fixture}.json", d / f"{node}.json")
    return d


def test_facts_dir_is_judged_like_probed_facts(tmp_path):
    d = facts_dir(tmp_path, node1="healthy", node2="healthy", node3="h100_outside_arch_list")
    report = clusterdoc.check(facts_dir=str(d), checks="kernel,cuda,arch,consistency")
    assert [n.name for n in report.nodes] == ["node1", "node2", "node3"]
    assert {f["node"] for f in report.failures("arch")} == {"node3"}
    assert report.exit_code == 1 and not report.ok
    p = cli("check", "--facts", d, "--checks", "kernel,cuda,arch,consistency", "--json")
    assert p.returncode == 1 and plain(json.loads(p.stdout)["findings"]) == plain(report.findings)


def test_a_crashing_check_becomes_a_fail_finding_not_a_lost_report(tmp_path, monkeypatch):
    d = facts_dir(tmp_path, node1="healthy", node2="healthy")

    def broken(node, facts):
        raise KeyError("driver")
    monkeypatch.setattr(cuda, "check", broken)
    report = clusterdoc.check(facts_dir=str(d), checks=["kernel", "cuda"])
    crashed = report.failures("cuda")
    assert [(f["node"], f["message"]) for f in crashed] == [
        ("node1", "check cuda crashed: KeyError: 'driver'"), ("node2", "check cuda crashed: KeyError: 'driver'")]
    assert "in broken" in crashed[0]["traceback"]
    assert not report.failures("kernel") and report.exit_code == 1
    assert "Traceback" not in str(report) and "-v shows its traceback" in str(report)
    assert "raise KeyError" in report.render(verbose=1)


def test_bad_facts_dir_is_a_usage_error(tmp_path):
    with pytest.raises(clusterdoc.UsageError, match="not a folder"):
        clusterdoc.check(facts_dir=str(tmp_path / "nope"))
    (tmp_path / "node1.json").write_text("{not json")
    p = cli("check", "--facts", tmp_path)
    assert p.returncode == 2 and f"{tmp_path}/node1.json: cannot read saved facts" in p.stderr
    assert "Traceback" not in p.stderr
    (tmp_path / "node1.json").write_text("[1]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        clusterdoc.check(facts_dir=str(tmp_path))
    with pytest.raises(clusterdoc.UsageError, match="unknown check"):
        clusterdoc.check(local=True, checks=["cudaa"])
    with pytest.raises(clusterdoc.UsageError, match="--local checks this machine only"):
        clusterdoc.check("hosts.txt", local=True)


def test_build_wheel_dry_run_is_the_plan_the_cli_prints():
    plan = clusterdoc.build_wheel(arch_list="8.0;9.0", dry_run=True)
    assert plan.ok and plan.arch_list == "8.0;9.0+PTX" and plan.env["TORCH_CUDA_ARCH_LIST"] == "8.0;9.0+PTX"
    assert any("setup.py build_ext" in c for c in plan.commands)
    assert not (ROOT / "dist" / "build.log").exists() or True  # nothing is built: no wheel in the result
    assert plan.wheel is None
    p = cli("build-wheel", "--arch-list", "8.0;9.0", "--dry-run", cwd=ROOT)
    assert p.returncode == 0 and p.stdout.strip() == str(plan).strip()


# --- layering: no argparse below the CLI ------------------------------------------------------------

def test_no_module_imports_the_cli_and_no_core_reads_argparse_namespaces():
    for path in (ROOT / "clusterdoc").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if rel not in ("clusterdoc/cli.py", "clusterdoc/__main__.py"):
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                    assert not any(n == "clusterdoc.cli" for n in names), f"{rel}:{node.lineno} imports the CLI"
                if isinstance(node, ast.Import):
                    assert not any(a.name == "clusterdoc.cli" for a in node.names), f"{rel}:{node.lineno}"
            if rel != "clusterdoc/cli.py" and isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr":
                target = node.args[0]
                assert not (isinstance(target, ast.Name) and target.id == "args"), f"{rel}:{node.lineno} getattr(args"
            if isinstance(node, ast.Attribute) and node.attr == "Namespace":
                assert rel == "clusterdoc/cli.py", f"{rel}:{node.lineno} builds an argparse.Namespace"


def test_import_is_cheap_and_lazy():
    code = "import sys, clusterdoc; print(sorted(m for m in ('torch', 'paramiko', 'clusterdoc.doctor') if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.stdout.strip() == "[]", p.stdout + p.stderr
    p = subprocess.run([sys.executable, "-c", "import clusterdoc; print(clusterdoc.Report.__module__)"],
                       capture_output=True, text=True)
    assert p.stdout.strip() == "clusterdoc.doctor.report"


# --- jobs ------------------------------------------------------------------------------------------

def _ranks_left(folder: Path) -> list[int]:
    """Processes whose command line names the job's folder (its ranks and launcher)."""
    left = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(folder).encode() in (proc / "cmdline").read_bytes():
                    left.append(int(proc.name))
            except OSError:
                pass
    return left


@pytest.mark.slow
def test_submit_wait_names_the_failing_rank_and_find_sees_the_same_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = clusterdoc.submit(str(JOBS / "fail_exit_code.py"), ["--rank", "1", "--code", "3"], nodes=2,
                            backend="local", folder=str(tmp_path / "jobs"), preflight=True)
    assert job.backend == "local" and job.folder.parent == tmp_path / "jobs"
    outcome = job.wait(timeout=180)
    assert job.state == "FAILED" and job.done()
    assert outcome.failed == [1] and outcome.codes[1] == 3 and not outcome.ok
    assert "rank 1 exited with code 3" in outcome.describe()
    assert "exiting with code 3" in job.logs(rank=1) and "[rank 1]" not in job.logs(rank=1)
    # all ranks merged, each line prefixed (rank 0 may print nothing: it is stopped inside all_reduce)
    assert "[rank 1] rank 1: exiting with code 3" in job.logs()
    same = clusterdoc.Job.find(job.id, folder=str(tmp_path / "jobs"))
    assert same.folder == job.folder and same.state == "FAILED"
    assert clusterdoc.Job.find(str(job.folder)).id == job.id
    p = cli("status", job.id, "--folder", tmp_path / "jobs")
    assert f"job {job.id}: FAILED" in p.stdout


@pytest.mark.slow
def test_cancel_stops_every_rank_of_a_running_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "forever.py"
    script.write_text("import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(1)\n")
    job = clusterdoc.submit(str(script), nodes=2, backend="local", folder=str(tmp_path / "jobs"), preflight=False,
                            hang_timeout=0)
    deadline = time.monotonic() + 60
    while "started" not in job.logs(rank=1) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert job.state == "RUNNING" and _ranks_left(job.folder)
    with pytest.raises(TimeoutError):
        job.wait(timeout=1)
    job.cancel()
    assert job.state == "CANCELLED" and job.wait(timeout=30).state == "CANCELLED"
    deadline = time.monotonic() + 10
    while _ranks_left(job.folder) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ranks_left(job.folder) == []


def test_submit_refuses_bad_input_before_anything_runs(tmp_path):
    with pytest.raises(clusterdoc.UsageError, match="script not found"):
        clusterdoc.submit(str(tmp_path / "missing.py"), backend="local", folder=str(tmp_path))
    with pytest.raises(clusterdoc.UsageError, match="--nodes"):
        clusterdoc.submit(str(JOBS / "train_ddp.py"), backend="local", nodes="four", folder=str(tmp_path))
    assert not list(tmp_path.iterdir())


# --- on the test cluster ------------------------------------------------------------------------------

@pytest.mark.cluster
@pytest.mark.slow
def test_check_on_the_cluster_finds_a_planted_fault_and_saved_facts_replay_it(cluster, tmp_path):
    with cluster.planted({"node3": {"kernel": "5.4.0-150-generic"}}):
        live = clusterdoc.check(str(cluster.hostfile("plain")), ssh_config=str(cluster.ssh_config), timeout=30,
                                mpirun=str(cluster.mpirun), save_facts=str(tmp_path / "saved"))
    assert [f["node"] for f in live.failures("kernel")] == ["node3"]
    assert live.exit_code == 1 and [n.name for n in live.nodes] == ["node1", "node2", "node3", "node4"]
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == \
        ["_run.json", "node1.json", "node2.json", "node3.json", "node4.json"]
    replay = clusterdoc.check(facts_dir=str(tmp_path / "saved"))
    assert plain(replay.findings) == plain(live.findings)
    assert replay.exit_code == live.exit_code and replay.needed_arch_list == live.needed_arch_list
    p = cli("check", "--facts", tmp_path / "saved", "--json")
    assert p.returncode == 1 and plain(json.loads(p.stdout)["findings"]) == plain(live.findings)


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["slurm", "mpirun"])
def test_submit_on_the_cluster_names_the_failing_rank(cpu_cluster, tmp_path, monkeypatch, backend):
    monkeypatch.chdir(tmp_path)
    for k in [k for k in os.environ if k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))]:
        monkeypatch.delenv(k)
    for k, v in cpu_cluster.env().items():
        monkeypatch.setenv(k, v)
    extra = dict(hostfile=str(cpu_cluster.hostfile("plain")), ssh_config=str(cpu_cluster.ssh_config),
                 mpirun=str(cpu_cluster.mpirun)) if backend == "mpirun" else {}
    job = clusterdoc.submit(str(JOBS / "fail_exit_code.py"), ["--rank", "2", "--code", "3"], nodes=4,
                            backend=backend, folder=str(tmp_path / "jobs"), preflight=False, **extra)
    outcome = job.wait(timeout=300)
    assert job.state == "FAILED" and outcome.failed == [2] and outcome.codes[2] == 3, outcome
    if backend == "slurm":
        assert job.backend_id and job.backend_id.isdigit()
        assert clusterdoc.Job.find(job.backend_id, folder=str(tmp_path / "jobs")).id == job.id
