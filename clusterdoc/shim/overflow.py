"""inf/nan detection in forward (and optionally backward), transformers' DebugUnderflowOverflow API.

What is checked, as transformers does: every weight, input and output of each module that runs. Hot path:
per module input and output tensor one on-device reduction (a float32 sum: inf and nan survive a sum, so a
non-finite sum flags the tensor; each tensor object once per forward, so an input that an earlier module
output costs nothing more), and at the end of the forward one fused max-abs over the weights of the modules
that ran (torch._foreach_norm, ord=inf: exact, no overflow on finite values); the flags are stacked and
synced once per forward. Only when a flag is non-finite does the slow path run: it finds the first module
with a really non-finite weight, input or output (exact isfinite, so a sum that overflowed on finite values
is not reported) and prints transformers' report of the frames leading to it (tagged with the rank when
there are several), also appended to a per-rank file. transformers' version syncs 4 times per tensor.
check_inputs=False / check_weights=False take those parts off the hot path.

Frames keep references (not copies) to each module's inputs and outputs until the end of the
forward; outputs modified in place later in the forward are reported with their later values.
"""

from __future__ import annotations

import collections
import math
import os
import weakref

import torch

from clusterdoc import private

from .errors import ShimError

_Tensor = torch.Tensor
_F32 = torch.float32
_WIDE = (torch.float32, torch.float64)
PREFIX = "                 "


class OverflowDetected(ShimError, ValueError):
    """inf/nan found; a ValueError like transformers' DebugUnderflowOverflow raises."""


def _tag():
    from .logging import _HOST, _where

    rank, world = _where()
    return rank, world, f"[rank {rank}/{world} {_HOST}]"


def _nonfinite_notes(var, ctx):
    """transformers' detect_overflow lines for a tensor, without printing them."""
    notes = []
    if torch.is_tensor(var) and (var.is_floating_point() or var.is_complex()):
        if torch.isnan(var).any().item():
            notes.append(f"{ctx} has nans")
        if torch.isinf(var).any().item():
            notes.append(f"{ctx} has infs")
    return notes


def get_abs_min_max(var, ctx):
    abs_var = var.abs()
    return f"{abs_var.min():8.2e} {abs_var.max():8.2e} {ctx}"


def detect_overflow(var, ctx):
    """Report (print) whether tensor `var` has nan or inf entries; True if it has. As in transformers."""
    import torch

    _, world, tag = _tag()
    lead = f"{tag} " if world > 1 else ""
    detected = False
    if torch.isnan(var).any().item():
        detected = True
        print(f"{lead}{ctx} has nans")
    if torch.isinf(var).any().item():
        detected = True
        print(f"{lead}{ctx} has infs")
    return detected


def _tensors(obj, ctx):
    """(ctx, tensor-or-object) pairs in transformers' naming: input[0], output[1][0], ..."""
    if isinstance(obj, (tuple, list)):
        for i, x in enumerate(obj):
            if isinstance(x, (tuple, list)):
                for j, y in enumerate(x):
                    yield f"{ctx}[{i}][{j}]", y
            else:
                yield f"{ctx}[{i}]", x
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield f"{ctx}[{k}]", v
    else:
        yield ctx, obj


def _line(var, ctx):
    import torch

    if torch.is_tensor(var):
        if var.numel() == 0:
            return f"{'empty':>17} {ctx}"
        if not (var.is_floating_point() or var.is_complex()):
            var = var.float()
        return get_abs_min_max(var.detach(), ctx)
    if var is None:
        return f"{'None':>17} {ctx}"
    return f"{'not a tensor':>17} {ctx}"


def _finite(var) -> bool:
    import torch

    return not (torch.is_tensor(var) and var.is_floating_point() and not torch.isfinite(var).all().item())


class _Tracker:
    """Shared engine of DebugUnderflowOverflow and enable_overflow_detection()."""

    def __init__(
        self,
        max_frames_to_save=21,
        trace_batch_nums=(),
        abort_after_batch_num=None,
        report_dir=None,
        check_inputs=True,
        check_weights=True,
    ):
        self.max_frames = max_frames_to_save
        self.check_inputs = check_inputs
        self.check_weights = check_weights
        self.traced_batch = None  # the traced batch whose start line is printed
        self.trace_batch_nums = list(trace_batch_nums or [])
        self.abort_after_batch_num = abort_after_batch_num
        self.report_dir = report_dir if report_dir is not None else os.environ.get("CLUSTERDOC_OVERFLOW_DIR")
        self.names = weakref.WeakKeyDictionary()
        self.param_names = {}
        self.batch_number = 0
        self.flags = []  # device scalars, one per checked output
        self.records = []  # (module, inputs, output) of this forward, in completion order
        self.seen = set()  # ids of the tensors already flagged in this forward
        self.grad_flags = []  # (param name, device scalar)
        self.grad_callback_queued = False
        self.frames = collections.deque([], max_frames_to_save)  # report text, bounded always
        self.detected_overflow = False
        self.handles = []

    # ---- naming
    def name_model(self, model):
        for name, m in model.named_modules():
            self.names.setdefault(m, name)

    def watch_gradients(self, model):
        for name, p in model.named_parameters():
            if p.requires_grad:
                self.handles.append(p.register_hook(self._grad_hook(name)))

    # ---- forward
    def on_output(self, module, inputs, output):
        if self.batch_number in self.trace_batch_nums:
            self._trace(module, inputs, output)
            return
        tensors = [output] if type(output) is _Tensor else [t for _, t in _tensors(output, "output")]
        if self.check_inputs:
            tensors += inputs if all(type(x) is _Tensor for x in inputs) else [t for _, t in _tensors(inputs, "")]
        seen = self.seen
        for t in tensors:
            # a container usually returns its last child's tensor: check each tensor object once
            if isinstance(t, _Tensor) and t.is_floating_point() and id(t) not in seen:
                seen.add(id(t))  # ids stay unique: self.records keeps the tensors alive
                # float32 accumulation: an fp16 sum of finite values would overflow on every step
                self.flags.append(t.detach().sum() if t.dtype in _WIDE else t.detach().sum(dtype=_F32))
        self.records.append((module, inputs, output))

    def end_of_forward(self):
        """One sync for the whole forward; the slow path only when a flag is not finite."""
        flags, records = self.flags, self.records
        self.flags, self.records, self.seen = [], [], set()
        batch = self.batch_number
        self.batch_number += 1
        if self.check_weights and records:
            flags += self._weight_flags(records)
        if flags:
            if not bool(torch.isfinite(torch.stack(flags)).all()):
                self._report_forward(records, batch)
        del records
        if self.abort_after_batch_num is not None and self.batch_number > self.abort_after_batch_num:
            raise OverflowDetected(
                f"DebugUnderflowOverflow: aborting after {self.batch_number} batches due to "
                f"`abort_after_batch_num={self.abort_after_batch_num}` arg"
            )

    def _weight_flags(self, records):
        """One fused max-abs per weight of the modules that ran (ord=inf: exact, finite stays finite). Plain
        tensors only: a DTensor weight (FSDP2, tensor parallel) would not stack with the other flags."""
        params = {}
        for module, _, _ in records:
            for p in module._parameters.values():
                if p is not None and p.is_floating_point():
                    params[id(p)] = p.detach()
        weights = [w for w in params.values() if type(w) is _Tensor]
        return list(torch._foreach_norm(weights, math.inf)) if weights else []

    def _start_lines(self, batch):
        """transformers' batch_start_frame: the lines its first frame of each batch begins with."""
        return [f"\n\n{PREFIX} *** Starting batch number={batch} ***", f"{'abs min':8} {'abs max':8} metadata"]

    def _frame(self, module, inputs, output, start=None):
        lines = list(self._start_lines(start)) if start is not None else []
        lines.append(f"{PREFIX} {self.names.get(module, '?')} {module.__class__.__name__}")
        for name, p in module.named_parameters(recurse=False):
            lines.append(_line(p, name))
        lines += [_line(x, c) for c, x in _tensors(inputs, "input")]
        lines += [_line(x, c) for c, x in _tensors(output, "output")]
        return "\n".join(lines)

    def _trace(self, module, inputs, output):
        """Trace mode: each frame printed as its forward completes, the batch's first with its start lines."""
        start = None
        if self.traced_batch != self.batch_number:
            self.traced_batch = start = self.batch_number
        notes = [n for c, x in self._checked(module, inputs, output) for n in _nonfinite_notes(x, c)]
        self._print(notes + [self._frame(module, inputs, output, start)])

    def _checked(self, module, inputs, output):
        """(ctx, tensor) of a frame in transformers' order: weights, inputs, output (all of them: off the hot
        path, check_inputs/check_weights do not apply)."""
        yield from module.named_parameters(recurse=False)
        yield from _tensors(inputs, "input")
        yield from _tensors(output, "output")

    def _report_forward(self, records, batch):
        bad = None
        for i, rec in enumerate(records):
            ctx = next((c for c, t in self._checked(*rec) if not _finite(t)), None)
            if ctx is not None:
                bad = i, ctx
                break
        if bad is None:
            return  # a float32 sum overflowed on finite values: nothing to report
        i, ctx = bad
        self.detected_overflow = True
        self.frames.clear()
        first = max(0, i - self.max_frames + 1)
        for j in range(first, i + 1):
            self.frames.append(self._frame(*records[j], start=batch if j == 0 else None))
        module, inputs, output = records[i]
        name = f"{self.names.get(module, '?')} {module.__class__.__name__}"
        notes = [n for c, x in self._checked(module, inputs, output) for n in _nonfinite_notes(x, c)]
        header = [
            f"\nDetected inf/nan during batch_number={batch}",
            f"Last {len(self.frames)} forward frames:",
            f"{'abs min':8} {'abs max':8} metadata",
        ]
        # transformers' text as it is; which tensor it was, the exception says
        self._print(notes[:16] + header + list(self.frames) + ["\n\n"], [f"first non-finite {ctx} in module: {name}"])
        self.frames.clear()
        raise OverflowDetected(
            f"DebugUnderflowOverflow: inf/nan detected in the {ctx} of {name} (batch_number={batch}), aborting "
            "as there is no point running further. Please scroll up above this traceback to see the activation "
            "values prior to this event."
        )

    # ---- backward
    def _grad_hook(self, name):
        def hook(grad):
            import torch

            if grad is not None and grad.is_floating_point():
                self.grad_flags.append((name, grad.detach().sum(dtype=torch.float32), grad))
            if not self.grad_callback_queued:
                self.grad_callback_queued = True
                torch.autograd.Variable._execution_engine.queue_callback(self.end_of_backward)

        return hook

    def end_of_backward(self):
        import torch

        flags, self.grad_flags = self.grad_flags, []
        self.grad_callback_queued = False
        if not flags or bool(torch.isfinite(torch.stack([f for _, f, _ in flags])).all()):
            return
        bad = [(n, g) for n, _, g in flags if not _finite(g)]
        if not bad:
            return
        self.detected_overflow = True
        lines = [
            f"\nDetected inf/nan in gradients during the backward of batch_number={self.batch_number - 1}",
            f"{'abs min':8} {'abs max':8} metadata",
        ]
        lines += [_line(g, f"grad {n}") for n, g in bad[: self.max_frames]]
        self._print(lines + ["\n"])
        raise OverflowDetected(
            f"DebugUnderflowOverflow: inf/nan in the gradient of {bad[0][0]} ({len(bad)} parameter(s) affected)"
        )

    # ---- output
    def _print(self, lines, file_head=()):
        """transformers' text to stdout; the per-rank report file (ours) also gets `file_head` first."""
        rank, world, tag = _tag()
        text = "\n".join(lines)
        if world > 1:  # one process: transformers' text as it is
            text = "\n".join(f"{tag} {line}" if line.strip() else line for line in text.split("\n"))
        print(text, flush=True)
        if self.report_dir:
            folder = private.mkdir(self.report_dir, parents=True)
            with private.open_append(folder / f"overflow_rank{rank}.txt") as fh:
                fh.write("\n".join([*file_head, *lines]) + "\n")

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []
        self.flags, self.records, self.grad_flags, self.seen = [], [], [], set()


class DebugUnderflowOverflow:
    """transformers-compatible: DebugUnderflowOverflow(model, max_frames_to_save=21, trace_batch_nums=[],
    abort_after_batch_num=None), plus check_gradients=, report_dir= (per-rank file), check_inputs= and
    check_weights= (both on, as in transformers) and .remove()."""

    def __init__(
        self,
        model,
        max_frames_to_save=21,
        trace_batch_nums=None,
        abort_after_batch_num=None,
        check_gradients=False,
        report_dir=None,
        check_inputs=True,
        check_weights=True,
    ):
        self.model = model
        self._t = _Tracker(
            max_frames_to_save, trace_batch_nums, abort_after_batch_num, report_dir, check_inputs, check_weights
        )
        self._t.name_model(model)
        self.module_names = self._t.names
        model.apply(self._register)
        if check_gradients:
            self._t.watch_gradients(model)

    def _register(self, module):
        self._t.handles.append(module.register_forward_hook(self.forward_hook))

    def forward_hook(self, module, input, output):
        self._t.on_output(module, input, output)
        if module is self.model:  # the model's own hook fires last: the forward is complete
            self._t.end_of_forward()

    @property
    def batch_number(self):
        return self._t.batch_number

    @property
    def detected_overflow(self):
        return self._t.detected_overflow

    @property
    def frames(self):
        return self._t.frames

    def remove(self):
        """Take every hook off the model."""
        self._t.remove()


class _GlobalDetection:
    """Hooks on every module of every model, through torch's global module hooks."""

    def __init__(self, check_gradients=False, **kwargs):
        from torch.nn.modules import module as mod

        self._t = _Tracker(**kwargs)
        self._check_gradients = check_gradients
        self._stack = []
        self._roots = weakref.WeakSet()
        self._handles = [
            mod.register_module_forward_pre_hook(self._pre),
            mod.register_module_forward_hook(self._post, always_call=True),
        ]

    def _pre(self, module, inputs):
        if not self._stack and module not in self._roots:
            self._roots.add(module)
            self._t.name_model(module)
            if self._check_gradients:
                self._t.watch_gradients(module)
        self._stack.append(module)

    def _post(self, module, inputs, output):
        while self._stack and self._stack.pop() is not module:
            pass  # a forward that raised skips nothing now (always_call), but stay robust
        self._t.on_output(module, inputs, output)
        if not self._stack:
            self._t.end_of_forward()

    @property
    def batch_number(self):
        return self._t.batch_number

    def remove(self):
        for h in self._handles:
            h.remove()
        self._t.remove()
        if _active.get("global") is self:
            _active.pop("global")


_active: dict = {}


def enable_overflow_detection(
    max_frames_to_save=21,
    check_gradients=False,
    report_dir=None,
    trace_batch_nums=None,
    abort_after_batch_num=None,
    check_inputs=True,
    check_weights=True,
):
    """Check every module of every model this process runs (no change to the script). Idempotent;
    returns the handle, whose .remove() switches it off."""
    if "global" not in _active:
        _active["global"] = _GlobalDetection(
            check_gradients=check_gradients,
            max_frames_to_save=max_frames_to_save,
            report_dir=report_dir,
            trace_batch_nums=trace_batch_nums,
            abort_after_batch_num=abort_after_batch_num,
            check_inputs=check_inputs,
            check_weights=check_weights,
        )
    return _active["global"]


def disable_overflow_detection():
    if "global" in _active:
        _active["global"].remove()
