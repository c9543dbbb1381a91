"""The causes `clusterdoc why` knows: one small function each, their order and retry rule in one table (CAUSES).

A rule's function takes the evidence and the causes found by the rules above it, and returns its own (each a
`verdict.Cause` with a time: the first in time that explains the rest wins, verdict.judge). `retry`: whether a
new attempt (elsewhere, or later) can succeed, for `submit --retries`. A new cause is one function and one
line in CAUSES; a new line form of a known cause is one entry in why/sigtable/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from clusterdoc.hang import early
from clusterdoc.why import candidates
from clusterdoc.why.evidence import Evidence, RankFacts
from clusterdoc.why.foreign import NCCL_TYPES
from clusterdoc.why.model import INF, Cause, _on, _ranks, _t, _witness, is_effect, vanished_nodes

Found = list[Cause]


def preflight(ev: Evidence, found: Found) -> Found:
    if not ev.preflight:
        return []
    return [
        Cause(
            "environment",
            "the preflight refused the allocation: no rank started",
            -INF,
            evidence=list(ev.preflight),
            next_step="fix what the preflight names (clusterdoc check "
            "on those nodes shows it again), or exclude the node",
        )
    ]


def _slurm_end(ev: Evidence) -> tuple[dict | None, str | None, str]:
    """The job's end line (over its steps'), the reason it gives (None: no end known), and the state."""
    sch = ev.scheduler or {}
    ends = sch.get("ends") or []
    jobs = [e for e in ends if e.get("kind", "JOB") == "JOB"] or ends
    due = next((e for e in jobs if e.get("due_to")), jobs[0] if jobs else None)
    state = sch.get("state") or ""
    reason = (due or {}).get("due_to") or {
        "TIMEOUT": "TIME LIMIT",
        "PREEMPTED": "PREEMPTION",
        "NODE_FAIL": "NODE FAILURE",
        "CANCELLED": "",
    }.get(state)
    if not (due or state):
        return None, None, state
    return due, reason, state


def _accounting(ev: Evidence) -> dict:
    """What sacct said of the job (jobs/sacct.facts), {} where it was not asked or keeps nothing."""
    return (ev.scheduler or {}).get("accounting") or {}


def _end_line(due: dict | None, state: str, ev: Evidence | None = None) -> str:
    if not due:
        return (_accounting(ev).get("line") if ev else None) or f"Slurm: {state}"
    return (
        f"slurmstepd: *** {due.get('kind', 'JOB')} {due['job']} ON {due['node']} CANCELLED AT {due['at']}"
        + (f" DUE TO {due['due_to']}" if due.get("due_to") else "")
        + " ***"
    )


def _stopped(ev: Evidence) -> list[int]:
    return [r.rank for r in ev.ranks if r.signalled or not r.recorded]


def slurm_node_failure(ev: Evidence, found: Found) -> Found:
    due, reason, state = _slurm_end(ev)
    if reason != "NODE FAILURE":
        return []
    # slurmstepd's "*** JOB 7 ON node1 CANCELLED ... DUE TO NODE FAILURE" is printed BY node1, alive: the node that
    # failed is another of the job's (Slurm's "Node failure on NODE" names it, read as its own line)
    printer = (due or {}).get("node")
    listed = _node_names((ev.scheduler or {}).get("nodes"))
    others = [n for n in listed if n != printer] if printer and len(listed) > 1 else listed
    node = others[0] if len(others) == 1 else None
    if not node:  # accounting names the job's nodes, not which of them failed
        some = ", ".join(others[:8]) + (", ..." if len(others) > 8 else "") if others else "?"
        by = " but the one that printed Slurm's line" if printer else ""
        return [
            Cause(
                "node",
                f"Slurm reports a node failure (one of the job's nodes: {some}{by})",
                _t((due or {}).get("time")) + 1.0,
                evidence=[_end_line(due, state, ev)],
                explains=_stopped(ev),
                next_step="find the node that failed (sinfo -R; scontrol show node NODE: State, Reason) and "
                "resubmit without it (--exclude)",
            )
        ]
    return [
        Cause(
            "node",
            f"Slurm reports a node failure ({node})",
            _t((due or {}).get("time")) + 1.0,  # slurmstepd's time has whole seconds: the same second is later
            nodes=[node],
            evidence=[_end_line(due, state, ev)],
            explains=_stopped(ev),
            next_step=f"resubmit without {node} (submit --retries does it)",
        )
    ]


def _node_names(nodelist) -> list[str]:
    """Slurm's NodeList ("node[1-2]") as names; [] when it is not one (None assigned, a malformed list)."""
    from clusterdoc.errors import UsageError
    from clusterdoc.hostfile import expand_hostlist

    if not isinstance(nodelist, str) or not nodelist or nodelist == "None assigned":
        return []
    try:
        return expand_hostlist(nodelist, "NodeList")[:4096]
    except (UsageError, ValueError):
        return []


def slurm_oom(ev: Evidence, found: Found) -> Found:
    """Slurm's own word that the job, or a step of it, ran out of memory (OUT_OF_MEMORY: the cgroup's OOM
    killer, counted by slurmstepd), from scontrol or accounting."""
    sch = ev.scheduler or {}
    acc = _accounting(ev)
    steps = [str(s) for s in acc.get("oom_steps") or []]
    if sch.get("state") != "OUT_OF_MEMORY" and not steps:
        return []
    if any(r.oom for r in ev.ranks) or any(s.get("category") == "oom" for s in ev.signs):
        return []  # the ranks' own lines say it, with the rank and node: the same finding, more precise
    where = f" in step {', '.join(steps[:4])}" if steps else ""
    rss = f"; largest MaxRSS of its steps {acc['max_rss']}" if acc.get("max_rss") else ""
    return [
        Cause(
            "oom",
            f"Slurm: the job ran out of memory (OUT_OF_MEMORY{where}){rss}",
            INF,  # no time in accounting: a rank's own OOM line, with its time, says more
            evidence=[acc.get("line") or f"Slurm: {sch.get('state')}"],
            explains=_stopped(ev),
            next_step="ask for more host memory (--mem, --mem-per-gpu) or use less per rank (DataLoader "
            "workers, batch size); sacct -j JOB -o JobID,MaxRSS,ReqMem shows what each step used",
        )
    ]


def slurm_limit(ev: Evidence, found: Found) -> Found:
    due, reason, state = _slurm_end(ev)
    if reason not in ("TIME LIMIT", "PREEMPTION", "JOB REQUEUE"):
        return []
    what = {"TIME LIMIT": "the time limit", "PREEMPTION": "preemption", "JOB REQUEUE": "a requeue (preemption)"}
    return [
        Cause(
            "scheduler",
            f"Slurm ended the job: {what[reason]}" + _limit_of(ev, reason),
            _t((due or {}).get("time")) + 1.0,
            nodes=[due["node"]] if due and due.get("node") else [],  # slurmstepd's "ON <node>" (no node at fault)
            evidence=[_end_line(due, state, ev)],
            explains=_stopped(ev),
            next_step="checkpoint on SIGUSR1 (clusterdoc asks Slurm for it ahead of the kill) and "
            "resubmit (submit --retries requeues it)"
            if reason == "TIME LIMIT"
            else "resubmit (submit --retries requeues it); checkpoint on SIGUSR1",
        )
    ]


def _limit_of(ev: Evidence, reason: str) -> str:
    acc = _accounting(ev)
    if reason != "TIME LIMIT" or not acc.get("time_limit") or acc["time_limit"] in ("UNLIMITED", "INVALID"):
        return ""
    return f" ({acc['time_limit']}, ran {acc['elapsed']})" if acc.get("elapsed") else f" ({acc['time_limit']})"


def silent_store(ev: Evidence, found: Found) -> Found:
    """The launcher stopped the job because rank 0's store stopped answering (launch/watchthread.py): rank 0 was
    stopped or frozen, or its node cut off; no hang report (the ranks report through that store)."""
    if early.STORE_SILENT not in ev.message or ev.hang:
        return []
    r0 = next((r for r in ev.ranks if r.rank == 0), None)
    what = "stopped answering: " + ev.message.split("stalled (", 1)[-1].split(")", 1)[0][:300] + ")"
    evidence = [f"the launcher: {ev.message[:300]}"]
    silent = silent_ranks(ev, [0], what, evidence, _t(r0.ended if r0 else None) - 2.0)
    if silent is not None:
        return silent
    return [
        Cause(
            "hang",
            "rank 0 stopped answering: " + ev.message.split("stalled (", 1)[-1].split(")", 1)[0][:300] + ")",
            _t(r0.ended if r0 else None) - 2.0,
            ranks=[0],
            evidence=[f"the launcher: {ev.message[:300]}"],
            explains=[r.rank for r in ev.ranks],
            next_step=f"look at rank 0{_on(r0) if r0 else ''}: a stopped process (SIGSTOP, a debugger), a frozen "
            "node or its network (clusterdoc check on it)",
        )
    ]


def slurm_cancelled(ev: Evidence, found: Found) -> Found:
    due, reason, state = _slurm_end(ev)
    if reason != "" or any(r.recorded and r.code not in (0, None) for r in ev.ranks):  # else: clusterdoc stopped it
        return []
    # clusterdoc cancelled a stalled job (--on-hang abort), or one whose rank 0 stopped answering with its node
    if any(c.category in ("hang", "node") for c in found):
        return []
    by = _accounting(ev).get("cancelled_by")
    return [
        Cause(
            "scheduler",
            f"the job was cancelled by {by}" if by else "the job was cancelled (scancel or clusterdoc cancel)",
            _t((due or {}).get("time")) + 1.0,
            evidence=[_end_line(due, state, ev)] + ([_accounting(ev)["line"]] if by and due else []),
            explains=_stopped(ev),
            next_step="nothing to fix: resubmit when wanted"
            + (
                "; if it was cancelled because it hung or failed, that came before the cancel (its output)"
                if by
                else ""
            ),
            # in a foreign log a cancel often follows the real failure (a hung job scancelled); accounting that
            # names who cancelled it makes it a fact (a failure in the log, earlier, still wins)
            weak=ev.foreign and not by,
        )
    ]


def _task_set(spec: str) -> set[int]:
    """srun's "0-57,59-63" as a set (bounded: at most 1<<16 tasks)."""
    out: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        if a.isdigit() and (not b or b.isdigit()):
            lo, hi = int(a), int(b or a)
            if hi - lo < 1 << 16 and len(out) < 1 << 16:
                out.update(range(lo, hi + 1))
    return out


def slurm_task_failure(ev: Evidence, found: Found) -> Found:
    """Slurm ended the step because a task failed ("CANCELLED ... DUE TO TASK FAILURE"): which task is the one srun
    does not list among those it terminated; how it failed is in that task's own output."""
    due, reason, state = _slurm_end(ev)
    if reason != "TASK FAILURE":
        return []
    stopped: set[int] = set()
    for t in (ev.scheduler or {}).get("tasks") or []:
        if t.get("what") in ("Terminated", "Killed"):
            stopped |= _task_set(t["tasks"])
    first = sorted(set(range(max(stopped) + 1)) - stopped) if stopped else []
    ranks = first if 0 < len(first) <= 4 else []
    return [
        Cause(
            "unknown",
            "Slurm ended the step because a task failed"
            + (f": {_ranks(ranks)}, the task{'s' if len(ranks) > 1 else ''} srun did not terminate" if ranks else ""),
            _t((due or {}).get("time")),
            ranks=ranks,
            evidence=[_end_line(due, state)],
            explains=[r.rank for r in ev.ranks],
            next_step="read that task's own output (srun --label, or its rank's log) for how it ended",
            weak=True,
            candidates=[
                "code: the task's own error (its output: a traceback, a segfault, an abort)",
                "oom: it ran out of memory (sacct -j JOB -o MaxRSS,State; the node's dmesg)",
                "node: its node failed (the node's kernel log, clusterdoc check on it)",
            ],
        )
    ]


def slurm_warned(ev: Evidence, found: Found) -> Found:
    sch = ev.scheduler or {}
    if not sch.get("warned") or any(c.category == "scheduler" for c in found):
        return []
    return [
        Cause(
            "scheduler",
            "Slurm warned of the time limit or preemption (SIGUSR1 ahead of the kill); the ranks stopped",
            sch["warned"],
            evidence=["the batch shell got SIGUSR1 and passed it to the ranks (slurm-warned in the job folder)"],
            explains=[r.rank for r in ev.ranks],
            next_step="resubmit; the script resumes from its checkpoint (submit --retries does it)",
        )
    ]


def _by_host(ev: Evidence) -> dict[str, list[RankFacts]]:
    out: dict[str, list[RankFacts]] = {}
    for r in ev.ranks:
        out.setdefault(r.host or "?", []).append(r)
    return out


def vanished_node(ev: Evidence, found: Found) -> Found:
    out = []
    by_host = _by_host(ev)
    for host, witnesses in vanished_nodes(ev).items():
        mine = by_host[host]
        addr = next((r.addr for r in mine if r.addr), host)
        out.append(
            Cause(
                "node",
                f"{host} failed: {_ranks([r.rank for r in mine])} there vanished without an exit record",
                _t(*[w.ended for w in witnesses]) - 1e-3,
                ranks=[r.rank for r in mine],
                nodes=[host],
                evidence=[f"{_ranks([r.rank for r in mine])} on {host} ({addr}): no exit record, no exit code"]
                + [
                    f"{_witness(w)} lost its connection to {host}'s address: {next(p for p in w.peers_lost)}"
                    for w in witnesses[:4]
                ]
                + [f"{host}: {p}" for p in ev.health.get(host, [])]
                + (
                    [f"{host} does not answer the probe ({ev.probed_through or 'ssh'})"]
                    if host in ev.unreachable
                    else []
                ),
                explains=[r.rank for r in ev.ranks if r.host != host and is_effect(r)] + [r.rank for r in mine],
                next_step=f"resubmit without {host} (submit --retries N does it: --exclude {host}); "
                f"check the node: clusterdoc check on {host}, its dmesg"
                + (" and slurmd log" if ev.backend == "slurm" else ""),
            )
        )
    return out


def gpu_health(ev: Evidence, found: Found) -> Found:
    out: Found = []
    by_host = _by_host(ev)
    for host, problems in ev.health.items():
        mine = by_host.get(host, [])
        if not mine or any(c.category == "node" and host in c.nodes for c in found + out):
            continue
        dying = [r for r in mine if r.code not in (0, None) or not r.recorded]
        out.append(
            Cause(
                "node",
                f"{host}'s GPU failed: {problems[0]}",
                _t(*[r.ended for r in dying]) - 1e-3 if dying else INF,
                ranks=[r.rank for r in dying],
                nodes=[host],
                evidence=[f"{host}: {p}" for p in problems]
                + [f"rank {r.rank} on {host}: {r.cuda}" for r in dying if r.cuda],
                explains=[r.rank for r in dying] + [r.rank for r in ev.ranks if is_effect(r)],
                next_step=f"resubmit without {host} (submit --retries N does it); drain it and reset the GPU "
                f"(clusterdoc check --slurm-health on {host})",
            )
        )
    return out


def unreachable_node(ev: Evidence, found: Found) -> Found:
    out: Found = []
    by_host = _by_host(ev)
    for host in ev.unreachable:
        mine = by_host.get(host, [])
        cut_off = _watcher_cut_off(ev, host, mine)
        if mine and not any(host in c.nodes for c in found + out) and (any(not r.recorded for r in mine) or cut_off):
            # a stall of its ranks only (rank 0's store gone silent, a rank that stopped answering): the node that
            # answers nothing after it is what stalled them (a frozen node, its link down), from the stall's time
            here = {r.rank for r in mine}
            stalls = [c for c in found if c.category == "hang" and c.ranks and set(c.ranks) <= here]
            if cut_off:
                out.append(
                    Cause(
                        "node",
                        f"{host} does not answer after the failure, and its {_ranks(sorted(here))} heard nothing "
                        f"from {_ranks(cut_off)}, whose nodes do answer: {host} was cut off",
                        _t((ev.hang or {}).get("started")) - 1e-3,
                        ranks=sorted(here),
                        nodes=[host],
                        evidence=[
                            f"{host}: the probe could not reach it ({ev.probed_through or 'ssh'}) where it reached "
                            f"the nodes of {_ranks(cut_off)}",
                            str((ev.hang or {}).get("headline") or "")[:300],
                        ],
                        explains=[r.rank for r in ev.ranks],
                        next_step=f"resubmit without {host} (submit --retries N); check its link and its kernel log",
                    )
                )
                continue
            out.append(
                Cause(
                    "node",
                    f"{host} does not answer after the failure"
                    + (f" ({_ranks(sorted(here))} there stopped answering first)" if stalls else ""),
                    min(c.time for c in stalls) - 1e-3 if stalls else INF,
                    ranks=[r.rank for r in mine],
                    nodes=[host],
                    evidence=[
                        f"{host}: the probe could not reach it ({ev.probed_through or 'ssh'}) where it reached others"
                    ]
                    + [c.evidence[0] for c in stalls if c.evidence][:2],
                    explains=[r.rank for r in mine] + [x for c in stalls for x in c.explains],
                    next_step=f"resubmit without {host} (submit --retries N)",
                )
            )
    return out


def _watcher_cut_off(ev: Evidence, host: str, mine: list[RankFacts]) -> list[int]:
    """The ranks the hang report says did not answer, when they are all elsewhere, on nodes the probe reached,
    and `host`'s ranks (the ones that waited, unreachable now) raised nothing: from inside `host`, the others went
    silent, and it is `host` that answers nothing: it was cut off (its link down, its ports closed). [] otherwise."""
    odd = sorted(set((ev.hang or {}).get("odd") or []))
    here = {r.rank for r in mine}
    hosts = {r.rank: r.host for r in ev.ranks}
    if not odd or here & set(odd) or any(r.raised or r.cuda for r in mine):
        return []
    if any(not hosts.get(r) or hosts[r] == host or hosts[r] in ev.unreachable for r in odd):
        return []
    return odd


def _failed(ev: Evidence) -> list[RankFacts]:
    return [
        r
        for r in ev.ranks
        if (r.code not in (0, None) or (r.code is None and not r.recorded)) and r.recorded and not is_effect(r)
    ]


def rank_oom(ev: Evidence, found: Found) -> Found:
    out = []
    if ev.foreign:  # a foreign log's ranks: their own lines say it (signature_causes)
        return []
    for r in _failed(ev):
        if not r.oom:
            continue
        raised = r.raised or {}
        where = f"{(raised.get('file') or '?').rsplit('/', 1)[-1]}:{raised.get('line')}" if raised else "?"
        exc = f"{raised.get('type')}: {raised.get('message')}" if raised else f"exit code {r.code}"
        size = f" ({r.oom_size})" if r.oom_size else ""
        out.append(
            Cause(
                "oom",
                f"rank {r.rank}{_on(r)} ran out of memory{size}",
                _t(r.ended),
                ranks=[r.rank],
                nodes=[r.host] if r.host else [],
                evidence=[f"rank {r.rank}: {exc} at {where}"],
                explains=[r.rank],
                next_step="lower the batch (submit --oom-retry batch-size), or "
                "shard more (FSDP/ZeRO), or activation checkpointing",
            )
        )
    return out


def _strong_signs(r: RankFacts) -> list[dict]:
    from clusterdoc.why import signatures

    return [s for s in r.signs if not signatures.get(s["sig"]).weak]


def rank_signature(ev: Evidence, found: Found) -> Found:
    """A clusterdoc job's rank whose own output names an environment, node, network or desync failure: that
    failure, not 'code' (its exception is how the failure reached Python)."""
    from clusterdoc.why import signatures

    out = []
    for r in [] if ev.foreign else _failed(ev):
        if r.oom:
            continue
        for s in _strong_signs(r)[:1]:
            sig = signatures.get(s["sig"])
            node = s.get("node") or (r.host if sig.category == "node" else None)
            out.append(
                Cause(
                    sig.category,
                    f"rank {r.rank}{_on(r)}: {sig.meaning}",
                    _t(r.ended),
                    ranks=[r.rank],
                    nodes=[node] if node else [],
                    evidence=[f"rank {r.rank}: {s['text']}"],
                    explains=[r.rank],
                    next_step=sig.next_step,
                )
            )
    return out


# torch.distributed's own errors about its connections (to a peer, to the store): never the code's bug by themselves
# (issue 43's campaign: a node cut off before the rendezvous, rank 0 gave up and closed its store, and rank 1's
# "DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed" was judged rank 1's code)
LINK_TYPES = ("DistNetworkError", "DistStoreError")


def rank_exception(ev: Evidence, found: Found) -> Found:
    out = []
    if ev.foreign:
        return []
    for r in _failed(ev):
        if r.oom or _strong_signs(r):
            continue
        raised = r.raised or {}
        where = f"{(raised.get('file') or '?').rsplit('/', 1)[-1]}:{raised.get('line')}" if raised else "?"
        exc = f"{raised.get('type')}: {raised.get('message')}" if raised else f"exit code {r.code}"
        if raised:
            fix = (
                f"a CUDA error: the code at {where} (rerun with CUDA_LAUNCH_BLOCKING=1) or the GPU "
                f"(clusterdoc check on {r.host or 'its node'}: XIDs, ECC)"
                if r.cuda
                else f"fix the code at {where} (clusterdoc logs JOB --rank {r.rank}); a retry would fail the same way"
            )
            func = f" in {raised.get('func')}" if raised.get("func") else ""
        else:
            fix, func = f"see rank {r.rank}'s log (clusterdoc logs JOB --rank {r.rank})", ""
        # an exit code without an exception on record (sys.exit, or clusterdoc.run's own "could not meet the other
        # ranks" when a peer never came): the code's failure only as a candidate (issue 43's campaign: a rank
        # SIGSTOPped before the rendezvous made rank 0 exit 1, and that was judged rank 0's code)
        if raised.get("type") in LINK_TYPES:  # torch.distributed lost its connection: a peer, the store or the link
            out.append(
                Cause(
                    "network",
                    f"rank {r.rank}{_on(r)} lost its connection: {exc.split(chr(10))[0]}",
                    _t(r.ended),
                    ranks=[r.rank],
                    evidence=[f"rank {r.rank}: {exc}" + (f" at {where}{func}" if raised else "")],
                    explains=[r.rank],
                    next_step="the first rank or node to go decides: their logs and exit records; clusterdoc check "
                    "on the job's nodes (a node cut off does not answer)",
                    weak=True,
                    candidates=[
                        f"a peer or the store's rank went away first, or the link of {r.host or 'its node'} dropped "
                        f"(rank {r.rank} raised {raised.get('type')})"
                    ],
                )
            )
            continue
        out.append(
            Cause(
                "code",
                f"rank {r.rank}{_on(r)} raised {exc.split(chr(10))[0]} at {where}"
                if raised
                else f"rank {r.rank}{_on(r)} exited with code {r.code}, no exception on record",
                _t(r.ended),
                ranks=[r.rank],
                nodes=[r.host] if r.host else [],
                evidence=[f"rank {r.rank}: {exc}" + (f" at {where}{func}" if raised else "")]
                + ([f"rank {r.rank}: {r.cuda}"] if r.cuda else []),
                explains=[r.rank],
                next_step=fix,
                # torch.distributed's own error (a peer or the store gone: "Failed to recv, got 0 bytes") is the
                # effect of another rank's failure, not this rank's code: a candidate (issue 43's campaign)
                weak=not raised or str(raised.get("type") or "").rsplit(".", 1)[-1] in NCCL_TYPES,
            )
        )
    return out


def never_joined(ev: Evidence, found: Found) -> Found:
    """The store's host timed out waiting for its clients ("K/N clients joined", torch's TCPStore) and exactly
    N-K ranks left nothing of their own (no exit record, no traceback, no failure line): those never joined the
    rendezvous (stopped, stuck in their imports), and the others' failures (rank 0's exit, its clients' lost
    store) are its effects. Only where the count matches; a node gone is vanished_node's to say."""
    hosts = [r for r in ev.ranks if r.rendezvous]
    if not hosts or ev.foreign:
        return []
    h = hosts[0]
    waited, joined, expected = (h.rendezvous or [0, 0, 0])[:3]
    silent = [r for r in ev.ranks if r is not h and not (r.recorded or r.raised or r.rendezvous or r.signs or r.oom)]
    if expected != ev.world or len(silent) != expected - joined or not silent:
        return []
    if set(vanished_nodes(ev)) & {r.host for r in silent}:
        return []
    who = _ranks([r.rank for r in silent])
    where = sorted({r.host for r in silent if r.host})
    return [
        Cause(
            "hang",
            f"{who}{' on ' + ', '.join(where) if where else ''} never joined the rendezvous: rank {h.rank} waited "
            f"{waited} s for it ({joined}/{expected} joined); the others' failures are its effects",
            # when the wait began, before every effect: the silent ranks' start, rank 0's end less its wait
            _t(*[r.started for r in silent], h.ended - waited if h.ended is not None else None),
            ranks=[r.rank for r in silent],
            nodes=where,
            evidence=[
                f"rank {h.rank}: Timed out after {waited} seconds waiting for clients. {joined}/{expected} "
                "clients joined"
            ]
            + [f"rank {r.rank}{_on(r)}: started, then nothing of its own (no exit record, no error)" for r in silent],
            explains=[r.rank for r in ev.ranks],
            next_step=f"look at {who}{' on ' + ', '.join(where) if where else ''}: a stopped or frozen process "
            "(SIGSTOP, a debugger, a stuck import or file system), or raise CLUSTERDOC_INIT_TIMEOUT if it was only "
            "slow to start",
        )
    ]


def killed_rank(ev: Evidence, found: Found) -> Found:
    """Killed by SIGKILL, not by the launcher, on a node whose other ranks are fine: the OOM killer or a user."""
    out: Found = []
    for r in ev.ranks:
        if r.code in (-9, 137) and not r.recorded and not any(r.rank in c.ranks for c in found + out):
            later = [x.ended for x in ev.ranks if x.recorded and is_effect(x)]
            out.append(
                Cause(
                    "node",
                    f"rank {r.rank}{_on(r)} was killed by SIGKILL (not by clusterdoc)",
                    _t(*later) - 1e-3,
                    ranks=[r.rank],
                    nodes=[r.host] if r.host else [],
                    evidence=[f"rank {r.rank}: killed by SIGKILL, no exit record"],
                    explains=[r.rank] + [x.rank for x in ev.ranks if is_effect(x) and x.rank != r.rank],
                    next_step=f"look for the kernel's OOM killer in dmesg on {r.host or 'its node'}",
                )
            )
    return out


def signature_causes(ev: Evidence, found: Found) -> Found:
    """A line of the log that says what failed (why/signatures.py): the first of each kind per rank."""
    from clusterdoc.why import signatures

    out: Found = []
    seen: dict[tuple, Cause | None] = {}
    everyone = [r.rank for r in ev.ranks]
    slurm = [c for c in found if c.rule.startswith("slurm")]
    for s in ev.signs:
        sig = signatures.get(s["sig"])
        if sig.category == "effect":
            continue
        # a weak line swallows no strong one of its category
        key = (sig.category, sig.weak, s.get("rank"), s.get("node") or s.get("host"))
        if key in seen:  # the same failure told again (NCCL per channel, torchrun's two lines): one cause
            same = seen[key]
            if same is not None and len(same.evidence) < 4:
                same.evidence.append(f"line {s['line'] + 1}: {s['text']}")
            if same is not None and not same.nodes and s.get("peer") and sig.category == "peer":
                same.nodes = [s["peer"]]  # NCCL's "Last error:" detail names the peer its first line did not
            continue
        seen[key] = None
        if any(c.category == sig.category and abs(c.time - s["line"]) <= 1.5 for c in slurm):
            continue  # Slurm's end line, read by its own rule
        rank = s.get("rank")
        node = s.get("node") or (s.get("host") if sig.category == "node" else None)
        place = node or s.get("host")
        who = f"rank {rank}" + (f" on {place}" if place else "") if rank is not None else place or ""
        peer = s.get("peer") if sig.category == "peer" and not node else None  # the address it lost: look there
        category = "unknown" if sig.category == "peer" else sig.category
        what = f"raised {s['text']}" if sig.name == "python-exception" else sig.meaning
        out.append(
            Cause(
                category,
                (f"{who}: {what}" if who else what) + (f" (lost {peer})" if peer else ""),
                float(s["line"]),
                ranks=[rank] if rank is not None and sig.name not in signatures.REPORTER_SIGNS else [],
                nodes=[node] if node else [peer] if peer else [],
                evidence=[f"line {s['line'] + 1}: {s['text']}"],
                explains=everyone,
                next_step=sig.next_step
                or "find the rank that failed first: its own log, or its node's (dmesg, clusterdoc check on it)",
                weak=sig.weak or sig.category == "peer",
                candidates=candidates.for_peer() if sig.category == "peer" else candidates.for_signature(sig),
                refused=sig.name in signatures.REFUSED_SIGNS,
            )
        )
        seen[key] = out[-1]
    return _fill_in(out)


def _fill_in(out: Found) -> Found:
    """A cause without a rank or node takes them from the next line of its kind (slurmstepd's oom-kill line, then
    srun's 'node107: task 0: Out Of Memory'): one cause, its evidence from both."""
    for i, c in enumerate(out):
        if c.ranks or c.nodes:
            continue
        nxt = None
        for d in out[i + 1 : i + 8]:  # in line order: the next few causes only
            if d.time - c.time > 5:
                break
            if d.category == c.category and d.time > c.time and (d.ranks or d.nodes) and d.weak == c.weak:
                nxt = d
                break
        if nxt is not None:
            c.ranks, c.nodes = list(nxt.ranks), list(nxt.nodes)
            c.evidence += nxt.evidence
            c.headline = nxt.headline
            nxt.rule = "merged"
    return [c for c in out if c.rule != "merged"]


def stall(ev: Evidence, found: Found) -> Found:
    """The hang report (a clusterdoc job) or the NCCL watchdog lines compared across ranks (a foreign log)."""
    h = ev.hang
    if not h:
        return []
    odd = h.get("odd") or []
    own = {r for c in found if c.category not in ("unknown",) and not c.weak for r in c.ranks}
    if h.get("watchdog") and h.get("thin"):
        return [
            Cause(
                "hang",
                h["headline"],
                _t(h.get("started")),
                ranks=odd,
                evidence=[h["headline"]],
                explains=[r.rank for r in ev.ranks],
                next_step="the log of the other ranks decides: a rank stuck or dead before the collective (hang) or "
                "one that never called it (desync: a collective under `if rank == 0`)",
                weak=True,
                candidates=h.get("candidates")
                or [
                    "hang: the other ranks were stuck or dead before this collective (their logs, the nodes' XIDs)",
                    "desync: the other ranks never called it (a collective or barrier only some ranks reach)",
                ],
            )
        ]
    if h.get("watchdog") and not odd:
        return [
            Cause(
                "hang",
                "a collective timed out on every rank in the log (NCCL watchdog)",
                _t(h.get("started")),
                evidence=[h["headline"]],
                explains=[r.rank for r in ev.ranks],
                next_step="find the rank missing from the log (its node: clusterdoc check for XIDs and lost GPUs); "
                "under clusterdoc submit the hang watch names it",
            )
        ]
    if not odd or h.get("gone") or set(odd) <= own:
        return []  # the report points at ranks that ended, or that said why themselves: their own causes say it
    if not h.get("watchdog") and set(odd) <= set(h.get("silent") or []):
        evidence = [h["headline"]] + [ln.strip() for ln in h.get("lines", []) if "<- differs" in ln][:4]
        silent = silent_ranks(ev, odd, "did not answer the hang watch (its heartbeat stopped)", evidence,
                              _t(h.get("started")))  # fmt: skip
        if silent is not None:
            return silent
    silent_only = not h.get("watchdog") and set(odd) <= set(h.get("silent") or [])  # their nodes answer: stuck
    cat = "desync" if not silent_only and (h.get("desync") or not (h.get("idle") or h.get("watchdog"))) else "hang"
    if silent_only:
        what = "a process stopped or stuck in native code (its node answers, it does not)"
    elif cat == "hang":
        what = (
            h["what"]
            if h.get("what")
            else "a data-loader stall"
            if h.get("loader")
            else "the others wait for them in a collective (a stall, a dead process or node)"
            if h.get("watchdog")
            else "a stall outside collectives (a loop, a lock, I/O)"
        )
    else:
        what = "the ranks called different collectives"
    return [
        Cause(
            cat,
            f"{what} on {_ranks(odd)}",
            _t(h.get("started")),
            ranks=odd,
            evidence=[h["headline"]] + [ln.strip() for ln in h.get("lines", []) if "<- differs" in ln][:4],
            explains=list(range(ev.world)),
            next_step="see the hang report (stacks/report.txt) and fix the call site it names; a retry would stall "
            "the same way"
            if not h.get("watchdog")
            else "read the log of " + _ranks(odd) + " around that time (its stack: py-spy dump, or clusterdoc stacks "
            "under clusterdoc submit)",
        )
    ]


def silent_ranks(ev: Evidence, odd: list[int], what: str, evidence: list[str], when: float) -> Found | None:
    """Ranks that stopped answering at all (their heartbeat, or rank 0's store): a process stopped or stuck in
    native code (hang), or a node cut off the network; only their node decides. It does not answer the probe
    where others do: that node. It answers: their process is stuck (None: the hang as the caller says it). Not
    asked, or the probe reached none: unknown, with both candidates (issue 43: a node cut off by nft was judged
    'a stall outside collectives, fix the call site')."""
    hosts = sorted({r.host for r in ev.ranks if r.rank in odd and r.host})
    # a job node that does not answer the probe where others do: cut off; the ranks silent to the hang watch are
    # there, or the watch is (rank 0 on a node cut off hears nothing from its healthy peers: mpirun, issue 43)
    cut = sorted({r.host for r in ev.ranks if r.host and r.host in ev.unreachable})
    if cut:
        mine = [r.rank for r in ev.ranks if r.host in cut]
        return [
            Cause(
                "node",
                f"{', '.join(cut)} does not answer after the failure, and {_ranks(odd)} {what}",
                when,
                ranks=mine,
                nodes=cut,
                evidence=evidence
                + [
                    f"{host}: the probe could not reach it ({ev.probed_through or 'ssh'}) where it reached others"
                    for host in cut
                ],
                explains=list(range(ev.world)),
                next_step=f"resubmit without {', '.join(cut)} (submit --retries N does it); check its link and "
                "whether it runs (clusterdoc check on it)",
            )
        ]
    if hosts and all(host in ev.answered for host in hosts):
        return None
    where = ", ".join(hosts) or "their nodes"
    return [
        Cause(
            "hang",
            f"{_ranks(odd)} {what}",
            when,
            ranks=odd,
            nodes=hosts,
            evidence=evidence,
            explains=list(range(ev.world)),
            next_step=f"whether {where} answers decides: clusterdoc check on {where} (a node that does not answer: "
            "resubmit without it); if it does, the rank's process was stuck (py-spy dump --native on it)",
            weak=True,
            candidates=[
                f"hang: {_ranks(odd)} stopped or stuck in native code (the node answers, the process does not)",
                f"node or network: {where} cut off (it does not answer: its link, its switch port)",
            ],
        )
    ]


def monitored_barrier(ev: Evidence, found: Found) -> Found:
    """gloo's monitoredBarrier on rank 0 names the rank(s) that did not arrive: stuck, or dead before it (its own
    failure, earlier in the log, wins by time)."""
    out: Found = []
    for b in ev.barrier[:1]:
        out.append(
            Cause(
                "hang",
                f"{_ranks(b['ranks'])} did not reach the barrier (gloo's monitoredBarrier on rank 0 names "
                f"{'them' if len(b['ranks']) > 1 else 'it'})",
                float(b["line"]),
                ranks=list(b["ranks"]),
                evidence=[f"line {b['line'] + 1}: {b['text']}"],
                explains=[r.rank for r in ev.ranks],
                next_step=f"read the log of {_ranks(b['ranks'])} (where it was: its stack, py-spy dump) and its "
                "node's (dmesg, clusterdoc check on it)",
            )
        )
    return out


def _early_exit(ev: Evidence) -> Cause | None:
    """A rank that exited 0 while the others were still in (or failed in) their next collective (hang/early.py):
    a desync, first in time; the peers' 'Connection closed by peer' is its effect, not the network's."""
    ends = [
        early.end_of(
            r.rank,
            {"issued": r.issued, "ops": r.ops, "collectives": {"last": r.last}},
            r.code if r.recorded else None,
            r.at,
        )
        for r in ev.ranks
    ]
    ee = early.find(ends, ev.world) or early.from_json((ev.hang or {}).get("early_exit"))
    if ee is None or any(not 0 <= r < len(ev.ranks) for r in ee.ranks + ee.waiting):
        return None
    by_rank = {r.rank: r for r in ev.ranks}
    left = [by_rank[r] for r in ee.ranks]
    site = next((x.at.get("site") for x in ev.ranks if x.rank in ee.waiting and x.at and x.at.get("site")), None)
    where = f" at {str(site[0]).rsplit('/', 1)[-1]}:{site[1]}" if site else ""
    return Cause(
        "desync",
        ee.sentence(),
        _t(*[r.ended for r in left]),
        ranks=ee.ranks,
        nodes=sorted({r.host for r in left if r.host}),
        evidence=[
            f"rank {r.rank}{_on(r)}: exited 0 (its exit record) after {n} calls on the {ee.group} group"
            for r, n in zip(left, ee.made)
        ]
        + [f"{_ranks(ee.waiting)}: in {ee.op} #{ee.seq}{where} when it left"],
        explains=list(range(ev.world)),
        next_step="give every rank the same number of batches (DistributedSampler(drop_last=True), or "
        "truncate to the shortest shard), or wrap the loop in torch.distributed.algorithms.Join; "
        "a retry would stop the same way",
    )


def early_exit(ev: Evidence, found: Found) -> Found:
    return [c for c in [_early_exit(ev)] if c is not None]


def lost_peers(ev: Evidence, found: Found) -> Found:
    if any(c.category in ("node",) for c in found):
        return []
    witnesses = [r for r in ev.ranks if r.peers_lost and r.recorded]
    if not witnesses or [c for c in found if c.category in ("code", "oom")]:
        return []
    peers = sorted({p for r in witnesses for p in r.peers_lost})
    # a peer that exited 0 before the witnesses failed closed its connections itself: "Connection closed by peer"
    # is then its early exit as much as a link (issue 43's Slurm campaign, seed 23377, job 53: rank 1 left after
    # its second call; ranks 0 and 2 failed in DDP's untracked bucket rebuild, and it was judged the network)
    last = max((w.ended or 0.0) for w in witnesses)
    left = [
        r
        for r in ev.ranks
        if r.code == 0 and r.recorded and (r.addr in peers or r.host in peers) and (r.ended or INF) <= last
    ]
    if any(c.category == "desync" for c in found):  # the early exit is already named: the network is its effect
        left = []
    early_candidates = [
        f"desync: rank {r.rank}{_on(r)} exited 0 before the others: it left its loop early (uneven data, an early "
        "return), and the others lost it"
        for r in left
    ]
    return [
        Cause(
            "network",
            f"connections between ranks dropped ({', '.join(peers[:4])})",
            _t(*[r.ended for r in witnesses]),
            ranks=[r.rank for r in witnesses],
            nodes=peers if ev.foreign and len(peers) == 1 else [],  # every witness lost the same address: look there
            evidence=[f"rank {r.rank}{_on(r)}: lost {', '.join(r.peers_lost)}" for r in witnesses],
            explains=[r.rank for r in witnesses],
            next_step="clusterdoc check --perf on the job's nodes (slow or flapping links), "
            "NCCL_SOCKET_IFNAME/NCCL_IB_HCA",
            weak=ev.foreign or bool(left),  # a foreign log cannot show that the peer was alive: that would decide
            candidates=early_candidates + candidates.for_peer(),
        )
    ]


@dataclass(frozen=True)
class Rule:
    name: str
    find: Callable[[Evidence, Found], Found]
    retry: bool | None  # a new attempt can succeed (node: elsewhere; scheduler: later); None: by its category


# The order is the order of evaluation (a rule sees what the rules above it found); which cause wins is decided
# by time, then by category (verdict._ORDER).
CAUSES: list[Rule] = [
    Rule("preflight", preflight, retry=False),
    Rule("silent-store", silent_store, retry=None),  # a hang: not retried; a node that does not answer: retried
    Rule("slurm-node-failure", slurm_node_failure, retry=True),
    Rule("slurm-oom", slurm_oom, retry=False),
    Rule("slurm-limit", slurm_limit, retry=True),
    Rule("slurm-cancelled", slurm_cancelled, retry=False),
    Rule("slurm-warned", slurm_warned, retry=True),
    Rule("slurm-task-failure", slurm_task_failure, retry=False),
    Rule("vanished-node", vanished_node, retry=True),
    Rule("gpu-health", gpu_health, retry=True),
    Rule("unreachable-node", unreachable_node, retry=True),
    Rule("rank-oom", rank_oom, retry=False),
    Rule("rank-signature", rank_signature, retry=None),
    Rule("never-joined", never_joined, retry=False),
    Rule("rank-exception", rank_exception, retry=False),
    Rule("signature", signature_causes, retry=None),
    Rule("killed-rank", killed_rank, retry=False),
    Rule("stall", stall, retry=None),
    Rule("monitored-barrier", monitored_barrier, retry=False),
    Rule("early-exit", early_exit, retry=False),
    Rule("lost-peers", lost_peers, retry=False),
]
