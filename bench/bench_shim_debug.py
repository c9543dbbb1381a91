"""Debug-mode cost per collective: clusterdoc's check against Accelerate's debug mode and against torch's
TORCH_DISTRIBUTED_DEBUG=DETAIL, in the same run.

Cells: all_reduce (Accelerate: accelerate.utils.reduce) and broadcast (accelerate.utils.broadcast), 4 KiB
and 4 MiB, on 2 and 4 gloo ranks. DETAIL: a gloo group made with the DETAIL debug level (torch's
ProcessGroupWrapper, which compares collective fingerprints through a gloo helper group before each op)
against the same op on the plain default group.

Design (paired blocks): a round times, back to back, one block of `iters` ops in each variant: without any
debug mode (off), ours (side channel), ours on the collective fallback (the pre-side-channel design, for
before/after), Accelerate's, DETAIL's; the order rotates from round to round. Added time of a variant in a
round = its block minus that round's off block; a cell's figure is the median over rounds, and its ratio
ours/Accelerate (ours/DETAIL) is the ratio of those medians. `--repeat N` starts the whole job N times and
prints, per cell, min/median/max of the ratios over the repeats, then each repeat's worst cell.
Targets: ours <= 0.25 x Accelerate's added time and <= 0.5 x DETAIL's, at every cell, in every repeat.
Usage: python bench/bench_shim_debug.py [--ranks 2,4] [--rounds 21] [--repeat 3] [--quick]
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))

VARIANTS = ("off", "ours", "ours_collective", "accelerate", "detail")
CELLS = [(size, op) for size in ("4KiB", "4MiB") for op in ("all_reduce", "broadcast")]


def worker(rounds, iters_small, iters_big):
    import torch
    import torch.distributed as dist
    from accelerate import PartialState
    from accelerate.utils import broadcast as acc_broadcast
    from accelerate.utils import reduce as acc_reduce

    from clusterdoc import shim
    from clusterdoc.shim import exchange

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
        for op in ("all_reduce", "broadcast"):
            if op == "all_reduce":
                plain = lambda: dist.all_reduce(t)  # noqa: E731
                acc = lambda: acc_reduce(t, reduction="sum")  # noqa: E731
                detail = lambda: dist.all_reduce(t, group=detail_group)  # noqa: E731
            else:
                plain = lambda: dist.broadcast(t, src=0)  # noqa: E731
                acc = lambda: acc_broadcast(t, from_process=0)  # noqa: E731
                detail = lambda: dist.broadcast(t, src=0, group=detail_group)  # noqa: E731

            def timed(fn):
                fn()  # warm-up (sets up debug mode's channel on first use), also lines the ranks up
                dist.barrier()
                start = time.perf_counter()
                for _ in range(iters):
                    fn()
                return (time.perf_counter() - start) / iters

            def block(variant):
                if variant == "off":
                    return timed(plain)
                if variant == "detail":
                    return timed(detail)
                if variant == "accelerate":
                    state.debug = True
                    try:
                        return timed(acc)
                    finally:
                        state.debug = False
                exchange.SIDE_CHANNEL = variant == "ours"
                shim.enable_debug()
                try:
                    return timed(plain)
                finally:
                    shim.disable_debug()
                    exchange.SIDE_CHANNEL = True

            samples = {v: [] for v in VARIANTS}
            for round_no in range(rounds):
                k = round_no % len(VARIANTS)
                for variant in VARIANTS[k:] + VARIANTS[:k]:
                    samples[variant].append(block(variant))
            results[f"{size_name} {op}"] = samples
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(results), flush=True)
    dist.barrier()


def added(samples, variant):
    """Median over rounds of (this variant's block) - (the same round's block without debug mode)."""
    return median(v - off for v, off in zip(samples[variant], samples["off"]))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    from _bench_common import bench_python, run_ranks

    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--repeat", type=int, default=1, help="start the whole job this many times")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (development)")
    args = ap.parse_args()
    iters = (20, 3) if args.quick else (50, 40)
    python = bench_python()
    ranks = [int(x) for x in args.ranks.split(",")]
    table = {}  # (ranks, cell) -> list over repeats of a dict of figures
    print(f"{args.repeat} repeat(s), {args.rounds} rounds, {iters[0]}/{iters[1]} ops per block (4 KiB/4 MiB); "
          f"load average at start: {load()}")
    print(f"{'rep':>3} {'ranks':>5} {'cell':>15} {'off ms':>7} {'ours +ms':>9} {'before +ms':>10} {'accel +ms':>9} "
          f"{'DETAIL +ms':>10} {'/accel':>7} {'/DETAIL':>7}")
    for rep in range(args.repeat):
        for n in ranks:
            out = run_ranks(python, [__file__, "--worker", str(args.rounds), *map(str, iters)], n)
            res = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
            for cell, r in res.items():
                f = {v: added(r, v) for v in VARIANTS[1:]}
                f["off"] = median(r["off"])
                f["r_acc"] = f["ours"] / f["accelerate"] if f["accelerate"] > 0 else float("inf")
                f["r_det"] = f["ours"] / f["detail"] if f["detail"] > 0 else float("inf")
                table.setdefault((n, cell), []).append(f)
                print(f"{rep + 1:>3} {n:>5} {cell:>15} {f['off'] * 1e3:7.3f} {f['ours'] * 1e3:9.3f} "
                      f"{f['ours_collective'] * 1e3:10.3f} {f['accelerate'] * 1e3:9.3f} {f['detail'] * 1e3:10.3f} "
                      f"{f['r_acc']:7.2f} {f['r_det']:7.2f}", flush=True)
        print(f"    load average after repeat {rep + 1}: {load()}", flush=True)

    def mmm(values):
        return f"{min(values):6.2f} {median(values):6.2f} {max(values):6.2f}"

    print(f"\nper cell over {args.repeat} repeat(s): min median max")
    print(f"{'ranks':>5} {'cell':>15} {'ours +ms (median)':>18} {'ours/Accelerate':>22} {'ours/DETAIL':>22}")
    for (n, cell), fs in table.items():
        print(f"{n:>5} {cell:>15} {median(f['ours'] for f in fs) * 1e3:18.3f} {mmm([f['r_acc'] for f in fs]):>22} "
              f"{mmm([f['r_det'] for f in fs]):>22}")
    held = True
    for rep in range(args.repeat):
        worst_acc = max(((fs[rep]["r_acc"], key) for key, fs in table.items()))
        worst_det = max(((fs[rep]["r_det"], key) for key, fs in table.items()))
        ok = worst_acc[0] <= 0.25 and worst_det[0] <= 0.5
        held &= ok
        print(f"repeat {rep + 1}: worst ours/Accelerate {worst_acc[0]:.2f} ({worst_acc[1][0]} ranks {worst_acc[1][1]}), "
              f"worst ours/DETAIL {worst_det[0]:.2f} ({worst_det[1][0]} ranks {worst_det[1][1]}): "
              f"{'target met' if ok else 'target NOT met'}")
    print(f"targets (<= 0.25 x Accelerate, <= 0.5 x DETAIL at every cell) held in every repeat: {'yes' if held else 'no'}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
