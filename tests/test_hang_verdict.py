"""The verdict across groups and the flight recorder dumps, from rank states and files alone (pure)."""

import json
import os
import pickle
import re

from clusterdoc.hang import recorder, report, trace


def at(rank, op, seq, group="world", shape=(16,), line=10, waited=30.0, issued=None):
    c = {
        "op": op,
        "seq": seq,
        "group": group,
        "dtype": "float32",
        "shape": list(shape),
        "start": 1000.0,
        "site": ["/job/train.py", line, "step"],
        "waited": waited,
    }
    return {
        "rank": rank,
        "collectives": {"current": None, "pending": [], "last": None},
        "unfinished": [c],
        "issued": issued or {},
        "frames": [{"file": "/job/train.py", "line": line, "func": "step", "code": "x", "user": True}],
    }


def recv(rank, peer, tag, line=20):
    state = at(rank, "recv", 0, line=line)
    state["unfinished"] = []
    state["blocked"] = {"op": "recv", "peer": peer, "tag": tag}
    return state


def marked(text):
    return [re.match(r"  ranks? ([\d,-]+)", line).group(1) for line in text.splitlines() if line.endswith("<- differs")]


def test_a_rank_in_another_group_is_compared_inside_each_group_only():
    """FSDP's group and the world: rank 1 went on to the world's barrier; the others wait in FSDP's group."""
    states = {r: at(r, "all_gather", 13, group="ranks 0,1,2,3", issued={"world": 2}) for r in (0, 2, 3)}
    states[1] = at(1, "barrier", 3, line=30, issued={"ranks 0,1,2,3": 12})
    text = report.build(states, 4)
    assert marked(text) == ["1"], text
    assert "the group of all 4 ranks" in text.replace("\n    ", " ") or "ranks 0,1,2,3" in text


def test_a_subgroup_cycle_goes_to_the_clearest_majority():
    """Ranks 0 and 2 wait in a 3-rank group for rank 1, which waits in the world's barrier with rank 3."""
    states = {
        0: at(0, "all_reduce", 3, group="ranks 0,1,2"),
        2: at(2, "all_reduce", 3, group="ranks 0,1,2"),
        1: at(1, "barrier", 1, line=40, issued={"ranks 0,1,2": 2}),
        3: at(3, "barrier", 1, line=40),
    }
    text = report.build(states, 4)
    assert marked(text) == ["1"], text
    assert "its last call there was #2" in text.replace("\n    ", " ")


def test_a_pipeline_stage_waiting_in_recv_names_its_peer_and_tag():
    states = {
        0: recv(0, 1, 1),
        1: at(1, "barrier", 1, line=40),
        2: at(2, "all_reduce", 5, group="ranks 0,2"),
        3: at(3, "all_reduce", 5, group="ranks 1,3"),
    }
    text = report.build(states, 4)
    assert marked(text) == ["1"], text
    assert re.search(r"rank 0 +in recv from rank 1 tag 1 +train\.py:20 in step", text), text


def test_an_even_split_marks_the_same_side_on_every_look():
    """Two against two, or one against one: the side without rank 0 differs, whatever order states come in."""
    for world in (2, 4):
        states = {r: at(r, "all_reduce" if r < world // 2 else "broadcast", 4) for r in range(world)}
        first = marked(report.build(states, world))
        again = marked(report.build(dict(reversed(list(states.items()))), world))
        assert first == again == [f"{world // 2}" if world == 2 else "2-3"]


def test_a_rank_outside_every_collective_is_marked_only_when_the_others_wait_for_it():
    idle = {
        "rank": 3,
        "collectives": {"current": None, "pending": [], "last": None},
        "unfinished": [],
        "frames": [{"file": "/job/train.py", "line": 50, "func": "eval", "code": "evaluate()", "user": True}],
    }
    # ranks 0-2 wait in their own group: rank 3 is not a member, so not a suspect
    states = {r: at(r, "all_reduce", 3, group="ranks 0,1,2") for r in range(3)} | {3: idle}
    states[1] = at(1, "all_reduce", 2, group="ranks 0,1,2")
    text = report.build(states, 4)
    assert marked(text) == ["1"], text
    # the world waits: rank 3 is
    states = {r: at(r, "all_reduce", 3) for r in range(3)} | {3: {**idle, "rank": 3}}
    assert marked(report.build(states, 4)) == ["3"]


GLOO_DUMP = {  # what torch 2.13 writes for gloo: pg_config empty (torch's analyzer raises KeyError on it)
    "version": "2.10",
    "pg_config": {"": {"name": "", "desc": "", "ranks": "[]"}},
    "pg_status": {},
    "entries": [
        {
            "collective_seq_id": 1,
            "p2p_seq_id": 0,
            "is_p2p": False,
            "process_group": ["0", "default_pg"],
            "profiling_name": "gloo:all_reduce",
            "input_sizes": [[4]],
            "input_dtypes": ["Float"],
            "retired": True,
            "state": "scheduled",
            "time_created_ns": 2_000_000_000,
            "time_discovered_completed_ns": 0,
            "frames": [
                {
                    "filename": f"{os.sep}x{os.sep}torch{os.sep}distributed{os.sep}c10d.py",
                    "line": 1,
                    "name": "all_reduce",
                },
                {"filename": "/job/train.py", "line": 7, "name": "main"},
            ],
        },
        {
            "collective_seq_id": 2,
            "p2p_seq_id": 0,
            "is_p2p": False,
            "process_group": ["3", "undefined"],
            "profiling_name": "gloo:all_gather",
            "input_sizes": [[2, 3]],
            "input_dtypes": ["Double"],
            "retired": False,
            "state": "scheduled",
            "time_created_ns": 3_000_000_000,
        },
        {"collective_seq_id": "not a number", "profiling_name": "gloo:barrier"},  # skipped, not a crash
    ],
    "clusterdoc": {"rank": 0, "groups": {"0": "world", "3": "ranks 0,1"}},
}


def test_recorder_dumps_are_read_without_the_analyzers_crash_and_drawn(tmp_path):
    (tmp_path / "fr").mkdir()
    (tmp_path / "fr" / "rank0.json").write_text(json.dumps(GLOO_DUMP))
    (tmp_path / "fr" / "rank1.json").write_text(json.dumps(GLOO_DUMP)[:200])  # cut short by a killed rank
    recs = recorder.read_folder(tmp_path)
    assert list(recs) == [0]
    first, second = recs[0]
    assert (first["op"], first["seq"], first["group"], first["dtype"], first["shape"], first["site"]) == (
        "all_reduce",
        1,
        "world",
        "float32",
        [4],
        ["/job/train.py", 7, "main"],
    )
    assert first["end"] == first["start"] and "end" not in second  # finished (time unknown) / unfinished
    assert (second["group"], second["dtype"], second["shape"]) == ("ranks 0,1", "float64", [2, 3])
    doc = trace.build(recs)
    assert any(e.get("args", {}).get("unfinished") for e in doc["traceEvents"])


class Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_a_nccl_pickle_is_read_as_plain_data_and_a_hostile_one_refused(tmp_path):
    plain = {k: v for k, v in GLOO_DUMP.items() if k != "clusterdoc"}
    (tmp_path / "nccl_trace_rank_2").write_bytes(pickle.dumps(plain))
    assert [r["group"] for r in recorder.read_folder(tmp_path)[2]] == ["group 0", "group 3"]
    (tmp_path / "nccl_trace_rank_2").write_bytes(pickle.dumps({"entries": [Boom()]}))
    assert recorder.load(tmp_path / "nccl_trace_rank_2") is None
    assert recorder.read_folder(tmp_path) == {}


def test_a_pipeline_stage_blocked_in_send_waits_for_its_peer_and_is_never_compared_with_group_collectives():
    """2-stage pipeline on 4 ranks, rank 1 skipped a step and went on to the final world barrier: rank 0 sends
    to it (a shim record: per-rank p2p number 5, in the world group), ranks 2 and 3 wait in their stage groups.
    The send's number must not be read as the world group's #5 (it would make rank 0 the odd one)."""
    states = {
        0: at(0, "send", 5, shape=(4, 16), issued={"ranks 0,2": 4}),
        1: at(1, "barrier", 1, line=40, issued={"ranks 1,3": 4}),
        2: at(2, "all_reduce", 5, group="ranks 0,2", shape=(16, 16)),
        3: at(3, "all_reduce", 5, group="ranks 1,3", shape=(16, 16)),
    }
    states[0]["unfinished"][0].update(peer=1, tag=0)
    text = report.build(states, 4)
    assert marked(text) == ["1"], text


def test_a_rank_past_the_collective_the_others_still_wait_in_is_not_a_desync():
    """Issue 43's campaign (Slurm, seed 582538, job 8: 30 % packet loss on node2): rank 0 finished barrier #23
    and went on to DDP's all_reduce #24; ranks 1-2 still waited in barrier #23 for its last messages. Called "the
    ranks' collective counts disagree: rank 0 made an extra call or skipped one" (desync) before: the barrier was
    matched, what was missing was delivery."""
    states = {r: at(r, "barrier", 23, shape=(), line=90) for r in (1, 2)}
    states[0] = at(0, "all_reduce", 24, shape=(5,), line=77)
    states[0]["collectives"]["last"] = {"op": "barrier", "seq": 23, "group": "world", "dtype": "float32",
                                        "shape": []}  # fmt: skip
    text = report.build(states, 3)
    assert marked(text) == [] and "counts disagree" not in text, text
    # the same picture where rank 0's last completed call was NOT that barrier: it made an extra call (desync)
    states[0]["collectives"]["last"] = {"op": "all_reduce", "seq": 23, "group": "world", "dtype": "float32",
                                        "shape": [5]}  # fmt: skip
    assert marked(report.build(states, 3)) == ["0"]


def test_a_rank_two_calls_ahead_that_finished_the_awaited_call_is_not_a_desync():
    """The same campaign (seed 705013, job 4, 30 % loss on node2): rank 1 retired all_reduce #26 and barrier #27
    (gloo's flight recorder shows both) and waited in all_reduce #28; ranks 0 and 2 still in all_reduce #26."""
    states = {r: at(r, "all_reduce", 26, shape=(5,), line=77) for r in (0, 2)}
    states[1] = at(1, "all_reduce", 28, shape=(5,), line=77)
    done = [{"op": "all_reduce", "seq": 26, "group": "world", "dtype": "float32", "shape": [5]},
            {"op": "barrier", "seq": 27, "group": "world", "dtype": "float32", "shape": []}]  # fmt: skip
    states[1]["collectives"]["last"], states[1]["collectives"]["recent"] = done[1], done
    assert marked(report.build(states, 3)) == [], report.build(states, 3)
    states[1]["collectives"]["recent"] = done[1:]  # #26 not among its completed calls: it skipped one (desync)
    assert marked(report.build(states, 3)) == ["1"]


def test_a_rank_ahead_by_the_recorders_numbers_is_not_a_desync_though_the_shims_own_numbers_differ():
    """Issue 43's Slurm campaign (seed 106189, job 37: 30 % loss on node2). The positions came from gloo's flight
    recorder, which counts DDP's start-up broadcasts the shim never sees: rank 1 in barrier #5 (the recorder's #5,
    the shim's #1), rank 0 in DDP's broadcast #6, rank 2 in #7, both having retired barrier #5. Judged against the
    shim's own numbers (barrier #1) the finished call was not found: "counts disagree" (desync) on ranks 1 and 2."""

    def fr(op, seq, shape, dtype="int32"):
        return {"op": op, "seq": seq, "group": "world", "dtype": dtype if shape else None, "shape": list(shape),
                "start": 1000.0 + seq, "site": ["/job/job.py", 90 if op == "barrier" else 75, "<module>"],
                "source": "flight recorder"}  # fmt: skip

    history = [fr("broadcast", 2, (6,), "float32"), fr("broadcast", 3, (5,), "float32"),
               fr("all_reduce", 4, (5,), "float32"), fr("barrier", 5, ()), fr("broadcast", 6, (3,)),
               fr("broadcast", 7, (1,))]  # fmt: skip
    shim_barrier = {"op": "barrier", "seq": 1, "group": "world", "dtype": None, "shape": None}
    states = {}
    for rank, at_seq in ((0, 6), (1, 5), (2, 7)):
        now = dict(history[at_seq - 2], waited=30.0)
        done = history[: at_seq - 2]
        states[rank] = {"rank": rank, "unfinished": [now], "issued": {"world": at_seq}, "retired": done,
                        "collectives": {"current": None, "pending": [], "last": shim_barrier if rank != 1 else None,
                                        "recent": [shim_barrier] if rank != 1 else []},
                        "frames": [{"file": "/job/job.py", "line": now["site"][1], "func": "<module>", "code": "x",
                                    "user": True}]}  # fmt: skip
    text = report.build(states, 3)
    assert marked(text) == [] and "counts disagree" not in text, text
    # rank 2 had not retired #6 (the recorder's word): it skipped a call, a desync it is
    states[2]["retired"] = history[:3]
    assert "counts disagree" in report.build(states, 3)
