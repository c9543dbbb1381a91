"""GPU and fabric health: nvidia-smi -q -x, the kernel log's XIDs, NVLink, P2P, PCIe ACS, InfiniBand.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import json
import os
import re
import subprocess
import time

from clusterdoc.probe.base import _parallel, listdir_prefix, read, run, which
from clusterdoc.probe.gpus import LOST_LINE

# --- GPU and fabric health (checks/gpuhealth.py and checks/fabric.py judge these) --------------------------

MAX_SMI_XML = 8 << 20  # bytes of `nvidia-smi -q -x` parsed (8 GPUs take ~100 KiB)
MAX_KMSG = 8 << 20  # bytes of kernel log read
MAX_XIDS = 64  # XID events kept (the newest)
XID_LINE = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),?\s*(.*)")
SYSTEMD_STATES = ("active", "inactive", "failed", "activating", "deactivating", "reloading", "unknown")
NCCL_VARS = ("NCCL_IB_HCA", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL")
# NVSwitch systems (HGX/DGX 8-GPU SXM boards) need nvidia-fabricmanager running before CUDA starts
# (the SXM H100 calls itself "H100 80GB HBM3"; "NVL"/"PCIe" boards have no NVSwitch), when 8 GPUs are on it
NVSWITCH_NAME = re.compile(r"A[18]00-SXM|H[18]00 80GB HBM3|H100 SXM|H800(?! PCIe)|H200(?! NVL)|H20\b|B[123]00")


def _xml_text(node, path):
    el = node.find(path) if node is not None else None
    text = (el.text or "").strip() if el is not None else ""
    return text if text and text != "N/A" else None


def _xml_int(node, path):
    m = re.match(r"\s*(\d+)", _xml_text(node, path) or "")
    return int(m.group(1)) if m else None


def _uncorrectable(node):
    """Uncorrectable ECC errors of an ecc_errors/volatile or /aggregate element: the v12 fields
    (dram_uncorrectable, sram_uncorrectable*) or the older double_bit/total."""
    if node is None:
        return None
    counts = [_xml_int(node, child.tag) for child in node if "uncorrectable" in child.tag]
    counts += [_xml_int(node, "double_bit/total")]
    counts = [c for c in counts if c is not None]
    return sum(counts) if counts else None


def parse_smi_xml(text):
    """{driver, cuda, attached, gpus [...]} from `nvidia-smi -q -x` (nvsmi_device_v12.dtd and older)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text)
    out = {
        "driver": _xml_text(root, "driver_version"),
        "cuda": _xml_text(root, "cuda_version"),
        "attached": _xml_int(root, "attached_gpus"),
        "gpus": [],
    }
    for g in root.findall("gpu")[:64]:
        reasons = g.find("clocks_event_reasons")
        prefix = "clocks_event_reason_"
        if reasons is None:
            reasons, prefix = g.find("clocks_throttle_reasons"), "clocks_throttle_reason_"
        active = sorted(
            c.tag[len(prefix) :] for c in (reasons if reasons is not None else []) if (c.text or "").strip() == "Active"
        )
        link = g.find("pci/pci_gpu_link_info")
        retired = g.find("retired_pages")
        rows = g.find("remapped_rows")
        pending_pages = _xml_text(retired, "pending_retirement") or _xml_text(retired, "pending_blacklist")
        out["gpus"].append(
            {
                "bus": g.get("id"),
                "uuid": _xml_text(g, "uuid"),
                "name": _xml_text(g, "product_name"),
                "persistence": _xml_text(g, "persistence_mode"),
                "mig": _xml_text(g, "mig_mode/current_mig"),
                "compute_mode": _xml_text(g, "compute_mode"),
                "pcie": {
                    "gen": _xml_int(link, "pcie_gen/current_link_gen"),
                    "gen_max": _xml_int(link, "pcie_gen/max_link_gen"),
                    "width": _xml_int(link, "link_widths/current_link_width"),
                    "width_max": _xml_int(link, "link_widths/max_link_width"),
                },
                "throttle": [r for r in active if r != "gpu_idle"],
                "ecc": {
                    "volatile_uncorrectable": _uncorrectable(g.find("ecc_errors/volatile")),
                    "aggregate_uncorrectable": _uncorrectable(g.find("ecc_errors/aggregate")),
                },
                "retired": {
                    "single_bit": _xml_int(retired, "multiple_single_bit_retirement/retired_count"),
                    "double_bit": _xml_int(retired, "double_bit_retirement/retired_count"),
                    "pending": None if pending_pages is None else pending_pages == "Yes",
                },
                "remap": {
                    "correctable": _xml_int(rows, "remapped_row_corr"),
                    "uncorrectable": _xml_int(rows, "remapped_row_unc"),
                    "pending": None
                    if _xml_text(rows, "remapped_row_pending") is None
                    else _xml_text(rows, "remapped_row_pending") == "Yes",
                    "failure": None
                    if _xml_text(rows, "remapped_row_failure") is None
                    else _xml_text(rows, "remapped_row_failure") == "Yes",
                },
            }
        )
    return out


def read_kernel_log():
    """(source, text) of this boot's kernel messages: /dev/kmsg (one record per read), else the tail of
    /var/log/kern.log from its last boot banner; (None, None) when neither is readable (dmesg_restrict)."""
    import errno

    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        fd = None
    if fd is not None:
        chunks, size = [], 0
        try:
            while size < MAX_KMSG:
                try:
                    chunk = os.read(fd, 8192)
                except OSError as exc:
                    if exc.errno == errno.EPIPE:  # records overwritten while reading: go on
                        continue
                    if exc.errno == errno.EAGAIN:
                        break
                    raise
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError:
            chunks = None
        finally:
            os.close(fd)
        if chunks is not None:
            return "/dev/kmsg", b"".join(chunks).decode("utf-8", "replace")
    for path in ("/var/log/kern.log", "/var/log/messages"):
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - MAX_KMSG))
                text = f.read().decode("utf-8", "replace")
        except (OSError, IOError):
            continue
        boot = text.rfind("kernel: Linux version ")
        return path, text[text.rfind("\n", 0, boot) + 1 :] if boot >= 0 else text
    return None, None


def parse_xids(text):
    events = []
    for line in text.splitlines():
        m = XID_LINE.search(line)
        if m:
            events.append({"bus": m.group(1), "xid": int(m.group(2)), "text": m.group(3)[:200]})
    return events


def xid_state(events, path):
    """How many of this boot's XID events are new since the last clusterdoc run on this node, and when that run
    was: a small JSON file ($XDG_CACHE_HOME or ~/.cache, clusterdoc/gpu-HOST.json: a home shared by many nodes
    keeps one per node), rewritten with this run's count."""
    boot = (read("/proc/sys/kernel/random/boot_id") or "").strip()
    try:
        with open(path) as f:
            old = json.load(f)
        if not isinstance(old, dict) or old.get("boot_id") != boot:
            old = {}
    except (OSError, IOError, ValueError):
        old = {}
    seen = old.get("xids") if isinstance(old.get("xids"), int) else 0
    new = len(events) - seen if len(events) >= seen else len(events)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = path + ".%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump({"boot_id": boot, "xids": len(events), "at": time.time()}, f)
        os.rename(tmp, path)
    except (OSError, IOError):
        pass
    return new, old.get("at") if isinstance(old.get("at"), (int, float)) else None


def _hex_file(path):
    try:
        return int((read(path) or "").strip(), 16)
    except ValueError:
        return None


def acs_bridges(gpu_bus_ids):
    """PCI bridges above the GPUs with ACS Source Validation on (as `lspci -vvv` shows `ACSCtl: SrcValid+`),
    from each bridge's config space (extended capability 0x000d, control register at +6). None when config
    space past 256 bytes is not readable (not root)."""
    import struct

    found, readable = {}, False
    for bus in gpu_bus_ids:
        dev = "/sys/bus/pci/devices/" + bus.lower()[-12:]
        real = os.path.realpath(dev)
        parent = os.path.dirname(real)
        while re.match(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", os.path.basename(parent)):
            try:
                with open(os.path.join(parent, "config"), "rb") as f:
                    config = f.read(4096)
            except (OSError, IOError):
                config = b""
            if len(config) > 256:
                readable = True
                offset, hops = 0x100, 0
                while offset and offset + 8 <= len(config) and hops < 64:
                    header = struct.unpack_from("<I", config, offset)[0]
                    if header & 0xFFFF == 0x000D and struct.unpack_from("<H", config, offset + 6)[0] & 1:
                        found.setdefault(os.path.basename(parent), []).append(bus)
                    offset, hops = (header >> 20) & 0xFFC, hops + 1
            parent = os.path.dirname(parent)
    if not readable:
        return None
    return [{"bridge": b, "gpus": sorted(set(g))} for b, g in sorted(found.items())]


def iommu_types(gpu_bus_ids):
    """{gpu bus id: the IOMMU domain type of its group ("identity": passthrough; "DMA"/"DMA-FQ": translated)}."""
    out = {}
    for bus in gpu_bus_ids:
        t = (read("/sys/bus/pci/devices/%s/iommu_group/type" % bus.lower()[-12:]) or "").strip()
        if t:
            out[bus] = t[:32]
    return out


def read_ib_counters():
    """[{device, port, rate_gbps, link_downed, symbol_error, link_error_recovery}] of every IB/RoCE port."""
    out = []
    base = "/sys/class/infiniband"
    for dev in sorted(os.listdir(base) if os.path.isdir(base) else [])[:64]:
        for port in listdir_prefix(os.path.join(base, dev, "ports"), "")[:16]:
            m = re.match(r"\s*([\d.]+) Gb/sec", read(os.path.join(port, "rate")) or "")
            entry = {"device": dev, "port": os.path.basename(port), "rate_gbps": float(m.group(1)) if m else None}
            for name in ("link_downed", "symbol_error", "link_error_recovery"):
                v = (read(os.path.join(port, "counters", name)) or "").strip()
                entry[name] = int(v) if v.isdigit() else None
            out.append(entry)
    return out


NVLINK_GPU = re.compile(r"GPU (\d+): ")
NVLINK_STATE = re.compile(r"\s*Link (\d+): (?:<(inactive)>|([\d.]+) GB/s)")
NVLINK_COUNTER = re.compile(r"\s*Link (\d+): ([A-Za-z][\w ]{0,40}?): (\d+)\s*$")
P2P_CODES = ("OK", "NS", "CNS", "GNS", "TNS", "U")


def parse_nvlink(text, counters=False):
    """`nvidia-smi nvlink -s` ("GPU 0: NAME (UUID: ...)" then "Link 0: 26.562 GB/s" or "Link 1: <inactive>") ->
    {gpu index: {"active": n, "inactive": [link]}}; with counters, `nvidia-smi nvlink -e` ("Link 0: Replay
    Errors: 0") -> {gpu index: {"link counter name": n}}. GPUs without NVLink print no Link line (left out)."""
    out, gpu = {}, None
    for line in text.splitlines()[:4096]:
        m = NVLINK_GPU.match(line)
        if m:
            gpu = m.group(1)
            continue
        if gpu is None or len(out) > 64:
            continue
        if counters:
            m = NVLINK_COUNTER.match(line)
            if m:
                out.setdefault(gpu, {})["%s %s" % (m.group(1), m.group(2)[:40])] = int(m.group(3))
            continue
        m = NVLINK_STATE.match(line)
        if m:
            links = out.setdefault(gpu, {"active": 0, "inactive": []})
            if m.group(2):
                links["inactive"].append(int(m.group(1)))
            else:
                links["active"] += 1
    return out


def nvlink_counters(first, second):
    """({gpu: {counter: n}} of the non-zero counters of the second read, ["GPUi link counter"] that rose from the
    first read to the second)."""
    nonzero = dict((g, dict((k, v) for k, v in c.items() if v)) for g, c in second.items())
    rising = [
        "GPU%s link %s" % (g, k) for g, c in second.items() for k, v in c.items() if v > first.get(g, {}).get(k, v)
    ]
    return dict((g, c) for g, c in nonzero.items() if c), rising


def parse_p2p(text):
    """`nvidia-smi topo -p2p r` (a matrix: a header row "GPU0 GPU1 ...", a row per GPU of OK/NS/CNS/GNS/TNS/U,
    X on the diagonal) -> {"gpus": n, "bad": [{a, b, code}]} (GPU a < GPU b, at most 64); None: no matrix."""
    header, rows = None, {}
    for line in text.splitlines()[:512]:
        cells = line.split()
        if header is None:
            if cells and all(re.match(r"GPU\d+$", c) for c in cells):
                header = [int(c[3:]) for c in cells][:64]
            continue
        if not cells or not re.match(r"GPU\d+$", cells[0]):
            break
        rows[int(cells[0][3:])] = cells[1 : len(header) + 1]
    if not header:
        return None
    bad = []
    for i, codes in sorted(rows.items()):
        for j, code in zip(header, codes):
            if i < j and code != "X" and code != "OK" and len(bad) < 64:
                bad.append({"a": i, "b": j, "code": code if code in P2P_CODES else "U"})
    return {"gpus": len(header), "bad": bad}


def nvidia_module_open():
    """Whether the loaded nvidia kernel module is NVIDIA's open one (needed for DMA-BUF): the proprietary one
    taints the kernel with P (/sys/module/nvidia/taint), the open one (MIT/GPL) does not; else what
    /proc/driver/nvidia/version says ("Open Kernel Module"). None: no nvidia module seen."""
    taint = read("/sys/module/nvidia/taint")
    if taint is not None:
        return "P" not in taint.strip()
    version = read("/proc/driver/nvidia/version", 4096)
    return None if version is None else "Open Kernel Module" in version


def probe_gpu_health(timeout, env_over=None, state_dir=None):
    """GPU, NVSwitch, PCIe and InfiniBand health: `nvidia-smi -q -x`, the kernel log's XIDs, fabric manager,
    ACS and IOMMU under the GPUs, IB rates and error counters read twice, NCCL's variables. None: no GPU tools."""
    ib_first = read_ib_counters()
    modules = read("/proc/modules") or ""
    env_over = env_over or {}
    out = {
        "smi": None,
        "lost": [],
        "xid": None,
        "fabricmanager": None,
        "acs": None,
        "iommu": {},
        "peermem": os.path.isdir("/sys/module/nvidia_peermem")
        or bool(re.search(r"^(nvidia_peermem|nv_peer_mem) ", modules, re.M)),
        "ib": ib_first,
        "nccl_env": dict((k, env_over[k] if k in env_over else os.environ.get(k)) for k in NCCL_VARS),
        "hypervisor": " hypervisor" in (read("/proc/cpuinfo", 1 << 16) or ""),
    }
    smi = which("nvidia-smi")
    if not smi:
        out["ib_changed"] = []
        return out if ib_first else None
    # nvidia-smi's NVLink and P2P answers have no XML form: their short, stable text, read beside -q -x
    # (the error counters again at the end, to see them rising while the probe ran)
    answers = {}

    def ask(key, argv):
        def go():
            try:
                answers[key] = run([smi] + argv, timeout)
            except (OSError, subprocess.TimeoutExpired) as exc:
                answers[key] = exc

        return go

    _parallel(
        [
            ask("xml", ["-q", "-x"]),
            ask("links", ["nvlink", "-s"]),
            ask("errors", ["nvlink", "-e"]),
            ask("p2p", ["topo", "-p2p", "r"]),
        ]
    )
    for key, answer in answers.items():
        if isinstance(answer, Exception):
            if key == "xml":
                raise answer
            answers[key] = (-1, "", "")
    code, text, err = answers["xml"]
    for line in (err + "\n" + (text if not text.lstrip().startswith("<") else "")).splitlines():
        m = LOST_LINE.match(line.strip())
        if m and len(out["lost"]) < 16:
            out["lost"].append({"bus": m.group(2), "message": line.strip()[:300]})
    if "<nvidia_smi_log" in text:
        out["smi"] = parse_smi_xml(text[: text.rfind(">") + 1][:MAX_SMI_XML])
    elif code != 0 and not out["lost"]:
        raise RuntimeError("nvidia-smi -q -x exited %d: %s" % (code, (err or text).strip()[:300]))
    buses = [g["bus"] for g in (out["smi"] or {}).get("gpus", []) if g.get("bus")]
    names = " ".join(g.get("name") or "" for g in (out["smi"] or {}).get("gpus", []))
    if NVSWITCH_NAME.search(names) and len(buses) + len(out["lost"]) >= 8:
        ctl = which("systemctl")
        if ctl:
            _, state, _ = run([ctl, "is-active", "nvidia-fabricmanager"], timeout)
            state = (state.strip().splitlines() or [""])[0]
            out["fabricmanager"] = state if state in SYSTEMD_STATES else "unknown"
        else:
            out["fabricmanager"] = "unknown"
    source, log = read_kernel_log()
    if source:
        events = parse_xids(log)
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        path = os.path.join(state_dir or os.path.join(cache, "clusterdoc"), "gpu-%s.json" % os.uname()[1])
        new, since = xid_state(events, path)
        out["xid"] = {"source": source, "events": events[-MAX_XIDS:], "total": len(events), "new": new, "since": since}
    out["acs"] = acs_bridges(buses)
    out["iommu"] = iommu_types(buses)
    out["dmabuf"] = {
        "kernel": (read("/proc/sys/kernel/osrelease") or "").strip()[:64] or None,
        "open_module": nvidia_module_open(),
    }
    out["nvlink"] = parse_nvlink(answers["links"][1]) if answers["links"][0] == 0 else None
    out["p2p"] = parse_p2p(answers["p2p"][1]) if answers["p2p"][0] == 0 and buses else None
    errors = parse_nvlink(answers["errors"][1], counters=True) if answers["errors"][0] == 0 else {}
    again = {}
    if any(errors.values()):  # NVLinks with counters: read them again, to see them rise
        try:
            code, text, _ = run([smi, "nvlink", "-e"], timeout)
            again = parse_nvlink(text, counters=True) if code == 0 else {}
        except (OSError, subprocess.TimeoutExpired):
            pass
    out["nvlink_errors"], out["nvlink_rising"] = nvlink_counters(errors, again or errors)
    ib_second = read_ib_counters()
    out["ib"] = ib_second
    first = dict(((p["device"], p["port"]), p) for p in ib_first)
    out["ib_changed"] = [
        "%s/%s %s" % (p["device"], p["port"], k)
        for p in ib_second
        for k in ("link_downed", "symbol_error")
        if (p["device"], p["port"]) in first and (p[k] or 0) > (first[(p["device"], p["port"])][k] or 0)
    ]
    return out
