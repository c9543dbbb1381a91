"""The straggler watch in real 4-rank gloo DDP jobs on loopback (tests/shim_jobs/job.py straggler)."""
import os
import re
import subprocess
import sys

import pytest

from tests.shim_helpers import REPO, results, run_ranks

pytestmark = [pytest.mark.slow, pytest.mark.timing]
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


def test_a_healthy_job_logs_no_straggler_even_when_rank_0_prepares_the_data_first():
    # ~16 s of steps: the start's window, then at least two judged windows (shim/pace.py: 4 s each). Rank 0 first
    # prepares the data for 4 s while the others wait at a barrier (a common start): judged with the start-up,
    # the summary named rank 0
    outs = run_ranks("straggler", -1, 450, 0.1, 0, 4, n=4)
    results(outs)
    log = outs[0][2]
    # it ran long enough to be judged past its start-up and ended through the watch
    assert re.search(r"clusterdoc: per-rank pace \(over the last \d+ steps, start-up left out\):", log), log[-3000:]
    assert "straggler:" not in log, log[-3000:]


def test_the_demos_healthy_job_prints_no_straggler_line_at_all(tmp_path):
    # `make demo`'s job, as make demo submits it: a few seconds of steps (on a fast machine, 32 steps of 3 ms)
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                          "--no-preflight", "--folder", str(tmp_path / "jobs"), str(REPO / "jobs" / "train_ddp.py"),
                          "--epochs", "2"], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                         env={k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))})
    text = res.stdout + res.stderr
    assert res.returncode == 0 and "done after 32 steps" in text, text[-3000:]
    assert "[rank 0] clusterdoc: per-rank pace (" in text, text[-3000:]  # the summary was printed, end of the job
    assert "straggler" not in text.lower(), text[-3000:]
