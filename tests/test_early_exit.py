"""A rank that ends its loop one collective early (uneven data) is a desync, named live and afterwards.

The rule (clusterdoc/hang/early.py) on hand-made ends, then on a real job folder (tests/fixtures/why/jobs/
early-exit-rank1: `clusterdoc submit --backend local --nodes 4 --hang-timeout 10 jobs/hang.py --scenario early
--rank 1` on this project's VM, paths rewritten to /home/user/clusterdoc): the launcher's summary, its outcome line
and `clusterdoc why` say the same sentence, mark rank 1 and never the ranks left waiting; and on every planted
failure kept there, the launcher's summary marks the ranks `why` blames.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clusterdoc.hang import early, report
from clusterdoc.launch.hangwatch import HangWatch
from clusterdoc.launch.job import JobDir
from clusterdoc.launch.outcome import outcome_from_codes
from clusterdoc.why import evidence, verdict

JOBS = Path(__file__).parent / "fixtures" / "why" / "jobs"
SENTENCE = (
    "rank 1 exited 0 after 7 all_reduce calls while ranks 0, 2, 3 wait in their 8th "
    "(uneven data? torch.distributed.algorithms.Join)"
)


def ar(seq, group="world", op="all_reduce"):
    return {"op": op, "seq": seq, "group": group}


def left(rank, n, group="world", ops=None):
    return early.RankEnd(rank, clean=True, issued={group: n}, ops={group: ops or {"all_reduce": n}})


def test_the_rank_that_exited_0_one_call_early_is_named_with_the_counts():
    ends = [early.RankEnd(r, at=ar(8)) for r in (0, 2, 3)] + [left(1, 7)]
    found = early.find(ends, 4)
    assert found is not None and found.ranks == [1] and found.waiting == [0, 2, 3]
    assert found.sentence() == SENTENCE


def test_other_ops_on_the_group_are_not_called_all_reduce_and_a_subgroup_is_named():
    ends = [early.RankEnd(r, at=ar(4, "ranks 0,1,2")) for r in (0, 2)]
    ends += [left(1, 3, "ranks 0,1,2", {"all_reduce": 2, "broadcast": 1}), early.RankEnd(3)]
    text = early.find(ends, 4).sentence()
    assert text.startswith("rank 1 exited 0 after 3 collective calls of the group of ranks 0,1,2 while ranks 0, 2 ")
    assert "wait in their 4th (all_reduce #4)" in text


@pytest.mark.parametrize(
    "ends",
    [
        # everyone still running: a skipped call (rank 1 in a barrier) is the verdict's, not an early exit
        [early.RankEnd(0, at=ar(4)), early.RankEnd(1, at=ar(4, op="barrier")), early.RankEnd(2, at=ar(4))],
        # rank 1 exited 0 but had made the call the others wait in: it finished, they are stuck on something else
        [early.RankEnd(0, at=ar(8)), left(1, 8), early.RankEnd(2, at=ar(8))],
        # rank 2 raised in its own code (in no collective): it, not rank 1's exit, holds the group up
        [early.RankEnd(0, at=ar(8)), left(1, 7), early.RankEnd(2, clean=False)],
        # rank 1's count is unknown (no record): no guess
        [early.RankEnd(0, at=ar(8)), early.RankEnd(1, clean=True), early.RankEnd(2, at=ar(8))],
        # every rank completed
        [left(0, 8), left(1, 8), left(2, 8)],
        # most ranks finished after 8 calls, one is in a 9th: an extra call there, more likely; the majority is
        # never blamed
        [left(0, 8), left(1, 8), early.RankEnd(2, at=ar(9))],
    ],
)
def test_no_early_exit_is_claimed_without_the_evidence(ends):
    assert early.find(ends, 3) is None


def test_the_live_report_marks_the_rank_that_left_not_the_ranks_waiting():
    """The hang report of a stall (NCCL waits where gloo fails): rank 1 gone with exit 0, the others in #8."""
    waiting = {"collectives": {"current": {**ar(8), "dtype": "float32", "shape": [4], "start": 1.0,
                                           "waited": 30.0, "site": ["/x/train.py", 29, "step"]}}}
    states = {0: waiting, 2: waiting, 3: waiting,
              1: {"collectives": {"last": {**ar(7), "site": ["/x/train.py", 29, "step"]}},
                  "issued": {"world": 7}, "ops": {"world": {"all_reduce": 7}}}}
    text = report.build(states, 4, exits={1: 0})
    assert re.search(r"(?m)^  rank 1 +gone: exited with code 0 \(its last call: all_reduce #7.*<- differs$", text)
    assert re.search(r"(?m)^  ranks 0,2-3 +in all_reduce #8 .*train\.py:29 in step$", text), text
    assert SENTENCE in " ".join(text.split()), text


def fixture_outcome(name):
    jd = JobDir(JOBS / name)
    rec = jd.read()
    o = rec["outcome"]
    world = rec["spec"]["nodes"] * rec["spec"]["tasks_per_node"]
    return jd, world, {int(k): v for k, v in o["codes"].items()}, o["failed"]


def marked(text: str) -> list[int]:
    return sorted(r for line in text.splitlines() if line.endswith("<- differs")
                  for r in evidence.ranks_of(re.match(r"  ranks? ([\d,-]+)", line).group(1)))


def test_a_real_early_exit_why_the_summary_and_the_outcome_say_the_same():
    v = verdict.judge(evidence.gather(JobDir(JOBS / "early-exit-rank1"), live=False))
    assert v.cause.category == "desync" and v.cause.ranks == [1] and not v.cause.retry
    assert v.cause.headline == SENTENCE
    assert any(r.startswith("network: ") for r in v.ruled_out), v.ruled_out  # gloo's closed peers: its effect
    jd, world, codes, _ = fixture_outcome("early-exit-rank1")
    # what the launcher saw: rank 0 failed first, rank 1 still in its teardown (stopped by SIGTERM)
    text = HangWatch(jd, world).postmortem({**codes, 1: -15}, [0])
    assert marked(text) == [1], text
    assert SENTENCE in " ".join(text.split()), text
    assert re.search(r"(?m)^  ranks 0,2-3 +gone: exited with code 1 \(failed in all_reduce #8 .*\)$", text), text
    line = outcome_from_codes({**codes, 1: -15}, jd, first_failed=[0], stopped=True).describe()
    assert line.startswith("job failed: rank 1 exited with code 0;") and SENTENCE in line, line


@pytest.mark.parametrize("name", sorted(p.name for p in JOBS.iterdir() if (p / "job.json").exists()))
def test_the_launchers_summary_marks_the_ranks_why_blames(name):
    jd, world, codes, failed = fixture_outcome(name)
    if not failed:
        pytest.skip("no rank failed first: the launcher prints no summary")
    text = HangWatch(jd, world).postmortem(codes, failed)
    if text is None:
        pytest.skip("no heartbeat or exit record with collectives: the launcher prints no summary")
    cause = verdict.judge(evidence.gather(jd, live=False)).cause
    assert marked(text) == sorted(cause.ranks), (text, cause)


def test_the_fixture_is_a_real_run_of_the_planted_job():
    rec = json.loads((JOBS / "early-exit-rank1" / "job.json").read_text())
    assert rec["spec"]["script_args"] == ["--scenario", "early", "--rank", "1"]
    ex = json.loads((JOBS / "early-exit-rank1" / "rank1.exit").read_text())
    assert ex["code"] == 0 and ex["issued"] == {"world": 7} and ex["ops"] == {"world": {"all_reduce": 7}}


def test_a_stall_after_an_early_exit_why_reads_the_launchers_report(tmp_path):
    """NCCL waits where gloo fails: the others stall in their 8th and the hang watch stops them (no exit record,
    no collectives of theirs on disk). The launcher's report names rank 1, and keeps it in stacks/report.json,
    so `why` still says the same sentence."""
    import shutil

    jd = JobDir(tmp_path / "job")
    shutil.copytree(JOBS / "early-exit-rank1", jd.path)
    for r in (0, 2, 3):
        (jd.path / f"rank{r}.exit").unlink()
        (jd.path / f"rank{r}.err").write_text("")  # stopped by the hang watch: no error of their own
    wait = {"op": "all_reduce", "seq": 8, "group": "world", "dtype": "float32", "shape": [1024], "start": 1.0,
            "waited": 30.0, "site": ["/home/user/clusterdoc/jobs/hang.py", 29, "train_step"]}
    dumps = {r: {"rank": r, "time": 2.0, "collectives": {"current": wait}, "frames": []} for r in (0, 2, 3)}
    HangWatch(jd, 4).print_report(dumps, {1: 0})
    text = (jd.path / "stacks" / "report.txt").read_text()
    assert marked(text) == [1] and SENTENCE in " ".join(text.split()), text
    rec = json.loads(jd.record_path.read_text())
    rec["outcome"] = rec["attempts"][0]["outcome"] = {"state": "FAILED", "codes": {"0": -15, "1": 0, "2": -15,
                                                                                   "3": -15}, "failed": [],
                                                      "oom": False, "message": "stalled"}
    jd.record_path.write_text(json.dumps(rec))
    cause = verdict.judge(evidence.gather(jd, live=False)).cause
    assert cause.category == "desync" and cause.ranks == [1] and cause.headline == SENTENCE, cause


@pytest.mark.parametrize("bad", [None, [], {"ranks": [1]}, {"ranks": ["1"], "made": [7], "waiting": [0], "group": "world",
                                                            "seq": 8, "op": "all_reduce"},
                                 {"ranks": [1], "made": [7, 8], "waiting": [0], "group": "world", "seq": 8, "op": "x"},
                                 {"ranks": [1], "made": [7], "waiting": [0], "group": "world", "seq": True, "op": "x"}])
def test_a_malformed_record_of_the_launchers_report_is_ignored(bad):
    assert early.from_json(bad) is None


def test_a_node_death_marks_the_dead_rank_alone_not_a_rank_slurm_stopped_with_the_same_code():
    """Issue 35: rank 2's node died (no exit code), rank 0 was stopped by Slurm (no exit code either): the same
    'gone: ended without an exit code', but only rank 2 ended the job and only rank 2 is marked."""
    last = {"collectives": {"failed": {**ar(22), "site": ["/x/train.py", 91, "<module>"]}}}
    text = report.build({1: last, 3: last}, 4, exits={0: None, 1: 1, 2: None, 3: 1}, first_failed=[2],
                        headline="clusterdoc: where the ranks were when rank 2 failed")
    assert marked(text) == [2], text
    assert re.search(r"(?m)^  rank 0 +gone: ended without an exit code$", text), text


def test_thousands_of_ranks_are_named_as_ranges_and_found_in_linear_time():
    import time

    world = 4096
    ends = [early.RankEnd(r, at=ar(8)) for r in range(world)]
    ends[1] = left(1, 7)
    start = time.perf_counter()
    found = early.find(ends, world)
    assert time.perf_counter() - start < 0.5
    assert found.sentence().startswith("rank 1 exited 0 after 7 all_reduce calls while ranks 0,2-4095 wait in ")


def stopped_rank3(tmp_path, place):
    """The fixture as CI saw it twice: the launcher stopped rank 3 (SIGTERM) after rank 0 failed, before rank 3
    recorded anything; `place` is its rank3.where as shim/where.py left it (None: no such file)."""
    import shutil

    jd = JobDir(tmp_path / "job")
    shutil.copytree(JOBS / "early-exit-rank1", jd.path)
    failed = json.loads((jd.path / "rank3.exit").read_text())["collectives"]["failed"]
    (jd.path / "rank3.exit").unlink()
    (jd.path / "rank3.err").write_text("")  # killed: not a word of its own
    call = {k: v for k, v in failed.items() if k not in ("end", "error")}  # as it entered the call
    if place is not None:
        place_file = {"in": {"in": 1, "done": 0, "failed": 2}[place[0]], "call": {**call, "seq": place[1]}}
        (jd.path / "rank3.where").write_text(json.dumps(place_file) + "  ")
    rec = json.loads(jd.record_path.read_text())
    codes = {"0": 1, "1": 0, "2": 1, "3": -15}
    rec["outcome"]["codes"] = rec["attempts"][0]["outcome"]["codes"] = codes
    jd.record_path.write_text(json.dumps(rec))
    return jd, {0: 1, 1: 0, 2: 1, 3: -15}


def test_a_rank_stopped_in_its_8th_call_before_it_recorded_is_judged_by_where_it_was(tmp_path):
    jd, codes = stopped_rank3(tmp_path, ("in", 8))
    text = HangWatch(jd, 4).postmortem(codes, [0])
    assert marked(text) == [1] and SENTENCE in " ".join(text.split()), text
    assert re.search(r"(?m)^  rank 3 +gone: killed by SIGTERM \(last seen in all_reduce #8 float32\[1024\], at "
                     r"hang\.py:29 in train_step\)$", text), text
    line = outcome_from_codes(codes, jd, first_failed=[0], stopped=True).describe()
    assert line.startswith("job failed: rank 1 exited with code 0;") and SENTENCE in line, line
    cause = verdict.judge(evidence.gather(jd, live=False)).cause
    assert cause.category == "desync" and cause.ranks == [1] and cause.headline == SENTENCE, cause


def test_a_rank_stopped_after_its_8th_call_failed_before_it_recorded_is_one_of_the_ranks_left(tmp_path):
    """CI's Slurm run: rank 3's 8th call failed (rank 0 gone), srun killed it before its exit record; its place
    file says it failed there ({"in":2}), so it is one of the ranks rank 1 left (a done 8th call could not be)."""
    jd, codes = stopped_rank3(tmp_path, ("failed", 8))
    text = HangWatch(jd, 4).postmortem(codes, [0])
    assert marked(text) == [1] and SENTENCE in " ".join(text.split()), text
    assert re.search(r"(?m)^  rank 3 +gone: killed by SIGTERM \(.*all_reduce #8 ", text), text
    line = outcome_from_codes(codes, jd, first_failed=[0], stopped=True).describe()
    assert line.startswith("job failed: rank 1 exited with code 0;") and SENTENCE in line, line
    cause = verdict.judge(evidence.gather(jd, live=False)).cause
    assert cause.category == "desync" and cause.ranks == [1] and cause.headline == SENTENCE, cause


@pytest.mark.parametrize("place", [None, ("in", 7), ("done", 7)], ids=["unknown", "in-7th", "between-7th-8th"])
def test_a_rank_stopped_before_its_8th_call_or_unknown_makes_no_early_exit(tmp_path, place):
    """Stopped in an earlier call, between calls, or with no place on record: not one of the ranks waiting in the
    8th, so no early exit is claimed (the rule's 'a member neither waits there nor exited 0')."""
    jd, codes = stopped_rank3(tmp_path, place)
    text = HangWatch(jd, 4).postmortem(codes, [0])
    assert "exited 0 after" not in text, text
    if place is not None:
        seen = "last seen in" if place[0] == "in" else "its last call:"
        assert re.search(rf"(?m)^  rank 3 +gone: killed by SIGTERM \({seen} all_reduce #7 ", text), text
    line = outcome_from_codes(codes, jd, first_failed=[0], stopped=True).describe()
    assert SENTENCE not in line and not line.startswith("job failed: rank 1"), line
    cause = verdict.judge(evidence.gather(jd, live=False)).cause
    assert cause.headline != SENTENCE and 1 not in (cause.ranks or []), cause


@pytest.mark.parametrize("bad", [[], "x", {"in": 1, "call": "x"}, {"in": 1, "call": {"op": 3}},
                                 {"in": 0, "call": {"op": ""}}, {"in": True, "call": {"op": "all_reduce"}},
                                 {"in": 1, "call": {"op": "all_reduce", "seq": -1, "shape": "big", "site": [1, 2, 3],
                                                    "group": ["world"], "dtype": "x" * 99, "start": True}}])
def test_a_malformed_place_file_is_ignored_or_kept_to_its_well_formed_fields(tmp_path, bad):
    place = early.stand_in(bad)
    assert place is None or place["collectives"]["current"] == {"op": "all_reduce"}, place
    jd, codes = stopped_rank3(tmp_path, None)
    (jd.path / "rank3.where").write_text(json.dumps(bad))
    text = HangWatch(jd, 4).postmortem(codes, [0])
    assert "exited 0 after" not in text and re.search(r"(?m)^  rank 3 +gone: killed by SIGTERM", text), text


@pytest.mark.slow
def test_a_rank_leaving_during_ddp_training_is_the_early_exit_not_the_network(tmp_path):
    """A real 2-rank DDP job (tests/faults/job.py, local backend, gloo): rank 1 exits 0 before its 4th step while
    rank 0 goes on into the step's gradient all_reduce and fails there ('Connection closed by peer'). That
    all_reduce ran on DDP's hook, and its failure arrived through the future: the exit record used to call it done,
    and `why` blamed the network for rank 0's lost connection (issue 43's campaign, exit0 at a step)."""
    import os
    import subprocess
    import sys

    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "rank1.exit0").write_text("3\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    job = Path(__file__).parent / "faults" / "job.py"
    res = subprocess.run(
        [sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "2", "--no-preflight",
         "--hang-timeout", "20", str(job), "--steps", "8", "--ckpt", str(tmp_path / "ckpt"), "--faults",
         str(tmp_path / "f")],
        cwd=tmp_path, env={**env, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=240)
    assert res.returncode == 1, res.stderr[-3000:]
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    failed = json.loads((jd / "rank0.exit").read_text())["collectives"]["failed"]
    assert failed and failed["op"] == "all_reduce" and failed["seq"] == 7, failed
    c = verdict.judge(evidence.gather(JobDir(jd), live=False)).cause
    assert c.category == "desync" and c.ranks == [1], (c.category, c.headline)
    assert "rank 1 exited 0 after 6 collective calls while rank 0 waits in its 7th (all_reduce #7)" in c.headline


def test_a_rank_that_left_before_its_first_call_made_none_when_its_record_counts():
    """Its exit record counts calls per group and lists none (issue 43's campaign: rank 2 exited 0 right after
    DDP's set-up while ranks 0, 1 failed in their first gradient all_reduce; `why` said 'network')."""
    rec = {"code": 0, "collectives": {"last": None}, "issued": {}, "ops": {}}
    ends = [early.RankEnd(r, at=ar(1)) for r in (0, 1)] + [early.from_record(2, rec)]
    ee = early.find(ends, 3)
    assert ee is not None and ee.ranks == [2] and ee.made == [0] and ee.waiting == [0, 1], ee
    uncounted = early.from_record(2, {"code": 0, "collectives": {"last": None}})  # an older record: not known
    assert early.find(ends[:2] + [uncounted], 3) is None
