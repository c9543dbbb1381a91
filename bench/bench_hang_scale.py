"""Benchmark: the hang report built and read back, and `why` on a job folder, at 512, 1,024 and 4,096 ranks.

Two stalls, each the worst of its kind for the report: a desync where every odd rank stopped at its own call site
(one marked group per odd rank: the report's longest text and its most `<- differs` lines), and the healthy
majority split over many call sites (many unmarked lines padded to a long rank list: what took the old backtracking
regex in why 156 s at 1,024 ranks). For each size: the time to build the report (clusterdoc.hang.report.build, as
the launcher does), to read it back (clusterdoc.why.evidence.hang_report, as `why` and every failed submit do),
and `why` on a job folder of that many ranks (why.main.explain: every rank's files, the report, the verdict);
then the growth ratio per doubling of the ranks (1.0 x 2 = linear). Targets (issue 38): 4,096 ranks under 2 s,
growth no worse than linear. The job folders are made under a temporary folder and removed.

    .venv/bin/python bench/bench_hang_scale.py [--sizes 512,1024,4096] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clusterdoc.hang import report  # noqa: E402
from clusterdoc.launch.job import JobDir  # noqa: E402
from clusterdoc.why import evidence, main  # noqa: E402


def in_coll(rank: int, op: str, seq: int, line: int, func: str = "train_step") -> dict:
    c = {"op": op, "seq": seq, "group": "world", "dtype": "float32", "shape": [4096], "start": 1000.0,
         "site": ["/job/train.py", line, func], "waited": 300.0}
    return {"rank": rank, "collectives": {"current": c, "pending": [], "last": None},
            "frames": [{"file": "/job/train.py", "line": line, "func": func, "code": "x()", "user": True}]}


def states(kind: str, n: int) -> dict[int, dict]:
    """'desync': odd ranks each in barrier #118 at their own line, the even ones in all_reduce #118;
    'sites': every rank in all_reduce #118, the odd ranks each from their own line (no rank differs)."""
    if kind == "desync":
        return {r: in_coll(r, "all_reduce", 118, 88) if r % 2 == 0 else in_coll(r, "barrier", 118, 1000 + r, "main")
                for r in range(n)}
    return {r: in_coll(r, "all_reduce", 118, 88 if r % 2 == 0 else 1000 + r) for r in range(n)}


def job_folder(base: Path, kind: str, n: int) -> tuple[JobDir, str]:
    """A job folder of n ranks (one node each) that stalled as `kind` says and was stopped by the hang watch."""
    path = base / f"{kind}-{n}"
    (path / "stacks").mkdir(parents=True)
    spec = {"script": "/job/train.py", "script_args": [], "backend": "local", "nodes": n, "tasks_per_node": 1,
            "gpus_per_node": 0, "hang_timeout": 300, "on_hang": "abort"}
    codes = {str(r): -15 for r in range(n)}
    outcome = {"state": "FAILED", "codes": codes, "failed": [], "oom": False,
               "message": "stalled; every rank stopped (--on-hang abort)"}
    rec = {"id": path.name, "spec": spec, "state": "FAILED", "submitted": 1000.0,
           "attempts": [{"n": 1, "started": 1000.0, "ended": 1400.0, "outcome": outcome}], "outcome": outcome}
    (path / "job.json").write_text(json.dumps(rec))
    for r in range(n):
        (path / f"rank{r}.start").write_text(json.dumps({"host": f"node{r}", "addr": f"10.0.{r >> 8}.{r & 255}",
                                                         "pid": 100 + r, "time": 1000.0}))
        (path / f"rank{r}.err").write_text(f"[rank{r}] step 117 loss 2.31\n[rank{r}] stopped by the hang watch\n")
    text = report.build(states(kind, n), n, stacks_hint=f"{path}/stacks/rank{{0..{n - 1}}}.txt")
    (path / "stacks" / "report.txt").write_text(text + "\n")
    return JobDir(path), text


def timed(fn, repeat: int):
    """min, median, max of the wall time, what fn returned, and the median CPU time (this process's: on a loaded
    machine the wall time says more about the others' work; the growth is judged on the CPU time)."""
    times, cpu, out = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return min(times), statistics.median(times), max(times), out, statistics.median(cpu)


def run(sizes: list[int], repeat: int) -> int:
    failed = 0
    base = Path(tempfile.mkdtemp(prefix="bench-hang-"))
    try:
        for kind in ("desync", "sites"):
            print(f"== {kind}")
            print(f"{'ranks':>6} {'report':>8} {'build s':>9} {'read s':>9} {'why s':>9}   (min/median/max of "
                  f"{repeat}; why: every rank's files, the report, the verdict)")
            rows = []
            for n in sizes:
                st = states(kind, n)
                b = timed(lambda st=st, n=n: report.build(st, n), repeat)
                jd, text = job_folder(base, kind, n)
                r = timed(lambda jd=jd, n=n: evidence.hang_report(jd.path, n), repeat)
                w = timed(lambda jd=jd: main.explain(jd, probe=False, live=False), repeat)
                ev, v = w[3]
                odd = r[3]["odd"] if r[3] else []
                want = list(range(1, n, 2)) if kind == "desync" else []
                right = odd == want and (v.cause is not None and v.cause.category == ("desync" if want else
                                                                                          v.cause.category))
                print(f"{n:>6} {len(text) / 1e6:>6.2f}MB {b[1]:>9.3f} {r[1]:>9.3f} {w[1]:>9.3f}   "
                      f"build {b[0]:.3f}/{b[2]:.3f}  read {r[0]:.3f}/{r[2]:.3f}  why {w[0]:.3f}/{w[2]:.3f}  "
                      f"verdict: {v.cause.category if v.cause else 'ok'} ({len(odd)} odd ranks read back"
                      f"{', right' if right else ', WRONG'})")
                failed += not right
                rows.append((n, b[4] + r[4], w[4], w[1]))
            for (n0, rep0, why0, _), (n1, rep1, why1, _) in zip(rows, rows[1:]):
                f = n1 / n0
                print(f"  {n0} -> {n1} ranks (x{f:g}), CPU time: report built+read {rep0:.3f} -> {rep1:.3f} s "
                      f"(x{rep1 / max(rep0, 1e-9):.2f}), why {why0:.3f} -> {why1:.3f} s (x{why1 / max(why0, 1e-9):.2f}); "
                      f"linear: x{f:g}")
            big = rows[-1]
            ok = big[3] < 2.0
            print(f"  {big[0]} ranks: why {big[3]:.2f} s wall (target < 2 s: {'met' if ok else 'NOT met'})")
            failed += not ok
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failed else 0


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="512,1024,4096")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    return run([int(x) for x in a.sizes.split(",")], a.repeat)


if __name__ == "__main__":
    sys.exit(main_())
