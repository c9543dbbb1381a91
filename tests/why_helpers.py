"""What the why tests share: a pasted log's verdict, as `clusterdoc why --log` gives it."""

from __future__ import annotations

from clusterdoc.why import foreign, verdict


def judge_log(text: str) -> verdict.Cause:
    """The cause `why` names for `text` (a foreign job's output, Slurm job id 1)."""
    cause = verdict.judge(foreign.evidence_from_output(text, "1")).cause
    assert cause is not None
    return cause
