"""Check what the wheel really holds, and record what it was built for.

DeepSpeed skips an op it finds incompatible with only a warning (or, for an op its accelerator does
not have, silently), so the wheel's own files are the truth: a requested op without its compiled
extension is our failure. The manifest (clusterdoc-wheel.json) goes beside the wheel and inside it as
deepspeed/clusterdoc-wheel.json, where the probe (clusterdoc/probe/pyenv.py) finds it on every node it is installed on.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import zipfile
from pathlib import Path

from clusterdoc import fatbin

MANIFEST_NAME = "clusterdoc-wheel.json"
SCHEMA = 1


def extensions(names: list[str]) -> list[str]:
    return [n for n in names if re.search(r"\.so(\.\d+)*$", n) or n.endswith(".pyd")]


def op_extension(op: str, ext_paths: list[str]) -> str | None:
    """The compiled extension of `op` among the wheel's .so files (deepspeed/ops/adam/cpu_adam_op.cpython-...so)."""
    for path in ext_paths:
        stem = os.path.basename(path).split(".")[0]
        if stem in (f"{op}_op", op) or stem.endswith(op):
            return path
    return None


def verify_ops(names: list[str], ops: list[str]) -> tuple[dict[str, str], list[str]]:
    """({op: extension path} found, [missing ops]) for the requested ops."""
    exts = extensions(names)
    found, missing = {}, []
    for op in ops:
        path = op_extension(op, exts)
        if path:
            found[op] = path
        else:
            missing.append(op)
    return found, missing


def installed_info(wheel: Path) -> dict:
    """DeepSpeed's own record inside the wheel (git_version_info_installed.py): version, installed_ops,
    accelerator_name, torch_info. Read as data, never imported."""
    with zipfile.ZipFile(wheel) as z:
        try:
            text = z.read("deepspeed/git_version_info_installed.py").decode()
        except KeyError:
            return {}
    ns: dict = {}
    exec(compile(text, "git_version_info_installed.py", "exec"), {"__builtins__": {}}, ns)
    return ns


MAX_EXTENSION = 2 << 30  # bytes: a larger .so in a wheel is not read


def binary_archs(wheel: Path) -> tuple[dict[str, dict], list[str]]:
    """({extension path: {"sass": [...], "ptx": [...]}} for each extension carrying device code, [problems]),
    read from the binaries themselves (fatbin.binary_archs: cuobjdump when installed, else the fatbin headers).
    Each .so is copied out of the wheel to a temporary file, in blocks."""
    found: dict[str, dict] = {}
    problems: list[str] = []
    tool = fatbin.find_cuobjdump()
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory(prefix="clusterdoc-archs-") as tmp:
        for info in z.infolist():
            if not extensions([info.filename]):
                continue
            if info.file_size > MAX_EXTENSION:
                problems.append(f"{info.filename}: {info.file_size} bytes, not read")
                continue
            path = os.path.join(tmp, "ext.so")
            with z.open(info) as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            archs = fatbin.binary_archs(path, tool)
            if "error" in archs:
                problems.append(f"{info.filename}: {archs['error'].replace(path, 'the binary')}")
            elif archs["sass"] or archs["ptx"]:
                found[info.filename] = {"sass": archs["sass"], "ptx": archs["ptx"]}
    return found, problems


def describe_archs(archs: dict) -> str:
    """{"sass": ["sm_80", "sm_90"], "ptx": ["compute_90"]} -> 'SASS sm_80, sm_90; PTX compute_90'."""
    return f"SASS {', '.join(archs.get('sass') or []) or 'none'}; PTX {', '.join(archs.get('ptx') or []) or 'none'}"


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def skip_reason(op: str, log_text: str, accelerator: str | None) -> str:
    """Why DeepSpeed left `op` out, from its build log when it said so."""
    for line in log_text.splitlines():
        if op in line and ("Skip pre-compile" in line or "incompatible" in line or "requires" in line):
            return line.strip()[:300]
    if accelerator and accelerator != "cuda":
        return (
            f"DeepSpeed used its {accelerator} accelerator, which has no {op} op "
            "(set DS_ACCELERATOR=cuda; clusterdoc does this when the arch list is not empty)"
        )
    return "DeepSpeed did not build it and did not say why (search the log for the op's name)"


def make_manifest(
    *,
    wheel: Path,
    arch_list: str,
    arch_source: str,
    gpus: dict,
    ops: list[str],
    built: dict,
    info: dict,
    build_host: dict,
    jobs: int,
    source: str,
    archs: dict | None = None,
) -> dict:
    torch_info = info.get("torch_info") or {}
    return {
        "schema": SCHEMA,
        "tool": "clusterdoc build-wheel",
        "wheel": wheel.name,
        "sha256": None,  # filled in the copy beside the wheel (a file cannot hold its own hash)
        "deepspeed_version": info.get("version"),
        "arch_list": arch_list,
        "arch_source": arch_source,
        "gpus": gpus,  # {node: [capability, ...]} when derived from the nodes
        "ops": sorted(built),
        "ops_requested": ops,
        "extensions": built,
        "binary_archs": archs or {},  # {extension path: {sass, ptx}} read from the binaries (CUDA ones only)
        "accelerator": info.get("accelerator_name"),
        "torch": {
            "version": build_host.get("torch_version"),
            "cuda": build_host.get("torch_cuda"),
            "deepspeed_torch_info": torch_info,
        },
        "nvcc": build_host.get("nvcc"),
        "gcc": build_host.get("gcc"),
        "bf16": not any(int(a.split(".")[0]) <= 7 for a in arch_list.replace("+PTX", "").split(";") if a),
        "build_host": {
            "hostname": build_host.get("hostname"),
            "python": build_host.get("python"),
            "cpu": build_host.get("cpu"),
            "jobs": jobs,
        },
        "source": source,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def embed(wheel: Path, manifest: dict, arcname: str = f"deepspeed/{MANIFEST_NAME}") -> str:
    """Add the manifest into the wheel and its RECORD (rewritten, so pip's hash check still passes).
    Returns the sha256 of the embedded file: what a node that has this build installed holds on disk."""
    data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        for item in src.infolist():
            if item.filename in (arcname, record_name):
                continue
            dst.writestr(item, src.read(item.filename))
        dst.writestr(arcname, data)
        lines = [
            line
            for line in src.read(record_name).decode().splitlines()
            if line and not line.startswith(arcname + ",") and not line.startswith(record_name + ",")
        ]
        lines.append(f"{arcname},{_record_hash(data)},{len(data)}")
        lines.append(f"{record_name},,")
        dst.writestr(record_name, "\n".join(lines) + "\n")
    os.replace(tmp, wheel)
    return hashlib.sha256(data).hexdigest()


def write_beside(wheel: Path, manifest: dict) -> Path:
    final = dict(manifest, sha256=sha256(wheel))
    path = wheel.parent / MANIFEST_NAME
    path.write_text(json.dumps(final, indent=2, sort_keys=True) + "\n")
    return path


def read_embedded(wheel: Path) -> dict | None:
    with zipfile.ZipFile(wheel) as z:
        try:
            return json.loads(z.read(f"deepspeed/{MANIFEST_NAME}"))
        except KeyError:
            return None
