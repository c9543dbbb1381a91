"""Pure parts of clusterdoc submit: mpirun flags per flavour, Slurm rank env, outcome wording."""


from pathlib import Path

import pytest

from clusterdoc.errors import UsageError
from clusterdoc.launch import mpi, slurm
from clusterdoc.launch.job import JobDir, JobSpec, create_job_dir
from clusterdoc.launch.outcome import Outcome, outcome_from_records


@pytest.fixture
def jd(tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("node1 slots=8\nnode2\nroot@node3\n")
    spec = JobSpec(script="/jobs/t.py", script_args=["--bs", "8"], backend="mpirun", nodes=2, tasks_per_node=2,
                   hostfile=str(hf), ssh_config="/cfg/ssh config", debug=True, cwd="/work", python="/venv/bin/python")
    return spec, create_job_dir(tmp_path / "jobs", spec, "job1")


def test_mpich_flags(jd):
    spec, d = jd
    argv, env = mpi.build_command(spec, d, spec.script_args, "mpich", "mpirun.mpich")
    cmd = " ".join(argv)
    assert argv[:7] == ["mpirun.mpich", "-f", str(d.path / "hostfile.mpich"), "-n", "4", "-ppn", "2"]
    assert "-launcher ssh -launcher-exec " + str(d.path / "ssh-launcher.sh") in cmd
    assert "-genv CLUSTERDOC_DEBUG 1" in cmd and "-genv MASTER_ADDR node1" in cmd and " -x " not in cmd
    assert argv[-6:] == ["clusterdoc.run", "--log-dir", str(d.path), "/jobs/t.py", "--bs", "8"]
    assert (d.path / "hostfile.mpich").read_text().split() == ["node1:2", "node2:2"]  # first --nodes hosts only
    # the ssh config path has a space: the wrapper quotes it, no shell ever sees it unquoted
    assert "exec ssh -F '/cfg/ssh config' -o BatchMode=yes \"$@\"" in (d.path / "ssh-launcher.sh").read_text()
    assert env == {}


@pytest.mark.parametrize("version,root,agent_flag", [
    ("mpirun (Open MPI) 4.1.4", True, True), ("mpirun (Open MPI) 5.0.3", False, False)])
def test_openmpi_flags(jd, version, root, agent_flag):
    spec, d = jd
    argv, env = mpi.build_command(spec, d, spec.script_args, "openmpi", "mpirun.openmpi", version, is_root=root)
    cmd = " ".join(argv)
    assert "--hostfile " + str(d.path / "hostfile.openmpi") in cmd and "-np 4 --map-by ppr:2:node" in cmd
    assert ("--allow-run-as-root" in argv) is root
    assert "-x CLUSTERDOC_DEBUG=1" in cmd and "-x PATH" in cmd and "-genv" not in cmd
    assert ("--mca plm_rsh_agent" in cmd) is agent_flag
    assert ("PRTE_MCA_plm_ssh_agent" in env) is (not agent_flag)
    assert "node1 slots=2" in (d.path / "hostfile.openmpi").read_text()


def test_flavour_from_version_output():
    assert mpi.flavour_from_version("HYDRA build details:\n    Version: 4.0.2") == "mpich"
    assert mpi.flavour_from_version("mpirun (Open MPI) 4.1.4\n\nReport bugs to") == "openmpi"
    with pytest.raises(UsageError, match="cannot tell which MPI"):
        mpi.flavour_from_version("Intel(R) MPI Library")


def test_too_few_hosts_is_a_usage_error(jd):
    spec, d = jd
    spec.nodes = 5
    with pytest.raises(UsageError, match="--nodes 5 but the hostfile lists 3"):
        mpi.build_command(spec, d, [], "mpich", "mpirun")


def test_slurm_task_environment():
    task = slurm.RankTask(["/py", "-m", "clusterdoc.run"], {"CLUSTERDOC_DEBUG": "1"}, tasks_per_node=2)
    env = task.environment({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1", "SLURM_NODEID": "1",
                            "SLURM_JOB_ID": "42", "SLURM_STEP_ID": "0", "SLURM_JOB_NODELIST": "nosuchhost[1-2]",
                            "SLURM_LAUNCH_NODE_IPADDR": "10.1.2.3"})
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"], env["NODE_RANK"]) == \
        ("3", "4", "1", "2", "1")
    assert env["MASTER_ADDR"] == "10.1.2.3"  # the first node's name does not resolve: srun's launch address
    assert 15000 <= int(env["MASTER_PORT"]) < 30000
    assert env["CLUSTERDOC_DEBUG"] == "1"


def test_outcome_from_rank_records_names_the_first_failure(tmp_path):
    d = JobDir(tmp_path)
    for rank, code, t in ((0, 1, 10.5), (1, 3, 10.0), (2, 0, 9.0)):
        d.exit_file(rank).write_text(f'{{"code": {code}, "oom": false, "time": {t}}}')
    o = outcome_from_records(d, 4, launcher_code=1)
    assert o.failed == [1]
    assert o.describe() == "job failed: rank 1 exited with code 3; afterwards rank 0 exited with code 1, rank 3 stopped"
    assert Outcome("FAILED", {0: -9, 1: 2}, failed=[1]).describe() == \
        "job failed: rank 1 exited with code 2; afterwards rank 0 stopped"
    assert "killed by SIGKILL" in Outcome("FAILED", {0: -9}, failed=[0]).describe()


def test_auto_backend_without_slurm(monkeypatch, tmp_path):
    from clusterdoc.launch.submit import choose_backend

    monkeypatch.setenv("PATH", str(tmp_path))  # no squeue here
    assert choose_backend({"backend": "auto", "hostfile": None}) == "local"
    assert choose_backend({"backend": "auto", "hostfile": "hosts"}) == "mpirun"
    assert choose_backend({"backend": "slurm", "hostfile": None}) == "slurm"


def test_the_backend_comes_with_why(monkeypatch, tmp_path):
    from clusterdoc.launch import backend, submit

    auto = {"backend": "auto", "hostfile": None}
    monkeypatch.setattr(backend, "slurm_answers", lambda: True)  # the Slurm backend's affinity asks it
    assert submit.backend_and_why(auto, {}, {"SLURM_CONF": "/x/slurm.conf"}) == (
        "slurm", "SLURM_CONF is set; --backend local to run here")
    assert submit.backend_and_why(auto, {}, {})[1].startswith("a Slurm controller answers here")
    monkeypatch.setattr(backend, "slurm_answers", lambda: False)
    assert submit.backend_and_why({**auto, "hostfile": "h"}, {}, {}) == (
        "mpirun", "--hostfile given and no Slurm here; --backend local to run here")
    assert submit.backend_and_why(auto, {}, {})[0] == "local"
    assert submit.backend_and_why({"backend": "slurm", "hostfile": None}, {"backend": "flag"}, {}) == (
        "slurm", "--backend slurm")
    assert submit.backend_and_why({"backend": "local", "hostfile": None}, {"backend": "CLUSTERDOC_BACKEND"}, {}) == (
        "local", "CLUSTERDOC_BACKEND=local")
    assert submit.backend_and_why({"backend": "slurm", "hostfile": None}, {"backend": "/p/clusterdoc.yaml"}, {}) == (
        "slurm", "set in /p/clusterdoc.yaml; --backend local to run here")


def test_local_pretend_nodes_get_their_own_gpus():
    from clusterdoc.launch.local import gpu_slices

    assert gpu_slices(2, 2, {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}) == ["0,1", "2,3"]
    assert gpu_slices(2, 1, {"CUDA_VISIBLE_DEVICES": "3,5,7"}) == ["3", "5"]
    assert gpu_slices(4, 2, {"CUDA_VISIBLE_DEVICES": "0,1"}) is None  # too few: leave them shared
    assert gpu_slices(4, 0, {}) is None


def test_status_says_why_a_job_never_ran_or_was_lost(tmp_path, capsys):
    import subprocess

    from clusterdoc.launch.job import JobSpec, create_job_dir
    from clusterdoc.launch.outcome import Outcome
    from clusterdoc.launch.submit import status_main

    spec = JobSpec(script=str(tmp_path / "t.py"), script_args=[], backend="local", nodes=1)
    refused = create_job_dir(tmp_path, spec)
    refused.update(state="FAILED", outcome=Outcome("FAILED", message="could not start: X (fix: Y)").to_json())
    assert status_main(refused.id, str(tmp_path)) == 1
    out = capsys.readouterr().out
    assert "  reason  could not start: X (fix: Y)\n" in out and "no exit record" not in out
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that is no longer alive: its supervisor died without recording anything
    lost = create_job_dir(tmp_path, spec, "local-lost")
    lost.update(state="RUNNING", supervisor_pid=gone.pid)
    status_main(lost.id, str(tmp_path))
    out = capsys.readouterr().out
    assert "local-lost: LOST" in out and f"reason  its supervisor (pid {gone.pid}) ended without a word" in out


def test_the_straggler_threshold_reaches_every_rank_and_100_or_more_is_a_usage_error(tmp_path):
    from clusterdoc import config
    from clusterdoc.launch import submit
    from clusterdoc.shim import straggler

    script = tmp_path / "t.py"
    script.write_text("")
    settings, _ = config.resolve({"straggler": 25}, environ={}, cwd=tmp_path, home=tmp_path)
    spec = submit.build_spec(settings, str(script), [], "local")
    assert straggler.threshold_from_env(spec.shim_env()) == 0.25
    default, _ = config.resolve({}, environ={}, cwd=tmp_path, home=tmp_path)
    assert submit.build_spec(default, str(script), [], "local").shim_env()["CLUSTERDOC_STRAGGLER"] == "10"
    with pytest.raises(UsageError, match="--straggler 100: a percentage of the step below 100"):
        submit.build_spec({**settings, "straggler": 100}, str(script), [], "local")


def test_backends_are_one_table_chosen_by_affinity(monkeypatch):
    """Each backend implements launch/backend.py's interface and is found by name; `auto` asks them in order."""
    from clusterdoc.errors import UsageError
    from clusterdoc.launch import backend

    from clusterdoc import config

    assert list(backend.BACKENDS) == ["slurm", "mpirun", "local"]
    assert set(config.BACKENDS) == {"auto", *backend.BACKENDS}  # what --backend and clusterdoc.yaml accept
    assert backend.of_record({"spec": {"backend": "edited"}}).name == "local"  # no scheduler to ask
    assert all(isinstance(b, backend.Backend) and backend.backend_for(n) is b for n, b in backend.BACKENDS.items())
    with pytest.raises(UsageError, match="unknown backend 'pbs'"):
        backend.backend_for("pbs")
    monkeypatch.setattr(backend, "slurm_answers", lambda: True)
    assert backend.by_affinity({"hostfile": "h"}, {})[0] == "slurm"  # Slurm first, hostfile or not
    monkeypatch.setattr(backend, "slurm_answers", lambda: False)
    assert backend.by_affinity({"hostfile": "h"}, {})[0] == "mpirun"
    assert backend.by_affinity({"hostfile": None}, {})[0] == "local"
    with pytest.raises(UsageError, match="needs --hostfile"):
        backend.backend_for("mpirun").validate({"hostfile": None})


def test_status_and_cancel_are_data_the_cli_and_the_api_both_render(tmp_path, capsys):
    """control.py returns what a job is and what cancelling did; `clusterdoc status/cancel` and api.Job print or
    return it (api.Job no longer calls the CLI's cancel_main)."""
    import ast
    from pathlib import Path

    from clusterdoc import api
    from clusterdoc.launch import control, submit
    from clusterdoc.launch.job import JobSpec, create_job_dir
    from clusterdoc.launch.outcome import Outcome

    spec = JobSpec(script=str(tmp_path / "t.py"), script_args=[], backend="local", nodes=1)
    jd = create_job_dir(tmp_path, spec)
    jd.update(state="COMPLETED", outcome=Outcome("COMPLETED", codes={0: 0}).to_json())
    lines, code = control.status(jd)
    assert lines[0] == f"job {jd.id}: COMPLETED" and code == 0 and capsys.readouterr().out == ""
    done = control.cancel(jd)
    assert (done.state, done.ok, done.message) == ("ended", True, f"job {jd.id} has already ended (COMPLETED)")
    assert capsys.readouterr().out == ""  # data, not printed
    assert submit.cancel_main(jd.id, str(tmp_path)) == 0
    assert capsys.readouterr().out == f"job {jd.id} has already ended (COMPLETED)\n"
    api.Job(jd.path).cancel()
    assert capsys.readouterr() == ("", "")
    called = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "")
              for n in ast.walk(ast.parse(Path(api.__file__).read_text()))}
    assert not {"cancel_main", "status_main", "logs_main"} & called


def test_launch_never_asks_a_backend_its_name():
    """What submit, retry, status and the supervisor do differently per backend comes from launch/backend.py's
    interface (issue 37): no module of launch/ but the table compares a backend's name with a string, so a new
    backend is its class in the table and its own module."""
    import ast
    from pathlib import Path

    from clusterdoc.launch import backend

    found = []
    for path in sorted(Path(backend.__file__).parent.glob("*.py")):
        if path.name == "backend.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            named = any(ast.unparse(s).split(".")[-1] in ("backend", "name") for s in sides)
            if named and any(isinstance(s, ast.Constant) and s.value in backend.BACKENDS for s in sides):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
    for b in backend.BACKENDS.values():  # each says, in one place, what the others ask of it
        assert {"scheduler", "start_word", "leaves_out_nodes", "waits"} <= set(dir(b)), b.name


def test_a_backend_names_the_nodes_a_retry_could_use(tmp_path):
    """retry.available_nodes asks the job's backend: mpirun its hostfile's hosts, local none to choose from."""
    from clusterdoc.launch import retry
    from clusterdoc.launch.job import JobSpec

    hosts = tmp_path / "hosts"
    hosts.write_text("node1 slots=2\nalice@node2\n")
    spec = JobSpec(script="/jobs/t.py", script_args=[], backend="mpirun", nodes=1, hostfile=str(hosts))
    assert retry.available_nodes(spec) == ["node1", "node2"]
    assert retry.available_nodes(JobSpec(script="/jobs/t.py", script_args=[], backend="local", nodes=1)) is None


def test_the_mpirun_backend_refuses_more_nodes_than_its_hostfile(tmp_path):
    from clusterdoc.errors import UsageError
    from clusterdoc.launch import backend

    hosts = tmp_path / "hosts"
    hosts.write_text("node1\nnode2\n")
    backend.backend_for("mpirun").validate({"hostfile": str(hosts), "nodes": 2})
    with pytest.raises(UsageError, match="--nodes 3 but the hostfile lists 2 host"):
        backend.backend_for("mpirun").validate({"hostfile": str(hosts), "nodes": 3})


def test_what_mpirun_started_and_left_running_ends_with_it(tmp_path):
    # issue 43's campaign (netdrop, mpirun, seed 31, job 4): node1 cut off; mpirun ended, its ssh to node1 did not
    # (blocked on a link that did not answer) and was still there 30 s after the job. A real process stands in for
    # that ssh: started by an mpirun (a script answering --version as MPICH's) in a session of its own, as Hydra
    # starts each ssh, and left running.
    import os
    import time

    child = tmp_path / "child.pid"
    fake = tmp_path / "mpirun"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'HYDRA build details:'; echo '    Version: 4.0.2';"
                    f" exit 0; fi\nsetsid sleep 600 &\necho $! > {child}\nsleep 2\nexit 1\n")  # fmt: skip
    fake.chmod(0o755)
    hf = tmp_path / "hosts"
    hf.write_text("node1\n")
    spec = JobSpec(script="/jobs/t.py", script_args=[], backend="mpirun", nodes=1, hostfile=str(hf), cwd=str(tmp_path),
                   mpirun=str(fake), python="/venv/bin/python")  # fmt: skip
    job = mpi.MpiJob(spec, create_job_dir(tmp_path / "jobs", spec, "job1"), [])
    deadline = time.monotonic() + 60
    while (outcome := job.poll()) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert outcome is not None and child.exists()
    assert job.rank_codes() == {} and job.cancel() is None  # the rest of the backend's interface, as the loop calls it
    pid = int(child.read_text())
    while time.monotonic() < deadline:  # killed: gone, or a zombie until its new parent reaps it
        try:
            if (Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0]) == "Z":
                break
        except (FileNotFoundError, IndexError):
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        raise AssertionError("mpirun's child outlived it")
