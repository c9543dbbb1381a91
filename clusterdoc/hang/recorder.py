"""Flight recorder dumps in a job folder, read as the shim's collective records (for `clusterdoc trace`).

Two sources: the shim's per-rank dumps, written by each rank's watchdog on a stall (`fr/rank<R>.json`: torch's
JSON with the group names added), and torch's own NCCL dumps (`nccl_trace_rank_<R>`, a pickle, written on a
NCCL timeout when TORCH_NCCL_DEBUG_INFO_TEMP_FILE points there). A job folder is untrusted: files are read
bounded, a pickle only after a scan of its opcodes (plain containers and scalars only: no global, no reduce, no
build; at most MAX_OPS opcodes and MAX_MEMO_GETS memo references, so a memo bomb, where a few bytes name the
same big object again and again, is refused before it is built) and then through an unpickler that can name no
class; at most MAX_ENTRIES entries and MAX_FRAMES frames of each are read, and an entry that lacks a field or
has the wrong type is skipped, never a crash (torch's fr_trace analyzer raises KeyError on
gloo dumps, whose pg_config is empty: we take the group names from our own map, else the group id).
"""

from __future__ import annotations

import io
import math
import os
import pickle
import pickletools
import re
import sysconfig
from pathlib import Path

from clusterdoc import private

MAX_DUMP = 64 * 1024 * 1024
MAX_DUMPS = 4096  # dump files read from one job folder (one per rank)
MAX_OPS = 2_000_000  # pickle opcodes of one dump (torch's 2,000 entries with their frames: ~300,000)
MAX_MEMO_GETS = 1_000_000  # references to an object already built (a memo bomb is made of these)
MAX_ENTRIES = 100_000  # entries read of one dump
MAX_FRAMES = 64  # frames of one entry looked at for its call site
_PLAIN_OPS = frozenset(
    "PROTO FRAME STOP MARK POP POP_MARK DUP PUT BINPUT LONG_BINPUT MEMOIZE GET BINGET LONG_BINGET NONE NEWTRUE "
    "NEWFALSE INT BININT BININT1 BININT2 LONG LONG1 LONG4 FLOAT BINFLOAT STRING BINSTRING SHORT_BINSTRING UNICODE "
    "BINUNICODE SHORT_BINUNICODE BINUNICODE8 BINBYTES SHORT_BINBYTES BINBYTES8 EMPTY_LIST APPEND APPENDS LIST "
    "EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_DICT DICT SETITEM SETITEMS EMPTY_SET ADDITEMS FROZENSET".split()
)
_DTYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
           "Int": "int32", "Byte": "uint8", "Bool": "bool"}  # fmt: skip


class _PlainUnpickler(pickle.Unpickler):
    """Dicts, lists, tuples, strings and numbers only: a crafted dump cannot name a class or a function."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing {module}.{name} in a flight recorder dump")


def scan_pickle(data: bytes) -> None:
    """ValueError unless `data` is a pickle of plain containers and scalars within the bounds above."""
    ops = gets = 0
    try:
        for op, _, _ in pickletools.genops(data):
            ops += 1
            if op.name not in _PLAIN_OPS:
                raise ValueError(f"it names code ({op.name}): only plain data is read")
            if op.name in ("GET", "BINGET", "LONG_BINGET"):
                gets += 1
                if gets > MAX_MEMO_GETS:
                    raise ValueError(f"more than {MAX_MEMO_GETS} references to objects already built (a memo bomb?)")
            if ops > MAX_OPS:
                raise ValueError(f"more than {MAX_OPS} pickle opcodes")
    except EOFError as exc:  # genops: ValueError on a bad opcode, EOFError when cut short
        raise ValueError(str(exc)) from None


def load(path: Path) -> dict | None:
    """One dump as a dict, or None when it cannot be read (not a dump, cut short, too large, a link)."""
    return load_why(path)[0]


def load_why(path: Path) -> tuple[dict | None, str]:
    """(the dump, "") or (None, why it was not read)."""
    try:
        data = private.read(path, MAX_DUMP)
    except OSError as err:
        return None, str(err.strerror or err)
    try:
        if data[:1] in (b"{", b" ", b"\n"):
            doc = private.loads(data.decode("utf-8", "replace"))
        else:
            scan_pickle(data)
            doc = _PlainUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # a broken or hostile file: not a dump
        return None, f"not a flight recorder dump ({type(exc).__name__}: {str(exc)[:200]})"
    return (doc, "") if isinstance(doc, dict) else (None, "not a flight recorder dump (not a dict)")


def records(doc: dict) -> list[dict]:
    """The dump's entries as the shim's trace records (op, seq, group, dtype, shape, site, start, end)."""
    ours = doc.get("clusterdoc")
    groups = ours.get("groups") if isinstance(ours, dict) else None
    names: dict = groups if isinstance(groups, dict) else {}
    out = []
    entries = doc.get("entries")
    for e in entries[:MAX_ENTRIES] if isinstance(entries, list) else []:
        try:
            out.append(record(e, names))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError):
            continue
    return out


def record(e: dict, names: dict) -> dict:
    """One entry as a record; KeyError/TypeError/ValueError when it is not a well-formed entry."""
    pg = e.get("process_group") or [e.get("pg_id", "?")]
    p2p = bool(e.get("is_p2p"))
    sizes, dtypes = e.get("input_sizes") or [], e.get("input_dtypes") or []
    start = _finite(int(e["time_created_ns"]) / 1e9)
    rec: dict = {
        "op": str(e["profiling_name"]).split(":", 1)[-1],
        "seq": int(e["p2p_seq_id" if p2p else "collective_seq_id"]),
        "group": str(names.get(str(pg[0]), f"group {pg[0]}")),
        "dtype": _DTYPES.get(str(dtypes[0]), str(dtypes[0]).lower()) if dtypes else None,
        "shape": [int(x) for x in sizes[0][:16]] if sizes else None,
        "site": _site(e.get("frames")),
        "start": start,
        "note": "flight recorder",
        "source": "flight recorder",
    }
    done = e.get("time_discovered_completed_ns")
    if done:
        rec["end"] = _finite(int(done) / 1e9)
    elif e.get("retired") or e.get("state") == "completed":
        rec["end"] = start  # finished, when not recorded (gloo): drawn at its start
        rec["note"] = "flight recorder; its end time is not recorded"
    return rec


def _finite(seconds: float) -> float:
    """ValueError for a time that is no time (int / 1e9 already raised OverflowError, a ValueError's kin)."""
    if not math.isfinite(seconds) or abs(seconds) > 1e12:
        raise ValueError("a time out of range")
    return seconds


def _site(frames) -> list | None:
    """The first frame (innermost first) that is not torch's, the shim's or the interpreter's."""
    for f in frames[:MAX_FRAMES] if isinstance(frames, list) else []:
        file = str(f.get("filename") or "")[:4096] if isinstance(f, dict) and isinstance(f.get("filename"), str) else ""
        if file and not file.startswith("<") and not any(part in file for part in _NOT_USER):
            line, name = f.get("line"), f.get("name")
            return [file, line if type(line) is int else None, name[:200] if isinstance(name, str) else None]
    return None


_NOT_USER = (
    f"{os.sep}torch{os.sep}",
    f"{os.sep}clusterdoc{os.sep}shim{os.sep}",
    sysconfig.get_paths()["stdlib"] + os.sep,
)


def read_folder(folder: Path, skipped: list | None = None) -> dict[int, list[dict]]:
    """Every rank's records from the dumps in a job folder: fr/rank<R>.json, else nccl_trace_rank_<R>. What was
    not read is added to `skipped` as "file: why"."""
    out: dict[int, list[dict]] = {}
    paths = sorted(Path(folder).glob("fr/rank*.json")) or sorted(Path(folder).glob("nccl_trace_rank_*"))
    if len(paths) > MAX_DUMPS and skipped is not None:
        skipped.append(f"{Path(folder)}: {len(paths)} dump files, only the first {MAX_DUMPS} read")
    for path in paths[:MAX_DUMPS]:
        m = re.search(r"(\d+)(\.json)?$", path.name)
        doc, why = load_why(path) if m else (None, "not a rank's dump")
        if doc is not None and m:
            recs = records(doc)
            if recs:
                out[int(m.group(1))] = recs
            elif skipped is not None:
                skipped.append(f"{path}: no well-formed entry")
        elif skipped is not None:
            skipped.append(f"{path}: {why}")
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
