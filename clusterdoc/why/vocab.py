"""The fallback of `clusterdoc why --log` where no signature and no exception rule decides: the log's failure lines
read as an engineer reads them (pure: lines in, a decision out).

A line that looks like a failure (ERROR, error:, FATAL, failed, killed, timed out, slurmstepd, srun: error, ...)
is mapped to the families its words belong to (FAMILIES: one vocabulary per category, specific words only; a
lone ambiguous word such as "timeout", or a subsystem's name such as NET/IB on a benign "NCCL WARN ... port
active", belongs to none). `decide` takes those lines in the log's order: where
they all point to one family, it is the cause, its first line the evidence and its prefix the culprit; where they
point to several, it is "unknown" with each family as a candidate and its first line (what would decide is which
happened first, in the other ranks' and nodes' logs); a timeout waiting (the hang family) beside another family
is that one's effect. Effects (watchdog timeouts, a peer that closed the
connection, the launcher's ChildFailedError, SIGTERM sent to the others) are no family: they never decide.
"""

from __future__ import annotations

import re

# a line that reports a failure (its own words, not a word inside an identifier)
MARKERS = re.compile(
    r"ERROR|\bError\b|error:|\berror\b|FATAL|Fatal|\bfailed\b|\bFailed\b|\bkilled\b|\bKilled\b|slurmstepd|"
    r"srun: error|\b[Tt]imed out\b|Aborted|\bSIG[A-Z]{3,4}\b|(?:Error|Exception): "
)
# category -> the words that name it (case as printed). Specific words only: each one names its family alone.
FAMILIES: dict[str, tuple[str, ...]] = {
    "oom": ("out of memory", "Out of memory", "OUT OF MEMORY", "OutOfMemory", "oom-kill", "oom_kill",
            "OOM Killed", "OOMKilled", "Cannot allocate memory", "memory cgroup", "CUBLAS_STATUS_ALLOC_FAILED",
            "std::bad_alloc", "Out Of Memory", "Exceeded job memory limit", "exceeded memory limit"),
    "node": ("Xid", "ECC error", "uncorrectable ECC", "ECC_UNCORRECTABLE", "fallen off the bus", "GPU is lost",
             "GPU lost", "NODE_FAIL", "DUE TO NODE FAILURE", "hardware error", "Hardware Error",
             "DevicesUnavailable", "devices unavailable", "is/are busy or unavailable"),
    "network": ("ibv_", "Connection reset by peer", "No route to host",
                "Network is unreachable", "Host is unreachable", "Could not find NET", "completion with error",
                "UCX ERROR", "connectFullMesh", "Connection timed out", "Software caused connection abort",
                "socketStartConnect"),
    "environment": ("undefined symbol", "No module named", "version mismatch", "GLIBC_", "driver version",
                    "cannot open shared object file", "command not found", "not found on PATH",
                    "execve(): ", "Permission denied (publickey", "Host key verification failed"),
    "scheduler": ("DUE TO TIME LIMIT", "DUE TO PREEMPTION", "PREEMPTED", "QOSMax", "QOSMin",
                  "accounting/QOS policy", "Invalid generic resource", "can not be satisfied",
                  "Batch job submission failed", "Job submit/allocate failed", "Invalid partition",
                  "Invalid account"),
    "hang": ("Watchdog caught collective operation timeout", "store based barrier", "monitoredBarrier"),
}  # fmt: skip
# what follows a failure elsewhere: a line with one of these is an effect, whatever else it says
EFFECT_WORDS = ("Connection closed by", "ChildFailedError", "SIGTERM", "Sending process", "remote process exiting",
                "Terminating", "terminated by signal 15", "Sent SIGKILL", "Caught SIGTERM")  # fmt: skip
_WORD_FAMILY = {w: cat for cat, words in FAMILIES.items() for w in words}
_VOCAB = re.compile("|".join(re.escape(w) for w in sorted(_WORD_FAMILY, key=len, reverse=True)))
WORDS = tuple(_WORD_FAMILY)  # for logread's prefilter
MAX_LINES = 256  # failure lines kept per log (the first ones: the cause is early, effects repeat)
FAMILY_HEAD = {
    "oom": "the log's failure lines speak of memory running out",
    "node": "the log's failure lines speak of a GPU or node's hardware",
    "network": "the log's failure lines speak of the network between nodes",
    "environment": "the log's failure lines speak of the software environment (a library, a module, a command)",
    "scheduler": "the log's failure lines speak of the scheduler (a limit, a policy, a resource request)",
    "hang": "the log's failure lines speak of a collective or barrier that timed out waiting",
}


def any_word(text: str) -> bool:
    """Whether a text (a line, or several) holds any family's word."""
    return _VOCAB.search(text) is not None


def families(line: str) -> list[str]:
    """The families a failure line names, in the order its words come ([] for no failure line, or an effect)."""
    first = _VOCAB.search(line)  # the rarer test first: most lines of a big log hold no family's word
    if first is None or not MARKERS.search(line) or any(w in line for w in EFFECT_WORDS):
        return []
    out: list[str] = []
    for m in _VOCAB.finditer(line, first.start()):
        cat = _WORD_FAMILY[m.group(0)]
        if cat not in out:
            out.append(cat)
    return out


def decide(lines: list[dict]) -> dict | None:
    """`lines`: the log's failure lines in order, each {line, rank, host, text, families}. One family across them:
    {category, line: the first of it}; several: {category: None, candidates: {family: its first line}}; None
    without any."""
    first: dict[str, dict] = {}
    for e in lines:
        for cat in e["families"]:
            first.setdefault(cat, e)
    if not first:
        return None
    if len(first) > 1:  # a collective or barrier that timed out waits for the failure another line names
        first.pop("hang", None)
    if len(first) == 1:
        ((cat, e),) = first.items()
        return {"category": cat, "line": e}
    return {"category": None, "candidates": first}
