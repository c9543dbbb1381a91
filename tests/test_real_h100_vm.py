"""A real, healthy H100 VM (tests/facts/real_h100_vm, captured on real hardware): no finding at all."""

import json
from pathlib import Path

import clusterdoc
from clusterdoc import probe
from clusterdoc.checks import arch, cuda

HERE = Path(__file__).parent / "facts" / "real_h100_vm"


def test_the_real_h100_vm_gets_no_problem_and_no_warning():
    report = clusterdoc.check(facts_dir=str(HERE))
    bad = [f for f in report.findings if f["status"] != "ok"]
    assert bad == [], bad
    assert report.ok


def test_its_real_nvidia_smi_xml_is_one_healthy_h100():
    smi = probe.parse_smi_xml((HERE / "nvidia-smi-q-x.xml").read_text())
    assert smi["driver"] == "580.159.04" and smi["cuda"] == "13.0"
    (gpu,) = smi["gpus"]
    assert gpu["name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["pcie"] == {"gen": 5, "gen_max": 5, "width": 16, "width_max": 16}
    assert (gpu["ecc"]["volatile_uncorrectable"], gpu["ecc"]["aggregate_uncorrectable"]) == (0, 0)


def test_what_nccl_it_loads_is_one_wheel_the_one_torch_maps():
    nccl = _facts()["nccl"]
    (wheel,) = nccl["wheels"]
    assert (wheel["name"], wheel["version"]) == ("nvidia-nccl-cu13", "2.28.9")
    assert _facts()["torch"]["nccl_lib"] == wheel["lib"]


def _facts():
    return json.loads((HERE / "vm.json").read_text())


def test_cuda_home_through_a_link_is_the_toolkit_nvcc_belongs_to():
    facts = _facts()
    assert facts["cuda_home"] == "/usr/local/cuda" and facts["nvcc"]["home"] == "/usr/local/cuda-13.0"
    assert [f["status"] for f in cuda.check("vm", facts)] == ["ok"] * len(cuda.check("vm", facts))
    # the same node where the link really led to another toolkit: the disagreement is real
    facts["cuda_home_realpath"] = "/usr/local/cuda-12.1"
    facts["toolkits"].append(dict(facts["toolkits"][0], path="/usr/local/cuda-12.1", realpath="/usr/local/cuda-12.1",
                                  version="12.1"))
    assert any("toolkits disagree" in f["message"] for f in cuda.check("vm", facts) if f["status"] == "fail")


def test_arch_specific_entries_are_torch_arches():
    facts = _facts()
    assert facts["env"]["TORCH_CUDA_ARCH_LIST"] == "9.0a"
    assert all(f["status"] == "ok" for f in arch.check("vm", facts))
    # sm_90a runs on 9.0 only: on an A100 (8.0) it is no kernel image
    a100 = dict(facts, gpus=[dict(facts["gpus"][0], name="NVIDIA A100-SXM4-80GB", capability="8.0")])
    assert any("not in TORCH_CUDA_ARCH_LIST" in f["message"] for f in arch.check("vm", a100) if f["status"] == "fail")
    # with DeepSpeed on the node, its builder's narrower grammar crashes an op build: that is a failure
    with_ds = dict(facts, deepspeed={"version": "0.19.8", "ops_installed": {}, "ops_compatible": {}})
    statuses = {f["status"] for f in arch.check("vm", with_ds) if "DeepSpeed's parser crashes" in f["message"]}
    assert statuses == {"fail"}
    assert arch.parse_torch_arch_list("8.0;9.0a+PTX;10.0f Hopper sm_90") == (
        ["sm_80", "sm_90a", "sm_100f", "sm_90"], ["compute_90a", "compute_90"], ["sm_90"])


def test_sass_of_a_lower_minor_runs_on_the_gpu():
    """sm_80 cubins run on an 8.6 GPU (same major): TORCH_CUDA_ARCH_LIST=8.0 is no 'no kernel image' on an A10."""
    facts = _facts()
    a10 = dict(facts, gpus=[dict(facts["gpus"][0], name="NVIDIA A10", capability="8.6")],
               env=dict(facts["env"], TORCH_CUDA_ARCH_LIST="8.0"))
    assert not [f for f in arch.check("vm", a10) if f["status"] == "fail"]
    h100 = dict(a10, gpus=[dict(facts["gpus"][0], capability="9.0")])
    assert any("not in TORCH_CUDA_ARCH_LIST" in f["message"] for f in arch.check("vm", h100) if f["status"] == "fail")
