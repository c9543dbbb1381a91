"""The OOM retry's gate (shim/attempt.py) on its own: what it counts, what abort() guarantees the snapshot."""

import threading
import time

import pytest
import torch

from clusterdoc.shim.attempt import AttemptAborted, Gate, describe

WORLD = object()  # stands for dist.group.WORLD: the gate only compares it by identity


def test_counts_per_group_and_keeps_what_the_drain_replays():
    gate = Gate(WORLD)
    t = torch.zeros(3, 2)
    gate.count(None, "all_reduce", t.shape, t.dtype)
    gate.count(WORLD, "broadcast", t.shape, t.dtype, root=1, checked=True)  # WORLD counts as the default group
    gate.enter_ddp(None, 7, ("ddp_rebuild",))
    assert gate.counts == {None: 3}
    assert [e[:2] for e in gate.tails[None]] == [(0, "all_reduce"), (1, "broadcast"), (2, "ddp_rebuild")]
    gate.abort("rank 1 ran out of memory")
    snap = gate.snapshot()
    assert snap == {
        "world": [
            3,
            [
                [0, "all_reduce", [3, 2], "torch.float32", None, False],
                [1, "broadcast", [3, 2], "torch.float32", 1, True],
                [2, "ddp_rebuild", None, None, 7, False],
            ],
            None,
        ]
    }
    assert gate.snapshot() is None  # published once


def test_after_abort_nothing_is_counted():
    gate = Gate(WORLD)
    gate.count(None, "all_reduce", None, None)
    gate.abort("rank 1 ran out of memory")
    with pytest.raises(AttemptAborted, match="rank 1 ran out of memory"):
        gate.count(None, "all_reduce", None, None)
    with pytest.raises(AttemptAborted):
        gate.enter_ddp(None, 0, ("ddp_buffers",))
    assert gate.counts == {None: 1} and not any(gate.busy.values())
    gate.abort("a second reason")  # the first one stays
    assert gate.aborted == "rank 1 ran out of memory"


def test_abort_waits_for_a_count_under_way():
    """No lock on the counting path: a thread between its abort check and its count holds `busy`, and abort()
    returns only once that count is in, so the snapshot taken after it holds everything that was issued."""
    gate = Gate(WORLD)
    gate.busy[12345] = True  # as a thread that has passed its check and not yet counted
    returned = threading.Event()
    aborter = threading.Thread(target=lambda: (gate.abort("x"), returned.set()))
    aborter.start()
    time.sleep(0.2)
    assert gate.aborted == "x" and not returned.is_set()
    gate.busy[12345] = False
    assert returned.wait(5)
    aborter.join()


class Group:  # a process group as far as the gate cares: something with an identity, weakly referenced
    pass


def test_counts_racing_one_abort_leave_a_consistent_snapshot():
    """Two threads, each issuing on its own group, while another aborts: what is counted right after abort()
    returns is every call that went out, and nothing is counted afterwards."""
    gate, groups = Gate(WORLD), [Group(), Group()]
    issued = [0, 0]

    def issuer(i):
        try:
            while True:
                gate.count(groups[i], "all_reduce", None, None)
                issued[i] += 1  # what a thread "issues": only after a successful count
        except AttemptAborted:
            pass

    workers = [threading.Thread(target=issuer, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    time.sleep(0.05)
    gate.abort("stop")
    counted = [gate.counts.get(id(g), 0) for g in groups]
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
