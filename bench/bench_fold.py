"""Benchmark: clusterdoc's hostlist folding against ClusterShell's NodeSet.fold(), in the same run.

On 50,000 shuffled names and on random sets (multi-field names, suffixes, zero padding, sparse picks),
folds the same names with both, checks that each folded text expands back to exactly the names
(clusterdoc's expansion for ours, ClusterShell's for both), and prints total lengths and times.
Targets (issue 12): total folded length <= ClusterShell's, and time <= ClusterShell's.
ClusterShell lives in the benchmark venv only (bench/setup_bench_env.sh installs it).

    .venv/bin/python bench/bench_fold.py [--sets 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def big_sets(rng):
    names = [f"node{i}" for i in range(1, 50001)]
    padded = [f"rack{r:02d}-node{n:04d}" for r in range(1, 51) for n in range(1, 1001)]
    holes = [f"gpu{i:05d}-ib" for i in range(1, 60001) if rng.random() < 0.83][:50000]
    out = []
    for label, ns in (("node[1-50000]", names), ("rack[01-50]-node[0001-1000]", padded),
                      ("gpu[00001-60000]-ib, 17% missing", holes)):
        ns = list(ns)
        rng.shuffle(ns)
        out.append((f"50,000 shuffled: {label}", ns))
    return out


def random_set(rng):
    """A random cluster's worth of names: 1 to 3 numeric fields, maybe padding, maybe a suffix, sparse."""
    fields = rng.choice([1, 1, 2, 2, 3])
    prefix = rng.choice(["n", "node", "gpu", "cn", "r"])
    pad = [rng.choice([0, 0, 2, 3]) for _ in range(fields)]
    top = [rng.choice([3, 9, 12, 16, 40, 120]) for _ in range(fields)]
    seps = ["-n", "-c", "s"][:fields - 1]
    suffix = rng.choice(["", "", "-ib", ".cluster"])
    density = rng.choice([0.3, 0.7, 0.9, 1.0])
    names = set()
    for _ in range(rng.randint(1, 400)):
        nums = [str(rng.randint(0 if rng.random() < 0.1 else 1, t)).zfill(p) for t, p in zip(top, pad)]
        if rng.random() <= density:
            text = prefix + nums[0] + "".join(s + v for s, v in zip(seps, nums[1:])) + suffix
            names.add(text)
    if rng.random() < 0.3:  # a few odd names beside the pattern
        names.update(rng.sample(["login1", "head", "gpu-a1", "n7", "storage01"], 2))
    names = sorted(names) or ["n1"]
    rng.shuffle(names)
    return names


def bench_python() -> str:
    explicit = os.environ.get("CLUSTERDOC_BENCH_PYTHON")
    if explicit:
        return explicit
    out = subprocess.run(["bash", str(ROOT / "bench" / "setup_bench_env.sh")], check=True,
                         stdout=subprocess.PIPE, text=True)
    return out.stdout.strip().splitlines()[-1]


def measure(sets):
    """Runs in the benchmark venv: fold every set with both, check both, return the totals."""
    from ClusterShell.NodeSet import NodeSet
    from clusterdoc.hostfile import compress_hostlist, expand_hostlist

    rows = []
    for label, names in sets:
        t = time.perf_counter()
        ours = compress_hostlist(names)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs = str(NodeSet.fromlist(names))
        t_theirs = time.perf_counter() - t
        want = set(names)
        back = expand_hostlist(ours, before=0)
        assert set(back) == want and len(back) == len(want), (label, ours)
        assert set(NodeSet(ours)) == want and set(NodeSet(theirs)) == want, (label, ours, theirs)
        rows.append((label, len(ours), len(theirs), t_ours, t_theirs, ours, theirs))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inner:
        py = bench_python()
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        sys.exit(subprocess.run([py, __file__, "--inner", "--sets", str(args.sets), "--seed", str(args.seed)],
                                env=env).returncode)
    rng = random.Random(args.seed)
    big = measure(big_sets(rng))
    small = measure([(f"random set {i}", random_set(rng)) for i in range(args.sets)])
    ok = True
    for label, lo, lt, to, tt, ours, theirs in big:
        print(f"{label}: clusterdoc {lo} chars in {to * 1000:.0f} ms ({ours[:60]}), "
              f"ClusterShell {lt} chars in {tt * 1000:.0f} ms ({theirs[:60]})")
        ok &= lo <= lt and to <= tt
    lo, lt = sum(r[1] for r in small), sum(r[2] for r in small)
    to, tt = sum(r[3] for r in small), sum(r[4] for r in small)
    worse = [r for r in small if r[1] > r[2]]
    print(f"{len(small)} random sets: clusterdoc {lo} chars in {to * 1000:.0f} ms, "
          f"ClusterShell {lt} chars in {tt * 1000:.0f} ms; sets where clusterdoc is longer: {len(worse)}")
    for r in worse[:5]:
        print(f"  longer: {r[5][:150]}...  vs  {r[6][:150]}...")
    ok &= lo <= lt and to <= tt
    print("target (length and time <= ClusterShell's):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
