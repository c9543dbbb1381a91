"""`clusterdoc why` on a Slurm job clusterdoc did not start: its output files, read for what torch, NCCL, CUDA
and Slurm print (less depth than a clusterdoc job: no exit records, no start records, no hang report).

Times are unknown in such logs; the order of lines stands for them (what is printed first happened first).
"""

from __future__ import annotations

from dataclasses import asdict

from clusterdoc.why import logs
from clusterdoc.why.evidence import Evidence, RankFacts


def evidence_from_output(text: str, job: str, state: str = "FAILED", scontrol: dict | None = None) -> Evidence:
    by_rank = logs.split_by_rank(text) or {0: text}  # no rank prefixes: one process's output
    lines = text.splitlines()

    def first_line(needle: str) -> float | None:
        return next((float(i) for i, line in enumerate(lines) if needle and needle in line), None)

    tasks = logs.srun_task_errors(text)
    ranks: list[RankFacts] = []
    for r in sorted(by_rank):
        own = by_rank[r]
        raised = logs.last_traceback(own)
        f = RankFacts(
            rank=r,
            raised=asdict(raised) if raised else None,
            peers_lost=logs.peers_lost(own),
            cuda=logs.cuda_error(own),
            oom=logs.is_oom(own),
            oom_size=logs.oom_size(own),
        )
        if raised:
            f.recorded, f.code = True, 1
            f.ended = first_line(f"{raised.type}: {raised.message}"[:60]) or first_line(raised.type)
        elif f.peers_lost:
            f.recorded, f.code = True, 1
            f.ended = first_line(f.peers_lost[0])
        ranks.append(f)
    watchdog = logs.watchdog_timeouts(text)
    hang = None
    if watchdog:
        timed = logs.watchdog_ranks(text)
        seen = set(by_rank) | timed
        w = watchdog[0]
        silent = sorted(seen - timed)
        missing = sorted(set(range(max(seen) + 1)) - seen)
        hang = {
            "headline": f"NCCL watchdog: {w['op']} SeqNum={w['seq']} timed out after {w['ran_ms'] // 1000} s "
            f"(timeout {w['timeout_ms'] // 1000} s) on ranks {', '.join(map(str, sorted(timed)))}"
            + (
                f"; ranks {', '.join(map(str, silent))} did not time out: the others wait for them"
                if silent
                else "; every rank in the log timed out: the rank they wait for is not in it"
                + (f" (ranks {', '.join(map(str, missing))} are missing)" if missing else "")
                + " (a dead process or node: look for its log, and at the nodes' XIDs with clusterdoc check)"
            ),
            "odd": silent,
            "watchdog": True,
            "gone": False,
            "idle": False,
            "loader": False,
            "lines": [],
            "started": first_line("Watchdog caught collective operation timeout"),
        }
    ends = logs.slurm_ends(text)
    for e in ends:
        e["time"] = first_line(f"CANCELLED AT {e['at']}")
    info = scontrol or {}
    ev = Evidence(
        job=job,
        backend="slurm (not started by clusterdoc)",
        world=len(ranks),
        state=state,
        ranks=ranks,
        hang=hang,
        scheduler={
            "state": info.get("JobState"),
            "reason": info.get("Reason"),
            "nodes": info.get("NodeList"),
            "ends": ends,
            "tasks": tasks,
        },
    )
    warns = logs.nccl_warnings(text)
    if warns:
        ev.message = "; ".join(f"{h}: NCCL WARN {m}" for h, m in warns[:3])
    return ev
