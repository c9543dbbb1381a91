"""GPU and fabric health on the test cluster (issue 24): the plants at the edge a node shows (nvidia-smi -q -x,
/dev/kmsg, systemctl, /sys/bus/pci), `clusterdoc check` naming exactly them, `--slurm-health` draining and
resuming. Unit tests of the rules: tests/test_gpuhealth.py."""

import pytest

from tests.test_doctor_cluster import check, names, problems
from tests.test_slurm_health import health_check, node_state, wait_state

# its checks run with --timeout 20 per node: make test runs them alone (once, under another pytest's load, they failed)
pytestmark = pytest.mark.timing

H100_SXM = [{"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 8}]
PLANTED = {
    "node2": {"xid": [79], "gpus_visible": 7},
    "node3": {"row_remap_pending": 2, "throttle": ["hw_slowdown"]},
    # TORCH_CUDA_ARCH_LIST with 9.0: the arch check has nothing to say about the H100
    "node4": {"gpus": H100_SXM, "fabricmanager": "inactive", "acs": True, "p2p": "CNS",
              "env": {"TORCH_CUDA_ARCH_LIST": "8.0;9.0"}},
}
IB_PLANTED = {
    "node1": {"ib_rate_gbps": 400, "peermem": False, "nvidia_open": True},  # GPUDirect RDMA through DMA-BUF
    "node2": {"ib_rate_gbps": 400, "ib_link_downed": 5, "iommu": "translated"},
    "node3": {"ib_rate_gbps": 100, "nvlink_down": 2, "nvlink_errors": 3},
    "node4": {"ib_rate_gbps": 400, "peermem": False},
}


@pytest.mark.cluster
@pytest.mark.slow
def test_gpu_and_fabric_failures_are_named_with_fixes_and_drain_in_slurm_health_mode(cluster, tmp_path):
    before = cluster.plant(PLANTED)
    try:
        code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 20,
                          "--mpirun", cluster.mpirun)
        health = {(n, c) for n, c in problems(doc) if c in ("gpu", "fabric")}
        assert health == {("node2", "gpu"), ("node3", "gpu"), ("node4", "fabric")}, doc["findings"]
        assert problems(doc, "fail") == {("node2", "gpu"), ("node4", "fabric")}
        assert not any(n == "node1" for n, _ in problems(doc)) and code == 1
        bad = {f["message"]: f["fix"] for f in doc["findings"] if f["status"] != "ok"}
        assert all(bad.values())
        for words in ("XID 79 (GPU has fallen off the bus)", "7 GPU(s) visible, expected 8",
                      "row remapping pending (2 row(s)", "HW slowdown active", "nvidia-fabricmanager is inactive",
                      "PCIe ACS (SrcValid+)", "confirmed: `nvidia-smi topo -p2p r` reports P2P CNS"):
            assert any(words in m for m in bad), words
        facts = {n["node"]: n["facts"] for n in doc["nodes"]}
        assert len({g["uuid"] for g in facts["node1"]["gpu_health"]["smi"]["gpus"]}) == 8
        assert len(facts["node2"]["gpu_health"]["smi"]["gpus"]) == 7

        with health_check(cluster, tmp_path, "gpu,fabric") as log:
            _, reason2 = wait_state(cluster, "node2", lambda s, r: "DRAIN" in s)
            _, reason4 = wait_state(cluster, "node4", lambda s, r: "DRAIN" in s)
            assert reason2.startswith("clusterdoc: gpu: a GPU fell off the bus"), reason2
            assert reason4.startswith("clusterdoc: fabric: nvidia-fabricmanager is inactive"), reason4
            assert "DRAIN" not in node_state(cluster, "node1")[0] + node_state(cluster, "node3")[0]
            cluster.put_back(before)  # the plants removed: the next health checks resume both
            before = None
            wait_state(cluster, "node2", lambda s, r: "DRAIN" not in s)
            wait_state(cluster, "node4", lambda s, r: "DRAIN" not in s)
            assert log.read_text().count("resumed") >= 2
    finally:
        if before:
            cluster.put_back(before)

    # the fabric plants: InfiniBand rates and counters in /sys/class/infiniband, IOMMU groups, nvidia_peermem
    with cluster.planted(IB_PLANTED):
        _, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 20, "--checks", "fabric")
    found: dict = {}
    for f in doc["findings"]:
        if f["status"] != "ok":
            found[f["node"]] = found.get(f["node"], "") + f["message"] + "\n"
    assert sorted(found) == ["node2", "node3", "node4"], doc["findings"]
    assert "link_downed 5" in found["node2"] and "the IOMMU translates DMA for all 8 GPUs" in found["node2"]
    assert "100 Gb/s (peers: 400 Gb/s), below" in found["node3"] and "nvidia_peermem" in found["node4"]
    assert "the NVIDIA kernel module is the proprietary one" in found["node4"]
    assert "GPU0: 10 of 12 up (link 10, 11 inactive)" in found["node3"]
    assert "GPU0 link 0 CRC Errors 3 since the driver loaded" in found["node3"]


H100_ONE = [{"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 1}]
REAL_PLANTED = {  # real outputs (tests/real, with their sources) printed by the nodes' nvidia-smi and kernel log
    # and a line another driver wrote that merely contains an Xid 79 (issue 32): not the NVIDIA driver's
    "node1": {"gpus": H100_ONE, "real_smi_xml": "device/h100-q-x.xml",
              "kmsg_extra": ["4,2000,130000000,-;evil: NVRM: Xid (PCI:0000:00:06): 79, pid=1, GPU has fallen off the bus."]},
    "node2": {"real_kmsg": "xid/issue-nvsentinel-155-fallen-off-no-xid.log"},
    "node3": {"gpus_visible": 7, "real_lost": "lost/notes-gpu2-no-bus.txt"},
}


@pytest.mark.cluster
@pytest.mark.slow
def test_real_driver_outputs_on_the_cluster_nodes(cluster):
    """Issue 29: a real H100's `nvidia-smi -q -x` is healthy (and another driver's line containing an Xid 79 is not
    counted); the 570 open driver's fallen-off-the-bus message (no Xid line) and today's lost-GPU line without a
    bus id each fail naming the GPU."""
    with cluster.planted(REAL_PLANTED):
        _, one = check("-w", "node1", "--ssh-config", cluster.ssh_config, "--timeout", 20, "--checks", "gpu")
        _, rest = check("-w", "node2,node3", "--ssh-config", cluster.ssh_config, "--timeout", 20, "--checks", "gpu",
                        "--gpus-per-node", 8)
    assert problems(one, "fail") == set(), one["findings"]
    assert one["nodes"][0]["facts"]["gpu_health"]["xid"]["total"] == 0
    smi = one["nodes"][0]["facts"]["gpu_health"]["smi"]
    assert smi["driver"] == "580.159.04" and [g["name"] for g in smi["gpus"]] == ["NVIDIA H100 80GB HBM3"]
    fails = {(f["node"], f["message"].split(" (from")[0]) for f in rest["findings"] if f["status"] == "fail"}
    assert ("node2", "XID 79 (GPU has fallen off the bus) x1 on PCI 0000:b3:00 since boot (no earlier clusterdoc "
            "run)") in fails or any(n == "node2" and m.startswith("XID 79") and "0000:b3:00" in m for n, m in fails)
    assert any(n == "node3" and m.startswith("a GPU fell off the bus: GPU2 (nvidia-smi: Unable to determine")
               for n, m in fails), fails
