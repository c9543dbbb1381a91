"""find_executable_batch_size that all ranks agree on (Accelerate-compatible call form).

After each attempt every rank takes part in one small all_reduce(MAX) of [status per rank..., -size]:
if any rank ran out of memory, all ranks retry with the same smaller size; if any rank failed with
another error, all ranks raise instead of waiting for each other. Accelerate's version has no
collective at all, so one rank's OOM leaves the others on a different size or in a hang.

Contract: an attempt must not leave ranks inside different collectives, i.e. the OOM should happen
before the attempt's first collective (true for a probe step run under DDP's `no_sync()`, and for
training whose first collective comes after the first forward/backward).
"""
from __future__ import annotations

import functools
import gc
import inspect
import math
import sys

from .logging import get_logger

# Lower-cased fragments of OOM messages, by source.
OOM_MESSAGES = (
    "out of memory",  # CUDA "CUDA out of memory.", "CUDA error: out of memory", HIP, XPU, MPS backend,
    # NCCL "Cuda failure 2 'out of memory'"
    "cudnn_status_not_supported",  # cuDNN refusing a too-large workspace (Accelerate treats it as OOM)
    "cudnn_status_alloc_failed",
    "cublas_status_alloc_failed",
    "can't allocate memory",  # DefaultCPUAllocator (Linux)
    "not enough memory",  # DefaultCPUAllocator (other platforms and versions)
    "pt_devmem allocation failed",  # HPU
)
OK, OOM, FAILED = 0, 1, 2


class BatchSizeSearchError(RuntimeError):
    """Out of memory even at the minimum batch size."""


def is_oom_error(exc: BaseException) -> bool:
    """True if `exc` (or an exception it was raised from) is an out-of-memory error of any backend."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, MemoryError):
            return True
        # no import here: without torch loaded there is no torch error, and a dying rank may be
        # half-way through importing it
        torch = sys.modules.get("torch")
        if isinstance(exc, getattr(torch, "OutOfMemoryError", ())):
            return True
        text = str(exc).lower()
        if any(fragment in text for fragment in OOM_MESSAGES):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


should_reduce_batch_size = is_oom_error  # Accelerate's name


def release_memory() -> None:
    gc.collect()
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    for name in ("xpu", "mps"):
        backend = getattr(torch, name, None)
        if backend is not None and getattr(backend, "is_available", lambda: False)():
            backend.empty_cache()


def agree(status: int, size: int, group=None):
    """One all_reduce(MAX): (worst status, ranks by status, smallest size) across the group."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return status, ([0] if status else []), size
    world = dist.get_world_size(group)
    device = "cpu"
    if dist.get_backend(group) == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    vec = torch.zeros(world + 1, dtype=torch.int64, device=device)
    vec[dist.get_rank(group)] = status
    vec[world] = -size
    dist.all_reduce(vec, op=dist.ReduceOp.MAX, group=group)
    values = vec.tolist()
    worst = max(values[:world])
    ranks = [r for r, v in enumerate(values[:world]) if v == worst and worst]
    return worst, ranks, -values[world]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def _accumulation(target: int, size: int):
    """(micro batch, steps) with micro <= size and micro * steps >= target, as close as possible."""
    steps = math.ceil(target / size)
    return math.ceil(target / steps), steps


def find_executable_batch_size(function=None, starting_batch_size: int = 128, minimum_batch_size: int = 1,
                               factor: float = 0.9, probe=None, gradient_accumulation: bool = False,
                               search_tolerance: float = 0.02, group=None, logger=None):
    """Run `function(batch_size, *args)` and retry with a smaller batch while any rank runs out of memory.

    - factor: geometric back-off (Accelerate uses 0.9); the first success is final.
    - probe: optional `probe(batch_size)` running one step; then the size is searched first (halve until
      it fits, bisect between fit and failure to within `search_tolerance`) and `function` runs once.
    - gradient_accumulation: call `function(batch_size, accumulation_steps, *args)` with
      batch_size * accumulation_steps >= starting_batch_size (equal when the steps divide it).
    - Raises BatchSizeSearchError when the minimum batch size still runs out of memory.
    The size found is where the next call starts, as in Accelerate.
    """
    if function is None:
        return functools.partial(
            find_executable_batch_size, starting_batch_size=starting_batch_size,
            minimum_batch_size=minimum_batch_size, factor=factor, probe=probe,
            gradient_accumulation=gradient_accumulation, search_tolerance=search_tolerance, group=group,
            logger=logger)
    if not 0 < factor < 1:
        raise ValueError(f"factor must be between 0 and 1, got {factor}")
    if minimum_batch_size < 1 or starting_batch_size < minimum_batch_size:
        raise ValueError(f"need 1 <= minimum_batch_size ({minimum_batch_size}) <= starting_batch_size "
                         f"({starting_batch_size})")
    log = logger or get_logger("clusterdoc.shim.oom")
    state = {"size": starting_batch_size, "attempts": 0}
    n_fixed = 2 if gradient_accumulation else 1

    def attempt(call, size):
        """Run call(size) on every rank and agree on the outcome. Returns (ok, result)."""
        state["attempts"] += 1
        result, status, error = None, OK, None
        try:
            result = call(size)
        except Exception as exc:  # noqa: BLE001 - decided below, re-raised unless OOM
            status = OOM if is_oom_error(exc) else FAILED
            error = exc if status == FAILED else None
            note = _short(exc)
            del exc  # the traceback pins the attempt's tensors
        worst, ranks, _ = agree(status, size, group)
        if worst == FAILED:
            if error is not None:
                raise error
            raise RuntimeError(f"find_executable_batch_size: rank(s) {ranks} failed with an error other than "
                               f"out of memory at batch_size={size}; see their logs")
        if worst == OOM:
            release_memory()
            state["last_error"] = note if status == OOM else state.get("last_error", "")
            state["oom_ranks"] = ranks
            return False, None
        return True, result

    def give_up(size):
        raise BatchSizeSearchError(
            f"No executable batch size found: out of memory on rank(s) {state['oom_ranks']} even at the "
            f"minimum batch size {size} (started at {starting_batch_size}; last error on this rank: "
            f"{state.get('last_error') or 'none'}). Lower the model's memory use or minimum_batch_size.")

    def search(size):
        """Largest probe-passing size: halve, then bisect. Returns it."""
        fail = None
        while True:
            ok, _ = attempt(probe, size)
            if ok:
                break
            if size <= minimum_batch_size:
                give_up(size)
            fail, size = size, max(minimum_batch_size, size // 2)
            log.info(f"probe: batch_size={fail} out of memory on rank(s) {state['oom_ranks']}; trying {size}")
        while fail is not None and fail - size > 1 and size < (1 - search_tolerance) * (fail - 1):
            mid = (size + fail) // 2
            ok, _ = attempt(probe, mid)
            log.info(f"probe: batch_size={mid} {'fits' if ok else 'out of memory'}")
            size, fail = (mid, fail) if ok else (size, mid)
        return size

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        params = list(inspect.signature(function).parameters)
        if len(params) < len(args) + n_fixed:
            raise TypeError(
                f"Batch size was passed into `{function.__name__}` as an argument when called. "
                f"Remove it: the decorator passes {'batch_size and accumulation_steps' if n_fixed == 2 else 'batch_size'}.")
        release_memory()
        size = state["size"]
        if probe is not None:
            size = search(size)
        while True:
            if gradient_accumulation:
                micro, steps = _accumulation(starting_batch_size, size)
                ok, result = attempt(lambda b: function(b, steps, *args, **kwargs), micro)
                size = micro
            else:
                ok, result = attempt(lambda b: function(b, *args, **kwargs), size)
            if ok:
                state["size"] = size
                return result
            if size <= minimum_batch_size:
                give_up(size)
            new = max(minimum_batch_size, int(size * factor))
            log.warning(f"out of memory at batch_size={size} on rank(s) {state['oom_ranks']} "
                        f"({state.get('last_error') or 'another rank'}); retrying with batch_size={new}")
            size = new

    wrapper.attempts = lambda: state["attempts"]
    wrapper.batch_size = lambda: state["size"]
    return wrapper
