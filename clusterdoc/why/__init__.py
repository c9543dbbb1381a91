"""`clusterdoc why`: why a job died, in one cause with its evidence (docs/why.md).

The front door, for the CLI, `submit --retries` and the Python API:

    explain(jd)            a clusterdoc job folder's attempt -> (Evidence, Verdict), the nodes probed
    from_log(lines, job)   any job's output (an iterable of lines: a file, a stream) -> (Evidence, Verdict)
    judge(ev)              Evidence -> Verdict (pure)

Inside: `logs` (streaming parsers of what ranks, NCCL, CUDA and Slurm print; `prefix`: who printed a line;
`signatures`: the failure lines by category), `evidence` (a job folder's facts), `foreign` (a log's facts),
`causes` (one function per cause, their order and retry rule in one table), `verdict` (the judge), `main` (the
command: probe, render, --json).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clusterdoc.why.evidence import Evidence
    from clusterdoc.why.model import Verdict

__all__ = ["explain", "from_log", "judge"]


def judge(ev: Evidence) -> Verdict:
    from clusterdoc.why.verdict import judge as _judge

    return _judge(ev)


def from_log(lines: Iterable[str], job: str = "?", state: str = "FAILED") -> tuple[Evidence, Verdict]:
    """The evidence and verdict of a job's output that clusterdoc did not write (any launcher's prefixes)."""
    from clusterdoc.why.foreign import evidence_from_lines

    ev = evidence_from_lines(lines, job, state)
    return ev, judge(ev)


def explain(jd, attempt: int | None = None, probe: bool = True, ssh_config: str | None = None, live: bool = True):
    """A clusterdoc job's attempt (default the last): its evidence and verdict (what submit --retries asks)."""
    from clusterdoc.why.main import explain as _explain

    return _explain(jd, attempt, probe, ssh_config, live)
