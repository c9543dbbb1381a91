"""`check --local --slurm-health`: NHC's drain contract, decided by a pure function (issue 11 item 3)."""

import pytest

from clusterdoc.doctor import Report
from clusterdoc.slurm_health import decide, first_failure

FAIL = "kernel: kernel 5.4.0-150-generic is older than 5.5"
DRAIN = ["scontrol", "update", "NodeName=node2", "State=DRAIN", f"Reason=clusterdoc: {FAIL}"]
RESUME = ["scontrol", "update", "NodeName=node2", "State=RESUME"]


@pytest.mark.parametrize("state", ["idle", "alloc", "mix", "idle~", "comp", "resv"])
def test_a_failure_drains_a_node_in_service_with_the_first_failure_as_reason(state):
    assert decide("node2", state, "none", FAIL).argv == DRAIN


@pytest.mark.parametrize("state, reason", [("drain", "bad DIMM, ticket 4711"), ("drng", "reboot for BIOS"),
                                           ("maint", "upgrade")])
def test_an_admins_drain_keeps_its_reason_and_is_never_resumed(state, reason):
    failing = decide("node2", state, reason, FAIL)
    assert failing.argv is None and "another reason" in failing.note and reason in failing.note
    healthy = decide("node2", state, reason, None)
    assert healthy.argv is None and "non-clusterdoc reason" in healthy.note


def test_resumes_only_what_clusterdoc_drained():
    assert decide("node2", "drain", f"clusterdoc: {FAIL}", None).argv == RESUME
    assert decide("node2", "drng", "clusterdoc: cuda: nvcc 11.8 vs torch 12.1", None).argv == RESUME
    assert decide("node2", "drain", "clusterdoc2: x", None).argv is None       # the first word, exactly
    assert decide("node2", "drain", "none", None).argv is None                  # no reason: an admin's drain
    assert decide("node2", "idle", "none", None).argv is None                   # healthy and in service


def test_a_new_failure_replaces_only_our_own_reason():
    again = decide("node2", "drain", f"clusterdoc: {FAIL}", FAIL)
    assert again.argv is None and "already drained by clusterdoc" in again.note
    other = decide("node2", "drain", "clusterdoc: cuda: old", FAIL)
    assert other.argv == DRAIN


@pytest.mark.parametrize("state", ["down", "down*", "idle*", "fail", "weird"])
def test_down_unresponsive_and_unknown_states_are_left_alone(state):
    assert decide("node2", state, "none", FAIL).argv is None


def test_the_reason_is_the_first_failure_on_one_line_and_bounded():
    findings = [{"node": "n", "check": "ssh", "status": "ok", "message": "ok", "fix": ""},
                {"node": "n", "check": "kernel", "status": "fail", "message": "kernel 5.4\nis old " + "x" * 400,
                 "fix": "upgrade"},
                {"node": "n", "check": "cuda", "status": "fail", "message": "later", "fix": ""}]
    reason = first_failure(Report([], findings, ["ssh", "kernel", "cuda"], None))
    assert reason.startswith("kernel: kernel 5.4 is old x") and "\n" not in reason and len(reason) <= 200
    assert first_failure(Report([], findings[:1], ["ssh"], None)) is None
