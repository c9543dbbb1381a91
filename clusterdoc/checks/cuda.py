"""cuda: torch's CUDA, nvcc, CUDA_HOME, the toolkits, libcudart, gcc and driver agree with each other."""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check
from clusterdoc.tables import driver_short_of, ds_tolerates, gcc_max_for, major_minor, vtuple

CHECK = "cuda"


def _norm(path):
    return path.rstrip("/") if path else path


def _toolkit(facts, path):
    for tk in facts.get("toolkits") or []:
        if _norm(tk.get("path")) == _norm(path):
            return tk
    real = _real(facts, path)
    for tk in facts.get("toolkits") or []:
        if tk.get("realpath") and _norm(tk["realpath"]) == real:
            return tk
    return None


def _real(facts, path):
    """A toolkit path with its links resolved, as the node saw them (/usr/local/cuda -> /usr/local/cuda-13.0)."""
    path = _norm(path)
    if path and path == _norm(facts.get("cuda_home")) and facts.get("cuda_home_realpath"):
        return _norm(facts["cuda_home_realpath"])
    for tk in facts.get("toolkits") or []:
        if _norm(tk.get("path")) == path and tk.get("realpath"):
            return _norm(tk["realpath"])
    return path


def _wanted_toolkit(facts) -> str | None:
    """The toolkit the environment should point at: the one matching torch's CUDA exactly, else its
    major, else the one CUDA_HOME or nvcc already use."""
    tks = [t for t in facts.get("toolkits") or [] if t.get("version")]
    torch_cuda = (facts.get("torch") or {}).get("cuda")
    if torch_cuda:
        for t in tks:
            if major_minor(t["version"]) == major_minor(torch_cuda):
                return t["path"]
        same_major = [t for t in tks if major_minor(t["version"])[:1] == major_minor(torch_cuda)[:1]]
        if same_major:
            return max(same_major, key=lambda t: major_minor(t["version"]))["path"]
    nvcc_home = (facts.get("nvcc") or {}).get("home")
    return facts.get("cuda_home") or nvcc_home or (tks[-1]["path"] if tks else None)


def export_lines(home: str) -> str:
    return (
        f"export PATH={home}/bin:$PATH; export LD_LIBRARY_PATH={home}/lib64:$LD_LIBRARY_PATH; export CUDA_HOME={home}"
    )


def gcc_limit(nvcc: dict, toolkit: dict | None) -> tuple[int | None, str]:
    """The newest gcc major this nvcc accepts, and where that was read: the crt/host_config.h it includes
    (the probe found it along its nvcc.profile), its toolkit's, else the CUDA release notes."""
    if nvcc.get("gcc_max") and nvcc.get("host_config"):
        return nvcc["gcc_max"], nvcc["host_config"]
    if toolkit and toolkit.get("gcc_max"):
        return toolkit["gcc_max"], f"{toolkit['path']}/include/crt/host_config.h"
    return gcc_max_for(nvcc.get("version")), "the CUDA release notes"


def check(node: str, facts: dict) -> list[Finding]:
    out = probe_errors(node, facts, CHECK)
    if facts.get("probe") == "shell":
        nvcc = facts.get("nvcc")
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                "no python3: torch and toolkit details unknown"
                + (f"; nvcc {nvcc['version']} at {nvcc['path']}" if nvcc else "; no nvcc on PATH"),
                "install python3 on the node (the training needs it anyway)",
            )
        )
        return out
    torch, nvcc, gpus = facts.get("torch"), facts.get("nvcc"), facts.get("gpus") or []
    torch_cuda = (torch or {}).get("cuda")
    wanted = _wanted_toolkit(facts)

    # torch
    python = (facts.get("python") or {}).get("executable", "python3")
    if torch is None:
        if not any(e.get("probe") == "torch" for e in facts.get("errors") or []):
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"torch is not installed for {python}",
                    f"install torch for {python}, or put the training environment's python3 first on PATH",
                )
            )
    elif not torch_cuda:
        if gpus:
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"torch {torch['version']} is a CPU-only build but the node has {len(gpus)} GPU(s)",
                    "install a CUDA build of torch, e.g. pip install torch --index-url "
                    "https://download.pytorch.org/whl/cu121",
                )
            )
        else:
            out.append(finding(node, CHECK, OK, f"torch {torch['version']} (CPU-only build; no GPU on this node)"))
    else:
        out.append(
            finding(
                node,
                CHECK,
                OK,
                f"torch {torch['version']} built for CUDA {torch_cuda}"
                + (f", NCCL {torch['nccl']}" if torch.get("nccl") else ""),
            )
        )

    # nvcc against torch
    if nvcc is None:
        if torch_cuda:
            fix = export_lines(wanted) if wanted else f"install the CUDA {torch_cuda} toolkit"
            out.append(
                finding(node, CHECK, WARN, "no nvcc on PATH: CUDA extensions (DeepSpeed ops) cannot be built", fix)
            )
    else:
        where = (
            f"nvcc {nvcc.get('version')} ({nvcc['path']}"
            + (f" -> {nvcc['home']}" if nvcc.get("home") and not nvcc["path"].startswith(nvcc["home"]) else "")
            + ")"
        )
        if torch_cuda and nvcc.get("version"):
            if major_minor(nvcc["version"])[:1] != major_minor(torch_cuda)[:1]:
                fix = (
                    export_lines(wanted)
                    if wanted and _norm(wanted) != _norm(nvcc.get("home"))
                    else (
                        f"install the CUDA {torch_cuda} toolkit and put its bin/ first on PATH, "
                        f"or install torch built for CUDA {nvcc['version']}"
                    )
                )
                out.append(
                    finding(
                        node,
                        CHECK,
                        FAIL,
                        f"{where} does not match torch's CUDA {torch_cuda}: extensions built with it fail "
                        "(DeepSpeed refuses: major versions differ)",
                        fix,
                    )
                )
            elif not ds_tolerates(nvcc["version"], torch_cuda):
                out.append(
                    finding(
                        node,
                        CHECK,
                        FAIL,
                        f"{where} vs torch's CUDA {torch_cuda}: DeepSpeed refuses this minor mismatch",
                        export_lines(wanted) if wanted else f"use the CUDA {torch_cuda} toolkit",
                    )
                )
            elif major_minor(nvcc["version"]) != major_minor(torch_cuda):
                out.append(
                    finding(
                        node,
                        CHECK,
                        OK,
                        f"{where}; torch's CUDA {torch_cuda} differs only in the minor (DeepSpeed tolerates it)",
                    )
                )
            else:
                out.append(finding(node, CHECK, OK, f"{where} matches torch"))
        else:
            out.append(finding(node, CHECK, OK, where))

    # PATH, LD_LIBRARY_PATH and CUDA_HOME must point at one toolkit
    sources = []
    if nvcc and nvcc.get("home") and _toolkit(facts, nvcc["home"]):
        sources.append(("PATH (nvcc)", nvcc["home"]))
    cudart = facts.get("libcudart_first")
    if cudart and cudart.get("toolkit"):
        sources.append(("LD_LIBRARY_PATH (libcudart)", cudart["toolkit"]))
    if facts.get("cuda_home"):
        sources.append(("CUDA_HOME", facts["cuda_home"]))
    homes = {_real(facts, h) for _, h in sources}
    if len(homes) > 1:
        detail = ", ".join(f"{name} -> {home}" for name, home in sources)
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"toolkits disagree: {detail}: the code compiles against one CUDA and loads another at run time",
                export_lines(wanted or sorted(homes)[-1]),
            )
        )
    if (
        facts.get("cuda_home")
        and not _toolkit(facts, facts["cuda_home"])
        and not _real(facts, facts["cuda_home"]) == _norm((nvcc or {}).get("home"))
        # a folder of links whose bin/ holds the nvcc in use (pip's nvidia-cuda-nvcc, scripts/cuda_venv.sh)
        and not _norm(facts["cuda_home"]) + "/bin/nvcc" == _norm((nvcc or {}).get("path"))
    ):
        found = ", ".join(t["path"] for t in facts.get("toolkits") or []) or "none"
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"CUDA_HOME={facts['cuda_home']} is not one of the toolkits found ({found})",
                export_lines(wanted) if wanted else "unset CUDA_HOME or point it at a CUDA toolkit",
            )
        )

    # the toolkit in use is complete
    in_use = _toolkit(facts, (nvcc or {}).get("home") or facts.get("cuda_home") or "")
    if in_use and in_use.get("libcudart") is False:
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"{in_use['path']}/lib64 has no libcudart.so (incomplete toolkit)",
                f"reinstall the CUDA {in_use.get('version')} toolkit (cuda-cudart-dev)",
            )
        )
    if facts.get("toolkits"):
        out.append(
            finding(
                node,
                CHECK,
                OK,
                "toolkits: " + ", ".join(f"{t['path']} ({t.get('version') or '?'})" for t in facts["toolkits"]),
            )
        )

    # gcc against the nvcc's limit
    gcc = facts.get("gcc")
    if gcc and nvcc and nvcc.get("version"):
        limit, source = gcc_limit(nvcc, in_use or _toolkit(facts, nvcc.get("home") or ""))
        gmaj = vtuple(gcc.get("version"), 1)
        if limit and gmaj and gmaj[0] > limit:
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"gcc {gcc['version']} is too new for nvcc {nvcc['version']} "
                    f"(newest it accepts: gcc {limit}, from {source}): "
                    "every CUDA build stops with 'unsupported GNU version'",
                    f"install gcc-{limit} g++-{limit} and use it: export CC=gcc-{limit} CXX=g++-{limit} "
                    f"NVCC_PREPEND_FLAGS='-ccbin g++-{limit}' (last resort: -allow-unsupported-compiler)",
                )
            )
        elif limit and gmaj:
            out.append(
                finding(node, CHECK, OK, f"gcc {gcc['version']} (nvcc {nvcc['version']} accepts up to gcc {limit})")
            )

    # driver against torch's CUDA
    driver = facts.get("driver")
    if driver and torch_cuda:
        short, need = driver_short_of(driver, torch_cuda) or ("", "")
        if short == "too old":
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"driver {driver} is too old for torch's CUDA {torch_cuda} (needs >= {need})",
                    f"upgrade the NVIDIA driver to {need} or newer, or install torch built for an older CUDA",
                )
            )
        elif short == "compat":
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"driver {driver} is below CUDA {torch_cuda}'s {need}: runs only through minor-version "
                    "compatibility (no PTX JIT)",
                    f"upgrade the NVIDIA driver to {need} or newer",
                )
            )
        else:
            out.append(finding(node, CHECK, OK, f"driver {driver} supports CUDA {torch_cuda}"))
    return out


CHECKS = (
    Check(
        "cuda",
        80,
        "driver, toolkits, nvcc, gcc and torch's CUDA agree",
        reads=("torch", "nvcc", "cuda_home", "toolkits", "libcudart_first", "gcc", "driver", "env", "python"),
        probe_errors={"nvcc": FAIL, "gcc": WARN, "torch": FAIL},
        malformed_labels={"driver": "driver version", "gpus[*].driver": "GPU driver version"},
        allocation=True,
        node=lambda c: check(c.node, c.facts),
    ),
)
