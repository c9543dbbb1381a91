"""DistributedDataParallel and the OOM retry: its forward's own collectives counted, its state reset for a retry.

DDP's forward issues collectives from C++ that no Python wrapper sees: the one-time bucket rebuild after the
first backward (broadcasts of the bucket order from rank 0) and, for a module with buffers, the buffer
broadcast. While an attempt runs, DDP._pre_forward first records which of them this forward will issue, in the
group's sequence and the gate's log (or raises AttemptAborted: the start of a forward is a clean point to
leave); a rank that has to match them calls the same DDP functions (replay()).

Before a retry, reset(): every live DDP's reducer forgets the aborted iteration (torch's own
_update_process_group path: reducer._reset_state(); the buckets are rebuilt after the next backward, on every
rank alike), gradients are dropped (set to None: nothing of an aborted attempt is summed into the next), and the
models that every rank had before the call get rank 0's parameters and buffers again, as DDP's constructor does
(a rank may have stepped its optimizer where another ran out of memory).
"""

from __future__ import annotations

from . import track
from .attempt import AttemptAborted


def _forward_collectives(ddp) -> tuple:
    """What DDP._pre_forward is about to issue from C++, by the tests it makes itself (nothing in the usual
    case, buckets rebuilt and no buffers, which _pre_forward tells apart before calling this)."""
    if ddp._use_python_reducer or ddp._delay_all_reduce_all_params:
        return ()
    import torch

    kinds: tuple[str, ...] = ()
    if torch.is_grad_enabled() and not ddp._has_rebuilt_buckets:
        kinds += ("ddp_rebuild",)  # issues its broadcasts only if a backward ran since the reset: alike on every rank
    if ddp._check_sync_bufs_pre_fwd():
        kinds += ("ddp_buffers",)
    return kinds


def install() -> None:
    """Gate DDP's forward (idempotent)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    if getattr(DDP._pre_forward, "__clusterdoc_original__", None):
        return
    original = DDP._pre_forward

    def _pre_forward(self, *inputs, **kwargs):
        gate = track.GATE
        if gate is not None and hasattr(self, "_clusterdoc_number"):
            if gate.aborted is not None:  # the start of a forward is a clean point to leave
                raise AttemptAborted(gate.aborted)
            if not (self._has_rebuilt_buckets and not getattr(self, "modules_buffers", True)):  # most steps
                for kind in _forward_collectives(self):  # in the group's sequence and the gate's log
                    replay = (kind, self._clusterdoc_number)
                    track.TRACKER.begin(kind, self.process_group, None, None, None, "DDP forward", None, gate, replay)
        return original(self, *inputs, **kwargs)

    _pre_forward.__clusterdoc_original__ = original  # type: ignore[attr-defined]
    _pre_forward.__wrapped__ = original  # type: ignore[attr-defined]
    DDP._pre_forward = _pre_forward  # type: ignore[method-assign]


def replay(kind: str, number: int) -> None:
    """Issue what DDP number `number`'s forward issued on a rank that got further (blocking)."""
    ddp = track.DDPS.get(number)
    if ddp is None:
        raise LookupError(f"DDP model #{number} is gone on this rank")
    if kind == "ddp_rebuild":
        if ddp.reducer._rebuild_buckets():
            ddp._has_rebuilt_buckets = True
    else:
        ddp._sync_buffers()


def live() -> dict:
    """Creation number -> DDP, for every live DDP made through the shim's hook."""
    return dict(track.DDPS.items())


def reset(resync) -> None:
    """Forget the aborted iteration in every live DDP; models in `resync` (numbers, the same on every rank,
    in order) get rank 0's parameters and buffers."""
    from torch.distributed.utils import _sync_module_states

    ddps = live()
    for ddp in ddps.values():
        ddp._update_process_group(ddp.process_group)
        for p in ddp.parameters():
            p.grad = None
    for number in resync:
        ddp = ddps[number]
        _sync_module_states(
            module=ddp.module,
            process_group=ddp.process_group,
            broadcast_bucket_size=ddp.broadcast_bucket_size,
            src=0,
            params_and_buffers_to_ignore=ddp.parameters_to_ignore,
            broadcast_buffers=ddp.forward_sync_buffers,
        )
