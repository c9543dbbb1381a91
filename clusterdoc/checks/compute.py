"""compute: the GPUs' compute mode (nvidia-smi's <compute_mode>) against the job's layout on the node.

`Default` lets any number of processes use a GPU. `Prohibited` lets none: no CUDA context can be made, the job
cannot run there (FAIL). `Exclusive_Process` (and `Exclusive_Thread`, its form on old drivers) lets one process
per GPU: sites set it on purpose (LSF's `-gpu mode=exclusive_process`, the MPS server's recommended mode), and one
rank per GPU, as torchrun and DeepSpeed start them, runs fine in it, so it is only a note (shown with -v), unless
the job would put two ranks on one GPU: more ranks per node (--tasks-per-node) than GPUs the job sees (WARN: the
second fails with 'all CUDA-capable devices are busy or unavailable', unless an MPS server shares the GPU).
The facts are the probe's `gpu_health.smi.gpus[].compute_mode` (probe/gpuhealth.py, from `nvidia-smi -q -x`) and
the job's CUDA_VISIBLE_DEVICES (env).
"""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding
from clusterdoc.checks.gpuhealth import _gpus
from clusterdoc.checks.spec import Check

CHECK = "compute"
EXCLUSIVE = ("Exclusive_Process", "Exclusive_Thread")
BUSY = "'all CUDA-capable devices are busy or unavailable'"


def visible(gpus: list[dict], cvd: str | None) -> list[dict] | None:
    """The GPUs CUDA_VISIBLE_DEVICES leaves the job (all when unset), None when it cannot be told: an index where
    the GPUs differ in model (CUDA's default order is fastest first, not nvidia-smi's bus order), a MIG device,
    an index or UUID the node does not have."""
    if cvd is None or not cvd.strip():
        return gpus
    out = []
    for item in (x.strip() for x in cvd.split(",")):
        if item.isdigit():
            if len({g.get("name") for g in gpus}) > 1 or int(item) >= len(gpus):
                return None
            out.append(gpus[int(item)])
        elif item.startswith("GPU-"):
            match = [g for g in gpus if str(g.get("uuid") or "").startswith(item)]
            if len(match) != 1:
                return None
            out.append(match[0])
        else:  # MIG-..., or a negative or bad entry (CUDA stops there)
            return None
    return out


def check(node: str, facts: dict, tasks_per_node: int | None = None) -> list[Finding]:
    smi = (facts.get("gpu_health") or {}).get("smi") or {}
    gpus = smi.get("gpus") or []
    if not gpus:
        return [finding(node, CHECK, OK, "not applicable: no GPU listed by nvidia-smi -q -x")]
    cvd = (facts.get("env") or {}).get("CUDA_VISIBLE_DEVICES")
    seen = visible(gpus, cvd)
    used = gpus if seen is None else seen
    out = []
    prohibited = [g for g in used if g.get("compute_mode") == "Prohibited"]
    if prohibited:
        sure = seen is not None
        out.append(
            finding(
                node,
                CHECK,
                FAIL if sure else WARN,
                _gpus("compute mode Prohibited (no process may use the GPU) on", prohibited, len(gpus))
                + ("" if sure else f"; whether the job uses them depends on CUDA_VISIBLE_DEVICES={cvd}"),
                "`nvidia-smi -i <bus> -c DEFAULT` as root (or ask the admins: the scheduler may set it), or leave "
                "these GPUs out (CUDA_VISIBLE_DEVICES)",
            )
        )
    exclusive = [g for g in used if g.get("compute_mode") in EXCLUSIVE]
    if exclusive:
        usable = len(used) - len(prohibited)
        modes = "/".join(sorted({str(g["compute_mode"]) for g in exclusive}))
        if seen is not None and tasks_per_node and tasks_per_node > usable:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"{tasks_per_node} ranks per node on {usable} usable GPU(s), "
                    + _gpus(f"in compute mode {modes}:", exclusive, len(gpus))
                    + f": a second rank on a GPU fails with {BUSY}, unless an MPS server shares it",
                    f"run at most {usable} rank(s) per node (one per GPU), or `nvidia-smi -c DEFAULT`",
                )
            )
        else:
            out.append(
                finding(
                    node,
                    CHECK,
                    OK,
                    _gpus(f"compute mode {modes} (one process per GPU) on", exclusive, len(gpus))
                    + ": fine for one rank per GPU (torchrun, DeepSpeed); a second process on a GPU (a rank that "
                    f"touches cuda:0 before set_device, a profiler) fails with {BUSY}",
                )
            )
    if not out:
        out.append(finding(node, CHECK, OK, f"compute mode Default on {len(used)} GPU(s)"))
    return out


CHECKS = (
    Check(
        "compute",
        105,
        "no GPU Prohibited, Exclusive_Process only with one rank per GPU",
        reads=("gpu_health", "env"),
        allocation=True,
        node=lambda c: check(c.node, c.facts, c.opts.tasks_per_node),
    ),
)
