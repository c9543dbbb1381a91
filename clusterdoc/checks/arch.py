"""arch: the GPUs, and whether TORCH_CUDA_ARCH_LIST, torch and nvcc all cover their compute capability."""

from __future__ import annotations

import re

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check, Shared
from clusterdoc.gpuarch import covered_by, gpu_short_name, sm_name, what_it_has
from clusterdoc.tables import cap_str, format_arch_list, nvcc_can_build, parse_capability

CHECK = "arch"
NO_KERNEL = "'no kernel image is available for execution on the device'"


def parse_arch_entries(text: str):
    """'8.0;8.6 9.0+PTX' -> ([((8,0),False), ((8,6),False), ((9,0),True)], [bad entries])."""
    entries, bad = [], []
    for e in re.split(r"[;,\s]+", (text or "").strip()):
        if not e:
            continue
        m = re.match(r"^(\d+)\.(\d+)(\+PTX)?$", e, re.IGNORECASE)
        if m:
            entries.append(((int(m.group(1)), int(m.group(2))), bool(m.group(3))))
        else:
            bad.append(e)
    return entries, bad


def covers(entries, cap) -> str | None:
    """'sass' if a cubin of the list runs on cap (sm_80 runs on 8.6: same major, lower minor), 'ptx' if only a
    +PTX entry can JIT for it, None otherwise (clusterdoc/gpuarch.py's rule)."""
    sass = [f"sm_{c[0]}{c[1]}" for c, _ in entries]
    return covered_by(cap, sass, [f"compute_{c[0]}{c[1]}" for c, ptx in entries if ptx])


# torch's named arches (torch.utils.cpp_extension._get_cuda_arch_flags); DeepSpeed's builder knows none of them.
TORCH_NAMED_ARCHES = {
    "kepler+tesla": "3.7",
    "kepler": "3.5+PTX",
    "maxwell+tegra": "5.3",
    "maxwell": "5.0;5.2+PTX",
    "pascal": "6.0;6.1+PTX",
    "volta+tegra": "7.2",
    "volta": "7.0+PTX",
    "turing": "7.5+PTX",
    "ampere+tegra": "8.7",
    "ampere": "8.0;8.6+PTX",
    "ada": "8.9+PTX",
    "hopper": "9.0+PTX",
}


def parse_torch_arch_list(text: str) -> tuple[list[str], list[str], list[str]]:
    """TORCH_CUDA_ARCH_LIST as torch's cpp_extension reads it -> (sass, ptx, bad): '8.0;9.0a+PTX' ->
    (['sm_80', 'sm_90a'], ['compute_90a'], []). Torch takes X.Y, arch-specific X.Ya and family X.Yf, each with
    an optional +PTX; DeepSpeed's own parser takes only X.Y[+PTX] (parse_arch_entries)."""
    sass, ptx, bad = [], [], []
    words = re.split(r"[;,\s]+", (text or "").strip())
    for e in [x for w in words for x in TORCH_NAMED_ARCHES.get(w.lower(), w).split(";")]:
        m = re.match(r"^(\d+)\.(\d+)([af]?)(\+PTX)?$", e, re.IGNORECASE)
        if m:
            name = f"{m.group(1)}{m.group(2)}{m.group(3).lower()}"
            sass.append(f"sm_{name}")
            if m.group(4):
                ptx.append(f"compute_{name}")
        elif e:
            bad.append(e)
    return sass, ptx, bad


def _torch_covers(arch_list, cap) -> bool:
    return bool(
        covered_by(
            cap, [a for a in arch_list if a.startswith("sm_")], [a for a in arch_list if a.startswith("compute_")]
        )
    )


def node_capabilities(facts: dict) -> list[tuple]:
    return sorted({c for c in (parse_capability(g.get("capability")) for g in facts.get("gpus") or []) if c})


def needed_arch_list(all_facts: dict) -> str:
    """The TORCH_CUDA_ARCH_LIST covering every GPU on every node ('' when there are none)."""
    caps = set()
    for facts in all_facts.values():
        caps.update(node_capabilities(facts))
    return format_arch_list(caps)


def check(node: str, facts: dict, arch_list: str | None = None, cluster_list: str = "") -> list[Finding]:
    """`arch_list`: --arch-list (overrides the node's TORCH_CUDA_ARCH_LIST); `cluster_list`: what the whole
    cluster needs, offered as the fix."""
    out = probe_errors(node, facts, CHECK)
    gpus = facts.get("gpus") or []
    if not gpus:
        sent_bad = any(str(m.get("field", "")).startswith("gpus") for m in facts.get("malformed") or [] if m)
        if not sent_bad and not any(e.get("probe") == "gpus" for e in facts.get("errors") or []):
            out.append(finding(node, CHECK, OK, "no GPU (nvidia-smi absent or lists none)"))
        return out
    models: dict[tuple, int] = {}
    for g in gpus:
        key = (g.get("name"), g.get("capability"), g.get("memory_mib"))
        models[key] = models.get(key, 0) + 1
    desc = ", ".join(f"{n}x {name} ({cap}, {mem} MiB)" for (name, cap, mem), n in models.items())
    out.append(finding(node, CHECK, OK, f"{desc}, driver {facts.get('driver')}"))
    caps = node_capabilities(facts)

    given = arch_list if arch_list else (facts.get("env") or {}).get("TORCH_CUDA_ARCH_LIST")
    label = "--arch-list" if arch_list else "TORCH_CUDA_ARCH_LIST"
    fix_list = (
        f'export TORCH_CUDA_ARCH_LIST="{cluster_list}" and rebuild the CUDA extensions (DeepSpeed ops)'
        if cluster_list
        else "set TORCH_CUDA_ARCH_LIST to the GPUs' capabilities"
    )
    if given:
        entries, ds_bad = parse_arch_entries(given)
        sass, ptx, bad = parse_torch_arch_list(given)
        if bad:
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"{label}={given!r}: entries {bad} are not X.Y, X.Ya or X.Yf (+PTX): torch's extension "
                    "builder stops on them ('Unknown CUDA arch')",
                    fix_list,
                )
            )
        elif ds_bad and (facts.get("deepspeed") or arch_list):
            # 9.0a and Ampere are right for torch; DeepSpeed's builder (a JIT op load, a build) crashes on them
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"{label}={given!r}: entries {ds_bad} are not X.Y or X.Y+PTX: DeepSpeed's parser crashes on "
                    "them when it builds an op (JIT load, DS_BUILD_OPS install)",
                    fix_list,
                )
            )
        for cap in caps:
            how = covered_by(cap, sass, ptx)
            if how is None:
                out.append(
                    finding(
                        node,
                        CHECK,
                        FAIL,
                        f"GPU capability {cap_str(cap)} is not in {label}={given}: kernels built with it "
                        f"fail here with {NO_KERNEL}",
                        fix_list,
                    )
                )
            elif how == "ptx":
                out.append(
                    finding(
                        node,
                        CHECK,
                        WARN,
                        f"GPU capability {cap_str(cap)} is covered by {label}={given} only "
                        "through PTX JIT (slow first start, lower speed)",
                        fix_list,
                    )
                )
        if any(c[0] <= 7 for c, _ in entries):
            low = ";".join(cap_str(c) for c, _ in entries if c[0] <= 7)
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"{label} has {low} (<= 7.x): DeepSpeed turns BF16 off for the whole build",
                    "build separately for the old GPUs, or drop them from the list",
                )
            )
        nvcc = facts.get("nvcc") or {}
        if nvcc.get("version"):
            offered = nvcc.get("arch_list")
            for cap, _ in entries:
                ok: bool | None
                if offered:
                    ok = f"compute_{cap[0]}{cap[1]}" in offered
                else:
                    ok = nvcc_can_build(nvcc["version"], cap)
                if ok is False:
                    out.append(
                        finding(
                            node,
                            CHECK,
                            FAIL,
                            f"nvcc {nvcc['version']} cannot build {cap_str(cap)} (in {label})",
                            f"use a CUDA toolkit that supports {cap_str(cap)}, or drop it from {label}",
                        )
                    )

    torch = facts.get("torch") or {}
    if torch.get("cuda"):
        archs = torch.get("arch_list") or []
        if not archs:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"torch {torch.get('version')} cannot use the GPUs "
                    "(torch.cuda.get_arch_list() is empty: is_available() is False)",
                    "check the driver with nvidia-smi and that torch's CUDA is supported by it",
                )
            )
        for cap in caps:
            if archs and not _torch_covers(archs, cap):
                out.append(
                    finding(
                        node,
                        CHECK,
                        FAIL,
                        f"torch {torch.get('version')} has no kernels for {cap_str(cap)} (built for {' '.join(archs)})",
                        "install a torch build that supports this GPU",
                    )
                )

    ds = facts.get("deepspeed")
    if ds:
        inst = sorted(op for op, v in (ds.get("ops_installed") or {}).items() if v)
        compat = sorted(op for op, v in (ds.get("ops_compatible") or {}).items() if v and op not in inst)
        out.append(
            finding(
                node,
                CHECK,
                OK,
                f"DeepSpeed {ds.get('version')}: ops installed: {', '.join(inst) or 'none'}"
                f"; compatible (JIT): {', '.join(compat) or 'none'}",
            )
        )
        out += binary_findings(node, ds, gpus, cluster_list or format_arch_list(caps))
        manifest = ds.get("wheel_manifest") or {}
        built = manifest.get("arch_list") or manifest.get("torch_cuda_arch_list")
        read = any(b.get("sass") or b.get("ptx") for b in ds.get("binaries") or [])
        if built and not read:  # what the binaries carry (above) is the truth; the manifest what was asked
            entries, _ = parse_arch_entries(built)
            missing = [cap_str(c) for c in caps if covers(entries, c) is None]
            jit = [cap_str(c) for c in caps if covers(entries, c) == "ptx"]
            rebuild = f'clusterdoc build-wheel --arch-list "{cluster_list}" --install'
            if missing:
                out.append(
                    finding(
                        node,
                        CHECK,
                        FAIL,
                        f"the installed DeepSpeed wheel was built for {built}, "
                        f"not for this node's {', '.join(missing)}: its ops fail with "
                        f"{NO_KERNEL}",
                        rebuild,
                    )
                )
            elif jit:
                out.append(
                    finding(
                        node,
                        CHECK,
                        WARN,
                        f"the installed DeepSpeed wheel ({built}) reaches this node's "
                        f"{', '.join(jit)} only through PTX JIT (slow first start)",
                        rebuild,
                    )
                )
    return out


def binary_findings(node: str, ds: dict, gpus: list[dict], arch_list: str) -> list[Finding]:
    """The SASS and PTX each installed DeepSpeed op's binary carries (the probe read them from the .so files on
    the node, whoever built them) against the node's GPUs; `arch_list` is offered for the rebuild."""
    out = []
    models: dict[tuple, str] = {}
    for g in gpus:
        cap = parse_capability(g.get("capability"))
        if cap:
            models.setdefault(cap, f"{gpu_short_name(g.get('name'))} ({sm_name(cap)})")
    rebuild = f'rebuild DeepSpeed for this cluster\'s GPUs: clusterdoc build-wheel --arch-list "{arch_list}" --install'
    carried = []
    for b in ds.get("binaries") or []:
        where = f"DeepSpeed op {b.get('op')} ({ds.get('path')}/{b['file']})"
        if b.get("error"):
            out.append(finding(node, CHECK, WARN, f"cannot read the GPU code of {where}: {b['error']}", rebuild))
            continue
        sass, ptx = b.get("sass") or [], b.get("ptx") or []
        carried.append(f"{b.get('op')} ({', '.join(sass + ptx) or 'host code'})")
        if not sass and not ptx:
            continue  # cpu_adam, utils, ...: nothing for a GPU to run
        missing = [models[c] for c in sorted(models) if covered_by(c, sass, ptx) is None]
        jit = [models[c] for c in sorted(models) if covered_by(c, sass, ptx) == "ptx"]
        if missing:
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"{where} has {what_it_has(sass, ptx)}: nothing for this node's {', '.join(missing)}; "
                    f"it fails here with {NO_KERNEL}",
                    rebuild,
                )
            )
        elif jit:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"{where} has {what_it_has(sass, ptx)}: this node's {', '.join(jit)} runs it only "
                    "through PTX JIT (slow first start, lower speed)",
                    rebuild,
                )
            )
    if carried:
        left = ds.get("binaries_left") or 0
        more = f" ({left} more not read)" if left else ""
        out.append(finding(node, CHECK, OK, f"DeepSpeed's compiled ops: {'; '.join(carried)}{more}"))
    elif ds.get("binaries") == []:
        out.append(
            finding(
                node,
                CHECK,
                OK,
                "DeepSpeed has no prebuilt op: each op is JIT-compiled on first use here "
                "(needs nvcc and a gcc it accepts on this node)",
            )
        )
    return out


CHECKS = (
    Check(
        "arch",
        90,
        "torch and DeepSpeed ops are built for the GPUs",
        reads=("gpus", "torch", "deepspeed", "libaio", "libaio_header", "env"),
        probe_errors={"gpus": FAIL, "deepspeed": WARN, "libaio": WARN},
        malformed_labels={
            "gpus": "GPU list",
            "gpus[*]": "GPU entry",
            "gpus[*].name": "GPU name",
            "gpus[*].capability": "GPU compute capability",
        },
        allocation=True,
        prepare=(Shared("needed", lambda c: needed_arch_list(dict(c.answered)), ""),),
        node=lambda c: check(c.node, c.facts, c.opts.arch_list, c.shared["needed"]),
    ),
)
