"""Benchmark: `clusterdoc check` against `pdsh -R ssh ... uname -r` on the same nodes, in the same run.

Starts a test cluster of the largest size (no Slurm; each node in its own network namespace) in its own
dir, then for 8, 16, 32, 64, 128 and 256 nodes times the full default check without --comm (mesh sampled,
net, port, resources, clock: `clusterdoc check -w node[1-N] --json`, a fresh process each time, as a user
runs it) and pdsh running `uname -r` over ssh on the same nodes, interleaved, and prints min/median/max of
each and of their ratio. Targets: median ratio <= 0.8 at 64 and at 256 nodes; the check's growth from 64 to
256 nodes <= 4.4x (no worse than linear).

    .venv/bin/python bench/bench_check.py [--repeat 3] [--sizes 8,16,32,64,128,256] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
SIZES = (8, 16, 32, 64, 128, 256)
TARGET = 0.8
GROWTH = 4.4
MPIRUN = "/usr/bin/mpirun.mpich"


def sh(argv, env=None, timeout=600):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=timeout, cwd=REPO)


def timed(argv, env=None):
    """(wall seconds, the process, the head's CPU seconds: the command and every process it waited for,
    such as pdsh's ssh clients; the nodes' sshd and probes are not the head's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = sh(argv, env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, p


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--dir", default=os.environ.get("CLUSTERDOC_BENCH_DIR", str(REPO / ".cluster-bench")))
    ap.add_argument("--keep", action="store_true", help="leave the cluster running")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    if os.geteuid() != 0:
        print("bench_check: skipped (the test cluster needs root)")
        return 0
    if not Path("/usr/bin/pdsh").exists():
        print("bench_check: skipped (pdsh is not installed: apt-get install pdsh)")
        return 0

    up = sh([PY, "-m", "tests.cluster", "up", "--nodes", str(max(sizes)), "--no-slurm", "--dir", args.dir],
            timeout=1800)
    if up.returncode != 0:
        print(f"bench_check: cannot start the {max(sizes)}-node cluster:\n{up.stderr}", file=sys.stderr)
        return 1
    print(up.stderr.strip())
    cfg = Path(args.dir) / "ssh_config"
    # pdsh's ssh module runs `ssh $PDSH_SSH_ARGS`: point it at the cluster's config (keys, port, known_hosts).
    pdsh_env = dict(os.environ, PDSH_SSH_ARGS=f"-F {cfg} -x -l%u %h")
    try:
        rows = []
        for n in sizes:
            nodes = f"node[1-{n}]"
            # --mpirun: the cluster's MPICH (this machine's `mpirun` may be Open MPI's when both are installed)
            # --timeout: the first node holds the rendezvous listener for most of its own timeout, and on this one
            # machine a 256-node check runs for about a minute: every node must connect within the hold
            check_cmd = [PY, "-m", "clusterdoc", "check", "-w", nodes, "--ssh-config", str(cfg), "--json",
                         "--mpirun", MPIRUN, "--timeout", str(max(60, round(n * 0.45)))]
            pdsh_cmd = ["pdsh", "-R", "ssh", "-w", nodes, "uname", "-r"]
            # one warm-up of each (page cache, sshd forks), then interleaved runs
            timed(check_cmd)
            timed(pdsh_cmd, pdsh_env)
            tc, tp, cc, cp = [], [], [], []
            for _ in range(args.repeat):
                t, p = timed(check_cmd)
                doc = json.loads(p.stdout)
                bad = [f for f in doc["findings"] if f["status"] != "ok"]
                if bad:  # the healthy cluster must come out all ok, or the timing means nothing
                    print(f"bench_check: the check found problems on the healthy cluster: {bad[:3]}", file=sys.stderr)
                    return 1
                tc.append(t)
                cc.append(timed.cpu)
                t, p = timed(pdsh_cmd, pdsh_env)
                if p.returncode != 0 or len(p.stdout.splitlines()) != n:
                    print(f"bench_check: pdsh failed: {p.stderr[-500:]}", file=sys.stderr)
                    return 1
                tp.append(t)
                cp.append(timed.cpu)
            ratios = [c / p for c, p in zip(tc, tp)]
            rows.append((n, statistics.median(tc), statistics.median(tp), statistics.median(ratios)))
            print(f"  {n:3d} nodes: check {_mmm(tc)}  pdsh uname -r {_mmm(tp)}  ratio {_mmm(ratios, '')}  "
                  f"| head CPU: check {_mmm(cc)} pdsh {_mmm(cp)} ratio {_mmm([c / p for c, p in zip(cc, cp)], '')}",
                  flush=True)
    finally:
        if not args.keep:
            sh([PY, "-m", "tests.cluster", "down", "--dir", args.dir], timeout=300)

    by = {n: (c, p, r) for n, c, p, r in rows}
    for n in (64, 256):
        if n in by:
            r = by[n][2]
            print(f"clusterdoc check (default checks, mesh sampled, no --comm) on {n} nodes: median ratio to "
                  f"pdsh -R ssh uname -r {r:.2f} (target <= {TARGET}: {'met' if r <= TARGET else 'MISSED'})")
    if 64 in by and 256 in by:
        g = by[256][0] / by[64][0]
        print(f"growth 64 -> 256 nodes: {g:.2f}x (target <= {GROWTH}: {'met' if g <= GROWTH else 'MISSED'})")
    print("medians: " + ", ".join(f"{n}: {c:.2f}s" for n, c, _, _ in rows))
    return 0  # a missed target is reported above; it must not stop the other benchmarks


def _mmm(values, unit="s") -> str:
    return f"{min(values):.2f}/{statistics.median(values):.2f}/{max(values):.2f}{unit}"


if __name__ == "__main__":
    raise SystemExit(main())
