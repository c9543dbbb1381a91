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


@pytest.mark.timeout(60)
def test_a_2048_rank_report_padded_to_a_long_rank_list_is_read_back_at_once(tmp_path):
    jd, text = job_folder(tmp_path, "sites", 2048)
    t = time.perf_counter()
    h = evidence.hang_report(jd.path, 2048)
    took = time.perf_counter() - t
    assert h is not None and h["odd"] == [] and h["headline"].startswith("clusterdoc: job stalled: all_reduce #118")
    assert took < 5.0, took


@pytest.mark.timeout(60)
def test_a_2048_rank_desync_names_every_odd_rank_and_the_report_grows_linearly(tmp_path):
    jd, text = job_folder(tmp_path, "desync", 2048)
    h = evidence.hang_report(jd.path, 2048)
    assert h is not None and h["odd"] == list(range(1, 2048, 2))
    small = report.build(states("desync", 256), 256)
    assert len(text) < 10 * len(small), (len(small), len(text))  # 8x the ranks: about 8x the text, not 64x
    assert max(len(line) for line in text.splitlines() if "<- differs" in line) < 200  # not padded to a rank list
    assert "more groups of ranks that differ" in text  # sentences for the first groups, not one per rank


def test_build_and_read_times_grow_no_faster_than_linear():
    def best(n: int) -> float:
        st = states("desync", n)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            report.build(st, n)
            times.append(time.perf_counter() - t)
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
