"""Failure: one rank exits with a code while the others wait in a collective.

    clusterdoc submit --nodes 4 jobs/fail_exit_code.py --rank 2 --code 3

Without a launcher that watches every rank, ranks 0, 1 and 3 would wait in all_reduce until the
process-group timeout (10 minutes or more). clusterdoc submit stops them at once and reports
"rank 2 exited with code 3".
"""

import argparse
import sys

import torch
import torch.distributed as dist

from clusterdoc import shim

p = argparse.ArgumentParser()
p.add_argument("--rank", type=int, default=1, help="the rank that exits")
p.add_argument("--code", type=int, default=3, help="its exit code")
args = p.parse_args()

env = shim.init()
if env.rank == args.rank:
    print(f"rank {env.rank}: exiting with code {args.code}", file=sys.stderr)
    sys.exit(args.code)
t = torch.ones(1)
dist.all_reduce(t)  # never completes: rank args.rank is gone
print(f"rank {env.rank}: all_reduce returned {t.item()}")
