"""`clusterdoc check --local` tells the truth about this machine; bad input exits 2 without a traceback."""

import ast
import json
import os
import re
import shutil
import subprocess
import sys

import pytest


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "check", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def local_doc():
    p = run("--local", "--json")
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def test_local_facts_match_this_machine(local_doc):
    facts = local_doc["nodes"][0]["facts"]
    assert local_doc["nodes"][0]["ssh"]["status"] == "local"
    assert facts["kernel"]["release"] == open("/proc/sys/kernel/osrelease").read().strip()
    gcc = shutil.which("gcc")
    if gcc:
        real = subprocess.run([gcc, "-dumpfullversion", "-dumpversion"], stdout=subprocess.PIPE, text=True).stdout
        assert facts["gcc"]["version"] == real.strip()
    nvcc = shutil.which("nvcc")
    if nvcc:
        out = subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE, text=True).stdout
        assert facts["nvcc"]["version"] == re.search(r"release (\d+\.\d+)", out).group(1)
    else:
        assert facts["nvcc"] is None
    import torch

    assert facts["torch"]["version"] == torch.__version__ and facts["torch"]["cuda"] == torch.version.cuda
    assert bool(facts["gpus"]) == bool(shutil.which("nvidia-smi"))


@pytest.mark.skipif(not os.path.isdir("/usr/local/cuda-13.0"), reason="the dev machine's CUDA 13.0 toolkit is not here")
def test_local_report_on_the_dev_machine(local_doc):
    """The dev machine: kernel 6.x, nvcc 13.0 in /usr/local/cuda-13.0 (via a wrapper on PATH), gcc 12,
    CPU-only torch, no GPU -- and all of it ok."""
    facts = local_doc["nodes"][0]["facts"]
    assert facts["nvcc"]["home"] == "/usr/local/cuda-13.0" and facts["nvcc"]["version"] == "13.0"
    assert facts["toolkits"][0]["gcc_max"] == 15
    assert facts["gcc"]["version"].startswith("12.")
    assert facts["torch"]["cuda"] is None and facts["gpus"] == []
    # kernel, toolkit, compiler, torch and GPU facts are all fine here; mpi depends on which MPI packages
    # are installed at the moment (Open MPI's mpirun beside an MPICH-bound mpi4py is rightly a warning).
    bad = [f for f in local_doc["findings"] if f["status"] != "ok" and f["check"] != "mpi"]
    assert bad == []
    text = run("--local", "-v").stdout
    assert "CPU-only build; no GPU on this node" in text
    assert "nvcc 13.0 (/usr/local/bin/nvcc -> /usr/local/cuda-13.0)" in text or \
           "nvcc 13.0 (/usr/local/cuda-13.0/bin/nvcc)" in text
    assert "gcc 12" in text and "no GPU" in text


@pytest.mark.parametrize("args, words", [
    (["--local", "--checks", "ssh,bogus"], "unknown check(s) bogus"),
    (["--local", "--skip", "kernal"], "unknown check(s) kernal"),
    (["--local", "-w", "node1"], "--local checks this machine only"),
    (["/nonexistent/hostfile"], "does not exist"),
    (["--local", "--arch-list", "Ampere"], "not X.Y or X.Y+PTX"),
    (["--local", "--timeout", "0"], "--timeout must be above 0"),
])
def test_usage_errors_exit_2_without_traceback(args, words):
    p = run(*args, timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert words in p.stderr and "Traceback" not in p.stderr


OPENMPI_LIB = "/usr/lib/x86_64-linux-gnu/libmpi.so.40"  # Debian's Open MPI (openmpi-bin)


@pytest.mark.skipif(not (os.path.exists(OPENMPI_LIB) and shutil.which("mpirun.openmpi")),
                    reason="Debian's Open MPI is not installed: apt-get install openmpi-bin")
def test_a_healthy_open_mpi_node_passes():
    """The venv's real mpi4py (its wheel loads whichever libmpi it is told) on Debian's Open MPI: its library
    version string ends in a NUL byte, which is the C string's end, not a malformed value."""
    env = dict(os.environ, MPI4PY_LIBMPI=OPENMPI_LIB)
    raw = subprocess.run([sys.executable, "-c", "from mpi4py import MPI; print(ascii(MPI.Get_library_version()))"],
                         env=env, capture_output=True, text=True, timeout=60).stdout.strip()
    assert raw.startswith("'Open MPI v") and raw.endswith("\\x00'"), raw  # what the node really says
    library = ast.literal_eval(raw).rstrip("\0")
    docs = []
    for args in (["--mpirun", "mpirun.openmpi"], ["--skip", "mpi"]):  # mpi judged; mpi skipped (submit's preflight)
        p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--local", "--json", "--checks", "ssh,mpi",
                            *args], env=env, capture_output=True, text=True, timeout=120)
        doc = json.loads(p.stdout)
        docs.append(doc)
        facts = doc["nodes"][0]["facts"]
        assert facts["malformed"] == [] and facts["mpi"]["mpi4py"]["library"] == library
        assert [f for f in doc["findings"] if f["status"] != "ok"] == [] and p.returncode == 0, (args, doc["findings"])
    mpi = [f["message"] for f in docs[0]["findings"] if f["check"] == "mpi"]
    assert f"mpi4py {facts['mpi']['mpi4py']['version']} ({library})" in mpi, mpi
    assert {f["check"] for f in docs[1]["findings"]} == {"ssh"}
