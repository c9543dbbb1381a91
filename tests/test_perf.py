"""The perf check without a cluster: slow-link localization from recorded figures, and the judging of rank output."""

import itertools
import json
import math

import pytest

from clusterdoc.checks import linkplan, perf
from clusterdoc.doctor import CheckOptions
from clusterdoc.errors import UsageError

# busbw (Gb/s) between healthy pairs as measured on the 4-node test cluster (gloo, 4 MiB, a loaded 2-core machine),
# and through a node whose veth was shaped to 200 Mb/s: the figures a pair gets are drawn from these in turn.
HEALTHY = [4.06, 6.37, 4.51, 6.06, 3.8, 4.66, 2.12, 4.91, 1.75, 2.55, 3.5, 3.14, 2.9, 6.61, 4.18]
SLOW = [0.1, 0.098, 0.1, 0.099]
FRACTION = 0.25  # healthy figures here vary 3.8x (a loaded machine): the cluster test's --busbw-fraction


def recorded(slow_nodes=(), slow_links=()):
    """measure(pairs) for linkplan.localize: each pair gets the next recorded figure of its kind."""
    healthy, slow = itertools.cycle(HEALTHY), itertools.cycle(SLOW)
    calls = []

    def measure(pairs):
        calls.append(list(pairs))
        return [next(slow) if a in slow_nodes or b in slow_nodes or (a, b) in slow_links else next(healthy)
                for a, b in pairs]  # fmt: skip

    return measure, calls


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 16, 33, 64])
def test_matchings_are_disjoint_and_the_circle_method_meets_every_pair_once(n):
    rounds = [linkplan.matching(n, r) for r in range(n - 1 + n % 2)]
    for pairs in rounds + [linkplan.screening(n, r) for r in range(2)]:
        nodes = [x for p in pairs for x in p]
        assert len(nodes) == len(set(nodes)) and len(pairs) == n // 2
    assert sorted(p for r in rounds for p in r) == list(itertools.combinations(range(n), 2))
    first, second = (linkplan.screening(n, r) for r in range(2))
    assert not set(first) & set(second) or n == 2  # each screening round meets new partners


@pytest.mark.parametrize(
    "n, slow",
    [(8, {3}), (4, {2}), (8, {2, 5}), (4, {1, 2}), (8, {0}), (4, {0}), (5, {0}), (7, {6}), (9, {0, 4}), (64, {17}),
     (64, {0, 63}), (33, {32})],
)  # fmt: skip
def test_localize_names_exactly_the_slow_nodes_from_recorded_figures(n, slow):
    measure, calls = recorded(slow)
    v = linkplan.localize(n, measure, FRACTION)
    assert v["slow"] == sorted(slow) and v["undecided"] == [] and v["slow_links"] == []
    assert len(v["rounds"]) == len(calls) <= linkplan.max_rounds(n)
    assert len(v["rounds"]) > linkplan.SCREEN_ROUNDS  # a confirmation round ran for the suspects
    for pairs in calls:  # every round is a set of disjoint pairs
        nodes = [x for p in pairs for x in p]
        assert len(nodes) == len(set(nodes))
    assert v["median"] * 8 > 1.0 and all(v["best"][x] < v["floor"] for x in slow)


def test_the_slow_first_host_is_named_like_any_other():
    measure, _ = recorded({0})
    v = linkplan.localize(6, measure, FRACTION)
    assert v["slow"] == [0] and 0 not in v["cleared"] and v["cleared"] == [1, 2, 3, 4, 5]


def test_rounds_do_not_grow_with_the_node_count_at_equal_faults():
    for faults in ({5}, {1, 6}):
        counts = [len(linkplan.localize(n, recorded(faults)[0], FRACTION)["rounds"]) for n in (8, 16, 32, 64, 128)]
        assert max(counts) <= 4 and all(c <= linkplan.max_rounds(8) for c in counts), counts
    assert linkplan.max_rounds(64) == 16 and linkplan.max_rounds(8) == 10


def test_many_slow_nodes_take_more_confirmation_rounds_within_the_bound():
    slow = set(range(0, 32, 3))  # 11 of 32
    v = linkplan.localize(32, recorded(slow)[0], FRACTION)
    assert v["slow"] == sorted(slow) and len(v["rounds"]) <= linkplan.max_rounds(32)


def test_a_slow_link_between_two_healthy_nodes_is_a_link_not_a_node():
    n = 8
    pair = linkplan.screening(n, 0)[1]  # a pair the first round tests
    v = linkplan.localize(n, recorded(slow_links={pair})[0], FRACTION)
    assert v["slow"] == [] and [(a, b) for a, b, _ in v["slow_links"]] == [pair]
    assert sum(1 for a, b, _, _ in v["tests"] if (a, b) == pair) == 2  # tested again before it is named


def test_a_noisy_dip_of_a_healthy_pair_is_cleared_by_its_retest():
    n, dipped = 8, linkplan.screening(8, 0)[0]
    seen = []

    def measure(pairs):
        out = [0.1 if p == dipped and p not in seen else 5.0 for p in pairs]
        seen.extend(pairs)
        return out

    v = linkplan.localize(n, measure)
    assert v["slow"] == v["undecided"] == v["slow_links"] == []


def test_two_nodes_cannot_tell_which_one_is_slow():
    v = linkplan.localize(2, recorded({1})[0], min_busbw=1.0)
    assert v["slow"] == [] and v["undecided"] == [0, 1] and len(v["rounds"]) == 1


# ---- judging the ranks' output (what doctor gets back over SSH)


def result_of(n, slow=(), flops=None, quota=None, names=None):
    """A perf result as gather builds it: each rank's own record (its compute, the peer and time of each of its
    rounds), from a localization on recorded figures."""
    names = names or [f"node{i + 1}" for i in range(n)]
    v = linkplan.localize(n, recorded(set(slow))[0], FRACTION)
    gb, size, iters = 1e9 / 8, 4 << 20, 2
    recs = [{"rank": i, "world": n, "backend": "gloo", "flops": (flops or {}).get(i, 20e9), "mem_mib": 24105,
             "cpu_quota": (quota or {}).get(i), "bytes": size, "iters": iters, "malformed": {}, "ok": True,
             "rounds": [[-1, None] for _ in v["rounds"]]} for i in range(n)]  # fmt: skip
    for a, b, bw, r in v["tests"]:
        recs[a]["rounds"][r] = [b, size * iters / (bw * gb)]
        recs[b]["rounds"][r] = [a, size * iters / (bw * gb)]
    ranks = {names[i]: recs[i] for i in range(n)}
    return {"world": n, "master": f"{names[0]}:30001", "order": names, "ranks": ranks, "bytes": size, "iters": iters}


def bad(findings):
    return {(f["node"], f["status"]) for f in findings if f["status"] != "ok"}


def test_check_names_the_slow_node_with_its_figure_the_median_and_a_fix():
    out = perf.check(result_of(4, slow={2}), [f"node{i}" for i in range(1, 5)], {}, busbw_fraction=FRACTION)
    assert bad(out) == {("node3", "fail")}
    (f,) = [f for f in out if f["status"] == "fail"]
    assert f["message"].startswith("node3's links carry 100 Mb/s busbw")
    assert "against a median of" in f["message"] and "found in 3 rounds of pair tests" in f["message"]
    assert "ethtool" in f["fix"] and "remove node3 from the hostfile" in f["fix"]
    summary = perf.summary(result_of(4, slow={2}), [], FRACTION)
    assert summary["slow"] == ["node3"] and summary["rounds"] == 3 and summary["max_rounds"] == 8
    assert json.dumps(summary)  # the --json figures are plain JSON


def test_check_names_slow_compute_and_a_cpu_quota_but_not_the_others():
    out = perf.check(result_of(5, flops={1: 9e9, 3: 18e9}), [f"node{i}" for i in range(1, 6)], {})
    assert bad(out) == {("node2", "warn")}  # 55% below the median; node4 is 10% below, inside the 20%
    (f,) = [f for f in out if f["status"] == "warn"]
    assert "compute 9 GFLOP/s" in f["message"] and "55% below the median 20 GFLOP/s of 5 nodes" in f["message"]
    quota = perf.check(result_of(4, quota={3: 0.25}), [f"node{i}" for i in range(1, 5)], {})
    assert bad(quota) == {("node4", "warn")}
    assert "0.25 CPUs (a cgroup CPU quota)" in next(f["message"] for f in quota if f["status"] == "warn")
    tighter = perf.check(result_of(5, flops={3: 18e9}), [f"node{i}" for i in range(1, 6)], {}, compute_fraction=0.05)
    assert bad(tighter) == {("node4", "warn")}


def test_gpu_memory_comes_from_the_facts_and_the_smallest_gpu_counts():
    facts = {f"node{i}": {"gpus": [{"memory_mib": 81920}] * 2} for i in range(1, 5)}
    facts["node4"]["gpus"] = [{"memory_mib": 81920}, {"memory_mib": 40960}]
    out = perf.check(result_of(4), list(facts), facts)
    (f,) = [f for f in out if f["status"] != "ok"]
    assert f["node"] == "node4" and f["message"].startswith("memory 40 GiB") and "50% below" in f["message"]


def test_untrusted_rank_output_is_bounded_and_checked():
    r = result_of(4, slow={1})
    node1 = r["ranks"]["node1"]
    node1["rounds"] += [[9, 1.0], [0, 1.0], ["1", 1.0], [2, math.nan], [2, -5], "x"] * 3
    r["ranks"]["node3"]["flops"] = "lots"
    out = perf.check(r, [f"node{i}" for i in range(1, 5)], {}, busbw_fraction=FRACTION)
    assert bad(out) == {("node2", "fail")}  # the garbage is ignored, the real figures still judged
    for line in ("{not json", "[1, 2]", "[" * 100000):
        assert perf.parse_rank_output("ok", "CLUSTERDOC-PERF " + line, "") == {
            "ok": False, "message": "its output line is not a JSON object"}  # fmt: skip


def test_a_node_speaks_only_for_itself():
    """node1 (rank 0) claims it met node3 in every round, slowly, and that node3's bytes were malformed: node3 said
    so in one round only, so only that test counts (with node1's own slow time: node1 is named, undecided) and node3
    is not named; node1's own tiny compute is its own claim and is named."""
    r = result_of(4)
    node1 = r["ranks"]["node1"]
    node1["rounds"] = [[2, 1000.0]] * len(node1["rounds"])
    node1["malformed"] = {"2": "its pair plan was not the expected JSON record"}
    node1["flops"] = 1e6
    out = perf.check(r, [f"node{i}" for i in range(1, 5)], {})
    assert {n for n, _ in bad(out)} == {"node1"}, out
    assert [t[:2] for t in perf.figures(r)["tests"] if 0 in t[:2]] == [(0, 2)]
    # every other rank that finished reports node1's bytes as malformed: node1 is named for it
    for m in ("node2", "node3", "node4"):
        r["ranks"][m]["malformed"] = {"0": "its pair plan was not the expected JSON record"}
    named = [f for f in perf.check(r, list(r["order"]), {}) if "not the expected JSON record" in f["message"]]
    assert [f["node"] for f in named] == ["node1"] and "reported by node2, node3, node4" in named[0]["message"]


def test_nan_figures_are_a_finding_not_dropped():
    r = result_of(4)
    r["ranks"]["node2"]["flops"] = math.nan
    out = perf.check(r, [f"node{i}" for i in range(1, 5)], {})
    assert ("node2", "fail") in bad(out)
    assert "not a finite number" in next(f["message"] for f in out if f["node"] == "node2" and f["status"] == "fail")


def test_a_rank_that_did_not_finish_and_a_node_without_torch():
    r = result_of(3)
    r["ranks"]["node1"] = perf.parse_rank_output("timeout", "", "", "timed out after 60s")
    out = perf.check(r, ["node1", "node2", "node3", "node4"], {})
    assert bad(out) == {("node1", "fail"), ("node4", "fail")}  # the others' own figures are still judged
    assert "timed out after 60s" in next(f["message"] for f in out if f["node"] == "node1")
    assert "no torch" in next(f["message"] for f in out if f["node"] == "node4")
    for m in ("node2", "node3"):
        r["ranks"][m] = perf.parse_rank_output("ok", "", "RuntimeError: Connection closed by peer")
    out = perf.check(r, ["node1", "node2", "node3"], {})
    assert bad(out) == {("node1", "fail"), ("node2", "fail"), ("node3", "fail")}
    assert bad(perf.check({"error": "no node has torch"}, ["node1"], {})) == {("node1", "fail")}


def test_perf_is_off_by_default_and_its_options_are_checked():
    assert "perf" not in CheckOptions(hostfile="h").selected()
    assert CheckOptions(hostfile="h", perf=True).selected()[-1] == "perf"
    for bad_opts in ({"busbw_fraction": 1.5}, {"compute_fraction": 0}, {"min_busbw": -1}, {"perf_mib": 0}):
        with pytest.raises(UsageError):
            CheckOptions(local=True, perf=True, **bad_opts).validate()


def test_the_rank_script_carries_the_planner_and_compiles():
    source = perf.rank_script()
    compile(source, "perf-rank", "exec")
    assert "def localize(" in source and "CLUSTERDOC-PERF" in source


def test_the_last_record_counts_and_one_cut_by_the_deadline_falls_back():
    first, last = {"rank": 0, "rounds": []}, {"rank": 0, "rounds": [[1, 0.5]]}
    lines = f"CLUSTERDOC-PERF {json.dumps(first)}\nCLUSTERDOC-PERF {json.dumps(last)}\n"
    assert perf.parse_rank_output("ok", lines, "") == dict(last, ok=True)
    cut = lines + 'CLUSTERDOC-PERF {"rank": 0, "rou'
    assert perf.parse_rank_output("timeout", cut, "") == dict(last, ok=True, cut=True)
    # only the deadline cuts a line: a broken line of a rank that ended is its failure
    assert perf.parse_rank_output("ok", cut, "")["ok"] is False
    assert perf.parse_rank_output("timeout", 'CLUSTERDOC-PERF {"ra', "", "node1: did not finish")["ok"] is False


def test_a_rank_that_joined_late_is_named_and_the_others_are_judged_among_themselves():
    """node3 (rank 2) started after rank 0 stopped waiting: rank 0's members leave it out; the other three measured
    each other (node2 slow). node3 is named as late, not as slow or undecided, and node2 still as slow."""
    names = [f"node{i}" for i in range(1, 5)]
    three = result_of(3, slow={1}, names=["node1", "node2", "node4"])
    r = dict(three, world=4, order=names)
    for rec in r["ranks"].values():
        rec.update(world=4, members=[0, 1, 3], join_seconds=45.5)
        rec["rounds"] = [[{2: 3}.get(p, p), t] for p, t in rec["rounds"]]
    r["ranks"]["node4"]["rank"] = 3
    r["ranks"]["node3"] = {"rank": 2, "world": 4, "late": True, "members": [0, 1, 3], "rounds": [], "ok": True}
    out = perf.check(r, names, {}, busbw_fraction=FRACTION)
    assert bad(out) == {("node3", "fail"), ("node2", "fail")}, out
    late = next(f for f in out if f["node"] == "node3")
    assert late["message"].startswith("node3's rank did not join the perf test within the 45.5s rank 0 waits")
    assert "ping" in late["fix"] and "did not finish" not in late["message"]
    assert [f["message"][:19] for f in out if f["node"] == "node2" and f["status"] == "fail"] == ["node2's links carry"]
    assert perf.summary(r, names, FRACTION)["late"] == ["node3"]
    # no record at all (its SSH login outlasted the head's deadline): named as late all the same
    r["ranks"]["node3"] = perf.parse_rank_output("timeout", "", "", "node3: the command did not finish within 90s")
    assert bad(perf.check(r, names, {}, busbw_fraction=FRACTION)) == {("node3", "fail"), ("node2", "fail")}


def test_ranks_that_could_not_join_a_failed_rank_0_did_not_finish():
    r = result_of(3)
    r["ranks"]["node1"] = perf.parse_rank_output("ok", "", "OSError: [Errno 98] Address already in use")
    for m in ("node2", "node3"):
        r["ranks"][m] = {"rank": int(m[-1]) - 1, "world": 3, "late": True, "members": None, "rounds": [], "ok": True,
                         "join_error": "wait timeout after 85000ms, keys: /members"}  # fmt: skip
    out = perf.check(r, ["node1", "node2", "node3"], {})
    assert bad(out) == {("node1", "fail"), ("node2", "fail"), ("node3", "fail")}
    assert "Address already in use" in next(f["message"] for f in out if f["node"] == "node1")
    node2 = next(f["message"] for f in out if f["node"] == "node2")
    assert "did not finish" in node2 and "could not join rank 0: wait timeout" in node2


def test_rank_0_alone_cannot_call_a_node_that_measured_late():
    r = result_of(4, slow={2})
    r["ranks"]["node1"]["members"] = [0, 2, 3]  # node2 (rank 1) left out by rank 0's word only
    out = perf.check(r, list(r["order"]), {}, busbw_fraction=FRACTION)
    assert bad(out) == {("node3", "fail")} and not [f for f in out if "did not join" in f["message"]]
    # a node with no record that rank 0 left out is late, with its own command's failure kept
    r["ranks"]["node2"] = perf.parse_rank_output("ok", "", "ModuleNotFoundError: No module named 'torch'")
    late = next(f["message"] for f in perf.check(r, list(r["order"]), {}, busbw_fraction=FRACTION)
                if f["node"] == "node2")  # fmt: skip
    assert "did not join the perf test" in late and late.endswith("its own command: ModuleNotFoundError: No module "
                                                                  "named 'torch'")  # fmt: skip
