"""Benchmark: what one host name that does not resolve costs a healthy check, and a check of that name alone.

Starts a 4-node test cluster (no Slurm) in its own dir, then times, interleaved, `clusterdoc check -w node[1-4]`
and the same with `nosuchhost` added (a fresh process each time, as a user runs it, all default checks, the
cluster's MPICH), and `clusterdoc check -w nosuchhost` alone; prints min/median/max of each and of the paired
differences. Targets (issue 25): the bad name adds <= 1 s to the median; the check of it alone ends in <= 2 s.

    .venv/bin/python bench/bench_check_bad_name.py [--repeat 5] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
MPIRUN = "/usr/bin/mpirun.mpich"
ADDED, ALONE = 1.0, 2.0


def timed(argv) -> tuple[float, dict]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=REPO)
    return time.perf_counter() - t0, json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=str(REPO / ".cluster-bench-bad-name"))
    ap.add_argument("--keep", action="store_true", help="leave the cluster running")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench_check_bad_name: skipped (the test cluster needs root)")
        return 0
    up = subprocess.run([PY, "-m", "tests.cluster", "up", "--nodes", "4", "--no-slurm", "--dir", args.dir],
                        capture_output=True, text=True, timeout=600, cwd=REPO)
    if up.returncode != 0:
        print(f"bench_check_bad_name: cannot start the cluster:\n{up.stderr}", file=sys.stderr)
        return 1
    check = [PY, "-m", "clusterdoc", "check", "--json", "--ssh-config", str(Path(args.dir) / "ssh_config"),
             "--mpirun", MPIRUN, "-w"]
    try:
        timed(check + ["node[1-4]"])  # warm-up: page cache, sshd forks
        healthy, with_bad, alone = [], [], []
        for _ in range(args.repeat):
            t, doc = timed(check + ["node[1-4]"])
            if any(f["status"] != "ok" for f in doc["findings"]):
                print("bench_check_bad_name: the healthy cluster has problems; timings mean nothing", file=sys.stderr)
                return 1
            healthy.append(t)
            t, doc = timed(check + ["node[1-4],nosuchhost"])
            bad = {(f["node"], f["check"]) for f in doc["findings"] if f["status"] != "ok"}
            if bad != {("nosuchhost", "ssh")}:
                print(f"bench_check_bad_name: expected one finding, got {sorted(bad)}", file=sys.stderr)
                return 1
            with_bad.append(t)
            alone.append(timed(check + ["nosuchhost"])[0])
    finally:
        if not args.keep:
            subprocess.run([PY, "-m", "tests.cluster", "down", "--dir", args.dir], capture_output=True, timeout=300,
                           cwd=REPO)
    added = [b - h for h, b in zip(healthy, with_bad)]
    print(f"check -w node[1-4]:            {_mmm(healthy)}")
    print(f"check -w node[1-4],nosuchhost: {_mmm(with_bad)}")
    print(f"added by the bad name:         {_mmm(added)} (median target <= {ADDED:g}s: "
          f"{'met' if statistics.median(added) <= ADDED else 'MISSED'})")
    print(f"check -w nosuchhost:           {_mmm(alone)} (max target <= {ALONE:g}s: "
          f"{'met' if max(alone) <= ALONE else 'MISSED'})")
    return 0


def _mmm(values) -> str:
    return f"min/median/max {min(values):.2f}/{statistics.median(values):.2f}/{max(values):.2f}s"


if __name__ == "__main__":
    raise SystemExit(main())
