"""How `clusterdoc why --log` does on a folder of real logs: one table in, one score out (used by
scripts/why_score.py and tests/test_why_real_logs.py, so both judge the same way).

A folder holds logs and a SOURCES.md whose table rows are `| file | source | cause | culprit | why |`: `cause` is
the category the log's thread settled on (`a, b`: either is right; `ambiguous`: the verdict must be "unknown"
with at least two candidates), `culprit` is `rank N`, `node NAME` or `-`. A verdict is right when its category
is one of the row's; "unknown" is a miss, never wrong; any other category is a confident wrong. A culprit is
named when the cause's ranks (or nodes) hold it, or its headline or evidence says it.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path

from clusterdoc.why import foreign, verdict

MAX_LOG = 64 << 20  # a fixture is a pasted excerpt: a bigger file is read through why's own reader


@dataclass
class Row:
    file: str
    source: str
    cause: str
    culprit: str

    @property
    def truths(self) -> list[str]:
        return [t.strip() for t in self.cause.split(",") if t.strip()]


@dataclass
class Judged:
    row: Row
    category: str = "crash"
    headline: str = ""
    ranks: list[int] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    outcome: str = "crash"  # right, unknown, wrong, crash (ambiguous rows: right or wrong)
    culprit: bool | None = None  # named (True), missed (False), none to name (None)
    error: str = ""


def table(folder: Path) -> list[Row]:
    """The rows of folder/SOURCES.md whose first cell names a .log file."""
    rows = []
    for line in (folder / "SOURCES.md").read_text(errors="replace").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0].endswith(".log"):
            rows.append(Row(cells[0], cells[1], cells[2], cells[3]))
    return rows


def verdict_of(path: Path) -> verdict.Verdict:
    """What `clusterdoc why --log PATH` concludes (the same evidence path, read from the file's text)."""
    return verdict.judge(foreign.evidence_from_output(path.read_text(errors="replace"), "1"))


def named(c: verdict.Cause, culprit: str) -> bool:
    kind, _, who = culprit.partition(" ")
    said = c.headline + " " + " ".join(c.evidence)
    if kind == "rank":
        return who.isdigit() and (int(who) in c.ranks or f"rank {who}" in said)
    return who in c.nodes or who in c.headline


def judge_row(folder: Path, row: Row) -> Judged:
    j = Judged(row)
    try:
        v = verdict_of(folder / row.file)
    except Exception as err:  # the score counts it; the caller decides (the test fails on any)
        j.error = "".join(traceback.format_exception_only(type(err), err)).strip()
        return j
    c = v.cause
    if c is None:
        j.error = "no cause (the verdict says the job is fine)"
        return j
    j.category, j.headline, j.ranks, j.nodes = c.category, c.headline, list(c.ranks), list(c.nodes)
    if row.cause == "ambiguous":
        j.outcome = "right" if c.category == "unknown" and len(c.candidates) >= 2 else "wrong"
    elif c.category in row.truths:
        j.outcome = "right"
    elif c.category == "unknown":
        j.outcome = "unknown"
    else:
        j.outcome = "wrong"
    if row.culprit not in ("-", ""):
        j.culprit = named(c, row.culprit)
    return j


def score(folder: Path) -> dict:
    """Every row of folder/SOURCES.md judged, and the totals (see module doc)."""
    rows = table(folder)
    judged = [judge_row(folder, r) for r in rows]
    settled = [j for j in judged if j.row.cause != "ambiguous"]
    per: dict[str, list[int]] = {}
    for j in settled:
        for t in j.row.truths[:1]:  # a row's first category is the one it counts under
            per.setdefault(t, [0, 0])
            per[t][1] += 1
            per[t][0] += j.outcome == "right"
    with_culprit = [j for j in judged if j.culprit is not None]
    logs_here = sorted(p.name for p in folder.glob("*.log"))
    return {
        "folder": str(folder),
        "logs": len(judged),
        "without_row": sorted(set(logs_here) - {r.file for r in rows}),
        "settled": len(settled),
        "right": sum(j.outcome == "right" for j in settled),
        "unknown": sum(j.outcome == "unknown" for j in settled),
        "ambiguous": len(judged) - len(settled),
        "ambiguous_right": sum(j.outcome == "right" for j in judged if j.row.cause == "ambiguous"),
        "wrong": [
            {"file": j.row.file, "expected": j.row.cause, "got": j.category, "headline": j.headline[:200]}
            for j in judged
            if j.outcome == "wrong"
        ],
        "culprits": len(with_culprit),
        "culprits_named": sum(bool(j.culprit) for j in with_culprit),
        "culprits_missed": [
            {"file": j.row.file, "culprit": j.row.culprit, "ranks": j.ranks, "nodes": j.nodes}
            for j in with_culprit
            if not j.culprit
        ],
        "per_category": {k: {"right": v[0], "total": v[1]} for k, v in sorted(per.items())},
        "crashes": [{"file": j.row.file, "error": j.error} for j in judged if j.outcome == "crash"],
        "rows": [
            {
                "file": j.row.file,
                "expected": j.row.cause,
                "got": j.category,
                "outcome": j.outcome,
                "culprit": j.row.culprit,
                "culprit_named": j.culprit,
                "headline": j.headline[:200],
            }
            for j in judged
        ],  # fmt: skip
    }


def together(scores: list[dict], name: str) -> dict:
    """One score for several folders (a set collected in parts): the sums of their totals and lists."""
    out: dict = {"folder": name}
    for key in ("logs", "settled", "right", "unknown", "ambiguous", "ambiguous_right", "culprits", "culprits_named"):
        out[key] = sum(s[key] for s in scores)
    for key in ("without_row", "wrong", "culprits_missed", "crashes", "rows"):
        out[key] = [x for s in scores for x in s[key]]
    per: dict[str, dict[str, int]] = {}
    for s in scores:
        for k, v in s["per_category"].items():
            got = per.setdefault(k, {"right": 0, "total": 0})
            got["right"] += v["right"]
            got["total"] += v["total"]
    out["per_category"] = dict(sorted(per.items()))
    return out


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else f"{n}/0"


def lines(s: dict, every: bool = False) -> list[str]:
    """The score as text: totals, confident wrong, per category (every row too with `every`)."""
    out = [f"{s['folder']}: {s['logs']} logs, {s['settled']} settled, {s['ambiguous']} ambiguous"]
    if every:
        out += [
            f"  {'ok  ' if r['outcome'] == 'right' else r['outcome'].upper():8} {r['file']}: {r['got']}: "
            f"{r['headline'][:100]}" + ("" if r["culprit_named"] is not False else f"  [culprit {r['culprit']} missed]")
            for r in s["rows"]
        ]
    out += [
        f"  right category   {pct(s['right'], s['settled'])}",
        f"  unknown          {s['unknown']}",
        f"  ambiguous kept unknown {s['ambiguous_right']}/{s['ambiguous']}",
        f"  confident wrong  {len(s['wrong'])}"
        + "".join(  # named only with every row: a held-out folder's totals must not tell which log or what it holds
            f"\n    {w['file']}: expected {w['expected']}, got {w['got']}: {w['headline'][:120]}"
            for w in (s["wrong"] if every else [])
        ),
        f"  culprit named    {pct(s['culprits_named'], s['culprits'])}",
        "  per category     " + ", ".join(f"{k} {v['right']}/{v['total']}" for k, v in s["per_category"].items()),
        f"  crashes          {len(s['crashes'])}" + "".join(f"\n    {c['file']}: {c['error']}" for c in s["crashes"]),
    ]
    if s["without_row"]:
        out.append(f"  logs without a row in SOURCES.md: {', '.join(s['without_row'])}")
    return out
