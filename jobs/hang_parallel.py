"""Jobs of every parallel kind where one rank skips a step: what the hang watch sees at the process group.

    clusterdoc submit --nodes 4 --hang-timeout 20 jobs/hang_parallel.py --kind fsdp2 --rank 1

Kinds (tiny models, CPU/gloo): fsdp2 (fully_shard), fsdp1 (FullyShardedDataParallel), tp (DTensor
parallelize_module), funcol (functional collectives, waited on later), pipeline (2 stages, send/recv, data
parallel within each stage), subgroup (all_reduce on ranks 0-2), loader (the odd rank's DataLoader worker
hangs), ddp_compile (DDP(torch.compile(m)), the odd rank stalls in its forward), tp_stuck (every rank ends up
inside functional collectives: the odd rank makes an extra one on a group of ranks 1 and 3).
The odd rank skips step 1 (or stalls there); every rank ends with a barrier. `--rank -1`: nobody skips, each
rank prints `RESULT {...}` with a checksum of its parameters (the same with and without the shim).
"""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn

STEPS = 3


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))


def train(net, rank, odd, inputs=None):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(STEPS):
        if rank == odd and step == 1:
            continue  # the odd rank skips this step
        x = inputs(step) if inputs else torch.full((8, 16), float(rank + step))
        loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


def fsdp2(rank, odd):
    from torch.distributed.fsdp import fully_shard

    net = model()
    for layer in (net[0], net[2]):
        fully_shard(layer)
    fully_shard(net)
    train(net, rank, odd)
    return net


def fsdp1(rank, odd):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    net = FSDP(model(), device_id=torch.device("cpu"))
    train(net, rank, odd)
    return net


def tp_model():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    return parallelize_module(model(), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})


def tp(rank, odd):
    net = tp_model()
    train(net, rank, odd, inputs=lambda step: torch.full((8, 16), float(step)))  # TP: the same batch
    return net


def funcol(rank, odd):
    import torch.distributed._functional_collectives as fc

    t = torch.ones(64)
    for step in range(STEPS):
        if rank == odd and step == 1:
            continue
        lazy = fc.all_reduce(t * (rank + 1), "sum", dist.group.WORLD)  # issued here
        t = lazy / dist.get_world_size()  # waited on here
    return nn.Linear(1, 1)


def tp_stuck(rank, odd):
    import torch.distributed._functional_collectives as fc

    pair = dist.new_group([1, 3])
    net = tp_model()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(STEPS):
        x = torch.full((8, 16), float(step))
        if rank == odd and step == 1:
            x = x + fc.all_reduce(torch.ones(1), "sum", pair)  # an extra call nobody else makes
        loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
    return net


def pipeline(rank, odd):
    stage, peer = rank % 2, rank ^ 1  # stage 0 on even ranks sends to the next odd rank
    world = dist.get_world_size()
    same_stage = [dist.new_group(list(range(s, world, 2))) for s in (0, 1)]
    group = same_stage[stage]
    torch.manual_seed(stage)
    net = nn.Linear(16, 16)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(STEPS):
        if rank == odd and step == 1:
            continue
        if stage == 0:
            y = net(torch.full((4, 16), float(rank + step)))
            dist.send(y.detach(), dst=peer, tag=0)
            grad = torch.zeros_like(y)
            dist.recv(grad, src=peer, tag=1)
            y.backward(grad)
        else:
            x = torch.zeros(4, 16)
            dist.recv(x, src=peer, tag=0)
            x.requires_grad_(True)
            net(x).pow(2).mean().backward()
            dist.send(x.grad, dst=peer, tag=1)
        if step == 0:  # the watchdog looks (every second at most) while only sends and recvs are done: gloo's
            time.sleep(2.5)  # flight recorder keeps none, and that must not turn the recorder off for this rank
        for p in net.parameters():
            dist.all_reduce(p.grad, group=group)
        opt.step()
        opt.zero_grad()
    return net


def subgroup(rank, odd):
    group = dist.new_group([0, 1, 2])
    t = torch.ones(32)
    if rank < 3:
        for step in range(STEPS):
            if rank == odd and step == 1:
                continue
            dist.all_reduce(t, group=group)
    return nn.Linear(1, 1)


class Slow(torch.utils.data.Dataset):
    def __init__(self, stuck):
        self.stuck = stuck

    def __len__(self):
        return 4 * STEPS

    def __getitem__(self, i):
        if self.stuck and i >= 4:
            time.sleep(3600)  # the worker hangs (a dead file system, say)
        return torch.full((16,), float(i))


def loader(rank, odd):
    net = nn.Linear(16, 1)
    data = torch.utils.data.DataLoader(Slow(rank == odd), batch_size=4, num_workers=1)
    for batch in data:
        dist.all_reduce(batch)
    return net


def ddp_compile(rank, odd):
    from torch.nn.parallel import DistributedDataParallel as DDP

    net = DDP(torch.compile(model(), backend="aot_eager"))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(STEPS):
        if rank == odd and step == 1:
            time.sleep(3600)  # stalls in its forward
        net(torch.full((8, 16), float(rank + step))).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
    return net.module


KINDS = {f.__name__: f for f in (fsdp2, fsdp1, tp, funcol, tp_stuck, pipeline, subgroup, loader, ddp_compile)}


def checksum(net) -> float:
    total = 0.0
    for p in net.parameters():
        full = p.full_tensor() if hasattr(p, "full_tensor") else p
        total += float(full.detach().double().sum())
    return round(total, 6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=sorted(KINDS), required=True)
    ap.add_argument("--rank", type=int, default=1, help="the odd rank (-1: none)")
    args = ap.parse_args()
    if os.environ.get("HANG_PARALLEL_PLAIN"):  # no shim: plain torch.distributed, for comparison
        dist.init_process_group("gloo")
    else:
        from clusterdoc import shim

        shim.init()
    rank = dist.get_rank()
    net = KINDS[args.kind](rank, args.rank)
    dist.barrier()
    print("RESULT " + json.dumps({"rank": rank, "kind": args.kind, "checksum": checksum(net)}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
