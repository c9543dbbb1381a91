"""A too-new gcc, predicted by clusterdoc from the real crt/host_config.h and then confirmed by the real nvcc.

The headers are CUDA 11.8's, from the registry's nvidia-cuda-nvcc-cu11 and nvidia-cuda-runtime-cu11 (cached in
$CLUSTERDOC_CACHE, default <repo>/.cache, ~50 MB): their host_config.h stops any gcc newer than 11, and this
machine's gcc is Debian 12's gcc 12. The cu11 wheel ships no nvcc binary (only ptxas), so the nvcc here is a real
one of another release (this machine's CUDA 13.0, else the registry's nvidia-cuda-nvcc) reading those headers
through its nvcc.profile, the way pip's CUDA wheels are laid out (bin/nvcc + nvcc.profile, INCLUDES pointing at
the headers). Its version says 13.x, whose release-notes limit (gcc 15) would let gcc 12 pass: only reading the
header it really includes predicts the failure.
"""

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("CLUSTERDOC_CACHE") or REPO / ".cache")
CU11 = ["nvidia-cuda-nvcc-cu11==11.8.89", "nvidia-cuda-runtime-cu11==11.8.89"]
UNSUPPORTED = "#error -- unsupported GNU version! gcc versions later than 11 are not supported!"

pytestmark = pytest.mark.slow


def pip_target(name: str, specs: list[str]) -> Path:
    """specs installed (no dependencies) into CACHE/name, once; later runs reuse the folder."""
    target = CACHE / name
    done = target / ".installed"
    if done.exists() and done.read_text() == " ".join(specs):
        return target
    shutil.rmtree(target, ignore_errors=True)
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), *specs],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        pytest.skip(f"cannot install {' '.join(specs)}: {p.stderr.strip()[-300:]}")
    done.write_text(" ".join(specs))
    return target


def real_nvcc() -> Path:
    """An nvcc binary (not a wrapper script): a toolkit's under /usr/local, else the registry's."""
    for cand in sorted(glob.glob("/usr/local/cuda-*/bin/nvcc")):
        with open(cand, "rb") as f:
            if f.read(4) == b"\x7fELF":
                return Path(cand)
    return pip_target("cuda-nvcc-cu13", ["nvidia-cuda-nvcc"]) / "nvidia" / "cu13" / "bin" / "nvcc"


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory) -> tuple[Path, Path]:
    """(bin dir of an nvcc whose headers are CUDA 11.8's, that host_config.h)."""
    if shutil.which("gcc") is None or int(gcc_version().split(".")[0]) < 12:
        pytest.skip("needs gcc 12 or newer (Debian 12's gcc 12)")
    cu11 = pip_target("cuda-cu11-11.8.89", CU11) / "nvidia"
    nvcc = real_nvcc()
    top = nvcc.parent.parent
    bindir = tmp_path_factory.mktemp("cuda-11.8-headers") / "bin"
    bindir.mkdir()
    (bindir / "nvcc").symlink_to(nvcc)
    (bindir / "nvcc.profile").write_text(
        f"TOP = {top}\n"
        "CICC_PATH = $(TOP)/nvvm/bin\n"
        "NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice\n"
        "PATH += $(CICC_PATH):$(TOP)/bin:\n"
        f'INCLUDES += "-I{cu11}/cuda_runtime/include" "-I{cu11}/cuda_nvcc/include" $(_SPACE_)\n'
    )
    return bindir, cu11 / "cuda_nvcc" / "include" / "crt" / "host_config.h"


def gcc_version() -> str:
    return subprocess.check_output(["gcc", "-dumpfullversion", "-dumpversion"], text=True).strip()


def clusterdoc(args: list, bindir: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    for var in ("CC", "CXX", "NVCC_CCBIN", "CUDA_HOST_COMPILER", "CUDA_HOME"):
        env.pop(var, None)
    p = subprocess.run([sys.executable, "-m", "clusterdoc", *args], capture_output=True, text=True, env=env,
                       timeout=300, cwd=tmp_path)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_too_new_gcc_is_predicted_then_confirmed_by_nvcc(toolkit, tmp_path):
    bindir, header = toolkit
    # 1. predicted, before anything is compiled: by the doctor and by build-wheel's preflight
    check = clusterdoc(["check", "--local"], bindir, tmp_path)
    assert check.returncode == 1, check.stdout
    assert (f"[FAIL] cuda localhost: gcc {gcc_version()} is too new for nvcc 13" in check.stdout
            and f"(newest it accepts: gcc 11, from {header})" in check.stdout), check.stdout
    assert "fix: install gcc-11 g++-11 and use it" in check.stdout
    build = clusterdoc(["build-wheel", "--arch-list", "8.0;9.0", "--ops", "cpu_adam", "--dry-run",
                        "--out", tmp_path / "dist", "--cache", CACHE], bindir, tmp_path)
    assert build.returncode == 1, build.stdout
    assert "newer than nvcc 13" in build.stdout and f"(gcc <= 11, from {header})" in build.stdout, build.stdout
    assert "export CUDA_HOST_COMPILER=/usr/bin/gcc-11" in build.stdout
    assert not (tmp_path / "dist").exists()

    # 2. confirmed: the real nvcc stops on that header's own #error, with the same gcc
    (tmp_path / "k.cu").write_text("__global__ void k(float *x) { x[0] = 1.0f; }\n")
    nvcc = subprocess.run([str(bindir / "nvcc"), "-c", "k.cu", "-o", "k.o"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert nvcc.returncode != 0
    assert f"{header}:" in nvcc.stderr and UNSUPPORTED in nvcc.stderr, nvcc.stderr
    assert not (tmp_path / "k.o").exists()
