"""clock: each node's clock against the head's.

The probe reports its own time at its start and end (time.time()); the head records when it sent the command
and when the answer came. As NTP does: offset = ((start - sent) + (end - received)) / 2, uncertain by half
the round trip not spent in the probe. The node's clock is read the way an admin sees it: when `date` answers,
its difference to the probe's own time is added (they agree on a real node). Thresholds: > 1 s warn (logs
and traces out of order, TLS and Kerberos tickets at risk), > 60 s fail (munge refuses credentials as expired
or rewound: Slurm cannot start the job's steps). Only a lower bound above the limit counts.
"""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check

CHECK = "clock"
WARN_S, FAIL_S = 1.0, 60.0


def probe_offset(facts: dict) -> tuple[float, float] | None:
    """(offset of the probe's time.time() from the head's clock in seconds, its uncertainty), or None: what
    converts the times a probe reports (a listener's `closed`, a connection's `at`) to the head's clock."""
    c = facts.get("clock") or {}
    start, end, sent, received = (c.get(k) for k in ("start", "end", "head_sent", "head_received"))
    if start is None or end is None or sent is None or received is None:
        return None
    return ((start - sent) + (end - received)) / 2, max(0.0, ((received - sent) - (end - start)) / 2)


def offset(facts: dict) -> tuple[float, float] | None:
    """(offset of the node's clock, as its `date` shows it, from the head's in seconds, its uncertainty), or None."""
    got = probe_offset(facts)
    if got is None:
        return None
    theta, delta = got
    c = facts["clock"]
    if c.get("date") is not None and c.get("date_at") is not None:
        theta += c["date"] - c["date_at"]
    return theta, delta


def check(node: str, facts: dict) -> list[Finding]:
    out = probe_errors(node, facts, CHECK)
    got = offset(facts)
    if got is None:
        return out
    theta, delta = got
    low = abs(theta) - delta
    way = "ahead of" if theta > 0 else "behind"
    text = f"{node}'s clock is {abs(theta):.1f} s {way} the head's (±{delta:.2f} s)"
    fix = (
        f"run NTP on every node (chronyc tracking / timedatectl on {node}; systemctl enable --now chrony), "
        "then check with `clusterdoc check`"
    )
    if low > FAIL_S:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                text + f": above {FAIL_S:g} s munge refuses its credentials (Slurm "
                'steps fail with "Rewound credential" / "Expired credential")',
                fix,
            )
        )
    elif low > WARN_S:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                text + f" (above {WARN_S:g} s: log and trace times disagree across ranks; TLS and Kerberos may refuse)",
                fix,
            )
        )
    else:
        out.append(finding(node, CHECK, OK, f"clock within {max(abs(theta), delta):.2f} s of the head's"))
    return out


CHECKS = (
    Check(
        "clock",
        130,
        "clocks agree with the head's",
        reads=("clock",),
        probe_errors={"clock": WARN},
        local=False,
        node=lambda c: check(c.node, c.facts),
    ),
)
