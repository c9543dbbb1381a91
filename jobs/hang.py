"""Jobs that hang, one way each: what the hang watch (`clusterdoc submit --hang-timeout S`) explains.

    clusterdoc submit --nodes 4 --hang-timeout 20 jobs/hang.py --scenario skip --rank 1

Scenarios (the odd rank is --rank; the others do the ordinary thing):
  skip     the odd rank skips one all_reduce and goes on to a barrier
  order    ranks >= world/2 call all_reduce then broadcast, the others broadcast then all_reduce
  loop     the odd rank loops forever in Python outside any collective
  lock     the odd rank's main thread deadlocks on a lock another thread holds
  kill     the odd rank is killed with SIGKILL while the others wait in an all_reduce
  ddp      DDP training; the odd rank stalls in its forward while the others wait in backward's all_reduce
  first    the odd rank never reaches the job's first collective
  early    the odd rank ends its loop one all_reduce early (7 of 8: uneven data) and exits 0 (--freeze R: see help)
  late     as skip, and the next rank's watchdog is starved when the report is made: a thread holds the GIL in
           native code for --hold seconds from just before the stall is seen (a loaded node's late heartbeat)
  healthy  no hang: a few steps of all_reduce and barrier
"""
import argparse
import os
import signal
import threading
import time

import torch
import torch.distributed as dist

from clusterdoc import shim


def train_step(t):
    dist.all_reduce(t)
    return t


def skip(rank, odd):
    t = torch.ones(4096)
    for step in range(3):
        train_step(t)
    if rank != odd:
        train_step(t)          # the odd rank skips this one
    dist.barrier()


def order(rank, odd):
    t = torch.ones(1024)
    if rank < dist.get_world_size() // 2:
        dist.broadcast(t, src=0)
        dist.all_reduce(t)
    else:
        dist.all_reduce(t)
        dist.broadcast(t, src=0)


def loop(rank, odd):
    t = torch.ones(16)
    dist.all_reduce(t)
    if rank == odd:
        n = 0
        while True:            # never reaches the next collective
            n += 1
    dist.all_reduce(t)


def lock(rank, odd):
    t = torch.ones(16)
    dist.all_reduce(t)
    if rank == odd:
        a, b = threading.Lock(), threading.Lock()

        def other():
            with b:
                time.sleep(0.2)
                with a:
                    pass

        threading.Thread(target=other, name="loader", daemon=True).start()
        with a:
            time.sleep(0.1)
            with b:            # deadlock: `loader` holds b and waits for a
                pass
    dist.all_reduce(t)


def kill(rank, odd):
    t = torch.ones(4096)
    dist.all_reduce(t)
    if rank == odd:
        time.sleep(3.0)
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(t)


def ddp(rank, odd):
    from torch.nn.parallel import DistributedDataParallel as DDP

    # torch.optim imports dynamo and sympy on its first step: seconds on a busy machine, on one rank sooner
    # than another. Done here, before the ranks start waiting on each other.
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.0).step()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    for step in range(3):
        if rank == odd and step == 2:
            time.sleep(3600)   # stalls in its forward (a slow data loader, say)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def first(rank, odd):
    if rank == odd:
        time.sleep(3600)
    dist.all_reduce(torch.ones(8))


def late(rank, odd, hold=8.0):
    if rank == (odd + 1) % dist.get_world_size():
        import ctypes

        ahead = float(os.environ.get("CLUSTERDOC_HANG_TIMEOUT", "10")) - 2.0

        def starve():
            time.sleep(max(0.0, ahead))
            ctypes.PyDLL(None).sleep(int(hold))  # libc's sleep without releasing the GIL: no Python thread runs

        threading.Thread(target=starve, name="starve", daemon=True).start()
    skip(rank, odd)


def early(rank, odd, freeze=None):
    t = torch.ones(1024)
    batches = 7 if rank == odd else 8  # uneven data: the odd rank's shard has one batch fewer
    frozen = os.path.join(os.environ.get("CLUSTERDOC_LOG_DIR", "."), "frozen")
    if rank == freeze:
        threading.Thread(target=freeze_in_call, args=(batches, frozen), daemon=True).start()
    for _ in range(batches):
        train_step(t)
    if rank == odd and freeze is not None:  # leave once rank `freeze` is frozen in its last call
        deadline = time.monotonic() + 120
        while not os.path.exists(frozen) and time.monotonic() < deadline:
            time.sleep(0.05)


def freeze_in_call(seq, marker):
    """This whole process stops (SIGSTOP) once its main thread is in collective #seq: nothing it could record."""
    from clusterdoc.shim import track

    while (track.TRACKER.current is None or track.TRACKER.current.seq < seq):
        time.sleep(0.01)
    time.sleep(0.2)  # well inside the call (gloo's wait)
    open(marker, "w").close()
    os.kill(os.getpid(), signal.SIGSTOP)


def healthy(rank, odd):
    t = torch.ones(1024)
    for _ in range(5):
        train_step(t)
        time.sleep(0.2)
    dist.barrier()


SCENARIOS = {f.__name__: f for f in (skip, order, loop, lock, kill, ddp, first, early, late, healthy)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), default="skip")
    ap.add_argument("--rank", type=int, default=1, help="the odd rank")
    ap.add_argument("--sleep", type=float, default=0.0, help="seconds to wait first (time to call stacks)")
    ap.add_argument("--hold", type=float, default=8.0, help="late: seconds the GIL is held")
    ap.add_argument(
        "--freeze",
        type=int,
        default=None,
        help="early: rank R stops itself (SIGSTOP) in its 8th call, and the odd rank leaves only then: R records "
        "nothing and the launcher stops it there (what a loaded machine may do to a rank)",
    )
    args = ap.parse_args()
    shim.init()
    if dist.get_backend() == "nccl":  # GPUs: every tensor below on this rank's GPU (shim.init chose it)
        torch.set_default_device(f"cuda:{torch.cuda.current_device()}")
    rank = dist.get_rank()
    time.sleep(args.sleep)
    if args.scenario == "late":
        late(rank, args.rank, args.hold)
    elif args.scenario == "early":
        early(rank, args.rank, args.freeze)
    else:
        SCENARIOS[args.scenario](rank, args.rank)
    print(f"rank {rank}: {args.scenario} done", flush=True)


if __name__ == "__main__":
    main()
