"""One attempt of the OOM retry on this rank: the gate every collective passes, and the thread that hears
when another rank's attempt failed.

While an attempt runs, track.GATE is its Gate. The tracker (track.py) passes every collective this rank issues
through it as it records the call (its wrappers, DDP's bucket hook, and DDP's forward: its bucket rebuild and
buffer broadcast, see ddpstate.py): the tracker's own record of the call, which already holds the op, the
group's sequence number, shape and dtype, is kept in the gate's log, the last KEEP per process group, so that a
rank that stopped earlier can issue the same ones (drain.py); how many each group saw in the attempt comes from
those sequence numbers. Once the attempt is aborted nothing more is issued: the next collective raises
AttemptAborted, and so do a blocking collective that returns afterwards and a DDP bucket whose all_reduce
completes afterwards (their result may be a drain's zeros, so backward fails instead of stepping with it).
Cost while nothing fails, on top of the tracking: two flag writes, a lookup and an append per collective
(bench/bench_shim_oom.py: 0.3 us in a tight loop, against 0.5 us for the separate count with its own tuple per
call this replaced). No lock (a `with lock` costs more than the rest together): the thread that records raises
its own flag around its abort check and its append, and abort() waits for every flag to drop, so that what the
snapshot holds is exactly what was issued (under the GIL a check-then-append is not atomic, but a flag written
before the check is seen by abort, and abort's write by the check after it).

The Listener thread blocks on this rank's wake key in the job's store (settle.py): "fail <reason>" aborts the
gate at once, even while the main thread waits in a collective, and publishes the gate's log for the drain.
"""

from __future__ import annotations

import collections
import threading
import time
import weakref

from .errors import ShimError

KEEP = 256  # collectives kept per group: how far behind its peers a rank can be and still drain
ROOTS = {"broadcast": ("src", 1), "reduce": ("dst", 1), "gather": ("dst", 2), "scatter": ("src", 2)}


class AttemptAborted(ShimError, RuntimeError):
    """Another rank's attempt failed: this rank leaves the attempt (raised by its next collective)."""


DESCRIBED = frozenset(ROOTS) | {"all_to_all_single"}  # ops whose log entry needs describe()


def describe(op, args, kwargs) -> tuple:
    """(op, root) as the drain replays a call of `op` (the Record's `replay`): the root rank of a rooted op
    (None: given as group_src= or group_dst=, not replayable), all_to_all_single with uneven splits renamed (not
    replayable)."""
    if op in ROOTS:
        name, pos = ROOTS[op]
        if name in kwargs:
            return op, kwargs[name]
        return op, (args[pos] if len(args) > pos else None)
    if len(args) > 2 or kwargs.get("output_split_sizes") is not None or kwargs.get("input_split_sizes") is not None:
        return "all_to_all_single/splits", None
    return op, None


class Gate:
    def __init__(self):
        self.lock = threading.Lock()  # abort and snapshot only: recording takes none (see above)
        self.busy: dict = {}  # thread id -> True while that thread is between its abort check and its append
        self.aborted: str | None = None  # why, once aborted
        self.tails: dict = {}  # group key (track.py: None for the default group) -> deque of the tracker's Records
        self.base: dict = {}  # group key -> the group's sequence number before the attempt's first collective
        self.groups: dict = {}  # group key -> weakref to the group
        self.published = False

    def tail(self, key, group, seq: int) -> collections.deque:
        """The log of group `key`, begun by its collective number `seq` (the group's first in this attempt)."""
        self.base[key] = seq - 1
        if key is not None:
            self.groups[key] = weakref.ref(group)
        tail = self.tails[key] = collections.deque(maxlen=KEEP)
        return tail

    def counts(self) -> dict:
        """Group key -> collectives issued in this attempt."""
        return {key: tail[-1].seq - self.base[key] for key, tail in self.tails.items()}

    def first_value(self, fut):
        """The DDP hook's own completion callback: the bucket, unless the attempt was aborted meanwhile."""
        value = fut.value()[0]
        if self.aborted is not None:
            raise AttemptAborted(self.aborted)
        return value

    def guard(self, fut):
        def check(f):
            value = f.value()
            if self.aborted is not None:
                raise AttemptAborted(self.aborted)
            return value

        return fut.then(check)

    def abort(self, reason: str) -> None:
        """From now on nothing is recorded or issued; returns once a record under way is in the log."""
        with self.lock:
            if self.aborted is None:
                self.aborted = reason
        deadline = time.monotonic() + 1.0  # a few bytecodes; bounded all the same
        while any(list(self.busy.values())) and time.monotonic() < deadline:
            time.sleep(0.0001)

    def snapshot(self) -> dict | None:
        """{group name: [count, entries, member ranks or None for all]} once (None afterwards), an entry being
        [index in the attempt, op, shape, dtype, root, checked] as drain.py replays it; call after abort()."""
        import torch.distributed as dist

        with self.lock:
            if self.published:
                return None
            self.published = True
            out = {}
            for key, tail in self.tails.items():
                if key is None:
                    name, members = "world", None
                else:
                    group = self.groups[key]()
                    if group is None:
                        continue
                    name, members = group.group_name, dist.get_process_group_ranks(group)
                base = self.base[key]
                out[name] = [tail[-1].seq - base, [_entry(rec, base) for rec in tail], members]
            return out


def _entry(rec, base: int) -> list:
    op, root = getattr(rec, "replay", None) or (rec.op, None)
    return [
        rec.seq - base - 1,
        op,
        list(rec.shape) if rec.shape is not None else None,
        str(rec.dtype) if rec.dtype is not None else None,
        root,
        getattr(rec, "checked", False),
    ]


class Listener(threading.Thread):
    """Waits for this rank's wake key: "fail <reason>" aborts the gate and publishes its log; "end" just ends."""

    def __init__(self, store, key: str, gate: Gate, timeout: float, publish):
        super().__init__(name="clusterdoc-oom-listener", daemon=True)
        self.store, self.key, self.gate, self.timeout, self.publish = store, key, gate, timeout, publish
        self.value = ""
        self.woken = threading.Event()

    def run(self):
        try:  # a genuine value only (the store is a sealed channel: a stranger's "fail" is no wake-up)
            value = self.store.wait([self.key], time.monotonic() + self.timeout)[self.key]
            self.value = value if isinstance(value, str) else ""
        except Exception:  # the store is gone or the wait timed out: the main thread decides
            self.value = ""
        if self.value.startswith("fail "):
            self.gate.abort(self.value[5:])
            try:
                self.publish(self.store)
            except Exception:  # the main thread publishes it then
                pass
        self.woken.set()
