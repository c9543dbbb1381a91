"""`clusterdoc build-wheel` with a real nvcc: DeepSpeed's fused_adam CUDA op compiled on this GPU-less machine, the
architectures read back from the binary, and a wheel that cannot run on a node's GPU refused before install.

The environment is scripts/cuda_venv.sh's: the torch 2.15.0 venv of the torch-range tests (a CUDA 13.2 build)
plus pip's nvcc of that CUDA from the package registry (`make test-cuda-build` makes it and runs this file with CLUSTERDOC_CUDA_PYTHON set;
without it these tests skip). Two real builds, one per module: "8.0;9.0" (with +PTX on 9.0, as build-wheel
puts it) and "8.0" with --no-ptx, about 70 s each on 2 idle cores. Each compiles from a fresh source tree by
design (stale objects never leak into a wheel), so the second shares only the cached sdist and the build
requirements the first installed.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clusterdoc import fatbin
from tests.test_wheel_build import A100, CACHE, H100, layered_venv

REPO = Path(__file__).resolve().parent.parent
FUSED_ADAM = "deepspeed/ops/adam/fused_adam_op.cpython-"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cuda_python():
    python = os.environ.get("CLUSTERDOC_CUDA_PYTHON")
    if not python:
        pytest.skip("needs the CUDA build venv: make test-cuda-build (scripts/cuda_venv.sh) sets CLUSTERDOC_CUDA_PYTHON")
    return Path(os.path.abspath(python))  # its folder, not the interpreter a venv links to


def cuda_env(python: Path) -> dict:
    home = python.parent.parent / "cuda"  # scripts/cuda_venv.sh's folder of symlinks into pip's nvidia/cu13
    # PYTHONPATH: this checkout's clusterdoc, whichever checkout the venv's editable install points at
    return dict(os.environ, CUDA_HOME=str(home), PATH=f"{home}/bin:{os.environ['PATH']}", PYTHONPATH=str(REPO))


def build(python: Path, out: Path, *args) -> subprocess.CompletedProcess:
    p = subprocess.run(
        [str(python), "-m", "clusterdoc", "build-wheel", "--ops", "fused_adam", "--out", str(out), "--cache", CACHE,
         *args],
        capture_output=True, text=True, timeout=1700, cwd=REPO, env=cuda_env(python),
    )
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 0, p.stdout + p.stderr + (out / "build.log").read_text(errors="replace")[-3000:]
    return p


def fused_adam_archs(out: Path) -> tuple[dict, dict]:
    manifest = json.loads((out / "clusterdoc-wheel.json").read_text())
    (path, archs), = manifest["binary_archs"].items()  # the one CUDA extension
    assert path.startswith(FUSED_ADAM) and manifest["extensions"] == {"fused_adam": path}
    return manifest, archs


@pytest.fixture(scope="module")
def built_80_90(cuda_python, tmp_path_factory):
    out = tmp_path_factory.mktemp("cuda-80-90")
    return out, build(cuda_python, out, "--arch-list", "8.0;9.0")


@pytest.fixture(scope="module")
def built_80(cuda_python, tmp_path_factory):
    out = tmp_path_factory.mktemp("cuda-80")
    return out, build(cuda_python, out, "--arch-list", "8.0", "--no-ptx")


@pytest.mark.timeout(1800)
def test_real_build_for_80_and_90_lists_both_from_the_binary(built_80_90, cuda_python, tmp_path):
    out, p = built_80_90
    manifest, archs = fused_adam_archs(out)
    assert archs == {"sass": ["sm_80", "sm_90"], "ptx": ["compute_90"]}
    torch_version, torch_cuda = subprocess.run(
        [str(cuda_python), "-W", "ignore", "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
        capture_output=True, text=True, check=True).stdout.split()
    assert manifest["arch_list"] == "8.0;9.0+PTX" and manifest["nvcc"]["version"] == torch_cuda  # nvcc = torch's CUDA
    assert manifest["torch"] == {**manifest["torch"], "version": torch_version, "cuda": torch_cuda}
    assert "  archs fused_adam_op: SASS sm_80, sm_90; PTX compute_90 (read from the binary)" in p.stdout
    assert "WARN" not in p.stdout.split("built ")[-1]  # PTX on board: nothing to flag for newer GPUs
    # the build log shows what nvcc was really asked for, and our header reading agrees with cuobjdump's
    log = (out / "build.log").read_text(errors="replace")
    assert "-gencode=arch=compute_80,code=sm_80" in log and "-gencode=arch=compute_90,code=compute_90" in log
    with zipfile.ZipFile(out / manifest["wheel"]) as z:
        so = tmp_path / "fused_adam_op.so"
        so.write_bytes(z.read(next(n for n in z.namelist() if n.startswith(FUSED_ADAM))))
    cuobjdump = cuda_python.parent.parent / "cuda" / "bin" / "cuobjdump"
    assert fatbin.fatbin_archs(str(so)) == fatbin.cuobjdump_archs(str(so), str(cuobjdump)) == archs


@pytest.mark.timeout(1800)
def test_real_build_for_80_without_ptx_is_flagged_for_newer_gpus(built_80):
    out, p = built_80
    manifest, archs = fused_adam_archs(out)
    assert archs == {"sass": ["sm_80"], "ptx": []} and manifest["arch_list"] == "8.0"
    assert "  WARN  the wheel has no PTX and its newest SASS is sm_80: GPUs newer than that (up to sm_" in p.stdout


@pytest.mark.cluster
@pytest.mark.timeout(1800)
def test_80_wheel_refused_on_an_h100_node_and_installed_on_a100_nodes(built_80, cuda_python, cluster, tmp_path):
    out, _ = built_80
    wheel = next(out.glob("deepspeed-*.whl"))
    names = [n.name for n in cluster.nodes][:3]
    # each node's own python over the build's venv: the same torch, and DeepSpeed's requirements the build installed
    pythons = {name: str(layered_venv(tmp_path / f"venv-{name}", cuda_python)) for name in names}

    def install(gpus: dict) -> subprocess.CompletedProcess:
        plant = {name: {"python": pythons[name], "torch": None, "gpus": gpus[name]} for name in names}
        with cluster.planted(plant):
            # the project's python, which has no cuobjdump: the fatbin headers are read by clusterdoc itself
            return subprocess.run(
                [sys.executable, "-m", "clusterdoc", "build-wheel", "--install", "--wheel", str(wheel),
                 "-w", ",".join(names), "--ssh-config", cluster.ssh_config],
                capture_output=True, text=True, timeout=900, cwd=REPO,
            )

    refused = install({names[0]: [A100], names[1]: [A100], names[2]: [H100]})
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert (f"  FAIL  {names[2]}: H100 (sm_90) but the wheel has sm_80 only and no PTX: "
            "rebuild with --arch-list '8.0;9.0'") in refused.stdout.splitlines()
    assert "nothing was installed on any node" in refused.stdout
    for name in names:  # not one node got it
        assert not list((tmp_path / f"venv-{name}").glob("lib/python*/site-packages/deepspeed")), name

    accepted = install({name: [A100] for name in names})
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert f"installed and imported on all {len(names)} node(s)" in accepted.stdout
    for name in names:
        assert list((tmp_path / f"venv-{name}").glob("lib/python*/site-packages/deepspeed/ops/adam/fused_adam_op.*"))
