"""Flight recorder dumps in a job folder, read as the shim's collective records (for `clusterdoc trace`).

Two sources: the shim's per-rank dumps, written by each rank's watchdog on a stall (`fr/rank<R>.json`: torch's
JSON with the group names added), and torch's own NCCL dumps (`nccl_trace_rank_<R>`, a pickle, written on a
NCCL timeout when TORCH_NCCL_DEBUG_INFO_TEMP_FILE points there). A job folder is untrusted: files are read
bounded, a pickle only through an unpickler that builds plain containers and nothing else, and an entry that
lacks a field or has the wrong type is skipped, never a crash (torch's fr_trace analyzer raises KeyError on
gloo dumps, whose pg_config is empty: we take the group names from our own map, else the group id).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import sysconfig
from pathlib import Path

from clusterdoc import private

MAX_DUMP = 64 * 1024 * 1024
_DTYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
           "Int": "int32", "Byte": "uint8", "Bool": "bool"}  # fmt: skip


class _PlainUnpickler(pickle.Unpickler):
    """Dicts, lists, tuples, strings and numbers only: a crafted dump cannot name a class or a function."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing {module}.{name} in a flight recorder dump")


def load(path: Path) -> dict | None:
    """One dump as a dict, or None when it cannot be read (not a dump, cut short, too large, a link)."""
    try:
        data = private.read(path, MAX_DUMP)
    except OSError:
        return None
    try:
        doc = json.loads(data) if data[:1] in (b"{", b" ", b"\n") else _PlainUnpickler(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - a broken or hostile file: not a dump
        return None
    return doc if isinstance(doc, dict) else None


def records(doc: dict) -> list[dict]:
    """The dump's entries as the shim's trace records (op, seq, group, dtype, shape, site, start, end)."""
    ours = doc.get("clusterdoc")
    groups = ours.get("groups") if isinstance(ours, dict) else None
    names: dict = groups if isinstance(groups, dict) else {}
    out = []
    for e in doc.get("entries") or []:
        try:
            out.append(record(e, names))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
    return out


def record(e: dict, names: dict) -> dict:
    """One entry as a record; KeyError/TypeError/ValueError when it is not a well-formed entry."""
    pg = e.get("process_group") or [e.get("pg_id", "?")]
    p2p = bool(e.get("is_p2p"))
    sizes, dtypes = e.get("input_sizes") or [], e.get("input_dtypes") or []
    start = int(e["time_created_ns"]) / 1e9
    rec: dict = {
        "op": str(e["profiling_name"]).split(":", 1)[-1],
        "seq": int(e["p2p_seq_id" if p2p else "collective_seq_id"]),
        "group": str(names.get(str(pg[0]), f"group {pg[0]}")),
        "dtype": _DTYPES.get(str(dtypes[0]), str(dtypes[0]).lower()) if dtypes else None,
        "shape": [int(x) for x in sizes[0]] if sizes else None,
        "site": _site(e.get("frames")),
        "start": start,
        "note": "flight recorder",
        "source": "flight recorder",
    }
    done = e.get("time_discovered_completed_ns")
    if done:
        rec["end"] = int(done) / 1e9
    elif e.get("retired") or e.get("state") == "completed":
        rec["end"] = start  # finished, when not recorded (gloo): drawn at its start
        rec["note"] = "flight recorder; its end time is not recorded"
    return rec


def _site(frames) -> list | None:
    """The first frame (innermost first) that is not torch's, the shim's or the interpreter's."""
    for f in frames if isinstance(frames, list) else []:
        file = str(f.get("filename") or "") if isinstance(f, dict) else ""
        if file and not file.startswith("<") and not any(part in file for part in _NOT_USER):
            return [file, f.get("line"), f.get("name")]
    return None


_NOT_USER = (
    f"{os.sep}torch{os.sep}",
    f"{os.sep}clusterdoc{os.sep}shim{os.sep}",
    sysconfig.get_paths()["stdlib"] + os.sep,
)


def read_folder(folder: Path) -> dict[int, list[dict]]:
    """Every rank's records from the dumps in a job folder: fr/rank<R>.json, else nccl_trace_rank_<R>."""
    out: dict[int, list[dict]] = {}
    paths = sorted(Path(folder).glob("fr/rank*.json")) or sorted(Path(folder).glob("nccl_trace_rank_*"))
    for path in paths:
        m = re.search(r"(\d+)(\.json)?$", path.name)
        doc = load(path) if m else None
        if doc is not None and m:
            recs = records(doc)
            if recs:
                out[int(m.group(1))] = recs
    return out


P2P = ("send", "recv", "isend", "irecv", "batch_isend_irecv")  # what gloo's recorder does not keep


def merge(shim: dict[int, list[dict]], dumps: dict[int, list[dict]]) -> dict[int, list[dict]]:
    """Per rank: the recorder's records (every op of every group, the stall's unfinished ones included), and
    the shim's (`--trace`) from before the recorder's window, and its point-to-point ops."""
    out = dict(shim)
    for rank, recs in dumps.items():
        first = min(r["start"] for r in recs)
        older = [r for r in shim.get(rank, []) if r["start"] < first or r.get("op") in P2P]
        out[rank] = sorted(older + recs, key=lambda r: r["start"])
    return out
