"""gpu: is each GPU there and healthy, as DCGM's health watches and the cloud node health checks see it.

From facts["gpu_health"] (clusterdoc/probe/gpuhealth.py: `nvidia-smi -q -x`, the kernel log's XIDs): GPUs the driver
sees vs the count expected, GPUs off the bus, XIDs, uncorrectable ECC, row remaps, retired pages, persistence mode,
clock throttling, PCIe width, MIG and compute mode. FAIL is what `--slurm-health` drains for (a lost GPU, a
short count, an XID that needs a reset new since the last clusterdoc run on the node, uncorrectable ECC since the
driver loaded); the rest warns.
"""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors

CHECK = "gpu"

RESET = "reset the GPU (`nvidia-smi -r -i BUS` with no process on it) or reboot the node"
REBOOT = "drain the node and reboot it (a power cycle if it does not come back)"
RMA = "if it comes back after a reset, open an RMA with the GPU's serial/UUID"
# XID -> (what it means, status, what to do). NVIDIA's XID catalog; the common ones on training clusters.
XIDS = {
    13: (
        "graphics engine exception (often the application: an out-of-bounds access)",
        WARN,
        "look at the job that ran; if it repeats with other jobs, run `dcgmi diag -r 3`",
    ),
    31: (
        "GPU memory page fault (usually the application)",
        WARN,
        "look at the job that ran; if it repeats with other jobs, run `dcgmi diag -r 3`",
    ),
    43: ("GPU stopped processing (an application fault; the GPU is fine)", WARN, "no action unless it repeats"),
    48: ("double-bit ECC error", FAIL, f"{RESET}; {RMA} if it repeats"),
    63: ("ECC page retirement or row remapping recorded", WARN, f"{RESET} when idle to apply it"),
    64: ("ECC page retirement or row remapping failed", FAIL, f"{REBOOT}; RMA the GPU"),
    74: ("NVLink error", FAIL, f"{RESET}; if it repeats, check the NVLink/baseboard ({RMA})"),
    79: ("GPU has fallen off the bus", FAIL, f"{REBOOT}; check its PCIe seating and power; {RMA} if it repeats"),
    92: ("high single-bit ECC error rate", WARN, "watch it; RMA the GPU if it keeps rising"),
    94: ("contained ECC error (the application that hit it was stopped)", WARN, f"{RESET} when idle"),
    95: ("uncontained ECC error (every application on the GPU was stopped)", FAIL, RESET),
    119: ("GSP RPC timeout", FAIL, f"{RESET}; update the driver if it repeats"),
    120: ("GSP error", FAIL, f"{RESET}; update the driver if it repeats"),
}
# Active clock event reasons that mean the GPU is held back by heat or power, not by load or idleness.
BAD_THROTTLE = {
    "hw_slowdown": "HW slowdown",
    "hw_thermal_slowdown": "HW thermal slowdown",
    "hw_power_brake_slowdown": "HW power brake",
    "sw_thermal_slowdown": "SW thermal slowdown",
}
RETIRED_RMA = 60  # retired pages at which NVIDIA's guidance is an RMA


def _gpus(label: str, gpus: list[dict], total: int = 0) -> str:
    """`label` and the GPUs it concerns (bus id, UUID), or "all N GPUs" when it is every one of `total` > 1."""
    if total > 1 and len(gpus) == total:
        return f"{label} all {total} GPUs"
    return (
        f"{label} "
        + ", ".join(f"{g.get('bus')} ({g.get('uuid')})" for g in gpus[:8])
        + (f" and {len(gpus) - 8} more" if len(gpus) > 8 else "")
    )


def check(node: str, facts: dict, expected: int | None = None, expected_from: str = "") -> list[Finding]:
    """`expected`: the GPUs this node should have (--gpus-per-node, or the most common count), None: unknown."""
    out = probe_errors(node, facts, CHECK)
    h = facts.get("gpu_health") or {}
    smi, lost = h.get("smi"), h.get("lost") or []
    if not smi and not lost:
        if expected and not out:
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"no NVIDIA GPU visible (no nvidia-smi), expected {expected} ({expected_from})",
                    "install or repair the NVIDIA driver (its nvidia-smi), or leave this node out of GPU jobs",
                )
            )
        elif not out:
            out.append(finding(node, CHECK, OK, "not applicable: no NVIDIA GPU (no nvidia-smi) on this node"))
        return out
    gpus = (smi or {}).get("gpus") or []
    for g in lost:
        out.append(finding(node, CHECK, FAIL, f"a GPU fell off the bus: {g.get('message')}", f"{REBOOT}; {RMA}"))
    if expected and len(gpus) < expected:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"{len(gpus)} GPU(s) visible, expected {expected} ({expected_from})",
                f"the driver lost a GPU or it is not seated: {REBOOT}; `nvidia-smi -q -x` names the ones it sees",
            )
        )
    out += _xids(node, h.get("xid"))
    out += _memory(node, gpus)
    out += _state(node, gpus)
    if not any(f["status"] != OK for f in out):
        out.append(finding(node, CHECK, OK, f"{len(gpus)} GPU(s) healthy (UUIDs in the JSON facts)"))
    return out


def _xids(node: str, xid: dict | None) -> list[Finding]:
    """XIDs new since the last clusterdoc run on the node (its state file), or since boot on a first run, judged
    by the catalog; older ones of this boot are shown as seen before, never failed: a GPU reset without a reboot
    must not keep the node drained (a GPU still lost or short fails on its own)."""
    if not xid:
        return [finding(node, CHECK, OK, "kernel log not readable (dmesg_restrict): XIDs not checked")]
    events = xid.get("events") or []
    first_run = xid.get("since") is None
    new = len(events) if first_run else min(max(xid.get("new") or 0, 0), len(events))
    out = []
    for fresh, group in ((True, events[len(events) - new :]), (False, events[: len(events) - new])):
        by_xid: dict[int, list[dict]] = {}
        for e in group:
            by_xid.setdefault(e.get("xid"), []).append(e)
        for num, hits in sorted(by_xid.items()):
            meaning, status, fix = XIDS.get(
                num, ("see NVIDIA's XID catalog", WARN, "look it up in NVIDIA's XID catalog")
            )
            buses = ", ".join(sorted({str(e.get("bus")) for e in hits}))
            when = "since boot (no earlier clusterdoc run)" if first_run else "new since the last clusterdoc run"
            if not fresh:
                when = "this boot, seen by an earlier clusterdoc run (not new)"
                status = WARN if status == FAIL else OK
                fix = f"if the GPU was reset since, nothing to do; else: {fix}"
            out.append(
                finding(
                    node,
                    CHECK,
                    status,
                    f"XID {num} ({meaning}) x{len(hits)} on PCI {buses} {when} "
                    f"(from {xid.get('source')}: {hits[-1].get('text')})",
                    fix,
                )
            )
    return out


def _memory(node: str, gpus: list[dict]) -> list[Finding]:
    out = []
    vol = [g for g in gpus if ((g.get("ecc") or {}).get("volatile_uncorrectable") or 0) > 0]
    agg = [g for g in gpus if ((g.get("ecc") or {}).get("aggregate_uncorrectable") or 0) > 0 and g not in vol]
    if vol:
        n = sum(g["ecc"]["volatile_uncorrectable"] for g in vol)
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                _gpus(f"{n} uncorrectable ECC error(s) since the driver loaded on", vol, len(gpus)),
                f"{RESET}; {RMA} if they come back",
            )
        )
    if agg:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                _gpus("uncorrectable ECC errors in the GPU's lifetime (none now) on", agg, len(gpus)),
                "watch it (`nvidia-smi -q -d ECC,ROW_REMAPPER`); RMA the GPU if they keep coming",
            )
        )
    failed = [g for g in gpus if (g.get("remap") or {}).get("failure")]
    if failed:
        out.append(
            finding(node, CHECK, FAIL, _gpus("row remapping failed on", failed, len(gpus)), f"{REBOOT}; RMA the GPU")
        )
    pending = [g for g in gpus if (g.get("remap") or {}).get("pending")]
    if pending:
        rows = sum((g["remap"].get("uncorrectable") or 0) + (g["remap"].get("correctable") or 0) for g in pending)
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                _gpus(f"row remapping pending ({rows} row(s) remapped) on", pending, len(gpus)),
                f"{RESET} when it is idle: the remap takes effect only then",
            )
        )
    retired = [g for g in gpus if (g.get("retired") or {}).get("pending")]
    if retired:
        out.append(
            finding(node, CHECK, WARN, _gpus("page retirement pending on", retired, len(gpus)), f"{RESET} when idle")
        )
    many = [
        g for g in gpus if sum(v or 0 for k, v in (g.get("retired") or {}).items() if k != "pending") >= RETIRED_RMA
    ]
    if many:
        out.append(
            finding(node, CHECK, FAIL, _gpus(f">= {RETIRED_RMA} retired pages on", many, len(gpus)), "RMA the GPU")
        )
    return out


def _state(node: str, gpus: list[dict]) -> list[Finding]:
    out = []
    off = [g for g in gpus if g.get("persistence") == "Disabled"]
    if off:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                _gpus("persistence mode off on", off, len(gpus)),
                "enable nvidia-persistenced (or `nvidia-smi -pm 1`): without it every job start re-initialises "
                "the GPUs (seconds each) and ECC/XID state can be lost between jobs",
            )
        )
    hot: dict[str, list[dict]] = {}
    for g in gpus:
        for r in g.get("throttle") or []:
            if r in BAD_THROTTLE:
                hot.setdefault(r, []).append(g)
    for r, gs in sorted(hot.items()):
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                _gpus(f"clocks held down ({BAD_THROTTLE[r]} active) on", gs, len(gpus)),
                "the slowest GPU sets every synchronous step's pace: check cooling, fans, power supplies and "
                "the BMC's event log (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`)",
            )
        )
    narrow = [
        g
        for g in gpus
        if (g.get("pcie") or {}).get("width")
        and (g.get("pcie") or {}).get("width_max")
        and g["pcie"]["width"] < g["pcie"]["width_max"]
    ]
    if narrow:
        widths = sorted({f"x{g['pcie']['width']} of x{g['pcie']['width_max']}" for g in narrow})
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                _gpus(f"PCIe link trained at {', '.join(widths)} on", narrow, len(gpus)),
                "reseat the GPU or its riser, check the slot's BIOS bifurcation setting; host<->GPU copies "
                "run at a fraction of their speed until then",
            )
        )
    mig = [g for g in gpus if g.get("mig") == "Enabled"]
    if mig:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                _gpus("MIG mode on (a job sees slices, not whole GPUs) on", mig, len(gpus)),
                "`nvidia-smi -mig 0` (then a GPU reset) if the job expects whole GPUs",
            )
        )
    for mode in sorted({str(g["compute_mode"]) for g in gpus if g.get("compute_mode") not in (None, "Default")}):
        gs = [g for g in gpus if g.get("compute_mode") == mode]
        status = FAIL if mode == "Prohibited" else WARN
        out.append(
            finding(
                node,
                CHECK,
                status,
                _gpus(f"compute mode {mode} on", gs, len(gpus)),
                "`nvidia-smi -c DEFAULT`: in Exclusive_Process mode a second process on a GPU (a helper, a "
                "second rank, a profiler) fails with 'all CUDA-capable devices are busy'",
            )
        )
    return out


def expected_counts(all_facts: dict[str, dict], gpus_per_node: int | None) -> tuple[dict[str, int], str]:
    """{node: GPUs expected} and where that number comes from: --gpus-per-node (with --slurm-health: the node's Slurm
    gres, cli.py), else the count most nodes with GPUs show (a strict majority; none when the nodes split evenly)."""
    if gpus_per_node:
        return {n: gpus_per_node for n in all_facts}, "--gpus-per-node, or with --slurm-health the node's Slurm gres"
    counts = {}
    for n, f in all_facts.items():
        h = (f or {}).get("gpu_health") or {}
        if h.get("smi") or h.get("lost"):
            counts[n] = len((h.get("smi") or {}).get("gpus") or [])
    tally: dict[int, int] = {}
    for c in counts.values():
        tally[c] = tally.get(c, 0) + 1
    ranked = sorted(tally.items(), key=lambda kv: -kv[1])
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return {}, ""
    return {n: ranked[0][0] for n in counts}, f"what {ranked[0][1]} of {len(counts)} GPU nodes have"
