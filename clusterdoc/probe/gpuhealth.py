"""GPU and fabric health: nvidia-smi -q -x, the kernel log's XIDs, NVLink, P2P, PCIe ACS, InfiniBand.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import json
import os
import re
import stat
import subprocess
import time

from clusterdoc.probe.base import _parallel, listdir_prefix, read, run, which
from clusterdoc.probe.gpus import lost_gpu

# --- GPU and fabric health (checks/gpuhealth.py and checks/fabric.py judge these) --------------------------

IB_CLASS = "/sys/class/infiniband"
KERNEL_LOG_FILES = ("/var/log/kern.log", "/var/log/messages")  # read when /dev/kmsg is not readable
MAX_SMI_XML = 8 << 20  # bytes of `nvidia-smi -q -x` parsed (8 GPUs take ~100 KiB)
MAX_KMSG = 8 << 20  # bytes of kernel log read
MAX_XIDS = 64  # XID events kept as a sample (the newest); every event is counted
MAX_XID_KEYS = 256  # (XID, GPU) pairs counted apart; the rest are counted together
MAX_FAULT_KEYS = 32  # (fault kind, GPU) pairs of faults without an Xid line kept
MAX_STATE = 64 << 10  # bytes of the XID state file read
MAX_DCGM = 1 << 20  # bytes of a dcgmi JSON answer parsed
# A kernel log line: /dev/kmsg ("6,3964,206764307,-;MSG"), dmesg ("[ 1843.30] MSG"), dmesg -T ("[Fri Nov 15
# 12:02:03 2024] MSG"), dmesg --time-format iso ("2024-11-15T12:02:03,470068+00:00 MSG"), dmesg --decode ("kern
# :warn  : ISO MSG"), syslog and journalctl in any locale ("Nov 15 12:02:03 host kernel: [ 12.3] MSG", "ноя 15 ...
# kernel: MSG", "2024-11-15T12:02:03+0000 host kernel: MSG"), talosctl dmesg ("NODE: kern: warning: [ISO]: MSG")
# or bare. Only a message that *starts* with NVRM is the NVIDIA driver's: the prefix before "NVRM: " is read
# token by token (split_klog), and another driver's or program's line that merely contains "NVRM: Xid" (a tag
# such as "mydrv:" or "sshd[1]:" before it, a word after the kernel's tag) is not.
NVRM = "NVRM:"
MAX_KLOG_PREFIX = 256  # characters before "NVRM:" (real prefixes take under 100)
KMSG_HEAD = re.compile(r"(\d{1,3}),\d{1,20},\d{1,20},[^;]{0,16};")  # the first field: facility * 8 + level
KLOG_TOKEN = re.compile(r"\[[^\]]{0,64}\]:?|[^\s\[]+(?:\[[^\]\s]{0,16}\])?:?|\S")
KLOG_STAMP = re.compile(r"\[[^\]]{0,64}\]:?|[+-]?\d[\d.,:+\-TZ]{0,39}:?|<\d{1,3}>")  # <4>: dmesg -r's level
KLOG_LEVELS = ("emerg", "alert", "crit", "err", "error", "warn", "warning", "notice", "info", "debug")


def _kernel_tag(tok):
    """ "kernel:", "kern:", dmesg --decode's "kern:warn:" (blanks before its colons removed)."""
    parts = tok.lower().split(":")
    return parts[0] in ("kernel", "kern") and all(p in KLOG_LEVELS for p in parts[1:-1]) and parts[-1] == ""


def _klog_prefix_ok(prefix):
    """Whether `prefix` (the text before "NVRM:") is a kernel log's own prefix: timestamps, a host, the kernel's
    tag and level, in the forms above; never another tag ("mydrv:", "sshd[1]:") or a word after the last tag."""
    if len(prefix) > MAX_KLOG_PREFIX:
        return False
    head = KMSG_HEAD.match(prefix)
    if head:  # /dev/kmsg: the message follows its record header at once; facility 0 is the kernel's (a program
        return int(head.group(1)) < 8 and not prefix[head.end() :].strip()  # writing to /dev/kmsg is 1 or more)
    tokens = KLOG_TOKEN.findall(re.sub(r"\s+:", ":", prefix))
    kernel = next((i for i, t in enumerate(tokens) if _kernel_tag(t)), None)
    if kernel is None:  # bare dmesg: timestamps only
        return all(KLOG_STAMP.fullmatch(t) for t in tokens)
    for i, tok in enumerate(tokens):
        stamp = KLOG_STAMP.fullmatch(tok)
        if i < kernel:  # before the kernel's tag: a date in any locale, a host; a tag only as talos' "NODE:"
            if tok.endswith(":") and not stamp and not (i == 0 and kernel == 1):
                return False
        elif i > kernel and not stamp and not (tok.endswith(":") and tok[:-1].lower() in KLOG_LEVELS):
            return False  # after it: timestamps and the level only
    return True


def split_klog(line, marker=NVRM):
    """The NVIDIA driver's message of a kernel log line (the text after "NVRM:"), or None when the line is not
    the driver's. Linear: one find, then at most MAX_KLOG_PREFIX characters read."""
    at = line.find(marker, 0, MAX_KLOG_PREFIX + len(marker))
    if at < 0 or not _klog_prefix_ok(line[:at]):
        return None
    return line[at + len(marker) :].strip()


PCI_BUS = r"(?:PCI:)?([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)"
# an XID number has at most 3 digits today; more than 6 is not an XID (the line is skipped, never the whole log)
XID_MSG = re.compile(r"Xid \((?:PCI:)?([0-9A-Fa-f:.]{4,16})\): (\d{1,6})(?!\d),?\s*(.*)")  # old drivers: no PCI:
# the driver's message for a GPU off the bus, with no Xid line: "NVRM: The NVIDIA GPU 0000:b3:00.0" then "NVRM:
# (PCI ID: 10de:26b5) installed in this system has" and "NVRM: fallen off the bus and is not responding..." (570+
# open), or "The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1e07) installed in this" then "system has fallen off the bus"
FELL_FIRST = re.compile(r"The NVIDIA GPU " + PCI_BUS)
PCI_ID_IN = re.compile(r"(?<![0-9A-Za-z:])" + PCI_BUS + r"(?![0-9A-Za-z])")
# faults without an Xid line, by the driver's own words: the GPU could not be initialised (RmInitAdapter failed,
# "Cannot attach gpu"), or its GSP firmware stopped answering (heartbeat or RPC timeouts, a memory subsystem error)
GPU_WHO = re.compile(r"(?:GPU " + PCI_BUS + r":?\s|GPU(\d{1,3})\s)?")
INIT_FAIL = re.compile(
    r"RmInitAdapter failed|Cannot attach gpu|rm_init_adapter failed|RmInitAdapter: Cannot initialize"
)
GSP_FAIL = re.compile(
    r"[Hh]eartbeat timed out|Memory Subsystem Error detected|GSP Timeout|Timeout waiting for RPC from GSP"
    r"|_kgspRpcRecvPoll:.{0,80}(?:timeout|timed out)",
)
GPU_IN_TEXT = re.compile(r"\bGPU(\d{1,3})\b")
NV_DEV = re.compile(r"([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]): ")  # "nvidia 0000:01:00.0: ..."
MINOR = re.compile(r"rm_init_adapter failed.{0,40}minor number (\d{1,3})")
ANSI = re.compile(r"\x1b\[[0-9;]{0,16}[A-Za-z]")
# what nvidia-smi writes for a value it does not know (or may not read): unknown, never malformed
UNKNOWN = ("N/A", "Not Found", "Not Supported", "Unknown Error", "Insufficient Permissions", "Unknown", "")
SYSTEMD_STATES = ("active", "inactive", "failed", "activating", "deactivating", "reloading", "unknown")
NCCL_VARS = ("NCCL_IB_HCA", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL")
# NVSwitch systems (HGX/DGX 8-GPU SXM boards) need nvidia-fabricmanager running before CUDA starts
# (the SXM H100 calls itself "H100 80GB HBM3"; "NVL"/"PCIe" boards have no NVSwitch), when 8 GPUs are on it
NVSWITCH_NAME = re.compile(r"A[18]00-SXM|H[18]00 80GB HBM3|H100 SXM|H800(?! PCIe)|H200(?! NVL)|H20\b|B[123]00")


def _known(text):
    """The text, or None when nvidia-smi says it does not know it ("N/A", "[N/A]", "Not Found", "[Not Supported]",
    "Unknown Error", "[Insufficient Permissions]", "[GPU requires reset]"...)."""
    text = (text or "").strip()
    if text.startswith("[") and text.endswith("]"):
        return None
    return None if text in UNKNOWN else text


def _xml_text(node, path):
    el = node.find(path) if node is not None else None
    return _known(el.text) if el is not None else None


def _xml_any(node, tag):
    """The text of the first element named `tag` anywhere under node (fields that moved between schema versions)."""
    el = next(node.iter(tag), None) if node is not None else None
    return _known(el.text) if el is not None else None


def _yes(text):
    return None if text is None else text.strip().lower() in ("yes", "true", "enabled", "active")


def _xml_int(node, path):
    m = re.match(r"\s*(\d{1,18})(?!\d)", _xml_text(node, path) or "")
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


def _mig_uncorrectable(g):
    """Volatile uncorrectable ECC errors summed over the GPU's MIG devices (with MIG on, the GPU's own volatile
    counters read N/A and each MIG device keeps its own: mig_devices/mig_device/ecc_error_count/volatile_count)."""
    counts = [
        _uncorrectable(m.find("ecc_error_count/volatile_count")) for m in g.findall("mig_devices/mig_device")[:64]
    ]
    counts = [c for c in counts if c is not None]
    return sum(counts) if counts else None


def parse_smi_xml(text):
    """{driver, cuda, attached, gpus [...]} from `nvidia-smi -q -x` (nvsmi_device_v12.dtd and older). A value
    nvidia-smi does not know (N/A, [N/A], Not Found, [Not Supported], Unknown Error) is None: unknown."""
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
                "throttle": [r for r in active if r != "gpu_idle"][:16],
                "ecc": {
                    "volatile_uncorrectable": _uncorrectable(g.find("ecc_errors/volatile")),
                    "aggregate_uncorrectable": _uncorrectable(g.find("ecc_errors/aggregate")),
                    "mig_volatile_uncorrectable": _mig_uncorrectable(g),
                },
                "retired": {
                    "single_bit": _xml_int(retired, "multiple_single_bit_retirement/retired_count"),
                    "double_bit": _xml_int(retired, "double_bit_retirement/retired_count"),
                    "pending": None if pending_pages is None else pending_pages == "Yes",
                },
                "remap": {
                    "correctable": _xml_int(rows, "remapped_row_corr"),
                    "uncorrectable": _xml_int(rows, "remapped_row_unc"),
                    "pending": _yes(_xml_text(rows, "remapped_row_pending")),
                    "failure": _yes(_xml_text(rows, "remapped_row_failure")),
                },
                # what the driver itself says to do (R550+: gpu_recovery_action; R570+: reset status, repairs)
                "recovery": {
                    "action": (_xml_any(g, "gpu_recovery_action") or "")[:64] or None,
                    "reset_required": _yes(_xml_any(g, "reset_required")),
                    "drain_and_reset_recommended": _yes(_xml_any(g, "drain_and_reset_recommended")),
                    "channel_repair_pending": _yes(_xml_any(g, "channel_repair_pending")),
                    "tpc_repair_pending": _yes(_xml_any(g, "tpc_repair_pending")),
                    "unrepairable_memory": _yes(_xml_any(g, "unrepairable_memory")),
                },
            }
        )
    return out


def read_kernel_log(kmsg="/dev/kmsg"):
    """(source, text) of this boot's kernel messages: /dev/kmsg (one record per read), else the tail of
    /var/log/kern.log from its last boot banner; (None, None) when neither is readable (dmesg_restrict)."""
    import errno

    try:
        fd = os.open(kmsg, os.O_RDONLY | os.O_NONBLOCK)
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
            return kmsg, b"".join(chunks).decode("utf-8", "replace")
    for path in KERNEL_LOG_FILES:
        try:  # a regular file only (a FIFO or device there is not waited on), its last MAX_KMSG bytes
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            os.lseek(fd, max(0, os.fstat(fd).st_size - MAX_KMSG), 0)
            chunks, size = [], 0
            while size < MAX_KMSG:
                chunk = os.read(fd, min(1 << 20, MAX_KMSG - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            text = b"".join(chunks).decode("utf-8", "replace")
        except OSError:
            continue
        finally:
            os.close(fd)
        boot = text.rfind("kernel: Linux version ")
        return path, text[text.rfind("\n", 0, boot) + 1 :] if boot >= 0 else text
    return None, None


def _bus_key(bus):
    """ "0000:5F:00.0", "PCI:0000:5f:00", "00000000:5F:00.0" -> "0000:5f:00" (domain:bus:device), to match
    a kernel log's PCI id with nvidia-smi's."""
    parts = (bus or "").lower().replace("pci:", "").split(":")
    if len(parts) < 3:
        return (bus or "").lower()
    return "%04x:%s:%s" % (int(parts[-3][-8:] or "0", 16), parts[-2], parts[-1].split(".")[0])


def _driver_messages(text):
    """[(message, next messages, bus, previous message)] of the NVIDIA driver's lines (split_klog), each with the 3
    driver messages after it (multi-line reports), the one before it, and the bus id of a kernel line about the
    nvidia device just before it (`nvidia 0000:01:00.0: irq 50 for MSI/MSI-X`, at most 3 lines up), the only name
    an old driver's `RmInitAdapter failed!` has."""
    msgs, dev_bus, dev_at = [], None, -9
    for i, line in enumerate(text.splitlines()):
        m = split_klog(line)
        if m is None:
            dev = split_klog(line, "nvidia ") if "nvidia " in line[: MAX_KLOG_PREFIX + 8] else None
            dev = NV_DEV.match(dev) if dev else None
            if dev:
                dev_bus, dev_at = dev.group(1), i
            continue
        near = dev_bus if i - dev_at <= 3 else None
        # /dev/kmsg escapes a multi-line message's newlines: "...0000:b3:00.0\x0aNVRM: (PCI ID..."
        msgs += [(p.strip()[5 if p.strip().startswith(NVRM) else 0 :].strip(), near) for p in m.split("\\x0a")[:8]]
    return [
        (m, [x for x, _ in msgs[i + 1 : i + 4]], near, msgs[i - 1][0] if i else "") for i, (m, near) in enumerate(msgs)
    ]


def _fault(msg, following, previous=""):
    """(kind, bus, driver's GPU index) of a GPU fault the driver reports without an Xid line, or None: "init" (the
    driver could not bring the GPU up: `GPU 0000:09:00.0: RmInitAdapter failed! (...)`, `Cannot attach gpu`, once
    per failed attach), "power" (`GPU 0000:01:00.0: GPU does not have the necessary power cables connected.`, the
    RmInitAdapter failure after it not counted again) or "gsp" (its GSP firmware stopped answering: `GPU6
    _kgspIsHeartbeatTimedOut: Heartbeat timed out`, `Memory Subsystem Error detected`, `_kgspRpcRecvPoll: GSP RM
    heartbeat timed out`)."""
    if "necessary power cables connected" in msg[:200]:  # then RmInitAdapter fails: one event, its cause named
        kind = "power"
    elif INIT_FAIL.search(msg[:200]):
        if "rm_init_adapter failed" in msg and "RmInitAdapter failed" in previous:
            return None  # the second line of an RmInitAdapter failure, counted on its first
        if "RmInitAdapter failed" not in msg and any("RmInitAdapter failed" in x for x in following):
            return None  # "Cannot attach gpu" before the RmInitAdapter line that names the GPU: one event
        kind = "init"
    elif GSP_FAIL.search(msg[:300]):
        kind = "gsp"
    else:
        return None
    who = GPU_WHO.match(msg)
    return kind, who.group(1), int(who.group(2)) if who.group(2) else None


def _record(msg, following, near=None, previous=""):
    """One driver message as (xid or fault kind, bus, driver's GPU index, text), or None (near: the bus id of the
    nvidia device's kernel line just before it)."""
    m = XID_MSG.match(msg)
    if m:
        return int(m.group(2)), m.group(1), None, m.group(3)[:200]
    m = FELL_FIRST.match(msg)
    if m and any("fallen off the bus" in x[:120] for x in following[:2]):
        return 79, m.group(1), None, "GPU has fallen off the bus (driver message without an Xid line)"
    if "fallen off the bus" in msg[:200]:  # "GPU 0000:3b:00.0: GPU has fallen off the bus.", older drivers' "GPU at
        m = PCI_ID_IN.search(msg[:200])  # 0000:01:00.0 has fallen off the bus."; without a bus id: a 3-line report's
        if m:  # last line, counted on its first
            return 79, m.group(1), None, "GPU has fallen off the bus (driver message without an Xid line)"
    fault = _fault(msg, following, previous)
    if fault is None:
        return None
    minor = MINOR.search(" ".join([msg] + following[:1])[:400]) if fault[1] is None else None
    # an old driver names a GPU it cannot bring up only by its device minor number, on the next line
    where = " (device minor number %s: /dev/nvidia%s)" % (minor.group(1), minor.group(1)) if minor else ""
    if fault[0] == "init" and fault[1] is None and fault[2] is None and near:
        fault = (fault[0], near, None)  # the nvidia device the kernel named just before
        where += " (bus id from the kernel's `nvidia %s:` line before it)" % near
    return fault + (msg[:200] + where,)


def parse_xids(text):
    """Every NVIDIA driver XID of a kernel log (only lines whose message starts with "NVRM: ", see split_klog):
    {"events": the newest MAX_XIDS [{bus, xid, text}], "counts": [{xid, bus, n}] of all of them (bounded by
    (XID, GPU) pairs), "faults": [{kind, bus, gpu, n, text}] of the faults without an Xid line (_fault), "gpu_bus":
    {driver's GPU index: bus} where a message names both, "total": n, "keys": every event's (xid or kind, bus),
    for new_counts}. A GPU off the bus that the driver reported without an Xid line (the open driver's three NVRM
    lines, or `GPU 0000:3b:00.0: GPU has fallen off the bus`) counts as an XID 79 of that GPU, once."""
    records = [r for r in (_record(m, f, near, prev) for m, f, near, prev in _driver_messages(text)) if r]
    unpowered = set(_bus_key(r[1]) for r in records if r[0] == "power" and r[1])
    records = [r for r in records if not (r[0] == "init" and r[1] and _bus_key(r[1]) in unpowered)]
    xid79 = set(_bus_key(r[1]) for r in records if r[0] == 79 and not r[3].endswith("without an Xid line)"))
    events, counts, order, keys, faults, gpu_bus = [], {}, [], [], {}, {}
    for xid, bus, index, rest in records:
        if isinstance(xid, int):
            if xid == 79 and rest.endswith("without an Xid line)"):
                if _bus_key(bus) in xid79:
                    continue
                xid79.add(_bus_key(bus))
            named = set(GPU_IN_TEXT.findall(rest))
            if len(named) == 1 and len(gpu_bus) < 64:  # "... RPC response from GPU4 GSP!": GPU4 is this bus
                gpu_bus[str(named.pop())] = bus
            events.append({"bus": bus, "xid": xid, "text": rest})
            if len(events) > MAX_XIDS:
                del events[0]
            key = (xid, _bus_key(bus)) if len(counts) < MAX_XID_KEYS else (xid, "other")
            if key not in counts:
                counts[key] = 0
                order.append(key)
            counts[key] += 1
        else:
            ident = _bus_key(bus) if bus else ("gpu%d" % index if index is not None else "")
            key = (xid, ident)
            if key not in faults:
                if len(faults) >= MAX_FAULT_KEYS:
                    continue
                faults[key] = {"kind": xid, "bus": bus, "gpu": index, "n": 0, "ident": ident}
            faults[key]["n"] += 1
            faults[key]["text"] = rest
        keys.append(key)
    counted = [{"xid": k[0], "bus": k[1], "n": counts[k]} for k in order]
    return {
        "events": events,
        "counts": counted,
        "faults": list(faults.values()),
        "gpu_bus": gpu_bus,
        "total": len(keys),
        "keys": keys,
    }


def _read_state(path):
    """The XID state file's JSON, read safely: no link followed, no FIFO or device waited on, at most MAX_STATE
    bytes ({} when it is missing, not a regular file of ours, or not JSON)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return {}
        data = os.read(fd, MAX_STATE)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        old = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return {}
    return old if isinstance(old, dict) else {}


def _write_state(path, content):
    """Replace the state file: a fresh temp file (O_EXCL, no link followed, mode 600), then renamed over it."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = "%s.%d.%s.tmp" % (path, os.getpid(), os.urandom(4).hex())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, content.encode())
    finally:
        os.close(fd)
    try:
        os.rename(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise


def xid_state(total, path):
    """How many of this boot's XID events are new since the last clusterdoc run on this node, and when that run
    was: a small JSON file ($XDG_CACHE_HOME or ~/.cache, clusterdoc/gpu-HOST.json: a home shared by many nodes
    keeps one per node), rewritten with this run's count."""
    boot = (read("/proc/sys/kernel/random/boot_id") or "").strip()
    old = _read_state(path)
    if old.get("boot_id") != boot:
        old = {}
    seen = old.get("xids")
    seen = seen if isinstance(seen, int) and not isinstance(seen, bool) and 0 <= seen < 1 << 62 else 0
    new = total - seen if total >= seen else total
    try:
        _write_state(path, json.dumps({"boot_id": boot, "xids": total, "at": time.time()}))
    except (OSError, IOError):
        pass
    at = old.get("at")
    return new, at if isinstance(at, (int, float)) and not isinstance(at, bool) and 0 < at < 1e11 else None


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
    """[{device, port, link_layer, hca, rate_gbps, link_downed, symbol_error, link_error_recovery}] of every IB/RoCE
    port (link_layer: "InfiniBand" or "Ethernet" (RoCE); hca: the adapter model, hca_type)."""
    out = []
    base = IB_CLASS
    for dev in sorted(os.listdir(base) if os.path.isdir(base) else [])[:64]:
        for port in listdir_prefix(os.path.join(base, dev, "ports"), "")[:16]:
            m = re.match(r"\s*([\d.]+) Gb/sec", read(os.path.join(port, "rate")) or "")
            layer = (read(os.path.join(port, "link_layer"), 64) or "").strip()
            entry = {
                "device": dev,
                "port": os.path.basename(port),
                "link_layer": layer if re.match(r"[A-Za-z]{1,32}$", layer) else None,
                "hca": (read(os.path.join(base, dev, "hca_type"), 64) or "").strip()[:32] or None,
                "rate_gbps": float(m.group(1)) if m else None,
            }
            for name in ("link_downed", "symbol_error", "link_error_recovery"):
                v = (read(os.path.join(port, "counters", name)) or "").strip()
                entry[name] = int(v) if v.isdigit() and len(v) < 19 else None
            out.append(entry)
    return out


NVLINK_GPU = re.compile(r"GPU (\d{1,3}): (.{0,80}?)(?: \(UUID|$)")
NVLINK_ALL_DOWN = re.compile(r"\s*(?:NVML: )?Unable to retrieve NVLink information as all links are inactive", re.I)
NVLINK_STATE = re.compile(r"\s*Link (\d{1,3}): (?:<(inactive)>|([\d.]{1,12}) GB/s)")
NVLINK_COUNTER = re.compile(r"\s*Link (\d{1,3}): ([A-Za-z][\w ]{0,40}?): (\d{1,20})\s*$")
P2P_CODES = ("OK", "NS", "CNS", "GNS", "TNS", "U")


def parse_nvlink(text, counters=False):
    """`nvidia-smi nvlink -s` ("GPU 0: NAME (UUID: ...)" then "Link 0: 26.562 GB/s" or "Link 1: <inactive>") ->
    {gpu index: {"active": n, "inactive": [link]}}; with counters, `nvidia-smi nvlink -e` ("Link 0: Replay
    Errors: 0") -> {gpu index: {"link counter name": n}}. GPUs without NVLink print no Link line (left out)."""
    out, gpu, name = {}, None, None
    for line in ANSI.sub("", text).splitlines()[:4096]:
        m = NVLINK_GPU.match(line)
        if m:
            gpu, name = m.group(1), m.group(2).strip() or None
            continue
        if gpu is None or len(out) > 64:
            continue
        if not counters and NVLINK_ALL_DOWN.match(line):  # the GPU has links, none up: kept, all down
            out[gpu] = {"active": 0, "inactive": [], "all_down": True, "name": name}
            continue
        if counters:
            m = NVLINK_COUNTER.match(line)
            if m:
                # a 64-bit counter at its ceiling is kept as that ceiling's 32-bit value (facts stay < 2**63)
                value = int(m.group(3))
                out.setdefault(gpu, {})["%s %s" % (m.group(1), m.group(2)[:40])] = (
                    value if value < 1 << 62 else 0xFFFFFFFF
                )
            continue
        m = NVLINK_STATE.match(line)
        if m:
            links = out.setdefault(gpu, {"active": 0, "inactive": [], "name": name})
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
    for line in ANSI.sub("", text).splitlines()[:512]:  # nvidia-smi underlines the header on a terminal
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


def new_counts(keys, new):
    """[{xid, bus, n}] of the newest `new` events (keys: every event's (xid, bus) in the log's order)."""
    counts, order = {}, []
    for key in keys[len(keys) - new :] if new > 0 else []:
        if key not in counts:
            counts[key] = 0
            order.append(key)
        counts[key] += 1
    return [{"xid": k[0], "bus": k[1], "n": counts[k]} for k in order]


def _dcgm_json(text):
    """The JSON object of a dcgmi -j answer (dcgmi may print a warning line before it); None: none there."""
    text = text[:MAX_DCGM]
    start = text.find("{")
    try:
        value = json.loads(text[start:]) if start >= 0 else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def parse_dcgm_diag(text):
    """`dcgmi diag -r 1 -j` (DCGM 3: {"DCGM GPU Diagnostic": {"test_categories": [{category, tests: [{name, results:
    [{gpu_ids?, status, info?, warnings?}]}]}]}}; DCGM 4 names it "DCGM Diagnostic") -> {"tests": n, "results":
    [{test, gpu, status, detail}] of every result that is not Pass/Skip (at most 32)}; None: not that JSON."""
    doc = _dcgm_json(text)
    if doc is None:
        return None
    root = doc.get("DCGM GPU Diagnostic") or doc.get("DCGM Diagnostic") or {}
    cats = root.get("test_categories") if isinstance(root, dict) else None
    if not isinstance(cats, list):
        return None
    tests, bad = 0, []
    for cat in cats[:32]:
        for test in (cat.get("tests") if isinstance(cat, dict) else None) or []:
            if not isinstance(test, dict):
                continue
            tests += 1
            summary = test.get("test_summary") if isinstance(test.get("test_summary"), dict) else {}
            results = [r for r in (test.get("results") or [])[:64] if isinstance(r, dict)] or [summary]
            for r in results:
                status = str(r.get("status") or "")[:16]
                if status.lower() in ("pass", "skip", "") or len(bad) >= 32:
                    continue
                detail = r.get("warnings") or r.get("warning") or r.get("info") or ""
                if isinstance(detail, list):
                    detail = "; ".join(str(d.get("warning") if isinstance(d, dict) else d) for d in detail[:4])
                gpu = r.get("gpu_ids", r.get("gpu_id", r.get("entity_id")))
                bad.append(
                    {
                        "test": str(test.get("name") or "")[:64],
                        "gpu": None if gpu is None else str(gpu)[:64],
                        "status": status,
                        "detail": str(detail)[:300],
                    }
                )
    return {"tests": tests, "results": bad}


def parse_dcgm_health(text):
    """`dcgmi health -c -j` ({"header": ["Health Monitor Report"], "body": {"Overall Health": {"value": "Healthy"},
    ...incidents...}}) -> {"overall": "Healthy"|"Warning"|"Failure", "incidents": [text] (at most 16)}; None."""
    doc = _dcgm_json(text)
    body = doc.get("body") if doc else None
    if not isinstance(body, dict):
        return None
    overall = body.get("Overall Health")
    overall = overall.get("value") if isinstance(overall, dict) else overall
    incidents = []

    def walk(node, path, depth):
        if depth > 8 or len(incidents) >= 16:
            return
        if isinstance(node, dict):
            for k, v in list(node.items())[:64]:
                if k != "Overall Health":
                    walk(v, path + [str(k)[:40]] if k not in ("children", "value") else path, depth + 1)
        elif isinstance(node, list):
            for v in node[:64]:
                walk(v, path, depth + 1)
        elif isinstance(node, str) and node not in ("Healthy", "Pass", ""):
            incidents.append((" / ".join(path[-3:]) + ": " + node)[:300])

    walk(body, [], 0)
    return {"overall": str(overall)[:32] if overall else None, "incidents": incidents}


def probe_dcgm(dcgmi, timeout):
    """DCGM's quick diagnostic (`dcgmi diag -r 1 -j`: deployment and software checks, seconds, nothing stressed) and
    its health watches (`dcgmi health -c -j`, read only: watches are the admin's to set), each bounded by timeout."""
    out = {}
    for key, argv, parse in (
        ("diag", [dcgmi, "diag", "-r", "1", "-j"], parse_dcgm_diag),
        ("health", [dcgmi, "health", "-c", "-j"], parse_dcgm_health),
    ):
        try:
            code, text, err = run(argv, timeout)
        except subprocess.TimeoutExpired:
            out[key] = {"error": "timed out after %gs" % timeout}
            continue
        except OSError as exc:
            out[key] = {"error": str(exc)[:200]}
            continue
        parsed = parse(text)
        if parsed is None:
            parsed = {"error": "exit %d: %s" % (code, ((err or text).strip().splitlines() or [""])[-1][:200])}
        out[key] = parsed
    return out


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

    dcgmi = which("dcgmi")
    out["dcgm"] = {} if dcgmi else None

    def dcgm():
        out["dcgm"] = probe_dcgm(dcgmi, timeout)

    _parallel(
        [
            ask("xml", ["-q", "-x"]),
            ask("links", ["nvlink", "-s"]),
            ask("errors", ["nvlink", "-e"]),
            ask("p2p", ["topo", "-p2p", "r"]),
        ]
        + ([dcgm] if dcgmi else [])
    )
    for key, answer in answers.items():
        if isinstance(answer, Exception):
            if key == "xml":
                raise answer
            answers[key] = (-1, "", "")
    code, text, err = answers["xml"]
    for line in (err + "\n" + (text if not text.lstrip().startswith("<") else "")).splitlines():
        lost = lost_gpu(line)
        if lost and len(out["lost"]) < 16:
            out["lost"].append(lost)
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
        xids = parse_xids(log)
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        path = os.path.join(state_dir or os.path.join(cache, "clusterdoc"), "gpu-%s.json" % os.uname()[1])
        new, since = xid_state(xids["total"], path)
        xids.update(source=source, new=new, since=since)
        fresh = new_counts(xids.pop("keys"), new)
        xids["new_counts"] = [c for c in fresh if not isinstance(c["xid"], str)]
        for f in xids["faults"]:
            ident = f.pop("ident")
            f["new"] = sum(c["n"] for c in fresh if c["xid"] == f["kind"] and c["bus"] == ident)
        out["xid"] = xids
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
