"""Who printed a line of a combined job log: the prefixes launchers and loggers put in front (pure, bounded).

Forms read (each from real logs, tests/fixtures/why/real/SOURCES.md), in any nesting, after a time stamp:

    [rank3]: ...              torch (torchrun, TORCH_... log prefixes); [rank 3] ... clusterdoc; [RANK 3] ...
    rank3]: ...               the same with its "[" lost (a paste cut at the line's start)
    [rank=3] ...  [] [rank=3] || ...   Determined's launch wrapper (after its container tag, empty or an id)
    rank3: ...  RANK 3: ...  [rank3/8] ...  (rank 3) ...  [3]: ...   a script's or a launcher's own rank tag
    node-12:3: ...            a host and a rank
    gpu-3:1234:1290 [3] ...   NCCL's host:pid:tid [device] (the host; the device is no rank)
    (RayTrainWorker pid=N, ip=10.0.0.2) ...   Ray's worker prefix (the host); (pid=N) ... on the local node (skipped)
    [proxy:0:1@node12] ...    MPICH's Hydra proxy (the host)
    [default0]:[rank12]: ...  torchrun --tee / --log-dir prefixes (local rank, then global rank)
    [default3]: ...           the same without the global rank: local rank 3 (the rank where the log is one node's)
    [rank: 3] ...  rank: 3 | ...   Lightning's rank_zero loggers; ParlAI/loguru-style "rank: N |"
    10.3.0.41: [rank22]: ...  the DeepSpeed launcher over pdsh (the host first)
    worker-1: ...             pdsh's host prefix alone
    [3] ...                   MPICH's / Intel MPI's mpiexec -l (-prepend-rank), OpenFOAM's parallel output
    [1,3]<stderr>: ...        Open MPI's mpirun --tag-output ([job,rank]<stream>:); [3]<stderr>: horovodrun's
    3: ...                    srun --label
    [2024-03-18 17:38:50,208] 2024-03-18T17:38:50.1Z  time stamps (skipped), and horovodrun's
    Fri Oct 23 17:16:00 2020[0]<stderr>:              (--timestamp-output: the date glued to the rank tag)
    > ...  > > ...            a quoted paste (a reply's "> " before each line; skipped)

Every token is matched anchored with bounded repetition, at most MAX_TOKENS of them: the cost of a line is
bounded whatever its length. A rank has at most 7 digits: a longer number is not a rank (a 5,000-digit
"rank" prefix is just text).
"""

from __future__ import annotations

import re

MAX_TOKENS = 5
MAX_RANK = 9_999_999

_TIME = re.compile(
    r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]?:?\s{1,4}"
    r"|\[?\d\d:\d\d(?::\d\d)?(?:[.,]\d{1,9})?\]?\s{1,4}"
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\s{1,4}"
    r"|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}(?=\[)"  # horovodrun's "Fri Oct 23 17:16:00 2020[0]"
)
_RANK_TOKENS = [
    # [rank3]: [rank 3] [RANK 3] [rank: 3] [rank3/8] (rank 3) (a world size after the rank)
    re.compile(r"[\[(](?:rank|RANK|Rank):? ?(\d{1,7})(?:/\d{1,7})?[\])]:?\s?"),
    re.compile(r"(?:\[[0-9a-f]{0,12}\] )?\[rank=(\d{1,7})\](?: \|\|)?\s?"),  # Determined: [] [rank=3] || ...
    re.compile(r"rank(\d{1,7})\]: (?=\S)"),  # [rank3]: with its "[" cut off (a paste; the line's start only)
    re.compile(r"(?:rank|RANK|Rank): {0,2}(\d{1,7}) \|\s?"),  # rank: 3 | ... (ParlAI pads: "rank:  3 |")
    re.compile(r"\[\d{1,7},(\d{1,7})\]<(?:stdout|stderr)>:\s?"),  # Open MPI --tag-output
    re.compile(r"\[(\d{1,7})\]<(?:stdout|stderr)>:\s?"),  # horovodrun's own (gloo) launcher
    re.compile(r"(?:rank|RANK|Rank) ?(\d{1,7})(?:/\d{1,7})?: (?=\S)"),  # rank3: RANK 3: Rank 3/8: (a script's print)
    # [3]: (a launcher's rank tag; "[80746] [rank0]" is a pid, no colon; torchrun's table's "[0]:" ends its line)
    re.compile(r"\[(\d{1,7})\]: (?=\S)"),
    # [3] ... (MPICH's and Intel MPI's mpiexec -l / -prepend-rank, OpenFOAM's parallel output, ARMCI): not before
    # "NCCL" (a device index where the host was cut) nor a number ("[1] 12345": a shell's job and pid)
    re.compile(r"\[(\d{1,7})\] {1,4}(?!NCCL |\d|\[)(?=\S)"),
]
# Ray's worker prefix on the local node, no ip: "(pid=329) " (Ray 1.x), "(RolloutWorker pid=329) " (session 29:
# ray#15388's traceback under it was read as no failure): no rank, no host, skipped as a time stamp is
_RAY_LOCAL = re.compile(r"\((?:[\w.:]{1,64} )?pid=\d{1,10}\)\s{1,4}")
# a quoted paste (a reply in an issue thread, an e-mail): "> " before every line, nested "> > " (round 9). Only ">"
# then a space or the end: a prompt's ">>>" or a shell's "$>" stays text
_QUOTE = re.compile(r"(?:>(?: |$)){1,4}")
_LOCAL = re.compile(r"\[default(\d{1,4})\]:\s?|\[\d{1,9}\] (?=\[)")  # torchrun's local rank; a tool's line number
_SRUN = re.compile(r"\s{0,6}(\d{1,7}): ")  # srun --label
# pdsh's "host: " (DeepSpeed's launcher): a name with a dot or a dash or a letter, never a bare number
_HOST = re.compile(r"([A-Za-z0-9][\w.-]{0,62}): |([A-Za-z0-9][\w.-]{0,62}) \[(?:stdout|stderr)\] ")
# the host in other launchers' forms: NCCL's "host:pid:tid [dev] " (the device is no rank), Ray's "(Actor pid=N,
# ip=ADDR) ", a host and a rank "node-12:3: " (a name without a dot: "file.c:12: " is a compiler's)
_HOST_FORMS = [
    re.compile(r"([A-Za-z0-9][\w.-]{0,62}):\d{1,10}:\d{1,10} \[\d{1,4}\] "),
    re.compile(r"\((?:[\w.:]{1,64} )?pid=\d{1,10}, ip=([\w.:-]{1,63})\) "),
    re.compile(r"\[proxy:[\d:]{1,20}@([\w.-]{1,63})\] "),  # MPICH's (and Intel MPI's) Hydra proxy of a node
]
_HOST_RANK = re.compile(r"((?:\d{1,3}\.){3}\d{1,3}|[A-Za-z][\w-]{0,62}):(\d{1,3}): ")  # "node1:29500: " is a port
_HOST_LIKE = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}|[A-Za-z][\w-]{0,30}(?:[.-][\w-]{1,30}){0,6}")
_NOT_HOSTS = frozenset(
    ("Traceback", "RuntimeError", "Error", "WARNING", "INFO", "ERROR", "DEBUG", "srun", "salloc", "sbatch",
     "slurmstepd", "error", "warning", "exitcode", "rank", "host", "time", "traceback", "error_file", "Epoch",
     "Note", "Hint", "note", "Exception", "what", "NCCL", "Warning", "CRITICAL", "FATAL", "local_rank",
     "nvidia-container-cli", "nvidia-smi")
)  # fmt: skip


def split(line: str) -> tuple[int | None, str | None, str]:
    """(rank, host, the rest) of one line; rank and host None where the line does not say."""
    rank, _, host, rest = split_local(line)
    return rank, host, rest


def split_local(line: str) -> tuple[int | None, int | None, str | None, str]:
    """(rank, local rank, host, the rest): the local rank from torchrun's `[defaultN]:` (--tee / --log-dir), which
    is the rank only on one node (the global rank is group_rank * nproc_per_node + N, and the line does not say
    the group rank: a `[rankM]:` after it does)."""
    m = _QUOTE.match(line)
    pos, rank, host, local = (m.end() if m else 0), None, None, None
    for _ in range(MAX_TOKENS):
        m = _TIME.match(line, pos) or _RAY_LOCAL.match(line, pos)
        if m:
            pos = m.end()
            continue
        m = _LOCAL.match(line, pos)
        if m:
            local = int(m.group(1)) if m.group(1) and local is None else local
            pos = m.end()
            continue
        for pat in _RANK_TOKENS:
            m = pat.match(line, pos)
            if m:
                rank = int(m.group(1))
                pos = m.end()
                break
        else:
            if rank is None and host is None:
                m = _SRUN.match(line, pos)
                if m:
                    rank, pos = int(m.group(1)), m.end()
                    continue
                m = _HOST_RANK.match(line, pos)
                if m and is_host(m.group(1)):
                    host, rank, pos = m.group(1), int(m.group(2)), m.end()
                    continue
                m = next((x for x in (p.match(line, pos) for p in _HOST_FORMS) if x), None)
                if m:
                    host, pos = m.group(1), m.end()
                    continue
                m = _HOST.match(line, pos)
                if m and is_host(m.group(1) or m.group(2)):
                    host, pos = (m.group(1) or m.group(2)).removeprefix("slurmstepd-"), m.end()
                    continue
            break
    return rank, local, host, line[pos:]


def is_host(name: str) -> bool:
    """pdsh's prefix names a host: an address, or a name like a host's (not a word a log line starts with)."""
    # not a host: a word a log line starts with, a file, HDF5's error stack's head ("HDF5-DIAG: Error detected in")
    words = ("Error", "Exception", "Warning", ".py", ".sh", ".cpp", ".cc", ".h", ".cu", "-DIAG")
    if name in _NOT_HOSTS or name.endswith(words):
        return False
    if not _HOST_LIKE.fullmatch(name):
        return False
    return "." in name or "-" in name or any(c.isdigit() for c in name)
