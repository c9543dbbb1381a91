"""Does a CUDA binary's device code run on a GPU? The rule the driver applies to what fatbin.py reads.

SASS built for sm_XY runs on a GPU of capability X.Z with the same major X and Z >= Y (sm_80 runs on an A10's
8.6, not on an H100's 9.0). PTX for compute_XY is compiled by the driver (JIT) for any capability >= X.Y, at the
first start and at a cost. Arch-specific code (sm_90a, compute_90a) runs on exactly that capability; family
code (sm_100f, compute_100f) on its own major's equal or later minors.
"""

from __future__ import annotations

import re

_ARCH = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")


def parse_arch(name: str) -> tuple[str, tuple[int, int], str] | None:
    """'sm_80' -> ('sass', (8, 0), ''); 'compute_100a' -> ('ptx', (10, 0), 'a'); None for anything else."""
    m = _ARCH.match(name or "")
    if not m:
        return None
    return ("sass" if m.group(1) == "sm" else "ptx"), (int(m.group(2)), int(m.group(3))), m.group(4)


def coverage(cap: tuple[int, int], sass: list[str], ptx: list[str]) -> str | None:
    """'sass' when one of the cubins runs on a GPU of capability `cap`, 'ptx' when only PTX can be JIT-compiled
    for it, None when the binary has no kernel image for it."""
    for name in sass:
        parsed = parse_arch(name)
        if parsed:
            _, built, suffix = parsed
            if built == cap if suffix == "a" else (built[0] == cap[0] and built[1] <= cap[1]):
                return "sass"
    for name in ptx:
        parsed = parse_arch(name)
        if parsed:
            _, built, suffix = parsed
            if built == cap if suffix == "a" else built <= cap and (suffix != "f" or built[0] == cap[0]):
                return "ptx"
    return None


def describe(sass: list[str], ptx: list[str]) -> str:
    """'sm_80 only and no PTX', 'sm_80, sm_90 and PTX compute_90'."""
    code = ", ".join(sass) if sass else "no SASS"
    if not ptx:
        return code + (" only and no PTX" if len(sass) == 1 else " and no PTX")
    return f"{code} and PTX {', '.join(ptx)}"
