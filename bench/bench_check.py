"""Benchmark: `clusterdoc check` against `pdsh -R ssh ... uname -r` on the same nodes, in the same run.

Starts a 64-node test cluster (no Slurm) in its own dir, then for 8, 16, 32 and 64 nodes times the full
check without --comm and without the node-to-node mesh (`clusterdoc check -w node[1-N] --no-mesh --json`,
a fresh process each time, as a user runs it) and pdsh running `uname -r` over ssh on the same nodes,
interleaved, and prints the medians. Target at 64 nodes: check <= 0.8 x pdsh (reference.md §8: paramiko
in threads beats pdsh's default fan-out here, so a whole check should cost less than pdsh's one command).

    .venv/bin/python bench/bench_check.py [--repeat 5] [--dir DIR] [--keep]
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
SIZES = (8, 16, 32, 64)
TARGET = 0.8
MPIRUN = "/usr/bin/mpirun.mpich"


def sh(argv, env=None, timeout=600):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=timeout, cwd=REPO)


def timed(argv, env=None):
    t0 = time.perf_counter()
    p = sh(argv, env)
    return time.perf_counter() - t0, p


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=os.environ.get("CLUSTERDOC_BENCH_DIR", str(REPO / ".cluster-bench64")))
    ap.add_argument("--keep", action="store_true", help="leave the 64-node cluster running")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench_check: skipped (the test cluster needs root)")
        return 0
    if not Path("/usr/bin/pdsh").exists():
        print("bench_check: skipped (pdsh is not installed: apt-get install pdsh)")
        return 0

    up = sh([PY, "-m", "tests.cluster", "up", "--nodes", "64", "--no-slurm", "--dir", args.dir], timeout=900)
    if up.returncode != 0:
        print(f"bench_check: cannot start the 64-node cluster:\n{up.stderr}", file=sys.stderr)
        return 1
    print(up.stderr.strip())
    cfg = Path(args.dir) / "ssh_config"
    # pdsh's ssh module runs `ssh $PDSH_SSH_ARGS`: point it at the cluster's config (keys, port, known_hosts).
    pdsh_env = dict(os.environ, PDSH_SSH_ARGS=f"-F {cfg} -x -l%u %h")
    try:
        rows = []
        for n in SIZES:
            nodes = f"node[1-{n}]"
            # --mpirun: the cluster's MPICH (this machine's `mpirun` may be Open MPI's when both are installed)
            check_cmd = [PY, "-m", "clusterdoc", "check", "-w", nodes, "--ssh-config", str(cfg), "--no-mesh",
                         "--json", "--mpirun", MPIRUN]
            pdsh_cmd = ["pdsh", "-R", "ssh", "-w", nodes, "uname", "-r"]
            # one warm-up of each (page cache, sshd forks), then interleaved runs
            timed(check_cmd)
            timed(pdsh_cmd, pdsh_env)
            tc, tp = [], []
            for _ in range(args.repeat):
                t, p = timed(check_cmd)
                doc = json.loads(p.stdout)
                bad = [f for f in doc["findings"] if f["status"] != "ok"]
                if bad:  # the healthy cluster must come out all ok, or the timing means nothing
                    print(f"bench_check: the check found problems on the healthy cluster: {bad[:3]}", file=sys.stderr)
                    return 1
                tc.append(t)
                t, p = timed(pdsh_cmd, pdsh_env)
                if p.returncode != 0 or len(p.stdout.splitlines()) != n:
                    print(f"bench_check: pdsh failed: {p.stderr[-500:]}", file=sys.stderr)
                    return 1
                tp.append(t)
            rows.append((n, statistics.median(tc), statistics.median(tp)))
            print(f"  {n:3d} nodes: check {rows[-1][1]:6.2f}s  pdsh uname -r {rows[-1][2]:6.2f}s  "
                  f"ratio {rows[-1][1] / rows[-1][2]:.2f}", flush=True)
    finally:
        if not args.keep:
            sh([PY, "-m", "tests.cluster", "down", "--dir", args.dir], timeout=300)

    n, c, p = rows[-1]
    ratio = c / p
    print(f"clusterdoc check (no --comm, no mesh) on {n} nodes: median {c:.2f}s; "
          f"pdsh -R ssh uname -r: median {p:.2f}s; ratio {ratio:.2f} (target <= {TARGET}: "
          f"{'met' if ratio <= TARGET else 'MISSED'})")
    print("growth: " + ", ".join(f"{n}: {c:.2f}s" for n, c, _ in rows))
    return 0  # a missed target is reported above; it must not stop the other benchmarks


if __name__ == "__main__":
    raise SystemExit(main())
