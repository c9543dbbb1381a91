"""Debug-mode cost per collective: clusterdoc's check against Accelerate's debug mode, same run.

Added time = (op with debug) - (op without), per op: each round times a block of ops without and a
block with debug mode back to back (alternating which goes first), and the figure is the median over
rounds of that paired difference (robust to the machine's noise in either block, which on 2 shared
cores is as large as the effect at 4 MiB), for all_reduce
(Accelerate: accelerate.utils.reduce) and broadcast (accelerate.utils.broadcast) at 4 KiB and 4 MiB
on 2 and 4 gloo ranks. Target: ratio ours/Accelerate <= 0.5.
Usage: python bench/bench_shim_debug.py [--ranks 2,4] [--rounds 21] [--quick]
"""
import argparse
import json
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))


def worker(rounds, iters_small, iters_big):
    import torch
    import torch.distributed as dist
    from accelerate import PartialState
    from accelerate.utils import broadcast as acc_broadcast
    from accelerate.utils import reduce as acc_reduce

    from clusterdoc import shim

    shim.init()
    state = PartialState(cpu=True)  # MULTI_CPU over the gloo group already up
    torch.set_num_threads(1)
    results = {}
    for size_name, numel, iters in (("4KiB", 1024, iters_small), ("4MiB", 1024 * 1024, iters_big)):
        t = torch.ones(numel)

        def timed(fn):
            fn()  # warm-up, also lines the ranks up
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                fn()
            return (time.perf_counter() - start) / iters

        variants = {
            "all_reduce": lambda: dist.all_reduce(t),
            "broadcast": lambda: dist.broadcast(t, src=0),
            "acc_reduce": lambda: acc_reduce(t, reduction="sum"),
            "acc_broadcast": lambda: acc_broadcast(t, from_process=0),
        }
        def timed_on(name, fn):
            if name.startswith("acc"):
                state.debug = True
                on = timed(fn)
                state.debug = False
            else:
                shim.enable_debug()
                on = timed(fn)
                shim.disable_debug()
            return on

        samples = {}
        for round_no in range(rounds):
            for name, fn in variants.items():
                # off and on back to back (which goes first alternates), interleaved with the other variants
                if round_no % 2:
                    on, off = timed_on(name, fn), timed(fn)
                else:
                    off, on = timed(fn), timed_on(name, fn)
                samples.setdefault(name + "_off", []).append(off)
                samples.setdefault(name + "_on", []).append(on)
        results[size_name] = samples
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(results), flush=True)
    dist.barrier()


def added(samples, name):
    """Median over rounds of (block with debug) - (block without), the two timed back to back."""
    return median(on - off for on, off in zip(samples[name + "_on"], samples[name + "_off"]))


def fastest_added(samples, name):
    """The other estimate: fastest block with debug minus fastest block without."""
    return min(samples[name + "_on"]) - min(samples[name + "_off"])


def main():
    from _bench_common import bench_python, run_ranks

    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--quick", action="store_true", help="fewer iterations (development)")
    args = ap.parse_args()
    iters = (20, 3) if args.quick else (50, 40)
    python = bench_python()
    print(f"{'ranks':>5} {'size':>5} {'op':>10} {'base ms':>8} {'ours +ms':>9} {'accel +ms':>9} {'ratio':>6}")
    worst = worst_fastest = 0.0
    for n in [int(x) for x in args.ranks.split(",")]:
        out = run_ranks(python, [__file__, "--worker", str(args.rounds), *map(str, iters)], n)
        res = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
        for size, r in res.items():
            for op, acc in (("all_reduce", "acc_reduce"), ("broadcast", "acc_broadcast")):
                ours, theirs = added(r, op), added(r, acc)
                ratio = ours / theirs if theirs > 0 else float("inf")
                worst = max(worst, ratio)
                worst_fastest = max(worst_fastest, fastest_added(r, op) / max(fastest_added(r, acc), 1e-9))
                print(f"{n:>5} {size:>5} {op:>10} {median(r[op + '_off']) * 1e3:8.3f} {ours * 1e3:9.3f} "
                      f"{theirs * 1e3:9.3f} {ratio:6.2f}")
    print(f"debug mode: worst ratio of added time, clusterdoc / Accelerate = {worst:.2f} (target <= 0.5)")
    print(f"  (the same from each side's fastest block instead of paired medians: {worst_fastest:.2f})")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
