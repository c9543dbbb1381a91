"""Bring every process group to the same point after an aborted attempt: the ranks that stopped earlier issue
the collectives their peers are waiting in.

Every rank published its gate's log (attempt.py): per group, how many collectives it issued in the attempt and
the last KEEP of them. Per group, the ranks behind the furthest one issue the missing calls in order, the same
op, shape, dtype and root with zeros (the result is thrown away: the attempt is aborted on every rank, and its
waiting ranks raise AttemptAborted when their collective returns); DDP's forward collectives are replayed by
calling DDP itself. No rank ever enters a collective its peers are not in, so gloo sees no size mismatch and
NCCL no mixed buffers, and the groups are clean for the retry. Every rank checks every rank's gap the same way,
so where one cannot be drained (an op that cannot be replayed, a gap longer than KEEP) all raise RetryUnsafe.
"""

from __future__ import annotations

import time

from . import track
from .errors import ShimError

REPLAYABLE = {
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "all_gather_object",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "gather",
    "scatter",
    "barrier",
    "all_to_all_single",
    "ddp_rebuild",
    "ddp_buffers",
}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}


class RetryUnsafe(ShimError, RuntimeError):
    """The ranks cannot be brought to the same point for an in-process retry."""


def _group(name: str):
    """This rank's group of that name: None for the default group, False when this rank is not in it."""
    import torch.distributed as dist

    if name == "world":
        return None
    try:
        group = dist.distributed_c10d._resolve_process_group(name)  # type: ignore[arg-type]
    except Exception:  # a group this rank does not have
        return False
    return group if dist.get_rank(group) >= 0 else False


def plan(logs: dict, rank: int) -> list:
    """[(group, entries to issue in order)] for this rank; raises RetryUnsafe if any rank's gap can't be drained."""
    mine = []
    for name in sorted({n for log in logs.values() for n in log}):
        members = next(log[name][2] for log in logs.values() if name in log)
        members = sorted(logs) if members is None else members
        counts = {r: logs[r].get(name, [0])[0] if r in logs else 0 for r in members}
        target = max(counts.values())
        leader = max(counts, key=lambda r: (counts[r], -r))
        entries = {e[0]: e for e in logs[leader][name][1]}
        group = _group(name) if rank in counts else False
        for r, count in counts.items():
            if count < target and (target - count > len(entries) or min(entries) > count):
                raise RetryUnsafe(
                    f"rank {r} is {target - count} collectives behind rank {leader} on group "
                    f"{name}, more than the {len(entries)} kept"
                )
            for i in range(count, target):
                op, root = entries[i][1], entries[i][4]
                if op not in REPLAYABLE or (op in ROOTED and root is None):
                    raise RetryUnsafe(
                        f"rank {r} would have to match rank {leader}'s {op} on group {name} (cannot be replayed)"
                    )
        if group is not False and counts.get(rank, 0) < target:
            mine.append((group, [entries[i] for i in range(counts.get(rank, 0), target)]))
    return mine


def _issue(entry, group, rank):
    import torch
    import torch.distributed as dist

    _, op, shape, dtype, root, checked = entry
    if op.startswith("ddp_"):
        from . import ddpstate

        ddpstate.replay(op, root)
        return None
    device = "cpu"
    if dist.get_backend(group) == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    t = torch.zeros(shape, dtype=getattr(torch, dtype.split(".")[-1]), device=device) if shape is not None else None
    world = dist.get_world_size(group)
    args, kwargs = (t,), {}
    if op in ("broadcast", "scatter"):
        kwargs["src"] = root
    elif op in ("reduce", "gather"):
        kwargs["dst"] = root
    if op == "all_gather":
        args = ([torch.zeros_like(t) for _ in range(world)], t)
    elif op in ("all_gather_into_tensor", "all_gather_single"):
        args = (t.new_zeros((world * shape[0], *shape[1:])), t)
    elif op in ("reduce_scatter_tensor", "reduce_scatter_single"):
        args = (t.new_zeros((shape[0] // world, *shape[1:])), t)
    elif op == "reduce_scatter":
        args = (t, [torch.zeros_like(t) for _ in range(world)])
    elif op == "gather":
        kwargs["gather_list"] = [torch.zeros_like(t) for _ in range(world)] if rank == root else None
    elif op == "scatter":
        kwargs["scatter_list"] = [torch.zeros_like(t) for _ in range(world)] if rank == root else None
    elif op == "barrier":
        args = ()
    elif op == "all_to_all_single":
        args = (torch.zeros_like(t), t)
    elif op == "all_gather_object":  # for debug mode's check; issued as two all_gathers (_all_gather_object)
        args = ([None] * world, None)
    kwargs["group"] = group
    track.INSIDE.on = True  # what torch calls inside (all_gather_object's all_gathers) is not tracked again
    try:
        if checked and track.CHECK is not None:  # debug mode checked the peer's call first: so does ours
            if not track.CHECK(op, args, kwargs):
                if op == "all_gather_object":
                    _all_gather_object(group, world)
                else:
                    track.ORIGINALS[op](*args, **kwargs)
            return None
        if op == "all_gather_object":  # no async form; no unpickling of what the peers send
            _all_gather_object(group, world)
            return None
        return track.ORIGINALS[op](*args, async_op=True, **kwargs)
    finally:
        track.INSIDE.on = False


_NONE = b"\x80\x04N."  # pickle of None, written by hand: what a draining rank contributes


def _all_gather_object(group, world: int) -> None:
    """all_gather_object's two collectives as torch issues them (every rank's size, then the padded bytes), our
    contribution None: the peers waiting in the user's all_gather_object get it, and nothing they sent is ever
    unpickled here (a peer's bytes are untrusted; this rank's attempt is aborted anyway)."""
    import torch
    import torch.distributed as dist

    c10d = dist.distributed_c10d
    finder = getattr(c10d, "_get_object_coll_device", None) or getattr(c10d, "_get_pg_default_device", None)
    device = torch.device(finder(group)) if finder is not None else torch.device("cpu")
    gather = track.ORIGINALS.get("all_gather") or dist.all_gather
    sizes = torch.zeros(world, dtype=torch.long, device=device)
    gather([sizes[i].unsqueeze(0) for i in range(world)], torch.tensor([len(_NONE)], device=device), group=group)
    most = int(sizes.max().item())
    if most > 1 << 34:
        raise RetryUnsafe(f"a peer announced an all_gather_object of {most} bytes")
    mine = torch.zeros(most, dtype=torch.uint8, device=device)
    mine[: len(_NONE)] = torch.tensor(list(_NONE), dtype=torch.uint8)
    out = torch.empty(most * world, dtype=torch.uint8, device=device)
    gather([out[most * i : most * (i + 1)] for i in range(world)], mine, group=group)


def run(logs: dict, rank: int, deadline: float) -> int:
    """Issue this rank's share, then wait for it and for this rank's own pending collectives. Returns how many
    collectives it issued."""
    import datetime

    works, issued = [], 0
    for group, entries in plan(logs, rank):
        for entry in entries:
            work = _issue(entry, group, rank)
            issued += 1
            if work is not None:
                works.append(work)
        track.TRACKER.advance(group, len(entries))
    for work in works:
        work.wait(datetime.timedelta(seconds=max(0.1, deadline - time.monotonic())))
    while track.TRACKER.pending and time.monotonic() < deadline:
        time.sleep(0.002)
    if track.TRACKER.pending:
        raise RetryUnsafe(f"{len(track.TRACKER.pending)} of this rank's collectives never completed")
    return issued
