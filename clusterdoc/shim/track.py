"""Collective tracking: every rank knows its current collective and its last completed one.

One wrapper per torch.distributed collective (the same wrapper debug mode's check runs in) records, per
call: the op, a per-group sequence number, the tensor's dtype and shape, the group, the user's call site
(the first frame outside torch and clusterdoc.shim) and the start time; completion (at return, or when an
async op's future completes) moves it to `last`. DDP's gradient all_reduce is issued by its C++ reducer from
autograd hooks, where no Python wrapper sees it: every DistributedDataParallel gets a comm hook that records
each bucket's all_reduce ("DDP gradient all_reduce, bucket k") and then does what DDP's default does (or
runs the user's own hook, registered through us). The watchdog (watch.py) reads this state from its thread.
While an OOM-retry attempt runs, each call's record also goes into GATE's log (shim/attempt.py) or the call
raises AttemptAborted, and DDPS keeps the live DDP models weakly (shim/ddpstate.py resets them before a retry).
The default group has one sequence whether a call names it or passes group=None.

Wrapped: every torch.distributed collective (all_gather_single/reduce_scatter_single and the names torch 2.13
deprecated, which hand off to them: one record per call, whichever name), the object collectives, point-to-point
ops (peer and tag recorded, numbered in a sequence of their own; gloo's p2p Works have no future, so their
records complete when the Work is waited on) and the functional collectives' Python entry points (DTensor,
tensor parallel: a record at the call, completed once issued; the wait happens where the result is first used).
A call that torch makes inside a wrapped one is passed straight through (INSIDE).

Cost: a dict lookup, one frame walk (cached per code object), two clock reads and a few attribute writes
per call, and at completion the time waited added to the rank's pace (its total and its call site's: what
the straggler watch reads, shim/pace.py); `bench/bench_tracking.py` measures it. Not seen: collectives bound by
name before install (`from torch.distributed import all_reduce` at import time, before shim.init()), functional
collectives traced into a compiled graph, and what C++ issues by itself (DDP's reducer is seen through its comm
hook, above): the process group's own view, torch's flight recorder (progress.py), sees those for the watchdog.
"""

from __future__ import annotations

import itertools
import linecache
import os
import sys
import sysconfig
import threading
import weakref
from collections import deque
from collections.abc import Callable
from threading import get_ident

from clusterdoc import clock

from .attempt import DESCRIBED, AttemptAborted, describe
from .straggler import WINDOW_SECONDS, WINDOW_STEPS

OPS = (
    "all_reduce",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "gather",
    "scatter",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all_single",
    "all_to_all",
    "barrier",
    "all_gather_single",
    "reduce_scatter_single",
    "all_gather_object",
    "broadcast_object_list",
    "gather_object",
    "scatter_object_list",
    "send",
    "recv",
    "isend",
    "irecv",
    "batch_isend_irecv",
)
# torch 2.13 deprecated these names; they hand off to the new ones (debug mode compares them as one op)
ALIASES = {"all_gather_into_tensor": "all_gather_single", "reduce_scatter_tensor": "reduce_scatter_single"}
P2P = frozenset({"send", "recv", "isend", "irecv", "batch_isend_irecv"})  # peer and tag recorded
_ALWAYS_ASYNC = frozenset({"isend", "irecv", "batch_isend_irecv"})
# where each op's representative tensor is: (position, keyword); a list argument means its first entry
_TENSOR_ARG = {
    "all_reduce": (0, "tensor"),
    "reduce": (0, "tensor"),
    "broadcast": (0, "tensor"),
    "all_gather": (1, "tensor"),
    "all_gather_into_tensor": (1, "input_tensor"),
    "gather": (0, "tensor"),
    "scatter": (0, "tensor"),
    "reduce_scatter": (0, "output"),
    "reduce_scatter_tensor": (1, "input"),
    "all_to_all_single": (1, "input"),
    "all_to_all": (1, "input_tensor_list"),
    "barrier": (None, None),
    "all_gather_single": (1, "input_tensor"),
    "reduce_scatter_single": (1, "input"),
    "all_gather_object": (None, None),
    "broadcast_object_list": (None, None),
    "gather_object": (None, None),
    "scatter_object_list": (None, None),
    "send": (0, "tensor"),
    "recv": (0, "tensor"),
    "isend": (0, "tensor"),
    "irecv": (0, "tensor"),
    "batch_isend_irecv": (None, None),  # its first op's tensor (_tensor_of)
}
GROUP_POS = {
    "all_reduce": 2,
    "reduce": 3,
    "broadcast": 2,
    "all_gather": 2,
    "gather": 3,
    "scatter": 3,
    "reduce_scatter": 3,
    "all_to_all_single": 4,
    "all_to_all": 2,
    "barrier": 0,
    "all_gather_into_tensor": 2,
    "reduce_scatter_tensor": 3,
    "all_gather_single": 2,
    "reduce_scatter_single": 3,
    "all_gather_object": 2,
    "broadcast_object_list": 2,
    "gather_object": 3,
    "scatter_object_list": 3,
    "send": 2,
    "recv": 2,
    "isend": 2,
    "irecv": 2,
    "batch_isend_irecv": 99,  # the ops' own group (_group_of)
}
_ASYNC_POS = {  # 99: no async_op argument
    "all_reduce": 3,
    "reduce": 4,
    "broadcast": 3,
    "all_gather": 3,
    "gather": 4,
    "scatter": 4,
    "reduce_scatter": 4,
    "all_to_all_single": 5,
    "all_to_all": 3,
    "barrier": 1,
    "all_gather_into_tensor": 3,
    "reduce_scatter_tensor": 4,
    "all_gather_single": 3,
    "reduce_scatter_single": 4,
}

ORIGINALS: dict = {}  # op name -> torch's own function (debug mode's exchange calls these directly)
TORCH: dict = {}  # op name -> what torch.distributed had before install (uninstall puts it back)
CHECK: Callable[..., bool] | None = None  # debug mode's pre-op check, set by debug.enable_debug(); None when off
GATE = None  # the OOM retry's gate while an attempt runs (shim/attempt.py); None otherwise
DDPS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # creation number -> live DDP
_ddp_numbers = itertools.count()


class Record:
    """One collective call as seen by this rank."""

    # replay, checked: set only in an OOM-retry attempt, when they differ from (op, None) and False (attempt.py)
    # peer, tag: point-to-point ops only (global rank, None for any source; a batch: lists)
    __slots__: tuple[str, ...] = ("op", "seq", "group", "dtype", "shape", "site", "start", "end", "note", "error")
    __slots__ += ("replay", "checked", "peer", "tag")

    def __init__(self, op, seq, group, shape, dtype, site, note=""):
        self.op, self.seq, self.group, self.site, self.note = op, seq, group, site, note
        self.shape, self.dtype = shape, dtype
        self.start = clock.now()
        self.end = None
        self.error = None

    def to_dict(self, now: float | None = None) -> dict:
        d = {
            "op": self.op,
            "seq": self.seq,
            "group": self.group,
            "start": self.start,
            "dtype": str(self.dtype).replace("torch.", "") if self.dtype is not None else None,
            "shape": list(self.shape) if self.shape is not None else None,
            "site": list(self.site) if self.site else None,
        }
        if self.note:
            d["note"] = self.note
        if self.op in P2P:
            d["peer"], d["tag"] = getattr(self, "peer", None), getattr(self, "tag", None)
        if self.end is not None:
            d["end"] = self.end
        elif now is not None:
            d["waited"] = round(now - self.start, 3)
        if self.error:
            d["error"] = self.error
        return d


RECENT = 8  # completed collectives kept for the hang report


class Tracker:
    """This rank's collectives. Written by the threads that call collectives, read by the watchdog."""

    def __init__(self):
        self.current = None  # the blocking collective the calling thread is in
        self.pending = {}  # id -> Record: async ops (DDP buckets, async_op=True) not yet done
        self.last = None  # the last completed collective
        # the last few completed ones: a rank past a call the others still wait in shows it finished that very call
        # (a lossy link lets a rank run 2 calls ahead: the hang report must not read that as an extra call)
        self.recent: deque = deque(maxlen=RECENT)
        self.failed = None  # the collective that raised (a peer died, a timeout)
        self.seq: dict = {}  # group key -> calls so far
        self.ops: dict = {}  # (group key, op) -> calls so far: an early exit says "after 7 all_reduce calls"
        self.trace: list | None = None  # every Record, with `submit --trace`
        self.where = None  # where.Where: this rank's place, in a file that outlives it (clusterdoc.run starts it)
        self.lock = threading.Lock()  # only for pending/trace, which async completions touch
        # pace (straggler.py): seconds with a collective outstanding (overlaps counted once), per call site too,
        # from the first collective's start to the last one's end: what a rank does before its first or after its
        # last collective (imports, setup, saving, the shim's exit work on rank 0) keeps nobody waiting
        self.origin = clock.now()
        self.waited = 0.0
        self.waited_until = 0.0  # the latest end counted so far
        self.waits: dict = {}  # call site -> seconds waited there
        self.steps = 0  # optimizer steps (install() hooks every optimizer)
        self.first_end = 0.0  # when the first collective ended (the same moment on every rank)
        self.start: dict | None = None  # the cumulative figures when the start-up ended (see _mark_start)

    def begin(
        self, op, group, shape, dtype, site, note="", is_async=False, gate=None, replay=None, checked=False, p2p=False
    ):
        """Record a collective about to be issued. is_async None: one that C++ issues out of our sight (DDP's
        forward), counted in its group's sequence but never shown as under way. In an OOM-retry attempt (`gate`,
        with `replay` and `checked` as attempt.py keeps them) the record goes into the gate's log, or the call
        raises AttemptAborted: inline, since this runs on every collective of every step. p2p: a point-to-point
        op, numbered in a sequence of its own (only two ranks take part: it must not shift the group's)."""
        name = _group_name(group)
        key = None if name == "world" else id(group)
        if p2p:
            key = ("p2p", key)
        if gate is not None:  # abort() waits for this flag to drop (attempt.py)
            busy, thread = gate.busy, get_ident()
            busy[thread] = True
            if gate.aborted is not None:
                busy[thread] = False
                raise AttemptAborted(gate.aborted)
        seq = self.seq.get(key, 0) + 1
        self.seq[key] = seq
        self.ops[key, op] = self.ops.get((key, op), 0) + 1
        rec = Record(op, seq, name, shape, dtype, site, note)
        if gate is not None:
            if replay is not None:
                rec.replay = replay
            if checked:
                rec.checked = True
            tail = gate.tails.get(key)
            if tail is None:
                tail = gate.tail(key, group, seq)
            tail.append(rec)
            busy[thread] = False
        if is_async:
            with self.lock:
                self.pending[id(rec)] = rec
        elif is_async is None:
            return rec
        else:
            self.current = rec
        if self.where is not None and not p2p:
            self.where.began(rec)
        if self.trace is not None:
            with self.lock:
                self.trace.append(rec)
        return rec

    def advance(self, group, n: int) -> None:
        """n collectives issued on `group` out of the wrappers' sight (the OOM retry's drain): counted in its
        sequence all the same, so that every rank's numbers agree afterwards (hang reports compare them)."""
        key = None if _group_name(group) == "world" else id(group)
        self.seq[key] = self.seq.get(key, 0) + n

    def end(self, rec: Record, error: BaseException | None = None) -> None:
        rec.end = clock.now()
        if error is not None:
            rec.error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            self.failed = rec
        if self.current is rec:
            self.current = None
        elif id(rec) in self.pending:
            with self.lock:
                self.pending.pop(id(rec), None)
        if self.last is None or rec.start >= self.last.start:
            self.last = rec
        if error is None:
            self.recent.append(rec)
        if self.where is not None:
            self.where.ended(rec, self.oldest)
        # the waiting time not yet counted: completions on gloo's threads may race this, off by a call at most
        since = rec.start if rec.start > self.waited_until else self.waited_until
        if rec.end > since:
            if self.waited_until == 0.0:  # the pace starts at the first collective (not at imports, data setup)
                self.origin, self.first_end = rec.start, rec.end
            d = rec.end - since
            self.waited += d
            self.waits[rec.site] = self.waits.get(rec.site, 0.0) + d
            self.waited_until = rec.end
            if self.start is None:
                self._mark_start()

    def oldest(self) -> Record | None:
        """The unfinished collective that started first (what a stall is measured by)."""
        found = self.current
        with self.lock:
            for rec in self.pending.values():
                if found is None or rec.start < found.start:
                    found = rec
        return found

    def snapshot(self) -> dict:
        now = clock.now()
        with self.lock:
            pending = [r.to_dict(now) for r in self.pending.values()]
        cur = self.current
        return {
            "current": cur.to_dict(now) if cur is not None else None,
            "pending": pending,
            "last": self.last.to_dict() if self.last is not None else None,
            "recent": [r.to_dict() for r in list(self.recent)],
            "failed": self.failed.to_dict() if self.failed is not None else None,
        }

    def take_trace(self, unfinished: bool = False) -> list:
        """Records finished since the last call (and keeps the unfinished ones for later, or takes them too)."""
        if self.trace is None:
            return []
        with self.lock:
            done = [r for r in self.trace if unfinished or r.end is not None]
            self.trace = [r for r in self.trace if not unfinished and r.end is None]
        return done

    def _mark_start(self) -> None:
        """The start-up ends at the first collective completed once the rank has done a window's worth of steps
        (collectives, before any optimizer step) and WINDOW_SECONDS have passed since its first collective
        ended: moments every rank of a synchronous job reaches together, so every rank's figures from there
        cover the same span (pace.settled: the end-of-job summary judges that span, like the windows)."""
        done = self.steps or sum(self.seq.values())
        if done >= WINDOW_STEPS and self.waited_until - self.first_end >= WINDOW_SECONDS:
            self.start = self.figures(sites=8)

    def figures(self, sites: int = 3) -> dict:
        """This rank's cumulative figures as of its last completed collective: wall and waiting seconds,
        optimizer steps, collectives, and the call sites it waited at longest."""
        waits = sorted(self.waits.items(), key=lambda kv: kv[1], reverse=True)[:sites]
        return {
            "wall": round(self.waited_until - self.origin, 4) if self.waited_until else 0.0,
            "wait": round(self.waited, 4),
            "steps": self.steps,
            "calls": sum(self.seq.values()),
            "sites": {_site_text(site): round(s, 4) for site, s in waits},
        }

    def pace(self, sites: int = 3) -> dict:
        """This rank's pace for its heartbeat (straggler.py reads two samples as a window): its figures, and
        under "start" its figures when its start-up ended (once it has)."""
        out = self.figures(sites)
        if self.start is not None:
            out["start"] = self.start
        return out

    def issued(self) -> dict[str, int]:
        """Group name -> calls seen on it (a hang report compares them within each group; point-to-point
        sequences are per peer pair, not a group's)."""
        return {_key_name(key): n for key, n in self.seq.items() if not isinstance(key, tuple)}

    def issued_ops(self) -> dict[str, dict[str, int]]:
        """Group name -> op -> calls made (what a rank that exited early had done: its exit record keeps it)."""
        out: dict[str, dict[str, int]] = {}
        for (key, op), n in list(self.ops.items()):
            if not isinstance(key, tuple):
                out.setdefault(_key_name(key), {})[op] = n
        return out


def _key_name(key) -> str:
    return "world" if key is None else _group_names.get(key, f"group {key:x}")


TRACKER = Tracker()
_group_names: dict = {}


def _group_name(group) -> str:
    if group is None:
        return "world"
    name = _group_names.get(id(group))
    if name is None:
        try:
            import torch.distributed as dist

            if group is dist.group.WORLD:
                name = "world"
            else:
                ranks = dist.get_process_group_ranks(group)
                name = "ranks " + ",".join(map(str, ranks))
        except Exception:  # a name for the report, never a reason to fail a collective
            name = f"group {id(group):x}"
        _group_names[id(group)] = name
    return name


def _site_text(site) -> str:
    return f"{os.path.basename(site[0])}:{site[1]} in {site[2]}" if site else "?"


# --- the user's call site ------------------------------------------------------------------------


def _internal_dirs() -> tuple[str, ...]:
    dirs = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if torch_file:
        dirs.append(os.path.dirname(os.path.abspath(torch_file)) + os.sep)
    return tuple(dirs)


_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep  # the interpreter's own modules (a DataLoader's select())


_INTERNAL: tuple[str, ...] = ()
_skip: dict = {}  # code object -> True when the frame is torch's or ours


def internal(code) -> bool:
    """Is this code torch's, the shim's or the interpreter's own (cached per code object)?"""
    global _INTERNAL
    skip = _skip.get(code)
    if skip is None:
        if not _INTERNAL:
            _INTERNAL = _internal_dirs()
        file = code.co_filename
        skip = _skip[code] = (
            file.startswith(_INTERNAL)
            or file.startswith("<frozen")
            or (file.startswith(_STDLIB) and "-packages" + os.sep not in file)
        )
    return skip


def call_site(frame=None) -> tuple[str, int, str] | None:
    """(file, line, function) of the first frame outside torch and clusterdoc.shim."""
    f = frame
    if f is None:
        try:
            f = sys._getframe(2)
        except ValueError:  # called from a thread with no Python caller (CUDA's autograd thread)
            return None
    while f is not None:
        if not internal(f.f_code):
            return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return None


# --- wrappers ------------------------------------------------------------------------------------


def _tensor_of(op, args, kwargs):
    pos, name = _TENSOR_ARG[op]
    if pos is None:
        if op == "batch_isend_irecv":  # the first op's tensor
            ops = args[0] if args else kwargs.get("p2p_op_list")
            return getattr(ops[0], "tensor", None) if ops else None
        return None
    t = kwargs[name] if name in kwargs else (args[pos] if len(args) > pos else None)
    if isinstance(t, (list, tuple)):
        t = t[0] if t else None
    return t if hasattr(t, "shape") else None


def _group_of(op, args, kwargs):
    group = kwargs.get("group")
    if group is None:
        pos = GROUP_POS[op]
        if pos == 99:  # batch_isend_irecv: its ops' group (torch requires one for all)
            ops = args[0] if args else kwargs.get("p2p_op_list")
            return getattr(ops[0], "group", None) if ops else None
        group = args[pos] if len(args) > pos else None
    return group


def _is_async(op, args, kwargs) -> bool:
    if "async_op" in kwargs:
        return bool(kwargs["async_op"])
    pos = _ASYNC_POS.get(op, 99)
    return len(args) > pos and bool(args[pos])


def _p2p(op, args, kwargs, group):
    """(peer, tag) of a point-to-point call: the peer as a global rank (None: any source); a batch, lists."""
    if op == "batch_isend_irecv":
        ops = args[0] if args else kwargs.get("p2p_op_list") or []
        return [getattr(o, "peer", None) for o in ops], [getattr(o, "tag", 0) for o in ops]
    name = "dst" if "send" in op else "src"
    peer = kwargs[name] if name in kwargs else (args[1] if len(args) > 1 else None)
    if peer is None and kwargs.get("group_" + name) is not None:  # a rank in `group` (torch >= 2.6)
        try:
            import torch.distributed as dist

            peer = dist.get_global_rank(group, kwargs["group_" + name])
        except Exception:  # a name for the report, never a reason to fail the call
            peer = kwargs["group_" + name]
    tag = kwargs["tag"] if "tag" in kwargs else (args[3] if len(args) > 3 else 0)
    return peer, tag


def _batch_note(args, kwargs) -> str:
    ops = args[0] if args else kwargs.get("p2p_op_list") or []
    parts = []
    for o in ops:
        sending = "send" in getattr(getattr(o, "op", None), "__name__", "")
        parts.append(f"{'send to' if sending else 'recv from'} {getattr(o, 'peer', '?')} (tag {getattr(o, 'tag', 0)})")
    return "batch: " + ", ".join(parts)


INSIDE = threading.local()  # .on: this thread is in a wrapper: torch's own calls from there pass straight through


def _wrap(op, fn, public: bool):
    """The wrapper installed over torch.distributed.<op>. `public`: the torch.distributed attribute (debug
    mode checks there); torch's own module-level calls that no wrapped op made (e.g. from FSDP's internals)
    are only tracked. A call made inside a wrapped one (all_gather_into_tensor -> all_gather_single, send ->
    isend, all_gather_object -> all_gather) is neither tracked nor checked again: one record per user call."""
    tracker = TRACKER
    described = op in DESCRIBED
    p2p = op in P2P
    always_async = op in _ALWAYS_ASYNC
    inside = INSIDE

    def collective(*args, **kwargs):
        if getattr(inside, "on", False):
            return fn(*args, **kwargs)
        is_async = always_async or _is_async(op, args, kwargs)
        group, tensor = _group_of(op, args, kwargs), _tensor_of(op, args, kwargs)
        shape, dtype = (None, None) if tensor is None else (tensor.shape, tensor.dtype)
        gate = GATE
        if p2p:  # never in the OOM retry's log: its drain replays collectives only
            note = _batch_note(args, kwargs) if op == "batch_isend_irecv" else ""
            rec = tracker.begin(op, group, shape, dtype, call_site(), note, is_async, p2p=True)
            rec.peer, rec.tag = _p2p(op, args, kwargs, group)
        elif gate is None:
            rec = tracker.begin(op, group, shape, dtype, call_site(), is_async=is_async)
        else:  # an OOM-retry attempt: the record goes into the gate's log, or AttemptAborted
            replay = describe(op, args, kwargs) if described else None
            checked = public and CHECK is not None
            rec = tracker.begin(op, group, shape, dtype, call_site(), "", is_async, gate, replay, checked)
        inside.on = True
        try:
            if public and CHECK is not None and CHECK(op, args, kwargs):
                result = None  # debug mode did the op itself (small gloo payloads ride in its check)
                is_async = False
            else:
                result = fn(*args, **kwargs)
        except BaseException as exc:
            tracker.end(rec, exc)
            raise
        finally:
            inside.on = False
        if gate is not None and gate.aborted is not None and not is_async:
            raise AttemptAborted(gate.aborted)  # aborted while we waited: the result may be a drain's zeros
        if is_async and result is not None and result != []:
            return _end_when_done(rec, result)
        if is_async:  # e.g. a non-member's call: nothing will complete it later
            with tracker.lock:
                tracker.pending.pop(id(rec), None)
        tracker.end(rec)
        return result

    collective.__name__ = collective.__qualname__ = getattr(fn, "__name__", op)
    collective.__doc__ = getattr(fn, "__doc__", None)
    collective.__wrapped__ = fn  # type: ignore[attr-defined]
    collective.__clusterdoc_original__ = fn  # type: ignore[attr-defined]
    return collective


def _end_when_done(rec: Record, work):
    """Complete `rec` when `work` (a Work, or batch_isend_irecv's list of them) completes; returns what the
    caller gets. Gloo's point-to-point Works have no future: those are handed back in a Work that completes
    the record when waited on (or seen completed)."""
    works = work if isinstance(work, list) else [work]
    try:
        futures = [w.get_future() for w in works]
    except Exception:  # no future (gloo send/recv): the caller's wait() tells
        if rec.op in P2P:
            return [_WaitedWork(w, rec) for w in work] if isinstance(work, list) else _WaitedWork(work, rec)
        TRACKER.end(rec)  # an old backend's collective: count it done at once
        return work
    if len(futures) == 1:
        futures[0].add_done_callback(lambda fut: TRACKER.end(rec))
    else:
        import torch

        torch.futures.collect_all(futures).add_done_callback(lambda fut: TRACKER.end(rec))
    return work


def _work_class():
    import torch.distributed as dist

    class WaitedWork(dist.Work):
        """A point-to-point Work whose completion ends its record (the Works of one batch share it): when it
        is waited on, seen completed, or dropped."""

        def __init__(self, work, rec):
            super().__init__()
            self._work, self._rec = work, rec

        def _done(self):
            if self._rec.end is None:
                TRACKER.end(self._rec)

        def wait(self, *args, **kwargs):
            try:
                return self._work.wait(*args, **kwargs)
            except BaseException as exc:
                TRACKER.end(self._rec, exc)
                raise
            finally:
                self._done()

        def is_completed(self):
            done = self._work.is_completed()
            if done:
                self._done()
            return done

        def is_success(self):
            return self._work.is_success()

        def exception(self):
            return self._work.exception()

        def source_rank(self):
            return self._work.source_rank()

        def _source_rank(self):
            return self._work._source_rank()

        def result(self):
            return self._work.result()

        def synchronize(self):
            return self._work.synchronize()

        def get_future(self):
            return self._work.get_future()

        def __del__(self):  # dropped unwaited (a fire-and-forget isend): no longer a wait to report
            self._done()

        def __getattr__(self, name):
            return getattr(self._work, name)

    return WaitedWork


def _WaitedWork(work, rec):
    global _waited_work
    if _waited_work is None:
        _waited_work = _work_class()
    return _waited_work(work, rec)


_waited_work = None
_installed = False


def install() -> None:
    """Wrap torch.distributed's collectives and DDP's gradient reduction (idempotent)."""
    global _installed
    if _installed:
        return
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    for op in OPS:
        fn = getattr(c10d, op, None)
        if fn is None:
            continue
        fn = getattr(fn, "__clusterdoc_original__", fn)
        TORCH[op] = ORIGINALS[op] = fn
        if op in ("isend", "irecv"):  # one object in both places: P2POp and batch_isend_irecv test `op is isend`
            setattr(dist, op, wrapped := _wrap(op, fn, public=True))
            setattr(c10d, op, wrapped)
            continue
        setattr(dist, op, _wrap(op, fn, public=True))
        setattr(c10d, op, _wrap(op, fn, public=False))
    for old, new in ALIASES.items():  # our own calls (debug mode's exchange, the drain) skip the deprecated hop
        if new in ORIGINALS:
            ORIGINALS[old] = ORIGINALS[new]
    _install_functional()
    _install_ddp_hook()
    _install_step_hook()
    _installed = True


def installed() -> bool:
    return _installed


def uninstall() -> None:
    """Put torch's own functions back (benchmarks compare with and without; DDPs made since keep the hook)."""
    global _installed, CHECK
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d
    from torch.nn.parallel import DistributedDataParallel as DDP

    for op, fn in TORCH.items():
        setattr(dist, op, fn)
        setattr(c10d, op, fn)
    for (module, name), fn in FUNCTIONAL_TORCH.items():
        setattr(module, name, fn)
    for name in ("__init__", "register_comm_hook"):
        original = getattr(getattr(DDP, name), "__clusterdoc_original__", None)
        if original is not None:
            setattr(DDP, name, original)
    CHECK = None
    _installed = False


# --- functional collectives (torch.distributed._functional_collectives: DTensor, tensor parallel) ----------

# entry point -> (the torch.distributed op debug mode compares it as, the group argument's position)
FUNCTIONAL = {
    "broadcast": ("broadcast", 2),
    "all_reduce": ("all_reduce", 2),
    "all_gather_tensor": ("all_gather_single", 2),
    "all_gather_tensor_autograd": ("all_gather_single", 2),
    "all_gather_single": ("all_gather_single", 2),
    "all_gather_single_autograd": ("all_gather_single", 2),
    "reduce_scatter_tensor": ("reduce_scatter_single", 3),
    "reduce_scatter_tensor_autograd": ("reduce_scatter_single", 3),
    "reduce_scatter_single": ("reduce_scatter_single", 3),
    "reduce_scatter_single_autograd": ("reduce_scatter_single", 3),
    "all_to_all_single": ("all_to_all_single", 3),
    "all_to_all_single_autograd": ("all_to_all_single", 3),
}
FUNCTIONAL_TORCH: dict = {}  # (module, name) -> torch's function


def _functional_group(group, tag):
    """The ProcessGroup behind a functional collective's group argument (a group, ranks, a DeviceMesh...)."""
    from torch.distributed import _functional_collectives as fc
    from torch.distributed import distributed_c10d as c10d

    if isinstance(group, c10d.ProcessGroup):
        return group
    return c10d._resolve_process_group(fc._resolve_group_name(group, tag))


def _functional_check_args(op, args, kwargs, group, name) -> tuple:
    """The call as debug mode's check reads a torch.distributed call: (args, kwargs). async_op: the result is
    a new tensor, so the check never does the op itself; _functional: torch makes the output."""

    def arg(i, key, default=None):
        return kwargs[key] if key in kwargs else (args[i] if len(args) > i else default)

    t = arg(0, "self")
    kw = {"group": group, "async_op": True, "_functional": True, "_called": name}
    if op == "all_reduce":
        return (t,), {**kw, "op": str(arg(1, "reduceOp", "sum")).upper()}
    if op == "broadcast":
        return (t,), {**kw, "group_src": arg(1, "src", 0)}
    if op == "reduce_scatter_single":
        return (None, t), {**kw, "op": str(arg(1, "reduceOp", "sum")).upper()}
    if op == "all_to_all_single":
        return (None, t, arg(1, "output_split_sizes"), arg(2, "input_split_sizes")), kw
    return (None, t), kw  # all_gather_single


def _wrap_functional(name, fn, op, group_pos):
    tracker = TRACKER
    inside = INSIDE
    called = "funcol." + name

    def functional(*args, **kwargs):
        if _compiling() or getattr(inside, "on", False):  # traced into a graph: nothing of ours in it
            return fn(*args, **kwargs)
        try:
            group_arg = kwargs["group"] if "group" in kwargs else args[group_pos]
            group = _functional_group(
                group_arg, kwargs.get("tag", args[group_pos + 1] if len(args) > group_pos + 1 else "")
            )
        except Exception:  # a group we cannot name: torch's own error, or the call untracked
            return fn(*args, **kwargs)
        tensor = args[0] if args else kwargs.get("self")
        shape, dtype = (tensor.shape, tensor.dtype) if hasattr(tensor, "shape") else (None, None)
        note = "functional collective: issued here, its result is waited on where first used"
        rec = tracker.begin(called, group, shape, dtype, call_site(), note, False, GATE)
        inside.on = True
        try:
            if CHECK is not None:
                CHECK(op, *_functional_check_args(op, args, kwargs, group, called))
            result = fn(*args, **kwargs)
        except BaseException as exc:
            tracker.end(rec, exc)
            raise
        finally:
            inside.on = False
        tracker.end(rec)
        return result

    functional.__name__ = functional.__qualname__ = name
    functional.__doc__ = getattr(fn, "__doc__", None)
    functional.__wrapped__ = fn
    functional.__clusterdoc_original__ = fn
    return functional


def _compiling() -> bool:
    return False


def _install_functional() -> None:
    global _compiling
    try:
        import torch
        from torch.distributed import _functional_collectives as fc
    except Exception:  # a torch without them
        return
    _compiling = getattr(getattr(torch, "compiler", None), "is_compiling", _compiling)
    for name, (op, group_pos) in FUNCTIONAL.items():
        fn = getattr(fc, name, None)
        if fn is None:
            continue
        fn = getattr(fn, "__clusterdoc_original__", fn)
        FUNCTIONAL_TORCH[(fc, name)] = fn
        setattr(fc, name, _wrap_functional(name, fn, op, group_pos))


# --- optimizer steps (the pace's unit) -----------------------------------------------------------------

_step_hook = None


def _count_step(optimizer, args, kwargs) -> None:
    TRACKER.steps += 1


def _install_step_hook() -> None:
    """Count every optimizer's steps (a global post-step hook; once per process)."""
    global _step_hook
    if _step_hook is not None:
        return
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except ImportError:  # an old torch: collectives stand in for steps
        return
    _step_hook = register_optimizer_step_post_hook(_count_step)


# --- DDP -----------------------------------------------------------------------------------------


class _HookState:
    """What our comm hook carries: the DDP's group and the user's own hook, if they register one."""

    __slots__ = ("group", "user_state", "user_hook")

    def __init__(self, group):
        self.group, self.user_state, self.user_hook = group, None, None


def _backward_frame():
    """The frame that called backward(). On CPU the autograd engine runs the hook on that thread, under it; on
    a GPU it runs the hook on its own device thread, which has no Python frame above the hook (sys._getframe(1)
    raises): then the caller is the thread that waits in torch.autograd's backward."""
    try:
        return sys._getframe(2)
    except ValueError:
        pass
    me = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        f = frame
        while ident != me and f is not None:
            if f.f_code.co_name in ("_engine_run_backward", "backward") and "torch" in f.f_code.co_filename:
                return frame
            f = f.f_back
    return None


def _future_error(fut) -> BaseException | None:
    """The error a done future ended with (None: its value came). A gradient all_reduce that failed (a peer gone:
    gloo's 'Connection closed by peer') is where this rank failed: on record as failed, not as done, so that `why`
    sees the ranks that waited in a call a peer never made (an early exit, hang/early.py)."""
    try:
        fut.value()
    except Exception as exc:
        return exc
    return None


def _ddp_hook(state: _HookState, bucket):
    gate = GATE
    if gate is not None and state.user_hook is not None and gate.aborted is not None:
        raise AttemptAborted(gate.aborted)  # (a user's hook issues through the wrappers, which log its calls)
    buffer = bucket.buffer()
    site = call_site(_backward_frame())
    code = linecache.getline(site[0], site[1]).strip() if site else ""
    note = f"DDP gradient all_reduce, bucket {bucket.index()}" + (f", from {code}" if code else "")
    # in an attempt: into the gate's log (ours), or AttemptAborted
    logged = gate if state.user_hook is None else None
    rec = TRACKER.begin("all_reduce", state.group, buffer.shape, buffer.dtype, site, note, True, logged)
    try:
        if state.user_hook is not None:
            fut = state.user_hook(state.user_state, bucket)
        else:  # DDP's default: average over the group
            import torch.distributed as dist

            group = state.group if state.group is not None else dist.group.WORLD
            buffer.div_(group.size())  # type: ignore[union-attr]  # WORLD exists once DDP does
            fut = (
                ORIGINALS["all_reduce"](buffer, group=group, async_op=True)
                .get_future()
                .then((lambda f: f.value()[0]) if gate is None else gate.first_value)
            )
    except BaseException as exc:
        TRACKER.end(rec, exc)
        raise
    fut.add_done_callback(lambda f: TRACKER.end(rec, _future_error(f)))
    if gate is not None and state.user_hook is not None:  # (ours checks in its own callback: first_value)
        fut = gate.guard(fut)  # fails the bucket (and so backward) if the attempt was aborted meanwhile
    return fut


def _install_ddp_hook() -> None:
    from torch.nn.parallel import DistributedDataParallel as DDP

    if getattr(DDP.__init__, "__clusterdoc_original__", None):
        return
    init, register = DDP.__init__, DDP.register_comm_hook

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._clusterdoc_hook = _HookState(getattr(self, "process_group", None))
        self._clusterdoc_number = n = next(_ddp_numbers)
        DDPS[n] = self  # weakly: the OOM retry resets the live ones (shim/ddpstate.py)
        register(self, self._clusterdoc_hook, _ddp_hook)

    def register_comm_hook(self, state, hook):
        """A user's hook runs inside ours (DDP takes only one), so its all_reduce is still tracked."""
        ours = getattr(self, "_clusterdoc_hook", None)
        if ours is None:
            return register(self, state, hook)
        if ours.user_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        ours.user_state, ours.user_hook = state, hook
        return None

    __init__.__clusterdoc_original__ = init  # type: ignore[attr-defined]
    __init__.__wrapped__ = init  # type: ignore[attr-defined]
    register_comm_hook.__clusterdoc_original__ = register  # type: ignore[attr-defined]
    register_comm_hook.__doc__ = register.__doc__
    DDP.__init__ = __init__  # type: ignore[method-assign]
    DDP.register_comm_hook = register_comm_hook  # type: ignore[method-assign]
