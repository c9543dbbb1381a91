"""Shared by the shim benchmarks: find (or make) the benchmark venv, start gloo ranks."""
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench_python() -> str:
    """The benchmark venv's python (Accelerate + transformers installed), created if missing."""
    explicit = os.environ.get("CLUSTERDOC_BENCH_PYTHON")
    if explicit:
        return explicit
    probe = "import accelerate, transformers"
    candidate = ROOT / ".venv-bench" / "bin" / "python"
    if candidate.exists() and subprocess.run([str(candidate), "-c", probe], capture_output=True).returncode == 0:
        return str(candidate)
    out = subprocess.run(["bash", str(ROOT / "bench" / "setup_bench_env.sh")], check=True,
                         stdout=subprocess.PIPE, text=True)
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(python, argv, n, timeout=900):
    """Run `python argv` as n torchrun-style ranks on loopback; return rank 0's stdout."""
    port = free_port()
    procs = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
        env.pop("CLUSTERDOC_DEBUG", None)
        env.pop("ACCELERATE_DEBUG_MODE", None)
        procs.append(subprocess.Popen([python, *argv], env=env, text=True, stdout=subprocess.PIPE,
                                      stderr=None if rank == 0 else subprocess.DEVNULL))
    outs = [p.communicate(timeout=timeout)[0] for p in procs]
    for rank, p in enumerate(procs):
        if p.returncode:
            sys.exit(f"rank {rank} failed with exit code {p.returncode}")
    return outs[0]
