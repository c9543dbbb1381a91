"""The campaign's training job: a tiny DDP model, a checkpoint every K steps (resumed on a new attempt), a line
per step on rank 0. The faults that are the code's own (an exception, a simulated torch OOM, an early exit 0,
os._exit(1)) are
its own acts, asked for by a file the campaign writes into --faults: `rank<R>.<act>` (or `all.<act>`) holding the step it is
due at, read before each step and after the last."""

import argparse
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

from clusterdoc import shim

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=12)
p.add_argument("--every", type=int, default=4)
p.add_argument("--ckpt", required=True)
p.add_argument("--faults", required=True)
p.add_argument("--step-time", type=float, default=0.2)
p.add_argument("--chatter", type=int, default=0, help="bytes of log every rank prints at each step (a real job's)")
args = p.parse_args()

env = shim.init()
rank = env.rank
ckpt = Path(args.ckpt) / "ckpt.pt"
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = 0
if ckpt.exists():
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    step = state["step"]
    print(f"rank {rank}: resumed from step {step}", flush=True)
print(f"rank {rank}: ready at step {step}", flush=True)
ddp = torch.nn.parallel.DistributedDataParallel(model)
restarts = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


def due(path: Path) -> bool:
    """The act the file asks for is due: it names the step from which on (the steps' count: after the last)."""
    try:
        return step >= int(path.read_text())
    except (OSError, ValueError):
        return False


def act() -> None:
    if restarts:  # the code's own faults are planted in the first attempt only
        return
    for what in ("exception", "oom", "exit0", "exit1", "cudaerror"):
        if any(due(Path(args.faults) / f"{who}.{what}") for who in (f"rank{rank}", "all")):
            if what == "exception":
                raise ValueError(f"campaign: bad batch at step {step}")
            if what == "cudaerror":  # the GPU fell off the bus (catalog.Xid79): CUDA's words for it
                raise torch.AcceleratorError(
                    "CUDA error: unspecified launch failure\nCUDA kernel errors might be asynchronously reported at "
                    "some other API call, so the stacktrace below might be incorrect.\nFor debugging consider "
                    "passing CUDA_LAUNCH_BLOCKING=1"
                )
            if what == "oom":
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)")
            print(f"rank {rank}: leaving early at step {step} ({what})", flush=True)
            if what == "exit1":
                os._exit(1)  # no exit record: the shim's atexit does not run
            sys.exit(0)


while step < args.steps:
    act()
    loss = ddp(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    step += 1
    print(f"rank {rank}: step {step}", flush=True)
    if args.chatter:
        print(f"rank {rank}: log " + "." * args.chatter, flush=True)
    time.sleep(args.step_time)
    if step % args.every == 0 and rank == 0:
        Path(args.ckpt).mkdir(parents=True, exist_ok=True)
        tmp = ckpt.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
        os.replace(tmp, ckpt)
        print(f"rank 0: checkpoint at step {step}", flush=True)
    dist.barrier()
act()
print(f"rank {rank}: done after {step} steps", flush=True)
