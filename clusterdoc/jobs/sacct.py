"""What Slurm's accounting (`sacct`) remembers of a job: the only memory of it once slurmctld has forgotten it
(MinJobAge after its end, 300 s by default).

`parse()` is pure: `sacct -n -P -j JOB -o FIELDS` text in, an `Accounting` (the job's row and its steps') out,
or None when the text is not that. The text is untrusted (the job's owner chose its name, work dir and paths;
a path may hold `|` or a newline): the state query asks for no free-text field, only Slurm's own words and
numbers, so every row splits into exactly FIELDS; a row of another shape, a row of another job, or the job's
row twice is not read as the job's (None: nothing known beats a confident wrong state). The paths (WorkDir,
and StdOut/StdErr where sacct has them, Slurm 23.02 and later) come from a second query of their own, read
only when it is one clean line.

`query()` and `paths()` run sacct with a timeout. A cluster without accounting storage ("Slurm accounting
storage is disabled") or without sacct answers None: not an error, there is simply no accounting to ask.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field

FIELDS = ("JobID", "State", "ExitCode", "DerivedExitCode", "Reason", "NodeList", "MaxRSS", "Elapsed", "Timelimit")
TIMEOUT = 15.0  # every sacct call
MAX_OUTPUT = 1 << 20  # characters of sacct's answer read
MAX_STEPS = 256  # steps kept (the job's row is first; a job of thousands of sruns keeps its first ones)
DISABLED = "accounting storage is disabled"  # sacct on a cluster with AccountingStorageType=accounting_storage/none

_JOB = r"\d{1,12}(?:_\d{1,9})?"  # a job, or an array task
_STEP = re.compile(r"(?:batch|extern|interactive|\d{1,9})(?:\+\d{1,4})?")
_STATE = re.compile(r"([A-Z_]{2,20})\+?(?: by (\d{1,10}))?")  # "CANCELLED by 0", "CANCELLED+" (sacct -P, cut)
_CODE = re.compile(r"\d{1,3}:\d{1,3}")
_NODES = re.compile(r"[A-Za-z0-9_.,\[\]-]{1,4096}|None assigned")
_REASON = re.compile(r"[A-Za-z0-9_(),.:/ -]{0,200}")
_RSS = re.compile(r"\d{1,20}(?:\.\d{1,6})?[KMGTP]?")
_DURATION = re.compile(
    r"(?:\d{1,5}-)?\d{1,2}:\d{2}:\d{2}|\d{1,5}:\d{2}(?:\.\d{1,3})?|UNLIMITED|Partition_Limit|INVALID"
)


@dataclass
class Step:
    step: str  # "batch", "extern", "0", "1"...
    state: str
    exit_code: str  # "code:signal"
    nodes: str
    max_rss: str = ""  # as sacct prints it ("218336K"); "" where not gathered


@dataclass
class Accounting:
    job: str
    state: str  # COMPLETED, FAILED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, CANCELLED, RUNNING, ...
    exit_code: str
    derived_exit_code: str
    reason: str
    nodes: str
    elapsed: str = ""
    time_limit: str = ""
    cancelled_by: int | None = None  # the uid in "CANCELLED by UID"
    steps: list[Step] = field(default_factory=list)
    work_dir: str | None = None  # from paths(): untrusted text, shown escaped
    stdout: str | None = None
    stderr: str | None = None

    def step_states(self) -> str:
        """'batch CANCELLED 0:15, 0 CANCELLED 0:15' (the steps as sacct lists them)."""
        return ", ".join(f"{s.step} {s.state} {s.exit_code}" + (f" MaxRSS {s.max_rss}" if s.max_rss else "")
                         for s in self.steps[:16]) + (f", ... ({len(self.steps)} steps)" if len(self.steps) > 16
                                                       else "")  # fmt: skip

    def oom_steps(self) -> list[Step]:
        return [s for s in self.steps if s.state == "OUT_OF_MEMORY"]

    def max_rss(self) -> str:
        """The largest MaxRSS of the steps ("" when none was gathered)."""
        best = max((s for s in self.steps if s.max_rss), key=lambda s: rss_bytes(s.max_rss), default=None)
        return best.max_rss if best else ""

    def line(self) -> str:
        """The job's row, as evidence: 'sacct: TIMEOUT, ExitCode 0:0, ... on node2; steps: ...'."""
        who = f" by uid {self.cancelled_by}" if self.cancelled_by is not None else ""
        out = f"sacct: job {self.job} {self.state}{who}, ExitCode {self.exit_code}"
        if self.derived_exit_code not in ("", "0:0"):
            out += f", DerivedExitCode {self.derived_exit_code}"
        if self.reason and self.reason != "None":
            out += f", Reason {self.reason}"
        if self.elapsed:
            out += f", Elapsed {self.elapsed}" + (f" of Timelimit {self.time_limit}" if self.time_limit else "")
        out += f", on {self.nodes}"
        return out + (f"; steps: {self.step_states()}" if self.steps else "")

    def scontrol_like(self) -> dict[str, str]:
        """The keys `scontrol show job` gives (slurmcmd.parse_show_job), for who reads either."""
        info = {"JobId": self.job, "JobState": self.state, "Reason": self.reason, "NodeList": self.nodes,
                "ExitCode": self.exit_code}  # fmt: skip
        if self.stdout:
            info["StdOut"] = self.stdout
        if self.stderr:
            info["StdErr"] = self.stderr
        return info


def rss_bytes(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTP]?)", text or "")
    if not m:
        return 0.0
    return float(m.group(1)) * 1024 ** " KMGTP".index(m.group(2) or " ")


def _row(line: str) -> dict | None:
    parts = line.split("|")
    if len(parts) != len(FIELDS):
        return None
    row = dict(zip(FIELDS, parts))
    ok = (
        _STATE.fullmatch(row["State"])
        and _CODE.fullmatch(row["ExitCode"])
        and (row["DerivedExitCode"] == "" or _CODE.fullmatch(row["DerivedExitCode"]))
        and _NODES.fullmatch(row["NodeList"])
        and _REASON.fullmatch(row["Reason"])
        and (row["MaxRSS"] == "" or _RSS.fullmatch(row["MaxRSS"]))
        and (row["Elapsed"] == "" or _DURATION.fullmatch(row["Elapsed"]))
        and (row["Timelimit"] == "" or _DURATION.fullmatch(row["Timelimit"]))
    )
    return row if ok else None


def parse(text: str, job: str) -> Accounting | None:
    """The job's accounting from `sacct -n -P -j JOB -o ",".join(FIELDS)` (with steps); None when the text does
    not hold exactly one clean row of the job (see the module's docstring)."""
    if not re.fullmatch(_JOB, job):
        return None
    acc: Accounting | None = None
    steps: list[Step] = []
    seen: set[str] = set()
    for line in text[:MAX_OUTPUT].splitlines():
        if not line.strip():
            continue
        row = _row(line)
        if row is None:
            return None  # a line of another shape: not sacct's own (or a format this parser does not know)
        jid, _, step = row["JobID"].partition(".")
        if jid != job:
            continue  # another job (sacct -j of an array lists its tasks): not this one
        if row["JobID"] in seen:
            return None  # twice the same row: one of them is forged
        seen.add(row["JobID"])
        m = _STATE.fullmatch(row["State"])
        assert m is not None
        if not step:
            acc = Accounting(
                job=job,
                state=m.group(1),
                exit_code=row["ExitCode"],
                derived_exit_code=row["DerivedExitCode"],
                reason=row["Reason"],
                nodes=row["NodeList"],
                elapsed=row["Elapsed"],
                time_limit=row["Timelimit"],
                cancelled_by=int(m.group(2)) if m.group(2) else None,
            )
        elif _STEP.fullmatch(step):
            if len(steps) < MAX_STEPS:
                steps.append(Step(step, m.group(1), row["ExitCode"], row["NodeList"], row["MaxRSS"]))
        else:
            return None
    if acc is None:
        return None
    acc.steps = steps
    return acc


def _sacct(argv: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None


def query(job: str, timeout: float = TIMEOUT) -> Accounting | None:
    """The job's accounting (with its paths); None without accounting, without sacct, when sacct does not
    answer within `timeout` or does not know the job."""
    if not re.fullmatch(_JOB, job) or not shutil.which("sacct"):
        return None
    res = _sacct(["sacct", "-n", "-P", "-j", job, "-o", ",".join(FIELDS)], timeout)
    if res is None or res.returncode != 0:
        return None  # DISABLED, no answer, or an error: no accounting to read
    acc = parse(res.stdout, job)
    if acc is not None:
        acc.work_dir, acc.stdout, acc.stderr = paths(job, timeout)
    return acc


def _path(text: str) -> str | None:
    """One path as sacct printed it: absolute, one line, no control characters, bounded."""
    text = text.rstrip("\n")
    if not text.startswith("/") or len(text) > 4096 or re.search(r"[\x00-\x1f\x7f]", text):
        return None
    return text


def paths(job: str, timeout: float = TIMEOUT) -> tuple[str | None, str | None, str | None]:
    """(WorkDir, StdOut, StdErr) of the job's allocation; StdOut/StdErr None where this sacct has no such field
    (before 23.02) or they are not one clean line each. Each asked on its own: a path may hold `|`."""
    out: list[str | None] = []
    expand = ["--expand-patterns"]  # 23.02 and later: %j, %u, ... in StdOut filled in
    for name in ("WorkDir", "StdOut", "StdErr"):
        res = _sacct(["sacct", "-n", "-P", "-X", "-j", job, "-o", name, *expand], timeout)
        if expand and res is not None and res.returncode != 0 and "expand-patterns" in (res.stderr or ""):
            expand = []
            res = _sacct(["sacct", "-n", "-P", "-X", "-j", job, "-o", name], timeout)
        if res is None:  # no answer in time: no more waiting for paths
            out += [None] * (3 - len(out))
            break
        lines = res.stdout.splitlines() if res.returncode == 0 else []
        out.append(_path(lines[0]) if len(lines) == 1 else None)
        if name == "WorkDir" and out[0] is None:
            return None, None, None
        if res.returncode != 0 and "Invalid field" in (res.stderr or ""):
            out += [None] * (3 - len(out))
            break
    return out[0], out[1], out[2]


def user_name(uid: int) -> str:
    """'root (uid 0)', or 'uid 1234' where this machine does not know the uid."""
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (KeyError, OverflowError):
        return f"uid {uid}"


def default_output(acc: Accounting) -> str | None:
    """The job's output file where accounting names none (sacct before 23.02): sbatch's default, slurm-JOB.out
    in the job's WorkDir, if it is there."""
    import os

    if acc.stdout:
        return acc.stdout
    if not acc.work_dir:
        return None
    path = os.path.join(acc.work_dir, f"slurm-{acc.job}.out")
    return path if os.path.isfile(path) else None


def facts(acc: Accounting | None) -> dict | None:
    """What `why` keeps of the accounting (plain data, for Evidence.scheduler["accounting"])."""
    if acc is None:
        return None
    return {
        "line": acc.line(),
        "state": acc.state,
        "exit_code": acc.exit_code,
        "derived_exit_code": acc.derived_exit_code,
        "nodes": acc.nodes,
        "cancelled_by": user_name(acc.cancelled_by) if acc.cancelled_by is not None else None,
        "oom_steps": [s.step for s in acc.oom_steps()],
        "max_rss": acc.max_rss(),
        "elapsed": acc.elapsed,
        "time_limit": acc.time_limit,
    }
