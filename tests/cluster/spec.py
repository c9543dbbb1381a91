"""Node specs: YAML with `defaults:` plus per-node overrides under `nodes:`.

A resolved node spec is a plain dict with every key of KEYS present. Dict values merge key by key
(so planting {"torch": {"cuda": "11.8"}} keeps the other torch fields); everything else replaces.
"""
from __future__ import annotations

import copy
import re
import resource
from pathlib import Path

import yaml

DEFAULT_SPEC = Path(__file__).with_name("default.yaml")

KEYS = {
    "kernel", "gpus", "driver", "toolkits", "path_toolkit", "ld_toolkit", "cuda_home", "gcc", "python",
    "torch", "deepspeed", "libaio", "env", "mesh_broken_to", "hang", "fail", "login_output",
    # the node's network and limits, planted at the real edge (nodes.py and net.py say where)
    "hosts", "mtu", "ifname", "firewall", "shm_mib", "memlock_kib", "clock_offset_s", "link_down",
    # a slow node (limits.py): a token bucket on its link, a share of one CPU for everything it runs
    "link_rate_mbit", "cpu_quota",
    # GPU and fabric health, planted in nvidia-smi -q -x, /dev/kmsg, systemctl, /sys/bus/pci, /sys/module
    "xid", "gpus_visible", "row_remap_pending", "ecc_uncorrectable", "throttle", "persistence", "pcie_width",
    "fabricmanager", "acs", "iommu", "peermem", "mig", "compute_mode", "ib_rate_gbps", "ib_link_downed",
    "nvlink_down", "nvlink_errors", "p2p", "nvidia_open",
    # real outputs (files under tests/real, with their sources) printed at the same edges
    "real_smi_xml", "real_kmsg", "real_lost", "kmsg_extra",
    # Slurm's view of the node: its Feature= list in slurm.conf (read when the cluster starts)
    "features",
}
# What a node looks like when neither the spec file nor a plant says anything.
BASE = {
    "kernel": "5.15.0-105-generic", "gpus": [], "driver": None, "toolkits": [], "path_toolkit": None,
    "ld_toolkit": None, "cuda_home": None, "gcc": None, "python": "/usr/bin/python3", "torch": None,
    "deepspeed": None, "libaio": False, "env": {}, "mesh_broken_to": [], "hang": [], "fail": [],
    "login_output": 0,  # bytes every ssh session's shell prints on stdout before the command (~/.bashrc)
    "hosts": [],        # lines put first in the node's /etc/hosts ("127.0.1.1 node2")
    "mtu": 1500,        # the node's interface MTU
    "ifname": "eth0",   # the node's interface name
    "firewall": {"drop_tcp": []},  # incoming TCP to these ports dropped (nft, in the node's netns)
    "shm_mib": None,    # a tmpfs of this size on the node's /dev/shm (None: the machine's /dev/shm)
    "memlock_kib": None,  # RLIMIT_MEMLOCK of sshd and slurmd, so of ssh sessions (None: the head's)
    "clock_offset_s": 0,  # the node's `date` runs this many seconds ahead (negative: behind)
    "link_down": False,   # the node's interface is down
    "link_rate_mbit": None,  # its link carries at most this many Mbit/s each way (tc tbf on both veth ends)
    "cpu_quota": None,    # its sshd, slurmd and all they start get this share of one CPU (cgroup v1 cpu quota)
    "xid": [],            # XID numbers in the node's kernel log (NVRM: Xid lines)
    "gpus_visible": None,  # GPUs the driver still reaches (the rest fell off the bus); None: all
    "row_remap_pending": 0,  # rows remapped for uncorrectable errors, waiting for a GPU reset
    "ecc_uncorrectable": 0,  # volatile and aggregate uncorrectable DRAM ECC errors per GPU
    "throttle": [],       # active clock event reasons (hw_slowdown, hw_thermal_slowdown, ...)
    "persistence": True,  # persistence mode
    "pcie_width": None,   # current PCIe link width (max 16)
    "fabricmanager": "active",  # `systemctl is-active nvidia-fabricmanager`
    "acs": False,         # ACS Source Validation on the PCIe switch ports above the GPUs
    "iommu": "passthrough",  # or "translated" (the GPUs' IOMMU groups have type DMA-FQ)
    "peermem": True,      # /sys/module/nvidia_peermem
    "mig": False,         # MIG mode on
    "compute_mode": "Default",
    "ib_rate_gbps": None,  # an InfiniBand port (mlx5_0/1) at this rate in /sys/class/infiniband; None: no IB
    "ib_link_downed": 0,  # its link_downed counter
    "nvlink_down": 0,     # NVLinks of GPU 0 inactive in `nvidia-smi nvlink -s` (SXM boards have 12 or 18)
    "nvlink_errors": 0,   # CRC errors on GPU 0's link 0 in `nvidia-smi nvlink -e`
    "p2p": "OK",          # `nvidia-smi topo -p2p r` between every pair of GPUs (OK, NS, CNS, TNS, GNS)
    "nvidia_open": False,  # NVIDIA's open kernel module (no P in /sys/module/nvidia/taint): DMA-BUF RDMA
    "real_smi_xml": None,  # tests/real/...: `nvidia-smi -q -x` prints this real file as it is
    "real_kmsg": None,    # tests/real/...: this real kernel log's lines follow the boot banner in /dev/kmsg
    "real_lost": None,    # tests/real/...: its first line is what nvidia-smi prints for a GPU past gpus_visible
    "kmsg_extra": [],     # more /dev/kmsg records, as written (a hostile node's own lines)
    "features": [],       # Slurm node features (slurm.conf Feature=; `sbatch -C NAME`), set at `up`
}


class SpecError(ValueError):
    pass


def merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def check_keys(spec: dict, where: str) -> None:
    if not isinstance(spec, dict):
        raise SpecError(f"{where}: expected a mapping of spec keys, got {type(spec).__name__}")
    unknown = sorted(set(spec) - KEYS)
    if unknown:
        raise SpecError(f"{where}: unknown spec key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")


def check_network(spec: dict, where: str) -> None:
    """A resolved spec's network keys have forms the node can be given (they end up in ip/nft input)."""
    def bad(key, why):
        raise SpecError(f"{where}: {key}: {why}, got {spec.get(key)!r}")
    hosts = spec.get("hosts")
    control = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h.strip() and not control.search(h)
                                              for h in hosts):
        bad("hosts", "expected a list of /etc/hosts lines ('ADDRESS NAME...')")
    mtu = spec.get("mtu")
    if not isinstance(mtu, int) or isinstance(mtu, bool) or not 68 <= mtu <= 65535:
        bad("mtu", "expected an integer from 68 to 65535")
    if not isinstance(spec.get("ifname"), str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]{0,14}", spec["ifname"]) \
            or spec["ifname"] == "lo":
        bad("ifname", "expected an interface name (a letter, then letters, digits, _ . -; at most 15)")
    fw = spec.get("firewall")
    ports = fw.get("drop_tcp") if isinstance(fw, dict) else None
    if not isinstance(fw, dict) or set(fw) - {"drop_tcp"} or not isinstance(ports, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= 65535 for p in ports):
        bad("firewall", "expected {drop_tcp: [PORT, ...]}")
    for key in ("shm_mib", "memlock_kib"):
        v = spec.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            bad(key, "expected a positive integer or null")
    hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    if spec.get("memlock_kib") and hard != resource.RLIM_INFINITY and spec["memlock_kib"] * 1024 > hard:
        bad("memlock_kib", f"at most this machine's hard limit, {hard // 1024} KiB (a node's limit can only be "
                           "lowered: root here has no CAP_SYS_RESOURCE)")
    off = spec.get("clock_offset_s")
    if not isinstance(off, int) or isinstance(off, bool):
        bad("clock_offset_s", "expected an integer number of seconds")
    if not isinstance(spec.get("link_down"), bool):
        bad("link_down", "expected true or false")
    rate = spec.get("link_rate_mbit")
    if rate is not None and (not isinstance(rate, int) or isinstance(rate, bool) or not 1 <= rate <= 100_000):
        bad("link_rate_mbit", "expected an integer from 1 to 100000 (Mbit/s) or null")
    quota = spec.get("cpu_quota")
    if quota is not None and (not isinstance(quota, (int, float)) or isinstance(quota, bool) or not 0.01 <= quota <= 64):
        bad("cpu_quota", "expected a share of one CPU from 0.01 to 64 or null")


def check_features(spec: dict, where: str) -> list[str]:
    """The node's Slurm features: names sbatch -C can ask for (they go into slurm.conf)."""
    feats = spec.get("features")
    if not isinstance(feats, list) or not all(isinstance(f, str) and re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", f)
                                              for f in feats):
        raise SpecError(f"{where}: features: expected a list of names (letters, digits, _ . -), got {feats!r}")
    return feats


def load(path: Path | str | None = None) -> dict:
    """Return {"defaults": {...}, "nodes": {name: {...}}} from a YAML file (default.yaml when None)."""
    path = Path(path) if path else DEFAULT_SPEC
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SpecError(f"{path}: cannot read spec: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"defaults", "nodes"}:
        raise SpecError(f"{path}: expected top-level keys 'defaults' and 'nodes'")
    defaults = data.get("defaults") or {}
    nodes = data.get("nodes") or {}
    check_keys(defaults, f"{path}: defaults")
    for name, node in nodes.items():
        check_keys(node or {}, f"{path}: nodes.{name}")
    return {"defaults": defaults, "nodes": {k: (v or {}) for k, v in nodes.items()}}


def resolve(spec: dict, name: str) -> dict:
    """The full spec of one node: BASE <- defaults <- nodes[name]."""
    return merge(merge(BASE, spec["defaults"]), spec["nodes"].get(name, {}))


def as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
