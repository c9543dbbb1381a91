"""`clusterdoc trace JOB`: every rank's collectives as one Chrome / Perfetto trace (Trace Event Format).

One process per rank (its track), one complete event ("ph": "X") per collective named `op #seq`, with
its shape, group, call site and, where it can be told, the time it spent waiting for the slowest rank of the
same call (the last rank to start it): a nested "waiting for rank K" slice. Unfinished collectives end at
the trace's end with `"unfinished": true`: a stall is seen at a glance. Each rank also has a counter track,
"waiting %": the share of each of BINS slices of the trace it spent with a collective outstanding (the figure
the straggler watch judges, shim/straggler.py): a straggler's track sits low while the others' sit high.
Opens in ui.perfetto.dev or chrome://tracing.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from clusterdoc import private

MAX_RANK_FILE = 64 << 20  # what is read of one rank's trace file (about 300,000 collectives)
BINS = 200  # slices of the trace's span in the "waiting %" counter tracks


MAX_RANK_FILES = 16384  # trace files read from one job (one per rank)
MAX_TOTAL = 256 << 20  # what is read of all of them together


def read_records(folder: Path, skipped: list | None = None) -> dict[int, list[dict]]:
    """Each rank's records from trace/rank<R>.jsonl. The files are the job's (its owner can edit them): read
    bounded (MAX_RANK_FILE each, MAX_TOTAL in all, MAX_RANK_FILES files) and without following symlinks (OSError:
    a FIFO or a symlink in place of one), and a record not of the form the shim writes (a time that is no finite
    time, a shape that is not a short list of integers, a value nested deeper than a record's) is skipped like a
    line cut short by a killed rank; how many were skipped, per file, is added to `skipped`."""
    out: dict[int, list[dict]] = {}
    paths = [p for p in sorted(Path(folder).glob("rank*.jsonl")) if p.stem[4:].isdigit()]
    if len(paths) > MAX_RANK_FILES:
        raise OSError(
            errno.EFBIG, f"{len(paths)} rank trace files, more than the {MAX_RANK_FILES} clusterdoc reads", str(folder)
        )
    left = MAX_TOTAL
    for path in paths:
        if left <= 0:
            if skipped is not None:
                skipped.append(f"{path} and later ranks' files: past {MAX_TOTAL >> 20} MiB of trace in all, not read")
            break
        data = private.read(path, min(MAX_RANK_FILE, left))
        left -= len(data)
        recs, bad = [], 0
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                rec = private.loads(line)
            except ValueError:
                bad += 1  # a line cut short by a killed rank, or not JSON
                continue
            if _well_formed(rec):
                recs.append(rec)
            else:
                bad += 1
        if bad and skipped is not None:
            skipped.append(f"{path}: {bad} malformed record(s) skipped")
        if recs:
            out[int(path.stem[4:])] = recs
    return out


def _well_formed(rec) -> bool:
    def number(v) -> bool:
        try:
            return isinstance(v, (int, float)) and not isinstance(v, bool) and abs(float(v)) <= 1e12
        except OverflowError:  # an integer of 400 digits
            return False

    def short(v, n=4096) -> bool:
        return v is None or isinstance(v, str) and len(v) <= n

    shape = rec.get("shape") if isinstance(rec, dict) else None
    return (
        isinstance(rec, dict)
        and number(rec.get("start"))
        and (number(rec["end"]) if "end" in rec else True)
        and isinstance(rec.get("seq"), int)
        and not isinstance(rec.get("seq"), bool)
        and abs(rec["seq"]) < 1 << 62
        and isinstance(rec.get("op"), str)
        and len(rec["op"]) <= 200
        and (short(rec.get("group"), 200) or type(rec.get("group")) is int and abs(rec["group"]) < 1 << 62)
        and short(rec.get("dtype"), 64)
        and short(rec.get("note"))
        and short(rec.get("error"))
        and (shape is None or isinstance(shape, list) and len(shape) <= 16 and all(type(x) is int for x in shape))
        and (
            rec.get("site") is None
            or isinstance(rec["site"], list)
            and len(rec["site"]) >= 3
            and short(rec["site"][0])
            and rec["site"][0] is not None
            and (rec["site"][1] is None or type(rec["site"][1]) is int)
            and short(rec["site"][2], 200)
        )
    )


def build(records: dict[int, list[dict]], hosts: dict[int, str] | None = None) -> dict:
    """The trace JSON object ({"traceEvents": [...], "displayTimeUnit": "ms"})."""
    hosts = hosts or {}
    starts = [r["start"] for recs in records.values() for r in recs]
    if not starts:
        return {"traceEvents": [], "displayTimeUnit": "ms"}
    t0 = min(starts)
    end = max(r.get("end", r["start"]) for recs in records.values() for r in recs)
    latest: dict[tuple, tuple[float, int]] = {}  # (source, group, seq) -> (latest start, its rank)
    for rank, recs in records.items():
        for r in recs:
            key = (r.get("source"), r.get("group"), r["seq"])  # the recorder's numbers are not the shim's
            if key not in latest or r["start"] > latest[key][0]:
                latest[key] = (r["start"], rank)
    events = []
    for rank in sorted(records):
        name = f"rank {rank}" + (f" ({hosts[rank]})" if rank in hosts else "")
        events.append({"name": "process_name", "ph": "M", "pid": rank, "tid": 0, "args": {"name": name}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": rank, "tid": 0, "args": {"sort_index": rank}})
        for r in records[rank]:
            stop = r.get("end", end)
            args = {
                "seq": r["seq"],
                "group": r.get("group"),
                "dtype": r.get("dtype"),
                "shape": r.get("shape"),
                "site": _site(r.get("site")),
            }
            if r.get("note"):
                args["note"] = r["note"]
            if "end" not in r:
                args["unfinished"] = True
            if r.get("error"):
                args["error"] = r["error"]
            last_start, last_rank = latest[(r.get("source"), r.get("group"), r["seq"])]
            wait = min(max(0.0, last_start - r["start"]), stop - r["start"])
            if wait > 0:
                args["waited_for_slowest_ms"] = round(wait * 1e3, 3)
            events.append(
                {
                    "name": f"{r['op']} #{r['seq']}",
                    "cat": "collective",
                    "ph": "X",
                    "pid": rank,
                    "tid": 0,
                    "ts": _us(r["start"] - t0),
                    "dur": _us(stop - r["start"]),
                    "args": args,
                }
            )
            if wait > 0 and last_rank != rank:
                events.append(
                    {
                        "name": f"waiting for rank {last_rank}",
                        "cat": "wait",
                        "ph": "X",
                        "pid": rank,
                        "tid": 0,
                        "ts": _us(r["start"] - t0),
                        "dur": _us(wait),
                        "args": {},
                    }
                )
        events += waiting_counter(rank, records[rank], t0, end)
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def waiting_counter(rank: int, recs: list[dict], t0: float, end: float, bins: int = BINS) -> list[dict]:
    """The rank's "waiting %" counter: per slice of [t0, end], the share of it covered by its collectives
    (overlapping ones counted once; unfinished ones run to `end`)."""
    width = (end - t0) / bins
    if width <= 0:
        return []
    covered = [0.0] * bins
    reach = t0  # the union so far ends here
    for start, stop in sorted((r["start"], r.get("end", end)) for r in recs):
        start = max(start, reach)
        if stop <= start:
            continue
        first, last = (min(int((t - t0) / width), bins - 1) for t in (start, stop))
        for i in range(first, last + 1):  # spread [start, stop) over the slices it crosses
            lo, hi = max(start, t0 + i * width), stop if i == bins - 1 else min(stop, t0 + (i + 1) * width)
            covered[i] += max(0.0, hi - lo)
        reach = stop
    return [
        {
            "name": "waiting %",
            "ph": "C",
            "pid": rank,
            "tid": 0,
            "ts": _us(i * width),
            "args": {"waiting": round(min(100.0, 100 * c / width), 1)},
        }
        for i, c in enumerate(covered)
    ]


def _site_form(site) -> bool:
    return isinstance(site, list) and len(site) >= 3 and isinstance(site[0], str)


def _us(seconds: float) -> float:
    return round(seconds * 1e6, 1)


def _site(site) -> str | None:
    return f"{os.path.basename(site[0])}:{site[1]} in {site[2]}" if site else None
