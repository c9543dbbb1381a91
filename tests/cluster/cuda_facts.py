"""CUDA facts the fakes need to answer like the real tools (values from the CUDA release notes)."""
from __future__ import annotations

# Full nvcc versions of common releases ("release 12.1, V12.1.105"); others get ".0".
NVCC_FULL = {
    "10.2": "10.2.89", "11.0": "11.0.221", "11.1": "11.1.105", "11.2": "11.2.152", "11.3": "11.3.109",
    "11.4": "11.4.152", "11.5": "11.5.119", "11.6": "11.6.124", "11.7": "11.7.99", "11.8": "11.8.89",
    "12.0": "12.0.140", "12.1": "12.1.105", "12.2": "12.2.140", "12.3": "12.3.107", "12.4": "12.4.131",
    "12.5": "12.5.82", "12.6": "12.6.85", "12.8": "12.8.93", "12.9": "12.9.86", "13.0": "13.0.88",
}

# Minimum Linux driver per CUDA release (reference §2); the driver's "CUDA Version" is the newest it serves.
DRIVER_MIN = [
    ("11.8", "520.61.05"), ("12.0", "525.60.13"), ("12.1", "530.30.02"), ("12.2", "535.54.03"),
    ("12.3", "545.23.06"), ("12.4", "550.54.14"), ("12.5", "555.42.02"), ("12.6", "560.28.03"),
    ("12.8", "570.26"), ("12.9", "575.51.03"), ("13.0", "580.65.06"), ("13.1", "590.44.01"),
    ("13.2", "595.45.04"),
]
# Minor-version compatibility floors: a runtime of this major works on drivers at or above these.
MAJOR_FLOOR = {11: "450.80.02", 12: "525.60.13", 13: "580"}

# (arch, first CUDA with it, first CUDA without it) for `nvcc --list-gpu-arch` (reference §3).
ARCHES = [
    (30, None, "11.0"), (32, None, "11.0"), (35, None, "12.0"), (37, None, "12.0"),
    (50, None, "13.0"), (52, None, "13.0"), (53, None, "13.0"), (60, None, "13.0"), (61, None, "13.0"),
    (62, None, "13.0"), (70, None, "13.0"), (72, None, "13.0"), (75, "10.0", None), (80, "11.0", None),
    (86, "11.1", None), (87, "11.4", None), (88, "13.0", None), (89, "11.8", None), (90, "11.8", None),
    (100, "12.8", None), (101, "12.8", "13.0"), (103, "12.9", None), (110, "13.0", None),
    (120, "12.8", None), (121, "12.9", None),
]


def vtuple(version: str) -> tuple:
    out = []
    for part in str(version).split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def short(version: str) -> str:
    """"12.1.105" -> "12.1"."""
    parts = str(version).split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else f"{parts[0]}.0"


def full(version: str) -> str:
    version = str(version)
    if version.count(".") >= 2:
        return version
    return NVCC_FULL.get(version, f"{version}.0")


def driver_cuda(driver: str) -> str:
    """Newest CUDA version a driver serves (the "CUDA Version" in nvidia-smi's banner)."""
    best = "11.7"
    for cuda, minimum in DRIVER_MIN:
        if vtuple(driver) >= vtuple(minimum):
            best = cuda
    return best


def driver_runs(driver: str | None, cuda: str | None) -> bool:
    """Whether a CUDA runtime of this version initialises on this driver (minor-version compatibility)."""
    if not driver or not cuda:
        return False
    floor = MAJOR_FLOOR.get(vtuple(cuda)[0])
    return floor is not None and vtuple(driver) >= vtuple(floor)


def max_gcc(cuda: str) -> int:
    """Newest gcc major nvcc of this version accepts (reference §1)."""
    v = vtuple(short(cuda))[:2]
    for upto, gcc in [((10, 0), 7), ((10, 2), 8), ((11, 0), 9), ((11, 4), 10), ((11, 8), 11), ((12, 3), 12),
                      ((12, 6), 13), ((12, 9), 14)]:
        if v <= upto:
            return gcc
    return 15


def gpu_arches(cuda: str) -> list[str]:
    v = vtuple(short(cuda))[:2]
    out = []
    for arch, added, dropped in ARCHES:
        if added and v < vtuple(added):
            continue
        if dropped and v >= vtuple(dropped):
            continue
        out.append(f"compute_{arch}")
    return out


def cudart_soname(cuda: str) -> str:
    major = vtuple(cuda)[0]
    return f"libcudart.so.{major}.0" if major <= 11 else f"libcudart.so.{major}"
