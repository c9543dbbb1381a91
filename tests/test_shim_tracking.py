"""Collective tracking on real gloo ranks: what each rank records, DDP's reducer included."""
from tests.shim_helpers import results, run_ranks


def test_tracking_sees_plain_async_object_and_ddp_collectives():
    res = results(run_ranks("tracking", n=2))
    for r, out in enumerate(res):
        plain, bcast, obj, ddp, user = out["seen"]
        assert (plain["op"], plain["seq"], plain["shape"], plain["dtype"]) == ("all_reduce", 1, [3], "float32")
        assert plain["site"][0].endswith("job.py") and plain["site"][2] == "scenario_tracking"
        assert (bcast["op"], bcast["seq"], "end" in bcast) == ("broadcast", 2, True)
        # all_gather_object: one record (torch's own all_gather calls inside it are not counted again)
        assert (obj["op"], obj["seq"]) == ("all_gather_object", 3) and obj["site"][2] == "scenario_tracking"
        assert ddp["op"] == "all_reduce" and ddp["note"].startswith("DDP gradient all_reduce, bucket 0, from ")
        assert "backward()" in ddp["note"] and ddp["shape"] == [4]
        # the user's hook ran (once per bucket) inside ours, and its own collective was tracked too (the
        # bucket's record, older, is what a stall report shows)
        assert out["user_calls"] == [0] and (user["op"], user["site"][2]) == ("all_reduce", "user_hook")
        assert out["pending"] == 0
        # DDP's default hook averages: the mean of the ranks' gradients (x = rank + 1 over 2 rows)
        assert out["grad"] == [[3.0, 3.0, 3.0, 3.0]], out["grad"]
    assert res[0]["seen"] == res[1]["seen"] or all(
        a["seq"] == b["seq"] for a, b in zip(res[0]["seen"], res[1]["seen"]))


def test_the_place_file_names_the_call_a_rank_waits_in_and_the_last_one_done(tmp_path):
    """shim/where.py: what is left of a rank the launcher stops (or a frozen one) before it records anything."""
    res = results(run_ranks("where", tmp_path, n=2))
    for r, o in enumerate(res):
        assert o["after"]["in"] == 0 and (o["after"]["call"]["op"], o["after"]["call"]["seq"]) == ("all_reduce", 1), o
        assert o["after"]["call"]["site"][2] == "scenario_where" and o["after"]["call"]["shape"] == [3]
        assert o["after"]["call"]["dtype"] == "float32" and o["after"]["call"]["group"] == "world"
        assert o["after_async"]["in"] == 0 and o["after_async"]["call"]["op"] == "broadcast", o
        assert o["end"]["in"] == 0 and (o["end"]["call"]["op"], o["end"]["call"]["seq"]) == ("all_gather_object", 3), o
    inside = res[0]["inside"]
    assert inside["in"] == 1 and (inside["call"]["op"], inside["call"]["seq"]) == ("all_gather_object", 3), inside
