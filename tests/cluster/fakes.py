"""Realise one node's spec as files: the tree bound over the node's /usr/local and the other small files.

Everything is written into the node's directory; nodes.py mounts it inside the node's mount namespace.
Files that are bind-mounted singly (osrelease, uname) are rewritten in place so a running node sees the
change; the /usr/local tree is emptied and refilled (the directory itself, the mount source, stays).
The fakes are POSIX sh scripts, so they work on a node whose python is planted absent.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import zlib
from pathlib import Path

from . import cuda_facts as cf
from .spec import as_list

REPO = Path(__file__).resolve().parents[2]
# `torch: real` nodes run the project's venv python (real CPU torch); fall back to the running python.
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
if not VENV_PYTHON.exists():
    VENV_PYTHON = Path(sys.executable)
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
GCC_YEAR = {7: 2017, 8: 2018, 9: 2019, 10: 2020, 11: 2021, 12: 2022, 13: 2023, 14: 2024, 15: 2025}
# Realistic failure text for `fail:`; other commands get a generic one.
FAIL_TEXT = {
    "nvidia-smi": ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                   "Make sure that the latest NVIDIA driver is installed and running.", 9),
    "nvcc": ("nvcc fatal   : Could not open input file /dev/null", 1),
}


def write(path: Path, text: str, mode: int = 0o644) -> None:
    """Write in place (same inode), so a file bind-mounted into a running node shows the new text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)


def script(path: Path, body: str) -> None:
    write(path, "#!/bin/sh\n" + body.lstrip("\n"), 0o755)


def heredoc(text: str) -> str:
    return f"cat <<'CLUSTERDOC_EOF'\n{text.rstrip(chr(10))}\nCLUSTERDOC_EOF\n"


def toolkit_dir(version: str) -> str:
    return f"/usr/local/cuda-{cf.short(version)}"


def python_minor(python: str | None) -> str:
    """"3.11" for the python the node runs (where its dist-packages live)."""
    real = os.path.realpath(python or "/usr/bin/python3")
    m = re.search(r"python(\d+\.\d+)$", real)
    return m.group(1) if m else "3.11"


# ---------------------------------------------------------------- environment
def node_env(spec: dict) -> dict:
    """Variables every ssh session on the node gets (sshd SetEnv)."""
    env = {}
    path_kits = [toolkit_dir(v) + "/bin" for v in as_list(spec.get("path_toolkit"))]
    env["PATH"] = ":".join(path_kits + [BASE_PATH])
    ld_kits = [toolkit_dir(v) + "/lib64" for v in as_list(spec.get("ld_toolkit"))]
    if ld_kits:
        env["LD_LIBRARY_PATH"] = ":".join(ld_kits)
    home = spec.get("cuda_home")
    if home:
        env["CUDA_HOME"] = home if str(home).startswith("/") else toolkit_dir(home)
    for key, value in (spec.get("env") or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[str(key)] = str(value)
    return env


# ---------------------------------------------------------------- nvidia-smi
def expand_gpus(spec: dict) -> list[dict]:
    gpus = []
    for group in spec.get("gpus") or []:
        for _ in range(int(group.get("count", 1))):
            i = len(gpus)
            gpus.append({
                "index": i, "name": str(group.get("model", "NVIDIA A100-SXM4-80GB")),
                "cap": str(group.get("capability", "8.0")), "mem": int(group.get("memory_mib", 81920)),
                "uuid": f"GPU-{i:08x}-c1d0-4c0c-9e5a-{zlib.crc32(str(group.get('model')).encode()) % 10**12:012d}",
                "bus": f"00000000:{0x07 + 0x10 * i:02X}:00.0",
            })
    return gpus


def nvidia_smi(spec: dict, gpus: list[dict]) -> str:
    driver = str(spec.get("driver") or "550.54.14")
    cuda = cf.driver_cuda(driver)
    has_cap = cf.vtuple(driver)[0] >= 510  # compute_cap is not a query field on older drivers
    lost = lost_lines(spec, gpus)  # the GPUs past gpus_visible: named on stderr, exit 15 (NVML: GPU is lost)
    gpus_all, gpus = gpus, visible_gpus(spec, gpus)
    # One sh `case` per GPU sets the values; `value` maps a field name to text (units stripped on nounits).
    per_gpu = []
    for g in gpus:
        per_gpu.append(
            f"    {g['index']}) NAME={shlex.quote(g['name'])}; UUID={g['uuid']}; BUS={g['bus']}; "
            f"MEM={g['mem']}; CAP={g['cap']};;")
    def row(a: str, b: str, c: str) -> str:
        return f"|{a[:41]:<41}|{b[:24]:<24}|{c[:22]:<22}|"

    banner_rows = []
    for g in gpus:
        banner_rows += [
            row(f"{g['index']:>4}  {g['name'][:24]:<24}{'On':>9}  ", f"{g['bus']:>19} Off ", f"{'0':>21} "),
            row(f" N/A   30C    P0{'60W /  400W':>24} ", f"{'0MiB / ':>13}{str(g['mem']) + 'MiB':>10} ",
                f"{'0%      Default':>21} "),
            row("", "", f"{'Disabled':>21} "),
            "+-----------------------------------------+------------------------+----------------------+",
        ]
    head = f"| NVIDIA-SMI {driver:<22} Driver Version: {driver:<14} CUDA Version: {cuda:<8} |"
    banner = "\n".join([
        "+-----------------------------------------------------------------------------------------+",
        f"{head[:-1]:<89}|",
        "|-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
        *banner_rows,
        "",
        "+-----------------------------------------------------------------------------------------+",
        "| Processes:                                                                              |",
        "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        "|  No running processes found                                                             |",
        "+-----------------------------------------------------------------------------------------+",
    ])
    listing = "\n".join(f"GPU {g['index']}: {g['name']} (UUID: {g['uuid']})" for g in gpus)
    return f'''
# Fake nvidia-smi of the clusterdoc test cluster: answers like driver {driver} with {len(gpus)} GPU(s)
# ({len(gpus_all) - len(gpus)} more off the bus).
lost() {{ {f"printf %s {shlex.quote(lost)} >&2; exit 15" if lost else ":"}; }}
DRIVER={shlex.quote(driver)}; CUDA={cuda}; COUNT={len(gpus)}; HAS_CAP={1 if has_cap else 0}
gpu() {{
  case "$1" in
{chr(10).join(per_gpu)}
  esac
}}
# header and value of one field for the current GPU; returns 1 for a field nvidia-smi does not know
field() {{
  case "$1" in
    index) H=index; V=$I;;
    name|gpu_name) H=name; V=$NAME;;
    uuid|gpu_uuid) H=uuid; V=$UUID;;
    pci.bus_id|gpu_bus_id) H=pci.bus_id; V=$BUS;;
    compute_cap) [ "$HAS_CAP" = 1 ] || return 1; H=compute_cap; V=$CAP;;
    memory.total) H="memory.total [MiB]"; V="$MEM MiB";;
    memory.used) H="memory.used [MiB]"; V="0 MiB";;
    memory.free) H="memory.free [MiB]"; V="$MEM MiB";;
    driver_version) H=driver_version; V=$DRIVER;;
    count) H=count; V=$COUNT;;
    serial|gpu_serial) H=serial; V="132032000${{I}}000";;
    vbios_version) H=vbios_version; V=92.00.36.00.01;;
    persistence_mode) H=persistence_mode; V=Enabled;;
    pstate) H=pstate; V=P0;;
    compute_mode) H=compute_mode; V=Default;;
    mig.mode.current) H=mig.mode.current; V=Disabled;;
    utilization.gpu) H="utilization.gpu [%]"; V="0 %";;
    utilization.memory) H="utilization.memory [%]"; V="0 %";;
    temperature.gpu) H=temperature.gpu; V=30;;
    power.draw) H="power.draw [W]"; V="60.00 W";;
    power.limit) H="power.limit [W]"; V="400.00 W";;
    clocks.sm|clocks.current.sm) H="clocks.current.sm [MHz]"; V="1410 MHz";;
    clocks.max.sm) H="clocks.max.sm [MHz]"; V="1410 MHz";;
    *) return 1;;
  esac
  [ "$NOUNITS" = 1 ] && V=${{V% MiB}} && V=${{V% %}} && V=${{V% W}} && V=${{V% MHz}}
  return 0
}}
case "$1 $2 $3" in
  "nvlink -s "|"nvlink --status ")
{heredoc(nvlink_status(spec, gpus))}    lost; exit 0;;
  "nvlink -e "|"nvlink --errorcounters ")
{heredoc(nvlink_errors(spec, gpus))}    lost; exit 0;;
  "topo -p2p r")
{heredoc(p2p_matrix(spec, gpus))}    lost; exit 0;;
esac
QUERY=; FORMAT=; ONLY=; LIST=0; DETAIL=0; XML=0
while [ $# -gt 0 ]; do
  case "$1" in
    --query-gpu=*) QUERY=${{1#--query-gpu=}};;
    --query-gpu) shift; QUERY=$1;;
    --format=*) FORMAT=${{1#--format=}};;
    --format) shift; FORMAT=$1;;
    -i|--id) shift; ONLY=$1;;
    --id=*) ONLY=${{1#--id=}};;
    -L|--list-gpus) LIST=1;;
    -q|--query) DETAIL=1;;
    -x|--xml-format) XML=1;;
    -qx|-xq) DETAIL=1; XML=1;;
    -h|--help) echo "NVIDIA System Management Interface -- v$DRIVER"; exit 0;;
    *) echo "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."; exit 2;;
  esac
  shift
done
if [ "$COUNT" = 0 ]; then
  echo "No devices were found"; exit 6
fi
INDEXES=$(i=0; while [ $i -lt $COUNT ]; do echo $i; i=$((i+1)); done)
if [ -n "$ONLY" ]; then
  ALL=" $(echo $INDEXES) "; INDEXES=
  for i in $(echo "$ONLY" | tr ',' ' '); do
    case "$ALL" in *" $i "*) INDEXES="$INDEXES $i";; *) echo "No devices were found"; exit 6;; esac
  done
fi
if [ "$LIST" = 1 ]; then
{heredoc(listing)}  exit 0
fi
if [ -n "$QUERY" ]; then
  case ",$FORMAT," in
    *,csv,*) ;;
    *) echo '"--format=" switch is missing. Please run "nvidia-smi -h" for help.'; exit 2;;
  esac
  NOHEADER=0; NOUNITS=0
  case ",$FORMAT," in *,noheader,*) NOHEADER=1;; esac
  case ",$FORMAT," in *,nounits,*) NOUNITS=1;; esac
  FIELDS=$(echo "$QUERY" | tr ',' ' ')
  I=0; gpu 0
  for f in $FIELDS; do
    field "$f" || {{ printf 'Field "%s" is not a valid field to query.\\n\\n' "$f"; exit 2; }}
  done
  if [ "$NOHEADER" = 0 ]; then
    line=; for f in $FIELDS; do field "$f"; line="${{line:+$line, }}$H"; done; echo "$line"
  fi
  for I in $INDEXES; do
    gpu "$I"; line=
    for f in $FIELDS; do field "$f"; line="${{line:+$line, }}$V"; done
    echo "$line"
  done
  lost; exit 0
fi
if [ "$XML" = 1 ] && [ "$DETAIL" = 1 ]; then
{heredoc(smi_xml(spec, gpus_all))}  lost; exit 0
fi
if [ "$DETAIL" = 1 ]; then
  echo; echo "==============NVSMI LOG=============="; echo
  echo "Driver Version                            : $DRIVER"
  echo "CUDA Version                              : $CUDA"; echo
  echo "Attached GPUs                             : $COUNT"
  for I in $INDEXES; do
    gpu "$I"
    echo "GPU $BUS"
    echo "    Product Name                          : $NAME"
    echo "    GPU UUID                              : $UUID"
    echo "    FB Memory Usage"
    echo "        Total                             : $MEM MiB"
  done
  exit 0
fi
date '+%a %b %e %H:%M:%S %Y'
{heredoc(banner)}'''


# ---------------------------------------------------------------- GPU health plants
# `nvidia-smi -q -x`, written from the shape of NVIDIA's nvsmi_device_v12.dtd as remembered (no copy of the DTD
# here, no internet): element names and nesting as the real tool prints them, fewer fields than it has.
THROTTLE_REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
                    "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")


def visible_gpus(spec: dict, gpus: list[dict]) -> list[dict]:
    """The GPUs the driver still reaches: the first `gpus_visible` (the others fell off the bus)."""
    n = spec.get("gpus_visible")
    return gpus if n is None else gpus[: int(n)]


REAL = REPO / "tests" / "real"  # real outputs, with where each came from (tests/real/SOURCES.md)


def smi_xml(spec: dict, gpus: list[dict]) -> str:
    from xml.sax.saxutils import escape

    if spec.get("real_smi_xml"):
        return (REAL / str(spec["real_smi_xml"])).read_text()

    driver = str(spec.get("driver") or "550.54.14")
    active = set(as_list(spec.get("throttle")))
    width = int(spec.get("pcie_width") or 16)
    ecc_planted = int(spec.get("ecc_uncorrectable") or 0)  # errors and remaps on the first GPU only
    remap_planted = int(spec.get("row_remap_pending") or 0)
    gen = 5 if any(g["cap"].startswith(("9", "10")) for g in gpus) else 4

    def flag(yes: bool) -> str:
        return "Yes" if yes else "No"

    parts = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">', "<nvidia_smi_log>",
             "\t<timestamp>Tue Nov 24 12:00:00 2026</timestamp>", f"\t<driver_version>{driver}</driver_version>",
             f"\t<cuda_version>{cf.driver_cuda(driver)}</cuda_version>",
             f"\t<attached_gpus>{len(gpus)}</attached_gpus>"]
    for g in visible_gpus(spec, gpus):
        reasons = "".join(f"\t\t\t<clocks_event_reason_{r}>{'Active' if r in active else 'Not Active'}"
                          f"</clocks_event_reason_{r}>\n" for r in THROTTLE_REASONS)
        bus = g["bus"]
        ecc, remap = (ecc_planted, remap_planted) if g["index"] == 0 else (0, 0)
        parts.append(f"""	<gpu id="{bus}">
		<product_name>{escape(g['name'])}</product_name>
		<product_brand>NVIDIA</product_brand>
		<persistence_mode>{'Enabled' if spec.get('persistence', True) else 'Disabled'}</persistence_mode>
		<mig_mode>
			<current_mig>{'Enabled' if spec.get('mig') else 'Disabled'}</current_mig>
			<pending_mig>{'Enabled' if spec.get('mig') else 'Disabled'}</pending_mig>
		</mig_mode>
		<uuid>{g['uuid']}</uuid>
		<minor_number>{g['index']}</minor_number>
		<pci>
			<pci_bus>{bus[9:11]}</pci_bus>
			<pci_device>00</pci_device>
			<pci_domain>0000</pci_domain>
			<pci_bus_id>{bus}</pci_bus_id>
			<pci_gpu_link_info>
				<pcie_gen>
					<max_link_gen>{gen}</max_link_gen>
					<current_link_gen>{gen}</current_link_gen>
				</pcie_gen>
				<link_widths>
					<max_link_width>16x</max_link_width>
					<current_link_width>{width}x</current_link_width>
				</link_widths>
			</pci_gpu_link_info>
			<replay_counter>0</replay_counter>
		</pci>
		<performance_state>P0</performance_state>
		<clocks_event_reasons>
{reasons}		</clocks_event_reasons>
		<fb_memory_usage>
			<total>{g['mem']} MiB</total>
			<used>0 MiB</used>
			<free>{g['mem']} MiB</free>
		</fb_memory_usage>
		<compute_mode>{escape(str(spec.get('compute_mode') or 'Default'))}</compute_mode>
		<ecc_mode>
			<current_ecc>Enabled</current_ecc>
			<pending_ecc>Enabled</pending_ecc>
		</ecc_mode>
		<ecc_errors>
			<volatile>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>0</dram_correctable>
				<dram_uncorrectable>{ecc}</dram_uncorrectable>
			</volatile>
			<aggregate>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>0</dram_correctable>
				<dram_uncorrectable>{ecc}</dram_uncorrectable>
			</aggregate>
		</ecc_errors>
		<retired_pages>
			<multiple_single_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</multiple_single_bit_retirement>
			<double_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</double_bit_retirement>
			<pending_blacklist>N/A</pending_blacklist>
			<pending_retirement>N/A</pending_retirement>
		</retired_pages>
		<remapped_rows>
			<remapped_row_corr>0</remapped_row_corr>
			<remapped_row_unc>{remap}</remapped_row_unc>
			<remapped_row_pending>{flag(remap > 0)}</remapped_row_pending>
			<remapped_row_failure>No</remapped_row_failure>
		</remapped_rows>
		<temperature>
			<gpu_temp>30 C</gpu_temp>
		</temperature>
	</gpu>""")
    return "\n".join(parts + ["</nvidia_smi_log>", ""])


def nvlinks(gpu: dict) -> int:
    """NVLinks per GPU: 18 on an H100/H200 SXM, 12 on an A100 SXM, none on a PCIe board."""
    return 18 if re.search(r"HBM3|H100 SXM|H200", gpu["name"]) else 12 if "SXM" in gpu["name"] else 0


def nvlink_status(spec: dict, gpus: list[dict]) -> str:
    """`nvidia-smi nvlink -s`: the last `nvlink_down` links of GPU 0 inactive."""
    lines = []
    for g in gpus:
        lines.append(f"GPU {g['index']}: {g['name']} (UUID: {g['uuid']})")
        n = nvlinks(g)
        down = int(spec.get("nvlink_down") or 0) if g["index"] == 0 else 0
        lines += [f"\t Link {i}: " + ("<inactive>" if i >= n - down else "26.562 GB/s") for i in range(n)]
    return "\n".join(lines)


def nvlink_errors(spec: dict, gpus: list[dict]) -> str:
    """`nvidia-smi nvlink -e`: GPU 0's link 0 with `nvlink_errors` CRC errors."""
    lines = []
    for g in gpus:
        lines.append(f"GPU {g['index']}: {g['name']} (UUID: {g['uuid']})")
        crc = int(spec.get("nvlink_errors") or 0) if g["index"] == 0 else 0
        for i in range(nvlinks(g)):
            lines += [f"\t Link {i}: Replay Errors: 0", f"\t Link {i}: Recovery Errors: 0",
                      f"\t Link {i}: CRC Errors: {crc if i == 0 else 0}"]
    return "\n".join(lines)


def p2p_matrix(spec: dict, gpus: list[dict]) -> str:
    """`nvidia-smi topo -p2p r`: `p2p` (OK, NS, CNS, TNS, GNS) between every pair of GPUs, and its legend."""
    code = str(spec.get("p2p") or "OK")
    head = " \t" + "".join(f"GPU{g['index']}\t" for g in gpus)
    rows = [f" GPU{a['index']}\t" + "".join(("X" if a is b else code) + "\t" for b in gpus) for a in gpus]
    legend = ["", "Legend:", "", "  X    = Self", "  OK   = Status Ok", "  CNS  = Chipset not supported",
              "  GNS  = GPU not supported", "  TNS  = Topology not supported", "  NS   = Not supported",
              "  U    = Unknown"]
    return "\n".join([head, *rows, *legend])


def lost_lines(spec: dict, gpus: list[dict]) -> str:
    """What nvidia-smi prints (stderr) for each GPU that fell off the bus."""
    gone = gpus[len(visible_gpus(spec, gpus)):]
    if spec.get("real_lost"):
        return (REAL / str(spec["real_lost"])).read_text().splitlines()[0] + "\n" if gone else ""
    return "".join(f"Unable to determine the device handle for GPU{g['bus']}: GPU is lost.  Reboot the system to "
                   "recover this GPU\n" for g in gone)


def kmsg(spec: dict, gpus: list[dict]) -> str:
    """The node's /dev/kmsg records (prio,seq,usec,flags;text): a boot banner and the planted XIDs."""
    text = {13: "Graphics Exception", 31: "MMU Fault", 43: "Ch 00000010, engmask 00000101",
            48: "An uncorrectable double bit error (DBE) has been detected on GPU", 63: "Row remapping event",
            64: "Row remapping failure", 74: "NVLink: fatal error detected on link 4",
            79: "GPU has fallen off the bus.", 92: "High single-bit ECC error rate",
            94: "Contained ECC error", 95: "Uncontained ECC error", 119: "Timeout after 6s of waiting for RPC "
            "response from GPU0 GSP!", 120: "GSP task error"}
    lines = ["5,0,0,-;Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) #115-Ubuntu SMP"]
    for i, xid in enumerate(as_list(spec.get("xid"))):
        bus = (gpus[-1] if gpus else {"bus": "00000000:07:00.0"})["bus"][4:14].lower()
        lines.append(f"4,{1000 + i},{(120 + i) * 10**6},-;NVRM: Xid (PCI:{bus}): {int(xid)}, pid=2411, "
                     f"name=python3, {text.get(int(xid), 'error')}")
    if spec.get("real_kmsg"):
        lines += (REAL / str(spec["real_kmsg"])).read_text(errors="replace").splitlines()
    lines += [str(x) for x in as_list(spec.get("kmsg_extra"))]
    return "\n".join(lines) + "\n"


def systemctl(spec: dict) -> str:
    state = str(spec.get("fabricmanager") or "active")
    return f"""# Fake systemctl of the clusterdoc test cluster: nvidia-fabricmanager is {state}; the rest is the real one.
if [ "$1" = is-active ] && [ "$2" = nvidia-fabricmanager ]; then
  echo {shlex.quote(state)}; [ {shlex.quote(state)} = active ]; exit $?
fi
exec /usr/bin/systemctl "$@"
"""


def ib_ports(node_dir: Path, spec: dict) -> None:
    """nodes/NAME/sysclass/infiniband: one HCA port at `ib_rate_gbps` with `ib_link_downed` link downs."""
    root = node_dir / "sysclass"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir()
    rate = spec.get("ib_rate_gbps")
    if not rate:
        return
    port = root / "infiniband" / "mlx5_0" / "ports" / "1"
    speed = {100: "4X EDR", 200: "4X HDR", 400: "4X NDR"}.get(int(rate), "4X")
    for name, text in [("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"), ("rate", f"{int(rate)} Gb/sec ({speed})"),
                       ("link_layer", "InfiniBand"), ("counters/link_downed", str(int(spec.get("ib_link_downed") or 0))),
                       ("counters/symbol_error", "0"), ("counters/link_error_recovery", "0")]:
        write(port / name, text + "\n")


def pci_tree(node_dir: Path, spec: dict, gpus: list[dict]) -> None:
    """The node's /sys/bus/pci/devices: one PCIe switch port above each pair of GPUs, its config space with an
    ACS extended capability (Source Validation on when `acs`), each GPU's IOMMU group type."""
    import struct

    root = node_dir / "pci"
    if root.exists():
        shutil.rmtree(root)
    devices = root / "bus" / "devices"
    devices.mkdir(parents=True)
    acs_ctl = 0x001D if spec.get("acs") else 0  # SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+
    config = bytearray(4096)
    config[0:4] = struct.pack("<HH", 0x10B5, 0x8747)  # a PLX PEX 8747 switch
    config[0x100:0x108] = struct.pack("<IHH", 0x000D | (1 << 16), 0x005F, acs_ctl)
    domain_type = "DMA-FQ" if spec.get("iommu") == "translated" else "identity"
    for g in visible_gpus(spec, gpus):
        addr = g["bus"][4:].lower()
        bridge = root / "devices" / "pci0000:00" / f"0000:00:{1 + g['index'] // 2:02x}.0"
        bridge.mkdir(parents=True, exist_ok=True)
        (bridge / "config").write_bytes(bytes(config))
        dev = bridge / addr
        dev.mkdir()
        write(dev / "vendor", "0x10de\n")
        write(dev / "class", "0x030200\n")
        group = root / "iommu_groups" / str(g["index"])
        write(group / "type", domain_type + "\n")
        (dev / "iommu_group").symlink_to(group)
        (devices / addr).symlink_to(dev)


# ---------------------------------------------------------------- nvcc and toolkits
def nvcc(version: str) -> str:
    ver, short_v = cf.full(version), cf.short(version)
    major = cf.vtuple(short_v)[0]
    year = {10: 2019, 11: 2022, 12: 2023, 13: 2025}.get(major, 2023)
    text = (f"nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-{year} NVIDIA Corporation\n"
            f"Built on Mon_Apr__3_17:16:06_PDT_{year}\nCuda compilation tools, release {short_v}, V{ver}\n"
            f"Build cuda_{short_v}.r{short_v}/compiler.32688072_0")
    arches = cf.gpu_arches(short_v)
    list_arch = (f"printf '%s\\n' {' '.join(arches)}; exit 0" if cf.vtuple(short_v) >= (11, 0)
                 else "echo \"nvcc fatal   : Unknown option '$a'\" >&2; exit 1")
    codes = " ".join(a.replace("compute_", "sm_") for a in arches)
    limit = cf.max_gcc(short_v)
    return f'''
# Fake nvcc {ver} of the clusterdoc test cluster.
for a in "$@"; do
  case "$a" in
    --version|-V)
{heredoc(text)}      exit 0;;
    --list-gpu-arch|-arch-ls) {list_arch};;
    --list-gpu-code|-code-ls) printf '%s\\n' {codes}; exit 0;;
    -allow-unsupported-compiler|--allow-unsupported-compiler) ALLOW=1;;
  esac
done
# A compile: refuse a too-new host gcc the way host_config.h does, otherwise say what this is.
GCC_MAJOR=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
if [ -z "$ALLOW" ] && [ -n "$GCC_MAJOR" ] && [ "$GCC_MAJOR" -gt {limit} ]; then
  echo "/usr/local/cuda-{short_v}/bin/../targets/x86_64-linux/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than {limit} are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk." >&2
  exit 1
fi
echo "nvcc fatal   : fake nvcc of the clusterdoc test cluster: compiling is not available" >&2
exit 1
'''


def host_config(version: str) -> str:
    limit = cf.max_gcc(version)
    return f"""/*
 * host_config.h of the fake CUDA {cf.short(version)} toolkit (clusterdoc test cluster).
 * Same shape as the real header: the gcc limit is an #error guarded by __GNUC__.
 */

#if !defined(__HOST_CONFIG_H__)
#define __HOST_CONFIG_H__

#if defined(__GNUC__)

#if __GNUC__ > {limit}

#error -- unsupported GNU version! gcc versions later than {limit} are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.

#endif /* __GNUC__ > {limit} */

#endif /* __GNUC__ */

#endif /* !__HOST_CONFIG_H__ */
"""


def make_toolkit(local: Path, version: str, libs: "StubLibs | None") -> None:
    ver, short_v = cf.full(version), cf.short(version)
    root = local / f"cuda-{short_v}"
    target = root / "targets" / "x86_64-linux"
    script(root / "bin" / "nvcc", nvcc(version))
    write(target / "include" / "crt" / "host_config.h", host_config(version))
    write(target / "include" / "cuda_runtime_api.h",
          f"#define CUDART_VERSION {cf.vtuple(short_v)[0] * 1000 + cf.vtuple(short_v)[1] * 10}\n")
    (root / "include").symlink_to("targets/x86_64-linux/include")
    (root / "lib64").symlink_to("targets/x86_64-linux/lib")
    lib = target / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    real = lib / f"libcudart.so.{ver}"
    if libs:
        libs.cudart(short_v, real)
    else:
        write(real, "")
    soname = cf.cudart_soname(short_v)
    (lib / soname).symlink_to(real.name)
    (lib / "libcudart.so").symlink_to(soname)
    if cf.vtuple(short_v) >= (11, 1):
        write(root / "version.json", json.dumps({
            "cuda": {"name": "CUDA SDK", "version": ver},
            "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": ver},
            "cuda_nvcc": {"name": "CUDA NVCC", "version": ver},
        }, indent=3) + "\n")
    else:
        write(root / "version.txt", f"CUDA Version {ver}\n")


# ---------------------------------------------------------------- gcc, uname, hang/fail
def gcc(name: str, version: str) -> str:
    major = cf.vtuple(version)[0]
    text = (f"{name} (GCC) {version}\nCopyright (C) {GCC_YEAR.get(major, 2023)} Free Software Foundation, Inc.\n"
            "This is free software; see the source for copying conditions.  There is NO\n"
            "warranty; not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.\n")
    real = {"gcc": "/usr/bin/gcc", "g++": "/usr/bin/g++", "cc": "/usr/bin/cc", "c++": "/usr/bin/c++"}[name]
    return f'''
# Fake {name} {version} of the clusterdoc test cluster: reports the spec version, compiles with the real one.
for a in "$@"; do
  case "$a" in
    --version)
{heredoc(text)}      exit 0;;
    -dumpversion) echo {major}; exit 0;;
    -dumpfullversion) echo {version}; exit 0;;
  esac
done
exec {real} "$@"
'''


def uname(real: Path, release_file: str = "/proc/sys/kernel/osrelease") -> str:
    """A uname that reports the node's kernel release (read from the bind-mounted osrelease)."""
    return f'''
# Fake uname of the clusterdoc test cluster: the real one, with the node's kernel release.
REAL={shlex.quote(str(real))}
REL=$(cat {release_file})
[ $# -eq 0 ] && exec "$REAL"
out=
for a in "$@"; do
  case "$a" in
    --help|--version) exec "$REAL" "$a";;
    -a|--all) printf '%s %s %s %s %s GNU/Linux\\n' "$("$REAL" -s)" "$("$REAL" -n)" "$REL" "$("$REAL" -v)" "$("$REAL" -m)"; exit 0;;
    -r|--kernel-release) out="$out r";;
    --*) out="$out $("$REAL" "$a")";;
    -*) flags=${{a#-}}
        while [ -n "$flags" ]; do c=${{flags%"${{flags#?}}"}}; flags=${{flags#?}}; out="$out $c"; done;;
    *) exec "$REAL" "$a";;
  esac
done
line=
for c in $out; do
  case "$c" in
    r) v=$REL;;
    a) v=;;
    ?) v=$("$REAL" -"$c") || exit 1;;
    *) v=$c;;
  esac
  line="${{line:+$line }}$v"
done
echo "$line"
'''


def date_ahead(offset: int) -> str:
    """`date` for a node whose clock is `offset` seconds off: every form that reads the clock shows the
    node's time (nanoseconds kept); forms that are given a time (-d, -r, -f) or set one (-s) are the real date."""
    return f"""# clusterdoc test cluster: this node's clock is {offset:+d} s off the machine's (clock_offset_s)
for a in "$@"; do
  case "$a" in -d*|--date*|-r*|--reference*|-f*|--file*|-s*|--set*) exec /usr/bin/date "$@";; esac
done
t=$(/usr/bin/date +%s.%N)
exec /usr/bin/date -d "@$((${{t%.*}} + ({offset}))).${{t#*.}}" "$@"
"""


def hang(name: str) -> str:
    return f"# {name}, planted to hang (clusterdoc test cluster)\nexec sleep infinity\n"


def fail(name: str) -> str:
    text, code = FAIL_TEXT.get(name, (f"{name}: error: planted failure (clusterdoc test cluster)", 1))
    to = "" if name == "nvidia-smi" else " >&2"  # the real nvidia-smi prints its failure on stdout
    return f"# {name}, planted to fail (clusterdoc test cluster)\necho {shlex.quote(text)}{to}\nexit {code}\n"


# ---------------------------------------------------------------- python packages
def torch_stub(spec_torch: dict, gpus: list[dict], driver: str | None) -> dict[str, str]:
    version = str(spec_torch.get("version", "2.3.1+cu121"))
    cuda = spec_torch.get("cuda")
    cuda = str(cuda) if cuda else None
    arch = [str(a) for a in spec_torch.get("arch_list") or []]
    nccl = tuple(int(x) for x in str(spec_torch.get("nccl") or "2.20.5").split("."))
    available = bool(gpus) and cuda is not None and cf.driver_runs(driver, cuda)
    devices = [{"name": g["name"], "cap": tuple(int(x) for x in g["cap"].split(".")), "mem": g["mem"]}
               for g in gpus] if cuda else []
    return {
        "__init__.py": f'''"""torch stub of the clusterdoc test cluster: answers version queries like torch {version}."""
__version__ = {version!r}
from . import version, cuda, distributed  # noqa: E402,F401
''',
        "version.py": f"__version__ = {version!r}\ncuda = {cuda!r}\ngit_version = 'clusterdoc-stub'\nhip = None\n",
        "cuda/__init__.py": f'''import warnings as _warnings
from . import nccl  # noqa: F401

_AVAILABLE = {available!r}
_DEVICES = {devices!r}
_ARCH_LIST = {arch!r}
_DRIVER_TOO_OLD = {bool(gpus) and cuda is not None and not available!r}


class _Props:
    def __init__(self, d):
        self.name = d["name"]
        self.major, self.minor = d["cap"]
        self.total_memory = d["mem"] * 1024 * 1024
        self.multi_processor_count = 108

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{{self.name}}', major={{self.major}}, minor={{self.minor}}, "
                f"total_memory={{self.total_memory // (1024 * 1024)}}MB, multi_processor_count={{self.multi_processor_count}})")


def is_available():
    if _DRIVER_TOO_OLD:
        _warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old. "
                       "Please update your GPU driver.")
    return _AVAILABLE


def device_count():
    return len(_DEVICES) if _AVAILABLE else 0


def _device(i):
    if not _AVAILABLE:
        raise RuntimeError("Found no NVIDIA driver on your system." if not _DEVICES else
                           "The NVIDIA driver on your system is too old.")
    i = int(getattr(i, "index", i) or 0)
    if not 0 <= i < len(_DEVICES):
        raise AssertionError("Invalid device id")
    return _DEVICES[i]


def get_device_capability(device=None):
    return tuple(_device(device)["cap"])


def get_device_name(device=None):
    return _device(device)["name"]


def get_device_properties(device=None):
    return _Props(_device(device))


def get_arch_list():
    return list(_ARCH_LIST) if _AVAILABLE else []


def is_bf16_supported():
    return _AVAILABLE and _DEVICES[0]["cap"][0] >= 8
''',
        "cuda/nccl.py": f"def version():\n    return {nccl!r}\n",
        "distributed/__init__.py": (
            "def is_available():\n    return True\n\n\n"
            f"def is_nccl_available():\n    return {cuda is not None!r}\n\n\n"
            "def is_gloo_available():\n    return True\n"),
    }


DS_OPS = ["async_io", "cpu_adagrad", "cpu_adam", "cpu_lion", "deepspeed_not_implemented", "evoformer_attn",
          "fp_quantizer", "fused_adam", "fused_lamb", "fused_lion", "gds", "inference_core_ops", "cutlass_ops",
          "transformer_inference", "quantizer", "ragged_device_ops", "ragged_ops", "random_ltd", "sparse_attn",
          "spatial_inference", "transformer", "stochastic_transformer", "utils"]


def deepspeed_stub(spec_ds: dict, spec_torch) -> dict[str, str]:
    version = str(spec_ds.get("version", "0.14.4"))
    ops = spec_ds.get("ops") or []
    installed = dict.fromkeys(DS_OPS, False)
    if isinstance(ops, dict):
        installed.update({str(k): bool(v) for k, v in ops.items()})
    else:
        installed.update(dict.fromkeys((str(o) for o in ops), True))
    torch_info = spec_ds.get("torch_info")
    if not torch_info:
        t = spec_torch if isinstance(spec_torch, dict) else {}
        torch_info = {
            "version": cf.short(str(t.get("version", "0.0")).split("+")[0]),
            "bf16_support": False,
            "cuda_version": str(t.get("cuda") or "0.0"),
            "nccl_version": cf.short(str(t.get("nccl") or "0.0")),
            "hip_version": "0.0",
        }
    compatible = spec_ds.get("compatible_ops") or dict.fromkeys(installed, True)
    info = (f"version = {version!r}\ngit_hash = 'unknown'\ngit_branch = 'unknown'\n"
            f"installed_ops = {installed!r}\ncompatible_ops = {compatible!r}\n"
            f"accelerator_name = 'cuda'\ntorch_info = {torch_info!r}\n")
    return {
        "__init__.py": f'"""deepspeed stub of the clusterdoc test cluster."""\n__version__ = {version!r}\n'
                       "from . import git_version_info  # noqa: E402,F401\n",
        "git_version_info.py": info,
        "git_version_info_installed.py": info,
    }


# ---------------------------------------------------------------- the whole node
def realise(node_dir: Path, name: str, spec: dict, shared: Path, libs: "StubLibs | None" = None) -> dict:
    """(Re)write the node's files from its spec; returns the node's environment (for sshd SetEnv)."""
    local = node_dir / "local"
    local.mkdir(parents=True, exist_ok=True)
    for child in local.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    for sub in ("bin", "sbin", "lib", "include", "share", "etc"):
        (local / sub).mkdir()

    gpus = expand_gpus(spec)
    bin_dir = local / "bin"
    if gpus:
        script(bin_dir / "nvidia-smi", nvidia_smi(spec, gpus))
    toolkits = [str(v) for v in as_list(spec.get("toolkits"))]
    for version in toolkits:
        make_toolkit(local, version, libs)
    link = as_list(spec.get("path_toolkit")) or sorted(toolkits, key=cf.vtuple)[-1:]
    if link:
        (local / "cuda").symlink_to(f"cuda-{cf.short(link[0])}")
    if spec.get("gcc") and str(spec["gcc"]).lower() != "none":
        for cc in ("gcc", "g++", "cc", "c++"):
            script(bin_dir / cc, gcc(cc, str(spec["gcc"])))
    if spec.get("libaio"):
        if libs:
            libs.libaio(local / "lib" / "libaio.so.1")
        else:
            write(local / "lib" / "libaio.so.1", "")

    python = spec.get("python")
    torch = spec.get("torch")
    python_none = str(python).lower() == "none"
    if torch == "real" and not python_none:
        for exe in ("python3", "python"):
            script(bin_dir / exe, f"exec {shlex.quote(str(VENV_PYTHON))} \"$@\"\n")
    elif python and not python_none and python != "/usr/bin/python3":
        for exe in ("python3", "python"):
            script(bin_dir / exe, f"exec {shlex.quote(str(python))} \"$@\"\n")
    site = local / "lib" / f"python{python_minor(None if python_none else python)}" / "dist-packages"
    site.mkdir(parents=True)
    if isinstance(torch, dict):
        for rel, text in torch_stub(torch, visible_gpus(spec, gpus), spec.get("driver")).items():
            write(site / "torch" / rel, text)
    if isinstance(spec.get("deepspeed"), dict):
        for rel, text in deepspeed_stub(spec["deepspeed"], torch).items():
            write(site / "deepspeed" / rel, text)
        # compiled ops: {path under deepspeed/: a real .so (relative to the repo)}, e.g. nvcc output built for sm_80
        for rel, source in (spec["deepspeed"].get("binaries") or {}).items():
            (site / "deepspeed" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / source, site / "deepspeed" / rel)

    if gpus:
        script(bin_dir / "systemctl", systemctl(spec))
    # bound over the node's /dev/kmsg, /sys/module and /sys/bus/pci/devices (nodes.py)
    write(node_dir / "kmsg", kmsg(spec, gpus))
    modules = node_dir / "sysmodule"
    if modules.exists():
        shutil.rmtree(modules)
    modules.mkdir()
    for m in (["nvidia", "nvidia_uvm"] + (["nvidia_peermem"] if spec.get("peermem", True) else [])) if gpus else []:
        write(modules / m / "initstate", "live\n")
    if gpus:  # the proprietary module taints the kernel with P, the open one (nvidia_open) does not
        write(modules / "nvidia" / "taint", "OE\n" if spec.get("nvidia_open") else "POE\n")
    pci_tree(node_dir, spec, gpus)
    ib_ports(node_dir, spec)

    if spec.get("clock_offset_s"):
        script(bin_dir / "date", date_ahead(int(spec["clock_offset_s"])))

    for cmd in as_list(spec.get("fail")):
        for target in _command_paths(local, str(cmd), spec):
            script(target, fail(str(cmd)))
    for cmd in as_list(spec.get("hang")):
        for target in _command_paths(local, str(cmd), spec):
            script(target, hang(str(cmd)))

    write(node_dir / "osrelease", str(spec.get("kernel") or "5.15.0-105-generic") + "\n")
    uname_body = uname(shared / "uname.real")
    if "uname" in map(str, as_list(spec.get("hang"))):
        uname_body = hang("uname")
    elif "uname" in map(str, as_list(spec.get("fail"))):
        uname_body = fail("uname")
    script(node_dir / "uname", uname_body)

    env = node_env(spec)
    # the node's own ~/.cache (the probe keeps the XIDs it saw there): /root is the machine's, shared by every node
    env.setdefault("XDG_CACHE_HOME", str(node_dir / "cache"))
    write(node_dir / "spec.json", json.dumps(spec, indent=1, sort_keys=True) + "\n")
    write(node_dir / "env.json", json.dumps(env, indent=1, sort_keys=True) + "\n")
    return env


def _command_paths(local: Path, cmd: str, spec: dict) -> list[Path]:
    """Where a planted hang/fail command goes: over each fake of that name, else first on PATH."""
    if cmd == "uname":
        return []  # /usr/bin/uname is its own bind mount, handled by the caller
    if cmd == "nvcc":
        kits = [local / f"cuda-{cf.short(v)}" / "bin" / "nvcc" for v in as_list(spec.get("toolkits"))]
        return kits or [local / "bin" / "nvcc"]
    return [local / "bin" / cmd]


def whiteouts(spec: dict) -> list[str]:
    """Names in /usr/bin the node must not have (python: none / gcc: none)."""
    names = []
    if str(spec.get("python")).lower() == "none":
        names += [n for n in os.listdir("/usr/bin") if re.fullmatch(r"python[0-9.]*", n)]
    if str(spec.get("gcc")).lower() == "none":
        names += [n for n in os.listdir("/usr/bin") if re.fullmatch(r"(gcc|g\+\+|cc|c\+\+)(-[0-9.]+)?", n)]
    return sorted(set(names))


class StubLibs:
    """Real ELF stand-ins compiled once per cluster (so ctypes/ldd see loadable libraries)."""

    def __init__(self, shared: Path):
        self.dir = shared / "libs"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cc = shutil.which("gcc", path="/usr/bin")

    def _build(self, out: Path, source: str, soname: str) -> Path | None:
        if out.exists():
            return out
        if not self.cc:
            return None
        import subprocess
        src = out.with_suffix(".c")
        src.write_text(source)
        proc = subprocess.run([self.cc, "-shared", "-fPIC", "-O1", f"-Wl,-soname,{soname}", "-o", str(out), str(src)],
                              capture_output=True, text=True, timeout=60)
        return out if proc.returncode == 0 else None

    def _place(self, built: Path | None, dest: Path) -> None:
        if built:
            shutil.copyfile(built, dest)
            os.chmod(dest, 0o755)
        else:
            write(dest, "")

    def cudart(self, short_v: str, dest: Path) -> None:
        major, minor = cf.vtuple(short_v)[:2]
        number = major * 1000 + minor * 10
        src = (f"/* fake libcudart {short_v} */\nint cudaRuntimeGetVersion(int *v) {{ *v = {number}; return 0; }}\n"
               "int cudaGetDeviceCount(int *n) { *n = 0; return 100; /* cudaErrorNoDevice */ }\n")
        self._place(self._build(self.dir / f"libcudart-{short_v}.so", src, cf.cudart_soname(short_v)), dest)

    def uname_preload(self) -> Path | None:
        """For /etc/ld.so.preload in the nodes: uname(2) callers (python's os.uname, platform.release)
        see the release from the node's bind-mounted /proc/sys/kernel/osrelease, like `uname -r` does."""
        src = r"""/* clusterdoc test cluster: uname() with the node's kernel release */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
int uname(struct utsname *buf) {
    if (syscall(SYS_uname, buf) != 0) return -1;
    int fd = open("/proc/sys/kernel/osrelease", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char rel[sizeof buf->release];
        ssize_t n = read(fd, rel, sizeof rel - 1);
        close(fd);
        if (n > 0) {
            rel[n] = 0;
            char *nl = strchr(rel, '\n');
            if (nl) *nl = 0;
            memcpy(buf->release, rel, strlen(rel) + 1);
        }
    }
    return 0;
}
"""
        return self._build(self.dir / "uname_release.so", src, "uname_release.so")

    def libaio(self, dest: Path) -> None:
        src = ("/* fake libaio */\nint io_setup(unsigned n, void **ctx) { return -38; }\n"
               "int io_submit(void *ctx, long n, void **iocbs) { return -38; }\n"
               "int io_destroy(void *ctx) { return 0; }\n")
        self._place(self._build(self.dir / "libaio.so.1", src, "libaio.so.1"), dest)

