"""The ops beyond the classic collectives, on real gloo ranks: all_gather_single/reduce_scatter_single and their
deprecated names, object collectives, point-to-point, functional collectives. Tracked once each (op, sequence,
shape, dtype, call site; peer and tag for point-to-point), results identical with and without the shim, and
debug mode's check before the call."""
import torch.distributed as dist

from tests.shim_helpers import results, run_ranks

NEW_NAMES = hasattr(dist, "all_gather_single")  # torch >= 2.13; before, the scenarios call the older names
AG, RS = ("all_gather_single", "reduce_scatter_single") if NEW_NAMES else ("all_gather_into_tensor",
                                                                           "reduce_scatter_tensor")
# (op, shape) of each record scenario_newops notes, in order (rank 0's point-to-point order: send first)
COLLECTIVES = [(AG, [2]), ("all_gather_into_tensor", [2]), (RS, [4]),
               ("reduce_scatter_tensor", [4]), ("all_gather_object", None), ("broadcast_object_list", None),
               ("gather_object", None), ("scatter_object_list", None)]
FUNCTIONAL = [("funcol.all_reduce", [3]), ("funcol.all_gather_tensor", [1]), ("funcol.reduce_scatter_tensor", [2])]


def test_new_ops_give_the_same_results_with_and_without_the_shim_and_one_record_per_call():
    plain, tracked, debug = (results(run_ranks("newops", mode, n=2)) for mode in ("plain", "track", "debug"))
    for rank in range(2):
        assert plain[rank]["res"] == tracked[rank]["res"] == debug[rank]["res"], rank
        assert tracked[rank]["seen"] == debug[rank]["seen"] and tracked[rank]["pending"] == 0
    assert plain[1]["res"]["ring"] == [0.0] * 3 and plain[0]["res"]["batch"] == [1.5] * 4  # the ops really ran
    for rank, out in enumerate(tracked):
        seen = out["seen"]
        assert all(s["fn"] == "scenario_newops" for s in seen)
        # the group's sequence counts each call once: the deprecated names and the object collectives (which
        # call all_gather_single / all_gather / broadcast inside) included
        assert [(s["op"], s["shape"], s["seq"]) for s in seen[:8]] == [
            (op, shape, i + 1) for i, (op, shape) in enumerate(COLLECTIVES)]
        peer = 1 - rank
        p2p = [(s["op"], s["peer"], s["tag"], s["seq"]) for s in seen[8:12]]
        first, second = ("send", "recv") if rank == 0 else ("recv", "send")
        # point-to-point: a sequence of its own (it must not shift the group's), peer and tag recorded
        assert p2p == [(first, peer, 3, 1), (second, peer, 3, 2), ("irecv", peer, 0, 4),
                       ("batch_isend_irecv", [peer, peer], [5, 5], 5)]
        assert seen[11]["note"] == f"batch: send to {peer} (tag 5), recv from {peer} (tag 5)"
        assert seen[11]["shape"] == [4]
        assert [(s["op"], s["shape"], s["seq"]) for s in seen[12:]] == [
            (op, shape, 9 + i) for i, (op, shape) in enumerate(FUNCTIONAL)]
        assert seen[12]["note"].startswith("functional collective")


KINDS = {
    "all_gather_single": f"Process 1: called {AG}, shape [5, 3], dtype float32 on cpu, PROBLEM: the input",
    "reduce_scatter_single": f"Process 1: called {RS}, shape [8, 3], dtype float64",
    "all_gather_object": "Process 1: called all_gather_object, PROBLEM: the list has 3 entries, expected world_size",
    "broadcast_object_list": "Process 1: called broadcast_object_list, a list of 5 objects, src=0",
    "gather_object": "Process 0: called gather_object, dst=0, PROBLEM: the list has 1 entries",
    "funcol_all_reduce": "Process 1: called funcol.all_reduce, shape [5, 3], dtype float32 on cpu, op=SUM",
    "funcol_all_gather": "Process 1: called funcol.all_gather_tensor, shape [4], dtype int32 on cpu",
}
if NEW_NAMES:  # one op under two names: compared as one (the shapes differ here), each rank's own name shown
    KINDS["deprecated_name"] = ("Process 0: called all_gather_single, shape [4, 3], dtype float32 on cpu\n"
                                "  - Process 1: called all_gather_into_tensor, shape [5, 3]")


def test_mismatch_on_each_new_collective_raises_on_every_rank_and_the_group_stays_usable():
    outs = run_ranks("mismatch", ",".join(KINDS) + ",ok", n=2)
    for rank, (rc, found, text) in enumerate(outs):
        assert rc == 0, text[-2000:]
        by_op = {r["op"]: r for r in found if "op" in r}
        for op, needle in KINDS.items():
            assert by_op[op]["raised"] and needle in by_op[op]["message"], (rank, op, by_op.get(op))
        assert "Operation: `torch.distributed._functional_collectives.all_reduce`" in by_op["funcol_all_reduce"][
            "message"]
        assert any(r.get("ok") for r in found)


P2P = {  # case -> the rows of the message (the rank that comes second raises, before its call)
    "recv": ("Process 0: called isend, shape [4], dtype float32 on cpu, tag 10",
             "Process 1: called recv, shape [5], dtype float32 on cpu, tag 10"),
    "send": ("Process 0: called send, shape [4], dtype float64 on cpu, tag 20",
             "Process 1: called irecv, shape [4], dtype float32 on cpu, tag 20"),
    "tag": ("Process 0: called isend, shape [4], dtype float32 on cpu, tag 30",
            "Process 1: called irecv, shape [4], dtype float32 on cpu, tag 31"),
    "batch": ("Process 0: called isend, shape [4], dtype float32 on cpu, tag 40",
              "Process 1: called irecv, shape [6], dtype float32 on cpu, tag 40"),
}


def test_point_to_point_mismatch_is_caught_before_the_call_with_both_sides():
    outs = run_ranks("p2p_mismatch", n=2)
    raised = {}
    for rank, (rc, found, text) in enumerate(outs):
        assert rc == 0 and len(found) == len(P2P), text[-2000:]
        for r in found:
            if r["raised"]:
                assert r["case"] not in raised, r  # one side raises: the one that came second
                raised[r["case"]] = r["raised"]
    assert sorted(raised) == sorted(P2P)
    for case, (sender, receiver) in P2P.items():
        assert f"  - {sender}\n  - {receiver}" in raised[case], raised[case]
    assert "Operation: `torch.distributed.batch_isend_irecv`" in raised["batch"]
