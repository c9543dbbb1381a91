"""One attempt of the OOM retry on this rank: the gate every collective passes, and the thread that hears
when another rank's attempt failed.

While an attempt runs, track.GATE is its Gate. Each collective this rank issues (track's wrappers, DDP's bucket
hook, and DDP's forward: its bucket rebuild and buffer broadcast, see ddpstate.py) is counted per process
group, keeping the last KEEP calls' op, shape, dtype and root, so that a rank that stopped earlier can issue
the same ones (drain.py). Once the attempt is aborted nothing more is issued: the next collective raises
AttemptAborted, and so do a blocking collective that returns afterwards and a DDP bucket whose all_reduce
completes afterwards (their result may be a drain's zeros, so backward fails instead of stepping with it).
Cost while nothing fails: a lock, two dict lookups and a tuple per collective.

The Listener thread blocks on this rank's wake key in the job's store (settle.py): "fail <reason>" aborts the
gate at once, even while the main thread waits in a collective, and publishes the gate's log for the drain.
"""

from __future__ import annotations

import collections
import datetime
import threading
import weakref

KEEP = 256  # collectives kept per group: how far behind its peers a rank can be and still drain
ROOTS = {"broadcast": ("src", 1), "reduce": ("dst", 1), "gather": ("dst", 2), "scatter": ("src", 2)}


class AttemptAborted(RuntimeError):
    """Another rank's attempt failed: this rank leaves the attempt (raised by its next collective)."""


def _root(op, args, kwargs):
    name, pos = ROOTS[op]
    if name in kwargs:
        return kwargs[name]
    return args[pos] if len(args) > pos else None  # None (group_src= / group_dst=): not replayable


class Gate:
    def __init__(self, world_group):
        self.world = world_group
        self.lock = threading.Lock()
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

    def _add(self, key, op, shape, dtype, root, checked):
        """Count one collective (caller holds the lock), or raise if the attempt is aborted."""
        if self.aborted is not None:
            raise AttemptAborted(self.aborted)
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        try:
            self.tails[key].append((n, op, shape, dtype, root, checked))
        except KeyError:
            self.tails[key] = collections.deque([(n, op, shape, dtype, root, checked)], maxlen=KEEP)

    def enter(self, op, group, tensor, args, kwargs, checked):
        """track's wrapper, before issuing `op`. `checked`: debug mode's check runs first (and is replayed)."""
        key = None if group is None or group is self.world else self._key(group)
        root = None
        if op in ROOTS:
            root = _root(op, args, kwargs)
        elif op == "all_to_all_single" and (
            len(args) > 2 or kwargs.get("output_split_sizes") is not None or kwargs.get("input_split_sizes") is not None
        ):
            op = "all_to_all_single/splits"  # uneven splits: not replayable
        if tensor is None:
            shape = dtype = None
        else:
            shape, dtype = tensor.shape, tensor.dtype
        with self.lock:
            self._add(key, op, shape, dtype, root, checked)

    def enter_bucket(self, group, buffer, issues: bool):
        """DDP's comm hook; `issues`: ours does the all_reduce (a user's hook goes through the wrappers)."""
        key = None if group is None or group is self.world else self._key(group)
        with self.lock:
            if not issues:
                if self.aborted is not None:
                    raise AttemptAborted(self.aborted)
                return
            self._add(key, "all_reduce", buffer.shape, buffer.dtype, None, False)

    def enter_ddp(self, group, number: int, kinds):
        """DDP's forward, before it runs: the collectives it will issue from C++ (ddpstate.py)."""
        if not kinds:  # most steps: nothing to count, only the abort to see
            if self.aborted is not None:
                raise AttemptAborted(self.aborted)
            return
        key = self._key(group)
        with self.lock:
            if self.aborted is not None:
                raise AttemptAborted(self.aborted)
            for kind in kinds:
                self._add(key, kind, None, None, number, False)

    def leave(self):
        if self.aborted is not None:
            raise AttemptAborted(self.aborted)

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
        with self.lock:
            if self.aborted is None:
                self.aborted = reason

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
