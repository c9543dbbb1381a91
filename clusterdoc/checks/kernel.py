"""kernel: Linux >= 5.5; older kernels make distributed jobs hang (Accelerate warns about it)."""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check
from clusterdoc.tables import KERNEL_MIN, vtuple

CHECK = "kernel"


def check(node: str, facts: dict) -> list[Finding]:
    out = probe_errors(node, facts, CHECK)
    kernel = facts.get("kernel") or {}
    release = kernel.get("release") or ""
    version = vtuple(release, 2)
    if kernel.get("gvisor"):
        return out + [
            finding(
                node,
                CHECK,
                WARN,
                f"kernel {release} is gVisor's emulated kernel: the host kernel cannot be judged from here",
                "check `uname -r` on the host that runs the sandbox",
            )
        ]
    if len(version) < 2:
        return out + [
            finding(
                node,
                CHECK,
                WARN,
                f"kernel release {release!r} cannot be read",
                "check /proc/sys/kernel/osrelease on the node",
            )
        ]
    where = " (in a container: this is the host's kernel)" if kernel.get("container") else ""
    if version < KERNEL_MIN:
        return out + [
            finding(
                node,
                CHECK,
                FAIL,
                f"kernel {release} is older than 5.5: PyTorch distributed jobs are known to hang on it{where}",
                "upgrade the node's kernel to 5.5 or newer "
                "(e.g. Ubuntu 20.04: apt install linux-generic-hwe-20.04) and reboot",
            )
        ]
    return out + [finding(node, CHECK, OK, f"kernel {release}{where}")]


CHECKS = (
    Check(
        "kernel",
        70,
        "the kernel is new enough, not gVisor",
        reads=("kernel",),
        probe_errors={"kernel": FAIL},
        malformed_labels={"kernel.release": "kernel release"},
        allocation=True,
        node=lambda c: check(c.node, c.facts),
    ),
)
