"""Faults in no list (issue 43's last "Must show"; tests/faults/unlisted.py): node faults none of the catalog's
kinds covers, each planted mid-job into the real `clusterdoc submit --retries 1` of the campaign's checkpointing
job on the test cluster's Slurm. For each: the job completes by itself on attempt 2 without the node at fault,
resumed from the checkpoint (not from step 0), `why` of attempt 1 names that node (node or network), and 30 s
after the end nothing of the job is left on any node or the head (and every other campaign invariant holds)."""

from __future__ import annotations

import pytest

from tests.faults import runner

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


# the victim's rank: 0 where the fault silences the job's store (rank 0's node): the stall is then the launcher's.
# `reboot` (every process of the node killed, its daemons back) is left to `python -m tests.faults --kinds reboot`:
# from outside it is the catalog's nodekill until its slurmd comes back, and CI's time is short; `linkdown` (the
# node's link set down) likewise: from outside it is the catalog's netdrop, which the short campaign plants
@pytest.mark.parametrize("kind, moment, rank, step", [
    ("freeze", "step", 2, 6),
    ("reject", "step", 0, 5),
])  # fmt: skip
def test_a_node_fault_in_no_list_heals_by_a_retry_without_the_node(cpu_cluster, tmp_path, kind, moment, rank, step):
    r = runner.run_one(cpu_cluster, "slurm", kind, moment, rank, step, tmp_path / kind)
    facts = {k: v for k, v in r.report().items()} | {"said": r.said, "attempts": r.attempts, "left": r.leftovers}
    assert r.landed and r.node, facts
    assert (r.state, r.rc) == ("COMPLETED", 0), facts
    assert len(r.attempts) == 2 and r.node in (r.attempts[1].get("exclude") or []), facts
    assert r.node not in r.hosts2 and "?" not in r.hosts2, facts
    assert r.ckpt_before >= 4 and r.resumed == r.ckpt_before, facts  # from the checkpoint, not from step 0
    why = r.why or {}
    assert why.get("category") in ("node", "network") and why.get("nodes") == [r.node], facts
    assert r.leftovers == [], facts
    assert r.violations == [], facts
