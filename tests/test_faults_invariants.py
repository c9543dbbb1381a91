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
