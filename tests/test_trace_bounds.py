"""`clusterdoc trace` on a job folder someone shaped (issue 32): a pickle memo bomb in an NCCL dump, times of 10^400
and 1e400, a million-deep list, too many trace files. Each ends in seconds, under 500 MB, with that input's own
note or usage error, never a traceback."""

import json
import os
import pickle
import subprocess
import sys
import time

import pytest

from clusterdoc.hang import recorder, trace
from tests.test_shared_files import clean_env, make_job

ENTRY = {"profiling_name": "nccl:all_reduce", "collective_seq_id": 1, "time_created_ns": 1_700_000_000_000_000_000,
         "process_group": ["0", "default"], "input_sizes": [[1024]], "input_dtypes": ["Float"], "state": "completed",
         "frames": [{"filename": "/home/u/train.py", "line": 10, "name": "step"}]}  # fmt: skip


# The peak RSS of `clusterdoc trace` alone: a small python starts it and reports its one child's ru_maxrss. Read
# from pytest itself, RUSAGE_CHILDREN is the largest of every child this session ever had, and a direct child's
# ru_maxrss carries pytest's own peak across the fork and exec (509 MiB late in a CI run, over this test's bound).
MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
    "sys.stderr.write('\\nPEAK_RSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
    "sys.exit(r.returncode)"
)


def run_trace(job, timeout=60):
    """`clusterdoc trace JOB`: (exit code, stdout, stderr, seconds, peak RSS in MiB) of that one process."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "clusterdoc", "trace", str(job)],
                       env=clean_env(), text=True, capture_output=True, timeout=timeout)  # fmt: skip
    took = time.monotonic() - t0
    err, _, peak = p.stderr.rstrip("\n").rpartition("\nPEAK_RSS_KB ")
    return p.returncode, p.stdout, err + "\n" if err else err, took, int(peak) / 1024


def memo_bomb() -> bytes:
    """6 MB: one entry named 3,000,000 times by 2-byte memo references (each would become its own record)."""
    return pickle.dumps({"entries": [ENTRY] * 3_000_000}, protocol=4)


def test_a_pickle_memo_bomb_is_refused_in_seconds_and_bounded_memory(tmp_path):
    jd = make_job(tmp_path)
    bomb = memo_bomb()
    assert 5_000_000 < len(bomb) < 7_000_000
    (jd.path / "nccl_trace_rank_0").write_bytes(bomb)
    (jd.path / "nccl_trace_rank_1").write_bytes(pickle.dumps({"entries": [dict(ENTRY, collective_seq_id=2)]}))
    code, out, err, took, rss = run_trace(jd.path)
    print(f"memo bomb: {took:.1f}s, peak RSS {rss:.0f} MiB")
    assert "Traceback" not in err and code == 0, err
    assert "nccl_trace_rank_0: not a flight recorder dump" in err and "memo bomb" in err, err
    assert "1 collectives on 1 ranks" in out  # the other rank's dump is still drawn
    assert took < 30 and rss < 500


def test_a_pickle_naming_code_is_refused_by_the_scan(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))

    with pytest.raises(ValueError, match=r"it names code \((STACK_)?GLOBAL\)"):
        recorder.scan_pickle(pickle.dumps({"entries": [Evil()]}))
    recorder.scan_pickle(pickle.dumps({"entries": [ENTRY] * 10}))  # plain data passes


@pytest.mark.parametrize(
    "line",
    [
        '{"op": "all_reduce", "seq": 1, "group": "0", "start": 1' + "0" * 400 + "}",  # 10^400
        '{"op": "all_reduce", "seq": 1, "group": "0", "start": 1e400}',  # inf
        '{"op": "all_reduce", "seq": 1, "group": "0", "start": 1.0, "end": 1e400}',
        '{"op": "all_reduce", "seq": 1, "group": "0", "start": 1.0, "shape": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}",
        '{"op": "all_reduce", "seq": 1, "group": "0", "start": 1.0, "shape": [[[1]]]}',
        '{"op": "all_reduce", "seq": 1, "group": "0", "start": 1.0, "site": ["a.py", [[[1]]], "f"]}',
    ],
    ids=["10^400", "1e400", "end-1e400", "million-deep", "deep-shape", "deep-site"],
)
def test_out_of_range_or_deep_trace_records_are_skipped_and_said(tmp_path, line):
    jd = make_job(tmp_path)
    (jd.path / "trace").mkdir()
    good = {"op": "all_reduce", "seq": 1, "group": "0", "start": 1.0, "end": 2.0}
    (jd.path / "trace" / "rank0.jsonl").write_text(line + "\n")
    (jd.path / "trace" / "rank1.jsonl").write_text(json.dumps(good) + "\n")
    code, out, err, took, rss = run_trace(jd.path)
    assert "Traceback" not in err and code == 0, err
    assert "rank0.jsonl: 1 malformed record(s) skipped" in err and "1 collectives on 1 ranks" in out, err
    assert took < 30 and rss < 500
    (jd.path / "trace" / "rank1.jsonl").unlink()
    code, out, err, _, _ = run_trace(jd.path)  # nothing else: the usage error says there is no trace
    assert code == 2 and "Traceback" not in err and "has no collective trace" in err, err


def test_the_number_of_trace_files_is_bounded(tmp_path, monkeypatch):
    (tmp_path / "rank0.jsonl").write_text("")
    (tmp_path / "rank1.jsonl").write_text("")
    monkeypatch.setattr(trace, "MAX_RANK_FILES", 1)
    with pytest.raises(OSError, match="2 rank trace files, more than the 1 clusterdoc reads"):
        trace.read_records(tmp_path)
    monkeypatch.setattr(trace, "MAX_RANK_FILES", 10)
    monkeypatch.setattr(trace, "MAX_TOTAL", 10)
    (tmp_path / "rank0.jsonl").write_text(json.dumps({"op": "x", "seq": 1, "start": 1.0}) + "\n")
    skipped: list = []
    trace.read_records(tmp_path, skipped)
    assert any("past 0 MiB of trace in all, not read" in s for s in skipped), skipped
