"""Which ranks hold a stalled job up (pure: rank views in, a verdict out).

Each group a rank waits in is judged on its own members, by that group's own sequence numbers:
- members at the same collective (same #seq) with a different op, shape or dtype than the rest: the smaller
  side differs (a tie: the side without the lowest rank, so that the answer never changes between two looks);
- members in no collective at all while others wait in the group: they are awaited (provably: they have not
  issued the call) and differ;
- members busy in a collective of another group: the smaller side differs (a tie: the busy ones).
A rank blocked in recv/send (gloo's flight recorder keeps no point-to-point op; the rank's frame does) waits
for its peer. A rank that differs in one group but only because it waits, in its own group, for a rank that
differs there, is a victim, not a cause; when every candidate is such a victim (the ranks wait for each other
across groups) the group with the clearest majority decides (the smallest share of its members differ; then
the larger group). With two members a group has no majority: which rank skipped a call and which made an
extra one cannot be told apart, and the verdict leans on the other groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Finding:
    """Why a rank differs: in `group`, against `ref` (the ranks it is compared with)."""

    group: str
    how: str  # mismatch | idle | elsewhere | ahead | peer
    ref: list[int] = field(default_factory=list)
    collective: dict | None = None  # the collective `ref` waits in


def members(group: str | None, world: int) -> list[int]:
    """'world' -> every rank; 'ranks 0,2,5' -> [0, 2, 5] (the shim's group names)."""
    if group in (None, "world"):
        return list(range(world))
    if group.startswith("ranks "):
        try:
            return [r for r in (int(x) for x in group[6:].split(",")) if 0 <= r < world]
        except ValueError:
            return []
    return []


P2P = ("send", "recv", "isend", "irecv", "batch_isend_irecv")


def _p2p(c: dict | None) -> bool:
    """A point-to-point op: numbered per rank, never compared with a group's collectives (it waits for its peer)."""
    return c is not None and (c.get("op") in P2P or c.get("peer") is not None)


def _position(view, group: str):
    c = view.collective
    if (
        view.kind == "in"
        and c is not None
        and not _p2p(c)
        and c.get("group", "world") == group
        and c.get("seq") is not None
    ):
        return ("at", c["seq"], c["op"], c.get("dtype"), tuple(c.get("shape") or ()))
    return ("idle",) if view.kind == "idle" else ("busy",)


def _issued(view, group: str) -> int | None:
    return ((view.state or {}).get("issued") or {}).get(group)


def _finished_ahead(classes: dict[tuple, list[int]], judged: list, group: str) -> list[tuple]:
    """The classes of ranks that are in a later collective only because they finished the one the others still
    wait in: each one's last completed call in `group` is that #seq with the same op, dtype and shape. The call
    was matched (the wait is for its last messages: a slow or lossy link, a slow peer), not a desync (issue 43's
    campaign, 30 % packet loss: rank 0 past barrier #23, ranks 1-2 still in it, was called an extra call)."""
    by_rank = {v.rank: v for v in judged}
    behind = [k for k in classes if k[0] == "at"]
    out = []
    for key, ranks in classes.items():
        if key[0] != "at":
            continue
        for b in behind:
            if b[1] >= key[1]:
                continue
            if all(any(_same_call(x, group, b) for x in _completed(by_rank[r].state)) for r in ranks):
                out.append(key)
                break
    return out


def _completed(state: dict | None) -> list[dict]:
    """A rank's last completed collectives (bounded: 8 are kept), numbered as its position is: the flight
    recorder's retired entries where the position came from the recorder, else the shim's own records."""
    state = state or {}
    retired = state.get("retired")
    if isinstance(retired, list) and "unfinished" in state:
        return [x for x in retired[-16:] if isinstance(x, dict)]
    col = state.get("collectives") or {}
    recent = col.get("recent")
    recent = recent[-16:] if isinstance(recent, list) else []
    return [x for x in [col.get("last"), *recent] if isinstance(x, dict)]


def _same_call(x: dict, group: str, at: tuple) -> bool:
    """`x` (a completed call) is the collective at position `at` ("at", seq, op, dtype, shape) in `group`."""
    return (
        x.get("group", "world") == group
        and x.get("seq") == at[1]
        and (x.get("op"), x.get("dtype"), tuple(x.get("shape") or ())) == at[2:]
    )


def judge(views: list, world: int) -> dict[int, Finding]:
    """rank -> why it differs, for the ranks that hold the job up (gone and silent ranks are not judged here:
    the report marks them anyway)."""
    findings: dict[int, list[Finding]] = {}
    groups = sorted(
        {
            v.collective.get("group", "world")
            for v in views
            if v.kind == "in" and v.collective and not _p2p(v.collective)
        }
    )
    sizes: dict[str, int] = {}
    for g in groups:
        inside = set(members(g, world))  # once per group, a set: linear in the ranks, not quadratic
        judged = [v for v in views if v.rank in inside and v.kind in ("in", "idle")]
        sizes[g] = len(judged)
        classes: dict[tuple, list[int]] = {}
        positions = [_position(v, g) for v in judged]
        waited = max((p[1] for p in positions if p[0] == "at"), default=None)
        for v, pos in zip(judged, positions):
            if pos[0] != "at":
                issued = _issued(v, g)
                if issued is not None and waited is not None and issued >= waited:
                    continue  # it has made that call: not what the others wait for
            classes.setdefault(pos, []).append(v.rank)
        for key in _finished_ahead(classes, judged, g):
            del classes[key]
        at = {k: rs for k, rs in classes.items() if k[0] == "at"}
        if not at or len(classes) < 2:
            continue
        ref_key = max(at, key=lambda k: (len(at[k]), -min(at[k])))
        ref = at[ref_key]
        busy = classes.get(("busy",), [])
        if len(at) == 1 and len(busy) > len(ref) and not classes.get(("idle",)):
            for r in ref:  # one side waits while most of the group is busy elsewhere: it ran ahead
                findings.setdefault(r, []).append(Finding(g, "ahead", busy, None))
            continue
        coll = next(v.collective for v in judged if v.rank == ref[0])
        for key, ranks in classes.items():
            if key == ref_key:
                continue
            how = "mismatch" if key[0] == "at" else "idle" if key[0] == "idle" else "elsewhere"
            for r in ranks:
                findings.setdefault(r, []).append(Finding(g, how, ref, coll))
    for v in views:  # point-to-point: a blocked recv/send waits for its peer
        c = v.collective or {}
        peer = c.get("peer")
        if v.kind == "in" and isinstance(peer, int) and 0 <= peer < world and peer != v.rank:
            g = f"p2p {min(v.rank, peer)}-{max(v.rank, peer)}"
            sizes[g] = 2
            findings.setdefault(peer, []).append(Finding(g, "peer", [v.rank], c))
    return _causes(views, findings, sizes)


def _causes(views: list, findings: dict[int, list[Finding]], sizes: dict[str, int]) -> dict[int, Finding]:
    by_rank = {v.rank: v for v in views}
    odd_in_group: dict[str, set[int]] = {}  # group -> the ranks with a finding in it (looked up, not searched)
    for o, fs in findings.items():
        for f in fs:
            odd_in_group.setdefault(f.group, set()).add(o)

    def waits_on_another(r: int) -> bool:
        v = by_rank[r]
        if v.kind != "in" or v.collective is None:
            return False
        c = v.collective
        peer = c.get("peer")
        odd = odd_in_group.get(c.get("group", "world"), set())
        return len(odd) > (r in odd) or (isinstance(peer, int) and peer != r and bool(findings.get(peer)))

    causes = {r: fs for r, fs in findings.items() if not waits_on_another(r)}
    if not causes and findings:  # a cycle across groups: the group with the clearest majority decides
        odd_in: dict[str, int] = {}
        for fs in findings.values():
            for f in fs:
                odd_in[f.group] = odd_in.get(f.group, 0) + 1
        share = {g: (n / max(1, sizes.get(g, 1)), -sizes.get(g, 0)) for g, n in odd_in.items()}
        best = min(share, key=lambda g: share[g])
        causes = {
            r: [f for f in fs if f.group == best] for r, fs in findings.items() if any(f.group == best for f in fs)
        }
    return {r: min(fs, key=lambda f: sizes.get(f.group, 0)) for r, fs in causes.items()}
