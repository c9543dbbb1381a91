"""TORCH_CUDA_ARCH_LIST for a DeepSpeed build: parse it, derive it from the nodes' GPUs, check it.

DeepSpeed's own parser (op_builder/builder.py) takes only `X.Y` or `X.Y+PTX` entries separated by `;` or
spaces: a named entry ("Ampere") or a family suffix ("9.0a") makes it crash mid-build, so we refuse them
here, before anything is compiled. We put `+PTX` on the highest arch only, like DeepSpeed's JIT mode, so
newer GPUs can still JIT-compile the PTX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdoc.checks.arch import parse_arch_entries
from clusterdoc.errors import UsageError
from clusterdoc.tables import cap_str, format_arch_list, nvcc_can_build

_CAPABILITY = re.compile(r"^(\d+)\.(\d+)$")

# Only to suggest a replacement in the error message (PyTorch's named arches); never used to build.
_NAMED = {
    "kepler": "3.5",
    "maxwell": "5.0;5.2",
    "pascal": "6.0;6.1",
    "volta": "7.0",
    "turing": "7.5",
    "ampere": "8.0;8.6",
    "ada": "8.9",
    "hopper": "9.0",
    "blackwell": "10.0;12.0",
}

Arch = tuple  # (major, minor)


@dataclass
class ArchCheck:
    """What the build host's nvcc makes of an arch list."""

    refused: list[str] = field(default_factory=list)  # "7.0": nvcc cannot build it
    warnings: list[str] = field(default_factory=list)  # human sentences


def parse_arch_list(text: str, where: str = "--arch-list") -> list[Arch]:
    """'9.0;8.0', '8.0 9.0+PTX', '8.0,8.6' -> sorted unique [(8, 0), (9, 0)]; +PTX is re-placed by format_arch_list.

    Raises UsageError naming the first entry DeepSpeed could not parse.
    """
    entries, bad = parse_arch_entries(text)
    if bad:
        raise UsageError(f"{bad[0]!r} is not a compute capability", where=where, hint=_entry_hint(bad[0]))
    if not entries:
        raise UsageError(
            "the arch list is empty", where=where, hint='give compute capabilities like "8.0;9.0" (A100 8.0, H100 9.0)'
        )
    return sorted({cap for cap, _ in entries})


def _entry_hint(entry: str) -> str:
    base = entry.split("+")[0].lower()
    if base in _NAMED:
        return f'named arches crash DeepSpeed\'s parser; write the numbers instead, e.g. "{_NAMED[base]}" for {entry}'
    m = re.match(r"^(?:sm_|compute_)?(\d+)(\d)$", base)
    if m:
        return f'write it as major.minor: "{m.group(1)}.{m.group(2)}"'
    m = re.match(r"^(\d+\.\d+)[a-z]$", base)
    if m:
        return f'DeepSpeed takes only X.Y or X.Y+PTX entries; use "{m.group(1)}"'
    return 'expected entries like 8.0 or 9.0+PTX, separated by ";" or spaces'


def normalise_arch_list(text: str, where: str = "--arch-list") -> str:
    return format_arch_list(parse_arch_list(text, where))


def archs_from_facts(facts_by_host: dict[str, dict]) -> tuple[list[Arch], dict[str, list[str]], dict[str, str]]:
    """Every GPU's `capability` over all nodes -> (sorted unique archs, {host: [capability, ...]},
    {host: why its GPUs are unknown}).

    A node without GPUs contributes nothing. A node whose GPU facts came malformed (untrusted.clean_facts
    dropped them) or whose GPU has no known capability is only in the third part: silently building without
    it would give a wheel that node cannot run, so the caller refuses to build.
    """
    archs: set[Arch] = set()
    per_host: dict[str, list[str]] = {}
    unknown: dict[str, str] = {}
    for host, facts in sorted(facts_by_host.items()):
        facts = facts or {}
        bad = [m for m in facts.get("malformed") or [] if m.get("field", "").startswith("gpus")]
        caps = []
        for gpu in facts.get("gpus") or []:
            cap = str(gpu.get("capability") or "").strip()
            m = _CAPABILITY.match(cap)
            if not m:
                name = gpu.get("name") or "unknown"
                unknown[host] = f"GPU {gpu.get('index', '?')} ({name}) reports compute capability {cap!r}"
                break
            caps.append(cap)
        if bad:
            unknown[host] = f"the node sent malformed GPU facts ({bad[0]['field']}: {bad[0]['value']}): not trusted"
        if host not in unknown:
            archs.update(_arch(c) for c in caps)
            per_host[host] = caps
    return sorted(archs), per_host, unknown


def _arch(cap: str) -> Arch:
    major, minor = cap.split(".")
    return int(major), int(minor)


def nvcc_buildable(nvcc: dict | None) -> list[Arch] | None:
    """The probe's nvcc facts (`arch_list`: compute_75 ... compute_121 from `nvcc --list-gpu-arch`) -> archs,
    or None when there is no nvcc or it cannot list them (older than CUDA 11)."""
    archs = set()
    for word in (nvcc or {}).get("arch_list") or []:
        m = re.match(r"^(?:compute|sm)_(\d+)(\d)[a-z]?$", word.strip())
        if m:
            archs.add((int(m.group(1)), int(m.group(2))))
    return sorted(archs) or None


def check_against_nvcc(archs: list[Arch], nvcc: dict | None) -> ArchCheck:
    """Refuse archs the build host's nvcc cannot build; warn that any arch <= 7.x turns BF16 off.

    `nvcc` is the probe's nvcc facts; without --list-gpu-arch output the CUDA release table decides.
    """
    result = ArchCheck()
    buildable = nvcc_buildable(nvcc)
    if buildable is not None:
        result.refused = [cap_str(a) for a in archs if a not in set(buildable)]
    elif nvcc and nvcc.get("version"):
        result.refused = [cap_str(a) for a in archs if nvcc_can_build(nvcc["version"], a) is False]
    else:
        result.warnings.append("no nvcc on the build host: the arch list is not checked against a compiler")
    low = [f"{a}.{b}" for a, b in archs if a <= 7]
    if low:
        result.warnings.append(
            f"arch {', '.join(low)} (major <= 7) turns BF16 off in DeepSpeed's kernels "
            f"for the whole build, also on newer GPUs"
        )
    return result


def describe_buildable(buildable: list[Arch]) -> str:
    """[(7, 5), (8, 0), ..., (12, 1)] -> '7.5 ... 12.1' for error messages."""
    if not buildable:
        return "nothing"
    return f"{buildable[0][0]}.{buildable[0][1]} ... {buildable[-1][0]}.{buildable[-1][1]}"
