"""The fallback for nodes without python3: a POSIX sh script and the head's parser of its output.

Head only: never part of the payload (the payload runs python; this runs when there is none).

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import re

from clusterdoc.probe.base import DEFAULT_TIMEOUT, SCHEMA
from clusterdoc.probe.gpus import parse_nvidia_smi
from clusterdoc.probe.toolkits import parse_nvcc_version

# --- the fallback for nodes without python3 ----------------------------------------------------

# Plain POSIX sh: the facts a shell can get. Its output is sections the head parses with
# parse_shell_output(); it never reads stdin (stdin carries the python probe).
SHELL_PROBE = r"""
t() { if command -v timeout >/dev/null 2>&1; then timeout -s KILL "$T" "$@"; else "$@"; fi; }
echo "@@clusterdoc-shell-probe 1"
echo "@@hostname"; hostname 2>/dev/null || uname -n
echo "@@kernel"; cat /proc/sys/kernel/osrelease 2>/dev/null || uname -r
echo "@@env"; echo "PATH=$PATH"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; echo "CUDA_HOME=$CUDA_HOME"; echo "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
echo "@@nvidia-smi"
if command -v nvidia-smi >/dev/null 2>&1; then t nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
echo "@@nvcc"
if command -v nvcc >/dev/null 2>&1; then command -v nvcc; t nvcc --version 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
echo "@@gcc"
if command -v gcc >/dev/null 2>&1; then command -v gcc; t gcc -dumpfullversion -dumpversion 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
echo "@@toolkits"; for d in /usr/local/cuda-*; do [ -d "$d" ] && echo "$d"; done
echo "@@end"
"""  # noqa: E501 (a shell script: its lines stay as the node runs them)


def shell_probe(timeout=DEFAULT_TIMEOUT):
    """The shell fallback script, with each command limited to `timeout` seconds."""
    return "T=%d\n" % max(1, int(timeout)) + SHELL_PROBE


def _sections(text):
    sec, name = {}, None
    for line in text.splitlines():
        if line.startswith("@@") and not line.startswith("@@rc"):
            name = line[2:].strip()
            sec[name] = []
        elif name is not None:
            sec[name].append(line)
    return sec


def _rc(lines):
    for line in lines:
        if line.startswith("@@rc"):
            return line[4:].strip()
    return None


def parse_shell_output(text):
    """Facts (same schema, probe "shell") from SHELL_PROBE's output; absent facts stay null."""
    sec = _sections(text)
    errors = [{"probe": "python3", "message": "no python3 on this node: only shell facts were gathered"}]
    env = {}
    for line in sec.get("env", []):
        k, _, v = line.partition("=")
        env[k] = v or None
    facts = {
        "schema": SCHEMA,
        "probe": "shell",
        "hostname": (sec.get("hostname") or [""])[0].strip() or None,
        "kernel": {
            "release": (sec.get("kernel") or [""])[0].strip(),
            "source": "shell",
            "container": False,
            "gvisor": False,
        },
        "python": None,
        "torch": None,
        "deepspeed": None,
        "mpi": {"mpirun": None, "mpi4py": None},
        "nvcc": None,
        "gcc": None,
        "gpus": [],
        "driver": None,
        "libcudart_first": None,
        "libaio": None,
        "libaio_header": None,
        "mesh": None,
        "env": {k: env.get(k) for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST")},
        "cuda_home": env.get("CUDA_HOME"),
        "toolkits": [
            {
                "path": p.strip(),
                "version": (re.search(r"cuda-(\d+\.\d+)$", p.strip()) or [None, None])[1],
                "version_source": "directory name",
                "nvcc": None,
                "libcudart": None,
                "gcc_max": None,
            }
            for p in sec.get("toolkits", [])
            if p.strip()
        ],
        "errors": errors,
    }
    smi = sec.get("nvidia-smi", [])
    rc = _rc(smi)
    body = "\n".join(line for line in smi if not line.startswith("@@rc"))
    if rc == "0":
        facts["gpus"] = parse_nvidia_smi(body)
        drivers = sorted(set(g["driver"] for g in facts["gpus"]))
        facts["driver"] = drivers[0] if drivers else None
    elif rc not in (None, "missing"):
        errors.append(
            {
                "probe": "gpus",
                "message": (
                    "nvidia-smi timed out"
                    if rc in ("124", "137")
                    else "nvidia-smi exited %s: %s" % (rc, body.strip()[:200])
                ),
            }
        )
    nv = sec.get("nvcc", [])
    rc = _rc(nv)
    if rc == "0":
        facts["nvcc"] = {
            "path": nv[0].strip(),
            "realpath": None,
            "home": None,
            "version": parse_nvcc_version("\n".join(nv)),
            "arch_list": None,
        }
    elif rc not in (None, "missing"):
        errors.append(
            {
                "probe": "nvcc",
                "message": "nvcc --version %s" % ("timed out" if rc in ("124", "137") else "exited " + rc),
            }
        )
    g = sec.get("gcc", [])
    if _rc(g) == "0" and len(g) >= 2:
        facts["gcc"] = {"path": g[0].strip(), "version": g[1].strip()}
    return facts
