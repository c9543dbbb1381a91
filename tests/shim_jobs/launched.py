"""A job for the real launchers (torchrun, accelerate launch, srun, mpirun, deepspeed): `python launched.py SCENARIO`.

  all       shim.init, an all_reduce, in-order logging, trigger sync, OOM retry; then `RESULT {...}` per rank
  mismatch  rank 1 passes another shape to an all_reduce (run with CLUSTERDOC_DEBUG=1): every rank must raise
  home      as `all`, but each rank reads its own HOME (a home not shared between nodes, planted per rank)

Nothing here sets a rank variable: the launcher does.
"""

import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")


def out(**kw):
    sys.stdout.write("RESULT " + json.dumps(kw) + "\n")
    sys.stdout.flush()


def scenario_all():
    import torch
    import torch.distributed as dist

    from clusterdoc import shim

    env = shim.init()
    t = torch.tensor([env.rank + 1.0])
    dist.all_reduce(t)
    log = shim.get_logger("launched", log_level="INFO")
    for i in range(2):
        log.info(f"in-order message {i} from rank {env.rank}", main_process_only=False, in_order=True)
    seen = None
    for step in range(10):
        if env.rank == env.world_size - 1 and step == 2:
            shim.set_trigger()
        if shim.check_trigger():
            seen = step
            break

    @shim.find_executable_batch_size(starting_batch_size=256, factor=0.5)
    def train(batch_size):
        if env.rank == env.world_size - 1 and batch_size > 64:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return batch_size

    out(rank=env.rank, world=env.world_size, launcher=env.launcher, sum=t.item(), trigger=seen, batch=train(),
        watch=shim.hang_watch_enabled(), secret=bool(os.environ.get("CLUSTERDOC_JOB_SECRET")))


def scenario_mismatch():
    import torch
    import torch.distributed as dist

    from clusterdoc import shim

    env = shim.init()
    t = torch.ones(4 + (env.rank == 1), 3)
    dist.all_reduce(t)  # debug mode raises here on every rank, naming both shapes
    out(rank=env.rank, reduced=True)


def scenario_home():
    rank = os.environ.get("RANK") or os.environ.get("PMI_RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or "0"
    os.environ["HOME"] = os.path.join(os.environ["HOME"], f"node{rank}")
    scenario_all()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--local_rank")]  # deepspeed's launcher adds it
    globals()["scenario_" + args[0]]()
