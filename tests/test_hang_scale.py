"""The hang report at scale: built and read back in time linear in the ranks, its size too, its numbers bounded.

The old reader matched every report line with a backtracking regex (`^\\s+ranks? ([\\d,\\- ]+?)\\s{2,}(.*?)\\s+<-
differs`): on a report whose lines are padded to a long rank list it took 11.5 s at 512 ranks and 156 s at
1,024 (issue 38). These tests time out on that code at 2,048 ranks.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from clusterdoc.hang import report
from clusterdoc.why import evidence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_hang_scale import job_folder, states  # noqa: E402


def padded_as_before(text: str) -> str:
    """The report as clusterdoc wrote it before issue 38: every group's line padded to the longest rank list
    (old job folders keep such reports, and why still reads them)."""
    lines = text.splitlines()
    groups = [i for i, line in enumerate(lines) if line.startswith(("  rank ", "  ranks ")) and "  " in line[2:]]
    split = {i: lines[i][2:].split(None, 2) for i in groups}
    width = max(len(f"{p[0]} {p[1]}") for p in split.values())
    for i, p in split.items():
        lines[i] = f"  {p[0] + ' ' + p[1]:<{width}}  {p[2]}"
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(60)
def test_a_2048_rank_report_padded_to_a_long_rank_list_is_read_back_at_once(tmp_path):
    jd, text = job_folder(tmp_path, "sites", 2048)
    old = padded_as_before(text)
    assert sum(len(line) > 4000 for line in old.splitlines()) > 1000  # every line padded to ~4,600 columns
    (jd.path / "stacks" / "report.txt").write_text(old)
    t = time.perf_counter()
    h = evidence.hang_report(jd.path, 2048)
    took = time.perf_counter() - t
    assert h is not None and h["odd"] == [] and h["headline"].startswith("clusterdoc: job stalled: all_reduce #118")
    assert took < 5.0, took
    (jd.path / "stacks" / "report.txt").write_text(padded_as_before(report.build(states("desync", 2048), 2048)))
    assert evidence.hang_report(jd.path, 2048)["odd"] == list(range(1, 2048, 2))


@pytest.mark.timeout(60)
def test_a_2048_rank_desync_names_every_odd_rank_and_the_report_grows_linearly(tmp_path):
    jd, text = job_folder(tmp_path, "desync", 2048)
    h = evidence.hang_report(jd.path, 2048)
    assert h is not None and h["odd"] == list(range(1, 2048, 2))
    small = report.build(states("desync", 256), 256)
    assert len(text) < 10 * len(small), (len(small), len(text))  # 8x the ranks: about 8x the text, not 64x
    assert max(len(line) for line in text.splitlines() if "<- differs" in line) < 200  # not padded to a rank list
    assert "more groups of ranks that differ" in text  # sentences for the first groups, not one per rank


def test_a_group_line_longer_than_a_log_line_keeps_its_mark(tmp_path):
    st = {r: {**states("desync", 1)[0], "rank": r} for r in range(0, 8192, 2)}  # even ranks in all_reduce
    jd, _ = job_folder(tmp_path, "desync", 4)
    text = report.build(st, 8192, exits={r: -9 for r in range(1, 8192, 2)})  # every odd rank gone, one group
    assert max(len(line) for line in text.splitlines() if line.endswith("<- differs")) > 10_000
    (jd.path / "stacks" / "report.txt").write_text(text + "\n")
    h = evidence.hang_report(jd.path, 8192)
    assert h["odd"] == list(range(1, 8192, 2)) and h["gone"]


def test_build_and_read_times_grow_no_faster_than_linear():
    def best(n: int) -> float:
        st = states("desync", n)
        times = []
        for _ in range(3):
            t = time.process_time()  # CPU time: the machine is shared
            report.build(st, n)
            times.append(time.process_time() - t)
        return min(times)

    small, big = best(512), best(2048)
    assert big < 8 * small + 0.05, (small, big)  # 4x the ranks: linear is 4x; quadratic would be 16x


def test_rank_lists_in_a_report_are_bounded_by_the_world_and_by_their_digits():
    assert evidence.ranks_of("0-9999999", world=4) == [0, 1, 2, 3]
    assert evidence.ranks_of("0-10000000000") == []  # more than 7 digits: not a rank
    assert evidence.ranks_of("1" * 5000) == []
    assert evidence.ranks_of("0,2-3,x,5-") == [0, 2, 3, 5]
    assert evidence.odd_line("  ranks 0,2-3  in barrier #5   t.py:9 in f      <- differs") == (
        "0,2-3",
        "in barrier #5   t.py:9 in f",
    )
    assert evidence.odd_line("clusterdoc: ranks 1  x <- differs") is None  # not a group's line
    assert evidence.odd_line("  rank 1  " + " " * 100_000 + "x") is None


def test_long_rank_lists_are_cut_in_sentences_but_whole_in_their_own_line():
    text = report.build(states("desync", 4096), 4096)
    lines = text.splitlines()
    assert lines[1].split()[1] == ",".join(map(str, range(0, 4096, 2)))  # the group's own line: every rank
    assert "(2048 ranks)" in lines[0] and len(lines[0]) < 500  # the headline: cut, with the count
