"""find_executable_batch_size that all ranks agree on (Accelerate-compatible call form).

An attempt may stop at a different point on each rank: one runs out of memory in its forward while the others
are already in DDP's gradient all_reduce. So the ranks never meet in a collective afterwards. While an attempt
runs every collective passes a gate (attempt.py); a rank whose attempt fails says so on the job's store, every
rank stops issuing collectives at once, the ranks that stopped early issue the collectives their peers are
waiting in (drain.py), and all meet on the store (settle.py): any other error raises on every rank, an OOM
anywhere retries on every rank with the same smaller size, after the live DDP models are reset (ddpstate.py).
Where that cannot be done safely every rank raises RetryUnsafe naming the rank that failed. Without a store
(no MASTER_ADDR/MASTER_PORT) the old agreement is used: one all_reduce(MAX) after the attempt, safe only when
the OOM comes before the attempt's first collective.
"""

from __future__ import annotations

import functools
import gc
import inspect
import logging
import math
import os
import reprlib
import sys

from . import settle
from .attempt import AttemptAborted, Gate
from .drain import RetryUnsafe
from .errors import ShimError
from .logging import internal_logger

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


class BatchSizeSearchError(ShimError, RuntimeError):
    """Out of memory even at the minimum batch size."""


def is_oom_error(exc: BaseException | None) -> bool:
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


def release_memory(*objects) -> list:
    """Accelerate's release_memory: returns a list of as many `None`s as `objects` were given (reassign them:
    `a, b = release_memory(a, b)`), after gc.collect() and emptying the device's cache allocator."""
    released: list = [None] * len(objects)
    del objects  # drop this frame's references before collecting
    _clear_device_cache()
    return released


def _clear_device_cache() -> None:
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
    device = torch.device("cpu")
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


def _left(exc: BaseException | None) -> bool:
    """Did `exc` come from AttemptAborted (also as the text of a failed DDP bucket future)?"""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, AttemptAborted) or "AttemptAborted" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def _next_size(reduce_batch_size_fn, size: int, factor: float) -> int:
    if reduce_batch_size_fn is None:
        return int(size * factor)
    import torch
    import torch.distributed as dist

    chosen = torch.tensor([int(reduce_batch_size_fn())])
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(chosen, op=dist.ReduceOp.MIN)  # between attempts every group is clean
    return int(chosen.item())


def _same_everywhere(numbers) -> bool:
    """Do all ranks hold the same DDP models (so that re-syncing them issues the same broadcasts)?"""
    import torch
    import torch.distributed as dist

    mine = torch.tensor([len(numbers), sum(numbers), -len(numbers), -sum(numbers)], dtype=torch.int64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    return mine[0].item() == -mine[2].item() and mine[1].item() == -mine[3].item()


def _accumulation(target: int, size: int):
    """(micro batch, steps) with micro <= size and micro * steps >= target, as close as possible."""
    steps = math.ceil(target / size)
    return math.ceil(target / steps), steps


def _exhausted(minimum: int) -> str:
    """Accelerate's message when the sizes run out (its minimum is always 1, its next size 0)."""
    if minimum <= 1:
        return "No executable batch size found, reached zero."
    return f"No executable batch size found, reached the minimum batch size {minimum} (minimum_batch_size)."


def _passed_batch_size(function, params, args, n_fixed: int) -> str:
    """Accelerate's TypeError text when the caller passed the batch size itself (values shown bounded)."""
    name = getattr(function, "__name__", "function")
    shown = ", ".join(f"{p}={reprlib.repr(v)}" for p, v in zip(params[n_fixed:], args[n_fixed:]))
    fixed = "batch_size and accumulation_steps" if n_fixed == 2 else "the first argument"
    return (
        f"Batch size was passed into `{name}` as {fixed} when called. "
        f"Remove this as the decorator already does so: `{name}({shown})`"
    )


def _say(log, level: int, msg: str, up: int) -> None:
    """Log `msg` with the call site `up` frames above _say's caller (the user's call of the decorated
    function). An adapter whose log() is a frame of its own (ours, Accelerate's) takes one more."""
    own = 0 if getattr(type(log).log, "__module__", "logging") == "logging" else 1
    log.log(level, msg, stacklevel=2 + own + up)


def _timeout() -> float:
    try:
        return float(os.environ.get("CLUSTERDOC_OOM_TIMEOUT") or os.environ.get("CLUSTERDOC_TIMEOUT") or 1800)
    except ValueError:
        return 1800.0


def find_executable_batch_size(
    function=None,
    starting_batch_size: int = 128,
    reduce_batch_size_fn=None,
    *,
    minimum_batch_size: int = 1,
    factor: float = 0.9,
    probe=None,
    gradient_accumulation: bool = False,
    search_tolerance: float = 0.02,
    group=None,
    timeout: float | None = None,
    logger=None,
):
    """Run `function(batch_size, *args)` and retry with a smaller batch while any rank runs out of memory.

    - factor: geometric back-off (Accelerate uses 0.9); the first success is final.
    - reduce_batch_size_fn: Accelerate's: called with no arguments after an OOM, returns the next size (on every
      rank; the smallest answer is taken).
    - probe: optional `probe(batch_size)` running one step; then the size is searched first (halve until
      it fits, bisect between fit and failure to within `search_tolerance`) and `function` runs once.
    - gradient_accumulation: call `function(batch_size, accumulation_steps, *args)` with
      batch_size * accumulation_steps >= starting_batch_size (equal when the steps divide it).
    - timeout: how long a rank waits for the others to leave a failed attempt (default CLUSTERDOC_OOM_TIMEOUT,
      else CLUSTERDOC_TIMEOUT, else 1800 s).
    - Raises BatchSizeSearchError when the minimum batch size still runs out of memory, RetryUnsafe (on every
      rank) when the ranks cannot be brought to the same point.
    The size found is where the next call starts, as in Accelerate.
    """
    if function is None:
        return functools.partial(
            find_executable_batch_size,
            starting_batch_size=starting_batch_size,
            reduce_batch_size_fn=reduce_batch_size_fn,
            minimum_batch_size=minimum_batch_size,
            factor=factor,
            probe=probe,
            gradient_accumulation=gradient_accumulation,
            search_tolerance=search_tolerance,
            group=group,
            timeout=timeout,
            logger=logger,
        )
    if not 0 < factor < 1:
        raise ValueError(f"factor must be between 0 and 1, got {factor}")
    # starting_batch_size=0 is Accelerate's "reached zero" RuntimeError when called, not an error here
    if minimum_batch_size < 1 or starting_batch_size < 0 or 0 < starting_batch_size < minimum_batch_size:
        raise ValueError(
            f"need 1 <= minimum_batch_size ({minimum_batch_size}) <= starting_batch_size ({starting_batch_size})"
        )
    log = logger or internal_logger("clusterdoc.shim.oom")
    state = {"size": starting_batch_size, "attempts": 0}
    n_fixed = 2 if gradient_accumulation else 1

    def attempt(call, size):
        """Run call(size) on every rank and agree on the outcome. Returns (ok, result)."""
        state["attempts"] += 1
        if group is None and settle.available():
            return guarded(call, size)
        result, status, error = None, OK, None
        try:
            result = call(size)
        except Exception as exc:  # decided below, re-raised unless OOM
            status = OOM if is_oom_error(exc) else FAILED
            error = exc if status == FAILED else None
            note = _short(exc)
            del exc  # the traceback pins the attempt's tensors
        worst, ranks, _ = agree(status, size, group)
        if worst == FAILED:
            if error is not None:
                raise error
            raise RuntimeError(
                f"find_executable_batch_size: rank(s) {ranks} failed with an error other than "
                f"out of memory at batch_size={size}; see their logs"
            )
        if worst == OOM:
            _clear_device_cache()
            state["last_error"] = note if status == OOM else state.get("last_error", "")
            state["oom_ranks"] = ranks
            return False, None
        return True, result

    def guarded(call, size):
        """The attempt under the gate, the outcome met on the store (see the module's docstring)."""
        from . import ddpstate, track

        track.install()
        ddpstate.install()
        before = sorted(ddpstate.live())  # the models every rank had before: re-synced before a retry
        gate = Gate()
        meeting = settle.Meeting(gate, timeout if timeout is not None else _timeout())
        result, status, error, note = None, settle.OK, None, ""
        track.GATE = gate
        try:
            result = call(size)
        except Exception as exc:  # decided below, re-raised unless OOM
            if gate.aborted is not None and _left(exc):
                status = settle.ABORTED  # another rank's failure stopped this one (its text quotes that OOM)
            else:
                status = settle.OOM if is_oom_error(exc) else settle.ABORTED if gate.aborted else settle.FAILED
            error = exc if status == settle.FAILED else None
            note = _short(exc)
            del exc  # the traceback pins the attempt's tensors
        finally:
            track.GATE = None
        try:
            found = meeting.settle(status, note)
        except RetryUnsafe as exc:
            raise RetryUnsafe(
                f"find_executable_batch_size cannot retry in-process at batch_size={size}"
                f"{' (' + gate.aborted + ')' if gate.aborted else ''}: {exc}. Use probe= (a step "
                "run before training, its OOM is caught before any collective) or "
                "`clusterdoc submit --oom-retry` (restarts every rank)."
            ) from None
        finally:
            meeting.close()
        failed = [r for r, s in found.items() if s["status"] == settle.FAILED]
        if failed:
            if error is not None:
                raise error
            raise RuntimeError(
                f"find_executable_batch_size: rank(s) {failed} failed with an error other than "
                f"out of memory at batch_size={size} ({found[failed[0]]['note']}); see their logs"
            )
        ooms = [r for r, s in found.items() if s["status"] == settle.OOM]
        if not ooms and gate.aborted is None:
            return True, result
        del result
        _clear_device_cache()
        common = [n for n in before if n in ddpstate.live()]
        ddpstate.reset(common if _same_everywhere(common) else [])
        state["last_error"] = note if status == settle.OOM else found[ooms[0]]["note"] if ooms else ""
        state["oom_ranks"] = ooms
        return False, None

    def give_up(size):
        state["size"] = 0  # as in Accelerate, the next call raises at once
        raise BatchSizeSearchError(
            f"{_exhausted(minimum_batch_size)} Out of memory on rank(s) {state['oom_ranks']} even at batch size "
            f"{size} (started at {starting_batch_size}; last error on this rank: "
            f"{state.get('last_error') or 'none'}). Lower the model's memory use or minimum_batch_size."
        )

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
            _say(
                log,
                logging.INFO,
                f"probe: batch_size={fail} out of memory on rank(s) {state['oom_ranks']}; trying {size}",
                up=2,
            )
        while fail is not None and fail - size > 1 and size < (1 - search_tolerance) * (fail - 1):
            mid = (size + fail) // 2
            ok, _ = attempt(probe, mid)
            _say(log, logging.INFO, f"probe: batch_size={mid} {'fits' if ok else 'out of memory'}", up=2)
            size, fail = (mid, fail) if ok else (size, mid)
        return size

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        params = list(inspect.signature(function).parameters)
        if len(params) < len(args) + n_fixed:
            raise TypeError(_passed_batch_size(function, params, args, n_fixed))
        _clear_device_cache()
        size = state["size"]
        if size < minimum_batch_size:  # started at 0, or an earlier call found nothing
            raise BatchSizeSearchError(_exhausted(minimum_batch_size))
        if probe is not None:
            size = search(size)
        while True:
            if gradient_accumulation:
                micro, steps = _accumulation(starting_batch_size, size)
                ok, result = attempt(lambda b, steps=steps: function(b, steps, *args, **kwargs), micro)
                size = micro
            else:
                ok, result = attempt(lambda b: function(b, *args, **kwargs), size)
            if ok:
                state["size"] = size
                return result
            if size <= minimum_batch_size:
                give_up(size)
            new = _next_size(reduce_batch_size_fn, size, factor)
            if new < 1:  # a reduce_batch_size_fn that answers 0: Accelerate's "reached zero"
                give_up(size)
            new = max(minimum_batch_size, min(size - 1, new))
            _say(
                log,
                logging.WARNING,
                f"out of memory at batch_size={size} on rank(s) {state['oom_ranks']} "
                f"({state.get('last_error') or 'another rank'}); retrying with batch_size={new}",
                up=1,
            )
            size = new

    wrapper.attempts = lambda: state["attempts"]  # type: ignore[attr-defined]
    wrapper.batch_size = lambda: state["size"]  # type: ignore[attr-defined]
    return wrapper
