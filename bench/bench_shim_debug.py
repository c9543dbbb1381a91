"""Debug-mode cost per collective: clusterdoc's check against Accelerate's debug mode, same run.

Added time = (op with debug) - (op without), per op: each round times a block of ops without and a
block with debug mode back to back (alternating which goes first), and the figure is the median over
rounds of that paired difference (robust to the machine's noise in either block, which on 2 shared
cores is as large as the effect at 4 MiB), for all_reduce
(Accelerate: accelerate.utils.reduce) and broadcast (accelerate.utils.broadcast) at 4 KiB and 4 MiB
on 2 and 4 gloo ranks. Second anchor: torch's own TORCH_DISTRIBUTED_DEBUG=DETAIL (a ProcessGroupWrapper
that compares collective fingerprints through a gloo helper group before each op: the built-in a user would
pick instead), timed on a gloo group made with the DETAIL debug level against the same op on the plain
default group. Targets: ours <= 0.25 x Accelerate's added time and <= 0.5 x DETAIL's, at every cell.
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

    import os

    os.environ["CLUSTERDOC_HANG_TIMEOUT"] = "0"  # no watchdog thread waking up during the timings
    shim.init()
    dist.set_debug_level(dist.DebugLevel.DETAIL)  # groups made now get torch's ProcessGroupWrapper
    detail_group = dist.new_group(backend="gloo")
    dist.set_debug_level(dist.DebugLevel.OFF)
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
            "detail_reduce": lambda: dist.all_reduce(t),
            "detail_broadcast": lambda: dist.broadcast(t, src=0),
        }
        on_detail = {"detail_reduce": lambda: dist.all_reduce(t, group=detail_group),
                     "detail_broadcast": lambda: dist.broadcast(t, src=0, group=detail_group)}
        def timed_on(name, fn):
            if name.startswith("acc"):
                state.debug = True
                on = timed(fn)
                state.debug = False
            elif name.startswith("detail"):
                on = timed(on_detail[name])
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
    print(f"{'ranks':>5} {'size':>5} {'op':>10} {'base ms':>8} {'ours +ms':>9} {'accel +ms':>9} {'ratio':>6} "
          f"{'DETAIL +ms':>10} {'ratio':>6}")
    worst = worst_fastest = worst_detail = 0.0
    for n in [int(x) for x in args.ranks.split(",")]:
        out = run_ranks(python, [__file__, "--worker", str(args.rounds), *map(str, iters)], n)
        res = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
        for size, r in res.items():
            for op, acc, det in (("all_reduce", "acc_reduce", "detail_reduce"),
                                 ("broadcast", "acc_broadcast", "detail_broadcast")):
                ours, theirs, detail = added(r, op), added(r, acc), added(r, det)
                ratio = ours / theirs if theirs > 0 else float("inf")
                ratio_detail = ours / detail if detail > 0 else float("inf")
                worst = max(worst, ratio)
                worst_detail = max(worst_detail, ratio_detail)
                worst_fastest = max(worst_fastest, fastest_added(r, op) / max(fastest_added(r, acc), 1e-9))
                print(f"{n:>5} {size:>5} {op:>10} {median(r[op + '_off']) * 1e3:8.3f} {ours * 1e3:9.3f} "
                      f"{theirs * 1e3:9.3f} {ratio:6.2f} {detail * 1e3:10.3f} {ratio_detail:6.2f}")
    print(f"debug mode: worst ratio of added time, clusterdoc / Accelerate = {worst:.2f} (target <= 0.25)")
    print(f"debug mode: worst ratio of added time, clusterdoc / TORCH_DISTRIBUTED_DEBUG=DETAIL = {worst_detail:.2f} "
          "(target <= 0.5)")
    print(f"  (the same from each side's fastest block instead of paired medians: {worst_fastest:.2f})")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
