"""gpu: is each GPU there and healthy, as DCGM's health watches and the cloud node health checks see it.

From facts["gpu_health"] (clusterdoc/probe/gpuhealth.py: `nvidia-smi -q -x`, the kernel log's XIDs): GPUs the driver
sees vs the count expected, GPUs off the bus, XIDs, uncorrectable ECC, row remaps, retired pages, persistence mode,
clock throttling, PCIe width and MIG (the compute mode is checks/compute.py's). FAIL is what `--slurm-health` drains
for (a lost GPU, a short count, an XID that needs a reset new since the last clusterdoc run on the node,
uncorrectable ECC since the driver loaded); the rest warns.
"""

from __future__ import annotations

import re

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check, Shared

CHECK = "gpu"

RESET = "reset the GPU (`nvidia-smi -r -i BUS` with no process on it) or reboot the node"
REBOOT = "drain the node and reboot it (a power cycle if it does not come back)"
RMA = "if it comes back after a reset, open an RMA with the GPU's serial/UUID"
APP = "restart the job; if it repeats with other jobs on this GPU, run `dcgmi diag -r 3` and reset the GPU"
MECHANICALS = "check its PCIe/NVLink seating, cables and power"
# NVIDIA's XID catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, as of driver R580): XID ->
# (its description, its immediate resolution bucket). The buckets decide the status and the fix (BUCKETS).
CATALOG = {
    8: ("GPU stopped processing", "RESTART_APP"),
    11: ("invalid or corrupted push buffer stream", "RESTART_APP"),
    13: ("graphics engine exception (often the application: an out-of-bounds access)", "RESTART_APP"),
    25: ("invalid or illegal push buffer stream", "RESTART_APP"),
    31: ("GPU memory page fault (usually the application)", "RESTART_APP"),
    32: ("invalid or corrupted push buffer stream", "RESTART_APP"),
    37: ("driver firmware error", "IGNORE"),
    38: ("driver firmware error", "IGNORE"),
    39: ("copy engine exception", "RESTART_APP"),
    40: ("copy engine exception", "RESTART_APP"),
    41: ("copy engine exception", "RESTART_APP"),
    43: ("GPU stopped processing (an application fault; the GPU is fine)", "IGNORE"),
    44: ("graphics engine fault during context switch", "IGNORE"),
    45: (
        "preemptive cleanup after an earlier error (the channel was stopped because of another XID)",
        "WORKFLOW_XID_45",
    ),
    46: ("GPU stopped processing", "RESET_GPU"),
    48: ("double-bit ECC error", "RESET_GPU"),
    54: ("auxiliary power is not connected to the GPU board", "CHECK_MECHANICALS"),
    60: ("video processor exception", "RESTART_APP"),
    62: ("internal micro-controller halt", "RESET_GPU"),
    63: ("ECC page retirement or row remapping recorded", "IGNORE_ALL"),
    64: ("ECC page retirement or row remapping failed", "RESET_GPU"),
    66: ("illegal access by driver", "IGNORE"),
    67: ("illegal access by driver", "IGNORE"),
    68: ("video decoder exception", "RESTART_APP"),
    69: ("graphics engine class error", "RESTART_APP"),
    74: ("NVLink error", "RESET_GPU"),
    78: ("vGPU start error", "UPDATE_SWFW"),
    79: ("GPU has fallen off the bus", "RESTART_BM"),
    80: ("corrupted data sent to the GPU", "RESTART_APP"),
    92: ("high single-bit ECC error rate", "IGNORE"),
    93: ("InfoROM wear limit exceeded (non-fatal)", "IGNORE"),
    94: ("contained ECC error (the application that hit it was stopped)", "RESTART_APP"),
    95: ("uncontained ECC error (every application on the GPU was stopped)", "RESET_GPU"),
    109: ("context switch timeout", "RESET_GPU"),
    110: ("security fault error", "RESET_GPU"),
    119: ("GSP RPC timeout", "RESET_GPU"),
    120: ("GSP error", "RESET_GPU"),
    121: ("C2C link error", "IGNORE"),
    136: ("link training failed", "RESET_GPU"),
    137: ("NVLink privilege error", "IGNORE"),
    140: ("unrecovered ECC error", "RESET_GPU"),
    141: ("CUDA fast path error", "IGNORE"),
    143: ("GPU initialization error", "RESET_GPU"),
    144: ("NVLink 5 SAW error", "WORKFLOW_NVLINK5_ERR"),
    145: ("NVLink 5 RLW error", "WORKFLOW_NVLINK5_ERR"),
    146: ("NVLink 5 TLW error", "WORKFLOW_NVLINK5_ERR"),
    147: ("NVLink 5 TREX error", "WORKFLOW_NVLINK5_ERR"),
    148: ("NVLink 5 NVLPW control error", "WORKFLOW_NVLINK5_ERR"),
    149: ("NVLink 5 NETIR error", "WORKFLOW_NVLINK5_ERR"),
    150: ("NVLink 5 MSE error", "WORKFLOW_NVLINK5_ERR"),
    151: ("key rotation error (confidential computing)", "RESTART_VM"),
    154: ("the driver changed the GPU's recovery action", "XID_154"),
    155: ("NVLink software-defined error", "RESET_GPU"),
    156: ("resource retirement event", "RESET_GPU"),
    157: ("resource retirement failure", "IGNORE"),
    158: ("GPU fatal timeout", "RESET_GPU"),
    159: ("CHI non-data error", "CHECK_UVM"),
    160: ("channel retirement event", "IGNORE"),
    161: ("channel retirement failure", "IGNORE"),
}
# resolution bucket -> (status, what to do). FAIL: the GPU needs a reset or the node a reboot before the next job.
BUCKETS = {
    "RESTART_APP": (WARN, APP),
    "IGNORE": (WARN, "no action now; if it keeps coming, contact NVIDIA support with `nvidia-bug-report.sh`"),
    "IGNORE_ALL": (OK, "no action (a pending row remap or page retirement is named on its own)"),
    "WORKFLOW_XID_45": (WARN, "act on the XID that caused it (the message names it); alone, no action"),
    "RESET_GPU": (FAIL, f"{RESET}; {RMA} if it repeats"),
    "RESTART_BM": (FAIL, f"{REBOOT}; {MECHANICALS}; {RMA} if it repeats"),
    "CHECK_MECHANICALS": (FAIL, f"{MECHANICALS}, then reboot"),
    "UPDATE_SWFW": (WARN, "update the driver and firmware (vGPU manager and guest driver must match)"),
    "RESTART_VM": (FAIL, "restart the VM"),
    "CHECK_UVM": (WARN, "restart the job; check the nvidia-uvm module and the application's memory use"),
    "WORKFLOW_NVLINK5_ERR": (FAIL, f"{RESET}; {MECHANICALS} if it repeats"),
    "XID_154": (FAIL, RESET),
}
NVLINK5 = range(144, 151)  # "... Fatal ..." needs a reset; "... Nonfatal ..." is corrected: watch it
# XID 154's message and nvidia-smi's gpu_recovery_action: what the driver asks for
RECOVERY = {
    "gpu reset": (FAIL, RESET),
    "node reboot": (FAIL, REBOOT),
    "drain p2p": (FAIL, "drain the GPU's peer-to-peer traffic (finish or stop the node's jobs), then reset the GPU"),
    "drain and reset": (FAIL, "drain the node's jobs, then reset the GPU"),
    "bus reset": (FAIL, "reset the GPU's PCIe bus (or reboot the node)"),
    "system reboot": (FAIL, REBOOT),
    "recover imex domain": (FAIL, "recover the IMEX domain (restart nvidia-imex on the domain's nodes)"),
}


def xid_status(num: int, texts: list[str]) -> tuple[str, str, str]:
    """(meaning, status, fix) of an XID, by its catalog bucket, refined by its messages where the catalog says
    the message decides (XID 154 names the action; NVLink 5 XIDs say Fatal or Non-fatal)."""
    meaning, bucket = CATALOG.get(num, ("not in clusterdoc's copy of NVIDIA's XID catalog", ""))
    status, fix = BUCKETS.get(bucket, (WARN, "look it up in NVIDIA's XID catalog"))
    if num == 154:
        asked = [a for a in (_recovery(t.split(" to ", 1)[-1]) for t in texts) if a]
        if asked:
            return f"{meaning}: {asked[-1][2]}", asked[-1][0], asked[-1][1]
    if num in NVLINK5 and texts and all(re.search(r"non-?fatal", t, re.I) for t in texts):
        return (
            f"{meaning} (non-fatal, corrected)",
            WARN,
            "watch it (`nvidia-smi nvlink -e`); reset the GPU if it repeats",
        )
    return meaning, status, fix


def _recovery(text: str | None) -> tuple[str, str, str] | None:
    """(status, fix, the driver's words) of a recovery action ("GPU Reset Required", "0x1 (GPU Reset Required)",
    "Drain and Reset"); None: no action ("None") or not known."""
    low = (text or "").lower()
    for key, (status, fix) in RECOVERY.items():
        if key in low:
            return status, fix, (text or "").strip()[:80]
    return None


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


def check(
    node: str, facts: dict, expected: int | None = None, expected_from: str = "", pcie: dict | None = None
) -> list[Finding]:
    """`expected`: the GPUs this node should have (--gpus-per-node, or the most common count), None: unknown.
    `pcie`: {GPU model: widest PCIe link its peers train at} across the cluster (pcie_reference); None: this node's."""
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
        which = f"GPU{g['index']}" if g.get("index") is not None else ""
        which += (f" (PCI {g['bus']})" if which else f"PCI {g['bus']}") if g.get("bus") else ""
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"a GPU fell off the bus: {which or 'one GPU'} (nvidia-smi: {g.get('message')})",
                f"{REBOOT}; {MECHANICALS}; {RMA}",
            )
        )
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
    out += _xids(node, h.get("xid"), gpus)
    out += _faults(node, h.get("xid"), gpus, lost)
    out += _memory(node, gpus)
    out += _recovery_fields(node, gpus)
    out += _state(node, gpus)
    out += _pcie(node, gpus, pcie if pcie is not None else pcie_reference({node: facts}))
    out += _dcgm(node, h.get("dcgm"))
    if not any(f["status"] != OK for f in out):
        out.append(finding(node, CHECK, OK, f"{len(gpus)} GPU(s) healthy (UUIDs in the JSON facts)"))
    return out


def _bus_key(bus) -> str:
    """ "PCI:0000:5f:00", "00000000:5F:00.0" -> "0000:5f:00" (domain:bus:device)."""
    parts = str(bus or "").lower().replace("pci:", "").split(":")
    if len(parts) < 3:
        return str(bus or "").lower()
    try:
        domain = int(parts[-3][-8:] or "0", 16)
    except ValueError:
        return str(bus).lower()
    return f"{domain:04x}:{parts[-2]}:{parts[-1].split('.')[0]}"


def _xid_groups(xid: dict) -> list[tuple[int, list[str], int, int, list[str]]]:
    """[(xid, buses, events, new events, the sample's messages)] from the probe's counts (every event of the log)
    or, from older facts, its events."""
    events = [e for e in xid.get("events") or [] if e]
    counts = [c for c in xid.get("counts") or [] if c]
    first_run = xid.get("since") is None
    if counts:
        fresh = counts if first_run else [c for c in xid.get("new_counts") or [] if c]
    else:  # facts of an older probe: the sample is all there is
        counts = [{"xid": e.get("xid"), "bus": e.get("bus"), "n": 1} for e in events]
        n_new = len(events) if first_run else min(max(xid.get("new") or 0, 0), len(events))
        fresh = counts[len(counts) - n_new :]
    groups: dict[int, list] = {}
    for c in counts:
        g = groups.setdefault(c.get("xid"), [set(), 0, 0])
        g[0].add(_bus_key(c.get("bus")))
        g[1] += c.get("n") or 0
    for c in fresh:
        if c.get("xid") in groups:
            groups[c.get("xid")][2] += c.get("n") or 0
    return [
        (num, sorted(g[0]), g[1], g[2], [str(e.get("text") or "") for e in events if e.get("xid") == num])
        for num, g in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
    ]


def _xids(node: str, xid: dict | None, gpus: list[dict] | None = None) -> list[Finding]:
    """XIDs new since the last clusterdoc run on the node (its state file), or since boot on a first run, judged
    by the catalog (every event counted, not only the probe's sample); older ones of this boot are shown as seen
    before, never failed: a GPU reset without a reboot must not keep the node drained (a GPU still lost or short
    fails on its own). Each names its GPUs: PCI id, and the UUID where nvidia-smi still sees the GPU."""
    if not xid:
        return [finding(node, CHECK, OK, "kernel log not readable (dmesg_restrict): XIDs not checked")]
    first_run = xid.get("since") is None
    uuids = {_bus_key(g.get("bus")): g.get("uuid") for g in gpus or [] if g.get("bus")}
    out = []
    for num, buses, n, n_new, texts in _xid_groups(xid):
        meaning, status, fix = xid_status(num, texts)
        where = ", ".join(f"{b} ({uuids[b]})" if uuids.get(b) else b for b in buses[:8])
        where += f" and {len(buses) - 8} more" if len(buses) > 8 else ""
        when = "since boot (no earlier clusterdoc run)" if first_run else f"{n_new} new since the last clusterdoc run"
        if not n_new:
            when = "this boot, seen by an earlier clusterdoc run (not new)"
            status = WARN if status == FAIL else OK
            fix = f"if the GPU was reset since, nothing to do; else: {fix}"
        last = f": {texts[-1]}" if texts else ""
        out.append(
            finding(
                node,
                CHECK,
                status,
                f"XID {num} ({meaning}) x{n} on PCI {where} {when} (from {xid.get('source')}{last})",
                fix,
            )
        )
    return out


# faults the driver reports without an Xid line (probe: _fault): what it means, what to do
FAULTS = {
    "init": (
        "the driver could not bring it up (RmInitAdapter failed / Cannot attach gpu): no job can use it",
        f"{REBOOT}; if it stays, {MECHANICALS} and that the driver matches the GPU (`dmesg | grep NVRM`); {RMA}",
    ),
    "power": (
        "its auxiliary power is not connected: the driver could not bring it up",
        "power the node off and connect the GPU's auxiliary power cables (the PSU's cable the card needs: "
        "PCIe or CPU/EPS 8-pin), then check it comes up in `nvidia-smi`",
    ),
    "gsp": (
        "its GSP firmware stopped answering (heartbeat or RPC timeout, memory subsystem error)",
        f"{RESET}; {RMA} if it repeats",
    ),
}


def _fault_gpu(f: dict, xid: dict, gpus: list[dict], lost: list[dict]) -> tuple[str | None, str]:
    """(bus id, words) of the GPU a driver fault names: its bus id (and UUID), else the driver's index mapped to a
    bus id where the facts allow (a message of the same log naming both; GPU0 on a node with one GPU), else the
    index, said so."""
    uuids = {_bus_key(g.get("bus")): g.get("uuid") for g in gpus if g.get("bus")}
    bus, index = f.get("bus"), f.get("gpu")
    via = ""
    if not bus and index is not None:
        bus = (xid.get("gpu_bus") or {}).get(str(index))
        via = f"GPU{index} (the driver's numbering) = " if bus else ""
        if not bus and index == 0 and len(gpus) + len(lost) == 1 and gpus and gpus[0].get("bus"):
            bus, via = gpus[0]["bus"], f"GPU{index} (the driver's numbering; the node's only GPU) = "
    if bus:
        uuid = uuids.get(_bus_key(bus))
        return bus, f"{via}PCI {bus}" + (f" ({uuid})" if uuid else "")
    if index is not None:
        return None, f"GPU{index} (the driver's numbering; no message names its bus id)"
    return None, "a GPU the message does not name"


def _faults(node: str, xid: dict | None, gpus: list[dict], lost: list[dict]) -> list[Finding]:
    """GPU faults without an Xid line (the driver's init failures, missing power, GSP timeouts), judged as XIDs
    are: FAIL when new since the last clusterdoc run (or since boot on a first run), else shown as seen before."""
    if not xid:
        return []
    first_run = xid.get("since") is None
    out = []
    for f in [f for f in xid.get("faults") or [] if f and f.get("kind") in FAULTS][:16]:
        meaning, fix = FAULTS[f["kind"]]
        _, gpu = _fault_gpu(f, xid, gpus, lost)
        n = f.get("n") or 0
        n_new = n if first_run else f.get("new") or 0
        status = FAIL if n_new else WARN
        when = "since boot (no earlier clusterdoc run)" if first_run else f"{n_new} new since the last clusterdoc run"
        if not n_new:
            when, fix = (
                "this boot, seen by an earlier clusterdoc run (not new)",
                f"if the GPU was reset since, nothing to do; else: {fix}",
            )
        out.append(
            finding(
                node,
                CHECK,
                status,
                f"{gpu}: {meaning}; x{n} {when} (from {xid.get('source')}: NVRM: {f.get('text')})",
                fix,
            )
        )
    return out


def _recovery_fields(node: str, gpus: list[dict]) -> list[Finding]:
    """What the driver itself says a GPU needs (nvidia-smi -q: GPU Recovery Action, reset status, pending repairs)."""
    out = []
    for g in gpus:
        r = g.get("recovery") or {}
        name = _gpus("", [g]).strip()
        asked = _recovery(r.get("action"))
        if asked:
            out.append(finding(node, CHECK, asked[0], f"the driver asks for '{asked[2]}' on {name}", asked[1]))
        elif r.get("reset_required"):
            out.append(finding(node, CHECK, FAIL, f"the driver says {name} needs a reset", RESET))
        if r.get("unrepairable_memory"):
            out.append(finding(node, CHECK, FAIL, f"unrepairable memory on {name}", f"{REBOOT}; RMA the GPU"))
        pending = [k.replace("_", " ") for k in ("channel_repair_pending", "tpc_repair_pending") if r.get(k)]
        if r.get("drain_and_reset_recommended") and not asked:
            pending.append("drain and reset recommended")
        if pending:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"{', '.join(pending)} on {name}",
                    f"drain the node's jobs and {RESET} when convenient: the repair takes effect only then",
                )
            )
    return out


def pcie_reference(all_facts: dict[str, dict]) -> dict[str, int]:
    """{GPU model: the widest PCIe link width GPUs of that model train at in these nodes}: a GPU's width is judged
    against its peers, not its own maximum (cloud T4/A10G and dual-GPU boards run every GPU at x8 of x16)."""
    ref: dict[str, int] = {}
    for f in all_facts.values():
        for g in (((f or {}).get("gpu_health") or {}).get("smi") or {}).get("gpus") or []:
            width = (g.get("pcie") or {}).get("width")
            if g.get("name") and width:
                ref[g["name"]] = max(ref.get(g["name"], 0), width)
    return ref


def _pcie(node: str, gpus: list[dict], ref: dict) -> list[Finding]:
    narrow = [
        g for g in gpus if (g.get("pcie") or {}).get("width") and ref.get(g.get("name") or "", 0) > g["pcie"]["width"]
    ]
    if not narrow:
        return []
    widths = sorted(
        {f"x{g['pcie']['width']} where peers of the same model ({g.get('name')}) run x{ref[g['name']]}" for g in narrow}
    )
    return [
        finding(
            node,
            CHECK,
            WARN,
            _gpus(f"PCIe link trained at {'; '.join(widths)} on", narrow, len(gpus)),
            "reseat the GPU or its riser, check the slot's BIOS bifurcation setting; host<->GPU copies "
            "run at a fraction of their speed until then",
        )
    ]


def _dcgm(node: str, dcgm: dict | None) -> list[Finding]:
    """DCGM's quick diagnostic and health watches, where DCGM is installed (the probe ran dcgmi)."""
    if not dcgm:
        return []
    out = []
    diag = dcgm.get("diag") or {}
    for r in (diag.get("results") or [])[:16]:
        if not r:
            continue
        status = FAIL if str(r.get("status")).lower() in ("fail", "error") else WARN
        gpu = f" on GPU {r.get('gpu')}" if r.get("gpu") is not None else ""
        out.append(
            finding(
                node,
                CHECK,
                status,
                f"DCGM diagnostic (dcgmi diag -r 1): {r.get('test')} {r.get('status')}{gpu}"
                + (f": {r['detail']}" if r.get("detail") else ""),
                "follow DCGM's message; `dcgmi diag -r 3` for the full run on an idle node",
            )
        )
    if diag.get("error"):
        out.append(finding(node, CHECK, OK, f"DCGM installed but its diagnostic did not run: {diag['error']}"))
    health = dcgm.get("health") or {}
    overall = str(health.get("overall") or "")
    if overall and overall.lower() not in ("healthy", "pass"):
        incidents = "; ".join(i for i in (health.get("incidents") or [])[:4] if i)
        out.append(
            finding(
                node,
                CHECK,
                FAIL if overall.lower() in ("failure", "fail") else WARN,
                f"DCGM health watches: {overall}" + (f" ({incidents})" if incidents else ""),
                "`dcgmi health -c` names the system (PCIe, memory, NVLink, thermal...); act on it, then "
                "`dcgmi health --clear`",
            )
        )
    if diag.get("tests") and not diag.get("results") and not out:
        out.append(finding(node, CHECK, OK, f"DCGM quick diagnostic passed ({diag['tests']} tests)"))
    return out


def _memory(node: str, gpus: list[dict]) -> list[Finding]:
    out = []

    def volatile(g):  # with MIG on, each MIG device counts its own (the GPU's reads N/A)
        ecc = g.get("ecc") or {}
        return (ecc.get("volatile_uncorrectable") or 0) + (ecc.get("mig_volatile_uncorrectable") or 0)

    vol = [g for g in gpus if volatile(g) > 0]
    agg = [g for g in gpus if ((g.get("ecc") or {}).get("aggregate_uncorrectable") or 0) > 0 and g not in vol]
    if vol:
        n = sum(volatile(g) for g in vol)
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


CHECKS = (
    Check(
        "gpu",
        100,
        "GPU count, XIDs, ECC, row remaps, clocks, PCIe, MIG, DCGM",
        reads=("gpu_health", "gpus"),
        probe_errors={"gpuhealth": FAIL},
        allocation=True,
        prepare=(
            Shared("gpus_expected", lambda c: expected_counts(dict(c.answered), c.opts.gpus_per_node), ({}, "")),
            Shared("pcie", lambda c: pcie_reference(dict(c.answered)), {}),
        ),
        node=lambda c: check(
            c.node, c.facts, c.shared["gpus_expected"][0].get(c.node), c.shared["gpus_expected"][1], c.shared["pcie"]
        ),
    ),
)
