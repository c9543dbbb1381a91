"""OOM retry: the search's attempts, the gate's cost per training step, the time from an OOM to the retry.

1. Search: attempts and batch found over a sweep of (start, limit) pairs. A simulated step runs out of
   memory above `limit`. Anchor: Accelerate's find_executable_batch_size (0.9 back-off), run in the same
   process. Targets: with a probe, >= 98% of the largest batch that fits in at most half of Accelerate's
   mean attempts; without a probe at factor 0.9, the same attempts as Accelerate on every pair.
2. Step: the added time per training step of jobs/train_ddp.py's inner loop (its DataLoader, DDP, batch 32,
   SGD, check_trigger; as run with --target-loss 0) inside a decorated function when nothing fails. Inside one
   attempt, neighbouring steps run with the gate on and off, which first drawn at random for each pair (the
   same draws on every rank, from a seed drawn afresh for each run and printed: a fixed order can line up with
   something periodic in the loop, an epoch's first step or a collection, and read it as the gate's cost in
   every run alike), the main thread of each rank bound to one core. The figure is the median of the paired
   differences (a shift estimate that a step hit by a timer interrupt or by the other rank's scheduling does
   not move; the 80 % trimmed mean it replaced read the A/A control below with twice the spread at 2 ranks),
   as a share of the anchor: the median wall step without the gate, measured in the same run. Each rank count
   runs `--repeat` times; min/median/max over runs, in wall time, the process's CPU time and the main thread's
   CPU time. Beside each, an A/A control: half as many pairs more, both steps without the gate, through the
   same arithmetic: what the method reads when there is nothing to find (its spread is the measurement's
   resolution at that rank count). Target: <= 1 % in every run, judged in wall time where its control stays
   within half the target; where it does not (4 ranks on 2 cores: the wall step is the scheduler's, its
   control reads up to 2.5 % with nothing to find), in the main thread's CPU time, where the gate's work runs
   (it never waits: what it adds to the thread's CPU is what it adds to the step), still as a share of the
   wall step. Also printed: the gate's own cost per collective (around a function that does nothing) and the
   meeting of one successful attempt (the listener thread and the store round trips, once per call).
3. Retry: from the OOM to the last rank starting the next attempt (tests/shim_jobs/job.py oom_ddp, rank 1 in
   its forward while the others are in DDP's all_reduce), 4 ranks. Target: <= 2 s.
Usage: python bench/bench_shim_oom.py [--part search,step,retry] [--pairs 5000] [--repeat 3] [--ranks 1,2,4] [--retry-runs 3]
(1 rank: the gate's own cost per step, with no other rank's noise in the step)
"""
import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

STARTS = (128, 256, 512, 1024, 2048, 4096)
# limit = start / 2**u, u = 0, 0.5, ..., 9: log-uniform, from "fits at once" to 512x too big
FRACTIONS = tuple(2 ** (-k / 2) for k in range(19))


def worker():
    import logging

    from accelerate.utils import find_executable_batch_size as acc_find

    from clusterdoc.shim import find_executable_batch_size

    logging.disable(logging.WARNING)
    import gc
    gc.collect = lambda *a: 0  # both sides collect on every attempt; only the counts matter here

    class OOM(RuntimeError):
        pass

    rows = []
    for start in STARTS:
        for frac in FRACTIONS:
            limit = max(1, int(start * frac))
            counts = {"accelerate": 0, "ours_plain": 0, "ours_probe": 0}
            found = {}

            def make(key):
                def step(bs, *rest):
                    counts[key] += 1
                    if bs > limit:
                        raise OOM("CUDA out of memory. Tried to allocate 1.00 GiB")
                    return bs
                return step

            found["accelerate"] = acc_find(make("accelerate"), starting_batch_size=start)()
            found["ours_plain"] = find_executable_batch_size(make("ours_plain"), starting_batch_size=start,
                                                             factor=0.9)()
            step = make("ours_probe")
            found["ours_probe"] = find_executable_batch_size(step, starting_batch_size=start, probe=step)()
            rows.append({"start": start, "limit": limit, "counts": counts, "found": found})
    print("RESULT " + json.dumps(rows), flush=True)


def step_worker(pairs, seed, warmup=50):
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler

    from clusterdoc import shim
    from clusterdoc.shim import settle, track
    from clusterdoc.shim.attempt import Gate

    os.environ["CLUSTERDOC_HANG_TIMEOUT"] = "0"
    env = shim.init()
    # the main thread on one core per rank: no migrations between the paired steps (gloo's threads, made by
    # init, stay free: bound to the same core they cost the step 2.5x and its noise with it)
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[env.rank % len(os.sched_getaffinity(0))]})
    torch.set_num_threads(1)
    torch.manual_seed(0)
    train_ddp = _load_job("train_ddp")
    ddp = DDP(nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1)))  # train_ddp.py's model and data
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = train_ddp.make_data(2048, 0)
    sampler = DistributedSampler(data, num_replicas=env.world_size, rank=env.rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=32, sampler=sampler, drop_last=True)
    device = torch.device("cpu")

    def batches():
        for epoch in itertools.count():
            sampler.set_epoch(epoch)
            yield from loader

    it = batches()

    def step():  # one pass of train_ddp.py's inner loop (--target-loss 0: its loss check costs nothing)
        start, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
        x, y = next(it)
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        shim.check_trigger()
        return time.perf_counter() - start, time.process_time() - cpu, time.thread_time() - main

    @shim.find_executable_batch_size(starting_batch_size=32)
    def measure(batch_size):
        gate = track.GATE or Gate()  # 1 rank: no meeting, the gate alone (no cross-rank noise)
        for _ in range(warmup):
            step()
        on, off = [], []
        dist.barrier()
        order = random.Random(seed)  # the same draws on every rank (seed from argv): they switch the gate together
        for _ in range(pairs):  # neighbouring steps, gate on and off, which first at random
            for gated in (True, False) if order.random() < 0.5 else (False, True):
                track.GATE = gate if gated else None
                (on if gated else off).append(step())
        control = []  # the same pairing with the gate off in both steps: what noise alone looks like
        for _ in range(pairs // 2):
            track.GATE = None
            a, b = step(), step()
            control.append((a, b) if order.random() < 0.5 else (b, a))
        track.GATE = gate
        return on, off, control

    on, off, control = measure()
    fixed = []
    for _ in range(7):  # the meeting of one successful attempt: listener thread, store round trips, join
        dist.barrier()
        start = time.perf_counter()
        meeting = settle.Meeting(Gate(), 60.0)
        meeting.settle(settle.OK, "")
        meeting.close()
        fixed.append(time.perf_counter() - start)
    if env.rank == 0:
        print("RESULT " + json.dumps({"on": on, "off": off, "control": control, "gate_us": gate_cost(),
                                      "fixed": fixed}), flush=True)
    dist.barrier()


def _load_job(name):
    """jobs/<name>.py as a module (jobs/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "jobs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def paired_ratios(runs, clock, first, second):
    """Per run: the median of the paired differences first - second on `clock` (0 wall, 1 process CPU, 2 the
    main thread's CPU), as a share of the run's median wall step without the gate; sorted."""
    return sorted(statistics.median(a[clock] - b[clock] for a, b in zip(first(r), second(r)))
                  / statistics.median(o[0] for o in r["off"]) for r in runs)


def gate_cost(calls=20000) -> float:
    """The gate's own work per collective (median of 7 runs): the wrapper with and without an active gate,
    around a function that does nothing."""
    import torch

    from clusterdoc.shim import track
    from clusterdoc.shim.attempt import Gate

    def noop(*args, **kwargs):
        return None

    wrapped, t, runs = track._wrap("all_reduce", noop, public=True), torch.ones(4), []
    for _ in range(7):
        track.GATE = None
        start = time.perf_counter()
        for _ in range(calls):
            wrapped(t)
        mid = time.perf_counter()
        track.GATE = Gate()
        for _ in range(calls):
            wrapped(t)
        end = time.perf_counter()
        runs.append(((end - mid) - (mid - start)) / calls * 1e6)
    track.GATE = None
    return statistics.median(runs)


def step_part(ranks, pairs, repeat):
    from _bench_common import run_ranks

    ok = True
    print(f"training steps of jobs/train_ddp.py, gate on and off in neighbouring steps, {pairs} pairs per run, "
          f"{repeat} runs; added per step = median of the paired differences on each clock (wall, process CPU, "
          "the main thread's CPU), as a share of the median wall step without the gate (the anchor, same run). "
          "Target <= 1 % in every run, in wall time where its A/A control stays within 0.5 %, else in the main "
          "thread's CPU time.")
    print(f"{'ranks':>5} {'clock':>5} {'step':>8}  {'added per step, min/median/max over runs':>44}")
    for n in ranks:
        runs, seeds = [], []
        for _ in range(repeat):
            seeds.append(random.SystemRandom().randrange(2**32))  # a fresh order each run: see the docstring
            out = run_ranks(sys.executable, [__file__, "--step-worker", str(pairs), str(seeds[-1])], n)
            runs.append(json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:]))
        judged, met = None, False
        wall = statistics.median(statistics.median(o[0] for o in r["off"]) for r in runs)
        for i, clock in ((0, "wall"), (1, "cpu"), (2, "main")):
            base = statistics.median(statistics.median(o[i] for o in r["off"]) for r in runs)
            ratios = paired_ratios(runs, i, lambda r: r["on"], lambda r: r["off"])
            floor = paired_ratios(runs, i, lambda r: [a for a, _ in r["control"]], lambda r: [b for _, b in r["control"]])
            # the clock that decides: wall time, unless its A/A control strays past half the target (then the
            # wall can tell nothing of 1 %: 4 ranks on 2 cores); then the main thread's CPU time, where the
            # wrapper's work runs (it never waits), as a share of the wall step
            if judged is None and (clock == "main" or clock == "wall" and max(map(abs, floor)) <= TARGET / 2):
                judged = clock
                met = ratios[-1] <= TARGET
                ok &= met
            print(f"{n:>5} {clock:>5} {base * 1e6:6.0f}us  "
                  + " / ".join(f"{r * 100:+.2f}%" for r in (ratios[0], statistics.median(ratios), ratios[-1]))
                  + f"  ({ratios[0] * wall * 1e6:+.1f} .. {ratios[-1] * wall * 1e6:+.1f} us)"
                  + (f"  {'met' if met else 'MISSED'}" if judged == clock else "")
                  + "  A/A control " + " / ".join(f"{r * 100:+.2f}%" for r in (floor[0], statistics.median(floor),
                                                                              floor[-1])))
        gate = statistics.median(r["gate_us"] for r in runs)
        meet = statistics.median(statistics.median(r["fixed"]) for r in runs)
        print(f"{n:>5}  the gate alone {gate:.2f} us per collective (2 per step: the bucket and check_trigger's "
              f"all_reduce); the meeting of a successful attempt {meet * 1e3:.1f} ms (once per call); "
              f"seeds {' '.join(map(str, seeds))}")
    return ok


def retry_part(runs):
    sys.path.insert(0, str(ROOT))
    from tests.shim_helpers import run_ranks

    lat = []
    for _ in range(runs):
        outs = run_ranks("oom_ddp", "forward", "1:230", n=4, timeout=600)
        found = [res[0] for _, res, _ in outs]
        first = min(t for r in found for t in r["times"]["oom"])
        lat.append(max(r["times"]["start"][1] for r in found) - first)
    print(f"OOM to every rank retrying, 4 ranks (rank 1 in forward, the others in DDP's all_reduce): "
          f"min/median/max {min(lat):.2f}/{statistics.median(lat):.2f}/{max(lat):.2f} s over {runs} runs "
          f"(target <= 2 s: {'met' if max(lat) <= 2 else 'MISSED'})")
    return max(lat) <= 2


ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.01  # the gate's added time per step, as a share of the step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="search,step,retry")
    ap.add_argument("--pairs", type=int, default=5000, help="pairs of neighbouring steps per run")
    ap.add_argument("--repeat", type=int, default=3, help="runs per rank count")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--retry-runs", type=int, default=3)
    args = ap.parse_args()
    parts = args.part.split(",")
    ok = True
    if "search" in parts:
        search_part()
    if "step" in parts:
        ok &= step_part([int(x) for x in args.ranks.split(",")], args.pairs, args.repeat)
    if "retry" in parts:
        ok &= retry_part(args.retry_runs)
    print("oom: all timing targets met" if ok else "oom: a timing target was missed")


def search_part():
    from _bench_common import ROOT, bench_python

    out = subprocess.run([bench_python(), __file__, "--worker"], check=True, text=True, stdout=subprocess.PIPE,
                         env={"PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore", "PATH": "/usr/bin:/bin"}).stdout
    rows = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    acc = [r["counts"]["accelerate"] for r in rows]
    plain = [r["counts"]["ours_plain"] for r in rows]
    probe = [r["counts"]["ours_probe"] for r in rows]
    quality = [r["found"]["ours_probe"] / r["limit"] if r["limit"] <= r["start"] else 1.0 for r in rows]
    same = sum(a == p and r["found"]["accelerate"] == r["found"]["ours_plain"] for a, p, r in zip(acc, plain, rows))
    print(f"pairs: {len(rows)} (starts {STARTS[0]}..{STARTS[-1]}, limit = start / 2**u, u = 0, 0.5 .. 9)")
    print(f"Accelerate 0.9 back-off: mean attempts {statistics.mean(acc):.1f}, worst {max(acc)}")
    print(f"clusterdoc, no probe, factor 0.9: mean {statistics.mean(plain):.1f}, worst {max(plain)}; "
          f"same attempts and batch as Accelerate on {same}/{len(rows)} pairs")
    print(f"clusterdoc, probe search + 1 run: mean attempts {statistics.mean(probe):.1f}, worst {max(probe)}; "
          f"batch found >= {100 * min(quality):.1f}% of the largest that fits (mean {100 * statistics.mean(quality):.1f}%)")
    print(f"oom search: ratio of mean attempts, clusterdoc probe / Accelerate = "
          f"{statistics.mean(probe) / statistics.mean(acc):.2f} (target <= 0.5, quality >= 98%)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker()
    elif len(sys.argv) > 1 and sys.argv[1] == "--step-worker":
        step_worker(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
