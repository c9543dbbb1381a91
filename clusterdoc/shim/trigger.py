"""Breakpoint trigger (Accelerate's set_trigger / check_trigger), agreeing on all ranks.

set_trigger() only flips a local flag; check_trigger(), called by every rank at the same point,
does one small all_reduce of a one-hot vector (one slot per rank), so every rank gets the same
answer at the same step and learns which ranks asked. The flag is cleared once seen.
"""

from __future__ import annotations

_state = {"set": False, "last": []}


def set_trigger() -> None:
    """Ask all ranks to stop (or branch) at their next check_trigger()."""
    _state["set"] = True


def check_trigger(return_ranks: bool = False, group=None):
    """True on every rank if any rank of `group` called set_trigger() since the last check.

    With return_ranks=True, returns the sorted list of ranks that set it (empty list: nobody).
    """
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        ranks = [0] if _state["set"] else []
    else:
        world = dist.get_world_size(group)
        device = torch.device("cpu")
        if dist.get_backend(group) == "nccl":
            device = torch.device("cuda", torch.cuda.current_device())
        slots = torch.zeros(world, dtype=torch.int32, device=device)
        if _state["set"]:
            slots[dist.get_rank(group)] = 1
        dist.all_reduce(slots, group=group)
        group_ranks = [i for i, v in enumerate(slots.tolist()) if v]
        if group is None or group is dist.group.WORLD:
            ranks = group_ranks
        else:
            ranks = [dist.get_global_rank(group, i) for i in group_ranks]
    _state["set"] = False
    _state["last"] = ranks
    return ranks if return_ranks else bool(ranks)


def trigger_ranks() -> list:
    """The ranks that had set the trigger at the last check_trigger()."""
    last = _state["last"]
    return list(last) if isinstance(last, list) else []
