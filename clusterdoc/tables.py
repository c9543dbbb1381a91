"""Reference data the checks judge against (shared/reference.md §1-3, from CUDA release notes).

Versions are compared as integer tuples: "12.1" -> (12, 1), "535.54.03" -> (535, 54, 3).
"""

from __future__ import annotations

import re

# §1: newest gcc major each CUDA's nvcc accepts. Fallback only: the node's own
# include/crt/host_config.h is read first. Rows: (first CUDA, last CUDA, max gcc major).
GCC_MAX = [
    ((0, 0), (10, 0), 7),
    ((10, 1), (10, 2), 8),
    ((11, 0), (11, 0), 9),
    ((11, 1), (11, 4), 10),
    ((11, 5), (11, 8), 11),
    ((12, 0), (12, 3), 12),
    ((12, 4), (12, 6), 13),
    ((12, 7), (12, 9), 14),
    ((13, 0), (13, 2), 15),
]

# §2: minimum Linux driver per CUDA runtime release, and the minor-version compatibility floor.
DRIVER_MIN = {
    (11, 8): "520.61.05",
    (12, 0): "525.60.13",
    (12, 1): "530.30.02",
    (12, 2): "535.54.03",
    (12, 3): "545.23.06",
    (12, 4): "550.54.14",
    (12, 5): "555.42.02",
    (12, 6): "560.28.03",
    (12, 8): "570.26",
    (12, 9): "575.51.03",
    (13, 0): "580.65.06",
    (13, 1): "590.44.01",
    (13, 2): "595.45.04",
}
DRIVER_FLOOR = {11: "450.80.02", 12: "525.60.13", 13: "580"}

# §3: the CUDA release that added / dropped each compute capability (major, minor).
ARCH_ADDED = {
    (7, 5): (10, 0),
    (8, 0): (11, 0),
    (8, 6): (11, 1),
    (8, 7): (11, 4),
    (8, 9): (11, 8),
    (9, 0): (11, 8),
    (10, 0): (12, 8),
    (12, 0): (12, 8),
    (10, 3): (12, 9),
    (12, 1): (12, 9),
}
ARCH_DROPPED = {  # first CUDA without it
    (3, 0): (11, 0),
    (3, 2): (11, 0),
    (3, 5): (12, 0),
    (3, 7): (12, 0),
    (5, 0): (13, 0),
    (5, 2): (13, 0),
    (5, 3): (13, 0),
    (6, 0): (13, 0),
    (6, 1): (13, 0),
    (6, 2): (13, 0),
    (7, 0): (13, 0),
    (7, 2): (13, 0),
}

# DeepSpeed's assert_no_cuda_mismatch tolerates a minor difference inside these ranges (§4).
DS_MINOR_TOLERANCE = [((10, 0), (10, 2)), ((11, 0), (11, 8)), ((12, 0), (12, 9))]

KERNEL_MIN = (5, 5)


def vtuple(text, parts: int = 3) -> tuple:
    """'12.1.105' -> (12, 1, 105); '5.4.0-150-generic' -> (5, 4, 0); None/'' -> ()."""
    return tuple(int(x) for x in re.findall(r"\d+", str(text or ""))[:parts])


def major_minor(text) -> tuple:
    return vtuple(text, 2)


def gcc_max_for(cuda: str | None) -> int | None:
    v = major_minor(cuda)
    if len(v) < 2:
        return None
    for lo, hi, gcc in GCC_MAX:
        if lo <= v <= hi:
            return gcc
    return None


def driver_min_for(cuda: str | None) -> tuple[str | None, str | None]:
    """(minimum for exactly this release, minor-compatibility floor of its major)."""
    v = major_minor(cuda)
    if not v:
        return None, None
    return DRIVER_MIN.get(v), DRIVER_FLOOR.get(v[0])


def driver_short_of(driver: str, cuda: str | None) -> tuple[str, str] | None:
    """Where a driver (or kernel module) version falls short of CUDA `cuda`: ("too old", the version it needs)
    below its major's minor-version compatibility floor (torch sees no GPU); ("compat", the release's own minimum)
    at or above the floor but below that minimum (it runs through minor-version compatibility only, no PTX JIT of
    newer code); None when it is enough or the tables do not know `cuda`."""
    exact, floor = driver_min_for(cuda)
    if floor and vtuple(driver) < vtuple(floor):
        return "too old", exact or floor
    if exact and vtuple(driver) < vtuple(exact):
        return "compat", exact
    return None


def nvcc_can_build(cuda: str | None, cap: tuple) -> bool | None:
    """Whether nvcc of this CUDA version can build this capability (None: cannot tell)."""
    v = major_minor(cuda)
    if len(v) < 2:
        return None
    added = ARCH_ADDED.get(cap)
    if added and v < added:
        return False
    dropped = ARCH_DROPPED.get(cap)
    if dropped and v >= dropped:
        return False
    if added is None and dropped is None and cap > max(ARCH_ADDED):
        return None  # newer than this table knows
    return True


def ds_tolerates(nvcc: str, torch_cuda: str) -> bool:
    """DeepSpeed accepts nvcc vs torch.version.cuda differing only in the minor, inside one range."""
    a, b = major_minor(nvcc), major_minor(torch_cuda)
    if a == b:
        return True
    return any(lo <= a <= hi and lo <= b <= hi for lo, hi in DS_MINOR_TOLERANCE)


GPU_CAPABILITY = [  # fallback when nvidia-smi is too old to print compute_cap
    ("H200", "9.0"),
    ("H100", "9.0"),
    ("B200", "10.0"),
    ("L40", "8.9"),
    ("L4", "8.9"),
    ("A100", "8.0"),
    ("A10", "8.6"),
    ("T4", "7.5"),
    ("V100", "7.0"),
]


def parse_capability(text) -> tuple | None:
    m = re.match(r"^\s*(\d+)\.(\d+)", str(text or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def cap_str(cap: tuple) -> str:
    return f"{cap[0]}.{cap[1]}"


def format_arch_list(caps) -> str:
    """{(9, 0), (8, 0)} -> '8.0;9.0+PTX' (the form clusterdoc build-wheel uses: +PTX on the highest)."""
    parts = [cap_str(c) for c in sorted(set(caps))]
    if parts:
        parts[-1] += "+PTX"
    return ";".join(parts)
