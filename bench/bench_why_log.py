"""Benchmark: `clusterdoc why JOB --log FILE` on a 1 GB log of a 1,000-rank job, against `grep -E` over the same file.

The log (made once, under .cache/bench-why/, kept out of git): torchrun's `[rankN]:` prefixes on a 1,000-rank
job's interleaved training lines (steps, losses, the ranks' NCCL INFO start-up, a UserWarning now and then), and
at its very end the failure: rank 417's CUDA out of memory traceback, then the other ranks' NCCL watchdog
timeouts and torchrun's ChildFailedError summary. `why --log` must read the whole of it (the end first, the rest
streamed: clusterdoc/why/logread.py) and name the cause: oom on rank 417. `grep -E` looks for the same signatures
(a traceback, an exception line, CUDA out of memory, the watchdog line, NCCL WARN, Slurm's CANCELLED, srun's
errors) over the same file, in the same run, alternating with why so that both see the same load and the same page
cache. Each is run --repeat times as a child process: wall time and peak memory (the child's ru_maxrss, from
wait4), min/median/max, and the ratio of the medians. Targets (issue 35): why within 2x of grep -E, peak memory
under 300 MB, the right verdict.

    .venv/bin/python bench/bench_why_log.py [--size-mb 1024] [--ranks 1000] [--repeat 3] [--log PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLUSTERDOC = [sys.executable, "-m", "clusterdoc.cli"] if not (ROOT / ".venv/bin/clusterdoc").exists() else [
    str(ROOT / ".venv/bin/clusterdoc")]
GREP = ["grep", "-E", r"Traceback \(most recent call last\)|[A-Za-z]+(Error|Exception): |CUDA out of memory|"
        r"Watchdog caught collective operation timeout|NCCL WARN|CANCELLED AT|srun: error:"]
OOM_RANK = 417
VERSION = "1"  # bump when the log's form changes: a log made by another version is made again


def body_lines(rng: random.Random, ranks: int, step: int) -> list[str]:
    """One training step's worth of interleaved lines (every 8th rank logs its loss, rank 0 its throughput)."""
    out = []
    for r in rng.sample(range(ranks), ranks // 8):
        out.append(f"[rank{r}]:[2026-11-27 10:{(step // 60) % 60:02d}:{step % 60:02d},{rng.randrange(1000):03d}]"
                   f"[train][INFO] - step {step}/200000 | loss {2.0 + rng.random():.4f} | lr 3.00e-04 | "
                   f"grad_norm {rng.random() * 2:.3f} | tokens/s {rng.randrange(9000, 12000)} | mem 61.3 GiB\n")
    out.append(f"[rank0]:[2026-11-27 10:00:00,000][train][INFO] - step {step}: {ranks * 4096} tokens, "
               f"MFU 41.{step % 10}%, data {rng.randrange(10, 99)} ms, step {rng.randrange(900, 999)} ms\n")
    if step % 997 == 0:
        out.append(f"[rank{rng.randrange(ranks)}]:/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py"
                   ":91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n")
    return out


def start_lines(ranks: int) -> list[str]:
    out = []
    for r in range(ranks):
        host = f"gpu-node{r // 8:03d}"
        out.append(f"[rank{r}]:{host}:{4000 + r}:{4000 + r} [{r % 8}] NCCL INFO cudaDriverVersion 12040\n")
        out.append(f"[rank{r}]:{host}:{4000 + r}:{4000 + r} [{r % 8}] NCCL INFO Bootstrap : Using ib0:10.1.{r // 8}"
                   f".{r % 8}<0>\n")
        out.append(f"[rank{r}]:{host}:{4000 + r}:{4100 + r} [{r % 8}] NCCL INFO comm 0x5581 rank {r} nRanks "
                   f"{ranks} nNodes {ranks // 8} localRanks 8 localRank {r % 8} MNNVL 0\n")
    return out


def failure_lines(ranks: int) -> list[str]:
    """The end: rank OOM_RANK runs out of memory in backward; the others time out in the next all_reduce."""
    r = OOM_RANK
    tb = [
        "Traceback (most recent call last):",
        '  File "/workspace/llm/train.py", line 412, in <module>',
        "    main()",
        '  File "/workspace/llm/train.py", line 388, in main',
        "    loss.backward()",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/_tensor.py", line 626, in backward',
        "    torch.autograd.backward(",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/autograd/__init__.py", line 347, in backward',
        "    _engine_run_backward(",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/autograd/graph.py", line 823, in _engine_run_backward',
        "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 1 has a total capacity of "
        "79.15 GiB of which 1.05 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in "
        "use. Of the allocated memory 74.12 GiB is allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but "
        "unallocated.",
    ]
    out = [f"[rank{r}]: {line}\n" for line in tb]
    for o in range(ranks):
        if o != r:
            out.append(
                f"[rank{o}]:[E1127 10:41:07.{o:06d} {4000 + o} ProcessGroupNCCL.cpp:632] [Rank {o}] Watchdog caught "
                "collective operation timeout: WorkNCCL(SeqNum=532341, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                "Timeout(ms)=600000) ran for 600050 milliseconds before timing out.\n"
            )
    out.append("E1127 10:41:09.123000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
               f"local_rank: 1 (pid: {4000 + r}) of binary: /usr/bin/python3\n")
    return out


def make_log(path: Path, size: int, ranks: int) -> None:
    stamp = path.with_suffix(".made")
    want = f"{VERSION} {size} {ranks}"
    if path.exists() and stamp.exists() and stamp.read_text() == want:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(35)
    tail = "".join(failure_lines(ranks)).encode()
    t = time.perf_counter()
    with open(path, "wb") as f:
        f.write("".join(start_lines(ranks)).encode())
        step = 1
        while f.tell() < size - len(tail):
            f.write("".join(line for s in range(step, step + 50) for line in body_lines(rng, ranks, s)).encode())
            step += 50
        f.write(tail)
    stamp.write_text(want)
    print(f"made {path}: {path.stat().st_size / 1e9:.2f} GB, {ranks} ranks, {step} steps "
          f"({time.perf_counter() - t:.0f} s)", flush=True)


def run_child(argv: list[str], out_path: str) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS in MB (the child's own ru_maxrss), exit code, and what it printed."""
    with open(out_path, "wb") as out:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, p.returncode, Path(out_path).read_text(errors="replace")


def stats(xs: list[float]) -> str:
    return f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--log", default=str(ROOT / ".cache" / "bench-why" / "job-1000.log"))
    ap.add_argument("--python", action="store_true", help="also time why once without grep (Python's bytes.find)")
    a = ap.parse_args()
    log = Path(a.log)
    make_log(log, a.size_mb << 20, a.ranks)
    size = log.stat().st_size
    out = f"/tmp/bench-why-{os.getpid()}.out"
    why_argv = [*CLUSTERDOC, "why", "4242", "--log", str(log), "--json"]
    grep_argv = [*GREP, str(log)]
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=False)  # the page cache, for both
    why_t, why_m, grep_t, grep_m = [], [], [], []
    verdict, read, grep_lines = None, None, 0
    for i in range(a.repeat):
        wall, rss, code, text = run_child(why_argv, out)
        why_t.append(wall)
        why_m.append(rss)
        try:
            doc = json.loads(text)
            verdict, read = doc.get("cause") or doc, doc.get("read")
        except ValueError:
            print(f"why printed no JSON (exit {code}):\n{text[-2000:]}")
            return 1
        wall, rss, code, _ = run_child(grep_argv, out)
        grep_t.append(wall)
        grep_m.append(rss)
        grep_lines = sum(1 for _ in open(out, "rb"))
        print(f"  run {i + 1}: why {why_t[-1]:.2f} s {why_m[-1]:.0f} MB; grep -E {grep_t[-1]:.2f} s "
              f"{grep_m[-1]:.0f} MB", flush=True)
    if a.python:
        no_grep = ("import sys; from clusterdoc.why import logread; from clusterdoc.cli import main\n"
                   "def none(f, n):\n    raise logread.GrepFailed('benchmark: Python only')\n    yield ''\n"
                   "logread._grep_lines = none; sys.exit(main())")
        wall, rss, code, text = run_child([sys.executable, "-c", no_grep, *why_argv[len(CLUSTERDOC):]], out)
        cause = (json.loads(text).get("cause") or {}) if text.startswith("{") else {}
        print(f"  without grep (Python's bytes.find, once): why {wall:.2f} s {rss:.0f} MB, verdict "
              f"{cause.get('category')} on ranks {cause.get('ranks')}", flush=True)
    os.unlink(out)
    ratio = statistics.median(why_t) / statistics.median(grep_t)
    cause = verdict or {}
    right = cause.get("category") == "oom" and cause.get("ranks") == [OOM_RANK]
    print(f"log: {log} ({size / 1e9:.2f} GB, {a.ranks} ranks, the failure in its last "
          f"{len(''.join(failure_lines(a.ranks))) / 1e3:.0f} KB)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"                       time s (min / median / max)   peak MB (min / median / max)")
    print(f"  clusterdoc why --log   {stats(why_t):<28}  {stats(why_m)}")
    print(f"  grep -E                {stats(grep_t):<28}  {stats(grep_m)}   ({grep_lines} lines matched)")
    print(f"  ratio (medians): why / grep = {ratio:.2f}x (target <= 2x: {'met' if ratio <= 2 else 'NOT met'}); "
          f"peak {max(why_m):.0f} MB (target < 300 MB: {'met' if max(why_m) < 300 else 'NOT met'})")
    print(f"  verdict: {cause.get('category')} on ranks {cause.get('ranks')}: {cause.get('headline')} "
          f"({'right' if right else 'WRONG: expected oom on rank %d' % OOM_RANK})")
    for r in read or []:
        print(f"  read: {r.get('summary')}")
    return 0 if right and max(why_m) < 300 else 1


if __name__ == "__main__":
    sys.exit(main())
