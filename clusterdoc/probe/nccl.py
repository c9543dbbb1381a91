"""What NCCL a rank of the job's python would load, and how it is told to run (the nccl check's facts).

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+. Nothing is imported or loaded:
pip's NCCL wheels are found by their .dist-info folders along sys.path, torch's pin by its METADATA, the
libnccl files on LD_LIBRARY_PATH / LD_PRELOAD by name; which library torch really maps is the torch child's
(pyenv.TORCH_SNIPPET, torch.nccl_lib).
"""

import os
import re
import stat
import sys

from clusterdoc.probe.base import listdir_prefix, read
from clusterdoc.probe.network import probe_ib

NCCL_WHEEL = re.compile(r"^nvidia_nccl_(cu\d+)-([^-]+)\.dist-info$")
NCCL_PIN = re.compile(  # blanks within the line only (\s would run on across lines), bounded names
    r"^Requires-Dist:[ \t]*(nvidia-nccl-cu\d{1,4})[ \t]*\(?[ \t]*==[ \t]*([0-9][0-9A-Za-z.+]{0,63})", re.M | re.I
)
MAX_METADATA = 1 << 18  # bytes of torch's METADATA read (it is about 10 kB)
MAX_GIDS = 256  # a port's GID table (mlx5: 255 entries at most)


def _wheels(paths):
    """[{name, version, path (the sys.path entry), lib (its nvidia/nccl/lib/libnccl.so.2 or null)}]."""
    out, seen = [], set()
    for entry in paths:
        entry = os.path.abspath(entry or ".")
        if entry in seen:
            continue
        seen.add(entry)
        for d in listdir_prefix(entry, "nvidia_nccl_cu"):
            m = NCCL_WHEEL.match(os.path.basename(d))
            if not m:
                continue
            lib = os.path.join(entry, "nvidia", "nccl", "lib", "libnccl.so.2")
            out.append(
                {
                    "name": "nvidia-nccl-" + m.group(1),
                    "version": m.group(2),
                    "path": entry,
                    "lib": lib if os.path.exists(lib) else None,
                }
            )
    return out


def _torch_pin(paths):
    """{"nvidia-nccl-cu12": "2.21.5"}: the NCCL wheel torch's METADATA requires (what it was built against)."""
    for entry in paths:
        for d in listdir_prefix(entry or ".", "torch-"):
            if d.endswith(".dist-info"):
                text = read_regular(os.path.join(d, "METADATA"), MAX_METADATA) or ""
                return dict((m.group(1).lower(), m.group(2)) for m in NCCL_PIN.finditer(text))
    return None


def read_regular(path, limit):
    """A regular file's first `limit` bytes as text, else None: opened without waiting (a FIFO in its place
    answers at once, and is not read), checked by its descriptor, read from it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _libs_along(ld_path):
    """[{path, realpath}] of every libnccl.so* in the folders of LD_LIBRARY_PATH, in search order."""
    out = []
    for d in [x for x in (ld_path or "").split(":") if x][:64]:
        for p in listdir_prefix(d, "libnccl.so"):
            out.append({"path": p, "realpath": os.path.realpath(p)})
    return out


def _gids(env):
    """The GID table entry NCCL_IB_GID_INDEX names, on every RoCE (Ethernet) port, and the port's other
    non-empty entries: [{device, port, index, gid, type}] (gid null: no entry there)."""
    raw = (env.get("NCCL_IB_GID_INDEX") or "").strip()
    if not re.match(r"^-?\d+$", raw):
        return []
    want = int(raw)
    base = "/sys/class/infiniband"
    out = []
    for p in probe_ib():
        if p.get("link_layer") != "Ethernet":
            continue
        port_dir = os.path.join(base, p["device"], "ports", p["port"])
        for i in range(MAX_GIDS):
            gid = (read(os.path.join(port_dir, "gids", str(i)), 256) or "").strip()
            kind = (read(os.path.join(port_dir, "gid_attrs", "types", str(i)), 256) or "").strip()
            if gid == "" and i > want:
                break
            empty = not gid.replace("0", "").replace(":", "")
            if i == want or not empty:
                out.append(
                    {
                        "device": p["device"],
                        "port": p["port"],
                        "index": i,
                        "gid": None if empty else gid,
                        "type": kind or None,
                    }
                )
    return out[:64]


def _runtime():
    """What a wrapper (container) may hide from the job: the host's NVIDIA kernel module (procfs shows the host
    kernel's, whatever libraries the image has), the HCAs the kernel has (sysfs) against the device nodes here."""
    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)", read("/proc/driver/nvidia/version", 4096) or "")
    ib = os.path.isdir("/dev/infiniband")
    return {
        "driver_module": m.group(1) if m else None,
        "sys_infiniband": [os.path.basename(d) for d in listdir_prefix("/sys/class/infiniband", "")][:64],
        "dev_infiniband": [os.path.basename(d) for d in listdir_prefix("/dev/infiniband", "")][:256] if ib else None,
    }


def probe_nccl(env_over):
    """{env {NCCL_*: value} (as a rank here sees them: the node's, then --env), wheels, torch_pin,
    ld_path [{path, realpath}], preload [path], gids} (see _gids)."""
    env = dict((k, v) for k, v in os.environ.items() if k.startswith("NCCL_"))
    env.update((k, v) for k, v in env_over.items() if k.startswith("NCCL_"))
    paths = list(sys.path)
    preload = re.split(r"[\s:]+", os.environ.get("LD_PRELOAD") or "")
    return {
        "env": env,
        "wheels": _wheels(paths),
        "torch_pin": _torch_pin(paths),
        "ld_path": _libs_along(os.environ.get("LD_LIBRARY_PATH")),
        "preload": [p for p in preload if "libnccl" in os.path.basename(p)],
        "gids": _gids(env),
        "runtime": _runtime(),
    }
