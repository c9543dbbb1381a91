"""`clusterdoc build-wheel` for real: DeepSpeed's CPU-side ops built from the pinned sdist, installed on the
test cluster's nodes and loaded there; the arch list derived from the GPUs planted on the nodes.

Each node gets its own python: a venv layered over the project's venv (a .pth file), so it has the real
torch 2.13.0 and DeepSpeed's runtime requirements, while `pip install` on the node writes into that node's
own site-packages and never into the project's venv. The sdist is downloaded once into $CLUSTERDOC_CACHE
(default <repo>/.cache) and reused by every later run.
"""

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CACHE = os.environ.get("CLUSTERDOC_CACHE") or str(REPO / ".cache")

A100 = {"model": "NVIDIA A100-SXM4-80GB", "capability": "8.0", "memory_mib": 81920, "count": 2}
H100 = {"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 8}
L4 = {"model": "NVIDIA L4", "capability": "8.9", "memory_mib": 23034, "count": 1}
V100 = {"model": "Tesla V100-SXM2-32GB", "capability": "7.0", "memory_mib": 32768, "count": 4}


NODE_CHECK = """
import json, os, torch
from deepspeed.ops.adam import cpu_adam_op as op
from deepspeed.ops import utils_op
print(op.__file__)
op.create_adam(0, 0.1, 0.9, 0.999, 1e-8, 0.0, True, False)
p, g, m, v = torch.ones(4), torch.ones(4), torch.zeros(4), torch.zeros(4)
op.adam_update(0, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, True, p, g, m, v)
print([round(x, 4) for x in p.tolist()])
import deepspeed
print(json.load(open(os.path.join(os.path.dirname(deepspeed.__file__), "clusterdoc-wheel.json")))["arch_list"])
"""


def build_wheel(*args, timeout=1700):
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "build-wheel", *map(str, args)], capture_output=True,
                       text=True, timeout=timeout, cwd=REPO)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def layered_venv(path: Path, base_python: str = sys.executable) -> Path:
    """A venv whose python also sees the packages of `base_python`'s venv (default the project's: torch, pip,
    DeepSpeed's requirements)."""
    def purelib(python) -> str:
        return subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()

    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    # addsitedir, not a bare path: the base venv's own .pth files count too (a venv layered over another)
    (Path(purelib(path / "bin" / "python")) / "clusterdoc_base_venv.pth").write_text(
        f"import site; site.addsitedir({purelib(base_python)!r})\n")
    return path / "bin" / "python3"


@pytest.mark.cluster
def test_arch_nvcc_cannot_build_is_refused_naming_the_node(cluster, tmp_path):
    if not os.path.exists("/usr/local/cuda-13.0/bin/nvcc"):
        pytest.skip("needs this machine's CUDA 13.0 nvcc (sm_70 was dropped in 13.0)")
    with cluster.planted({"node3": {"gpus": [V100]}}):
        p = build_wheel("-w", ",".join(n.name for n in cluster.nodes), "--ssh-config", cluster.ssh_config,
                        "--dry-run", "--out", tmp_path / "dist", "--cache", CACHE)
    assert p.returncode == 1, p.stdout
    assert "arch list: 7.0;8.0+PTX  (from nodes; GPUs: node3: 7.0; node1, node2, node4: 8.0)" in p.stdout
    assert "cannot build 7.0 (node3)" in p.stdout and "BF16" in p.stdout
    assert not (tmp_path / "dist").exists()


@pytest.mark.cluster
def test_unreachable_node_stops_before_building(cluster, tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node1\nnode2\n127.0.0.1:1\n")  # nothing listens on the last one's ssh port
    p = build_wheel("--hostfile", hostfile, "--ssh-config", cluster.ssh_config, "--timeout", 5,
                    "--out", tmp_path / "dist", "--cache", CACHE)
    assert p.returncode == 1
    assert "FAIL  127.0.0.1" in p.stdout and "every node must answer" in p.stdout
    assert not (tmp_path / "dist").exists()


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.timeout(1800)  # about 3 min on 2 idle cores; far more when the machine is shared
def test_build_install_and_load_on_every_node(cluster, tmp_path):
    names = [n.name for n in cluster.nodes]
    gpus = {names[0]: [A100], names[1]: [A100, L4], names[2]: [H100]}
    # the last two nodes share one environment, as nodes sharing an NFS home do
    venv_of = {name: names[2] if i == 3 else name for i, name in enumerate(names)}
    plant = {}
    for name in names:
        venv = tmp_path / f"venv-{venv_of[name]}"
        plant[name] = {"python": str(venv / "bin" / "python3") if venv.exists() else str(layered_venv(venv)),
                       "torch": None, "gpus": gpus.get(name, [A100])}
    out = tmp_path / "dist"
    with cluster.planted(plant):
        p = build_wheel("--hostfile", cluster.hostfile(), "--ssh-config", cluster.ssh_config, "--install",
                        "--out", out, "--cache", CACHE)
        assert p.returncode == 0, p.stdout + p.stderr
        # the prebuilt ops load with the node's own torch, and one real Adam step runs in the compiled kernel
        loaded = {}
        for name in names:
            r = cluster.ssh(name, "python3 -", input=NODE_CHECK, timeout=180)
            loaded[name] = (r.returncode, r.stdout.strip(), r.stderr[-500:])

    manifest = json.loads((out / "clusterdoc-wheel.json").read_text())
    assert manifest["arch_list"] == "8.0;8.9;9.0+PTX"  # the planted GPUs, sorted, +PTX on the highest
    assert manifest["arch_source"] == "nodes"
    assert manifest["gpus"][names[2]] == ["9.0"] * 8
    assert manifest["ops"] == ["cpu_adam", "utils"] and manifest["accelerator"] == "cuda"
    assert manifest["deepspeed_version"] == "0.19.8" and manifest["torch"]["version"].startswith("2.13")
    wheel = out / manifest["wheel"]
    with zipfile.ZipFile(wheel) as z:
        inner = json.loads(z.read("deepspeed/clusterdoc-wheel.json"))
        sos = [n for n in z.namelist() if n.endswith(".so")]
    assert inner == dict(manifest, sha256=None)
    assert any("/adam/cpu_adam_op." in s for s in sos) and any(s.startswith("deepspeed/ops/utils_op.") for s in sos)
    assert "installed and imported on all 4 node(s)" in p.stdout
    for name in names:
        row = next(l for l in p.stdout.splitlines() if l.startswith(name + " "))
        assert f"venv-{venv_of[name]}/bin/python3" in row and "cpu_adam,utils" in row
        assert ("pip skipped" in row) == (name == names[3]), row  # the shared one was installed once
        code, text, err = loaded[name]
        assert code == 0, (name, err)
        where, step, embedded = text.splitlines()[-3:]
        assert where.startswith(str(tmp_path / f"venv-{venv_of[name]}") + "/"), where  # not the base venv
        assert step == "[0.9, 0.9, 0.9, 0.9]" and embedded == "8.0;8.9;9.0+PTX"
    log = (out / "build.log").read_text()
    assert "Install Ops=" in log and "'utils': 1" in log and "'cpu_adam': 1" in log
