"""OOM batch-size search: attempts and batch found over a sweep of (start, limit) pairs.

A simulated step runs out of memory above `limit`. Anchor: Accelerate's find_executable_batch_size
(0.9 back-off), run in the same process. Targets: with a probe, >= 98% of the largest batch that
fits in at most half of Accelerate's mean attempts; without a probe at factor 0.9, the same attempts
as Accelerate on every pair. Usage: python bench/bench_shim_oom.py
"""
import json
import statistics
import subprocess
import sys
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


def main():
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
    else:
        main()
