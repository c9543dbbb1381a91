"""The Slurm commands the launcher and `why` both ask (squeue, scontrol, scancel; a checked job id; sacct is
sacct.py's), apart from the backend: `why` reads a job without importing the backend that made it.

A command that fails is not an answer about the job. Slurm says a job is unknown in one way only:
`slurm_load_jobs error: Invalid job id specified` (squeue -j and scontrol show job, exit 1, once the job is past
MinJobAge); every other failure, `Unable to contact slurm controller (connect failure)`, `Socket timed out on
send/recv operation`, no answer within CMD_TIMEOUT, is the controller's outage (a restart, a busy slurmctld) and
raises Unreachable: the job may well be running on.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from clusterdoc.errors import UsageError
from clusterdoc.jobs.errors import JobsError

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


INVALID_JOB = "Invalid job id specified"  # squeue -j / scontrol show job: Slurm does not know the job (any more)


class Unreachable(JobsError):
    """Slurm's controller did not answer (str(): what the command said, one line, bounded)."""


def said(res: subprocess.CompletedProcess | None, argv: list[str], timeout: float) -> str:
    """What a failed Slurm command said, on one line: its last line of stderr (escaped, bounded)."""
    from clusterdoc.untrusted import printable

    if res is None:
        return f"{argv[0]} did not answer within {timeout:g}s"
    lines = [ln.strip() for ln in f"{res.stderr}\n{res.stdout}".splitlines() if ln.strip()]
    return printable(lines[-1] if lines else f"{argv[0]} exited with {res.returncode}", 200)


def ask(argv: list[str], timeout: float = CMD_TIMEOUT) -> str | None:
    """A job query's output; None when Slurm says it does not know the job; Unreachable for any other failure."""
    res = _run(argv, timeout)
    if res is not None and res.returncode == 0:
        return res.stdout
    if res is not None and INVALID_JOB in res.stderr:
        return None
    raise Unreachable(said(res, argv, timeout))


def squeue_state_reason(job_id: str) -> tuple[str | None, str]:
    """(state, reason) from squeue; (None, "") when squeue does not list the job; Unreachable when it failed."""
    out = ask(["squeue", "-h", "-j", job_id, "-o", "%T %r"])
    parts = (out or "").split(None, 1)
    return (parts[0], parts[1].strip() if len(parts) > 1 else "") if parts else (None, "")


def scancel(job_id: str, tries: int = 3, pause: float = 5.0) -> str | None:
    """scancel, tried again while the controller does not answer; None when done (or the job is gone), else what
    the last try said (the controller stayed away: the job may still run)."""
    import time

    last = None
    for i in range(tries):
        res = _run(["scancel", "--", job_id])
        if res is not None and (res.returncode == 0 or INVALID_JOB in res.stderr or "already completing" in res.stderr):
            return None
        last = said(res, ["scancel"], CMD_TIMEOUT)
        if i + 1 < tries:
            time.sleep(pause)
    return last


def usable_nodes(partition: str | None) -> list[str] | None:
    """The nodes sinfo lists in a state a job can use (not down, drained, failed, in maintenance, unknown or
    booting), in `partition` when given; None when sinfo is missing or does not answer."""
    if not shutil.which("sinfo"):
        return None
    res = _run(["sinfo", "-h", "-N", "-o", "%N %t"] + (["-p", partition] if partition else []))
    if res is None or res.returncode != 0:
        return None
    bad = ("down", "drain", "fail", "maint", "unk", "boot")
    return sorted(
        {ln.split()[0] for ln in res.stdout.splitlines() if ln.split() and not ln.split()[-1].startswith(bad)}
    )


def node_features() -> dict[str, str]:
    """{feature: the nodes that have it (Slurm's hostlist)} from `sinfo -o '%f|%N'`; {} when sinfo does not answer.
    What a refused --constraint is told to pick from."""
    res = _run(["sinfo", "-h", "-o", "%f|%N"]) if shutil.which("sinfo") else None
    if res is None or res.returncode != 0:
        return {}
    out: dict[str, list[str]] = {}
    for line in res.stdout.splitlines()[:4096]:
        features, _, nodes = line.strip().partition("|")
        for f in features.split(","):
            if f and f != "(null)" and nodes:
                out.setdefault(f[:80], []).append(nodes[:200])
    return {f: ",".join(n) for f, n in out.items()}


QOS_LIMITS = ("MaxWall", "MaxTRESPerJob", "MaxTRESPerNode", "MaxTRESPerUser", "MaxJobsPerUser", "MaxSubmitJobsPerUser")


def qos_limits(name: str) -> dict[str, str]:
    """{limit: value} of one QOS that has the limit set (`sacctmgr show qos NAME`), {} when none or no answer."""
    if not shutil.which("sacctmgr") or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
        return {}
    res = _run(["sacctmgr", "-nP", "show", "qos", name, "format=Name," + ",".join(QOS_LIMITS)])
    if res is None or res.returncode != 0:
        return {}
    for line in res.stdout.splitlines()[:64]:
        fields = line.strip().split("|")
        if fields and fields[0] == name and len(fields) == len(QOS_LIMITS) + 1:
            return {k: v[:120] for k, v in zip(QOS_LIMITS, fields[1:]) if v}
    return {}


# the lines read, by the key they start with, and the keys taken from each; every other line (the job's name,
# comment, command, paths, account, features: text the job's owner chose) is never read for a field
LINES = {
    "JobState": ("JobState", "Reason"),
    "Requeue": ("ExitCode",),
    "NodeList": ("NodeList",),
    "StdErr": ("StdErr",),
    "StdOut": ("StdOut",),
}
_PAIR = re.compile(r" ([A-Za-z_]\w*)=(\S*)")


def parse_show_job(text: str) -> dict[str, str]:
    """`scontrol show job` (one record) read by its layout, not as key=value pairs anywhere in the text: the
    record starts `JobId=N`, and each field read comes from the indented line that starts with it (LINES).
    StdOut/StdErr are the rest of their line. A line that starts a field twice means some value (a name or a
    comment with a newline) forged one: {} (nothing known beats a confident wrong field), as for any other text."""
    lines = text.split("\n")
    m = re.match(r"JobId=(\S+)", lines[0].strip()) if lines else None
    if not m:
        return {}
    info = {"JobId": m.group(1)}
    seen: set[str] = set()
    for line in lines[1:]:
        if not line.strip():
            break  # the next record (a job array, a het job): not this job
        if not line.startswith("   ") or line.startswith("    "):
            continue  # a continuation of some value, not a field line
        lead = line[3:].split("=", 1)[0]
        if lead not in LINES:
            continue
        if lead in seen:
            return {}
        seen.add(lead)
        if lead in ("StdErr", "StdOut"):
            info[lead] = line[3:].split("=", 1)[1] if "=" in line else ""
            continue
        pairs: dict[str, str] = {}
        for k, v in _PAIR.findall(" " + line[3:]):
            pairs.setdefault(k, v)
        info.update({k: pairs[k] for k in LINES[lead] if k in pairs})
    return info


def read_job(job_id: str) -> dict[str, str]:
    """`scontrol show job` by its layout ({} when Slurm has forgotten the job); Unreachable when it failed."""
    out = ask(["scontrol", "show", "job", job_id])
    return parse_show_job(out) if out else {}


def scontrol_job(job_id: str) -> dict[str, str]:
    """read_job, {} also when the controller does not answer (for who only adds what Slurm says, if it does)."""
    try:
        return read_job(job_id)
    except Unreachable:
        return {}
