"""fabric: how the GPUs reach each other: NVSwitch's fabric manager, the PCIe P2P trap, InfiniBand and NCCL's switches.

From facts["gpu_health"] (clusterdoc/probe/gpuhealth.py). FAIL: an NVSwitch system without a running fabric manager
(CUDA error 802), (NCCL_IB_HCA: checks/nccl.py). The rest warns: the job runs, slower or at risk of hangs
(NVLinks down or with error counters; ACS on the switches above the GPUs or a translated IOMMU, the usual cause
of NCCL P2P hangs, confirmed when `nvidia-smi topo -p2p r` refuses P2P; P2P refused with no such cause; slow or
flapping IB links; no GPUDirect RDMA, neither nvidia_peermem nor DMA-BUF; NCCL_*_DISABLE set). The NCCL library
version across nodes is the consistency check's.
"""

from __future__ import annotations

import re

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding
from clusterdoc.checks.spec import Check
from clusterdoc.hostfile import compress_hostlist

CHECK = "fabric"

P2P_STOPGAP = "NCCL_P2P_DISABLE=1 is a stop-gap only (GPU<->GPU traffic then goes through host memory)"
DISABLE_COST = {
    "NCCL_P2P_DISABLE": "GPU<->GPU traffic inside the node goes through host memory instead of NVLink/PCIe P2P",
    "NCCL_IB_DISABLE": "NCCL uses TCP sockets instead of InfiniBand/RoCE between nodes (often 10x slower)",
    "NCCL_SHM_DISABLE": "ranks on one node without P2P talk through the network stack instead of shared memory",
}


def _has_gpus(h: dict) -> bool:
    return bool((h.get("smi") or {}).get("gpus") or h.get("lost"))


def check_node(node: str, facts: dict) -> list[Finding]:
    h = facts.get("gpu_health") or {}
    if not h:
        return [finding(node, CHECK, OK, "not applicable: no NVIDIA GPU and no InfiniBand on this node")]
    out = []
    fm = h.get("fabricmanager")
    if fm and fm != "active":
        driver = (h.get("smi") or {}).get("driver") or "the driver's"
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"nvidia-fabricmanager is {fm} on this NVSwitch system: CUDA fails with error 802 "
                "'system not yet initialized' (torch sees no usable GPU)",
                f"`systemctl enable --now nvidia-fabricmanager` (its version must be {driver}, the driver's); "
                "`journalctl -u nvidia-fabricmanager` says why it stopped",
            )
        )
    out += _nvlink(node, h)
    out += _p2p(node, h)
    out += _ib(node, h)
    out += _nccl_env(node, h)
    if not any(f["status"] != OK for f in out):
        parts = ["fabric manager active"] if fm == "active" else []
        parts += [f"{len(h.get('ib') or [])} InfiniBand port(s) clean"] if h.get("ib") else []
        parts += ["no ACS/IOMMU P2P trap"] if _has_gpus(h) and h.get("acs") is not None else []
        parts += _nvlink_summary(h)
        if h.get("ib") and _has_gpus(h):
            parts += ["GPUDirect RDMA through " + ("nvidia_peermem" if h.get("peermem") else "DMA-BUF")]
        out.append(finding(node, CHECK, OK, "; ".join(parts) or "nothing to judge"))
    return out


P2P_MEANING = {
    "NS": "not supported",
    "CNS": "chipset not supported",
    "GNS": "GPU not supported",
    "TNS": "topology not supported",
    "U": "unknown",
}


# NVLinks each SXM part has, every one wired on its board (NVIDIA's datasheets: P100 SXM2 4 links (160 GB/s), V100
# SXM2/SXM3 6 (300 GB/s), A100 SXM4 12 (600 GB/s), A800 SXM4 8 (400 GB/s), H100 SXM5 and H200 SXM 18 (900 GB/s),
# H800 SXM5 8 (400 GB/s), H20 18 (900 GB/s), B200/B300/GB200/GB300 18 (1.8 TB/s)), by the name nvidia-smi prints
# ("Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3" is the SXM5 H100). PCIe parts (H100
# PCIe/NVL, A100 PCIe, RTX) wire links only through a bridge, so theirs are judged against their peers only.
SXM_LINKS = (
    (re.compile(r"P100-SXM"), 4),
    (re.compile(r"V100S?-SXM"), 6),
    (re.compile(r"A800-SXM"), 8),
    (re.compile(r"A100-SXM"), 12),
    (re.compile(r"H800(?! PCIe| NVL)"), 8),
    (re.compile(r"H100 80GB HBM3|H100-SXM|H100 SXM"), 18),
    (re.compile(r"(?<![A-Z])H200(?! NVL)|(?<![A-Z])H20\b"), 18),
    (re.compile(r"(?<![A-Z])B[123]00|GB[23]00"), 18),
)
# a counter at a register's ceiling no longer counts: the link's error rate is unknown and high
SATURATED = (0xFFFF, 0xFFFFFFFF, (1 << 64) - 1)


def sxm_links(name: str | None) -> int | None:
    """The NVLinks an SXM part has (SXM_LINKS), None for a part whose links depend on a bridge or are unknown."""
    return next((n for pattern, n in SXM_LINKS if pattern.search(name or "")), None)


def _links_desc(v: dict, of: int) -> str:
    if v.get("all_down"):
        return "every link down (NVML: all links are inactive)"
    inactive = ", ".join(map(str, (v.get("inactive") or [])[:18]))
    return (
        f"{v.get('active') or 0} of {of} up (link {inactive} inactive)"
        if inactive
        else f"{v.get('active') or 0} of {of} up"
    )


PEERS = "the node's best GPU"
FULL_BOARD = 8  # GPUs of an HGX/DGX baseboard: a VM with fewer has a slice, whose links to the rest are not its


def _expected_links(v: dict, most: int, sliced: bool) -> tuple[int, str]:
    """(links this GPU should have up, why): what its SXM part has (every link wired), else, and on a VM given part
    of a board (which of the part's links reach its GPUs is the host's), the node's best GPU."""
    part = sxm_links(v.get("name"))
    listed = (v.get("active") or 0) + len(v.get("inactive") or [])
    if part and not sliced:
        return max(part, listed), f"a {v.get('name')} has {part}"
    return most, PEERS


def _nvlink(node: str, h: dict) -> list[Finding]:
    """Links down, judged against the part: an SXM GPU (SXM_LINKS) with fewer active links than its part has, every
    link of the part wired on its board; another GPU with some links up but fewer than the node's best GPU (a
    bridge wires the same links on every GPU it joins). A PCIe GPU with no link up has no bridge: no finding.
    Every GPU missing the same links is said as one board fault. A node with one GPU (a VM given one GPU of a
    board) has no peer for its links to matter: no finding; a VM with fewer GPUs than a board's 8 is judged
    against its best GPU only. FAIL: an SXM GPU with every link down, or an error counter at its ceiling
    (SATURATED); WARN: some links down, error counters non-zero since the driver loaded or rising."""
    out = []
    links = {g: v for g, v in (h.get("nvlink") or {}).items() if v}  # a malformed entry is None
    most = max((v.get("active") or 0 for v in links.values()), default=0)
    short: dict[str, tuple[dict, int, str]] = {}
    gpus = max(len((h.get("smi") or {}).get("gpus") or []) + len(h.get("lost") or []), len(links))
    sliced = bool(h.get("hypervisor")) and gpus < FULL_BOARD
    for g, v in links.items() if gpus > 1 else ():  # one GPU (a VM's slice): no peer, no matter
        want, why = _expected_links(v, most, sliced)
        sxm = sxm_links(v.get("name"))
        if not v.get("active") and (not sxm or not most) and why == PEERS:
            continue  # a PCIe GPU with no link up has no bridge (3 RTX A6000, a bridge on 2): by design
        if (v.get("active") or 0) < want:
            short[g] = (v, want, why)
    dead = {g for g, (v, _, _) in short.items() if not v.get("active") and sxm_links(v.get("name"))}
    if short:
        sets = {tuple(v.get("inactive") or []) for v, _, _ in short.values()}
        same = len(short) == len(links) > 1 and len(sets) == 1 and sets != {()}
        if same:
            lost = ", ".join(map(str, next(iter(sets))[:18]))
            v, want, why = next(iter(short.values()))
            where = f"link {lost} inactive on every GPU (all {len(links)}; {why}): a board-wide fault"
        else:
            where = "; ".join(f"GPU{g}: {_links_desc(v, want)}" for g, (v, want, _) in sorted(short.items())[:8])
            whys = sorted({why for _, _, why in short.values()})
            where += f" (judged against {' and '.join(whys)})"
        out.append(
            finding(
                node,
                CHECK,
                FAIL if dead else WARN,
                f"NVLink links down ({where}): GPU<->GPU traffic on those GPUs runs slower or through PCIe"
                + (", or fails where the board has no other path" if dead else ""),
                "reset the GPUs (`nvidia-smi -r` with nothing running) or reboot; if the link stays down, "
                "check the NVLink bridge/baseboard and NVSwitch tray (`nvidia-smi nvlink -s`), and the fabric "
                "manager on NVSwitch systems, then RMA",
            )
        )
    errors = {g: c for g, c in (h.get("nvlink_errors") or {}).items() if c}
    stuck = [
        f"GPU{g} link {k} at {v}" for g, c in sorted(errors.items()) for k, v in sorted(c.items()) if v in SATURATED
    ]
    if stuck:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"NVLink error counter at its ceiling: {', '.join(stuck[:8])}: it no longer counts, the link has "
                "had so many errors that its current rate is unknown",
                "reset the GPUs (clears the counters) and watch them (`nvidia-smi nvlink -e`); if they climb "
                "again, the link is bad: check the bridge/baseboard and RMA",
            )
        )
    rising = [r for r in h.get("nvlink_rising") or [] if r]
    errors = {g: {k: v for k, v in c.items() if v not in SATURATED} for g, c in errors.items()}
    errors = {g: c for g, c in errors.items() if c}
    if errors or rising:
        counts = "; ".join(
            f"GPU{g} " + ", ".join(f"link {k} {v}" for k, v in sorted(c.items())[:4])
            for g, c in sorted(errors.items())[:8]
        )
        now = f" (rising while the probe ran: {', '.join(rising[:8])})" if rising else " since the driver loaded"
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"NVLink error counters non-zero: {counts}{now}",
                "watch them (`nvidia-smi nvlink -e`); rising CRC/replay/recovery errors mean a bad link: "
                "reset the GPUs, then check the bridge/baseboard and RMA; XID 74 in the kernel log confirms it",
            )
        )
    return out


def _nvlink_summary(h: dict) -> list[str]:
    """The healthy NVLink state for the OK line: GPUs with every link up; those whose links a PCIe board leaves
    unused by design are not counted as 'all up'."""
    links = [v for v in (h.get("nvlink") or {}).values() if v]
    up = [v for v in links if (v.get("active") or 0) > 0 and not v.get("inactive")]
    bridged = [v for v in links if (v.get("active") or 0) > 0 and v.get("inactive")]
    parts = [f"{len(up)} GPU(s) with all NVLinks up"] if up else []
    parts += [f"{len(bridged)} GPU(s) with their bridge's NVLinks up (the rest unused by design)"] if bridged else []
    return parts


def _p2p_confirmed(h: dict) -> str:
    """What `nvidia-smi topo -p2p r` adds to an ACS/IOMMU finding: pairs without P2P confirm the trap."""
    p2p = h.get("p2p")
    if not p2p:
        return ""
    bad = [b for b in p2p.get("bad") or [] if b]
    if not bad:
        return "; `nvidia-smi topo -p2p r` still reports P2P OK between every pair"
    return f"; confirmed: `nvidia-smi topo -p2p r` reports P2P {_pairs(bad)}"


def _pairs(bad: list) -> str:
    """ "CNS (chipset not supported) between 28 GPU pair(s): GPU0-GPU1, GPU0-GPU2, ..." per code."""
    by_code: dict[str, list[str]] = {}
    for pair in bad:
        by_code.setdefault(str(pair.get("code")), []).append(f"GPU{pair.get('a')}-GPU{pair.get('b')}")
    return "; ".join(
        f"{code} ({P2P_MEANING.get(code, code)}) between {len(pairs)} GPU pair(s): "
        + ", ".join(pairs[:4])
        + (", ..." if len(pairs) > 4 else "")
        for code, pairs in sorted(by_code.items())
    )


def _p2p(node: str, h: dict) -> list[Finding]:
    if not _has_gpus(h):
        return []
    out = []
    confirmed = _p2p_confirmed(h)
    fix = "on bare metal, disable ACS on the PCIe switches in the BIOS (or `setpci -s BRIDGE ECAP_ACS+0x6.w=0000`)"
    if h.get("hypervisor"):
        fix += "; this node runs under a hypervisor, which needs ACS for passthrough: ask the provider for a P2P shape"
    acs = h.get("acs") or []
    if acs:
        where = "; ".join(f"{b.get('bridge')} above {', '.join(b.get('gpus') or [])}" for b in acs[:8])
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"PCIe ACS (SrcValid+) is on at {len(acs)} bridge(s) above GPUs ({where}): P2P traffic is forced "
                f"through the root complex (slow, and NCCL P2P hangs on many boards){confirmed}",
                f"{fix}; {P2P_STOPGAP}",
            )
        )
    iommu = h.get("iommu") or {}
    translated = sorted(bus for bus, t in iommu.items() if str(t).startswith("DMA"))
    if translated:
        which = f"all {len(iommu)} GPUs" if len(translated) == len(iommu) > 1 else ", ".join(translated)
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"the IOMMU translates DMA for {which}: GPU peer-to-peer traffic can fail or "
                f"hang (nccl-tests P2P hangs){confirmed}",
                f"boot with `iommu=pt` (passthrough) on the kernel command line; {P2P_STOPGAP}",
            )
        )
    # P2P refused with no ACS/IOMMU cause found (GNS, a GPU without P2P such as a GeForce, is by design)
    unexplained = [b for b in (h.get("p2p") or {}).get("bad") or [] if b and b.get("code") != "GNS"]
    if unexplained and not acs and not translated:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"`nvidia-smi topo -p2p r` reports P2P {_pairs(unexplained)}: NCCL routes that traffic through "
                "host memory",
                "check the BIOS's PCIe settings (ACS, IOMMU/VT-d, Above 4G decoding) and the PCIe topology "
                f"(`nvidia-smi topo -m`); {P2P_STOPGAP} if the job hangs in P2P",
            )
        )
    missing = _dmabuf_missing(h)
    if h.get("ib") and not h.get("peermem") and missing:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                "GPUs and InfiniBand HCAs but nvidia_peermem is not loaded and DMA-BUF is not usable "
                f"({'; '.join(missing)}): no GPUDirect RDMA, every inter-node message is staged through host memory",
                "`modprobe nvidia_peermem` (and add it to /etc/modules-load.d), or use DMA-BUF (kernel >= 5.12 "
                f"and NVIDIA's open kernel modules, driver >= {DMABUF_DRIVER})",
            )
        )
    return out


DMABUF_KERNEL = (5, 12)  # RDMA memory registration from a DMA-BUF (ib_umem_dmabuf) came in Linux 5.12
DMABUF_DRIVER = 515  # the first driver branch whose open kernel modules export GPU memory as DMA-BUF


def _version(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:2])


def _dmabuf_missing(h: dict) -> list[str]:
    """Why GPUDirect RDMA through DMA-BUF (no nvidia_peermem needed) is not available: [] when it is."""
    d = h.get("dmabuf")
    if not d:
        return ["not checked"]
    missing = []
    if _version(d.get("kernel")) < DMABUF_KERNEL:
        missing.append(f"kernel {d.get('kernel')}, needs >= 5.12")
    if d.get("open_module") is not True:
        missing.append(
            "the NVIDIA kernel module is the proprietary one, DMA-BUF needs the open one"
            if d.get("open_module") is False
            else "the NVIDIA kernel module's flavour is unknown"
        )
    driver = (h.get("smi") or {}).get("driver")
    if driver and _version(driver)[:1] < (DMABUF_DRIVER,):
        missing.append(f"driver {driver}, needs >= {DMABUF_DRIVER}")
    return missing


def _ib(node: str, h: dict) -> list[Finding]:
    out = []
    for p in h.get("ib") or []:
        port = f"{p.get('device')}/{p.get('port')}"
        bad = {k: p.get(k) for k in ("link_downed", "symbol_error") if (p.get(k) or 0) > 0}
        if bad:
            rising = [c for c in h.get("ib_changed") or [] if c.startswith(port + " ")]
            counts = ", ".join(f"{k} {v}" for k, v in bad.items())
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"InfiniBand port {port}: {counts}"
                    + (" (rising while the probe ran: the link is flapping now)" if rising else ""),
                    "check the cable and the switch port (`ibstat`, `perfquery -x`); reseat or replace the cable; "
                    "clear the counters (`perfquery -R`) and watch them",
                )
            )
    return out


def _nccl_env(node: str, h: dict) -> list[Finding]:
    out = []
    env = h.get("nccl_env") or {}
    for var, cost in DISABLE_COST.items():
        value = env.get(var)
        if value not in (None, "", "0"):
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"{var}={value} is set: {cost}",
                    f"unset {var} unless it is a deliberate work-around (then note why); "
                    "set on some nodes only, ranks disagree on transports",
                )
            )
    return out


def _port_kind(p: dict) -> tuple[str, str]:
    """A port's peers: the same link layer (InfiniBand, or Ethernet: RoCE) on the same adapter model."""
    return (str(p.get("link_layer") or "InfiniBand"), str(p.get("hca") or ""))


def check_cluster(all_facts: dict[str, dict], compress) -> list[Finding]:
    """Across nodes: IB/RoCE ports slower than the fastest of their peers (same link layer and adapter model: a
    RoCE bond at 200 Gb/s is not judged against 400 Gb/s InfiniBand ports); NCCL_*_DISABLE set on some nodes only."""
    out = []
    rates = {
        n: [p for p in ((f or {}).get("gpu_health") or {}).get("ib") or [] if p and p.get("rate_gbps")]
        for n, f in all_facts.items()
    }
    fastest: dict[tuple[str, str], float] = {}
    for ports in rates.values():
        for p in ports:
            fastest[_port_kind(p)] = max(fastest.get(_port_kind(p), 0.0), p["rate_gbps"])
    for n, ports in sorted(rates.items()):
        slow = [p for p in ports if p["rate_gbps"] < fastest[_port_kind(p)]]
        if slow:
            desc = ", ".join(
                f"{p.get('device')}/{p.get('port')} at {p['rate_gbps']:g} Gb/s (peers: {fastest[_port_kind(p)]:g} Gb/s)"
                for p in slow
            )
            layer = "RoCE" if _port_kind(slow[0])[0] == "Ethernet" else "InfiniBand"
            out.append(
                finding(
                    n,
                    CHECK,
                    WARN,
                    f"{layer} {desc}, below the other ports of this cluster with the same link layer and adapter: "
                    "every all-reduce goes at the slowest link's pace",
                    "check the cable and switch port (a link trained at a lower speed or width: `ibstat`), "
                    "reseat or replace the cable",
                )
            )
    for var in DISABLE_COST:
        setters = [
            n
            for n, f in all_facts.items()
            if (((f or {}).get("gpu_health") or {}).get("nccl_env") or {}).get(var) not in (None, "", "0")
        ]
        others = [n for n, f in all_facts.items() if (f or {}).get("gpu_health") and n not in setters]
        if setters and others:
            out.append(
                finding(
                    compress(setters),
                    CHECK,
                    WARN,
                    f"{var} is set on {compress(setters)} but not on {compress(others)}: ranks can pick different "
                    "transports and hang at the first collective",
                    f"set {var} the same way on every node (or nowhere)",
                    nodes=setters,
                )
            )
    return out


CHECKS = (
    Check(
        "fabric",
        110,
        "NVLink, fabric manager, ACS, IOMMU, InfiniBand links",
        reads=("gpu_health",),
        allocation=True,
        node=lambda c: check_node(c.node, c.facts),
        cluster=lambda c: check_cluster(dict(c.answered), compress_hostlist) if c.multi else [],
        cluster_order=30,
    ),
)
