"""A full disk is the environment's failure, not the code's (issue 38): `why` on a rank that raised ENOSPC, and
on a real job that filled its folder (a 2 MiB tmpfs, as tests/test_bounded_input.py does)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clusterdoc.launch.job import JobDir
from clusterdoc.why import evidence, verdict

FIX = Path(__file__).parent / "fixtures" / "why" / "jobs"
ROOT = Path(__file__).resolve().parents[1]


def judged(tmp_path: Path, exception: str, message: str | None = None) -> verdict.Verdict:
    jd = JobDir(tmp_path / "job")
    shutil.copytree(FIX / "code-rank2", jd.path)
    err = jd.path / "rank2.err"
    err.write_text(err.read_text().replace("ValueError: bad sample at step 5", exception))
    if message is not None:
        rec = json.loads((jd.path / "job.json").read_text())
        rec["outcome"]["message"] = message
        (jd.path / "job.json").write_text(json.dumps(rec))
    return verdict.judge(evidence.gather(jd, live=False))


@pytest.mark.parametrize(
    "exception",
    ["OSError: [Errno 28] No space left on device", "OSError: [Errno 122] Disk quota exceeded: '/ckpt/step5.pt'"],
)
def test_a_rank_that_raised_enospc_is_the_environment_not_the_code(tmp_path, exception):
    v = judged(tmp_path, exception)
    assert v.cause is not None and v.cause.category == "environment" and not v.cause.retry
    assert "the disk is full" in v.cause.headline and "the code is not at fault" in v.cause.next_step


def test_the_codes_own_error_is_still_the_code(tmp_path):
    v = judged(tmp_path, "ValueError: bad sample at step 5")
    assert v.cause is not None and v.cause.category == "code"
    # the folder filled up too, but the rank said why it failed: its own exception stands
    v = judged(tmp_path / "b", "ValueError: bad sample at step 5", "the job folder's file system is full (8 KiB free)")
    assert v.cause is not None and v.cause.category == "code"


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs (root)")


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


FILLER = 'print("started", flush=True)\nfor i in range(1_000_000):\n    print("x" * 200)\n'


@pytest.mark.slow
@needs_root
def test_a_job_that_filled_its_folder_is_not_blamed_on_its_code(tmp_path, small_disk):
    (tmp_path / "fill.py").write_text(FILLER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    run = [sys.executable, "-m", "clusterdoc"]
    res = subprocess.run([*run, "submit", "--backend", "local", "--no-preflight", "--hang-timeout", "0",
                          "--tasks-per-node", "2", "--folder", str(small_disk / "jobs"), "fill.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and "file system is full" in res.stderr, res.stderr[-3000:]
    (job,) = (small_disk / "jobs").iterdir()
    why = subprocess.run([*run, "why", job.name, "--folder", str(small_disk / "jobs"), "--no-probe", "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    cause = json.loads(why.stdout)["cause"]
    assert cause["category"] == "environment", why.stdout
    assert "full" in cause["headline"] and not cause["retry"], cause


def test_a_rank_that_left_no_traceback_while_the_folder_was_full_is_the_disk_not_a_weak_candidate():
    """The rank's exit without an exception is only a candidate as its code's failure (weak); with submit's record
    of a full job folder it is the environment's, and firmly: whether a traceback got written before the disk
    filled is timing (test_a_job_that_filled_its_folder_is_not_blamed_on_its_code went unknown 1 run in 3)."""
    from clusterdoc.why import disk
    from clusterdoc.why.model import Cause

    weak = [Cause("code", f"rank {r} on vm exited with code 1, no exception on record", ranks=[r], weak=True)
            for r in (0, 1)]  # fmt: skip
    note = "the job folder's file system is full (24 KiB free): ranks could not write their logs"
    out = disk.relabel(weak, note, said=set(), make=Cause)
    assert [(c.category, c.weak) for c in out] == [("environment", False), ("environment", False)], out
