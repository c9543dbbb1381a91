"""Failure: ranks call broadcast with different shapes (an off-by-one in the data split, say).

    clusterdoc submit --nodes 2 --debug jobs/fail_shape_mismatch.py

Plain torch.distributed hangs or corrupts memory here; with --debug (the shim's debug mode) every
rank raises DistributedOperationException within seconds, naming the operation and each rank's shape.
"""

import torch
import torch.distributed as dist

from clusterdoc import shim

env = shim.init()
logger = shim.get_logger(__name__)
t = torch.zeros(4 + env.rank, 8)  # rank r has 4 + r rows
logger.info(f"broadcasting a tensor of shape {tuple(t.shape)}", main_process_only=False)
dist.broadcast(t, src=0)
logger.info("broadcast returned (debug mode was off, or the shapes matched)", main_process_only=False)
