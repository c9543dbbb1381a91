"""The GPUs nvidia-smi lists, and their compute capability.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import re

from clusterdoc.probe.base import run, which

NVIDIA_SMI_QUERY = "index,name,compute_cap,memory.total,driver_version"
# Used only when the driver is too old to know compute_cap (added around driver 510).
CAPABILITY_BY_NAME = [
    ("H200", "9.0"),
    ("H100", "9.0"),
    ("GH200", "9.0"),
    ("B200", "10.0"),
    ("GB200", "10.0"),
    ("L40", "8.9"),
    ("L4", "8.9"),
    ("4090", "8.9"),
    ("A100", "8.0"),
    ("A30", "8.0"),
    ("A10", "8.6"),
    ("A40", "8.6"),
    ("3090", "8.6"),
    ("A6000", "8.6"),
    ("T4", "7.5"),
    ("V100", "7.0"),
    ("P100", "6.0"),
]


def parse_nvidia_smi(text, has_cap=True):
    gpus = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < (5 if has_cap else 4) or not parts[0].isdigit():
            continue
        if has_cap:
            idx, name, cap, mem, drv = parts[:5]
        else:
            idx, name, mem, drv = parts[:4]
            cap = next((c for key, c in CAPABILITY_BY_NAME if key in name), None)
        try:
            mem = int(float(mem))
        except ValueError:
            mem = None
        gpus.append(
            {
                "index": int(idx),
                "name": name,
                "capability": cap if cap and re.match(r"\d+\.\d+$", cap) else None,
                "memory_mib": mem,
                "driver": drv,
            }
        )
    return gpus


def probe_gpus(timeout):
    smi = which("nvidia-smi")
    if not smi:
        return []  # no driver tools: a CPU node, not an error
    code, out, err = run([smi, "--query-gpu=" + NVIDIA_SMI_QUERY, "--format=csv,noheader,nounits"], timeout)
    has_cap = True
    if code != 0 and "compute_cap" in (out + err):  # a driver before compute_cap (~510): ask without it
        has_cap = False
        code, out, err = run(
            [smi, "--query-gpu=index,name,memory.total,driver_version", "--format=csv,noheader,nounits"], timeout
        )
    gpus = parse_nvidia_smi(out, has_cap=has_cap)
    if code != 0 and not any(lost_gpu(x) for x in (out + err).splitlines()):
        raise RuntimeError("nvidia-smi exited %d: %s" % (code, (err or out).strip()[:300]))
    return gpus  # with a GPU off the bus: the others (gpu_health.lost names the lost one, once)


# nvidia-smi's words for a GPU the driver knows but cannot reach (NVML_ERROR_GPU_IS_LOST, exit code 15), in the
# forms drivers print: "for GPU 0000:04:00.0: Unknown Error" (older), "for GPU0000:65:00.0: ...", and today's
# "for GPU3: 0000:5F:00.0: Unknown Error" or "for GPU2: Unknown Error" (an index, the bus id when known), and
# the lower-case "for gpu 0000:01:00.0: Not Found" some drivers print.
PCI_ID = r"[0-9A-Fa-f]{3,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"
LOST_LINE = re.compile(
    r"(?:.*?Unable to determine the device handle for [Gg][Pp][Uu]\s*(?:(?P<index>\d{1,3}):\s+)?(?P<bus>"
    + PCI_ID
    + r")?.*"
    r"|.*GPU is lost.*|.*fallen off the bus.*)"
)


def lost_gpu(line):
    """{"bus", "index", "message"} of a line nvidia-smi prints for a GPU it cannot reach; None: not such a line."""
    m = LOST_LINE.match(line.strip())
    if not m:
        return None
    index = m.group("index")
    return {"bus": m.group("bus"), "index": int(index) if index else None, "message": line.strip()[:300]}
