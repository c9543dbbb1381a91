"""`check --local --slurm-health`: NHC's drain contract, decided by a pure function (issue 11 item 3)."""

import pytest

from clusterdoc.doctor import Report
from clusterdoc.slurm_health import decide, first_failure, parse_gres_gpus

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


def test_the_gpus_slurm_schedules_come_from_the_gres():
    assert parse_gres_gpus("gpu:8") == 8
    assert parse_gres_gpus("gpu:a100:4(S:0-1),gpu:h100:4(S:1)") == 8
    assert parse_gres_gpus("(null)") is None and parse_gres_gpus("shard:8") is None


# --- the real thing: slurmd runs `clusterdoc check --local --slurm-health` as its HealthCheckProgram ---------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def scontrol(cluster, *args):
    return subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, **cluster.env()))


def node_state(cluster, name) -> tuple[str, str]:
    """(State=..., Reason=...) of `scontrol show node NAME`."""
    out = scontrol(cluster, "show", "node", name).stdout
    state = next((w.split("=", 1)[1] for w in out.split() if w.startswith("State=")), "")
    reason = out.split("Reason=", 1)[1].split(" [", 1)[0].strip() if "Reason=" in out else ""
    return state, reason


def wait_state(cluster, name, pred, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = node_state(cluster, name)
        if pred(*got):
            return got
        time.sleep(1)
    raise AssertionError(f"{name} stayed {node_state(cluster, name)}")


@contextmanager
def health_check(cluster, tmp_path, checks="kernel"):
    """slurm.conf gets HealthCheckProgram (our CLI) and a 5 s interval for the with-block. PATH has the nodes'
    /usr/local/bin, where the test cluster's fake nvidia-smi lives (a real node's is in /usr/bin)."""
    log = tmp_path / "health.log"
    prog = tmp_path / "clusterdoc-health"
    prog.write_text(f"#!/bin/sh\nexport SLURM_CONF={cluster.slurm.conf} PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
                    f"PYTHONPATH={ROOT}\nexec {sys.executable} -m clusterdoc check --local --slurm-health "
                    f"--checks {checks} >>{log} 2>&1\n")
    prog.chmod(0o755)
    conf = Path(cluster.slurm.conf)
    original = conf.read_text()
    conf.write_text(original + f"HealthCheckProgram={prog}\nHealthCheckInterval=5\nHealthCheckNodeState=ANY\n")
    assert scontrol(cluster, "reconfigure").returncode == 0
    try:
        yield log
    finally:
        # a check slurmd started before the reconfigure goes on after it, and may drain a node once the block's
        # plants are gone (a CI run: node1 drained 7 s after the reconfigure, "no nvidia-smi", and every later
        # Slurm job of 4 nodes waited): the program made a no-op first, the checks under way waited for, then
        # every drained node resumed
        prog.write_text("#!/bin/sh\nexit 0\n")
        conf.write_text(original)
        scontrol(cluster, "reconfigure")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and subprocess.run(
                ["pgrep", "-f", "--", "clusterdoc check --local --slurm-health"], capture_output=True).returncode == 0:
            time.sleep(0.5)
        for n in cluster.nodes:
            if "DRAIN" in node_state(cluster, n.name)[0]:
                scontrol(cluster, "update", f"NodeName={n.name}", "State=RESUME")


@pytest.mark.cluster
@pytest.mark.slow
def test_slurm_drains_an_old_kernel_node_and_resumes_it_but_never_an_admins_drain(cluster, tmp_path):
    with health_check(cluster, tmp_path) as log:
        scontrol(cluster, "update", "NodeName=node3", "State=DRAIN", "Reason=admin: new DIMM")
        with cluster.planted({"node2": {"kernel": "5.4.0-150-generic"}}):
            state, reason = wait_state(cluster, "node2", lambda s, r: "DRAIN" in s)
            assert reason.startswith("clusterdoc: kernel: kernel 5.4.0-150-generic is older than 5.5"), reason
            assert "DRAIN" not in node_state(cluster, "node1")[0] and "DRAIN" not in node_state(cluster, "node4")[0]
        state, reason = wait_state(cluster, "node2", lambda s, r: "DRAIN" not in s)
        assert "resumed" in log.read_text()
        time.sleep(8)  # more health checks: node3 healthy, but drained by an admin
        assert node_state(cluster, "node3") == (node_state(cluster, "node3")[0], "admin: new DIMM")
        assert "DRAIN" in node_state(cluster, "node3")[0]
        assert "non-clusterdoc reason" in log.read_text()
