"""The straggler watch in real 4-rank gloo DDP jobs on loopback (tests/shim_jobs/job.py straggler)."""
import re

import pytest

from tests.shim_helpers import results, run_ranks

pytestmark = pytest.mark.slow
LINE = "clusterdoc: straggler:"
CLEARED = "clusterdoc: straggler: no rank keeps the others waiting any more"


def test_a_rank_that_computes_longer_every_step_is_logged_once_with_its_figures_and_the_summary_follows():
    outs = run_ranks("straggler", 2, 150, 0.1, n=4)
    results(outs)
    log = outs[0][2]
    lines = [line for line in log.splitlines() if line.startswith(LINE)]
    # once; again only when the picture changes (on a loaded machine a window may clear and the next name it again)
    pictures = [line.split(" keeps")[0] for line in lines]  # who straggles, or CLEARED
    assert pictures and all(a != b for a, b in zip(pictures, pictures[1:])), log[-3000:]
    assert all(line.startswith(LINE + " rank 2 on") or line == CLEARED for line in lines), lines
    assert re.match(r"clusterdoc: straggler: rank 2 on \S+ keeps the others waiting: \d+ ms of compute per step "
                    r"against a median of \d+ ms \([\d.]+x the median\); the median rank waits \d+ ms per step "
                    r"\(\d+%\) for it, at job\.py:\d+ in scenario_straggler$", lines[0]), lines[0]
    assert all(LINE not in text for _, _, text in outs[1:])  # rank 0 alone judges and logs
    summary = log[log.index("clusterdoc: per-rank pace"):]
    assert all(re.search(rf"rank {r} \(\S+\): compute .*; peak RSS [\d.]+ MiB", summary) for r in range(4)), summary
    assert "straggler: rank 2 on" in summary


def test_a_healthy_job_logs_no_straggler():
    # ~16 s of steps: the start's window, then at least two judged windows (shim/pace.py: 4 s each)
    outs = run_ranks("straggler", -1, 450, n=4)
    results(outs)
    log = outs[0][2]
    assert "clusterdoc: per-rank pace" in log  # it ran long enough to be judged and ended through the watch
    assert "straggler:" not in log, log[-3000:]
