"""The hang doctor end to end on the local backend: 4 real ranks of jobs/hang.py, real gloo, real stalls.

Each scenario: `clusterdoc submit --hang-timeout 5` must print one report naming the odd rank and the call
sites, within hang-timeout + 15 s of the stall, exit 1, and leave no rank running (--on-hang abort).
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HANG = ROOT / "jobs" / "hang.py"
TIMEOUT = 10
pytestmark = pytest.mark.slow


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(OMP_NUM_THREADS="1", **extra)
    return env


def submit(tmp_path, *args, timeout=180):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                           "--no-preflight", "--folder", str(tmp_path / "jobs"), *map(str, args)],
                          cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=timeout)


def leftover_ranks(folder: Path) -> list[str]:
    out = subprocess.run(["pgrep", "-af", str(folder)], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "clusterdoc.run" in line]


def report_of(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if not line.startswith("[rank ")]
    start = next(i for i, line in enumerate(lines) if line.startswith("clusterdoc: "))
    return "\n".join(lines[start:])


# scenario -> (patterns the report must contain: the odd rank, the ops and both call sites (file:line))
SCENARIOS = {
    "skip": [r"ranks 0,2-3 +in all_reduce #4 float32\[4096\] +hang\.py:\d+ in train_step",
             r"rank 1 +in barrier #4 +hang\.py:\d+ in skip +<- differs", "skipped a call"],
    "order": [r"ranks 0-1 +in broadcast #1 float32\[1024\] +hang\.py:\d+ in order",
              r"ranks 2-3 +in all_reduce #1 float32\[1024\] +hang\.py:\d+ in order", "another order",
              r"(?m)^  ranks (0-1|2-3) .*<- differs$"],  # 2 against 2: either side is the odd one
    "loop": [r"ranks 0,2-3 +in all_reduce #2 float32\[16\] +hang\.py:\d+ in loop",
             r"rank 1 +not in a collective +hang\.py:\d+ in loop: (n \+= 1|while True:)", "in no collective"],
    "lock": [r"ranks 0,2-3 +in all_reduce #2 float32\[16\] +hang\.py:\d+ in lock",
             r"rank 1 +not in a collective +hang\.py:\d+ in lock: with b:", "in no collective"],
    # the group's own sequence number (the flight recorder counts DDP's setup broadcasts too)
    "ddp": [r"ranks 0,2-3 +in all_reduce #\d+ float32\[4225\] \(DDP gradient all_reduce, bucket 0, from loss\.backward\(\)\)"
            r" +hang\.py:\d+ in ddp",
            r"rank 1 +not in a collective +hang\.py:\d+ in ddp: time\.sleep\(3600\)"],
    # issue 38's flake, made to happen every time: rank 2's watchdog is starved (the GIL held in native code for
    # 8 s from just before the stall) when the dump is asked for; it answers late, and is waited for, not silent
    "late": [r"ranks 0,2-3 +in all_reduce #4 float32\[4096\] +hang\.py:\d+ in train_step",
             r"rank 1 +in barrier #4 +hang\.py:\d+ in skip +<- differs", r"^(?![\s\S]*did not answer)"],
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_stall_report_names_the_odd_rank_and_the_call_sites(tmp_path, scenario):
    res = submit(tmp_path, "--hang-timeout", TIMEOUT, HANG, "--scenario", scenario, "--rank", 1)
    assert res.returncode == 1, res.stderr[-4000:]
    text = report_of(res.stderr)
    for pattern in SCENARIOS[scenario]:
        assert re.search(pattern, text), f"{pattern!r} not in:\n{text}"
    waited = float(re.search(r"has waited (\d+) s", text).group(1))
    assert TIMEOUT <= waited <= TIMEOUT + 15, text
    assert "every rank stopped (--on-hang abort)" in res.stderr
    (jd,) = (tmp_path / "jobs").iterdir()
    # the live report and `why` agree: why blames the ranks the report marks (issue 35)
    why = subprocess.run([sys.executable, "-m", "clusterdoc", "why", str(jd), "--no-probe", "--json"],
                         capture_output=True, text=True, timeout=120, env=clean_env())
    odd = [int(r) for line in text.splitlines() if line.endswith("<- differs")
           for r in re.findall(r"\d+", re.sub(r"(\d+)-(\d+)", lambda m: ",".join(
               map(str, range(int(m[1]), int(m[2]) + 1))), line.split()[1]))]
    assert json.loads(why.stdout)["cause"]["ranks"] == sorted(odd), (why.stdout, text)
    # a rank stopped by the abort while writing its stacks again may leave its hidden temp (.rankR.txt.*.tmp):
    # never read as a report; what counts is that every rank's file and the report are whole
    files = sorted(p.name for p in (jd / "stacks").iterdir() if not p.name.startswith("."))
    assert files == ["rank0.txt", "rank1.txt", "rank2.txt", "rank3.txt", "report.json", "report.txt"]
    times = json.loads((jd / "stacks" / "report.json").read_text())
    assert TIMEOUT <= times["printed"] - times["stall_started"] <= TIMEOUT + 15, times
    assert "Thread MainThread" in (jd / "stacks" / "rank1.txt").read_text()
    if scenario == "lock":  # every thread's stack: the other thread of the deadlock is there too
        assert "Thread loader" in (jd / "stacks" / "rank1.txt").read_text()
    assert leftover_ranks(jd) == []


def test_a_killed_rank_is_named_with_its_signal_and_where_the_others_were(tmp_path):
    res = submit(tmp_path, "--hang-timeout", TIMEOUT, HANG, "--scenario", "kill", "--rank", 1)
    assert res.returncode == 1
    text = report_of(res.stderr)
    assert re.search(r"rank 1 +gone: killed by SIGKILL.*<- differs", text), text
    assert text.count("<- differs") == 1, text  # the ranks it took down (or the launcher stopped) are not blamed
    assert re.search(r"hang\.py:\d+ in kill", text), text
    assert "job failed: rank 1 was killed by SIGKILL" in res.stderr
    (jd,) = (tmp_path / "jobs").iterdir()
    assert leftover_ranks(jd) == []


def test_healthy_job_with_the_watchdog_gives_no_report(tmp_path):
    res = submit(tmp_path, "--hang-timeout", 2, HANG, "--scenario", "healthy")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "stalled" not in res.stderr and "where the ranks were" not in res.stderr


def test_stacks_on_a_running_job_shows_every_rank_and_trace_draws_it(tmp_path):
    folder = tmp_path / "jobs"
    proc = subprocess.Popen([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                             "--no-preflight", "--trace", "--folder", str(folder), str(HANG), "--scenario",
                             "healthy", "--sleep", "15"], cwd=tmp_path, env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(folder.glob("*/watch.json")) and time.monotonic() < deadline:
            time.sleep(0.5)
        (jd,) = folder.iterdir()
        res = subprocess.run([sys.executable, "-m", "clusterdoc", "stacks", "--folder", str(folder), jd.name],
                             capture_output=True, text=True, timeout=60, env=clean_env())
        assert res.returncode == 0, res.stdout + res.stderr
        assert "4 of 4 ranks answered" in res.stdout
        assert re.search(r"ranks 0-3 +not in a collective +hang\.py:\d+ in main: time\.sleep\(args\.sleep\)",
                         res.stdout), res.stdout
        assert proc.poll() is None  # asking did not stop the job
        pace = res.stdout[res.stdout.index("pace since tracking began"):]  # every rank's figures so far
        assert all(re.search(rf"rank {r} \(\S+\): compute .*; peak RSS [\d.]+ MiB", pace) for r in range(4)), pace
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out[-3000:]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "trace", "--folder", str(folder), jd.name],
                         capture_output=True, text=True, timeout=60, env=clean_env())
    assert res.returncode == 0, res.stderr
    import json

    doc = json.loads((jd / "trace.json").read_text())
    import jsonschema

    from tests.test_hang_report import TRACE_SCHEMA

    jsonschema.validate(doc, TRACE_SCHEMA)
    names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X" and e.get("cat") == "collective"]
    # healthy: 5 all_reduce + 1 barrier per rank, 4 ranks
    assert len(names) == 24 and names.count("barrier #6") == 4
    assert {e["pid"] for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == "waiting %"} == {0, 1, 2, 3}


def test_without_a_launcher_the_rank_that_saw_the_stall_reports_and_all_stop(tmp_path):
    """Plain torchrun-style ranks calling shim.init(): the report comes from a rank, every rank exits 1."""
    from tests.shim_helpers import free_port

    port = free_port()
    procs = [subprocess.Popen([sys.executable, str(HANG), "--scenario", "skip"], cwd=tmp_path,
                              env=clean_env(RANK=str(r), WORLD_SIZE="4", LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                                            MASTER_PORT=str(port), CLUSTERDOC_HANG_TIMEOUT="3",
                                            CLUSTERDOC_JOB_SECRET="s3cret-shared-by-the-ranks",
                                            PYTHONPATH=str(ROOT)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(4)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [1, 1, 1, 1], outs
    reports = [o for o in outs if "clusterdoc: job stalled" in o]
    assert len(reports) == 1, outs
    assert re.search(r"rank 1 +in barrier #4 +hang\.py:\d+ in skip +<- differs", reports[0]), reports[0]


def test_on_hang_wait_reports_once_and_keeps_the_job_until_cancelled(tmp_path):
    folder = tmp_path / "jobs"
    proc = subprocess.Popen([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                             "--no-preflight", "--folder", str(folder), "--hang-timeout", str(TIMEOUT), "--on-hang",
                             "wait", str(HANG), "--scenario", "skip"], cwd=tmp_path, env=clean_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("clusterdoc: job stalled") or time.monotonic() > deadline:
                break
        assert seen and seen[-1].startswith("clusterdoc: job stalled: all_reduce #4"), "".join(seen[-20:])
        time.sleep(2 * TIMEOUT)
        assert proc.poll() is None  # --on-hang wait: the job is left running
        (jd,) = folder.iterdir()
        assert len(leftover_ranks(jd)) == 4
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert rest.count("clusterdoc: job stalled") == 0  # one report, not one per poll
    assert leftover_ranks(jd) == []


EARLY = ("rank 1 exited 0 after 7 all_reduce calls while ranks 0, 2, 3 wait in their 8th "
         "(uneven data? torch.distributed.algorithms.Join)")


def check_early_exit(stderr: str, jd: Path, env=None) -> None:
    """Issue 35: rank 1 ends its loop one all_reduce early and exits 0; the others fail in their 8th (gloo:
    'Connection closed by peer'). The launcher's summary and `why` both name rank 1 and the counts, and the
    summary marks rank 1 alone (never the ranks left waiting)."""
    text = report_of(stderr)
    rows = [line for line in text.splitlines() if re.match(r"  ranks? \d", line)]
    assert [line for line in rows if line.endswith("<- differs")] == [
        next(line for line in rows if re.match(r"  rank 1 +gone: exited with code 0", line))], text
    assert EARLY in " ".join(text.split()), text
    assert re.search(r"job failed: rank 1 exited with code 0;.*" + re.escape(EARLY), stderr), stderr[-2000:]
    why = subprocess.run([sys.executable, "-m", "clusterdoc", "why", str(jd), "--no-probe", "--json"],
                         capture_output=True, text=True, timeout=120, env=env or clean_env())
    cause = json.loads(why.stdout)["cause"]
    assert why.returncode == 1 and cause["category"] == "desync" and cause["ranks"] == [1], why.stdout
    assert cause["headline"] == EARLY, cause


def test_a_rank_that_exits_0_one_collective_early_is_named_live_and_by_why(tmp_path):
    res = submit(tmp_path, "--hang-timeout", TIMEOUT, HANG, "--scenario", "early", "--rank", 1)
    assert res.returncode == 1, res.stderr[-4000:]
    (jd,) = (tmp_path / "jobs").iterdir()
    check_early_exit(res.stderr, jd)
    assert leftover_ranks(jd) == []


def test_a_rank_the_launcher_stops_in_its_8th_call_before_it_records_is_judged_by_where_it_was(tmp_path):
    """The race CI saw twice, made to happen every time: rank 3 freezes itself (SIGSTOP) inside its 8th all_reduce
    before rank 1 leaves, so it never fails on its own nor records anything; the launcher stops it once its grace
    (local.FAIL_GRACE) is over. Its rank3.where (shim/where.py) still says it waited in the 8th: the verdict is the
    same as when it records its own failure."""
    res = submit(tmp_path, "--hang-timeout", TIMEOUT, HANG, "--scenario", "early", "--rank", 1, "--freeze", 3)
    assert res.returncode == 1, res.stderr[-4000:]
    (jd,) = (tmp_path / "jobs").iterdir()
    assert not (jd / "rank3.exit").exists()
    assert re.search(r"(?m)^  rank 3 +gone: killed by SIG(TERM|KILL) \(last seen in all_reduce #8 float32\[1024\], "
                     r"at hang\.py:\d+ in train_step\)$", report_of(res.stderr)), res.stderr[-3000:]
    check_early_exit(res.stderr, jd)
    assert leftover_ranks(jd) == []
