"""shim.init() under the real local launchers: torchrun (static and --standalone) and `accelerate launch`.

Nothing here sets a rank variable or the job's secret: the launcher starts the ranks, shim.init() joins its
rendezvous (under torchrun: the agent's store, as a client) and the ranks agree on a job secret derived from
the user's own secret file (HOME is a fresh folder per test, so the file is made there). Each job: an
all_reduce, in-order logging, trigger sync, an OOM retry, the hang watch on; debug mode fails fast on a shape
mismatch; one rank skipping a collective gets the hang report naming it. CLUSTERDOC_HANG_TIMEOUT only makes
the hang tests short.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.shim_helpers import parse_results

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "tests" / "shim_jobs" / "launched.py"
HANG = ROOT / "jobs" / "hang.py"
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow
LAUNCHER_VARS = ("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_", "MASTER_", "TORCHELASTIC_", "RANK", "WORLD_SIZE", "LOCAL_",
                 "ACCELERATE_")


def clean_env(home: Path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARS)}
    env.update(HOME=str(home), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1", **extra)
    return env


def torchrun(*args):
    return [str(BIN / "torchrun"), *map(str, args)]


def accelerate(*args):
    # --multi_gpu: accelerate's multi-process launcher (torchrun underneath); on a machine without GPUs its
    # processes run on the CPU (--cpu alone runs one process)
    return [str(BIN / "accelerate"), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no", *map(str, args)]


LAUNCHERS = {"torchrun": lambda *a: torchrun("--nproc-per-node", 2, *a), "accelerate": accelerate}


def run(cmd, home, timeout=120, **extra):
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=clean_env(home, **extra),
                          cwd=home)
    return proc, time.monotonic() - t0


def check_job(proc, world, home):
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    found = sorted(parse_results(proc.stdout), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == list(range(world)), text[-4000:]
    for r in found:
        assert r["launcher"] == "torchrun" and r["world"] == world and r["sum"] == world * (world + 1) / 2
        assert r["trigger"] == 2 and r["batch"] == 64  # trigger seen by all at once; OOM retry agreed on 64
        assert r["watch"] and r["secret"], r  # the hang watch on, with no variable exported
    logged = re.findall(r"in-order message (\d) from rank (\d)", proc.stdout + proc.stderr)
    assert logged == [(str(i), str(r)) for i in range(2) for r in range(world)], logged
    assert "Address already in use" not in text and "hang watch off" not in text
    secret = home / ".config" / "clusterdoc" / "job-secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
    assert secret.read_text().strip() not in text


needs_accelerate = pytest.mark.skipif(shutil.which("accelerate", path=str(BIN)) is None,
                                      reason="accelerate not installed (pip install -e .[test])")


def test_python_alone_is_a_world_of_one(tmp_path):
    proc, _ = run([sys.executable, JOB, "all"], tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    (r,) = parse_results(proc.stdout)
    assert (r["launcher"], r["world"], r["sum"], r["trigger"], r["batch"]) == ("single", 1, 1.0, 2, 64), r
    assert not r["watch"] and "hang watch off" not in proc.stderr  # nothing to watch, nothing to say


def test_torchrun_static_rendezvous_two_ranks(tmp_path):
    proc, _ = run(torchrun("--nproc-per-node", 2, JOB, "all"), tmp_path)
    check_job(proc, 2, tmp_path)


def test_torchrun_standalone_four_ranks(tmp_path):
    proc, _ = run(torchrun("--standalone", "--nproc-per-node", 4, JOB, "all"), tmp_path)
    check_job(proc, 4, tmp_path)


@needs_accelerate
def test_accelerate_launch_two_cpu_processes(tmp_path):
    proc, _ = run(accelerate(JOB, "all"), tmp_path)
    check_job(proc, 2, tmp_path)


@pytest.mark.parametrize("launcher", ["torchrun", pytest.param("accelerate", marks=needs_accelerate)])
def test_a_rank_skipping_a_collective_is_named_in_the_hang_report(tmp_path, launcher):
    proc, took = run(LAUNCHERS[launcher](HANG, "--scenario", "skip", "--rank", 1), tmp_path,
                     CLUSTERDOC_HANG_TIMEOUT="3")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, text[-4000:]
    assert text.count("clusterdoc: job stalled") == 1, text[-4000:]
    assert re.search(r"rank 1 +in barrier #4 +hang\.py:\d+ in skip +<- differs", text), text[-4000:]
    assert re.search(r"rank 0 +in all_reduce #4 float32\[4096\] +hang\.py:\d+ in train_step", text), text[-4000:]
    assert took < 60


@pytest.mark.parametrize("launcher", ["torchrun", pytest.param("accelerate", marks=needs_accelerate)])
def test_debug_mode_fails_fast_naming_both_shapes(tmp_path, launcher):
    proc, took = run(LAUNCHERS[launcher](JOB, "mismatch"), tmp_path, CLUSTERDOC_DEBUG="1")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "RESULT" not in proc.stdout, text[-4000:]
    assert "DistributedOperationException" in text and "the ranks' tensors do not agree" in text, text[-4000:]
    assert re.search(r"\[4, 3\]", text) and re.search(r"\[5, 3\]", text), text[-4000:]
    assert took < 60  # not the collective timeout


def test_a_home_not_shared_turns_the_watch_off_with_one_line(tmp_path):
    """Each rank sees its own HOME (as on nodes without a shared home): they cannot agree on a secret; rank 0
    says so once, in one line; the job itself runs."""
    proc, _ = run(torchrun("--nproc-per-node", 2, JOB, "home"), tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    lines = [line for line in text.splitlines() if "hang watch off" in line]
    assert len(lines) == 1, text[-4000:]
    assert "rank 1 on" in lines[0] and "is the home folder shared" in lines[0], lines
    assert "export CLUSTERDOC_JOB_SECRET=" in lines[0]
    found = parse_results(proc.stdout)
    assert len(found) == 2 and all(not r["watch"] and not r["secret"] and r["batch"] == 64 for r in found), found
