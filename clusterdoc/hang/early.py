"""A rank that ended its loop early (pure: each rank's end in, the early exit or None out).

The most common desync of all: one rank's data has a batch fewer (uneven shards), so it finishes its loop one
collective early and exits 0, while the others wait in their next call for it (and, with gloo, fail there
with 'Connection closed by peer' as soon as its process goes). The others are not at fault: the rank that
left is. Told apart by the counts the tracker keeps (shim/track.py: calls per group, and per op):

- at least one rank exited 0 on its own record (its script ended: not killed, not failed);
- every other member of one group waits in, or failed in, the same collective of that group (#seq);
- each rank that exited 0 had made fewer calls on that group than that #seq;
- they are not the group's majority (most ranks finished while a few wait: the few made an extra call, more
  likely; the majority is never blamed).

Anything else (a rank that raised, one in no collective, two different collectives) is not this, and the
answer is None: a confident wrong answer is worse than none. The hang report (hang/report.py) and `clusterdoc
why` (why/verdict.py) both ask this module, so the live summary and the post-mortem say the same sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterdoc.hang.verdict import members

JOIN = "uneven data? torch.distributed.algorithms.Join"
# the launcher's words when rank 0's store stopped answering (launch/watchthread.py; why/causes.py reads them back
# from the attempt's outcome: the stall had no report, its rank 0 could not take part in one)
STORE_SILENT = "the job's store on rank 0 has not answered for"


@dataclass
class RankEnd:
    """One rank as far as this question goes."""

    rank: int
    clean: bool = False  # it exited 0 on its own record (its script finished)
    issued: dict[str, int] = field(default_factory=dict)  # group -> calls it made there
    ops: dict[str, dict[str, int]] = field(default_factory=dict)  # group -> op -> calls
    at: dict | None = None  # the collective it waits in or failed in: {op, seq, group}
    counted: bool = False  # its record counts its calls per group (a group not there: it made none)


@dataclass
class EarlyExit:
    ranks: list[int]  # the ranks that exited 0 early
    made: list[int]  # the calls each made on `group`, in the order of `ranks`
    waiting: list[int]  # the ranks in (or failed in) call #seq of `group`
    group: str
    seq: int
    op: str  # the op the others wait in
    op_only: bool  # every call the early ranks made on the group was `op` (so "7 all_reduce calls" is true)

    def sentence(self) -> str:
        return sentence(self)


def _count(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _made(end: RankEnd, group: str) -> int | None:
    if not isinstance(end.issued, dict):
        return None
    if group not in end.issued:  # counted, and not there: none (a rank that left before its first call)
        return 0 if end.counted else None
    return _count(end.issued.get(group))


def _position(c: dict | None) -> tuple[str, int, str] | None:
    """(group, seq, op) of a group collective; None for none or a point-to-point op."""
    if not isinstance(c, dict) or c.get("peer") is not None or not isinstance(c.get("op"), str):
        return None
    seq, group = _count(c.get("seq")), c.get("group") or "world"
    if seq is None or not isinstance(group, str):
        return None
    return group, seq, c["op"]


def find(ends: list[RankEnd], world: int) -> EarlyExit | None:
    """The early exit these ends show, or None (see the module's rules)."""
    by_rank = {e.rank: e for e in ends}
    clean = [e for e in ends if e.clean]
    if not clean:
        return None
    places: dict[tuple[str, int, str], list[int]] = {}
    for e in ends:
        pos = None if e.clean else _position(e.at)
        if pos is not None:
            places.setdefault(pos, []).append(e.rank)
    for (group, seq, op), waiting in sorted(places.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        group_ranks, there = members(group, world), set(waiting)  # sets: linear at thousands of ranks
        if not group_ranks or not there <= set(group_ranks):
            continue
        early = [r for r in group_ranks if r not in there]
        if not early or any(not by_rank.get(r, RankEnd(r)).clean for r in early):
            continue  # a member neither waits there nor exited 0: something else holds the group up
        if len(early) > len(waiting):
            continue  # most of the group finished: the few still in a call made an extra one, more likely
        made = [_made(by_rank[r], group) for r in early]
        if any(m is None or m >= seq for m in made):
            continue  # it made that call too (or its count is unknown): not an early exit
        ops_seen = [(by_rank[r].ops or {}).get(group) or {} for r in early]
        only = all(isinstance(o, dict) and set(o) == {op} for o in ops_seen)
        return EarlyExit(early, [m for m in made if m is not None], sorted(waiting), group, seq, op, only)
    return None


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _who(ranks: list[int]) -> str:
    """'rank 1', 'ranks 0, 2, 3'; past 8 ranks as ranges ('ranks 0,2-4095', Slurm's way)."""
    rs = sorted(ranks)
    return ("ranks " if len(rs) > 1 else "rank ") + (", ".join(map(str, rs)) if len(rs) <= 8 else _ranges(rs))


def _ranges(rs: list[int]) -> str:
    out, start = [], 0
    for i in range(1, len(rs) + 1):
        if i == len(rs) or rs[i] != rs[i - 1] + 1:
            out.append(str(rs[start]) if start == i - 1 else f"{rs[start]}-{rs[i - 1]}")
            start = i
    return ",".join(out)


def made_text(ee: EarlyExit) -> str:
    """'7 all_reduce calls' (or '7 collective calls' when the rank made other ops on the group too)."""
    lo, hi = min(ee.made), max(ee.made)
    n = str(lo) if lo == hi else f"{lo} to {hi}"
    what = ee.op if ee.op_only else "collective"
    return f"{n} {what} call{'' if hi == 1 else 's'}"


def sentence(ee: EarlyExit) -> str:
    """rank 1 exited 0 after 7 all_reduce calls while ranks 0, 2, 3 wait in their 8th (uneven data? ...)."""
    of = "" if ee.group == "world" else f" of the group of {ee.group}"
    waits = "waits" if len(ee.waiting) == 1 else "wait"
    their = "its" if len(ee.waiting) == 1 else "their"
    what = "" if ee.op_only else f" ({ee.op} #{ee.seq})"
    return (
        f"{_who(ee.ranks)} exited 0 after {made_text(ee)}{of} while {_who(ee.waiting)} {waits} in {their} "
        f"{_ordinal(ee.seq)}{what} ({JOIN})"
    )


def end_of(rank: int, state: dict | None, code: int | None, at: dict | None) -> RankEnd:
    """A RankEnd from what the launcher and the job folder hold: `state` carries the exit record's counts
    (issued, ops) when the rank ended; `code` is the rank's own recorded exit code (None: no record)."""
    state = state if isinstance(state, dict) else {}
    issued = _dict(state.get("issued"))
    counted = isinstance(state.get("issued"), dict)
    last = _dict(state.get("collectives")).get("last")
    pos = _position(last)
    if not issued and code == 0 and pos is not None:  # an older record without counts: its last call's number
        issued = {pos[0]: pos[1]}
    ops = _dict(state.get("ops"))
    return RankEnd(rank, clean=code == 0, issued=issued, ops=ops, at=at, counted=counted)


def from_record(rank: int, rec: dict | None) -> RankEnd:
    """A RankEnd from a rank's exit record (clusterdoc.run writes it: code, collectives, issued, ops)."""
    rec = rec if isinstance(rec, dict) else {}
    col = _dict(rec.get("collectives"))
    pending = col.get("pending") if isinstance(col.get("pending"), list) else []
    at = col.get("failed") or col.get("current") or (pending[0] if pending else None)
    code = rec.get("code") if isinstance(rec.get("code"), int) else None
    return end_of(rank, rec, code, None if code == 0 else at)


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def stand_in(where) -> dict | None:
    """An exit record's stand-in for a rank that left none (stopped by its launcher, killed): its place as its
    rank<R>.where says (shim/where.py), checked field by field, its code unknown. A rank stopped while it waited in
    the others' collective, or after that call failed, is one of them; one stopped in an earlier call, or between
    calls, is not."""
    call = _call(where.get("call")) if isinstance(where, dict) and where.get("in") in (0, 1, 2) else None
    if call is None:
        return None
    state = where["in"]  # 1: in it; 2: it failed there (as a peer's own record says); 0: done, between calls
    current, last = (call, None) if state == 1 else (None, call)
    failed = call if state == 2 else None
    return {"code": None, "collectives": {"current": current, "pending": [], "last": last, "failed": failed}}


def _call(c) -> dict | None:
    """A collective as a rank file gives it, with only well-formed fields (the report prints them)."""
    if not isinstance(c, dict) or not isinstance(c.get("op"), str) or not 0 < len(c["op"]) <= 100:
        return None
    out: dict = {"op": c["op"]}
    if _count(c.get("seq")) is not None:
        out["seq"] = c["seq"]
    for key, size in (("group", 1000), ("dtype", 50), ("note", 200)):
        if isinstance(c.get(key), str) and len(c[key]) <= size:
            out[key] = c[key]
    shape = c.get("shape")
    if isinstance(shape, list) and len(shape) <= 32 and all(_count(x) is not None for x in shape):
        out["shape"] = shape
    site = c.get("site")
    if isinstance(site, list) and len(site) == 3 and _count(site[1]) is not None:
        if all(isinstance(x, str) and len(x) <= 500 for x in (site[0], site[2])):
            out["site"] = site
    for key in ("start", "end"):
        if isinstance(c.get(key), (int, float)) and not isinstance(c.get(key), bool):
            out[key] = float(c[key])
    return out


def from_json(d) -> EarlyExit | None:
    """An EarlyExit as the launcher kept it (stacks/report.json), checked field by field; None if malformed."""
    if not isinstance(d, dict):
        return None

    def ints(v) -> list[int] | None:
        ok = isinstance(v, list) and 0 < len(v) <= 1 << 16 and all(_count(x) is not None for x in v)
        return list(v) if ok else None

    ranks, made, waiting = ints(d.get("ranks")), ints(d.get("made")), ints(d.get("waiting"))
    group, op, seq = d.get("group"), d.get("op"), _count(d.get("seq"))
    if not (ranks and made and waiting and len(made) == len(ranks) and seq and isinstance(group, str)):
        return None
    if not isinstance(op, str) or len(op) > 100 or len(group) > 1000:
        return None
    return EarlyExit(ranks, made, waiting, group, seq, op, d.get("op_only") is True)
