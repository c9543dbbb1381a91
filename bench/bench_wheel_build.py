"""Benchmark: how long `clusterdoc build-wheel` takes for DeepSpeed's CUDA op (fused_adam, real nvcc) beside
its CPU ops (cpu_adam, utils), on this machine.

Each build is a fresh process and a fresh source tree (as a user runs it), from the cached 0.19.8 sdist, with
`-j` = the cores this process may use. Printed per build: the whole command's wall time, DeepSpeed's own
"deepspeed build time" (setup.py alone), and the CPU seconds (user+sys) of build-wheel and everything it ran
(compilers included), which depend far less than the wall times on the cores and on other work on the machine.
fused_adam is one .cu file: -j does not shorten its nvcc run, so its wall time is about its CPU time. The environment is scripts/cuda_venv.sh's (torch
2.15.0+cu132 and nvcc 13.2 from the registry; made on first use, ~5 GB). No target: a reference for users.

    .venv/bin/python bench/bench_wheel_build.py [--repeat 1] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = os.environ.get("CLUSTERDOC_CACHE") or str(REPO / ".cache")
BUILDS = [
    ("cpu_adam,utils (CPU ops)", "cpu_adam,utils", "8.0"),
    ("fused_adam (CUDA) for 8.0", "fused_adam", "8.0"),
    ("fused_adam (CUDA) for 8.0;9.0+PTX", "fused_adam", "8.0;9.0"),
]


def cuda_python() -> Path:
    out = subprocess.run(["bash", str(REPO / "scripts" / "cuda_venv.sh")], check=True, stdout=subprocess.PIPE,
                         text=True, cwd=REPO)
    return Path(out.stdout.strip().splitlines()[-1])


def build_once(python: Path, ops: str, arch_list: str, jobs: int) -> tuple[float, float, float]:
    """(wall s, DeepSpeed's setup.py s, CPU s of build-wheel and all it ran) of one build-wheel."""
    home = python.parent.parent / "cuda"
    env = dict(os.environ, CUDA_HOME=str(home), PATH=f"{home}/bin:{os.environ['PATH']}", PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory(prefix="bench-wheel-") as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        p = subprocess.run([str(python), "-m", "clusterdoc", "build-wheel", "--ops", ops, "--arch-list", arch_list,
                            "--jobs", str(jobs), "--out", out, "--cache", CACHE],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"build-wheel --ops {ops} --arch-list {arch_list} failed:\n{p.stdout[-3000:]}")
        log = Path(out, "build.log").read_text(errors="replace")
        m = re.search(r"deepspeed build time = ([\d.]+) secs", log)
        manifest = json.loads(Path(out, "clusterdoc-wheel.json").read_text())
        archs = "; ".join(f"{a['sass']} {a['ptx']}" for a in manifest.get("binary_archs", {}).values())
        print(f"   built: {archs or 'no device code'}", flush=True)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, float(m.group(1)) if m else float("nan"), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    python = cuda_python()
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} core(s) usable ({os.cpu_count()} on the machine), -j{args.jobs}, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start (other work on the machine slows the wall "
          "times, not the CPU seconds)")
    rows = []
    for label, ops, arch_list in BUILDS:
        runs = []
        for _ in range(args.repeat):
            print(f"== {label}", flush=True)
            runs.append(build_once(python, ops, arch_list, args.jobs))
        rows.append((label, *(statistics.median(r[i] for r in runs) for i in range(3))))
    print(f"\n{'build (median of %d)' % args.repeat:<40} {'wall s':>8} {'setup.py s':>11} {'CPU s':>8}")
    for label, wall, setup, cpu in rows:
        print(f"{label:<40} {wall:8.0f} {setup:11.0f} {cpu:8.0f}")


if __name__ == "__main__":
    main()
