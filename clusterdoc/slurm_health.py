"""`clusterdoc check --local --slurm-health`: a Slurm HealthCheckProgram with LBNL NHC's drain contract.

- Something failed: drain this node, `scontrol update NodeName=N State=DRAIN Reason="clusterdoc: <first failure>"`.
  A node that is already drained for another reason keeps that reason (an operator's note is never replaced),
  a node drained with no reason is left alone, and so are nodes that are down or not responding (`*`) and
  states this module does not know.
- All healthy: resume the node only when clusterdoc drained it (the reason's first word is `clusterdoc:`);
  an admin's drain is never undone.
The decision (`decide`) is pure, tested like the checks; `apply` reads sinfo and runs scontrol, each with a timeout.

What fails is the checks' FAIL status: for GPUs (checks/gpuhealth.py, checks/fabric.py) a GPU off the bus, fewer GPUs
than the node's Slurm gres (`gres_gpus`, unless --gpus-per-node says), an XID that calls for a reset or reboot,
uncorrectable ECC errors since the driver loaded, a failed row remap, an NVSwitch system without its fabric manager.
Warnings (throttling, a pending row remap, PCIe width, ACS) never drain unless --strict.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from dataclasses import dataclass

from clusterdoc.doctor import Report

LEADER = "clusterdoc:"
MAX_REASON = 200
SCONTROL_TIMEOUT = 20.0
# sinfo %t short states, without their flag suffixes (*~#!%$@^-)
UP_STATES = {"idle", "alloc", "mix", "comp", "resv", "plnd", "npc", "pow_up", "boot", "futr"}
OFF_STATES = {"drain", "drng", "drained", "down", "fail", "failg", "maint"}


@dataclass
class Action:
    argv: list[str] | None  # the scontrol command to run (None: leave the node as it is)
    note: str  # one line for the log: what was done and why


def node_name(environ=os.environ) -> str:
    """slurmd gives its HealthCheckProgram SLURMD_NODENAME; a node run by hand is its short host name."""
    return environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def first_failure(report: Report) -> str | None:
    fails = report.failures() or (report.warnings() if report.strict else [])
    if not fails:
        return None
    f = fails[0]
    text = " ".join(f"{f['check']}: {f['message']}".split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _ours(reason: str) -> bool:
    words = reason.split()
    return bool(words) and words[0] == LEADER


def decide(node: str, state: str, reason: str, failure: str | None) -> Action:
    """`state`: sinfo's %t (e.g. idle, drain, down*, mix~); `reason`: its %E ("none" when there is none)."""
    base = state.rstrip("*~#!%$@^-")
    reason = "" if reason.strip() in ("", "none", "(null)") else reason.strip()
    scontrol = ["scontrol", "update", f"NodeName={node}"]
    if failure:
        ours = f"{LEADER} {failure}"
        if state.endswith("*") or base in ("down", "fail", "failg"):
            return Action(None, f"{node} is {state}: left alone (clusterdoc would drain it: {failure})")
        if base in ("drain", "drng", "drained", "maint"):
            if not reason:
                return Action(None, f"{node} is {state} with no reason: left alone ({failure})")
            if not _ours(reason):
                return Action(None, f"{node} is {state} for another reason ({reason}): kept ({failure})")
            if reason == ours:
                return Action(None, f"{node} is already drained by clusterdoc: {failure}")
            return Action(scontrol + ["State=DRAIN", f"Reason={ours}"], f"{node}: reason now {ours!r}")
        if base in UP_STATES:
            return Action(scontrol + ["State=DRAIN", f"Reason={ours}"], f"{node} drained: {ours!r}")
        return Action(None, f"{node} is in state {state!r}, which clusterdoc does not know: left alone ({failure})")
    if base in OFF_STATES or state.endswith("*"):
        if not reason:
            return Action(None, f"{node} is {state} with no reason: not resumed (not drained by clusterdoc)")
        if not _ours(reason):
            return Action(None, f"{node} is {state} for a non-clusterdoc reason ({reason}): not resumed")
        return Action(scontrol + ["State=RESUME"], f"{node} healthy again: resumed (was {reason!r})")
    return Action(None, f"{node} is healthy ({state})")


def parse_gres_gpus(gres: str) -> int | None:
    """GPUs in sinfo's %G: "gpu:8", "gpu:a100:4(S:0-1),gpu:h100:4" -> 8; None when it names no GPU."""
    counts = [int(m.group(1)) for m in re.finditer(r"\bgpu(?::[\w.-]+)?:(\d+)", gres or "")]
    return sum(counts) if counts else None


def gres_gpus(node: str, timeout: float = SCONTROL_TIMEOUT) -> int | None:
    """The GPUs Slurm believes this node has (its gres), or None (no GPU gres, or Slurm does not answer)."""
    try:
        p = subprocess.run(
            ["sinfo", "-h", "-N", "-n", node, "-o", "%G"], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_gres_gpus(p.stdout) if p.returncode == 0 else None


def read_state(node: str, timeout: float = SCONTROL_TIMEOUT) -> tuple[str, str] | None:
    """(state, reason) of this node from sinfo, or None when Slurm does not answer."""
    try:
        p = subprocess.run(
            ["sinfo", "-h", "-N", "-n", node, "-o", "%t|%E"], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = next((ln for ln in p.stdout.splitlines() if "|" in ln), None)
    if p.returncode != 0 or line is None:
        return None
    state, _, reason = line.partition("|")
    return state.strip(), reason.strip()


def apply(report: Report, node: str | None = None, timeout: float = SCONTROL_TIMEOUT) -> Action:
    node = node or node_name()
    current = read_state(node, timeout)
    if current is None:
        return Action(None, f"sinfo does not know node {node!r} (or Slurm does not answer): nothing changed")
    action = decide(node, *current, first_failure(report))
    if action.argv:
        try:
            p = subprocess.run(action.argv, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as err:
            return Action(None, f"{action.note}; but scontrol failed: {err}")
        if p.returncode != 0:
            return Action(None, f"{action.note}; but scontrol failed: {(p.stderr or p.stdout).strip()[:300]}")
    return action
