"""The fault campaign's invariants (tests/faults/invariants.py) on the node and network kinds, as pure checks over a
job's result: what each must say, and what it must not let pass (another node blamed, a wrong outcome)."""

from __future__ import annotations

from tests.faults import invariants
from tests.faults.catalog import CATALOG, kinds_for
from tests.faults.runner import expectations


def result(**kw) -> dict:
    r = {"rc": 1, "elapsed": 50.0, "bound": 400.0, "state": "FAILED", "said": "clusterdoc submit: job failed: x",
         "landed": True, "first_state": "FAILED", "rank": 1, "node": "node2", "attempts": [{"n": 1}],
         "why": {"category": "unknown", "nodes": [], "ranks": []}}  # fmt: skip
    return {**r, **kw}


def test_the_node_kinds_are_in_the_catalog_for_their_backends():
    assert {"netdrop", "loss", "slurmdkill", "xid79"} <= set(kinds_for("slurm"))
    assert {"netdrop", "loss", "xid79"} <= set(kinds_for("mpirun")) and "slurmdkill" not in kinds_for("mpirun")
    assert not {"netdrop", "loss", "slurmdkill", "xid79"} & set(kinds_for("local"))


def test_a_network_fault_may_end_unknown_naming_candidates_but_never_blames_another_node():
    e = expectations(CATALOG["netdrop"])
    assert invariants.check(result(), e) == []
    unknown = {"category": "unknown", "nodes": ["node1", "node2", "node3"], "ranks": [0, 1, 2]}  # candidates only
    assert invariants.check(result(why=unknown), e) == []
    wrong = invariants.check(result(why={"category": "network", "nodes": ["node3"], "ranks": []}), e)
    assert wrong == ["why names nodes ['node3'] (network), expected none or [node2]"], wrong
    blamed = invariants.check(result(why={"category": "node", "nodes": ["node2"], "ranks": [1]}), e)
    assert "outcome FAILED, expected COMPLETED" in blamed and any("1 attempt(s), expected 2" in v for v in blamed)
    code = invariants.check(result(why={"category": "code", "nodes": ["node2"], "ranks": [1]}), e)
    assert any(v.startswith("why says code") for v in code), code


def test_packet_loss_may_complete_or_fail_but_a_slurmd_killed_never_cancels():
    loss = expectations(CATALOG["loss"])
    done = result(state="COMPLETED", rc=0, said="clusterdoc submit: job completed", first_state="COMPLETED", why=None)
    assert invariants.check(done, loss) == [] and invariants.check(result(), loss) == []
    cancelled = invariants.check(result(state="CANCELLED", rc=130, said=""), expectations(CATALOG["slurmdkill"]))
    assert cancelled == ["outcome CANCELLED, expected COMPLETED or FAILED"], cancelled


def test_a_node_killed_and_the_job_requeued_by_slurm_itself_needs_no_rerun_of_ours_but_must_leave_the_node():
    """Issue 43's Slurm campaign (seed 106189, job 22): node1's processes killed at a checkpoint; Slurm declared it
    down and requeued the job itself (JobRequeue), which completed on attempt 1 from the checkpoint on the other
    nodes. "1 attempt(s), expected 2" before: the rerun was Slurm's, and submit now says after which node."""
    e = expectations(CATALOG["nodekill"])
    said = "clusterdoc submit: job completed: all 3 ranks exited 0; requeued by Slurm once (after node1 failed)"
    done = result(state="COMPLETED", rc=0, said=said, first_state="COMPLETED", why=None, node="node1",
                  requeued_said=True, requeued_after=["node1"], hosts2=["node2", "node3", "node4"], ckpt_last=8,
                  resumed=8, reached=12, finished=True)  # fmt: skip
    assert invariants.check(done, e) == []
    again = invariants.check({**done, "hosts2": ["node1", "node2", "node3"]}, e)
    assert again == ["Slurm's requeue ran on node1 again"], again
    # a requeue that does not name the node (a preemption): not the rerun the node's failure asks for
    other = invariants.check({**done, "requeued_after": []}, e)
    assert other == ["1 attempt(s), expected 2 (rerun)"], other


def test_a_clock_step_must_complete_without_a_stall_or_a_straggler_said():
    e = expectations(CATALOG["clockjump"])
    done = result(state="COMPLETED", rc=0, said="clusterdoc submit: job completed", first_state="COMPLETED", why=None,
                  submit_err="[rank 0] rank 0: step 3\nclusterdoc submit: job completed")  # fmt: skip
    assert invariants.check(done, e) == []
    straggled = {**done, "submit_err": "[rank 0]   straggler: rank 2 on node3 keeps the others waiting: 1200 s"}
    assert invariants.check(straggled, e) == [
        "a healthy job was said to stall or straggle: [rank 0]   straggler: rank 2 on node3 keeps the others waiting: "
        "1200 s"
    ]
    assert invariants.check(straggled, expectations(CATALOG["pause"])) == []  # only where nothing failed is it asked


def test_a_pace_longer_than_the_job_is_a_clock_that_moved():
    """Issue 43's clockjump on the code before clock.py: node2 an hour ahead mid-job, rank 0's summary said
    'rank 1 (node2): compute 3602.43 s' for a job of 15 s."""
    line = "[rank 0]   rank 1 (node2): compute 3602.43 s, waiting 142 ms (0%) mostly at job.py:77 in <module>"
    ok = "[rank 0]   rank 0 (node1): compute 2.44 s, waiting 127 ms (5%) mostly at job.py:77 in <module>"
    done = result(state="COMPLETED", rc=0, said="clusterdoc submit: job completed", first_state="COMPLETED", why=None,
                  elapsed=15.0, submit_err=f"{ok}\n{line}")  # fmt: skip
    assert invariants.pace_true(done) == ["rank 1 (node2)'s pace adds up to 3603 s in a job of 15 s"]
    assert invariants.pace_true({**done, "submit_err": ok}) == []
