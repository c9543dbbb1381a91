"""The hang report and the trace, from rank states alone (pure: no ranks, no store)."""
import json
import re

import jsonschema

from clusterdoc.hang import report, trace


def in_coll(rank, op, seq, site_line, shape=(4096,), waited=300.0, note=None, func="train_step"):
    c = {"op": op, "seq": seq, "group": "world", "dtype": "float32", "shape": list(shape), "start": 1000.0,
         "site": ["/job/train.py", site_line, func], "waited": waited}
    if note:
        c["note"] = note
    return {"rank": rank, "collectives": {"current": c, "pending": [], "last": None},
            "frames": [{"file": "/job/train.py", "line": site_line, "func": func, "code": "x()", "user": True}]}


def idle(rank, line, code="time.sleep(3600)  # data"):
    return {"rank": rank, "collectives": {"current": None, "pending": [], "last": None},
            "frames": [{"file": "/job/train.py", "line": line, "func": "load", "code": code, "user": True},
                       {"file": "/job/train.py", "line": 95, "func": "main", "code": "load()", "user": True}]}


def test_skipped_collective_names_the_odd_rank_both_ops_and_both_call_sites():
    states = {0: in_coll(0, "all_reduce", 118, 88), 1: in_coll(1, "barrier", 118, 95, shape=(), func="main"),
              2: in_coll(2, "all_reduce", 118, 88), 3: in_coll(3, "all_reduce", 118, 88)}
    states[1]["collectives"]["current"].update(dtype=None, shape=None)
    text = report.build(states, 4, stacks_hint="/jobs/j/stacks/rank{0..3}.txt")
    lines = text.splitlines()
    assert lines[0] == "clusterdoc: job stalled: all_reduce #118 has waited 300 s on ranks 0,2-3"
    assert lines[1].split() == ["ranks", "0,2-3", "in", "all_reduce", "#118", "float32[4096]", "train.py:88", "in",
                                "train_step"]
    assert lines[2].split()[:4] == ["rank", "1", "in", "barrier"] and lines[2].endswith("<- differs")
    assert "train.py:95 in main" in lines[2]
    assert "skipped a call or made them in another order" in text.replace("\n    ", " ")
    assert lines[-1] == "  stacks: /jobs/j/stacks/rank{0..3}.txt"


def test_ranks_outside_any_collective_gone_and_silent_each_say_so():
    states = {0: in_coll(0, "all_reduce", 5, 88, note="DDP gradient all_reduce, bucket 0"), 1: idle(1, 40),
              2: None, 3: in_coll(3, "all_reduce", 5, 88, note="DDP gradient all_reduce, bucket 0")}
    text = report.build(states, 5, exits={4: -9})
    assert "(DDP gradient all_reduce, bucket 0)" in text
    assert re.search(r"\n  rank 1 +not in a collective +train\.py:40 in load: time\.sleep\(3600\) ", text)
    assert "rank 1 is in no collective while ranks 0,3 wait for it in all_reduce #5 float32[4096] (train.py:88 in " \
           "train_step); its main thread: train.py:40 in load <- train.py:95" in text.replace("\n    ", " ")
    assert re.search(r"\n  rank 2 +did not answer", text) and "py-spy dump" in text
    assert re.search(r"\n  rank 4 +gone: killed by SIGKILL", text)
    assert text.count("<- differs") == 3


def test_a_rank_that_did_not_answer_shows_only_its_old_heartbeat_as_such():
    stale = {**idle(1, 40), "stale": 12.4}
    text = report.build({0: in_coll(0, "all_reduce", 5, 88), 1: stale}, 2)
    assert re.search(r"rank 1 +did not answer \(its last heartbeat, 12 s old: in no collective at "
                     r"train\.py:40 in load\)", text), text
    assert "not in a collective" not in text


def test_sequence_numbers_and_shapes_that_disagree():
    seq = report.build({0: in_coll(0, "all_reduce", 12, 88), 1: in_coll(1, "all_reduce", 13, 88)}, 2)
    assert "collective counts disagree in the group of all 2 ranks: rank 1 at all_reduce #13, rank 0 at #12" \
        in seq.replace("\n    ", " ")
    shape = report.build({0: in_coll(0, "all_reduce", 7, 88), 1: in_coll(1, "all_reduce", 7, 88, shape=(8,))}, 2)
    assert "different tensors" in shape and "--debug" in shape


def test_one_group_has_no_differs_mark_and_ranks_compress():
    assert report.ranks_text([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    text = report.build({r: in_coll(r, "all_reduce", 3, 88) for r in range(8)}, 8)
    assert "<- differs" not in text and "ranks 0-7" in text


# The Trace Event Format (the parts we write), as the Chrome/Perfetto loaders read it.
TRACE_SCHEMA = {
    "type": "object", "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "traceEvents": {"type": "array", "items": {
            "type": "object", "required": ["name", "ph", "pid", "tid"],
            "properties": {"name": {"type": "string"}, "ph": {"enum": ["X", "M", "C"]}, "cat": {"type": "string"},
                           "pid": {"type": "integer"}, "tid": {"type": "integer"},
                           "ts": {"type": "number", "minimum": 0}, "dur": {"type": "number", "minimum": 0},
                           "args": {"type": "object"}},
            "allOf": [{"if": {"properties": {"ph": {"const": "X"}}}, "then": {"required": ["ts", "dur"]}},
                      {"if": {"properties": {"ph": {"const": "C"}}}, "then": {"required": ["ts", "args"]}}]}}}}


def test_trace_has_a_track_per_rank_waits_for_the_slowest_and_open_ends():
    rec = lambda seq, start, end=None: {"op": "all_reduce", "seq": seq, "group": "world", "dtype": "float32",  # noqa
                                        "shape": [4], "site": ["/j/t.py", 9, "f"], "start": start,
                                        **({"end": end} if end else {})}
    records = {0: [rec(1, 10.0, 10.5), rec(2, 11.0)], 1: [rec(1, 10.4, 10.5), rec(2, 11.1, 11.2)]}
    doc = trace.build(records)
    jsonschema.validate(doc, TRACE_SCHEMA)
    json.dumps(doc)
    names = {(e["pid"], e["name"]) for e in doc["traceEvents"]}
    assert {(0, "process_name"), (1, "process_name"), (0, "all_reduce #1"), (0, "waiting for rank 1")} <= names
    first = next(e for e in doc["traceEvents"] if e["pid"] == 0 and e["name"] == "all_reduce #1")
    assert first["ts"] == 0 and abs(first["args"]["waited_for_slowest_ms"] - 400) < 1e-6
    unfinished = next(e for e in doc["traceEvents"] if e["pid"] == 0 and e["name"] == "all_reduce #2")
    assert unfinished["args"]["unfinished"] is True and unfinished["dur"] > 0
