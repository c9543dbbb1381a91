"""Debug mode: the cross-rank check of collectives, on real gloo process groups."""
import socket
import time

import pytest
import torch

from clusterdoc.shim import debug
from tests.shim_helpers import results, run_ranks


def row(op, tensor, rank=0, world=2, **kw):
    return debug._encode(op, (tensor,), kw, rank, world)


def test_verdict_pure_rules():
    a, b = torch.zeros(4, 3), torch.zeros(5, 3)
    assert debug.verdict("all_reduce", [row("all_reduce", a), row("all_reduce", a)]) is None
    text = debug.verdict("all_reduce", [row("all_reduce", a), row("all_reduce", b)])
    assert "Process 0: called all_reduce, shape [4, 3], dtype float32 on cpu" in text
    assert "Process 1: called all_reduce, shape [5, 3]" in text
    assert debug.verdict("all_reduce", [row("all_reduce", a), row("all_reduce", a.double())])
    # more than MAX_DIMS dims: the tail is folded, so a difference there still shows
    x, y = torch.zeros([1] * 9 + [2]), torch.zeros([1] * 9 + [3])
    assert debug.verdict("broadcast", [row("broadcast", x), row("broadcast", y)])


def test_all_to_all_single_with_splits_compares_all_but_first_dim():
    def enc(n, rank):
        t = torch.zeros(n, 3)
        return debug._encode("all_to_all_single", (t, t, [n - 1, 1], [n - 1, 1]), {}, rank, 2)
    assert debug.verdict("all_to_all_single", [enc(4, 0), enc(6, 1)]) is None


def test_must_show_broadcast_shape_mismatch_fails_on_both_ranks_fast():
    start = time.monotonic()
    found = results(run_ranks("mismatch", "broadcast", n=2))
    assert time.monotonic() - start < 30
    for r in found:
        assert r["raised"] and r["seconds"] < 5 and r["op"] == "broadcast"
        assert "torch.distributed.broadcast" in r["message"]
        assert "Process 0: called broadcast, shape [4, 3], dtype float32" in r["message"]
        assert "Process 1: called broadcast, shape [5, 3], dtype float32" in r["message"]


KINDS = {
    "all_reduce": "Process 1: called all_reduce, shape [5, 3]",
    "all_reduce_dtype": "dtype float64",
    "gather_list": "PROBLEM: the list has 1 entries",
    "different_ops": "Process 1: called broadcast",
    "src": "src=1",
    "all_gather_into_tensor": "PROBLEM: the input and output sizes do not fit world_size",
    "reduce_scatter_tensor": "PROBLEM: the input and output sizes do not fit world_size",
    "scatter": "Process 1: called scatter, shape [5]",
}


def test_mismatch_kinds_raise_on_every_rank_and_the_group_stays_usable():
    # one job runs every kind in turn: after each raise the ranks are still in step
    outs = run_ranks("mismatch", ",".join(KINDS) + ",ok", n=2)
    for rank, (rc, found, text) in enumerate(outs):
        assert rc == 0, text[-2000:]
        by_op = {r["op"]: r for r in found if "op" in r}
        for op, needle in KINDS.items():
            assert op in by_op and by_op[op]["raised"] and needle in by_op[op]["message"], (rank, op, text[-3000:])
        assert any(r.get("ok") for r in found)


def test_four_ranks_only_one_differs():
    found = results(run_ranks("mismatch", "all_gather", n=4))
    assert all(r["raised"] for r in found)
    assert "Process 1: called all_gather, shape [5, 3]" in found[3]["message"]
    assert "Process 3: called all_gather, shape [4, 3]" in found[0]["message"]


def test_consistent_ops_pass_and_compute_the_same_results():
    found = results(run_ranks("mismatch", "ok", n=2))
    for r in found:
        assert r["ok"] and r["sum"] == [3.0] * 4 and r["gathered"] == [0.0, 1.0]
        assert r["big"] == [0.0] * 4 + [1.0] * 4
        assert r["bcast"] == [1.0] * 3 and r["max"] == [1, 0] and r["large"] == [1.0]
    assert found[1]["scattered"] == [1.0, 1.0] and found[1]["a2a"] == [1.0, 11.0]


def test_subgroup_checks_members_only_and_names_global_ranks():
    found = results(run_ranks("subgroup", n=3))
    assert found[0] == {"rank": 0, "small": [0.0] * 4, "large": [0.0], "bcast": [0.0] * 3, "raised": None}
    for r in found[1:]:
        assert r["small"] == [3.0] * 4 and r["large"] == [3.0] and r["bcast"] == [2.0] * 3
        assert "Process 1: called all_reduce, shape [4]" in r["raised"]
        assert "Process 2: called all_reduce, shape [5]" in r["raised"]


def test_mismatch_kinds_on_the_collective_fallback():
    outs = run_ranks("mismatch", ",".join(KINDS) + ",ok", n=2, env={"TEST_DEBUG_CHANNEL": "collective"})
    for rank, (rc, found, text) in enumerate(outs):
        assert rc == 0, text[-2000:]
        by_op = {r["op"]: r for r in found if "op" in r}
        for op, needle in KINDS.items():
            assert op in by_op and by_op[op]["raised"] and needle in by_op[op]["message"], (rank, op, text[-3000:])
        assert any(r.get("ok") for r in found)


def test_side_channel_many_small_ops_in_a_row():
    for r in results(run_ranks("channel", "fused", n=3)):
        assert r["mode"] == "socket" and r["sums_ok"] and r["large"] == [3.0] and r["raised"]
        assert not r["readable"]  # its address record in the store is sealed, and holds no token


def test_side_channel_without_a_job_secret_every_rank_takes_the_collective():
    # no secret given, and none can be made: HOME is not a folder (shim/secret.py)
    for r in results(run_ranks("channel", "fused", n=2, env={"CLUSTERDOC_JOB_SECRET": "", "HOME": "/dev/null"})):
        assert r["mode"] == "alltoall" and r["sums_ok"] and r["large"] == [1.0] and r["raised"]


def test_side_channel_unreachable_peer_all_ranks_fall_back():
    for r in results(run_ranks("channel", "unreachable", n=3)):
        assert r["mode"] == "alltoall" and r["sums_ok"] and r["large"] == [3.0] and r["raised"]


def test_side_channel_peer_gone_raises_at_once():
    outs = run_ranks("channel", "gone", n=2)
    found = outs[0][1]
    assert found, outs[0][2][-2000:]
    error = found[0]["error"] or ""  # EOF or a reset, depending on what the peer left unread
    assert ("closed its connection" in error or "lost group rank 1" in error) and found[0]["seconds"] < 5, found


@pytest.mark.slow
def test_a_port_taken_before_rank_0_binds_it_is_tried_again(monkeypatch):
    """tests/shim_helpers.run_ranks (ci52: another process took the port free_port() found): rank 0's EADDRINUSE
    makes it run the ranks again on another port, so the scenario's own result is what the test sees."""
    from tests import shim_helpers

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))  # bound, not listening: rank 0's bind fails, the others' connects are refused
        taken = iter([held.getsockname()[1]])
        real = shim_helpers.free_port
        monkeypatch.setattr(shim_helpers, "free_port", lambda: next(taken, None) or real())
        found = results(shim_helpers.run_ranks("mismatch", "ok", n=2))
    assert len(found) == 2 and all(r.get("ok") for r in found), found
