"""Preflight on the build host: will DeepSpeed's setup.py build the requested ops here?

The build host's facts come from the doctor's probe (clusterdoc/probe/, run in-process); torch vs
nvcc is judged by the doctor's own cuda check. What only a build needs is added here: which host
compiler nvcc will really call (CC, NVCC_CCBIN, CUDA_HOST_COMPILER, a gcc in the toolkit's bin/, then
PATH), whether libaio links, and ninja. Each failure carries its fix; any failure stops the build.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from clusterdoc.checks import FAIL, WARN
from clusterdoc.checks import Finding as DoctorFinding
from clusterdoc.checks.cuda import gcc_limit
from clusterdoc.tables import vtuple

# Ops that compile as plain C++ (no nvcc, no CUDA torch) under DeepSpeed's CUDA accelerator.
HOST_OPS = {"cpu_adam", "cpu_adagrad", "cpu_lion", "utils", "async_io", "pin_memory"}

# DeepSpeed's own requirements/requirements.txt (0.19.x), importable names: pip names.
BUILD_DEPS = {
    "numpy": "numpy",
    "packaging": "packaging",
    "psutil": "psutil",
    "cpuinfo": "py-cpuinfo",
    "pydantic": "pydantic",
    "hjson": "hjson",
    "ninja": "ninja",
    "tqdm": "tqdm",
    "msgpack": "msgpack",
    "einops": "einops",
}


@dataclass
class Finding:
    status: str  # "fail" | "warn" | "ok"
    message: str
    fix: str = ""


def fail(message, fix=""):
    return Finding(FAIL, message, fix)


def warn(message, fix=""):
    return Finding(WARN, message, fix)


def ok(message):
    return Finding("ok", message)


# --- facts only a build needs --------------------------------------------------------------------


def compiler_version(path: str, timeout: float = 20.0) -> str | None:
    try:
        out = subprocess.run(
            [path, "-dumpfullversion", "-dumpversion"], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and re.match(r"^\d+(\.\d+)*$", text) else None


def nvcc_host_compiler(env: dict, toolkit: str | None) -> tuple[str | None, str]:
    """(path, how chosen) of the C++ host compiler nvcc will call for torch's CUDA extensions.

    torch passes `-ccbin $CC` when CC is set; nvcc honours NVCC_CCBIN; we export CUDA_HOST_COMPILER as
    NVCC_CCBIN; otherwise nvcc puts its own bin/ first on PATH, so a gcc linked there wins.
    """
    for var in ("CC", "NVCC_CCBIN", "CUDA_HOST_COMPILER"):
        value = env.get(var)
        if value:
            return shutil.which(value, path=env.get("PATH")) or value, var
    path = env.get("PATH", "")
    if toolkit:
        path = os.path.join(toolkit, "bin") + os.pathsep + path
        found = shutil.which("gcc", path=path)
        if found and os.path.dirname(found) == os.path.join(toolkit, "bin"):
            return found, f"{toolkit}/bin/gcc"
    found = shutil.which("gcc", path=env.get("PATH", ""))
    return found, "gcc on PATH"


def installed_gccs(limit: int = 99) -> list[str]:
    """Installed gcc-N with N <= limit, newest first (to name a concrete fix)."""
    found = []
    for path in glob.glob("/usr/bin/gcc-[0-9]*"):
        m = re.match(r".*/gcc-(\d+)$", path)
        if m and int(m.group(1)) <= limit:
            found.append((int(m.group(1)), path))
    return [p for _, p in sorted(found, reverse=True)]


AIO_PROGRAM = "#include <libaio.h>\nint main(void){io_context_t c={0}; return io_submit(c, 0, 0);}\n"


def libaio_links(cc: str = "gcc", timeout: float = 60.0) -> tuple[bool, str]:
    """Compile and link a call to io_submit with -laio, as DeepSpeed's async_io builder does."""
    with tempfile.TemporaryDirectory(prefix="clusterdoc-aio-") as tmp:
        src = os.path.join(tmp, "aio.c")
        with open(src, "w") as f:
            f.write(AIO_PROGRAM)
        try:
            out = subprocess.run(
                [cc, src, "-laio", "-o", os.path.join(tmp, "aio")], capture_output=True, text=True, timeout=timeout
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return False, str(err)
    lines = (out.stderr or out.stdout).strip().splitlines()
    first = re.sub(r"^\S*aio\.c:\d+:\d+: ", "", lines[0]) if lines else ""
    return out.returncode == 0, first


def missing_build_deps(python: str, timeout: float = 60.0) -> list[str]:
    """pip names of DeepSpeed's build requirements the build python cannot import."""
    code = (
        "import importlib.util,sys\n"
        f"print(' '.join(m for m in {sorted(BUILD_DEPS)!r} if importlib.util.find_spec(m) is None))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        return [BUILD_DEPS[m] for m in sorted(BUILD_DEPS)]
    return [BUILD_DEPS[m] for m in out.stdout.split()]


def find_ninja(python: str, env: dict) -> str | None:
    path = os.path.dirname(python) + os.pathsep + env.get("PATH", "")
    return shutil.which("ninja", path=path)


def package_hint() -> tuple[str, str]:
    """(install command, package) for libaio's headers on this distribution."""
    text = ""
    try:
        with open("/etc/os-release") as f:
            text = f.read().lower()
    except OSError:
        pass
    if re.search(r"^id(_like)?=.*(rhel|fedora|centos|suse)", text, re.M):
        return "dnf install -y libaio-devel", "libaio-devel"
    return "apt-get install -y libaio-dev", "libaio-dev"


# --- rules (pure: facts in, findings out) --------------------------------------------------------


def torch_rules(facts: dict, ops: list[str]) -> list[Finding]:
    torch = facts.get("torch")
    python = (facts.get("python") or {}).get("executable", "python")
    if not torch:
        if any(e.get("probe") == "torch" for e in facts.get("errors") or []):
            return []  # the probe's own error says why (reported through the doctor's cuda check)
        return [
            fail(
                f"torch is not importable by {python}: DeepSpeed needs it to build any op",
                f"{python} -m pip install torch",
            )
        ]
    if not torch.get("cuda"):
        out = [
            ok(
                f"torch {torch['version']} is CPU-only: CUDA ops cannot be built here; host-side ops "
                f"({', '.join(sorted(HOST_OPS))}) still build, without nvcc"
            )
        ]
        cuda_ops = [op for op in ops if op not in HOST_OPS]
        if cuda_ops:
            out.append(
                fail(
                    f"{', '.join(cuda_ops)} need{'s' if len(cuda_ops) == 1 else ''} nvcc and a CUDA build "
                    f"of torch; torch {torch['version']} on this build host is CPU-only",
                    "build on a host whose torch has CUDA (e.g. a GPU node's environment), or drop them from --ops",
                )
            )
        return out
    return [ok(f"torch {torch['version']} built for CUDA {torch['cuda']}")]


def cuda_rules(facts: dict, doctor_findings: list[DoctorFinding], ops: list[str]) -> list[Finding]:
    """The doctor's cuda findings that matter for a build (torch vs nvcc, toolkits), plus nvcc presence."""
    out = []
    for f in doctor_findings:
        if f["message"].startswith("gcc "):
            continue  # judged below with the compiler nvcc will really use
        if f["status"] == FAIL:
            out.append(fail(f["message"], f.get("fix", "")))
        elif f["status"] == WARN and "no nvcc" not in f["message"]:
            out.append(warn(f["message"], f.get("fix", "")))
    torch_cuda = (facts.get("torch") or {}).get("cuda")
    cuda_ops = [op for op in ops if op not in HOST_OPS]
    if not facts.get("nvcc") and torch_cuda and cuda_ops:
        out.append(
            fail(
                f"no nvcc on PATH: {', '.join(cuda_ops)} cannot be compiled",
                f"install the CUDA {torch_cuda} toolkit and put its bin/ first on PATH (or set CUDA_HOME to it)",
            )
        )
    return out


def gcc_rule(
    nvcc: dict | None, toolkits: list[dict], compiler: str | None, how: str, version: str | None, installed: list[str]
) -> list[Finding]:
    """The host compiler nvcc will call must not be newer than its host_config.h allows."""
    if not nvcc or not nvcc.get("version"):
        return []
    if not compiler or not version:
        return [
            fail(
                f"no C/C++ compiler found for nvcc {nvcc['version']} ({how})",
                "install gcc and g++ (apt-get install build-essential)",
            )
        ]
    home = nvcc.get("home")
    tk = next((t for t in toolkits if home and t.get("path", "").rstrip("/") == home.rstrip("/")), None)
    limit, source = gcc_limit(nvcc, tk)
    major = vtuple(version, 1)
    if not limit or not major:
        return [warn(f"cannot tell which gcc nvcc {nvcc['version']} accepts; using {compiler} {version}")]
    if major[0] <= limit:
        return [ok(f"host compiler {compiler} {version} ({how}); nvcc {nvcc['version']} accepts up to gcc {limit}")]
    installed = [g for g in installed if (m := re.search(r"gcc-(\d+)$", g)) and int(m.group(1)) <= limit]
    good = installed[0] if installed else f"/usr/bin/gcc-{limit}"
    gxx = good.replace("gcc", "g++")
    bin_dir = f"{home}/bin" if home else "<toolkit>/bin"
    fix = (
        f"use a gcc <= {limit}"
        + ("" if installed else f" (apt-get install gcc-{limit} g++-{limit})")
        + f": export CUDA_HOST_COMPILER={good} (clusterdoc passes it to nvcc as NVCC_CCBIN), "
        f"or export CC={good} CXX={gxx}, "
        f"or link it into the toolkit: ln -s {good} {bin_dir}/gcc && ln -s {gxx} {bin_dir}/g++"
    )
    return [
        fail(
            f"{compiler} is gcc {version} ({how}), newer than nvcc {nvcc['version']} accepts "
            f"(gcc <= {limit}, from {source}): CUDA compiles stop with 'unsupported GNU version'",
            fix,
        )
    ]


def aio_rule(links: bool, detail: str, hint: tuple[str, str]) -> list[Finding]:
    command, package = hint
    if links:
        return [ok("libaio links (async_io can be built)")]
    return [
        fail(
            "--aio: libaio is missing: a test program calling io_submit does not compile/link with -laio"
            + (f" ({detail})" if detail else ""),
            f"{command} (Debian/Ubuntu: libaio-dev; RHEL/Rocky/Fedora/SUSE: libaio-devel)",
        )
    ]


def ninja_rule(ninja: str | None, python: str) -> list[Finding]:
    if ninja:
        return [ok(f"ninja: {ninja}")]
    return [
        fail(
            "ninja is not on PATH nor in the build environment",
            f"{python} -m pip install ninja (or apt-get install ninja-build)",
        )
    ]
