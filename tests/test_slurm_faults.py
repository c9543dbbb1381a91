"""A Slurm controller that does not answer is not a job's death, `scontrol show job` read by its layout, and the
submit/status/retry lines around them (issue 38). Slurm's own answers come from commands on PATH that print
what the real ones print (tests/fixtures/slurm/SOURCES.md); test_slurm_faults_cluster.py stops the real slurmctld."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from clusterdoc.jobs import slurmcmd
from clusterdoc.launch import slurm, submit
from clusterdoc.launch.job import JobDir, JobSpec

FIX = Path(__file__).parent / "fixtures"
HOSTILE = (FIX / "slurm" / "show-job-hostile-comment.txt").read_text()
DOWN = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"
GONE = "slurm_load_jobs error: Invalid job id specified"


def on_path(monkeypatch, tmp_path: Path, **commands: str) -> None:
    """Each command a script on PATH (first): `name=body` (bash)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in commands.items():
        p = bin_dir / name
        p.write_text(f"#!/bin/bash\n{body}\n")
        p.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def fails(message: str) -> str:
    return f"echo {message!r} >&2; exit 1"


# --- scontrol show job, by its layout ---------------------------------------------------------------


def test_a_jobs_own_comment_cannot_set_its_state_or_nodes():
    info = slurmcmd.parse_show_job(HOSTILE)  # the real record: its name and comment both say NODE_FAIL
    assert info["JobState"] == "RUNNING" and info["NodeList"] == "node1"
    assert info["ExitCode"] == "0:0" and info["Reason"] == "None"
    assert info["StdOut"] == "/tmp/pytest-of-root/pytest-21/test_a_jobs_hostile_comment_do0/slurm-2.out"


@pytest.mark.parametrize(
    "field, value",
    [
        ("JobName=x JobState=NODE_FAIL", "JobName=x JobState=NODE_FAIL NodeList=node[1-4] ExitCode=9:0"),
        ("Account=(null)", "Account=x JobState=NODE_FAIL"),
        ("Network=(null)", "Network=x NodeList=node[1-4]"),
        ("WorkDir=/tmp/", "WorkDir=/w JobState=NODE_FAIL NodeList=node[1-4] ExitCode=9:0 /tmp/"),
        ("Command=(null)", "Command=/c JobState=NODE_FAIL NodeList=node[1-4]"),
    ],
)
def test_no_value_on_any_line_sets_a_field(field, value):
    assert field in HOSTILE
    info = slurmcmd.parse_show_job(HOSTILE.replace(field, value, 1))
    assert info["JobState"] == "RUNNING" and info["NodeList"] == "node1" and info["ExitCode"] == "0:0"


@pytest.mark.parametrize("field", ["JobName=x JobState=NODE_FAIL", "Comment=JobState=NODE_FAIL NodeList=node[1-4]"])
def test_a_value_with_a_newline_forging_a_line_makes_the_record_unknown_not_wrong(field):
    assert field in HOSTILE
    forged = field.split("=")[0] + "=x\n   JobState=NODE_FAIL Reason=None\n   NodeList=node[1-4]"
    assert slurmcmd.parse_show_job(HOSTILE.replace(field, forged, 1)) == {}


def test_not_a_show_job_record_is_nothing():
    assert slurmcmd.parse_show_job("") == {} and slurmcmd.parse_show_job("JobState=FAILED NodeList=x") == {}


# --- a failing command is not an unknown job -------------------------------------------------------------


def test_a_controller_that_does_not_answer_is_unreachable_not_unknown_job(monkeypatch, tmp_path):
    on_path(monkeypatch, tmp_path, squeue=fails(DOWN), scontrol=fails(DOWN))
    with pytest.raises(slurmcmd.Unreachable, match="connect failure"):
        slurm.squeue_state_reason("7")
    with pytest.raises(slurmcmd.Unreachable, match="connect failure"):
        slurm.query_state("7")
    assert slurmcmd.scontrol_job("7") == {}  # who only adds what Slurm says, if it does


def test_invalid_job_id_is_slurm_forgetting_the_job(monkeypatch, tmp_path):
    on_path(monkeypatch, tmp_path, squeue=fails(GONE), scontrol=fails(GONE))
    assert slurm.squeue_state_reason("7") == (None, "") and slurm.query_state("7") is None
    assert slurmcmd.read_job("7") == {}


def test_scancel_is_tried_again_and_says_why_it_could_not(monkeypatch, tmp_path):
    count = tmp_path / "count"
    err = "scancel: error: Kill job error on job id 7: Unable to contact slurm controller (connect failure)"
    on_path(monkeypatch, tmp_path, scancel=f"echo x >> {count}; " + fails(err))
    said = slurmcmd.scancel("7", tries=3, pause=0.01)
    assert said and "connect failure" in said and count.read_text().count("x") == 3
    on_path(monkeypatch, tmp_path, scancel="exit 0")
    assert slurmcmd.scancel("7", tries=3, pause=0.01) is None


# --- the wait: unknown, then a deadline -------------------------------------------------------------------


def job_dir(tmp_path: Path, world: int = 2, backend: str = "slurm", **spec) -> tuple[JobDir, JobSpec]:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    s = JobSpec(script=str(script), script_args=[], backend=backend, nodes=world, **spec)
    from clusterdoc.launch.job import init_job_dir, reserve_job_dir

    jd = reserve_job_dir(tmp_path / "jobs", backend)
    init_job_dir(jd, s)
    return jd, s


def polling(jd: JobDir, spec: JobSpec) -> slurm.SlurmJob:
    """The backend's handle of a job already submitted (job 7): what poll() does from here on."""
    job = slurm.SlurmJob.__new__(slurm.SlurmJob)
    job.spec, job.jd, job.backend_id = spec, jd, "7"
    job.unknown_since = job.unreachable_since = job.cancelled_at = None
    job.reason, job.cancelled = "None", False
    return job


def write_exit(jd: JobDir, rank: int, code: int) -> None:
    jd.exit_file(rank).write_text(json.dumps({"code": code, "time": 1.0}))


def test_an_outage_is_waited_for_then_unknown_never_lost(monkeypatch, tmp_path, capsys):
    jd, spec = job_dir(tmp_path, slurm_wait=1)
    on_path(monkeypatch, tmp_path, squeue=fails(DOWN), scontrol=fails(DOWN), scancel=fails(DOWN))
    job = polling(jd, spec)
    assert job.poll() is None  # unknown: the ranks go on
    assert "state unknown, the Slurm controller does not answer" in capsys.readouterr().err
    job.unreachable_since -= 2  # --slurm-wait 1 has passed
    out = job.poll()
    assert out is not None and out.state == "UNKNOWN" and not out.failed
    assert "may still be running" in out.message and "not retried" in out.message


def test_after_the_wait_every_ranks_exit_0_is_completed(monkeypatch, tmp_path):
    jd, spec = job_dir(tmp_path, slurm_wait=0)
    on_path(monkeypatch, tmp_path, squeue=fails(DOWN), scontrol=fails(DOWN))
    for r in range(2):
        write_exit(jd, r, 0)
    out = polling(jd, spec).poll()
    assert out is not None and out.ok and "did not answer" in out.message


def test_the_controller_back_in_time_the_job_goes_on(monkeypatch, tmp_path, capsys):
    jd, spec = job_dir(tmp_path)
    on_path(monkeypatch, tmp_path, squeue=fails(DOWN), scontrol=fails(DOWN))
    job = polling(jd, spec)
    assert job.poll() is None
    on_path(monkeypatch, tmp_path, squeue="echo RUNNING None")
    assert job.poll() is None and job.unreachable_since is None
    assert "answers again" in capsys.readouterr().err


def test_an_unknown_outcome_is_never_retried(tmp_path):
    jd, spec = job_dir(tmp_path, retries=3)
    from clusterdoc.launch.outcome import Outcome

    class Away:  # a Handle (launch/backend.py) whose controller stayed away
        backend_id = "7"
        pids: list[int] = []

        def rank_codes(self):
            return {}

        def poll(self):
            return Outcome(state="UNKNOWN", message="the Slurm controller did not answer for 600s")

        def cancel(self):
            return None

    import clusterdoc.launch.slurm as backend

    real = backend.start
    backend.start = lambda spec, jd, args: Away()
    try:
        out = submit.run_attempts(replace(spec, hang_timeout=0), jd, stream=False)
    finally:
        backend.start = real
    assert out.state == "UNKNOWN" and len(jd.read()["attempts"]) == 1


# --- cancel and status when Slurm or submit is away -----------------------------------------------------


def record_running(jd: JobDir, pid: int) -> None:
    jd.update(
        state="RUNNING",
        backend_id="7",
        supervisor_pid=pid,
        supervisor_start=0.0,
        attempts=[{"n": 1, "script_args": [], "backend_id": "7", "started": 1.0}],
    )


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_cancel_while_the_controller_is_away_says_so(monkeypatch, tmp_path, capsys):
    jd, _ = job_dir(tmp_path)
    record_running(jd, dead_pid())
    err = "scancel: error: Kill job error on job id 7: Unable to contact slurm controller (connect failure)"
    on_path(monkeypatch, tmp_path, squeue=fails(DOWN), scontrol=fails(DOWN), scancel=fails(err))
    monkeypatch.setattr("time.sleep", lambda s: None)  # scancel's pauses between tries
    assert submit.cancel_main(jd.id, str(tmp_path / "jobs")) == 1
    said = capsys.readouterr()
    assert "has already ended" not in said.out and "could not cancel slurm job 7" in said.err
    assert jd.read()["state"] == "RUNNING"


def test_status_after_submit_was_killed_says_so_and_not_running(monkeypatch, tmp_path, capsys):
    jd, _ = job_dir(tmp_path)
    record_running(jd, dead_pid())
    show = HOSTILE.replace("JobState=RUNNING", "JobState=COMPLETED").replace("'", "")
    (tmp_path / "show.txt").write_text(show)
    on_path(monkeypatch, tmp_path, squeue=fails(GONE), scontrol=f"cat {tmp_path / 'show.txt'}")
    submit.status_main(jd.id, str(tmp_path / "jobs"))
    out = capsys.readouterr().out
    assert f"job {jd.id}: COMPLETED" in out
    assert "clusterdoc submit (pid" in out and "is gone" in out
    assert "attempt 1: : running" not in out and "not recorded (the job is COMPLETED now)" in out
    assert "rank 0: running" not in out


def test_status_after_submit_was_killed_and_slurm_forgot_is_unknown(monkeypatch, tmp_path, capsys):
    jd, _ = job_dir(tmp_path)
    record_running(jd, dead_pid())
    on_path(monkeypatch, tmp_path, squeue=fails(GONE), scontrol=fails(GONE))
    assert submit.status_main(jd.id, str(tmp_path / "jobs")) == 1
    out = capsys.readouterr().out
    assert f"job {jd.id}: UNKNOWN" in out and "how it ended is not known" in out


def test_status_of_a_local_job_whose_submit_was_killed_is_lost_with_the_reason(tmp_path, capsys):
    jd, _ = job_dir(tmp_path, backend="local")
    record_running(jd, dead_pid())
    submit.status_main(jd.id, str(tmp_path / "jobs"))
    out = capsys.readouterr().out
    assert f"job {jd.id}: LOST" in out and "is gone" in out and ": running" not in out


# --- the retry line: a rank's text, escaped ---------------------------------------------------------------


def test_the_retry_verdict_line_is_escaped(tmp_path):
    jd = JobDir(tmp_path / "job")
    shutil.copytree(FIX / "why" / "jobs" / "code-rank2", jd.path)
    err2 = jd.path / "rank2.err"
    err2.write_text(err2.read_text().replace("bad sample at step 5", "bad sample \x1b]0;owned\x07\x1b[2J at step 5"))
    spec = replace(JobSpec(**json.loads((jd.path / "job.json").read_text())["spec"]), retries=3)
    from clusterdoc.launch import retry

    out = tmp_path / "err.txt"
    with out.open("w") as f:
        assert retry.next_attempt(spec, jd, 1, f, probe=False) is None
    text = out.read_text()
    assert "attempt 1 failed: code:" in text and "\x1b" not in text and "\\x1b" in text
    assert "\x1b" not in (jd.path / "attempts.log").read_text()


def test_a_job_submit_gave_up_on_is_asked_again_and_can_be_cancelled(monkeypatch, tmp_path, capsys):
    jd, _ = job_dir(tmp_path)
    record_running(jd, dead_pid())
    jd.update(state="UNKNOWN")  # submit's wait ran out (--slurm-wait): the job may still run
    cancelled = tmp_path / "cancelled"
    on_path(monkeypatch, tmp_path, squeue="echo RUNNING None", scancel=f"touch {cancelled}")
    submit.status_main(jd.id, str(tmp_path / "jobs"))
    assert f"job {jd.id}: RUNNING" in capsys.readouterr().out  # Slurm's word now, not the record's
    assert submit.cancel_main(jd.id, str(tmp_path / "jobs")) == 0
    assert cancelled.exists() and jd.read()["state"] == "CANCELLED"


# squeue's %r for a retry that excluded node1 while Slurm had marked node2 down (issue 43): it pended for ever
PENDING_DOWN = "ReqNodeNotAvail, UnavailableNodes:node2"


def test_a_retry_short_of_nodes_is_said_not_waited_on():
    why = slurm.short_of_nodes(PENDING_DOWN, ["node3"], ["node1"], 2)
    assert why is not None and "only 1 usable node(s) left without node1" in why and "needs 2" in why, why
    assert "ReqNodeNotAvail" in why and "UnavailableNodes" not in why  # Slurm's reason, not its node list


def test_a_job_waiting_its_turn_or_with_enough_nodes_is_not_short():
    assert slurm.short_of_nodes("Priority", ["node3"], ["node1"], 2) is None  # another job first: it will start
    assert slurm.short_of_nodes(PENDING_DOWN, ["node3", "node4"], ["node1"], 2) is None
    assert slurm.short_of_nodes(PENDING_DOWN, None, ["node1"], 2) is None  # sinfo silent: not known, not said
    assert slurm.short_of_nodes("Resources", ["node1.cl", "node3"], ["node1"], 2) == (
        "only 1 usable node(s) left without node1 (the others are down, drained or excluded), the job needs 2; "
        "Slurm says Resources"
    )
