"""One attempt of the OOM retry on this rank: the gate every collective passes, and the thread that hears
when another rank's attempt failed.

While an attempt runs, track.GATE is its Gate. Each collective this rank issues (track's wrappers, DDP's bucket
hook, and DDP's forward: its bucket rebuild and buffer broadcast, see ddpstate.py) is counted per process
group, keeping the last KEEP calls' op, shape, dtype and root, so that a rank that stopped earlier can issue
the same ones (drain.py). Once the attempt is aborted nothing more is issued: the next collective raises
AttemptAborted, and so do a blocking collective that returns afterwards and a DDP bucket whose all_reduce
completes afterwards (their result may be a drain's zeros, so backward fails instead of stepping with it).
Cost while nothing fails: two flag writes, two dict lookups and a tuple per collective. No lock (a `with lock`
costs more than the rest together): the thread that counts raises its own flag around its check and count, and
abort() waits for every flag to drop, so that what the snapshot holds is exactly what was issued (under the GIL
a check-then-count is not atomic, but a flag written before the check is seen by abort, and abort's write by
the check after it).

The Listener thread blocks on this rank's wake key in the job's store (settle.py): "fail <reason>" aborts the
gate at once, even while the main thread waits in a collective, and publishes the gate's log for the drain.
"""

from __future__ import annotations

import collections
import datetime
import threading
import time
import weakref
from threading import get_ident

KEEP = 256  # collectives kept per group: how far behind its peers a rank can be and still drain
ROOTS = {"broadcast": ("src", 1), "reduce": ("dst", 1), "gather": ("dst", 2), "scatter": ("src", 2)}


class AttemptAborted(RuntimeError):
    """Another rank's attempt failed: this rank leaves the attempt (raised by its next collective)."""


DESCRIBED = frozenset(ROOTS) | {"all_to_all_single"}  # ops whose count needs describe()


def describe(op, args, kwargs) -> tuple:
    """(op, root) as the drain replays a call of `op`: the root rank of a rooted op (None: given as group_src=
    or group_dst=, not replayable), all_to_all_single with uneven splits renamed (not replayable)."""
    if op in ROOTS:
        name, pos = ROOTS[op]
        if name in kwargs:
            return op, kwargs[name]
        return op, (args[pos] if len(args) > pos else None)
    if len(args) > 2 or kwargs.get("output_split_sizes") is not None or kwargs.get("input_split_sizes") is not None:
        return "all_to_all_single/splits", None
    return op, None


class Gate:
    def __init__(self, world_group):
        self.world = world_group
        self.lock = threading.Lock()  # abort and snapshot only: counting takes none (see above)
        self.busy: dict = {}  # thread id -> True while that thread is between its abort check and its count
        self.aborted: str | None = None  # why, once aborted
        self.counts: dict = {}  # group key (None: the default group) -> collectives issued
        self.tails: dict = {}  # group key -> deque of (index, op, shape, dtype, root, checked)
        self.groups: dict = {}  # group key -> weakref to the group
        self.published = False

    def _key(self, group):
        if group is None or group is self.world:
            return None
        key = id(group)
        if key not in self.groups:
            self.groups[key] = weakref.ref(group)
        return key

    def count(self, group, op, shape, dtype, root=None, checked=False):
        """Count one collective about to be issued on `group` (a tensor of `shape`, `dtype`; None: no tensor),
        or raise if the attempt is aborted. `root`: see describe(); `checked`: debug mode's check runs first
        (and is replayed). One call, nothing nested: this runs on every collective of every step."""
        thread = get_ident()
        self.busy[thread] = True
        try:
            if self.aborted is not None:
                raise AttemptAborted(self.aborted)
            key = None if group is None or group is self.world else self._key(group)
            n = self.counts.get(key, 0)
            self.counts[key] = n + 1
            tail = self.tails.get(key)
            if tail is None:
                tail = self.tails[key] = collections.deque(maxlen=KEEP)
            tail.append((n, op, shape, dtype, root, checked))
        finally:
            self.busy[thread] = False

    def enter_ddp(self, group, number: int, kinds):
        """DDP's forward, before it runs: the collectives it will issue from C++ (ddpstate.py)."""
        for kind in kinds:
            self.count(group, kind, None, None, number)

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
        """From now on nothing is counted or issued; returns once a count under way has finished."""
        with self.lock:
            if self.aborted is None:
                self.aborted = reason
        deadline = time.monotonic() + 1.0  # a few bytecodes; bounded all the same
        while any(list(self.busy.values())) and time.monotonic() < deadline:
            time.sleep(0.0001)

    def snapshot(self) -> dict | None:
        """{group name: [count, entries, member ranks or None for all]} once (None afterwards); call after
        abort()."""
        import torch.distributed as dist

        with self.lock:
            if self.published:
                return None
            self.published = True
            out = {}
            for key, count in self.counts.items():
                if key is None:
                    name, members = "world", None
                else:
                    group = self.groups[key]()
                    if group is None:
                        continue
                    name, members = group.group_name, dist.get_process_group_ranks(group)
                out[name] = [
                    count,
                    [
                        [
                            n,
                            op,
                            list(shape) if shape is not None else None,
                            str(dtype) if dtype is not None else None,
                            root,
                            checked,
                        ]
                        for n, op, shape, dtype, root, checked in self.tails[key]
                    ],
                    members,
                ]
            return out


class Listener(threading.Thread):
    """Waits for this rank's wake key: "fail <reason>" aborts the gate and publishes its log; "end" just ends."""

    def __init__(self, store, key: str, gate: Gate, timeout: float, publish):
        super().__init__(name="clusterdoc-oom-listener", daemon=True)
        self.store, self.key, self.gate, self.timeout, self.publish = store, key, gate, timeout, publish
        self.value = ""
        self.woken = threading.Event()

    def run(self):
        try:
            self.store.wait([self.key], datetime.timedelta(seconds=self.timeout))
            self.value = self.store.get(self.key).decode()
        except Exception:  # noqa: BLE001 - the store is gone or the wait timed out: the main thread decides
            self.value = ""
        if self.value.startswith("fail "):
            self.gate.abort(self.value[5:])
            try:
                self.publish(self.store)
            except Exception:  # noqa: BLE001, S110 - the main thread publishes it then
                pass
        self.woken.set()
