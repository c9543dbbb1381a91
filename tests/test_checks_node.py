"""Per-node checks (kernel, cuda, arch, mesh, mpi) judged from fact fixtures alone: no SSH.

Each planted-problem fixture must give exactly its one problem; the healthy node none."""

import json
from pathlib import Path

import pytest

from clusterdoc.checks import FAIL, OK, WARN, arch, cuda, kernel, mpi, ssh

FACTS = Path(__file__).parent / "facts"
HEAD = {"path": "/usr/bin/mpirun", "flavour": "mpich", "version": "4.0.2"}


def load(name):
    return json.loads((FACTS / f"{name}.json").read_text())


def judge(facts, arch_list=None):
    out = []
    out += ssh.check("n1", {"status": "ok", "elapsed": 0.2}, facts)
    out += ssh.check_mesh("n1", facts)
    out += mpi.check("n1", facts, HEAD)
    out += kernel.check("n1", facts)
    out += cuda.check("n1", facts)
    out += arch.check("n1", facts, arch_list, arch.needed_arch_list({"n1": facts}))
    return out


def problems(findings):
    return [(f["check"], f["status"]) for f in findings if f["status"] != OK]


def test_healthy_node_is_all_ok():
    findings = judge(load("healthy"))
    assert problems(findings) == []
    checks = {f["check"] for f in findings}
    assert checks == {"ssh", "mesh", "mpi", "kernel", "cuda", "arch"}
    assert all(f["node"] == "n1" and f["message"] for f in findings)


@pytest.mark.parametrize("fixture, expected, words", [
    ("old_kernel", [("kernel", FAIL)], ["5.4.0-150-generic", "older than 5.5", "hang"]),
    ("gvisor", [("kernel", WARN)], ["gVisor", "cannot be judged"]),
    ("nvcc_mismatch", [("cuda", FAIL)], ["nvcc 11.8", "torch's CUDA 12.1", "major"]),
    ("path_ld_disagree", [("cuda", FAIL)], ["PATH (nvcc) -> /usr/local/cuda-12.1",
                                            "LD_LIBRARY_PATH (libcudart) -> /usr/local/cuda-11.8"]),
    ("gcc_too_new", [("cuda", FAIL)], ["gcc 13.2.0", "gcc 12", "host_config.h"]),
    ("gcc_too_new_no_header", [("cuda", FAIL)], ["gcc 13.2.0", "gcc 12", "release notes"]),
    ("h100_outside_arch_list", [("arch", FAIL)], ["9.0", "TORCH_CUDA_ARCH_LIST=8.0;8.6", "no kernel image"]),
    ("mesh_broken", [("mesh", FAIL)], ["ssh to gpu03 fails", "Permission denied"]),
    ("old_driver", [("cuda", FAIL)], ["470.82.01", "12.1", "530.30.02"]),
    ("cpu_torch_on_gpu", [("cuda", FAIL)], ["CPU-only", "2 GPU"]),
    ("nvidia_smi_hangs", [("arch", FAIL)], ["nvidia-smi did not answer"]),
    ("arch_list_volta", [("arch", WARN)], ["7.0", "BF16"]),
    ("arch_list_named", [("arch", FAIL)], ["Ampere", "crashes"]),  # torch takes Ampere (8.0;8.6+PTX): it covers 8.0
    ("arch_list_unbuildable", [("arch", FAIL)], ["nvcc 12.1 cannot build 10.0"]),
])
def test_each_planted_problem_gives_exactly_its_finding(fixture, expected, words):
    findings = judge(load(fixture))
    assert sorted(problems(findings)) == sorted(expected)
    bad = [f for f in findings if f["status"] != OK]
    text = " | ".join(f["message"] for f in bad)
    for w in words:
        assert w in text
    assert all(f["fix"] for f in bad), "every problem comes with a fix"


def test_fixes_are_concrete():
    f = [x for x in judge(load("path_ld_disagree")) if x["status"] == FAIL][0]
    assert f["fix"] == ("export PATH=/usr/local/cuda-12.1/bin:$PATH; "
                        "export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64:$LD_LIBRARY_PATH; "
                        "export CUDA_HOME=/usr/local/cuda-12.1")
    f = [x for x in judge(load("nvcc_mismatch")) if x["status"] == FAIL][0]
    assert "export PATH=/usr/local/cuda-12.1/bin:$PATH" in f["fix"]  # the toolkit matching torch
    f = [x for x in judge(load("h100_outside_arch_list")) if x["status"] == FAIL][0]
    assert 'export TORCH_CUDA_ARCH_LIST="9.0+PTX"' in f["fix"]
    f = [x for x in judge(load("gcc_too_new")) if x["status"] == FAIL][0]
    assert "gcc-12" in f["fix"]


def test_arch_list_flag_overrides_the_nodes_variable():
    facts = load("h100_outside_arch_list")
    assert problems(judge(facts, arch_list="8.0;9.0")) == []
    assert problems(judge(load("healthy"), arch_list="8.6")) == [("arch", FAIL)]


def test_ptx_covers_newer_gpu_with_a_warning():
    facts = load("h100_outside_arch_list")
    facts["env"]["TORCH_CUDA_ARCH_LIST"] = "8.0+PTX"
    assert problems(judge(facts)) == [("arch", WARN)]


def test_torch_without_kernels_for_the_gpu():
    facts = load("h100_outside_arch_list")
    facts["env"]["TORCH_CUDA_ARCH_LIST"] = "9.0"
    facts["torch"]["arch_list"] = ["sm_70", "sm_80"]
    bad = [f for f in judge(facts) if f["status"] != OK]
    assert [(f["check"], f["status"]) for f in bad] == [("arch", FAIL)]
    assert "no kernels for 9.0" in bad[0]["message"]


def test_minor_cuda_mismatch_is_tolerated_like_deepspeed():
    facts = load("healthy")
    facts["nvcc"]["version"] = "12.4"
    assert problems(judge(facts)) == []
    facts["torch"]["cuda"] = "13.0"
    facts["nvcc"]["version"] = "13.1"
    assert ("cuda", FAIL) in problems(judge(facts))


def test_mpi_flavour_mismatch_with_head_warns():
    facts = load("healthy")
    facts["mpi"]["mpirun"] = {"path": "/usr/bin/mpirun", "flavour": "openmpi", "version": "4.1.4"}
    assert problems(judge(facts)) == [("mpi", WARN)]
    facts = load("healthy")
    facts["mpi"]["mpi4py"] = {"version": "4.0.0", "library": "Open MPI v4.1.4"}
    assert problems(judge(facts)) == [("mpi", WARN)]


def test_mpi4py_mismatch_fix_names_the_matching_mpirun():
    head = {"path": "/usr/bin/mpirun", "flavour": "openmpi", "version": "4.1.4"}
    facts = load("healthy")
    facts["mpi"]["mpi4py"] = {"version": "4.1.2", "library": "MPICH Version:      5.0.2"}
    (warn,) = [f for f in mpi.check("n1", facts, head) if f["status"] == WARN and "mpi4py" in f["message"]]
    assert warn["fix"].startswith("use the mpirun of mpi4py's MPI: --mpirun mpirun.mpich")


def test_unreachable_node_gives_one_ssh_failure_with_fix():
    for status in ("refused", "timeout", "auth", "unknown_host_key", "changed_host_key", "unreachable", "no_route"):
        out = ssh.check("n7", {"status": status, "message": f"n7: {status}"}, None)
        assert [(f["check"], f["status"]) for f in out] == [("ssh", FAIL)]
        assert out[0]["fix"] and "NODE" not in out[0]["fix"]
        if status in ("timeout", "no_route"):  # an address where nothing answers: not a name to look up
            assert "DNS" not in out[0]["fix"]


def test_local_machine_facts_tell_the_truth():
    facts = load("local_machine")  # captured from `probe.gather()` on the dev machine
    findings = judge(facts)
    assert problems(findings) == []
    text = " | ".join(f["message"] for f in findings)
    assert "CPU-only" in text and "nvcc 13.0" in text and "/usr/local/cuda-13.0" in text and "gcc 12" in text
    assert "no GPU" in text


def test_the_heads_mpi_on_the_node_is_what_counts():
    facts = load("healthy")
    facts["mpi"]["mpirun"] = {"path": "/usr/bin/mpirun", "flavour": "openmpi", "version": "4.1.4"}
    facts["mpi"]["head_mpirun"] = {"path": "/usr/bin/mpirun.mpich", "flavour": "mpich", "version": "4.0.2"}
    assert problems(judge(facts)) == []  # both installed: the head's MPICH is here too
    facts["mpi"]["head_mpirun"] = {"path": "/usr/bin/mpirun.mpich", "flavour": None, "version": None, "missing": True}
    out = [f for f in judge(facts) if f["status"] != OK]
    assert [(f["check"], f["status"]) for f in out] == [("mpi", WARN)] and "not on this node" in out[0]["message"]


def test_cuda_home_of_links_to_the_nvcc_in_use_is_not_an_unknown_toolkit():
    """pip's nvcc (nvidia-cuda-nvcc) with CUDA_HOME a folder of symlinks whose bin/ is that nvcc's."""
    facts = load("healthy")
    home = "/venv/cuda"
    facts.update(cuda_home=home, nvcc=dict(facts["nvcc"], path=f"{home}/bin/nvcc",
                                           realpath="/venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc",
                                           home="/venv/lib/python3.11/site-packages/nvidia/cu13"))
    assert not [f for f in cuda.check("n1", facts) if "not one of the toolkits" in f["message"]]
    facts["cuda_home"] = "/elsewhere/cuda"
    assert [f for f in cuda.check("n1", facts) if "not one of the toolkits" in f["message"]]


def test_a_driver_is_judged_against_torchs_cuda_in_one_place():
    """tables.driver_short_of: the cuda check (nvidia-smi's driver) and the nccl check (the host's kernel module
    seen from a container) judge a driver by the same rule (shared/reference.md §2), in their own words."""
    from clusterdoc.tables import driver_short_of

    assert driver_short_of("470.239.06", "12.1") == ("too old", "530.30.02")  # below 12.x's floor
    assert driver_short_of("525.60.13", "12.4") == ("compat", "550.54.14")  # minor-version compatibility only
    assert driver_short_of("550.54.14", "12.4") is None and driver_short_of("999.1", "12.4") is None
    assert driver_short_of("100.0", "9.9") is None  # a CUDA the tables do not know: nothing said
    facts = {"torch": {"version": "2.4.0", "cuda": "12.4"}, "driver": "525.60.13"}
    (warn,) = [f for f in cuda.check("n1", facts) if "driver" in f["message"]]
    assert warn["status"] == WARN and "below CUDA 12.4's 550.54.14" in warn["message"]
    (fail,) = [f for f in cuda.check("n1", dict(facts, driver="470.239.06")) if "driver" in f["message"]]
    assert fail["status"] == FAIL and "needs >= 550.54.14" in fail["message"]
