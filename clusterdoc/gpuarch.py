"""Does a binary's device code run on a GPU? The rule, from the SASS and PTX a CUDA extension carries.

A GPU of compute capability X.Y runs
  - SASS (a cubin) built for sm_XZ with the same major X and Z <= Y (sm_80 runs on an A10's 8.6; not on 9.0);
    an arch-specific cubin (sm_90a) runs on its own capability only;
  - PTX built for compute_AB <= X.Y, compiled by the driver when the program starts (slow first start);
    arch-specific PTX (compute_90a) only on its own capability, family PTX (compute_100f) within its major.
Neither: CUDA says 'no kernel image is available for execution on the device', at the first kernel launch.
Pure functions; the archs come from clusterdoc/fatbin.py.
"""

from __future__ import annotations

import re

from clusterdoc.tables import cap_str

Cap = tuple  # (major, minor)


def parse_arch(name: str) -> tuple[Cap, str] | None:
    """'sm_86' -> ((8, 6), ''); 'compute_90a' -> ((9, 0), 'a'); 'sm_100f' -> ((10, 0), 'f')."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)(\d)([af]?)", name or "")
    return ((int(m.group(1)), int(m.group(2))), m.group(3)) if m else None


def sm_name(cap: Cap) -> str:
    return f"sm_{cap[0]}{cap[1]}"


def covered_by(cap: Cap, sass: list[str], ptx: list[str]) -> str | None:
    """'sass' when a cubin runs on capability `cap`, 'ptx' when only PTX can be JIT-compiled for it, else None."""
    for name in sass:
        parsed = parse_arch(name)
        if parsed:
            (major, minor), suffix = parsed
            if (major, minor) == cap or (suffix != "a" and major == cap[0] and minor <= cap[1]):
                return "sass"
    for name in ptx:
        parsed = parse_arch(name)
        if parsed:
            arch, suffix = parsed
            if arch == cap or (not suffix and arch <= cap) or (suffix == "f" and arch[0] == cap[0] and arch <= cap):
                return "ptx"
    return None


def gpu_short_name(name: str | None) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'H100', 'NVIDIA A100-SXM4-80GB' -> 'A100', 'NVIDIA GeForce RTX 4090' kept whole
    (less 'NVIDIA')."""
    text = re.sub(r"^(NVIDIA|Tesla)\s+", "", (name or "").strip()) or "GPU"
    m = re.search(r"\b([A-Z]{1,3}\d{1,4}[A-Za-z]?)\b", text)
    return m.group(1) if m else text


def what_it_has(sass: list[str], ptx: list[str]) -> str:
    def only(names: list[str]) -> str:
        return (" and ".join(names) if len(names) <= 2 else ", ".join(names)) + " only"

    have = only(sass) if sass else "no SASS"
    return have + (" and no PTX" if not ptx else f" and PTX for {only(ptx)}")


def fix_arch_list(sass: list[str], missing: list[Cap]) -> str:
    """What to build instead: the wheel's own SASS archs and the missing capabilities ('8.0;9.0')."""
    caps = {p[0] for p in (parse_arch(n) for n in sass) if p} | set(missing)
    return ";".join(cap_str(c) for c in sorted(caps))


def refusals(gpus_by_node: dict[str, list[dict]], extensions: dict[str, dict]) -> list[str]:
    """One line per node and GPU capability that some CUDA extension cannot run on, e.g.
    "node7: H100 (sm_90) but the wheel has sm_80 only and no PTX: rebuild with --arch-list '8.0;9.0'".
    `gpus_by_node`: {node: [{name, capability "9.0"}]} (its facts' gpus); `extensions`: {path: {sass, ptx}}."""
    cuda = {p: a for p, a in extensions.items() if a.get("sass") or a.get("ptx")}
    lines = []
    for node, gpus in gpus_by_node.items():
        seen = set()
        for gpu in gpus or []:
            m = re.match(r"^\s*(\d+)\.(\d+)", str(gpu.get("capability") or ""))
            if not m:
                continue
            cap = (int(m.group(1)), int(m.group(2)))
            if cap in seen:
                continue
            seen.add(cap)
            for archs in cuda.values():
                sass, ptx = archs.get("sass") or [], archs.get("ptx") or []
                if covered_by(cap, sass, ptx) is None:
                    lines.append(
                        f"{node}: {gpu_short_name(gpu.get('name'))} ({sm_name(cap)}) but the wheel has "
                        f"{what_it_has(sass, ptx)}: rebuild with --arch-list '{fix_arch_list(sass, [cap])}'"
                    )
                    break
    return lines


def future_note(extensions: dict[str, dict], newest: Cap | None) -> str | None:
    """A warning for a wheel with no PTX at all whose newest SASS is older than `newest` (the newest arch the
    build's nvcc knows): the next GPUs the cluster gets cannot run it."""
    cuda = [a for a in extensions.values() if a.get("sass") or a.get("ptx")]
    if not cuda or any(a.get("ptx") for a in cuda):
        return None
    caps = [p[0] for a in cuda for p in (parse_arch(n) for n in a.get("sass") or []) if p]
    top = max(caps) if caps else None
    if top is None or (newest is not None and top >= newest):
        return None
    beyond = f" (up to {sm_name(newest)})" if newest else ""
    return (
        f"the wheel has no PTX and its newest SASS is {sm_name(top)}: GPUs newer than that{beyond} will fail with "
        f"'no kernel image is available'; build with +PTX on the last entry (--arch-list '...;{cap_str(top)}+PTX') "
        "so they can JIT-compile it"
    )
