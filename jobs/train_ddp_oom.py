"""Example: DDP training whose batch size is found by shim.find_executable_batch_size, with collectives inside.

    clusterdoc submit --nodes 2 jobs/train_ddp_oom.py                 # rank 1 fits 48: both end on 45
    clusterdoc submit --nodes 4 jobs/train_ddp_oom.py --fits 100 --oom-at backward
    torchrun --nproc-per-node 2 jobs/train_ddp_oom.py                 # works without clusterdoc submit too

Only rank --oom-rank runs out of memory, above --fits, at --oom-at: in its forward (its peers are already
in backward's gradient all_reduce), in its backward (after some gradient buckets went out), or after its
optimizer step (its peers are in the next forward). Every step also all_reduces the loss for the log. The
shim's retry stops every rank where it is, brings the process group to the same point, and all ranks retry
with the same smaller batch; at the end they print the same batch size and the same parameter checksum.
The OOM is real: the rank asks the CPU allocator for a tensor larger than the machine's memory.
"""

import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from clusterdoc import shim

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--batch-size", type=int, default=256, help="the starting batch size")
p.add_argument("--fits", type=int, default=48, help="largest batch that fits on --oom-rank")
p.add_argument("--oom-rank", type=int, default=1)
p.add_argument("--oom-at", choices=["forward", "backward", "step"], default="forward")
p.add_argument("--steps", type=int, default=3, help="training steps per attempt")
args = p.parse_args()

env = shim.init()
logger = shim.get_logger(__name__)


def allocate(batch_size, where):
    """Activation memory that grows with the batch: more than the machine has above --fits on --oom-rank."""
    if env.rank == args.oom_rank and where == args.oom_at and batch_size > args.fits:
        torch.empty(1 << 42, dtype=torch.uint8)  # 4 TiB: the CPU allocator refuses, torch raises its OOM


class Activations(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, batch_size):
        ctx.batch_size = batch_size
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        allocate(ctx.batch_size, "backward")
        return grad, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.mid, self.out = nn.Linear(16, 64), nn.Linear(64, 64), nn.Linear(64, 1)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        allocate(x.shape[0], "forward")
        h = Activations.apply(h, x.shape[0])
        return self.out(torch.tanh(self.mid(h)))


torch.manual_seed(0)
model = DDP(Net(), bucket_cap_mb=0.01)  # small buckets: several gradient all_reduces per backward


@shim.find_executable_batch_size(starting_batch_size=args.batch_size)
def train(batch_size):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)  # made here: an aborted attempt leaves no state in it
    gen = torch.Generator().manual_seed(env.rank)
    for step in range(args.steps):
        x = torch.randn(batch_size, 16, generator=gen)
        y = x.sum(dim=1, keepdim=True) / 4
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        allocate(batch_size, "step")
        mean = loss.detach().clone()
        dist.all_reduce(mean)  # a plain collective every step, as a training loop logging its loss has
        logger.info(f"batch {batch_size} step {step}: loss {mean.item() / env.world_size:.4f}")
    return batch_size


used = train()
checksum = sum(float(q.detach().double().sum()) for q in model.parameters())
logger.info(f"trained with batch size {used}, parameter checksum {checksum:.10f}", main_process_only=False,
            in_order=True)
