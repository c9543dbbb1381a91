"""inf/nan detection in forward (and optionally backward), transformers' DebugUnderflowOverflow API.

Hot path: per module output one on-device reduction (a float32 sum: inf and nan survive a sum, so a
non-finite sum flags the output) appended to a list; the top-level module's forward hook stacks the
flags and syncs once per forward. Only when a flag is non-finite does the slow path run: it finds
the first module whose output really is non-finite (exact isfinite, so a sum that overflowed on
finite values is not reported) and prints transformers' report of the frames leading to it, with
a rank tag, also appended to a per-rank file. transformers' version syncs 4 times per tensor.

Frames keep references (not copies) to each module's inputs and outputs until the end of the
forward; outputs modified in place later in the forward are reported with their later values.
"""

from __future__ import annotations

import collections
import os
import weakref

import torch

from clusterdoc import private

_Tensor = torch.Tensor
_F32 = torch.float32
_WIDE = (torch.float32, torch.float64)
PREFIX = "                 "


class OverflowDetected(ValueError):
    """inf/nan found; a ValueError like transformers' DebugUnderflowOverflow raises."""


def _tag():
    from .logging import _HOST, _where

    rank, world = _where()
    return rank, world, f"[rank {rank}/{world} {_HOST}]"


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

    def __init__(self, max_frames_to_save=21, trace_batch_nums=(), abort_after_batch_num=None, report_dir=None):
        self.max_frames = max_frames_to_save
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
            self._print([self._frame(module, inputs, output)])
            return
        tensors = (output,) if type(output) is _Tensor else [t for _, t in _tensors(output, "output")]
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
        if flags:
            import torch

            if not bool(torch.isfinite(torch.stack(flags)).all()):
                self._report_forward(records, batch)
        del records
        if self.abort_after_batch_num is not None and self.batch_number > self.abort_after_batch_num:
            raise OverflowDetected(
                f"DebugUnderflowOverflow: aborting after {self.batch_number} batches due to "
                f"`abort_after_batch_num={self.abort_after_batch_num}` arg"
            )

    def _frame(self, module, inputs, output):
        lines = [f"{PREFIX} {self.names.get(module, '?')} {module.__class__.__name__}"]
        for name, p in module.named_parameters(recurse=False):
            lines.append(_line(p, name))
        lines += [_line(x, c) for c, x in _tensors(inputs, "input")]
        lines += [_line(x, c) for c, x in _tensors(output, "output")]
        return "\n".join(lines)

    def _report_forward(self, records, batch):
        bad = [
            i
            for i, (_module, _inputs, output) in enumerate(records)
            if not all(_finite(t) for _, t in _tensors(output, "output"))
        ]
        if not bad:
            return  # a float32 sum overflowed on finite values: nothing to report
        i = bad[0]
        self.detected_overflow = True
        self.frames.clear()
        for rec in records[max(0, i - self.max_frames + 1) : i + 1]:
            self.frames.append(self._frame(*rec))
        name = f"{self.names.get(records[i][0], '?')} {records[i][0].__class__.__name__}"
        header = [
            f"\nDetected inf/nan during batch_number={batch}",
            f"first non-finite output in module: {name}",
            f"Last {len(self.frames)} forward frames:",
            f"{'abs min':8} {'abs max':8} metadata",
        ]
        self._print(header + list(self.frames) + ["\n"])
        self.frames.clear()
        raise OverflowDetected(
            f"DebugUnderflowOverflow: inf/nan detected in the output of {name} (batch_number={batch}), aborting "
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
    def _print(self, lines):
        rank, _, tag = _tag()
        text = "\n".join(f"{tag} {line}" if line.strip() else line for line in "\n".join(lines).split("\n"))
        print(text, flush=True)
        if self.report_dir:
            folder = private.mkdir(self.report_dir, parents=True)
            with private.open_append(folder / f"overflow_rank{rank}.txt") as fh:
                fh.write("\n".join(lines) + "\n")

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []
        self.flags, self.records, self.grad_flags, self.seen = [], [], [], set()


class DebugUnderflowOverflow:
    """transformers-compatible: DebugUnderflowOverflow(model, max_frames_to_save=21, trace_batch_nums=[],
    abort_after_batch_num=None), plus check_gradients=, report_dir= (per-rank file) and .remove()."""

    def __init__(
        self,
        model,
        max_frames_to_save=21,
        trace_batch_nums=None,
        abort_after_batch_num=None,
        check_gradients=False,
        report_dir=None,
    ):
        self.model = model
        self._t = _Tracker(max_frames_to_save, trace_batch_nums, abort_after_batch_num, report_dir)
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
    max_frames_to_save=21, check_gradients=False, report_dir=None, trace_batch_nums=None, abort_after_batch_num=None
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
        )
    return _active["global"]


def disable_overflow_detection():
    if "global" in _active:
        _active["global"].remove()
