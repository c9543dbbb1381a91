"""Failure: only one rank runs out of memory above some batch size (uneven data, a bigger GPU elsewhere).

    clusterdoc submit --nodes 2 jobs/fail_oom_one_rank.py --batch-size 64 --fits 20
        -> the shim's find_executable_batch_size: both ranks retry and end on the same batch (16)
    clusterdoc submit --nodes 2 --oom-retry batch-size jobs/fail_oom_one_rank.py --no-shim-retry --batch-size 64 --fits 20
        -> the rank dies of OOM; clusterdoc submit re-launches the job with --batch-size 32, then 16

The OOM is real: rank --oom-rank asks the CPU allocator for a tensor larger than the machine's memory
when the batch exceeds --fits, and torch raises its own out-of-memory error.
"""

import argparse

import torch
import torch.distributed as dist

from clusterdoc import shim

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--fits", type=int, default=20, help="largest batch that fits on --oom-rank")
p.add_argument("--oom-rank", type=int, default=1)
p.add_argument("--no-shim-retry", action="store_true", help="let the rank die (for clusterdoc submit --oom-retry)")
args = p.parse_args()

env = shim.init()
logger = shim.get_logger(__name__)


def step(batch_size):
    """The memory-hungry part (forward/backward). No collective in here: a rank that ran out of memory
    never reaches it, and the others would wait in it; the shim's agreement is the only collective."""
    if env.rank == args.oom_rank and batch_size > args.fits:
        torch.empty(1 << 42, dtype=torch.uint8)  # 4 TiB: the allocator refuses it
    return torch.ones(batch_size, 8).sum()


if args.no_shim_retry:
    used = args.batch_size
    total = step(used)
else:
    used = shim.find_executable_batch_size(starting_batch_size=args.batch_size, factor=0.5)(
        lambda b: (b, step(b)))()
    used, total = used
dist.all_reduce(total)  # the ranks meet again: with different batch sizes the sum would show it
logger.info(f"trained with batch size {used}", main_process_only=False, in_order=True)
