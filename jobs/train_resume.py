"""A DDP training job that checkpoints every K steps and resumes from its checkpoint: what `submit --retries`
restarts after a node or the scheduler ended an attempt (docs/why.md).

    clusterdoc submit --nodes 4 --retries 1 jobs/train_resume.py --steps 40 --every 5 --ckpt ckpt

On a restart clusterdoc sets TORCHELASTIC_RESTART_COUNT (1, 2, ...) and CLUSTERDOC_PREVIOUS_ATTEMPT (the last
attempt's folder); the script needs only its own checkpoint. `--fail KIND --fail-rank R --fail-at S` plants a
failure for the tests: exception, oom, skip (a skipped collective), cuda (a CUDA-style error).
"""

import argparse
import os
import signal
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

from clusterdoc import shim

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=40)
p.add_argument("--every", type=int, default=5, help="checkpoint every K steps")
p.add_argument("--ckpt", default="ckpt", help="checkpoint folder (shared by every attempt)")
p.add_argument("--step-time", type=float, default=0.1, help="seconds per step")
p.add_argument("--print-steps", action="store_true", help="rank 0 prints every step it completes")
p.add_argument("--fail", choices=["exception", "oom", "skip", "cuda"], default=None)
p.add_argument("--fail-rank", type=int, default=2)
p.add_argument("--fail-at", type=int, default=5)
args = p.parse_args()

env = shim.init()
rank = env.rank
ckpt = Path(args.ckpt) / "ckpt.pt"
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = 0
restarts = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
if ckpt.exists():
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    step = state["step"]
    print(
        f"rank {rank}: resumed from step {step} (restart {restarts}, previous attempt "
        f"{os.environ.get('CLUSTERDOC_PREVIOUS_ATTEMPT')})",
        flush=True,
    )


def save(step: int) -> None:
    if rank == 0:
        Path(args.ckpt).mkdir(parents=True, exist_ok=True)
        tmp = ckpt.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
        os.replace(tmp, ckpt)  # whole or not at all
        print(f"rank 0: checkpoint at step {step}", flush=True)


stop = {"signal": False}
signal.signal(signal.SIGUSR1, lambda *a: stop.update(signal=True))  # Slurm's warning before the time limit

ddp = torch.nn.parallel.DistributedDataParallel(model)
torch.manual_seed(rank)
executed = 0
while step < args.steps:
    if args.fail and rank == args.fail_rank and step == args.fail_at and restarts == 0:
        if args.fail == "exception":
            raise ValueError(f"bad sample at step {step}")
        if args.fail == "oom":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)")
        if args.fail == "cuda":
            raise RuntimeError(
                "CUDA error: unspecified launch failure\nCUDA kernel errors might be asynchronously "
                "reported at some other API call, so the stacktrace below might be incorrect."
            )
        if args.fail == "skip":
            dist.barrier()  # the others are in the step's all_reduce
    x = torch.randn(16, 8)
    loss = ddp(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    step += 1
    executed += 1
    if args.print_steps and rank == 0:
        print(f"rank 0: step {step}", flush=True)
    time.sleep(args.step_time)
    if step % args.every == 0:
        save(step)
    flag = torch.tensor([1.0 if stop["signal"] else 0.0])
    dist.all_reduce(flag)
    if flag.item() > 0:  # any rank got the warning: every rank checkpoints and leaves, to be requeued
        save(step)
        print(f"rank {rank}: stopping at step {step} for the requeue", flush=True)
        sys.exit(0)
print(f"rank {rank}: done after {step} steps ({executed} executed in this attempt)", flush=True)
