"""The OOM retry's gate (shim/attempt.py) as the tracker fills it (shim/track.py): what an attempt's log holds,
what abort() guarantees the snapshot. A one-rank gloo group gives a real default group and a real subgroup."""

import threading
import time

import pytest
import torch
import torch.distributed as dist

from clusterdoc.shim import track
from clusterdoc.shim.attempt import AttemptAborted, Gate, describe


@pytest.fixture
def world():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    track._group_names.clear()  # ids of an earlier test's groups may be reused
    yield dist.group.WORLD
    dist.destroy_process_group()
    track._group_names.clear()


def test_log_per_group_numbered_from_the_attempt_as_the_drain_replays_it(world):
    tracker, gate, t = track.Tracker(), Gate(), torch.zeros(3, 2)
    tracker.begin("all_reduce", None, t.shape, t.dtype, None)  # before the attempt: in the sequence, not the log
    sub = dist.new_group([0])
    tracker.begin("all_reduce", None, t.shape, t.dtype, None, gate=gate)
    # the default group named or passed as None: one sequence (and one group for the drain)
    tracker.begin("broadcast", world, t.shape, t.dtype, None, "", False, gate, ("broadcast", 1), True)
    forward = tracker.begin("ddp_rebuild", world, None, None, None, "DDP forward", None, gate, ("ddp_rebuild", 7))
    tracker.begin("all_gather_into_tensor", sub, t.shape, t.dtype, None, "", True, gate)
    assert tracker.seq == {None: 4, id(sub): 1}
    assert gate.counts() == {None: 3, id(sub): 1}
    assert tracker.current.op == "broadcast" and forward not in tracker.pending.values()  # C++'s: never shown
    gate.abort("rank 1 ran out of memory")
    assert gate.snapshot() == {
        "world": [
            3,
            [
                [0, "all_reduce", [3, 2], "torch.float32", None, False],
                [1, "broadcast", [3, 2], "torch.float32", 1, True],
                [2, "ddp_rebuild", None, None, 7, False],
            ],
            None,
        ],
        sub.group_name: [1, [[0, "all_gather_into_tensor", [3, 2], "torch.float32", None, False]], [0]],
    }
    assert gate.snapshot() is None  # published once


def test_the_log_keeps_the_last_keep_with_their_numbers(world, monkeypatch):
    monkeypatch.setattr("clusterdoc.shim.attempt.KEEP", 4)
    tracker, gate = track.Tracker(), Gate()
    for _ in range(10):
        tracker.begin("barrier", None, None, None, None, gate=gate)
    gate.abort("x")
    count, entries, _ = gate.snapshot()["world"]
    assert count == 10 and [e[0] for e in entries] == [6, 7, 8, 9]


def test_after_abort_nothing_is_recorded(world):
    tracker, gate = track.Tracker(), Gate()
    tracker.begin("all_reduce", None, None, None, None, gate=gate)
    gate.abort("rank 1 ran out of memory")
    with pytest.raises(AttemptAborted, match="rank 1 ran out of memory"):
        tracker.begin("all_reduce", None, None, None, None, gate=gate)
    with pytest.raises(AttemptAborted):
        tracker.begin("ddp_buffers", world, None, None, None, "DDP forward", None, gate, ("ddp_buffers", 0))
    assert gate.counts() == {None: 1} and tracker.seq == {None: 1} and not any(gate.busy.values())
    gate.abort("a second reason")  # the first one stays
    assert gate.aborted == "rank 1 ran out of memory"


def test_abort_waits_for_a_record_under_way():
    """No lock on the recording path: a thread between its abort check and its append holds `busy`, and abort()
    returns only once that record is in, so the snapshot taken after it holds everything that was issued."""
    gate = Gate()
    gate.busy[12345] = True  # as a thread that has passed its check and not yet appended
    returned = threading.Event()
    aborter = threading.Thread(target=lambda: (gate.abort("x"), returned.set()))
    aborter.start()
    time.sleep(0.2)
    assert gate.aborted == "x" and not returned.is_set()
    gate.busy[12345] = False
    assert returned.wait(5)
    aborter.join()


class Group:  # a process group as far as the log cares: something with an identity, weakly referenced
    pass


def test_records_racing_one_abort_leave_a_consistent_log():
    """Two threads, each issuing on its own group, while another aborts: what the log holds right after abort()
    returns is every call that went out, and nothing is recorded afterwards."""
    tracker, gate, groups = track.Tracker(), Gate(), [Group(), Group()]
    issued = [0, 0]

    def issuer(i):
        try:
            while True:
                tracker.begin("all_reduce", groups[i], None, None, None, gate=gate)
                issued[i] += 1  # what a thread "issues": only after its record is in
        except AttemptAborted:
            pass

    workers = [threading.Thread(target=issuer, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    time.sleep(0.05)
    gate.abort("stop")
    counted = [gate.counts().get(id(g), 0) for g in groups]
    for w in workers:
        w.join(5)
    assert counted == issued and min(issued) > 0


def test_describe_names_the_root_and_unreplayable_calls():
    t = torch.zeros(2)
    assert describe("broadcast", (t, 3), {}) == ("broadcast", 3)
    assert describe("broadcast", (t,), {"src": 2}) == ("broadcast", 2)
    assert describe("gather", (t, None), {}) == ("gather", None)  # group_dst= style: no root to replay
    assert describe("all_to_all_single", (t, t), {}) == ("all_to_all_single", None)
    assert describe("all_to_all_single", (t, t), {"output_split_sizes": [1, 1]}) == ("all_to_all_single/splits", None)
