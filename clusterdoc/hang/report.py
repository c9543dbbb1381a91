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
from collections.abc import Mapping

_SIGNALS = {s.value: s.name for s in signal.Signals}


def ranks_text(ranks) -> str:
    """[0, 2, 3] -> '0,2-3' (Slurm's and dshbak's way)."""
    ranks = sorted(ranks)
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(out)


def _who(ranks) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {ranks_text(ranks)}"


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
    text = f"{c['op']} #{c['seq']}"
    if c.get("dtype") and c.get("shape") is not None:
        text += f" {c['dtype']}[{','.join(map(str, c['shape']))}]"
    if c.get("group") not in (None, "world"):
        text += f" ({c['group']})"
    return text


def oldest(state: dict) -> dict | None:
    """The rank's unfinished collective that started first (blocking or async, e.g. a DDP bucket)."""
    col = state.get("collectives") or {}
    found = col.get("current")
    for p in col.get("pending") or []:
        if found is None or p["start"] < found["start"]:
            found = p
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
                where = (
                    "failed in " + collective_text(failed)
                    if failed
                    else "last seen in " + collective_text(seen)
                    if seen
                    else "last seen outside any collective"
                )
                self.text += f" ({where}, at {site_text(_where(state, seen or failed))})"
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
                c["seq"],
                c.get("group"),
                c.get("dtype"),
                tuple(c.get("shape") or ()),
                tuple(c.get("site") or ()),
                c.get("note"),
            )
            note = f" ({c['note']})" if c.get("note") else ""
            self.text = f"in {collective_text(c)}{note}   {site_text(c.get('site'))}"
        else:
            where = _where(state, None)
            self.kind, self.key = "idle", ("idle", tuple(where or ()))
            self.text = f"not in a collective   {site_text(where)}"
            code = _code_line(where, state)
            if code:
                self.text += f": {code}"

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
) -> str:
    """The grouped report. `exits`: rank -> exit code for the ranks that are gone (None: gone, code unknown)."""
    exits = exits or {}
    views = [RankView(r, states.get(r), exits.get(r), r in exits) for r in range(world)]
    groups: dict[tuple, list[RankView]] = {}
    for v in views:
        groups.setdefault(v.key, []).append(v)
    ordered = sorted(groups.values(), key=lambda g: g[0].rank)
    waiting = [g for g in ordered if g[0].kind == "in"]
    longest = max((v for v in views if v.kind == "in"), key=lambda v: v.waited, default=None)
    ref = max(waiting or ordered, key=lambda g: (len(g), longest in g if longest else False))
    ref_longest = max(ref, key=lambda v: v.waited) if ref[0].kind == "in" else longest
    lines = [headline or _headline(views, ref_longest)]
    width = max(len(_who([v.rank for v in g])) for g in ordered)
    for g in ordered:
        mark = "" if g is ref or len(ordered) == 1 else "      <- differs"
        lines.append(f"  {_who([v.rank for v in g]):<{width}}  {g[0].text}{mark}")
    lines += [
        textwrap.fill(d, width=110, initial_indent="  ", subsequent_indent="    ") for d in diagnose(ordered, ref)
    ]
    if stacks_hint:
        lines.append(f"  stacks: {stacks_hint}")
    return "\n".join(lines)


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
    return f"clusterdoc: job stalled: {c['op']} #{c['seq']} has waited {longest.waited:.0f} s on {_who(same)}"


def diagnose(groups: list[list[RankView]], ref: list[RankView]) -> list[str]:
    """The situation in words, one sentence per group that differs from the reference."""
    out = []
    r0 = ref[0]
    for g in groups:
        if g is ref:
            continue
        v, who = g[0], _who([x.rank for x in g])
        if v.kind == "gone":
            out.append(
                f"{who} {'is' if len(g) == 1 else 'are'} gone ({exit_text(_code(v))}): "
                "the others wait for it, or fail as soon as they need it."
            )
        elif v.kind == "silent":
            out.append(
                f"{who} did not answer: its process may be stuck in native code holding the GIL "
                "(py-spy dump --native --pid PID on its node shows where)."
            )
        elif v.kind == "idle":
            out.append(
                f"{who} {'is' if len(g) == 1 else 'are'} in no collective while the others wait"
                f"{_top(v.state)} (a data loader, a lock, a loop, or a collective the others already "
                "passed: see its stacks)."
            )
        elif r0.kind == "in":
            out.append(_compare(v, g, r0, ref))
    return out


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
    frames = ((state or {}).get("frames") or [])[:3]
    return (
        f"; its main thread: {' <- '.join(site_text((f['file'], f['line'], f['func'])) for f in frames)}"
        if frames
        else ""
    )


def _compare(v: RankView, g, r0: RankView, ref) -> str:
    a, b = v.collective, r0.collective
    assert a is not None and b is not None  # both are "in" a collective
    who, them = _who([x.rank for x in g]), _who([x.rank for x in ref])
    if a["op"] != b["op"]:
        return (
            f"{who} {'is' if len(g) == 1 else 'are'} in {a['op']} #{a['seq']} ({site_text(a.get('site'))}) while "
            f"{them} wait in {b['op']} #{b['seq']} ({site_text(b.get('site'))}): the ranks called different "
            "collectives: a rank skipped a call or made them in another order."
        )
    if a["seq"] != b["seq"]:
        return (
            f"the ranks' collective counts disagree: {who} at {a['op']} #{a['seq']}, {them} at #{b['seq']}: "
            "a rank made an extra collective call earlier, or skipped one."
        )
    if (a.get("shape"), a.get("dtype")) != (b.get("shape"), b.get("dtype")):
        return (
            f"{who} and {them} are in the same {a['op']} #{a['seq']} with different tensors "
            f"({collective_text(a)} vs {collective_text(b)}): run with --debug to stop at the call."
        )
    return f"{who} {'is' if len(g) == 1 else 'are'} in the same {a['op']} #{a['seq']} from another call site."
