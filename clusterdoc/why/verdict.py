"""Why an attempt ended: one cause, its evidence, the next step, and what was ruled out (pure: Evidence in).

Every failure the evidence shows is a candidate cause with a time: a rank's own exception, an out-of-memory,
a node that vanished (its ranks gone without an exit record while peers lost the connection to ITS address),
a node the probe found broken (XID, ECC, lost GPU) after the failure, a desync or stall from the hang report,
the scheduler's end (time limit, preemption, node failure, cancel), the preflight's refusal. Ranks that failed
only because a peer went away (gloo's "Connection closed by peer [ADDR]", NCCL's "remote peer"), or that the
launcher stopped (a signal), are effects, never causes. The first cause in time that explains the rest wins;
the others are listed as ruled out, with why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from clusterdoc.why import disk
from clusterdoc.why.evidence import Evidence, RankFacts

INF = float("inf")
RETRYABLE = ("node", "scheduler")  # a new attempt elsewhere (or later) can succeed; the code would fail again


@dataclass
class Cause:
    category: str  # code | oom | desync | hang | node | network | scheduler | environment | unknown
    headline: str
    time: float = INF
    ranks: list[int] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    next_step: str = ""
    explains: list[int] = field(default_factory=list)  # ranks whose failure this cause accounts for
    retry: bool = False  # a retry may succeed (node: on other nodes; scheduler: time limit, preemption)


@dataclass
class Verdict:
    ok: bool
    state: str
    cause: Cause | None
    ruled_out: list[str] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        if self.cause is not None and self.cause.time == INF:
            d["cause"]["time"] = None
        return d


def _ranks(ranks) -> str:
    rs = sorted(set(ranks))
    return ("ranks " if len(rs) > 1 else "rank ") + ", ".join(map(str, rs))


def _on(r: RankFacts) -> str:
    return f" on {r.host}" if r.host else ""


def _t(*values) -> float:
    vals = [v for v in values if isinstance(v, (int, float))]
    return min(vals) if vals else INF


def is_effect(r: RankFacts) -> bool:
    """Failed because something else did: a peer's connection dropped, or it was stopped by a signal."""
    return bool(r.peers_lost) or (r.signalled and not r.recorded) or r.code in (130, 143)


def _addr_owner(ev: Evidence) -> dict[str, str]:
    """address or host name -> host, for addresses that belong to one host only."""
    owners: dict[str, set[str]] = {}
    for r in ev.ranks:
        if r.host:
            for key in filter(None, (r.addr, r.host)):
                owners.setdefault(key, set()).add(r.host)
    return {a: next(iter(h)) for a, h in owners.items() if len(h) == 1}


def vanished_nodes(ev: Evidence) -> dict[str, list[RankFacts]]:
    """Hosts whose ranks all ended without an exit record (not cleanly stopped) while a rank elsewhere lost its
    connection to that host's address: the node died, or its processes were killed."""
    owner = _addr_owner(ev)
    blamed: dict[str, list[RankFacts]] = {}
    for r in ev.ranks:
        for peer in r.peers_lost:
            host = owner.get(peer)
            if host and host != r.host:
                blamed.setdefault(host, []).append(r)
    out = {}
    for addr in ev.launcher_lost:  # mpirun's own connection to the node (its ssh session) dropped
        host = owner.get(addr)
        if host:
            blamed.setdefault(host, []).append(RankFacts(rank=-1, peers_lost=[addr]))
    for host, witnesses in blamed.items():
        mine = [r for r in ev.ranks if r.host == host]
        if mine and all(not r.recorded and r.code in (None, -9, 137) for r in mine):
            out[host] = witnesses
    return out


def lost_node_note(ev: Evidence) -> tuple[list[int], str] | None:
    """The ranks of the first node that vanished, and one line naming it: what the launcher's outcome
    says instead of blaming the healthy ranks that noticed (they got 'Connection closed by peer')."""
    found = vanished_nodes(ev)
    if not found:
        return None
    host, witnesses = min(found.items(), key=lambda kv: _t(*[w.ended for w in kv[1]]))
    mine = [r.rank for r in ev.ranks if r.host == host]
    who = _ranks(sorted({w.rank for w in witnesses if w.rank >= 0})) if any(w.rank >= 0 for w in witnesses) else ""
    who = " and ".join(filter(None, [who, "mpirun" if any(w.rank < 0 for w in witnesses) else ""]))
    return mine, (
        f"{host} failed: {_ranks(mine)} there ended without an exit record while "
        f"{who} lost the connection to its address "
        f"({witnesses[0].peers_lost[0]}); the others are effects ('clusterdoc why' for the evidence)"
    )


def _witness(w: RankFacts) -> str:
    return "mpirun (its ssh session)" if w.rank < 0 else f"rank {w.rank}{_on(w)}"


def candidates(ev: Evidence) -> list[Cause]:
    out: list[Cause] = []
    failed = [r for r in ev.ranks if r.code not in (0, None) or (r.code is None and not r.recorded)]
    by_host: dict[str, list[RankFacts]] = {}
    for r in ev.ranks:
        by_host.setdefault(r.host or "?", []).append(r)

    if ev.preflight:
        out.append(
            Cause(
                "environment",
                "the preflight refused the allocation: no rank started",
                -INF,
                evidence=list(ev.preflight),
                next_step="fix what the preflight names (clusterdoc check "
                "on those nodes shows it again), or exclude the node",
            )
        )

    sch = ev.scheduler or {}
    ends = sch.get("ends") or []
    jobs = [e for e in ends if e.get("kind", "JOB") == "JOB"] or ends  # the job's line over its steps'
    due = next((e for e in jobs if e.get("due_to")), jobs[0] if jobs else None)
    state = sch.get("state") or ""
    reason = (due or {}).get("due_to") or {
        "TIMEOUT": "TIME LIMIT",
        "PREEMPTED": "PREEMPTION",
        "NODE_FAIL": "NODE FAILURE",
        "CANCELLED": "",
    }.get(state)
    if reason is not None and (due or state):
        when = _t((due or {}).get("time")) + 1.0  # slurmstepd's time has whole seconds: the same second is later
        line = (
            (
                f"slurmstepd: *** {due.get('kind', 'JOB')} {due['job']} ON {due['node']} CANCELLED AT {due['at']}"
                + (f" DUE TO {due['due_to']}" if due.get("due_to") else "")
                + " ***"
            )
            if due
            else f"Slurm: {state}"
        )
        signalled = [r.rank for r in ev.ranks if r.signalled or not r.recorded]
        if reason == "NODE FAILURE":
            node = (due or {}).get("node") or sch.get("nodes") or "?"
            out.append(
                Cause(
                    "node",
                    f"Slurm reports a node failure ({node})",
                    when,
                    nodes=[node],
                    evidence=[line],
                    explains=signalled,
                    retry=True,
                    next_step=f"resubmit without {node} (submit --retries does it)",
                )
            )
        elif reason in ("TIME LIMIT", "PREEMPTION"):
            what = "the time limit" if reason == "TIME LIMIT" else "preemption"
            out.append(
                Cause(
                    "scheduler",
                    f"Slurm ended the job: {what}",
                    when,
                    evidence=[line],
                    explains=signalled,
                    retry=True,
                    next_step="checkpoint on SIGUSR1 (clusterdoc asks Slurm for it ahead of the kill) and "
                    "resubmit (submit --retries requeues it)"
                    if reason == "TIME LIMIT"
                    else "resubmit (submit --retries requeues it); checkpoint on SIGUSR1",
                )
            )
        elif not any(r.recorded and r.code not in (0, None) for r in ev.ranks):  # else: clusterdoc stopped it
            out.append(
                Cause(
                    "scheduler",
                    "the job was cancelled (scancel or clusterdoc cancel)",
                    when,
                    evidence=[line],
                    explains=signalled,
                    next_step="nothing to fix: resubmit when wanted",
                )
            )

    if sch.get("warned") and not any(c.category == "scheduler" for c in out):
        out.append(
            Cause(
                "scheduler",
                "Slurm warned of the time limit or preemption (SIGUSR1 ahead of the kill); the ranks stopped",
                sch["warned"],
                evidence=["the batch shell got SIGUSR1 and passed it to the ranks (slurm-warned in the job folder)"],
                explains=[r.rank for r in ev.ranks],
                retry=True,
                next_step="resubmit; the script resumes from its checkpoint (submit --retries does it)",
            )
        )

    for host, witnesses in vanished_nodes(ev).items():
        mine = by_host[host]
        addr = next((r.addr for r in mine if r.addr), host)
        when = _t(*[w.ended for w in witnesses]) - 1e-3
        out.append(
            Cause(
                "node",
                f"{host} failed: {_ranks([r.rank for r in mine])} there vanished without an exit record",
                when,
                ranks=[r.rank for r in mine],
                nodes=[host],
                evidence=[f"{_ranks([r.rank for r in mine])} on {host} ({addr}): no exit record, no exit code"]
                + [
                    f"{_witness(w)} lost its connection to {host}'s address: {next(p for p in w.peers_lost)}"
                    for w in witnesses[:4]
                ]
                + [f"{host}: {p}" for p in ev.health.get(host, [])]
                + ([f"{host} does not answer the probe (ssh)"] if host in ev.unreachable else []),
                explains=[r.rank for r in ev.ranks if r.host != host and is_effect(r)] + [r.rank for r in mine],
                retry=True,
                next_step=f"resubmit without {host} (submit --retries N does it: --exclude {host}); "
                f"check the node: clusterdoc check on {host}, its dmesg"
                + (" and slurmd log" if ev.backend == "slurm" else ""),
            )
        )

    for host, problems in ev.health.items():
        mine = by_host.get(host, [])
        if not mine or any(c.category == "node" and host in c.nodes for c in out):
            continue
        dying = [r for r in mine if r.code not in (0, None) or not r.recorded]
        when = _t(*[r.ended for r in dying]) - 1e-3 if dying else INF
        out.append(
            Cause(
                "node",
                f"{host}'s GPU failed: {problems[0]}",
                when,
                ranks=[r.rank for r in dying],
                nodes=[host],
                evidence=[f"{host}: {p}" for p in problems]
                + [f"rank {r.rank} on {host}: {r.cuda}" for r in dying if r.cuda],
                explains=[r.rank for r in dying] + [r.rank for r in ev.ranks if is_effect(r)],
                retry=True,
                next_step=f"resubmit without {host} (submit --retries N does it); drain it and reset the GPU "
                f"(clusterdoc check --slurm-health on {host})",
            )
        )

    for host in ev.unreachable:
        mine = by_host.get(host, [])
        if mine and not any(host in c.nodes for c in out) and any(not r.recorded for r in mine):
            out.append(
                Cause(
                    "node",
                    f"{host} does not answer after the failure",
                    INF,
                    ranks=[r.rank for r in mine],
                    nodes=[host],
                    evidence=[f"{host}: the probe could not reach it (ssh)"],
                    explains=[r.rank for r in mine],
                    retry=True,
                    next_step=f"resubmit without {host} (submit --retries N)",
                )
            )

    for r in failed:
        if not r.recorded or is_effect(r) or r.code == 0:
            continue
        raised = r.raised or {}
        where = f"{(raised.get('file') or '?').rsplit('/', 1)[-1]}:{raised.get('line')}" if raised else "?"
        exc = f"{raised.get('type')}: {raised.get('message')}" if raised else f"exit code {r.code}"
        if r.oom:
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
        else:
            out.append(
                Cause(
                    "code",
                    f"rank {r.rank}{_on(r)} raised {exc.split(chr(10))[0]}" + (f" at {where}" if raised else ""),
                    _t(r.ended),
                    ranks=[r.rank],
                    nodes=[r.host] if r.host else [],
                    evidence=[
                        f"rank {r.rank}: {exc}"
                        + (
                            f" at {where}" + (f" in {raised.get('func')}" if raised.get("func") else "")
                            if raised
                            else ""
                        )
                    ]
                    + ([f"rank {r.rank}: {r.cuda}"] if r.cuda else []),
                    explains=[r.rank],
                    next_step=(
                        f"a CUDA error: the code at {where} (rerun with CUDA_LAUNCH_BLOCKING=1) or the GPU "
                        f"(clusterdoc check on {r.host or 'its node'}: XIDs, ECC)"
                        if r.cuda
                        else f"fix the code at {where} (clusterdoc logs JOB --rank {r.rank}); a retry would fail "
                        "the same way"
                    )
                    if raised
                    else f"see rank {r.rank}'s log (clusterdoc logs JOB --rank {r.rank})",
                )
            )

    # killed by SIGKILL, not by the launcher, on a node whose other ranks are fine: the kernel's OOM killer or a user
    for r in ev.ranks:
        if r.code in (-9, 137) and not r.recorded and not any(r.rank in c.ranks for c in out):
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

    if ev.hang and ev.hang.get("watchdog") and not ev.hang.get("odd"):
        out.append(
            Cause(
                "hang",
                "a collective timed out on every rank in the log (NCCL watchdog)",
                _t(ev.hang.get("started")),
                evidence=[ev.hang["headline"]],
                explains=[r.rank for r in ev.ranks],
                next_step="find the rank missing from the log (its node: clusterdoc check for XIDs and lost GPUs); "
                "under clusterdoc submit the hang watch names it",
            )
        )
    if ev.hang and ev.hang.get("odd"):
        odd = ev.hang["odd"]
        if ev.hang.get("gone"):
            pass  # the report points at ranks that ended: their own causes above say why
        else:
            cat = "hang" if ev.hang.get("idle") else "desync"
            what = (
                (
                    "a data-loader stall"
                    if ev.hang.get("loader")
                    else "a stall outside collectives (a loop, a lock, I/O)"
                )
                if cat == "hang"
                else "the ranks called different collectives"
            )
            out.append(
                Cause(
                    cat,
                    f"{what} on {_ranks(odd)}",
                    _t(ev.hang.get("started")),
                    ranks=odd,
                    evidence=[ev.hang["headline"]]
                    + [ln.strip() for ln in ev.hang.get("lines", []) if "<- differs" in ln][:4],
                    explains=list(range(ev.world)),
                    next_step="see the hang report (stacks/report.txt) "
                    "and fix the call site it names; a retry would stall the same way",
                )
            )

    if not any(c.category in ("node",) for c in out):
        witnesses = [r for r in ev.ranks if r.peers_lost and r.recorded]
        if witnesses and not [c for c in out if c.category in ("code", "oom")]:
            peers = sorted({p for r in witnesses for p in r.peers_lost})
            out.append(
                Cause(
                    "network",
                    f"connections between ranks dropped ({', '.join(peers[:4])})",
                    _t(*[r.ended for r in witnesses]),
                    ranks=[r.rank for r in witnesses],
                    evidence=[f"rank {r.rank}{_on(r)}: lost {', '.join(r.peers_lost)}" for r in witnesses],
                    explains=[r.rank for r in witnesses],
                    next_step="clusterdoc check --perf on the job's nodes (slow or flapping links), "
                    "NCCL_SOCKET_IFNAME/NCCL_IB_HCA",
                )
            )
    return out


_ORDER = {"environment": 0, "scheduler": 1, "node": 2, "oom": 3, "code": 4, "desync": 5, "hang": 6, "network": 7}


def judge(ev: Evidence) -> Verdict:
    if ev.state in ("COMPLETED",) and all(r.code == 0 for r in ev.ranks if r.code is not None):
        return Verdict(True, ev.state, None)
    causes = sorted(
        disk.relabel(candidates(ev), ev.message, {r.rank for r in ev.ranks if r.raised}, Cause),
        key=lambda c: (c.time, _ORDER.get(c.category, 9)),
    )
    if ev.state in ("RUNNING", "PENDING") and not causes:
        return Verdict(True, ev.state, None)
    if not causes:
        failed = [r for r in ev.ranks if r.code not in (0, None)]
        return Verdict(
            False,
            ev.state,
            Cause(
                "unknown",
                ev.message
                or ("no rank recorded why it failed" if failed or ev.state != "COMPLETED" else "no failure recorded"),
                ranks=[r.rank for r in failed],
                evidence=[f"rank {r.rank}: exit {r.code}" for r in failed][:8],
                next_step="read the ranks' logs (clusterdoc logs JOB)",
            ),
        )
    best = causes[0]
    ruled = []
    for c in causes[1:]:
        if set(c.ranks) and set(c.ranks) <= set(best.explains) and c.category != best.category:
            why = f"an effect of the {best.category} failure first"
        elif c.time > best.time:
            why = "it came later"
        else:
            why = "the first cause explains it"
        ruled.append(f"{c.category}: {c.headline} ({why})")
    effects = []
    eff = [r for r in ev.ranks if r.rank not in best.ranks and is_effect(r)]
    lost = [r for r in eff if r.peers_lost]
    if lost:
        effects.append(
            f"{_ranks([r.rank for r in lost])} failed only because a peer went away "
            f"({', '.join(sorted({p for r in lost for p in r.peers_lost}))}): effects, not causes"
        )
    stopped = [r for r in eff if not r.peers_lost]
    if stopped:
        verb = "were" if len(stopped) > 1 else "was"
        effects.append(f"{_ranks([r.rank for r in stopped])} {verb} stopped afterwards (by the launcher or Slurm)")
    return Verdict(False, ev.state, best, ruled, effects)
