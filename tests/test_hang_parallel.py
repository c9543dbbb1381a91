"""The hang doctor on every parallel kind (jobs/hang_parallel.py), 4 real gloo ranks under `clusterdoc submit`.

Rank 1 skips one step (or stalls there): the report marks rank 1 and only rank 1, names the op the others wait
in and the user's line on both sides, comes within hang-timeout + 15 s of the stall, and no process is left
(DataLoader workers included). Healthy runs give the same parameters with and without the shim.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shim_helpers import free_port, parse_results
from tests.test_hang_local import TIMEOUT, clean_env, leftover_ranks, report_of

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "jobs" / "hang_parallel.py"
pytestmark = pytest.mark.slow
LINE = r"hang_parallel\.py:\d+ in \w+"

# kind -> (what the others wait in, what rank 1's line says)
KINDS = {
    "fsdp2": (r"all_gather(_single)? #\d+ float32\[\d+\]", r"in barrier #\d+"),
    "fsdp1": (r"all_gather(_single)? #\d+ float32\[\d+\]", r"in barrier #\d+"),
    "tp": (r"all_reduce #\d+ float32\[8,16\]", r"in barrier #\d+"),
    "funcol": (r"all_reduce #\d+ float32\[64\]", r"in barrier #\d+"),
    "tp_stuck": (r"all_reduce #\d+ float32\[8,16\]", r"in all_reduce #1 float32\[1\] \(ranks 1,3\)"),
    "pipeline": (r"all_reduce #\d+ float32\[16,16\] \(ranks 1,3\)", r"in barrier #1"),
    "subgroup": (r"all_reduce #3 float32\[32\] \(ranks 0,1,2\)", r"in barrier #1"),
    "loader": (r"all_reduce #2 float32\[4,16\]", r"not in a collective +hang_parallel\.py:\d+ in loader: for batch in "
               r"data: +\(waits for DataLoader worker 0, pid \d+ at hang_parallel\.py:\d+ in __getitem__\)"),
    "ddp_compile": (r"broadcast #\d+ int32\[\d+\]", r"not in a collective +hang_parallel\.py:\d+ in ddp_compile: "
                    r"time\.sleep\(3600\)"),
}


def submit(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                           "--no-preflight", "--folder", str(tmp_path / "jobs"), *map(str, args)],
                          cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=240)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_rank_that_skipped_is_named_with_both_call_sites(tmp_path, kind):
    res = submit(tmp_path, "--hang-timeout", TIMEOUT, JOB, "--kind", kind, "--rank", 1)
    assert res.returncode == 1, res.stderr[-4000:]
    text = report_of(res.stderr)
    waited, odd = KINDS[kind]
    rows = [line for line in text.splitlines() if re.match(r"  ranks? \d", line)]
    marked = [line for line in rows if line.endswith("<- differs")]
    assert len(marked) == 1 and re.match(rf"  rank 1 +{odd}", marked[0]), text
    if "not in a collective" not in odd:
        assert re.search(rf"rank 1 +{odd} +{LINE} +<- differs", marked[0]), text
    assert any(re.search(rf"in {waited}.* +{LINE}$", line) for line in rows), text  # the others, their line
    if kind == "funcol":  # the line that issued the functional collective, not the one that waits on it
        issued = next(i for i, line in enumerate(JOB.read_text().splitlines(), 1) if "# issued here" in line)
        assert f"hang_parallel.py:{issued} in funcol" in text, text
    seconds = float(re.search(r"has waited (\d+) s", text).group(1))
    assert TIMEOUT <= seconds <= TIMEOUT + 15, text
    (jd,) = (tmp_path / "jobs").iterdir()
    times = json.loads((jd / "stacks" / "report.json").read_text())
    assert times["printed"] - times["stall_started"] <= TIMEOUT + 15, times
    assert sorted(p.name for p in (jd / "fr").iterdir()) == [f"rank{r}.json" for r in range(4)]
    assert leftover_ranks(jd) == []
    assert subprocess.run(["pgrep", "-f", str(JOB)], capture_output=True).returncode == 1  # workers too
    # no --trace: `clusterdoc trace` draws the recorder's dumps, the stalled collectives unfinished
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "trace", "--folder", str(tmp_path / "jobs"), jd.name],
                         capture_output=True, text=True, timeout=60, env=clean_env())
    assert res.returncode == 0 and "from the flight recorder" in res.stdout, res.stdout + res.stderr
    events = json.loads((jd / "trace.json").read_text())["traceEvents"]
    # (the pipeline's rank 0 waits in a send, which gloo's recorder does not keep; its rank 1 in a barrier)
    expected = {1, 2, 3} if kind == "pipeline" else {0, 2, 3}
    assert {e["pid"] for e in events if e.get("args", {}).get("unfinished")} >= expected


def run_plain(kind, n):
    """The same job under plain torch.distributed (no clusterdoc at all): the reference results."""
    port = free_port()
    procs = [subprocess.Popen([sys.executable, str(JOB), "--kind", kind, "--rank", "-1"],
                              env=clean_env(RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                                            MASTER_PORT=str(port), HANG_PARALLEL_PLAIN="1"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(n)]
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * n, outs
    return sorted(r["checksum"] for o in outs for r in parse_results(o))


@pytest.mark.parametrize("kind", ["fsdp2", "tp", "pipeline"])
def test_healthy_jobs_give_the_same_results_as_plain_torch(tmp_path, kind):
    res = submit(tmp_path, "--nodes", 2, "--hang-timeout", TIMEOUT, JOB, "--kind", kind, "--rank", -1)
    assert res.returncode == 0, res.stderr[-4000:]
    (jd,) = (tmp_path / "jobs").iterdir()
    ours = sorted(res["checksum"] for r in range(2) for res in parse_results((jd / f"rank{r}.out").read_text()))
    assert len(ours) == 2 and ours == run_plain(kind, 2)


def test_trace_keeps_a_stall_in_the_first_collective(tmp_path):
    """Issue 25: with --trace, the collectives a stall leaves unfinished are in the trace, the first one too."""
    from tests.test_hang_local import HANG

    res = submit(tmp_path, "--trace", "--hang-timeout", TIMEOUT, HANG, "--scenario", "first", "--rank", 1)
    assert res.returncode == 1, res.stderr[-3000:]
    (jd,) = (tmp_path / "jobs").iterdir()
    for rank in (0, 2, 3):
        recs = [json.loads(line) for line in (jd / "trace" / f"rank{rank}.jsonl").read_text().splitlines()]
        assert [(r["op"], r["seq"], "end" in r) for r in recs] == [("all_reduce", 1, False)], recs


def test_without_the_recorder_the_shims_records_still_name_the_rank_and_it_is_said_once(tmp_path):
    """A torch (or a job) with no flight recorder for gloo: today's tracking decides, and the job is told once."""
    from tests.test_hang_local import HANG

    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                          "--no-preflight", "--folder", str(tmp_path / "jobs"), "--hang-timeout", str(TIMEOUT),
                          str(HANG), "--scenario", "skip", "--rank", "1"],
                         cwd=tmp_path, env=clean_env(TORCH_FR_BUFFER_SIZE="0"), capture_output=True, text=True,
                         timeout=240)
    assert res.returncode == 1, res.stderr[-3000:]
    assert re.search(r"rank 1 +in barrier #4 +hang\.py:\d+ in skip +<- differs", report_of(res.stderr))
    assert res.stderr.count("the hang watch sees only the collectives the shim wraps") == 1, res.stderr[-3000:]
    (jd,) = (tmp_path / "jobs").iterdir()
    assert not (jd / "fr").exists()


def test_two_ranks_the_mark_goes_to_the_rank_that_skipped(tmp_path):
    """One against one: no majority; the mark is stable (the side without rank 0) and here it is the right one."""
    res = submit(tmp_path, "--nodes", 2, "--hang-timeout", TIMEOUT, JOB, "--kind", "fsdp2", "--rank", 1)
    assert res.returncode == 1, res.stderr[-4000:]
    text = report_of(res.stderr)
    assert re.search(rf"(?m)^  rank 0 +in all_gather(_single)? #\d+ float32\[\d+\] +{LINE}$", text), text
    assert re.search(rf"(?m)^  rank 1 +in barrier #\d+ +{LINE} +<- differs$", text), text
    (jd,) = (tmp_path / "jobs").iterdir()
    assert leftover_ranks(jd) == []
