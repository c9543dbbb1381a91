"""`clusterdoc why` reads a log of any size: the end first, the rest streamed for failure words, memory bounded, and
says what it read (issue 35: a 94 MB log whose failure was in its last lines gave "unknown", 30 MB unread)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterdoc.errors import UsageError
from clusterdoc.why import evidence, logread, main

ROOT = Path(__file__).resolve().parents[1]
STEP = b"[rank3]:[2026-11-27 10:00:00,000][train][INFO] - step 1234/200000 | loss 2.3456 | lr 3.00e-04 | ok\n"
OOM = (
    b"[rank2]: Traceback (most recent call last):\n"
    b'[rank2]:   File "/workspace/train.py", line 88, in <module>\n'
    b"[rank2]:     loss.backward()\n"
    b"[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity\n"
)


def big_log(path: Path, mb: int, end: bytes = OOM, middle: bytes = b"") -> Path:
    block = STEP * ((1 << 20) // len(STEP))
    with open(path, "wb") as f:
        for i in range(mb):
            f.write(block)
            if i == mb // 2:
                f.write(middle)
        f.write(end)
    return path


def test_a_94_mb_log_whose_failure_is_in_its_last_lines_is_read_whole_and_says_so(tmp_path):
    log = big_log(tmp_path / "slurm-77.out", 94, middle=b"[rank3]: UserWarning: a warning in the middle\n")
    res = subprocess.run(
        [sys.executable, "-m", "clusterdoc.cli", "why", "77", "--log", str(log), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    doc = json.loads(res.stdout)
    assert doc["cause"]["category"] == "oom" and doc["cause"]["ranks"] == [2], doc["cause"]
    (read,) = doc["read"]
    assert read["complete"] and read["size"] == log.stat().st_size and read["matched_lines"] == 1
    assert read["summary"].startswith("read all 98.6 MB: the last 1.0 MB line by line"), read["summary"]
    text = subprocess.run(
        [sys.executable, "-m", "clusterdoc.cli", "why", "77", "--log", str(log)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    ).stdout
    assert f"  read      {log}: read all 98.6 MB" in text


def test_the_lines_before_the_end_that_hold_a_failure_word_are_kept_in_order(tmp_path):
    log = big_log(tmp_path / "x.log", 6, middle=b"[rank1]: RuntimeError: first\n[rank1]: plain\n")
    got = logread.read_log(log, tail=1 << 20)
    assert got.complete and got.matched == 1 and got.tail <= 1 << 20
    assert got.lines.index("[rank1]: RuntimeError: first") < got.lines.index(
        "[rank2]: Traceback (most recent call last):"
    )
    assert "[rank1]: plain" not in got.lines and got.lines[-1].startswith("[rank2]: torch.OutOfMemoryError")
    assert got.lines[-4:] == OOM.decode().splitlines()  # the tail: every line, whole


def test_grep_and_python_find_the_same_lines(tmp_path, monkeypatch):
    middle = b"x" * 300_000 + b" Error in a long line\n" + b"NCCL WARN a\n" + b"y" * 9000 + b"\n" + b"srun: error: z\n"
    log = big_log(tmp_path / "x.log", 20, middle=middle)
    with_grep = logread.read_log(log, tail=1 << 20)

    def no_grep(f, n):
        raise logread.GrepFailed("test: no grep")
        yield ""

    monkeypatch.setattr(logread, "_grep_lines", no_grep)
    python = logread.read_log(log, tail=1 << 20)
    assert with_grep.lines == python.lines and with_grep.matched == python.matched == 3
    assert max(len(line) for line in python.lines) <= logread.MAX_LINE


@pytest.mark.parametrize("keep", [logread.KEEP, 4096])
def test_two_greps_on_halves_find_what_one_finds_in_order(tmp_path, monkeypatch, keep):
    """A rest of PARALLEL_MIN or more is grepped in two halves at once (bench/bench_why_log.py: the grep is half of
    why's time): the same lines in the same order, the same counts, the latest `keep` bytes kept across both."""
    numbered = b"".join(b"[rank1]: RuntimeError: %d\n" % i for i in range(400))
    giant = b"z" * 200_000 + b" Error across the split\n"  # a line longer than the split's look-ahead piece
    log = big_log(tmp_path / "x.log", 6, middle=numbered + giant + numbered)
    monkeypatch.setattr(logread, "PARALLEL_MIN", 1 << 30)
    one = logread.read_log(log, tail=1 << 20, keep=keep)
    monkeypatch.setattr(logread, "PARALLEL_MIN", 1 << 20)
    halves = []
    real = logread._grep_halves
    monkeypatch.setattr(logread, "_grep_halves", lambda *a: halves.append(real(*a)) or halves[-1])
    two = logread.read_log(log, tail=1 << 20, keep=keep)
    assert halves and halves[0] is not None  # the two-grep path ran
    assert two.lines == one.lines and (two.matched, two.dropped) == (one.matched, one.dropped) == (801, one.dropped)
    assert (one.dropped > 0) == (keep == 4096)
    assert "[rank1]: RuntimeError: 399" in two.lines


def test_a_grep_that_printed_all_it_found_is_waited_for_not_killed(tmp_path):
    """grep's output ends a moment before grep does: killed then, its -9 read as a failure and Python scanned the
    rest again, slowly (2 runs in 30 here before)."""
    log = tmp_path / "x.log"
    log.write_bytes(STEP * 20_000 + b"[rank1]: RuntimeError: one\n" + STEP * 100)
    for _ in range(40):
        with open(log, "rb") as f:
            lines = [line for batch in logread._grep_lines(f, log.stat().st_size) for line in batch]
        assert lines == ["[rank1]: RuntimeError: one"]


def test_a_budget_reads_the_end_and_says_what_was_not_read(tmp_path):
    log = big_log(tmp_path / "x.log", 8)
    got = logread.read_log(log, tail=1 << 20, budget=2 << 20)
    assert not got.complete and got.lines[-1].startswith("[rank2]: torch.OutOfMemoryError")
    assert "not read" in got.summary() and got.summary().startswith("read the last 1.0 MB and 2.1 MB of the")


def test_kept_lines_are_bounded_the_latest_kept(tmp_path):
    log = tmp_path / "x.log"
    log.write_bytes(b"".join(b"[rank0]: RuntimeError: %d\n" % i for i in range(100_000)) + OOM)
    got = logread.read_log(log, tail=4096, keep=64 * 1024)
    assert 0 < got.dropped < got.matched
    assert "[rank0]: RuntimeError: 99999" in got.lines and "[rank0]: RuntimeError: 0" not in got.lines
    assert sum(len(line) + 1 for line in got.lines) < 64 * 1024 + 4096 + 200
    assert "the earliest" in got.summary()


def test_a_giant_line_is_cut_and_memory_stays_bounded(tmp_path):
    log = tmp_path / "x.log"
    with open(log, "wb") as f:
        for _ in range(200):
            f.write(b"Error " + b"z" * (1 << 20))  # 200 MB, one line, no newline
        f.write(b"\n" + OOM)
    code = (
        # VmHWM, not ru_maxrss: Linux carries the forking parent's peak (pytest's, hundreds of MB late in a
        # run) across the exec into the child's ru_maxrss
        "import sys; from clusterdoc.why import logread; g = logread.read_log(sys.argv[1]); "
        "hwm = [int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmHWM:')][0]; "
        "print(max(map(len, g.lines)), hwm // 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    longest, rss_mb = map(int, out.stdout.split())
    assert longest <= logread.MAX_LINE and rss_mb < 150, out.stdout


def test_a_symlink_or_a_fifo_as_the_log_is_a_clear_error(tmp_path):
    (tmp_path / "real.log").write_bytes(OOM)
    (tmp_path / "link.log").symlink_to(tmp_path / "real.log")
    os.mkfifo(tmp_path / "fifo.log")
    for name in ("link.log", "fifo.log", "missing.log"):
        with pytest.raises(UsageError, match="cannot read"):
            main.foreign("1", str(tmp_path / name))


def test_a_job_folder_rank_log_bigger_than_the_end_is_read_whole(tmp_path):
    own = OOM.replace(b"[rank2]: ", b"")  # a job folder's rank log: the rank's own lines, no prefix
    big_log(tmp_path / "rank2.err", 6, end=b"", middle=own)  # the OOM in the middle, 3 MB of steps after it
    reads: list[dict] = []
    f = evidence.rank_facts(tmp_path, 2, 1, reads)
    assert f.oom and f.oom_size == "2.00 GiB" and f.raised and f.raised["type"] == "OutOfMemoryError"
    (read,) = reads
    assert read["complete"] and read["path"].endswith("rank2.err")


REAL = [
    *sorted((ROOT / "tests" / "fixtures" / "why" / "logs").glob("*.log")),
    *sorted((ROOT / "tests" / "fixtures" / "why" / "real").glob("*.log")),
    *sorted((ROOT.parent / "shared" / "real-logs").glob("*.log")),  # shared/ beside the clone
]


@pytest.mark.parametrize("log", REAL, ids=lambda p: p.name)
def test_on_real_logs_the_failure_words_keep_every_line_the_verdict_needs(log):
    """The contract between this reader and the parsers: judged on the lines that hold a failure word only
    (as the part of a big log before its last 1 MiB is), a real log gets the verdict its whole text gets. A new
    signature whose lines hold no word of logread.WORDS fails here: add the word."""
    from clusterdoc.why import verdict
    from clusterdoc.why.foreign import evidence_from_output

    whole = log.read_bytes().decode("utf-8", "replace")
    words = logread.read_log(log, tail=0)  # nothing read line by line: every line through the words
    assert words.complete and words.tail == 0
    a = verdict.judge(evidence_from_output(whole, "1")).to_json()
    b = verdict.judge(evidence_from_output(words.text(), "1")).to_json()
    for v in (a, b):
        if v.get("cause"):
            v["cause"].pop("time", None)
    assert (b.get("cause") or {}).get("category") == (a.get("cause") or {}).get("category")
    assert (b.get("cause") or {}).get("ranks") == (a.get("cause") or {}).get("ranks")
    assert (b.get("cause") or {}).get("nodes") == (a.get("cause") or {}).get("nodes")


def test_a_pipe_is_read_in_batches_with_long_lines_cut_across_pieces():
    import io

    data = b"0:a\n" + b"x" * 100 + b"\n" + b"9:b\n" + b"y" * 15 + b"\nlast"
    for chunk in (1, 3, 7, 1000):
        lines = [line for batch in logread._pipe_lines(io.BytesIO(data), 10, chunk) for line in batch]
        assert lines == [b"0:a", b"x" * 10, b"9:b", b"y" * 10, b"last"], chunk


def test_why_takes_a_log_alone_and_no_argument_is_a_usage_error(tmp_path):
    """`clusterdoc why --log FILE` (no job id: a user with only an output file); neither is exit 2, no traceback."""
    (tmp_path / "slurm-77.out").write_bytes(OOM)
    cmd = [sys.executable, "-m", "clusterdoc", "why", "--no-probe", "--json", "--log", str(tmp_path / "slurm-77.out")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    got = json.loads(res.stdout)
    assert res.returncode == 1 and got["job"] == "slurm-77.out" and got["cause"]["category"] == "oom", res.stderr
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "why"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "--log FILE" in res.stderr and "Traceback" not in res.stderr
