"""What a verdict is made of (pure data and small helpers): a Cause, a Verdict, and the facts several causes
share (which ranks are effects, which nodes vanished). The causes themselves are in why/causes.py, the
judge in why/verdict.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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
    weak: bool = False  # a candidate, not a verdict: alone it gives "unknown" with the candidates
    candidates: list[str] = field(default_factory=list)  # for an unknown: the causes it may be, what decides
    rule: str = ""  # the rule of why/causes.py that found it
    refused: bool = False  # a request the scheduler refused: the same request is refused again (no retry)


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
    # two or more nodes "lost", every witness on one and the same other node: the evidence is about that node's
    # own link, not theirs (issue 43's campaign, 30 % loss on node1: rank 0 there lost node2 and node3, whose ranks
    # the hang watch's abort then stopped without a record; node2 was blamed and the retry ran on node1 again)
    seen_from = {w.host if w.rank >= 0 else "(mpirun)" for ws in out.values() for w in ws}
    if len(out) >= 2 and len(seen_from) == 1 and not seen_from & set(out):
        return {}
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
