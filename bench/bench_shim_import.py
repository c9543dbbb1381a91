"""What importing clusterdoc.shim adds to `import torch` (target: <= 50 ms).

Measured in-process with time.perf_counter around the imports, fresh interpreter each time, best of N
(also the shim's import alone after torch). Usage: python bench/bench_shim_import.py [N]
"""
import subprocess
import sys

CODE = """
import time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
{extra}
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def run(extra, n):
    best = None
    for _ in range(n):
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", CODE.format(extra=extra)], check=True,
                             capture_output=True, text=True).stdout.split()
        pair = tuple(map(float, out))
        best = pair if best is None or sum(pair) < sum(best) else best
    return best


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch_only, _ = run("", n)
    torch_then, shim_import = run("import clusterdoc.shim", n)
    _, shim_used = run("from clusterdoc import shim; shim.get_logger('x'); shim.find_executable_batch_size", n)
    print(f"import torch: {torch_only * 1e3:.0f} ms; import clusterdoc.shim after it: {shim_import * 1e3:.1f} ms; "
          f"with get_logger + find_executable_batch_size loaded: {shim_used * 1e3:.1f} ms")
    print(f"shim import: ratio of added time to the 50 ms budget = {shim_import / 0.050:.2f} (target <= 1)")


if __name__ == "__main__":
    main()
