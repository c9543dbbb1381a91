"""Slurm's warning ahead of the time limit (SIGUSR1) and the outcome (issue 43's `timelimit` fault): ranks that
stop for it (a handler of their own: checkpoint and stop) ended early, TIMEOUT, to be run again; ranks that only
had clusterdoc.run's note and went on to their own end completed. The campaign's rerun ran its last 16 steps
after the warning, all ranks exit 0, and submit said 'job timeout' (exit 1) for a job that had finished."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from clusterdoc.launch.job import JobDir
from clusterdoc.launch.slurm import WARNED, SlurmJob


def job(tmp_path, records: list[dict]) -> SlurmJob:
    jd = JobDir(tmp_path)
    warned = time.time() - 30
    (tmp_path / WARNED).write_text(f"{int(warned)}\n")
    for r, rec in enumerate(records):
        (tmp_path / f"rank{r}.exit").write_text(json.dumps({"code": 0, "oom": False, "time": warned + 10, **rec}))
    j = SlurmJob.__new__(SlurmJob)
    j.spec, j.jd = SimpleNamespace(world_size=len(records)), jd
    return j


def test_ranks_that_went_on_past_the_warning_completed(tmp_path):
    assert not job(tmp_path, [{"usr1": "ignored"}] * 3).stopped_on_warning()


def test_ranks_that_stopped_for_the_warning_did_not(tmp_path):
    assert job(tmp_path, [{}, {}, {}]).stopped_on_warning()
    assert job(tmp_path, [{"usr1": "ignored"}, {}, {"usr1": "ignored"}]).stopped_on_warning()


SCRIPT = "import os, signal, time\nos.kill(os.getpid(), signal.SIGUSR1)\ntime.sleep(0.5)\n{extra}"


def exit_record(tmp_path, extra: str) -> dict:
    (tmp_path / "s.py").write_text(SCRIPT.format(extra=extra))
    env = {"RANK": "0", "WORLD_SIZE": "1", "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-m", "clusterdoc.run", "--log-dir", str(tmp_path), str(tmp_path / "s.py")],
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads((tmp_path / "rank0.exit").read_text())


@pytest.mark.slow  # a real clusterdoc.run each (~3-8 s on 2 loaded cores)
def test_clusterdoc_run_records_a_warning_the_script_did_not_handle(tmp_path):
    assert exit_record(tmp_path, "").get("usr1") == "ignored"


@pytest.mark.slow
def test_a_script_with_its_own_handler_is_not_said_to_ignore_it(tmp_path):
    handled = "signal.signal(signal.SIGUSR1, lambda *_: None)\nos.kill(os.getpid(), signal.SIGUSR1)\n"
    assert "usr1" not in exit_record(tmp_path, handled)
