"""What this rank's process groups are doing, read from torch's flight recorder (no wrapper can be gone around).

Every collective a process group issues (torch.distributed's, functional collectives and their wait_tensor,
DDP's reducer, FSDP1/FSDP2, DTensor redistribution, compiled graphs) lands in the recorder as an entry with its
group, the group's own sequence number, op, sizes, dtypes and, when it completes, `retired`. Under the shim it is
on for gloo too (TORCH_FR_BUFFER_SIZE, set before the group is made; watch.flight_recorder_env). The watchdog
reads it from its own thread while the main thread waits (a rank blocked in gloo releases the GIL):

- `status()` every tick: per group, issued and completed counts (cheap: no entries), the progress signal;
- `unfinished()` on a dump request: the entries not yet retired, each with the user's call site (from the
  recorder's Python frames, when torch can name them cheaply) and what the shim's own records add (DDP's bucket
  note, the Python op name), and how many collectives each group has issued.

Facts measured with torch 2.13 CPU: the recorder's JSON costs ~0.1 ms without entries and 0.1-0.5 ms per entry
with them (so the buffer is kept at BUFFER entries); naming the frames needs torch._dynamo imported (seconds the
first time), so frames are asked for only when the job has imported it already. gloo records no point-to-point
op: a rank blocked in send/recv is seen from its main thread's frame (peer and tag). A torch with no recorder
for gloo keeps it empty: the watchdog then falls back to the shim's own records and says so once (`why_off`).
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import threading
from typing import Any

from clusterdoc import clock
from clusterdoc.hang import recorder

from . import track

BUFFER = "500"  # entries kept per rank: the recorder's JSON grows with it (~0.2 ms per entry)
# torch.distributed functions a blocked main thread may sit in, with the arguments that name the other side
_BLOCKING = {
    "recv": ("src", "tag"),
    "send": ("dst", "tag"),
    "recv_object_list": ("src",),
    "send_object_list": ("dst",),
}


def _c10d():
    return sys.modules.get("torch._C._distributed_c10d")


def available() -> bool:
    """The recorder can be read and is switched on (its buffer size set before the group was made)."""
    c10d = _c10d()
    return (
        c10d is not None
        and hasattr(c10d, "_dump_fr_trace_json")
        and (os.environ.get("TORCH_FR_BUFFER_SIZE") or os.environ.get("TORCH_NCCL_TRACE_BUFFER_SIZE") or "0") != "0"
    )


def _dump(entries: bool) -> dict:
    c10d = _c10d()
    assert c10d is not None
    return json.loads(c10d._dump_fr_trace_json(entries, False))


def status() -> dict[str, tuple[int, int]]:
    """Per recorder group name: (issued, completed), counting every op (point-to-point too)."""
    out = {}
    for pg, s in (_dump(False).get("pg_status") or {}).items():
        try:
            out[str(pg)] = (int(s["last_enqueued_collective"]), int(s["last_completed_collective"]))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def group_names() -> dict[str, str]:
    """Recorder group name ("0", "3", ...) -> the shim's name for it ("world", "ranks 0,2")."""
    try:
        from torch.distributed import distributed_c10d as c10d

        pgs = list(c10d._world.pg_names.items())
        default = c10d._world.default_pg
    except Exception:  # no group yet, or a torch without these internals
        return {}
    return {str(name): ("world" if pg is default else track._group_name(pg)) for pg, name in pgs}


def _entries(frames: bool) -> list[dict]:
    c10d = _c10d()
    assert c10d is not None
    if frames:
        try:
            return pickle.loads(c10d._dump_fr_trace(True, True, False)).get("entries") or []
        except Exception:  # fall back to the entries without frames
            pass
    return _dump(True).get("entries") or []


# recorder group name -> (first, last) sequence numbers of the collectives the shim itself issued there (the job
# secret's two all_gathers, shim/secret.py): not the job's, so left out, and the job's numbered as if they were not
_OURS: dict[str, tuple[int, int]] = {}


def issued_now() -> dict[str, int]:
    """Per recorder group name, how many collectives it has issued so far ({} without a recorder)."""
    if not available():
        return {}
    try:
        return {pg: issued for pg, (issued, _) in status().items()}
    except Exception:  # a torch without this dump: nothing to renumber
        return {}


def hide_own(before: dict[str, int]) -> None:
    """The collectives issued since `before` (issued_now()) were the shim's own: left out from now on."""
    for pg, last in issued_now().items():
        first = before.get(pg, 0) + 1
        if last >= first:
            _OURS[pg] = (first, last)


def _renumber(rec: dict, pg: str) -> dict | None:
    span = _OURS.get(pg)
    if span is None or rec.get("p2p"):
        return rec
    first, last = span
    if first <= rec["seq"] <= last:
        return None
    if rec["seq"] > last:
        rec["seq"] -= last - first + 1
    return rec


def normal(entry: dict, names: dict[str, str]) -> dict | None:
    """One recorder entry in the shim's record form (what report.py and trace.py read); None for a collective the
    shim issued itself (hide_own)."""
    pg = entry.get("process_group")
    found = _renumber(recorder.record(entry, names), str(pg[0]) if isinstance(pg, (list, tuple)) and pg else "")
    if found is None:
        return None
    rec = found
    for key in ("end", "note"):
        rec.pop(key, None)
    rec["site"], rec["source"] = _site(entry.get("frames")), "flight recorder"
    if entry.get("is_p2p"):
        rec["p2p"] = True
    return rec


def _site(frames) -> list | None:
    """The first frame (innermost first) that is the user's: not torch's, not the shim's, not the stdlib's."""
    for f in frames or []:
        file = f.get("filename") or ""
        if file and not file.startswith("<") and not internal_file(file):
            return [file, f.get("line"), f.get("name")]
    return None


def internal_file(file: str) -> bool:
    if not track._INTERNAL:
        track._INTERNAL = track._internal_dirs()
    return file.startswith(track._INTERNAL) or (file.startswith(track._STDLIB) and "-packages" not in file)


RETIRED = 8  # the recorder's last completed collectives a dump carries (as the shim's own `recent`)


def unfinished(shim_records: list[dict]) -> tuple[list[dict], dict[str, int], list[dict]]:
    """(the recorder's unfinished entries, oldest first, each merged with the shim's record of the same call;
    group -> the last sequence number issued on it; its last RETIRED completed ones). `shim_records`: the tracker's
    unfinished records. The completed ones are numbered as the unfinished ones are: the recorder counts calls the
    shim never sees (DDP's start-up broadcasts), so the shim's own numbers cannot be set against these."""
    names = group_names()
    raw = _entries(frames="torch._dynamo" in sys.modules)
    skew = clock.stepped()  # the recorder's times are the wall clock's; the shim's are clock.now()'s
    issued: dict[str, int] = {}
    out = []
    retired: list[dict] = []
    for e in raw:
        rec = normal(e, names)
        if rec is None:
            continue
        rec["start"] -= skew
        if not rec.get("p2p"):
            issued[rec["group"]] = max(issued.get(rec["group"], 0), rec["seq"])
        if not e.get("retired"):
            out.append(rec)
        elif not rec.get("p2p"):
            retired.append(rec)
    unused = list(shim_records)
    for rec in out:
        mine = _match(rec, unused)
        if mine is not None:
            unused.remove(mine)
            rec["op"] = mine["op"]  # torch.distributed's name (gloo records reduce_scatter as all_reduce)
            rec["site"] = mine.get("site") or rec["site"]
            if mine.get("note"):
                rec["note"] = mine["note"]
    out += [dict(r, source="shim") for r in unused]  # ops the recorder does not see (gloo's point-to-point)
    out.sort(key=lambda r: r["start"])
    now = clock.now()
    for rec in out:
        rec["waited"] = round(now - rec["start"], 3)
    return out, issued, retired[-RETIRED:]


def _match(rec: dict, records: list[dict]) -> dict | None:
    """The shim's record of the same call: same group and tensor shape, started just before the entry."""
    best = None
    for r in records:
        if r.get("group") == rec["group"] and (r.get("shape") is None or r.get("shape") == rec["shape"]):
            gap = rec["start"] - r.get("start", 0.0)
            if -0.5 <= gap <= 5.0 and (best is None or abs(gap) < abs(rec["start"] - best["start"])):
                best = r
    return best


def blocked_in(frame) -> dict | None:
    """Where the main thread waits in torch.distributed, read from its frames (outermost such call): the op,
    and for point-to-point the peer and the tag, which gloo's recorder does not keep."""
    found = None
    while frame is not None:
        code = frame.f_code
        if code.co_name in _BLOCKING and code.co_filename.endswith(os.path.join("distributed", "distributed_c10d.py")):
            found = frame
        frame = frame.f_back
    if found is None:
        return None
    op = found.f_code.co_name
    try:
        args = dict(found.f_locals)
    except Exception:  # a frame leaving as we read it
        return {"op": op}
    out: dict = {"op": op}
    for name in _BLOCKING[op]:
        value = args.get(name)
        if isinstance(value, int):
            out["peer" if name in ("src", "dst") else name] = value
    if args.get("group") is not None:
        out["group"] = track._group_name(args["group"])
    tensor: Any = args.get("tensor")
    if hasattr(tensor, "shape"):
        out["shape"], out["dtype"] = list(tensor.shape), str(tensor.dtype).replace("torch.", "")
    return out


_warned = threading.Event()


def why_off(backend: str) -> str:
    """Why the recorder gives us nothing: this torch has none for the backend, or it was off when the group
    was made."""
    import torch

    c10d = _c10d()
    if c10d is None or not hasattr(c10d, "_dump_fr_trace_json") or available():
        return f"torch {torch.__version__} has no flight recorder for {backend}"
    return (
        "the flight recorder was off when the process group was made (call shim.init() before "
        f"init_process_group, or export TORCH_FR_BUFFER_SIZE={BUFFER})"
    )


def say_fallback_once(reason: str) -> None:
    """No recorder: the shim's own records are all the hang watch sees (said once per process)."""
    if _warned.is_set():
        return
    _warned.set()
    print(
        f"clusterdoc: {reason}: the hang watch sees only the collectives the shim wraps (not functional "
        "collectives, FSDP, DTensor or compiled graphs)",
        file=sys.stderr,
        flush=True,
    )
