"""clusterdoc submit on the local backend: real processes, real gloo process groups, real failures."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "jobs"


def clusterdoc(args, cwd, timeout=240, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(HOME=str(cwd), CLUSTERDOC_BACKEND="local", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "clusterdoc", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def job_dir(cwd: Path) -> Path:
    (d,) = [p for p in (cwd / "clusterdoc-jobs").iterdir() if p.is_dir()]
    return d


@pytest.mark.slow
def test_example_job_on_four_local_ranks_completes_with_rank_ordered_logs(tmp_path):
    res = clusterdoc(["submit", "--nodes", "4", "--no-preflight", str(JOBS / "train_ddp.py"), "--epochs", "2"],
                     tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    done = [l for l in res.stderr.splitlines() if "done after" in l]  # the shim logs to stderr
    # every rank's line, tagged by the launcher and by the shim, in rank order (in_order=True)
    assert [re.match(r"\[rank (\d)\]", l).group(1) for l in done] == ["0", "1", "2", "3"], res.stderr
    assert all(f"[rank {r}/4 " in done[r] for r in range(4))
    assert "training on 4 ranks (gloo)" in res.stderr
    assert "job completed: all 4 ranks exited 0" in res.stderr
    jd = job_dir(tmp_path)
    assert re.search(rf"job {jd.name} \(local, 4 node\(s\) x 1 rank\(s\)\); logs: {re.escape(str(jd))}", res.stderr)
    for r in range(4):
        assert "done after" in (jd / f"rank{r}.err").read_text()
        assert json.loads((jd / f"rank{r}.exit").read_text())["code"] == 0
    st = clusterdoc(["status", jd.name], tmp_path)
    assert st.returncode == 0 and f"job {jd.name}: COMPLETED" in st.stdout and "rank 3: exited with code 0" in st.stdout
    logs = clusterdoc(["logs", jd.name, "--rank", "2"], tmp_path)
    assert logs.returncode == 0 and "[rank 2]" in logs.stdout and "[rank 1]" not in logs.stdout
    assert "done after" in logs.stdout


@pytest.mark.slow
def test_a_rank_exiting_3_fails_the_job_quickly_and_is_named(tmp_path):
    start = time.monotonic()
    res = clusterdoc(["submit", "--nodes", "4", "--no-preflight", str(JOBS / "fail_exit_code.py"),
                      "--rank", "2", "--code", "3"], tmp_path, timeout=120)
    elapsed = time.monotonic() - start
    assert res.returncode == 1, res.stderr
    summary = res.stderr.strip().splitlines()[-1]
    assert "job failed: rank 2 exited with code 3;" in summary, summary
    # the others waited in all_reduce: without the launcher stopping them they would sit out gloo's timeout
    assert elapsed < 90, elapsed
    st = clusterdoc(["status", job_dir(tmp_path).name], tmp_path)
    assert st.returncode == 1 and ": FAILED" in st.stdout and "rank 2: exited with code 3" in st.stdout


@pytest.mark.slow
def test_after_a_failure_the_others_end_on_their_own_within_the_grace_else_are_stopped(tmp_path):
    """local.FAIL_GRACE: rank 0 fails at once; rank 1 fails on its own 2 s later (a peer in a collective with it
    does, late on a loaded machine) and its own exit is on record, not the launcher's SIGTERM; rank 2 would never
    end and is stopped once the grace is over."""
    from clusterdoc.launch.local import FAIL_GRACE, STOP_GRACE

    script = tmp_path / "ends.py"
    script.write_text("import os, sys, time\nrank = int(os.environ['RANK'])\nif rank == 0:\n    sys.exit(1)\n"
                      "time.sleep(2.0 if rank == 1 else 3600)\nsys.exit(3)\n")
    start = time.monotonic()
    res = clusterdoc(["submit", "--nodes", "3", "--no-preflight", str(script)], tmp_path, timeout=120)
    elapsed = time.monotonic() - start
    assert res.returncode == 1, res.stderr
    summary = res.stderr.strip().splitlines()[-1]
    assert "job failed: rank 0 exited with code 1; afterwards rank 1 exited with code 3, rank 2 stopped" in summary, (
        summary)
    jd = job_dir(tmp_path)
    assert json.loads((jd / "rank1.exit").read_text())["code"] == 3 and not (jd / "rank2.exit").exists()
    assert elapsed < 30 + FAIL_GRACE + STOP_GRACE, elapsed  # bounded: start-up, the grace, the stop


@pytest.mark.slow
def test_oom_retry_relaunches_with_a_lower_batch_on_every_rank(tmp_path):
    res = clusterdoc(["submit", "--nodes", "2", "--no-preflight", "--oom-retry", "batch-size",
                      str(JOBS / "fail_oom_one_rank.py"), "--no-shim-retry", "--batch-size", "40", "--fits", "20"],
                     tmp_path)
    assert res.returncode == 0, res.stderr
    assert "out of memory at --batch-size 40; retrying on every rank with --batch-size 20" in res.stderr
    assert res.stderr.count("trained with batch size 20") == 2
    jd = job_dir(tmp_path)
    log = (jd / "attempts.log").read_text()
    assert "attempt 1 ended: job failed: rank 1 exited with code 75 (out of memory)" in log
    assert "attempt 2 ended: job completed" in log
    assert "OUT OF MEMORY on rank 1" in (jd / "attempt1" / "rank1.err").read_text()
    record = json.loads((jd / "job.json").read_text())
    assert [a["script_args"][-3] for a in record["attempts"]] == ["40", "20"]


def test_oom_retry_halves_down_to_the_minimum():
    from clusterdoc.launch.submit import lowered

    assert lowered(64, 1) == 32 and lowered(3, 2) == 2 and lowered(2, 2) is None and lowered(1, 1) is None


@pytest.mark.slow
def test_oom_retry_gives_up_at_the_minimum(tmp_path):
    res = clusterdoc(["submit", "--nodes", "2", "--no-preflight", "--oom-retry", "batch-size:20",
                      str(JOBS / "fail_oom_one_rank.py"), "--no-shim-retry", "--batch-size", "40", "--fits", "5"],
                     tmp_path)
    assert res.returncode == 1
    summary = res.stderr.strip().splitlines()[-1]
    assert "rank 1 exited with code 75 (out of memory)" in summary
    assert "out of memory at --batch-size 20, which is the minimum (20); giving up" in summary
    assert (job_dir(tmp_path) / "attempts.log").read_text().count(" started: ") == 2


@pytest.mark.slow
def test_no_wait_returns_the_id_and_a_supervisor_finishes_the_job(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("import os\nprint('hello from', os.environ['RANK'])\n")
    res = clusterdoc(["submit", "--nodes", "2", "--no-preflight", "--no-wait", str(script)], tmp_path)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        st = clusterdoc(["status", job_id], tmp_path)
        if "COMPLETED" in st.stdout or "FAILED" in st.stdout:
            break
        time.sleep(1)
    assert f"job {job_id}: COMPLETED" in st.stdout, st.stdout
    logs = clusterdoc(["logs", job_id], tmp_path)
    assert "[rank 0] hello from 0" in logs.stdout and "[rank 1] hello from 1" in logs.stdout


def test_batch_note_when_the_shape_changes(tmp_path):
    from clusterdoc.launch.job import JobSpec, create_job_dir
    from clusterdoc.launch.submit import batch_note

    old = JobSpec(script="/x/train.py", script_args=["--batch-size", "32"], backend="local", nodes=2,
                  gpus_per_node=4, tasks_per_node=4)
    create_job_dir(tmp_path, old)
    assert batch_note(old, tmp_path) is None
    new = JobSpec(script="/x/train.py", script_args=["--batch-size", "32"], backend="local", nodes=4,
                  gpus_per_node=4, tasks_per_node=4)
    note = batch_note(new, tmp_path)
    assert "per-GPU batch 32 x world size = 512 (was 256)" in note
    other = JobSpec(script="/x/other.py", script_args=[], backend="local", nodes=4)
    assert batch_note(other, tmp_path) is None


def test_script_arg_editing():
    from clusterdoc.launch.job import get_arg, set_arg

    assert get_arg(["--batch-size", "8", "x"], "batch-size") == "8"
    assert get_arg(["--batch-size=8"], "batch-size") == "8"
    assert set_arg(["a", "--batch-size=8", "b"], "batch-size", "4") == ["a", "--batch-size=4", "b"]
    assert set_arg(["--batch-size", "8"], "batch-size", "4") == ["--batch-size", "4"]
    assert set_arg(["--lr", "1"], "batch-size", "4") == ["--lr", "1", "--batch-size", "4"]


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2], ids=["once", "twice"])
def test_ctrl_c_stops_every_rank_and_keeps_the_logs(tmp_path, presses):
    import signal

    script = tmp_path / "sleepy.py"
    script.write_text("import os, time\nprint('pid', os.getpid(), flush=True)\ntime.sleep(600)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    env.update(HOME=str(tmp_path), CLUSTERDOC_BACKEND="local")
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "clusterdoc", "submit", "--nodes", "2", "--no-preflight",
                                 str(script)], cwd=tmp_path, env=env, stdout=f, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while out.read_text().count("pid ") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    pids = [int(l.split()[-1]) for l in out.read_text().splitlines() if " pid " in l]
    assert len(pids) == 2
    for _ in range(presses):  # twice: the second lands while the first is being handled
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "cancelled; logs kept in" in err, (proc.returncode, err[-2000:])
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    jd = job_dir(tmp_path)
    assert "pid" in (jd / "rank1.out").read_text()
    st = clusterdoc(["status", jd.name], tmp_path)
    assert f"job {jd.name}: CANCELLED" in st.stdout


@pytest.mark.slow
@pytest.mark.parametrize("flags,job,expect_rc,needles", [
    (["--debug"], ["fail_shape_mismatch.py"], 1,
     ["Operation: `torch.distributed.broadcast`", "Process 0: called broadcast, shape [4, 8]",
      "Process 1: called broadcast, shape [5, 8]"]),
    (["--overflow"], ["fail_overflow.py"], 1, ["inf/nan detected in the output of 2 Linear"]),
    ([], ["fail_oom_one_rank.py", "--batch-size", "64", "--fits", "20"], 0,
     ["[rank 0] ", "out of memory at batch_size=64 on rank(s) [1]", "trained with batch size 16"]),
])
def test_failure_jobs_show_what_the_shim_catches(tmp_path, flags, job, expect_rc, needles):
    res = clusterdoc(["submit", "--nodes", "2", "--no-preflight", *flags, str(JOBS / job[0]), *job[1:]], tmp_path)
    assert res.returncode == expect_rc, res.stderr[-3000:]
    for needle in needles:
        assert needle in res.stderr, (needle, res.stderr[-3000:])
    if "--overflow" in flags:  # per-rank reports land next to the rank logs (the first to fail always writes)
        reports = list(job_dir(tmp_path).glob("overflow_rank*.txt"))
        assert reports and all("first non-finite output in module: 2 Linear" in p.read_text() for p in reports)
    if expect_rc == 0:
        assert res.stderr.count("trained with batch size 16") == 2


@pytest.mark.slow
def test_local_preflight_checks_this_machine_first(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    res = clusterdoc(["submit", "--nodes", "1", str(script)], tmp_path)
    assert res.returncode == 0, res.stderr
    err = res.stderr
    assert "preflight (this machine):" in err and "localhost" in err and "0 problem(s)" in err
    assert err.index("preflight (this machine):") < err.index("job local-")  # before anything starts
    assert "[rank 0] hello" in res.stdout


def _no_slurm_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    return {**env, "HOME": str(tmp_path), **extra}


@pytest.mark.skipif(os.path.exists("/etc/slurm/slurm.conf") or not shutil.which("sbatch"),
                    reason="needs Slurm's commands installed and no slurm.conf configured on this machine")
def test_slurm_submit_without_slurm_conf_fails_at_once_saying_so(tmp_path):
    (tmp_path / "t.py").write_text("print('hi')\n")
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "slurm", "t.py"], cwd=tmp_path,
                         env=_no_slurm_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and res.stdout == "", res.stdout + res.stderr  # no job id printed
    assert "slurm.conf not found (SLURM_CONF is not set and /etc/slurm/slurm.conf does not exist)" in res.stderr
    assert "export SLURM_CONF=" in res.stderr
    assert not (tmp_path / "clusterdoc-jobs").exists()  # nothing submitted, nothing left running


def test_slurm_submit_with_a_missing_slurm_conf_names_it(tmp_path):
    (tmp_path / "t.py").write_text("print('hi')\n")
    env = _no_slurm_env(tmp_path, SLURM_CONF=str(tmp_path / "nope.conf"))
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "slurm", "t.py"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and res.stdout == "", res.stdout + res.stderr
    if shutil.which("sbatch"):
        assert f"slurm.conf not found (SLURM_CONF={tmp_path / 'nope.conf'} does not exist)" in res.stderr
    else:
        assert "sbatch is not on PATH" in res.stderr


def test_the_first_line_of_a_submit_names_the_backend_and_why(tmp_path):
    (tmp_path / "t.py").write_text("print('hi')\n")
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--nodes", "2", "--no-preflight", "t.py"], cwd=tmp_path,
                         env=_no_slurm_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines()[0] == (
        "backend: local (no Slurm answers here and no --hostfile; --backend slurm or --hostfile to run on a cluster)"
    )
