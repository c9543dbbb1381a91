"""What a rank's output says about how it ended (pure: text in, facts out).

The forms are the real ones of torch, gloo, NCCL, CUDA and Slurm (fixtures with their sources are in
tests/fixtures/why/): a Python traceback, gloo's "Connection closed by peer [ADDR]:PORT", NCCL's
"Connection closed by remote peer HOST<PORT>" and "Got completion from peer ADDR<PORT> with error",
ProcessGroupNCCL's watchdog timeouts, "CUDA error: ...", "CUDA out of memory. Tried to allocate X",
and slurmstepd's "*** JOB N ON NODE CANCELLED AT T DUE TO TIME LIMIT ***".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# a frame line of a Python traceback; frames in these folders are libraries, not the user's code
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')
_LIBRARY = ("/site-packages/", "/dist-packages/", "/lib/python3", "/clusterdoc/")
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning)|[A-Za-z_][\w.]*Error\w*): ?(.*)$")

# a peer's connection lost: gloo (pair.cc), NCCL (socket.cc, net_ib), torch's TCPStore
_PEER = [
    re.compile(r"Connection closed by peer \[([0-9A-Fa-f.:]+)\]"),
    re.compile(r"(?:Read|Write) error \[([0-9A-Fa-f.:]+)\]"),
    re.compile(r"Connection reset by peer \[([0-9A-Fa-f.:]+)\]"),
    re.compile(r"Connection closed by remote peer ([\w.-]+)<\d+>"),
    re.compile(r"Call to recv from ([\w.:-]+)<\d+> failed"),
    re.compile(r"Got completion from peer ([\w.:-]+)<\d+> with (?:error|status)"),
]
_CUDA = re.compile(
    r"(CUDA error: [^\n]*|CUDA driver error: [^\n]*|cudaErrorLaunchFailure[^\n]*|"
    r"GPU has fallen off the bus[^\n]*|uncorrectable ECC error encountered[^\n]*)"
)
_OOM_SIZE = re.compile(r"Tried to allocate ([\d.]+ ?[KMGT]i?B)")
_WATCHDOG = re.compile(
    r"\[Rank (\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+)"
    r"[^)]*Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds"
)
_NCCL_WARN = re.compile(r"^(\S+?):\d+:\d+ \[\d+\] (?:[\w/.]+:\d+ )?NCCL WARN (.*)$", re.MULTILINE)
_SLURM_END = re.compile(
    r"\*\*\* (JOB|STEP) ([\d.]+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))?(?: \*\*\*|$)", re.MULTILINE
)
_SRUN_TASK = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (.*)$", re.MULTILINE)
# torch's "[rank3]:" (after a tool's own "[N] " or time stamp), clusterdoc's "[rank 3] ", srun --label's "3: "
_RANK_PREFIX = re.compile(r"^(?:\S{0,40} )?\[rank ?(\d+)\]:?\s?|^(\d+): ")


@dataclass
class Raised:
    """The exception a rank ended with: its type, message and where (the innermost frame of the user's code)."""

    type: str
    message: str
    file: str | None = None
    line: int | None = None
    func: str | None = None

    @property
    def where(self) -> str:
        if not self.file:
            return "?"
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}" + (f" in {self.func}" if self.func else "")


def last_traceback(text: str) -> Raised | None:
    """The last traceback in `text` (the one the rank died of), or None."""
    lines = text.splitlines()
    start = max(
        (i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")), default=None
    )
    if start is None:
        return None
    frames: list[tuple[str, int, str]] = []
    for line in lines[start + 1 :]:
        m = _FRAME.match(line)
        if m:
            frames.append((m.group(1), int(m.group(2)), m.group(3)))
            continue
        if line.startswith((" ", "\t")) or not line.strip():
            continue
        m = _EXC_LINE.match(line.strip())
        if m:
            own = [f for f in frames if not any(lib in f[0] for lib in _LIBRARY)]
            exc_type, message = m.group(1).rsplit(".", 1)[-1], m.group(2).strip()
            if not (own or frames):
                return Raised(exc_type, message)
            file, num, func = (own or frames)[-1]
            return Raised(exc_type, message, file, num, func)
        if line.startswith("During handling") or line.startswith("The above exception"):
            frames = []
    return None


def peers_lost(text: str) -> list[str]:
    """Addresses or host names of peers whose connection this output says was lost, in order, once each."""
    found: list[str] = []
    for pat in _PEER:
        for m in pat.finditer(text):
            if m.group(1) not in found:
                found.append(m.group(1))
    return found


# mpirun's remote sessions ending under it: ssh's own message (MPICH's Hydra launches through ssh), Open MPI's
_LAUNCHER_LOST = [
    re.compile(r"Connection to (\S+) closed by remote host"),
    re.compile(r"ssh: connect to host (\S+) port \d+: "),
    re.compile(r"ORTE has lost communication with a remote daemon\.(?:.|\n){0,400}?Remote daemon:[^\n]* on node (\S+)"),
]


def launcher_lost(text: str) -> list[str]:
    """Hosts or addresses whose connection mpirun lost (mpirun.err), in order, once each."""
    found: list[str] = []
    for pat in _LAUNCHER_LOST:
        for m in pat.finditer(text):
            if m.group(1).rstrip(".") not in found:
                found.append(m.group(1).rstrip("."))
    return found


def cuda_error(text: str) -> str | None:
    m = _CUDA.search(text)
    return m.group(1).strip() if m else None


def oom_size(text: str) -> str | None:
    """'2.00 GiB' from torch's "Tried to allocate 2.00 GiB", else None."""
    m = _OOM_SIZE.search(text)
    return m.group(1) if m else None


def is_oom(text: str) -> bool:
    return bool(re.search(r"CUDA out of memory|OutOfMemoryError|clusterdoc\.run: OUT OF MEMORY", text))


_WATCHDOG_AT = re.compile(
    r"\[(?:PG [^\]]*?)?Rank (\d+)\] Exception \(either an error or timeout\) detected by watchdog"
)


def watchdog_ranks(text: str) -> set[int]:
    """Every rank whose watchdog reported the timeout, in either of its lines."""
    return {t["rank"] for t in watchdog_timeouts(text)} | {int(m.group(1)) for m in _WATCHDOG_AT.finditer(text)}


def watchdog_timeouts(text: str) -> list[dict]:
    """ProcessGroupNCCL's "[Rank R] Watchdog caught collective operation timeout" lines, once per rank."""
    out: dict[int, dict] = {}
    for m in _WATCHDOG.finditer(text):
        r = int(m.group(1))
        out.setdefault(
            r,
            {
                "rank": r,
                "seq": int(m.group(2)),
                "op": m.group(3),
                "timeout_ms": int(m.group(4)),
                "ran_ms": int(m.group(5)),
            },
        )
    return [out[r] for r in sorted(out)]


def nccl_warnings(text: str) -> list[tuple[str, str]]:
    """(host, message) of each distinct `NCCL WARN` line."""
    seen: list[tuple[str, str]] = []
    for m in _NCCL_WARN.finditer(text):
        item = (m.group(1), m.group(2).strip())
        if item not in seen:
            seen.append(item)
    return seen


def slurm_ends(text: str) -> list[dict]:
    """slurmstepd's "*** JOB 12 ON node1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***" lines."""
    return [
        {
            "kind": m.group(1),
            "job": m.group(2),
            "node": m.group(3),
            "at": m.group(4),
            "due_to": (m.group(5) or "").strip() or None,
        }
        for m in _SLURM_END.finditer(text)
    ]


def srun_task_errors(text: str) -> list[dict]:
    """srun's "srun: error: node3: task 2: Exited with exit code 1" (or "Killed")."""
    return [{"node": m.group(1), "tasks": m.group(2), "what": m.group(3).strip()} for m in _SRUN_TASK.finditer(text)]


def split_by_rank(text: str) -> dict[int, str]:
    """Lines of a job's combined output by rank, from torch's "[rank3]:" or srun --label's "3: " prefixes."""
    out: dict[int, list[str]] = {}
    for line in text.splitlines():
        m = _RANK_PREFIX.match(line)
        if m:
            r = int(m.group(1) or m.group(2))
            out.setdefault(r, []).append(line[m.end() :])
    return {r: "\n".join(lines) + "\n" for r, lines in out.items()}
