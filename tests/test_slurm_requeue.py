"""A job Slurm requeues (preemption, `scontrol requeue`; issue 43's `requeue` fault): it goes back to PENDING
under the same id and runs again. Before, submit waited without a word and ended with 'job completed: all 3 ranks
exited 0', never saying the job had been requeued; and a first run's exit records would have been read as the
second run's. Slurm's answers as squeue and scontrol give them (the states the campaign saw: RUNNING, then
PENDING with reason BeginTime, then RUNNING, then gone and COMPLETED)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from clusterdoc.jobs import slurmcmd
from clusterdoc.launch import slurm
from clusterdoc.launch.job import JobDir


def watched(path, job_id: str, ran: bool) -> slurm.SlurmJob:
    """A SlurmJob as submit's watch holds it after sbatch (its __init__ submits: not here)."""
    j = slurm.SlurmJob.__new__(slurm.SlurmJob)
    j.spec = SimpleNamespace(world_size=2, partition=None, exclude=[], nodes=2)
    j.jd, j.backend_id, j.reason, j.cancelled, j.cancelled_at = JobDir(path), job_id, "None", False, None
    j.unknown_since = j.unreachable_since = j.short_since = None
    j.ran, j.requeues, j.requeued_after = ran, 0, []
    return j


def test_a_requeued_job_is_said_and_its_first_runs_records_set_aside(tmp_path, monkeypatch, capsys):
    j = watched(tmp_path, "7", ran=False)
    answers = iter([("RUNNING", "None"), ("PENDING", "BeginTime"), ("PENDING", "BeginTime"), ("RUNNING", "None"),
                    (None, None)])  # fmt: skip
    monkeypatch.setattr(slurm, "squeue_state_reason", lambda job: next(answers))
    monkeypatch.setattr(slurm.SlurmJob, "short_of_nodes", lambda self, reason: None)
    monkeypatch.setattr(slurmcmd, "usable_nodes", lambda partition: ["node1", "node2"])
    monkeypatch.setattr(slurm, "read_job", lambda job: {"JobState": "COMPLETED", "ExitCode": "0:0"})
    assert j.poll() is None
    (tmp_path / "rank1.exit").write_text(json.dumps({"code": 143, "oom": False, "time": 1.0}))  # the first run's
    assert j.poll() is None and j.poll() is None and j.poll() is None
    err = capsys.readouterr().err
    assert err.count("slurm job 7 requeued by Slurm (PENDING, BeginTime") == 1, err
    assert (tmp_path / "requeue1" / "rank1.exit").exists() and not (tmp_path / "rank1.exit").exists()
    for r in (0, 1):  # the second run's own records
        (tmp_path / f"rank{r}.exit").write_text(json.dumps({"code": 0, "oom": False, "time": 2.0}))
    out = j.poll()
    assert out is not None and out.state == "COMPLETED", out
    assert out.describe() == "job completed: all 2 ranks exited 0; requeued by Slurm once"


def test_a_job_requeued_because_its_node_failed_says_which_node(tmp_path, monkeypatch, capsys):
    """Issue 43's Slurm campaign (seed 106189, job 22): node1's processes killed; Slurm declared node1 down and
    requeued the job itself, which then completed on the other nodes. Submit called it "a preemption or `scontrol
    requeue`": the node the first run's ranks started on, now down in sinfo, is why."""
    j = watched(tmp_path, "50", ran=True)
    for rank, host in ((0, "node1"), (1, "node2")):
        (tmp_path / f"rank{rank}.start").write_text(json.dumps({"host": host, "pid": 1, "time": 1.0}))
    monkeypatch.setattr(slurmcmd, "usable_nodes", lambda partition: ["node2", "node3"])  # sinfo: node1 down
    j.requeued("PENDING", "None")
    err = capsys.readouterr().err
    assert "requeued by Slurm (PENDING, None: after node1 failed: sinfo has it down" in err, err
    assert j.requeued_after == ["node1"]
