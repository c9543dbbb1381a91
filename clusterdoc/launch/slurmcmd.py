"""The Slurm commands the launcher and `why` both ask (scontrol, with a checked job id), apart from the backend:
`why` reads a job without importing the backend that made it."""

from __future__ import annotations

import re
import subprocess

from clusterdoc.errors import UsageError

CMD_TIMEOUT = 15.0  # every squeue / scontrol / scancel call


def _run(argv: list[str], timeout: float = CMD_TIMEOUT) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None


_JOB_ID = re.compile(r"\d{1,12}(_\d{1,9})?")  # a job, or an array task (submitit's 123_4)


def checked_id(value, where) -> str:
    """A Slurm job id from a job record: digits, never something scancel / squeue would take as an option."""
    text = str(value)
    if not _JOB_ID.fullmatch(text):
        from clusterdoc.untrusted import printable

        raise UsageError(
            f"{printable(where)}: backend_id {printable(text, 80)!r} is not a Slurm job id; not passing it to Slurm",
            hint="a job record's owner can edit it: look the job up with squeue yourself",
        )
    return text


def scontrol_job(job_id: str) -> dict[str, str]:
    """`scontrol show job` as key=value pairs ({} when Slurm has forgotten the job)."""
    res = _run(["scontrol", "show", "job", job_id])
    if res is None or res.returncode != 0:
        return {}
    return dict(re.findall(r"(\w+)=(\S*)", res.stdout))
