"""Example: a small model trained with DistributedDataParallel, using the clusterdoc shim.

    clusterdoc submit --nodes 4 jobs/train_ddp.py --epochs 3 --batch-size 32
    torchrun --nproc-per-node 2 jobs/train_ddp.py          # works without clusterdoc submit too

gloo on CPU, NCCL on GPUs (shim.init() chooses). Shows the shim's features:
- shim.get_logger: rank-tagged messages, rank 0 only by default, all ranks in rank order with in_order=True;
- shim.find_executable_batch_size: on out-of-memory every rank retries with the same smaller batch,
  keeping the effective batch with gradient accumulation;
- shim.set_trigger / check_trigger: any rank reaching --target-loss stops every rank at the same step.
The data is synthetic (a fixed random linear map plus noise), so the job needs no download.
"""

import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from clusterdoc import shim

logger = shim.get_logger(__name__)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32, help="per-rank batch (the starting size on OOM)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--samples", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--target-loss", type=float, default=0.0, help="stop every rank once a rank reaches it (0: never)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def make_data(samples: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)  # the same data on every rank; the sampler splits it
    x = torch.randn(samples, 16, generator=g)
    w = torch.randn(16, 1, generator=g)
    y = x @ w / 4 + 0.01 * torch.randn(samples, 1, generator=g)  # unit-ish variance: a stable lr
    return TensorDataset(x, y)


def main():
    args = parse_args()
    env = shim.init()  # idempotent: a no-op when clusterdoc.run already called it
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    torch.manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(16, args.hidden), nn.Tanh(), nn.Linear(args.hidden, 1)).to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    data = make_data(args.samples, args.seed)
    logger.info(f"training on {env.world_size} ranks ({dist.get_backend()}), {args.samples} samples, "
                f"per-rank batch {args.batch_size}, effective batch {args.batch_size * env.world_size}")

    @shim.find_executable_batch_size(starting_batch_size=args.batch_size)
    def train(batch_size):
        sampler = DistributedSampler(data, num_replicas=env.world_size, rank=env.rank, shuffle=True, seed=args.seed)
        loader = DataLoader(data, batch_size=batch_size, sampler=sampler, drop_last=True)
        opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
        loss = torch.tensor(float("nan"))
        step = 0
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                opt.zero_grad()
                loss = nn.functional.mse_loss(ddp(x), y)
                loss.backward()
                opt.step()
                step += 1
                if args.target_loss and loss.item() < args.target_loss:
                    shim.set_trigger()
                if shim.check_trigger():  # True on every rank at the same step
                    logger.info(f"early stop at epoch {epoch} step {step}: a rank reached loss < {args.target_loss}")
                    return step, loss.item()
            logger.info(f"epoch {epoch}: loss {loss.item():.4f}")
        return step, loss.item()

    steps, final = train()
    logger.info(f"done after {steps} steps, final loss {final:.4f}", main_process_only=False, in_order=True)


if __name__ == "__main__":
    main()
