"""The straggler watch's judging (shim/straggler.py, shim/pace.py) from recorded figures, no job; and the trace's
"waiting %" counter tracks (hang/trace.py)."""
import io

import pytest

from clusterdoc.hang import trace
from clusterdoc.shim import pace, straggler, track
from clusterdoc.shim.straggler import Figures

SITE = "job.py:380 in scenario_straggler"


def recorded(slow: int | None = 2, hosts=("vm", "vm", "vm", "vm")) -> list[Figures]:
    """A window of 33 steps recorded from the 4-rank local DDP job (tests/shim_jobs/job.py straggler): rank `slow`
    sleeping 100 ms more per step than the others; with slow None, the same job healthy."""
    if slow is None:
        rows = [(4.02, 0.71), (4.01, 0.74), (4.03, 0.69), (4.02, 0.72)]
    else:
        rows = [(4.31, 3.25), (4.30, 3.27), (4.33, 3.30), (4.30, 3.31)]
        rows[slow] = (4.32, 0.12)
    return [Figures(r, hosts[r], wall, wait, 33, 66, {SITE: wait}) for r, (wall, wait) in enumerate(rows)]


def test_the_rank_that_arrives_last_is_named_with_its_node_figures_and_the_others_call_site():
    v = straggler.judge(recorded(2, hosts=("node1", "node1", "node2", "node3")))
    assert v is not None and v.slow == [2] and v.hosts == ["node2"] and v.per == "step"
    assert v.compute == pytest.approx(4.20 / 33) and v.median_compute == pytest.approx((4.30 - 3.26) / 33, rel=0.3)
    assert v.site == SITE and v.share > 0.7
    text = straggler.verdict_text(v)
    assert text.startswith("clusterdoc: straggler: rank 2 on node2 keeps the others waiting: 127 ms of compute per")
    assert "x the median" in text and f"at {SITE}" in text


def test_a_healthy_window_and_one_where_every_rank_waits_alike_name_nobody():
    assert straggler.judge(recorded(None)) is None
    alike = [Figures(r, "vm", 4.0, 3.0 + 0.05 * r, 33, 66) for r in range(4)]  # a slow link: all wait, none less
    assert straggler.judge(alike) is None


def test_two_slow_ranks_on_one_node_are_both_named_and_half_the_job_slow_is_no_straggler():
    ranks = [Figures(r, "node2" if r in (2, 3) else "node1", 4.0, 0.1 if r in (2, 3) else 3.0) for r in range(6)]
    v = straggler.judge(ranks)
    assert v is not None and v.slow == [2, 3] and v.hosts == ["node2"] and v.per == "collective"
    assert "ranks 2,3 on node2 keep the others waiting" in straggler.verdict_text(v)
    half = [Figures(r, "vm", 4.0, 0.1 if r < 2 else 3.0) for r in range(4)]
    assert straggler.judge(half, threshold=0.4) is None  # gap 0.36 at the median < threshold
    assert straggler.judge([Figures(r, "vm", 4.0, 0.1 if r < 3 else 3.0) for r in range(4)]) is None


def test_the_threshold_is_the_share_of_the_step_the_median_rank_waits_for_it():
    ranks = recorded(2)  # the median rank waits ~73 % more of the step than rank 2
    assert straggler.judge(ranks, threshold=0.7) is not None
    assert straggler.judge(ranks, threshold=0.8) is None
    assert straggler.judge(ranks, threshold=0) is None  # 0: off
    assert straggler.threshold_from_env({}) == 0.10
    assert straggler.threshold_from_env({"CLUSTERDOC_STRAGGLER": "25"}) == 0.25
    assert straggler.threshold_from_env({"CLUSTERDOC_STRAGGLER": "2.5%"}) == 0.025
    assert straggler.threshold_from_env({"CLUSTERDOC_STRAGGLER": "100"}) == 0.10
    assert straggler.threshold_from_env({"CLUSTERDOC_STRAGGLER": "0"}) == 0
    assert straggler.threshold_from_env({"CLUSTERDOC_STRAGGLER": "lots"}) == 0.10


def test_a_window_is_the_difference_of_two_published_samples_and_malformed_ones_are_dropped():
    old = straggler.figures({"wall": 1.0, "wait": 0.5, "steps": 2, "calls": 4, "sites": {SITE: 0.5}}, 1, "n1")
    new = straggler.figures({"wall": 5.0, "wait": 3.5, "steps": 12, "calls": 24, "sites": {SITE: 3.5}, "peak": 7,
                             "memory": "GPU"}, 1, "n1")
    w = straggler.delta(new, old)
    assert (w.wall, w.wait, w.steps, w.calls, w.sites, w.peak, w.memory) == (4.0, 3.0, 10, 20, {SITE: 3.0}, 7, "GPU")
    for bad in ({"wall": "x", "wait": 1}, {"wait": 1}, {"wall": 1, "wait": 1, "sites": [1]}):
        assert straggler.figures(bad, 0) is None
    states = {0: {"host": "a", "pace": {"wall": 1, "wait": 0}}, 1: {"host": "b", "pace": "forged"}, 2: None}
    assert [f.rank for f in pace.from_states(states)] == [0]


def test_the_watch_logs_a_picture_once_two_windows_agree_again_when_it_changes_and_never_when_healthy():
    out = io.StringIO()
    watch = pace.Watch(4, 0.1, out)
    healthy, slow2, slow3 = straggler.judge(recorded(None)), straggler.judge(recorded(2)), straggler.judge(recorded(3))
    lines = [watch.judged(v) for v in (healthy, healthy, slow2, slow2, slow2, slow3, slow2, slow2, healthy, healthy)]
    assert [bool(line) for line in lines] == [False, False, False, True, False, False, False, False, False, True]
    assert lines[3].startswith("clusterdoc: straggler: rank 2 ") and lines[9] == straggler.CLEARED
    assert out.getvalue().count("\n") == 2


def test_the_watch_judges_windows_of_heartbeats_only_once_they_span_enough_steps_and_seconds(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(pace.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    watch = pace.Watch(4, 0.1, out)
    totals = [Figures(r, "vm", 0.0, 0.0, 0, 0) for r in range(4)]

    def beats():  # each call: one more window of the recorded job, cumulated, as heartbeats carry it
        for t, w in zip(totals, recorded(1)):
            t.wall, t.wait, t.steps, t.calls = t.wall + w.wall, t.wait + w.wait, t.steps + 33, t.calls + 66
            t.sites = {SITE: t.wait}
        return {t.rank: {"host": t.host, "pace": {"wall": t.wall, "wait": t.wait, "steps": t.steps,
                                                   "calls": t.calls, "sites": t.sites}} for t in totals}

    said = []
    for _ in range(5):
        said.append(watch.tick(beats))
        assert watch.tick(beats) is None  # within PERIOD: the store is not read again
        clock[0] += pace.PERIOD
    # the first sample is the base; the first window (the job's start) is not judged; two windows agree: logged
    assert said[:3] == [None, None, None] and said[3].startswith("clusterdoc: straggler: rank 1 ") and said[4] is None
    watch = pace.Watch(5, 0.1, out)  # a rank missing from the heartbeats: no window
    assert watch.tick(beats) is None and watch.base is None


def test_the_summary_names_ranks_whose_peak_memory_is_off_the_median():
    ranks = recorded(None)
    for f, peak in zip(ranks, (100, 104, 130, 97)):
        f.peak, f.memory = peak << 20, "GPU"
    text = straggler.summary_text(ranks, "title")
    assert text.splitlines()[0] == "title" and "rank 0 (vm): compute 3.31 s, waiting 710 ms (18%)" in text
    assert "peak GPU 100.0 MiB" in text and "straggler:" not in text
    assert "rank 2's peak GPU 130.0 MiB is 27% above the median 102.0 MiB (the fullest GPU" in text
    assert "rank 3's" not in text
    assert straggler.memory_outliers({0: 100, 1: 50}) == [(0, 100, 75.0), (1, 50, 75.0)]
    assert "straggler: rank 2 on vm" in straggler.summary_text(recorded(2), "title")


def test_the_trace_has_a_waiting_counter_track_per_rank_with_overlaps_counted_once():
    rec = lambda seq, start, end=None: {"op": "all_reduce", "seq": seq, "group": "world", "start": start,  # noqa
                                        **({"end": end} if end is not None else {})}
    # rank 0 waits the first half (two overlapping calls), rank 1 hardly; rank 1's last call never ends
    records = {0: [rec(1, 0.0, 0.4), rec(2, 0.2, 0.5), rec(3, 0.9, 1.0)], 1: [rec(1, 0.45, 0.5), rec(3, 0.95)]}
    counters = [e for e in trace.build(records)["traceEvents"] if e["ph"] == "C"]
    by_rank = {r: [e["args"]["waiting"] for e in counters if e["pid"] == r] for r in (0, 1)}
    assert len(by_rank[0]) == trace.BINS and {e["name"] for e in counters} == {"waiting %"}
    assert by_rank[0][: trace.BINS // 2] == [100.0] * (trace.BINS // 2)
    assert by_rank[0][trace.BINS // 2 : trace.BINS * 9 // 10] == [0.0] * (trace.BINS * 4 // 10)
    assert by_rank[1][-1] == 100.0 and sum(by_rank[1]) == pytest.approx(100.0 * trace.BINS * 0.1, rel=0.02)
    ts = [e["ts"] for e in counters if e["pid"] == 0]
    assert ts == sorted(ts) and ts[0] == 0


# --- the whole run's summary: start-up left out, figures ending at each rank's last collective -------------------


def simulated(monkeypatch, compute, steps, prepare=0.0, exit_work=0.0, n=4):
    """Heartbeats of an n-rank synchronous job run through real trackers (track.Tracker) on a fake clock: first a
    barrier at which the others wait `prepare` seconds for rank 0 (it prepares the data: a common, healthy start),
    then `steps` steps of one all_reduce each, rank r computing compute(r) seconds before it; the collective ends
    1 ms after the last rank arrives. Rank 0's final figures are read `exit_work` seconds after the others' (the
    shim's exit work on rank 0: waiting for the others to let go of its store, reading their heartbeats)."""
    clock = [1000.0]
    monkeypatch.setattr(track.clock, "now", lambda: clock[0])
    trackers = [track.Tracker() for _ in range(n)]
    site = ("/job/train.py", 71, "train")

    def collective(arrive):
        recs = []
        for t, at in zip(trackers, arrive):
            clock[0] = at
            recs.append(t.begin("all_reduce", None, (64,), "float32", site))
        clock[0] = max(arrive) + 0.001
        for t, rec in zip(trackers, recs):
            t.end(rec)
        return clock[0]

    now = collective([1000.0 + (prepare if r == 0 else 0.0) for r in range(n)])
    for _ in range(steps):
        now = collective([now + compute(r) for r in range(n)])
        for t in trackers:
            t.steps += 1
    states = {r: {"host": "vm", "pace": t.pace()} for r, t in enumerate(trackers)}
    clock[0] += exit_work
    states[0] = {"host": "vm", "pace": trackers[0].pace()}
    return states, trackers


def summary_of(states) -> str:
    out = io.StringIO()
    pace.summary(states, 0.1, out)
    return out.getvalue()


def test_a_healthy_job_whose_rank_0_prepares_the_data_and_works_for_the_shim_at_exit_names_no_straggler(monkeypatch):
    states, trackers = simulated(monkeypatch, lambda r: 0.1, 140, prepare=3.0, exit_work=0.9)
    # the start-up ended on the same collective on every rank, a window's worth in (10 steps and 4 s)
    starts = [t.start for t in trackers]
    assert all(s is not None for s in starts) and len({(s["steps"], s["calls"]) for s in starts}) == 1
    assert starts[0]["steps"] >= straggler.WINDOW_STEPS and trackers[1].first_end - 1000.0 == pytest.approx(3.001)
    assert starts[1]["wall"] >= straggler.WINDOW_SECONDS + 3.0  # 4 s past the barrier, which rank 1 waited at
    # every rank's figures end at its last collective: rank 0's exit work is nobody's compute
    assert states[0]["pace"]["wall"] == pytest.approx(0.001 + 140 * 0.101, abs=1e-3)  # from its barrier's start
    assert states[1]["pace"]["wall"] == pytest.approx(3.001 + 140 * 0.101, abs=1e-3)
    ranks, judged = pace.settled(states)
    assert judged and all(f.steps == 140 - starts[0]["steps"] for f in ranks)
    assert all(f.compute == pytest.approx(0.1 * f.steps, rel=0.05) for f in ranks)  # the same on every rank
    text = summary_of(states)
    assert text.startswith(f"clusterdoc: per-rank pace (over the last {ranks[0].steps:.0f} steps, start-up left out):")
    assert "straggler" not in text.lower(), text
    # the same figures since tracking began, the barrier counted, name rank 0: what the summary judged before
    v = straggler.judge(pace.from_states(states))
    assert v is not None and v.slow == [0]


def test_a_rank_that_computes_longer_every_step_is_still_named_in_the_summary_past_the_start_up(monkeypatch):
    states, _ = simulated(monkeypatch, lambda r: 0.2 if r == 2 else 0.1, 100, prepare=3.0, exit_work=0.9)
    ranks, judged = pace.settled(states)
    v = straggler.judge(ranks)
    assert judged and v is not None and v.slow == [2] and v.per == "step"
    assert v.compute == pytest.approx(0.2, rel=0.05) and v.median_compute == pytest.approx(0.1, rel=0.05)
    assert "\n  straggler: rank 2 on vm keeps the others waiting: " in summary_of(states)


def test_a_job_too_short_to_judge_past_its_start_up_shows_its_figures_and_judges_nothing(monkeypatch):
    # the demo's job on a fast machine: 32 steps of 3 ms; rank 2 here even computes 5 times longer
    states, trackers = simulated(monkeypatch, lambda r: 0.015 if r == 2 else 0.003, 32, exit_work=0.9)
    assert all(t.start is None for t in trackers)  # never 4 s past the first collective
    ranks, judged = pace.settled(states)
    assert not judged and len(ranks) == 4
    text = summary_of(states)
    assert text.startswith("clusterdoc: per-rank pace (since tracking began, start-up included, too short to judge):")
    assert "rank 2 (vm): compute " in text and "straggler" not in text.lower(), text
    assert straggler.judge(ranks) is not None  # judged anyway, these figures would name rank 2


def test_a_span_past_the_start_up_is_judged_only_when_every_rank_has_one_and_it_is_a_windows_worth(monkeypatch):
    states, _ = simulated(monkeypatch, lambda r: 0.1, 140, prepare=3.0)
    assert pace.settled(states)[1]
    # a rank still in its start-up (or one that cannot tell) at the end
    missing = {r: {**s, "pace": {k: v for k, v in s["pace"].items() if k != "start"}} if r == 3 else s
               for r, s in states.items()}
    assert pace.settled(missing) == (pace.from_states(states), False)
    # a forged start, after the rank's last figures or malformed: left out, so nothing is judged
    for forged in ({**states[1]["pace"]["start"], "wall": 1e6}, "x", {"wall": "x"}):
        bad = {**states, 1: {"host": "vm", "pace": {**states[1]["pace"], "start": forged}}}
        assert pace.settled(bad)[1] is False
    # the job ended 19 steps (9.5 s) past its start-up: less than two windows (the watch's evidence for a name)
    states, trackers = simulated(monkeypatch, lambda r: 0.5, 29)
    assert all(t.start is not None for t in trackers) and trackers[0].start["steps"] == 10
    assert not pace.settled(states)[1]
    states, trackers = simulated(monkeypatch, lambda r: 0.5, 31)  # 21 steps
    assert pace.settled(states)[1]
    assert straggler.long_enough([Figures(0, wall=4.0, steps=10)])
    assert not straggler.long_enough([Figures(0, wall=4.0, steps=9)]) and not straggler.long_enough([])
    assert not straggler.long_enough([Figures(0, wall=3.9, calls=50), Figures(1, wall=9.0, calls=50)])
    assert straggler.long_enough([Figures(0, wall=8.0, steps=20)], windows=2)
    assert not straggler.long_enough([Figures(0, wall=7.9, steps=20)], windows=2)
