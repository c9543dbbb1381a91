"""The stall report: every rank's state in, one grouped text out (pure; no torch, no I/O).

A rank's state is what its watchdog published (shim/watch.py: `rank_state()`), or None when it did not
answer; `exits` says which ranks are gone and how. Ranks in the same situation share a line, like
`dshbak -c`; the largest group is the reference and the others are marked `<- differs`; then the
diagnosis in words:

    clusterdoc: job stalled: all_reduce #118 has waited 300 s on ranks 0,2-3
      ranks 0,2-3  in all_reduce #118 float32[4096]   train.py:88 in train_step
      rank 1       in barrier #118                     train.py:95 in main      <- differs
      ...
"""

from __future__ import annotations

import os
import signal
import textwrap
from collections.abc import Collection, Mapping

from clusterdoc.hang import early, verdict

_SIGNALS = {s.value: s.name for s in signal.Signals}


WIDTH = 40  # the rank column is padded to at most this: a long rank list is not padded onto every line
SAID = 20  # groups explained in words at most (the lines above list every group)
NAMED = 300  # characters of a rank list inside a sentence or the headline, at most


def ranks_text(ranks, limit: int | None = None) -> str:
    """[0, 2, 3] -> '0,2-3' (Slurm's and dshbak's way). With `limit`, a longer text is cut at a comma and ends
    with ',... (N ranks)'."""
    ranks = sorted(ranks)
    out, i, size = [], 0, 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        size += len(out[-1]) + 1
        i = j + 1
        if limit is not None and size > limit and i < len(ranks):
            return ",".join(out) + f",... ({len(ranks)} ranks)"
    return ",".join(out)


def _who(ranks, limit: int | None = None) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {ranks_text(ranks, limit)}"


def exit_text(code: int | None) -> str:
    if code is None:
        return "ended without an exit code"
    if code < 0 or (code > 128 and code - 128 in _SIGNALS):
        num = -code if code < 0 else code - 128
        return f"killed by {_SIGNALS.get(num, f'signal {num}')}"
    return f"exited with code {code}"


def site_text(site) -> str:
    if not site:
        return "?"
    file, line, func = site[0], site[1], site[2]
    return f"{os.path.basename(file)}:{line} in {func}"


def collective_text(c: dict) -> str:
    text = c["op"] if c.get("seq") is None else f"{c['op']} #{c['seq']}"
    if isinstance(c.get("peer"), int):
        text += f" {'from' if c['op'].startswith('recv') else 'to'} rank {c['peer']}"
        if isinstance(c.get("tag"), int):
            text += f" tag {c['tag']}"
    if c.get("dtype") and c.get("shape") is not None:
        text += f" {c['dtype']}[{','.join(map(str, c['shape']))}]"
    if c.get("group") not in (None, "world"):
        text += f" ({c['group']})"
    return text


def oldest(state: dict) -> dict | None:
    """The rank's unfinished collective that started first (blocking or async, e.g. a DDP bucket): from the
    flight recorder's view when the rank sent one, else the shim's records; a point-to-point call the main
    thread is blocked in (peer, tag) when nothing else is open."""
    col = state.get("collectives") or {}
    if "unfinished" in state:
        found = min(state["unfinished"] or [], key=lambda c: c.get("start", 0.0), default=None)
    else:
        found = col.get("current")
        for p in col.get("pending") or []:
            if found is None or p["start"] < found["start"]:
                found = p
    blocked = state.get("blocked")
    if blocked and (found is None or found.get("op") == blocked.get("op")):
        found = {**(found or {"start": state.get("time", 0.0)}), **blocked}
    return found


class RankView:
    """One rank, classified: in a collective, not in any, gone, or silent."""

    def __init__(self, rank: int, state: dict | None, exit_code: int | None, gone: bool):
        self.rank, self.state = rank, state
        self.kind: str = "silent"  # in | idle | gone | silent
        self.key: tuple = ("silent",)  # views with equal keys are one group
        self.text = "did not answer"
        self.collective: dict | None = None  # set when kind == "in"
        if gone:
            self.kind, self.key = "gone", ("gone", exit_code)
            self.text = f"gone: {exit_text(exit_code)}"
            if state:
                seen = oldest(state)
                failed = None if seen else (state.get("collectives") or {}).get("failed")
                last = None if seen or failed else (state.get("collectives") or {}).get("last")
                where = (
                    "failed in " + collective_text(failed)
                    if failed
                    else "last seen in " + collective_text(seen)
                    if seen
                    else "its last call: " + collective_text(last)
                    if last
                    else "last seen outside any collective"
                )
                self.text += f" ({where}, at {site_text(_where(state, seen or failed or last))})"
            return
        if state is None:
            return
        if state.get("stale") is not None:  # no answer now: only an old heartbeat to show
            seen = oldest(state)
            self.text = (
                f"did not answer (its last heartbeat, {state['stale']:.0f} s old: "
                f"{'in ' + collective_text(seen) if seen else 'in no collective'} at "
                f"{site_text(_where(state, seen))})"
            )
            self.key = ("silent", self.text)
            return
        c = oldest(state)
        if c is not None:
            self.kind, self.collective = "in", c
            self.key = (
                "in",
                c["op"],
                c.get("seq"),
                c.get("peer"),
                c.get("tag"),
                c.get("group"),
                c.get("dtype"),
                tuple(c.get("shape") or ()),
                tuple(c.get("site") or ()),
                c.get("note"),
            )
            note = f" ({c['note']})" if c.get("note") else ""
            where = c.get("site") or _where(state, None)
            self.text = f"in {collective_text(c)}{note}   {site_text(where)}"
        else:
            where = _where(state, None)
            self.kind, self.key = "idle", ("idle", tuple(where or ()))
            self.text = f"not in a collective   {site_text(where)}"
            code = _code_line(where, state)
            if code:
                self.text += f": {code}"
            loader = state.get("loader") or {}
            if isinstance(loader.get("pid"), int):
                self.text += f"   (waits for DataLoader worker {loader.get('worker')}, pid {loader['pid']}"
                self.text += f" at {site_text(loader['site'])})" if loader.get("site") else ")"
                self.key += (loader["pid"],)

    @property
    def waited(self) -> float:
        return (self.collective or {}).get("waited", 0.0) or 0.0


def _where(state: dict, collective: dict | None):
    if collective and collective.get("site"):
        return collective["site"]
    frames = state.get("frames") or []
    user = next((f for f in frames if f.get("user")), frames[0] if frames else None)
    return (user["file"], user["line"], user["func"]) if user else None


def build(
    states: Mapping[int, dict | None],
    world: int,
    exits: Mapping[int, int | None] | None = None,
    stacks_hint: str | None = None,
    headline: str | None = None,
    first_failed: Collection[int] | None = None,
) -> str:
    """The grouped report. `exits`: rank -> exit code for the ranks that are gone (None: gone, code unknown).
    `first_failed`: the ranks whose failure ended the job (the launcher knows): the others gone with them were
    taken down by it (or stopped by the launcher), so they are not marked."""
    exits = exits or {}
    views = [RankView(r, states.get(r), exits.get(r), r in exits) for r in range(world)]
    findings = verdict.judge(views, world)
    groups: dict[tuple, list[RankView]] = {}
    ee = early.find([_end(v, exits) for v in views], world)
    first = set(ee.ranks if ee is not None else first_failed or ())
    for v in views:  # a rank whose failure ended the job never shares a line with the ranks it took down
        groups.setdefault((*v.key, v.rank in findings, v.rank in first), []).append(v)
    ordered = sorted(groups.values(), key=lambda g: g[0].rank)
    odd = [
        g
        for g in ordered
        if g[0].rank in findings
        or g[0].kind == "silent"
        or (g[0].kind == "gone" and (not first_failed or any(v.rank in first_failed for v in g)))
    ]
    early_ranks = set(ee.ranks) if ee is not None else set()
    if ee is not None:  # a rank ended its loop early: it is the odd one, never the ranks left waiting for it
        odd = [g for g in ordered if any(v.rank in early_ranks for v in g) or g[0].kind == "silent"]
    marked = {id(g) for g in odd}  # looked up, not searched: linear in the groups
    waiting = [v for g in ordered if id(g) not in marked for v in g if v.kind == "in"]
    longest = max(waiting or [v for v in views if v.kind == "in"], key=lambda v: v.waited, default=None)
    lines = [headline or _headline(views, longest)]
    who = [_who([v.rank for v in g]) for g in ordered]
    width = min(WIDTH, max(len(w) for w in who))
    for g, w in zip(ordered, who):
        mark = "      <- differs" if id(g) in marked else ""
        lines.append(f"  {w:<{width}}  {g[0].text}{mark}")
    said = diagnose([g for g in odd if not any(v.rank in early_ranks for v in g)], findings, world)
    lines += [
        textwrap.fill(d, width=110, initial_indent="  ", subsequent_indent="    ")
        for d in ([ee.sentence() + "."] if ee is not None else []) + said
    ]
    if stacks_hint:
        lines.append(f"  stacks: {stacks_hint}")
    return "\n".join(lines)


def early_exit(
    states: Mapping[int, dict | None], world: int, exits: Mapping[int, int | None] | None = None
) -> early.EarlyExit | None:
    """The early exit the report names for these states, if any (the launcher keeps it in stacks/report.json
    for `clusterdoc why`)."""
    exits = exits or {}
    return early.find([_end(RankView(r, states.get(r), exits.get(r), r in exits), exits) for r in range(world)], world)


def _end(v: RankView, exits: Mapping[int, int | None]) -> early.RankEnd:
    """What hang/early.py needs of a rank: ended 0, its counts (the exit record's, in its state), where it waits."""
    state = v.state or {}
    if v.kind == "gone":
        failed = (state.get("collectives") or {}).get("failed")
        at = failed or (oldest(state) if state else None)
        return early.end_of(v.rank, state, exits.get(v.rank), None if exits.get(v.rank) == 0 else at)
    return early.end_of(v.rank, None, None, v.collective if v.kind == "in" else None)


def _headline(views: list[RankView], longest: RankView | None) -> str:
    c = longest.collective if longest is not None else None
    if longest is None or c is None:
        return "clusterdoc: no rank is in a collective"
    same = [
        v.rank
        for v in views
        if v.kind == "in"
        and v.collective is not None
        and v.collective["op"] == c["op"]
        and v.collective["seq"] == c["seq"]
        and v.collective.get("group") == c.get("group")
    ]
    return f"clusterdoc: job stalled: {c['op']} #{c['seq']} has waited {longest.waited:.0f} s on {_who(same, NAMED)}"


def diagnose(odd: list[list[RankView]], findings: dict[int, verdict.Finding], world: int) -> list[str]:
    """The situation in words, one sentence per group of ranks that differ (the first SAID groups: the report's
    lines name every group, and a sentence per rank of a 4,096-rank job helps no one)."""
    out = []
    for g in odd[:SAID]:
        v, who = g[0], _who([x.rank for x in g], NAMED)
        is_ = "is" if len(g) == 1 else "are"
        f = findings.get(v.rank)
        if v.kind == "gone":
            out.append(
                f"{who} {is_} gone ({exit_text(_code(v))}): the others wait for it, or fail as soon as they need it."
            )
        elif v.kind == "silent":
            out.append(
                f"{who} did not answer: its process may be stuck in native code holding the GIL "
                "(py-spy dump --native --pid PID on its node shows where)."
            )
        elif f is not None:
            out.append(_explain(v, g, f, world))
    if len(odd) > SAID:
        out.append(f"... and {len(odd) - SAID} more groups of ranks that differ (their lines are above).")
    return out


def _loader_text(state: dict | None) -> str:
    loader = (state or {}).get("loader") or {}
    if not isinstance(loader.get("pid"), int):
        return ""
    text = f" Its DataLoader worker {loader.get('worker')} (pid {loader['pid']}) has not delivered the next batch"
    if loader.get("site"):
        text += f"; the worker is at {site_text(loader['site'])}"
    return text + "."


def _group_text(group: str, world: int) -> str:
    return f"the group of all {world} ranks" if group == "world" else f"the group of {group}"


def _explain(v: RankView, g: list[RankView], f: verdict.Finding, world: int) -> str:
    who, is_ = _who([x.rank for x in g], NAMED), "is" if len(g) == 1 else "are"
    them = _who(f.ref, NAMED)
    c, b = v.collective, f.collective
    where = f" {collective_text(b)} ({site_text((b or {}).get('site'))})" if b else ""
    waits = "waits" if len(f.ref) == 1 else "wait"
    if f.how == "peer":
        return f"{them} {waits} in{where} for {who}, which has not made the matching call."
    if f.how == "idle":
        return (
            f"{who} {is_} in no collective while {them} {waits} for it in{where}{_top(v.state)} (a data loader, a "
            "lock, a loop, or a collective the others already passed: see its stacks)." + _loader_text(v.state)
        )
    if f.how == "ahead":
        return (
            f"{who} already {is_} in {collective_text(c or {})} ({site_text((c or {}).get('site'))}) of "
            f"{_group_text(f.group, world)}, while {them} have not made that call: they are busy in other "
            f"collectives ({who} skipped a call they made, or made an extra one)."
        )
    if f.how == "elsewhere":
        issued = ((v.state or {}).get("issued") or {}).get(f.group)
        made = f" (its last call there was #{issued})" if issued is not None else ""
        return (
            f"{them} {waits} in{where} of {_group_text(f.group, world)} for {who}, which {is_} in "
            f"{collective_text(c or {})} ({site_text((c or {}).get('site'))}) instead{made}: it skipped a call "
            "on that group, or the others made an extra one."
        )
    a = c or {}
    assert b is not None
    if a.get("seq") != b.get("seq"):
        return (
            f"the ranks' collective counts disagree in {_group_text(f.group, world)}: {who} at {a['op']} "
            f"#{a['seq']}, {them} at #{b['seq']}: a rank made an extra collective call earlier, or skipped one."
        )
    if a["op"] != b["op"]:
        return (
            f"{who} {is_} in {a['op']} #{a['seq']} ({site_text(a.get('site'))}) while "
            f"{them} wait in {b['op']} #{b['seq']} ({site_text(b.get('site'))}) of {_group_text(f.group, world)}: "
            "the ranks called different collectives: a rank skipped a call or made them in another order."
        )
    if (a.get("shape"), a.get("dtype")) != (b.get("shape"), b.get("dtype")):
        return (
            f"{who} and {them} are in the same {a['op']} #{a['seq']} with different tensors "
            f"({collective_text(a)} vs {collective_text(b)}): run with --debug to stop at the call."
        )
    return f"{who} {is_} in the same {a['op']} #{a['seq']} from another call site."


def _code(v: RankView):
    return v.key[1] if len(v.key) > 1 else None


def _code_line(site, state: dict, width: int = 48) -> str:
    """The source line of `site` as the rank sent it, without its comment, shortened."""
    for f in state.get("frames") or []:
        if site and (f["file"], f["line"]) == (site[0], site[1]) and f.get("code"):
            code = f["code"].split("  #")[0].strip()
            return code if len(code) <= width else code[: width - 3] + "..."
    return ""


def _top(state: dict | None) -> str:
    frames = (state or {}).get("frames") or []
    frames = ([f for f in frames if f.get("user")] or frames)[:3]
    return (
        f"; its main thread: {' <- '.join(site_text((f['file'], f['line'], f['func'])) for f in frames)}"
        if frames
        else ""
    )
