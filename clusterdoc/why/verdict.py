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

from clusterdoc.why import disk, vocab
from clusterdoc.why.causes import CAUSES
from clusterdoc.why.evidence import Evidence, RankFacts
from clusterdoc.why.model import (  # noqa: F401 - the names other modules import from here
    INF,
    RETRYABLE,
    Cause,
    Verdict,
    _ranks,
    is_effect,
    lost_node_note,
    vanished_nodes,
)

__all__ = ["INF", "RETRYABLE", "Cause", "Evidence", "RankFacts", "Verdict", "candidates", "judge", "lost_node_note"]

_ORDER = {"environment": 0, "scheduler": 1, "node": 2, "oom": 3, "code": 4, "desync": 5, "hang": 6, "network": 7}


def candidates(ev: Evidence) -> list[Cause]:
    """Every cause the evidence shows, from the table in why/causes.py (each rule's retry applied)."""
    out: list[Cause] = []
    for rule in CAUSES:
        for c in rule.find(ev, out):
            c.retry = rule.retry if rule.retry is not None else c.category in RETRYABLE and not c.refused
            c.rule = rule.name
            out.append(c)
    return out


def judge(ev: Evidence) -> Verdict:
    if ev.state in ("COMPLETED",) and all(r.code == 0 for r in ev.ranks if r.code is not None):
        return Verdict(True, ev.state, None)
    found = disk.relabel(candidates(ev), ev.message, {r.rank for r in ev.ranks if r.raised}, Cause)
    causes = sorted([c for c in found if not c.weak], key=lambda c: (c.time, _ORDER.get(c.category, 9))) or _unknown(
        ev, [c for c in found if c.weak]
    )
    if causes and causes[0].category == "hang" and ev.foreign:
        # ranks that waited for one that stopped, and a line that says a node's GPU or the node itself failed
        # (nvidia-smi's lost GPU printed after the wait): the node's failure is why that rank stopped (session 18)
        node_first = [c for c in causes if c.category == "node"][:1]
        causes = node_first + [c for c in causes if c not in node_first]
    if ev.state in ("RUNNING", "PENDING") and not causes:
        return Verdict(True, ev.state, None)
    if not causes and ev.foreign:
        read = _read_failures(ev)
        if read is not None:
            causes = [read]
    if not causes:
        failed = [r for r in ev.ranks if r.code not in (0, None)]
        cause = (
            Cause(
                "unknown",
                ev.message
                or ("no rank recorded why it failed" if failed or ev.state != "COMPLETED" else "no failure recorded"),
                ranks=[r.rank for r in failed],
                evidence=[f"rank {r.rank}: exit {r.code}" for r in failed][:8],
                next_step="read the ranks' logs (clusterdoc logs JOB)",
            )
            if not ev.foreign
            else Cause(
                "unknown",
                "the log names no failure clusterdoc knows" + (f" ({ev.message})" if ev.message else ""),
                next_step="look where the failure would be: the other ranks' logs, Slurm's record, the nodes'",
                evidence=[str(((ev.scheduler or {}).get("accounting") or {}).get("line") or "")][:1]
                if ((ev.scheduler or {}).get("accounting") or {}).get("line")
                else [],
                candidates=[
                    "the failure is in another file: the other ranks' logs, or Slurm's (sacct -j JOB -o "
                    "State,ExitCode,Reason)",
                    "a node or process died without a word: the node's kernel log (dmesg: XIDs, the OOM killer), "
                    "clusterdoc check on it",
                    "a line clusterdoc does not know yet: one entry in why/sigtable/ (docs/why.md)",
                ],
            )
        )
        if ev.foreign:
            _name_culprit(cause, ev)
        return Verdict(False, ev.state, cause)
    best = causes[0]
    if ev.foreign:  # an unknown from lost peers alone: those ranks are witnesses, the launcher names the culprit
        _name_culprit(best, ev, witnesses=best.category == "unknown" and all(c.category == "unknown" for c in found))
    ruled = []
    explained = set(best.explains)
    for c in causes[1:]:
        if set(c.ranks) and set(c.ranks) <= explained and c.category != best.category:
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


DISAGREES = "its values differ from rank 0's"  # why/logs.py: a consistency check names the rank
FILLED = ("code", "environment", "oom", "node", "unknown")  # a rank's own failure: the launcher's report names it


def _name_culprit(best: Cause, ev: Evidence, witnesses: bool = False) -> None:
    """A cause read from a line without a rank takes the rank (and node) from the launcher's report of the rank
    that failed first, printed after it: torchrun's Root Cause entry, srun's task line (ev.culprits). With
    `witnesses` (the cause's ranks only lost a peer or saw a distributed call fail: Horovod's shutdown, NCCL's
    remote error), a rank the report names replaces them: it failed first, they noticed."""
    if best.category == "oom" and not best.nodes:  # slurmstepd's end line right after names the node it ran on
        # a JOB line (the batch host's); a STEP's line is printed by one of its nodes, not the one that failed
        ends = [e for e in (ev.scheduler or {}).get("ends") or []
                if 0 <= e["line"] - best.time <= 3 and e.get("kind", "JOB") == "JOB"]  # fmt: skip
        if ends:
            best.nodes = [ends[0]["node"]]
    if best.ranks and not best.nodes and len(best.ranks) == 1:  # the rank's node, where a launcher's line names it
        best.nodes = [c["node"] for c in ev.culprits if c["rank"] == best.ranks[0] and c.get("node")][:1]
    if (best.ranks and not witnesses) or best.category not in FILLED + ("desync",):
        return
    at = best.time if best.time != INF else -INF  # no time: no line of its own, every report counts
    after = [c for c in ev.culprits if c["line"] >= at or (c.get("heads") and at - c["line"] <= 64)]
    if best.category == "desync":  # only the check that raised it names the rank that disagrees, not a launcher
        after = [c for c in after if c["how"] == DISAGREES]
    if not after:
        return
    c = after[0]
    if witnesses and best.ranks and c["rank"] is None:
        return
    if c["rank"] is not None:
        best.ranks = [c["rank"]]
    if c.get("node") and not best.nodes:
        best.nodes = [c["node"]]
    who = " ".join(x for x in (f"rank {c['rank']}" if c["rank"] is not None else "",
                               f"on {c['node']}" if c.get("node") else "") if x)  # fmt: skip
    best.evidence.append(f"line {c['line'] + 1}: {c['how']} names {who}"
                         + (f" (exitcode {c['exitcode']})" if c.get("exitcode") is not None else ""))  # fmt: skip


def _read_failures(ev: Evidence) -> Cause | None:
    """Where no signature and no exception rule decides: the log's failure lines by family (why/vocab.py). One
    family: its first line is the cause, its prefix the culprit; several: unknown, each family a candidate."""
    got = vocab.decide(ev.failures)
    if got is None:
        return None
    if got["category"] is not None:
        # a family word on a failure line is thin evidence: on the logs kept back it made as many ambiguous logs
        # confidently wrong as it made right (issue 41), so it is the first candidate, never the verdict
        e = got["line"]
        n = sum(1 for x in ev.failures if got["category"] in x["families"])
        same = [c for c in ev.culprits if e["rank"] is not None and c["rank"] == e["rank"] and c.get("node")]
        node = e["host"] or (same[0]["node"] if same else None)  # a launcher's line on the same rank: its node
        return Cause(
            "unknown",
            f"no known signature; the log's failure lines point to {got['category']}: "
            + vocab.FAMILY_HEAD[got["category"]],
            float(e["line"]),
            ranks=[e["rank"]] if e["rank"] is not None else [],
            nodes=[node] if node else [],
            evidence=[f"line {e['line'] + 1}: {e['text']}"]
            + ([f"{n - 1} more failure line(s) of the same family, none of another"] if n > 1 else []),
            next_step="read the lines around it: what failed just before decides (one entry in why/sigtable/ "
            "would name it exactly: docs/why.md)",
            candidates=[
                f"{got['category']}: line {e['line'] + 1}: {e['text'][:120]}",
                "that line is the effect of a failure this log does not show (another rank's or node's log, "
                "Slurm's record: sacct -j JOB -o State,ExitCode,Reason)",
            ],
            rule="failure-lines",
        )
    cands = got["candidates"]
    return Cause(
        "unknown",
        "the log's failure lines point to several causes: " + ", ".join(cands),
        float(min(e["line"] for e in cands.values())),
        evidence=[f"line {e['line'] + 1}: {e['text']}" for e in cands.values()][:8],
        next_step="which failed first decides: the ranks' and nodes' own logs, with their times",
        candidates=[f"{cat}: line {e['line'] + 1}: {e['text'][:120]}" for cat, e in cands.items()],
        rule="failure-lines",
    )


def _unknown(ev: Evidence, weak: list[Cause]) -> list[Cause]:
    """Thin evidence: no cause the lines support on their own. "unknown", with the candidates and what decides."""
    if not weak:
        return []
    weak = sorted(weak, key=lambda c: c.time)
    first = weak[0]
    cands: list[str] = []
    for c in weak:
        for k in c.candidates or [f"{c.category}: {c.headline}"]:
            if k not in cands:
                cands.append(k)
    return [
        Cause(
            "unknown",
            f"not enough evidence to name a cause: {first.headline}",
            first.time,
            ranks=sorted({r for c in weak for r in c.ranks}),
            nodes=sorted({n for c in weak for n in c.nodes}),
            evidence=[e for c in weak for e in c.evidence][:8],
            next_step=first.next_step,
            candidates=cands[:6],
            rule=first.rule,
        )
    ]
