"""GPU and fabric health (issue 24), judged from facts files alone; the probe's parsers fed the real formats.

The gpu_*.json facts were recorded on the test cluster (tests/cluster, default.yaml with the issue's plants):
node1 healthy, node2 XID 79 with 7 of 8 GPUs, node3 row remap pending and HW slowdown, node4 an H100 SXM
node with the fabric manager stopped and ACS on its PCIe switches."""

import copy
import json
from pathlib import Path

import pytest

from clusterdoc import probe
from clusterdoc.checks import FAIL, OK, WARN, fabric, gpuhealth
from clusterdoc.doctor import Report
from clusterdoc.slurm_health import first_failure
from clusterdoc.untrusted import clean_facts

FACTS = Path(__file__).parent / "facts"


def load(name):
    return clean_facts(json.loads((FACTS / f"{name}.json").read_text()))


def judge(facts, expected=8):
    return gpuhealth.check("n1", facts, expected, "--gpus-per-node") + fabric.check_node("n1", facts)


def problems(findings):
    return sorted((f["check"], f["status"]) for f in findings if f["status"] != OK)


def test_a_healthy_gpu_node_is_ok_in_every_new_check_and_lists_its_uuids():
    facts = load("gpu_healthy")
    findings = judge(facts)
    assert problems(findings) == []
    assert {f["check"] for f in findings} == {"gpu", "fabric"}
    assert "8 GPU(s) healthy" in " ".join(f["message"] for f in findings)
    uuids = [g["uuid"] for g in facts["gpu_health"]["smi"]["gpus"]]
    assert len(set(uuids)) == 8 and all(u.startswith("GPU-") for u in uuids)


@pytest.mark.parametrize("facts", [{}, {"gpu_health": None}, {"gpus": [], "gpu_health": None, "errors": []}])
def test_a_cpu_only_node_is_not_applicable_never_a_failure(facts):
    findings = judge(facts, expected=None)
    assert problems(findings) == []
    assert all("not applicable" in f["message"] for f in findings)


def test_the_recorded_local_machine_without_gpus_is_not_applicable():
    assert problems(judge(load("local_machine"), expected=None)) == []


def test_a_node_expected_to_have_gpus_without_nvidia_smi_fails():
    findings = gpuhealth.check("n1", {"gpu_health": None}, 8, "the node's Slurm gres")
    assert problems(findings) == [("gpu", FAIL)] and "expected 8 (the node's Slurm gres)" in findings[0]["message"]


def _first_run(facts):
    """The XID state as a first clusterdoc run on the node sees it: every XID of this boot is new."""
    facts["gpu_health"]["xid"].update(new=len(facts["gpu_health"]["xid"]["events"]), since=None)
    return facts


def test_node2_lost_gpu_short_count_and_xid_79_fail_with_fixes():
    findings = [f for f in judge(_first_run(load("gpu_xid79_lost"))) if f["status"] != OK]
    text = {f["message"]: f["fix"] for f in findings}
    assert problems(findings) == [("gpu", FAIL)] * 3
    lost = next(m for m in text if "fell off the bus" in m)
    assert "00000000:77:00.0" in lost and "reboot" in text[lost]
    assert any(m.startswith("7 GPU(s) visible, expected 8") for m in text)
    xid = next(m for m in text if m.startswith("XID 79 (GPU has fallen off the bus)"))
    assert "0000:77:00" in xid and "RMA" in text[xid]


def test_node3_pending_row_remap_and_hw_slowdown_only_warn():
    findings = [f for f in judge(load("gpu_remap_throttle")) if f["status"] != OK]
    assert problems(findings) == [("gpu", WARN)] * 2
    throttle, remap = sorted(findings, key=lambda f: f["message"])
    assert remap["message"].startswith("row remapping pending (2 row(s) remapped)") and "reset" in remap["fix"]
    assert "HW slowdown active" in throttle["message"] and "cooling" in throttle["fix"]


def test_node4_nvswitch_without_fabric_manager_fails_and_acs_warns():
    findings = [f for f in judge(load("gpu_h100_fabricmanager_acs")) if f["status"] != OK]
    assert problems(findings) == [("fabric", FAIL), ("fabric", WARN)]
    fm = next(f for f in findings if f["status"] == FAIL)
    assert "error 802" in fm["message"] and "systemctl enable --now nvidia-fabricmanager" in fm["fix"]
    acs = next(f for f in findings if f["status"] == WARN)
    assert "ACS" in acs["message"] and "BIOS" in acs["fix"] and "NCCL_P2P_DISABLE=1 is a stop-gap" in acs["fix"]


def test_slurm_health_drains_for_node2_and_node4_not_for_node3():
    def reason(name):
        facts = load(name)
        findings = gpuhealth.check(name, facts, 8, "x") + fabric.check_node(name, facts)
        return first_failure(Report([], findings, ["gpu", "fabric"], None))

    assert reason("gpu_xid79_lost").startswith("gpu: a GPU fell off the bus")
    assert reason("gpu_h100_fabricmanager_acs").startswith("fabric: nvidia-fabricmanager is inactive")
    assert reason("gpu_remap_throttle") is None and reason("gpu_healthy") is None


def _gpu0(facts):
    return facts["gpu_health"]["smi"]["gpus"][0]


@pytest.mark.parametrize(
    "change, status, words",
    [
        (lambda g: g["ecc"].update(volatile_uncorrectable=3, aggregate_uncorrectable=3), FAIL, "3 uncorrectable ECC"),
        (lambda g: g["ecc"].update(aggregate_uncorrectable=1), WARN, "in the GPU's lifetime"),
        (lambda g: g["remap"].update(failure=True), FAIL, "row remapping failed"),
        (lambda g: g["retired"].update(double_bit=40, single_bit=20), FAIL, "retired pages"),
        (lambda g: g["retired"].update(pending=True), WARN, "page retirement pending"),
        (lambda g: g.update(persistence="Disabled"), WARN, "persistence mode off"),
        (lambda g: g.update(throttle=["hw_power_brake_slowdown", "sw_power_cap"]), WARN, "HW power brake"),
        (lambda g: g["pcie"].update(width=8), WARN, "x8 where peers of the same model"),
        (lambda g: g.update(mig="Enabled"), WARN, "MIG mode on"),
    ],
)
def test_each_gpu_state_rule_names_the_gpu_with_a_fix(change, status, words):
    facts = load("gpu_healthy")
    change(_gpu0(facts))
    bad = [f for f in judge(facts) if f["status"] != OK]
    assert [(f["status"], words in f["message"]) for f in bad] == [(status, True)]
    assert _gpu0(facts)["uuid"] in bad[0]["message"] and bad[0]["fix"]


def test_idle_and_power_cap_throttling_is_not_a_problem():
    facts = load("gpu_healthy")
    _gpu0(facts)["throttle"] = ["sw_power_cap", "applications_clocks_setting"]
    assert problems(judge(facts)) == []


@pytest.mark.parametrize(
    "xid, status, words", [(13, WARN, "graphics engine"), (48, FAIL, "double-bit"), (95, FAIL, "uncontained"),
                           (119, FAIL, "GSP"), (63, OK, "row remapping"), (999, WARN, "XID catalog"),
                           (109, FAIL, "context switch timeout"), (54, FAIL, "seating"), (43, WARN, "support"),
                           (45, WARN, "act on the XID that caused it"), (154, FAIL, "reset the GPU")]
)
def test_xids_are_named_with_the_catalogs_action(xid, status, words):
    facts = load("gpu_healthy")
    facts["gpu_health"]["xid"].update(events=[{"bus": "0000:07:00", "xid": xid, "text": "..."}], new=1)
    found = [f for f in judge(facts) if f["message"].startswith("XID")]
    assert len(found) == 1 and found[0]["status"] == status and words in found[0]["message"] + found[0]["fix"]


def test_an_unreadable_kernel_log_is_said_not_failed():
    facts = load("gpu_healthy")
    facts["gpu_health"]["xid"] = None
    findings = judge(facts)
    assert problems(findings) == [] and any("XIDs not checked" in f["message"] for f in findings)


def test_expected_gpu_count_is_the_option_else_a_strict_majority():
    facts = {n: load("gpu_healthy") for n in ("a", "b", "c")}
    facts["c"] = load("gpu_xid79_lost")
    assert gpuhealth.expected_counts(facts, None)[0] == {"a": 8, "b": 8, "c": 8}
    assert gpuhealth.expected_counts(facts, 4)[0]["c"] == 4
    del facts["b"]
    assert gpuhealth.expected_counts(facts, None) == ({}, "")  # 8 vs 7: no majority
    facts["cpu"] = {"gpu_health": None}
    facts["d"] = load("gpu_healthy")
    assert gpuhealth.expected_counts(facts, None)[0] == {"a": 8, "c": 8, "d": 8}  # a CPU node expects nothing


IB = [{"device": "mlx5_0", "port": "1", "rate_gbps": 400.0, "link_downed": 0, "symbol_error": 0,
       "link_error_recovery": 0}]


def _ib_node(**over):
    facts = load("gpu_healthy")
    h = facts["gpu_health"]
    h["ib"], h["ib_changed"] = copy.deepcopy(IB), []
    for k, v in over.items():
        h[k] = v
    return facts


def test_infiniband_rules():
    assert problems(fabric.check_node("n1", _ib_node())) == []
    no_rdma = fabric.check_node("n1", _ib_node(peermem=False))
    assert problems(no_rdma) == [("fabric", WARN)] and "nvidia_peermem" in no_rdma[0]["message"]
    flapping = _ib_node(ib_changed=["mlx5_0/1 link_downed"])
    flapping["gpu_health"]["ib"][0]["link_downed"] = 5
    msg = [f["message"] for f in fabric.check_node("n1", flapping) if f["status"] != OK]
    assert msg == ["InfiniBand port mlx5_0/1: link_downed 5 (rising while the probe ran: the link is flapping now)"]
    # NCCL_IB_HCA is the nccl check's (tests/test_nccl.py)


def test_cluster_wide_ib_rate_and_nccl_disable_traps():
    slow = _ib_node()
    slow["gpu_health"]["ib"][0]["rate_gbps"] = 100.0
    trap = _ib_node(nccl_env={"NCCL_P2P_DISABLE": "1"})
    facts = {"n1": _ib_node(), "n2": slow, "n3": trap}
    out = fabric.check_cluster(facts, lambda ns: ",".join(sorted(ns)))
    assert sorted((f["node"], f["status"]) for f in out) == [("n2", WARN), ("n3", WARN)]
    assert "100 Gb/s (peers: 400 Gb/s), below" in next(f for f in out if f["node"] == "n2")["message"]
    assert "set on n3 but not on n1,n2" in next(f for f in out if f["node"] == "n3")["message"]
    node = fabric.check_node("n3", trap)
    assert [f["status"] for f in node] == [WARN] and "host memory" in node[0]["message"]


# --- the probe's parsers, fed the formats the real tools print ------------------------------------------------

OLD_SMI = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
  <driver_version>470.82.01</driver_version><cuda_version>11.4</cuda_version><attached_gpus>1</attached_gpus>
  <gpu id="00000000:3B:00.0">
    <product_name>Tesla V100-SXM2-32GB</product_name><persistence_mode>Enabled</persistence_mode>
    <uuid>GPU-abc</uuid><compute_mode>Default</compute_mode>
    <clocks_throttle_reasons>
      <clocks_throttle_reason_gpu_idle>Active</clocks_throttle_reason_gpu_idle>
      <clocks_throttle_reason_hw_thermal_slowdown>Active</clocks_throttle_reason_hw_thermal_slowdown>
    </clocks_throttle_reasons>
    <ecc_errors><volatile><single_bit><total>4</total></single_bit><double_bit><device_memory>1</device_memory>
      <total>2</total></double_bit></volatile><aggregate><double_bit><total>N/A</total></double_bit></aggregate>
    </ecc_errors>
    <retired_pages><multiple_single_bit_retirement><retired_count>3</retired_count></multiple_single_bit_retirement>
      <double_bit_retirement><retired_count>1</retired_count></double_bit_retirement>
      <pending_blacklist>Yes</pending_blacklist></retired_pages>
  </gpu>
</nvidia_smi_log>
"""


def test_the_probe_reads_older_nvidia_smi_xml():
    gpu = probe.parse_smi_xml(OLD_SMI)["gpus"][0]
    assert gpu["throttle"] == ["hw_thermal_slowdown"]  # idle left out
    assert gpu["ecc"] == {"volatile_uncorrectable": 2, "aggregate_uncorrectable": None, "mig_volatile_uncorrectable": None}
    assert gpu["retired"] == {"single_bit": 3, "double_bit": 1, "pending": True}
    assert gpu["remap"]["pending"] is None and gpu["mig"] is None and gpu["pcie"]["width"] is None


def test_the_probe_finds_xids_and_remembers_what_it_saw(tmp_path):
    log = ("6,1,0,-;Linux version 5.15.0\n"
           "4,9,1,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=2411, name=python3, GPU has fallen off the bus.\n"
           "4,10,2,-;NVRM: GPU at PCI:0000:3b:00: GPU-abc\n"
           "4,11,3,-;NVRM: Xid (PCI:0000:5e:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1)\n")
    xids = probe.parse_xids(log)
    assert [(e["bus"], e["xid"]) for e in xids["events"]] == [("0000:3b:00", 79), ("0000:5e:00", 13)]
    assert xids["total"] == 2 and xids["counts"] == [{"xid": 79, "bus": "0000:3b:00", "n": 1},
                                                     {"xid": 13, "bus": "0000:5e:00", "n": 1}]
    path = str(tmp_path / "state" / "gpu-n1.json")
    assert probe.xid_state(2, path) == (2, None)  # first run: everything is new, no earlier run
    new, since = probe.xid_state(2, path)
    assert new == 0 and since is not None
    assert probe.xid_state(3, path)[0] == 1
    assert probe.new_counts(xids["keys"], 1) == [{"xid": 13, "bus": "0000:5e:00", "n": 1}]


def test_a_lost_gpu_line_is_recognised():
    line = "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover"
    assert probe.lost_gpu(line)["bus"] == "0000:3B:00.0"


# --- NVLink and P2P: nvidia-smi's text answers (no XML form), parsed and judged ------------------------------

NVLINK_S = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaa)
\t Link 0: 26.562 GB/s
\t Link 1: <inactive>
\t Link 2: <inactive>
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbb)
\t Link 0: 26.562 GB/s
\t Link 1: 26.562 GB/s
\t Link 2: 26.562 GB/s
"""
NVLINK_E = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaa)
\t Link 0: Replay Errors: 0
\t Link 0: Recovery Errors: 1
\t Link 0: CRC Errors: {crc}
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbb)
\t Link 0: Replay Errors: 0
"""
P2P = """ \tGPU0\tGPU1\tGPU2\t
 GPU0\tX\tOK\tCNS\t
 GPU1\tOK\tX\tGNS\t
 GPU2\tCNS\tGNS\tX\t

Legend:

  X    = Self
  OK   = Status Ok
  CNS  = Chipset not supported
"""


def test_the_probe_reads_nvlink_state_counters_and_the_p2p_matrix():
    h100 = "NVIDIA H100 80GB HBM3"
    assert probe.parse_nvlink(NVLINK_S) == {"0": {"active": 1, "inactive": [1, 2], "name": h100},
                                            "1": {"active": 3, "inactive": [], "name": h100}}
    assert probe.parse_nvlink(NVLINK_E.format(crc=4), counters=True) == {
        "0": {"0 Replay Errors": 0, "0 Recovery Errors": 1, "0 CRC Errors": 4}, "1": {"0 Replay Errors": 0}}
    assert probe.parse_nvlink("GPU 0: Tesla T4 (UUID: GPU-x)\n") == {}  # a PCIe board: no NVLink
    first, second = (probe.parse_nvlink(NVLINK_E.format(crc=n), counters=True) for n in (4, 6))
    assert probe.nvlink_counters(first, second) == ({"0": {"0 Recovery Errors": 1, "0 CRC Errors": 6}},
                                                    ["GPU0 link 0 CRC Errors"])
    assert probe.nvlink_counters(first, first)[1] == []
    assert probe.parse_p2p(P2P) == {"gpus": 3, "bad": [{"a": 0, "b": 2, "code": "CNS"}, {"a": 1, "b": 2, "code": "GNS"}]}
    assert probe.parse_p2p("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.") is None


def _nvlink_node(**over):
    facts = load("gpu_healthy")
    h = facts["gpu_health"]
    h.update({"nvlink": {"0": {"active": 12, "inactive": []}, "1": {"active": 12, "inactive": []}},
              "nvlink_errors": {}, "nvlink_rising": [], "p2p": {"gpus": 8, "bad": []}})
    h.update(over)
    return facts


def test_nvlink_links_down_and_error_counters_warn():
    assert problems(fabric.check_node("n1", _nvlink_node())) == []
    down = fabric.check_node("n1", _nvlink_node(nvlink={"0": {"active": 10, "inactive": [10, 11]},
                                                        "1": {"active": 12, "inactive": []}}))
    assert problems(down) == [("fabric", WARN)] and "GPU0: 10 of 12 up (link 10, 11 inactive)" in down[0]["message"]
    # a board that wires fewer links leaves the same ones inactive on every GPU: not a link down
    same = {"0": {"active": 4, "inactive": [4, 5]}, "1": {"active": 4, "inactive": [4, 5]}}
    assert problems(fabric.check_node("n1", _nvlink_node(nvlink=same))) == []
    errs = fabric.check_node("n1", _nvlink_node(nvlink_errors={"0": {"0 CRC Errors": 4}}))
    assert problems(errs) == [("fabric", WARN)] and "GPU0 link 0 CRC Errors 4 since the driver loaded" in errs[0]["message"]
    rising = fabric.check_node("n1", _nvlink_node(nvlink_errors={"0": {"0 CRC Errors": 5}},
                                                  nvlink_rising=["GPU0 link 0 CRC Errors"]))
    assert "rising while the probe ran: GPU0 link 0 CRC Errors" in rising[0]["message"]


def test_p2p_unsupported_confirms_the_acs_trap_and_is_named_alone_otherwise():
    acs = [{"bridge": "0000:00:01.0", "gpus": ["00000000:07:00.0"]}]
    cns = {"gpus": 8, "bad": [{"a": 0, "b": 1, "code": "CNS"}, {"a": 0, "b": 2, "code": "CNS"}]}
    trap = fabric.check_node("n1", _nvlink_node(acs=acs, p2p=cns))
    assert problems(trap) == [("fabric", WARN)]  # one finding naming both facts
    assert "PCIe ACS (SrcValid+)" in trap[0]["message"] and "confirmed: `nvidia-smi topo -p2p r` reports P2P CNS " \
        "(chipset not supported) between 2 GPU pair(s): GPU0-GPU1, GPU0-GPU2" in trap[0]["message"]
    assert "still reports P2P OK" in fabric.check_node("n1", _nvlink_node(acs=acs))[0]["message"]
    alone = fabric.check_node("n1", _nvlink_node(p2p=cns))
    assert problems(alone) == [("fabric", WARN)] and "NCCL_P2P_DISABLE=1 is a stop-gap" in alone[0]["fix"]
    geforce = {"gpus": 2, "bad": [{"a": 0, "b": 1, "code": "GNS"}]}  # a GPU without P2P by design: nothing to fix
    assert problems(fabric.check_node("n1", _nvlink_node(p2p=geforce))) == []


def test_only_xids_new_since_the_last_run_fail_so_a_reset_gpu_is_resumed():
    """Issue 24 item 2: XIDs since the last clusterdoc run (the node's state file), or since boot without one."""
    def xid_findings(new, since):
        facts = load("gpu_healthy")
        events = [{"bus": "0000:07:00", "xid": 79, "text": "GPU has fallen off the bus."},
                  {"bus": "0000:17:00", "xid": 13, "text": "Graphics Exception"}]
        facts["gpu_health"]["xid"].update(events=events, total=2, new=new, since=since)
        return [(f["status"], f["message"].split(" (from")[0]) for f in gpuhealth.check("n1", facts, 8, "x")]

    uuid = _gpu0(load("gpu_healthy"))["uuid"]  # the GPU at 0000:07:00, named by the XID
    assert (FAIL, f"XID 79 (GPU has fallen off the bus) x1 on PCI 0000:07:00 ({uuid}) since boot (no earlier "
            "clusterdoc run)") in xid_findings(0, None)  # no state file: the whole boot counts
    assert [s for s, m in xid_findings(2, 1.0e9) if m.startswith("XID")] == [WARN, FAIL]  # both new (13, 79)
    later = xid_findings(0, 1.0e9)  # a later run, nothing new: the node is not failed (slurm-health resumes it)
    assert [s for s, _ in later] == [OK, WARN] and "seen by an earlier clusterdoc run (not new)" in later[1][1]
    only13 = xid_findings(1, 1.0e9)  # the 13 came after the last run, the 79 before it
    assert [(s, m.split(" (")[0]) for s, m in only13] == [(WARN, "XID 13"), (WARN, "XID 79")]


@pytest.mark.parametrize(
    "dmabuf, driver, words",
    [
        ({"kernel": "5.15.0-105-generic", "open_module": True}, "550.54.14", None),  # DMA-BUF: no peermem needed
        ({"kernel": "5.4.0-150-generic", "open_module": True}, "550.54.14", "kernel 5.4.0-150-generic, needs >= 5.12"),
        ({"kernel": "5.15.0", "open_module": False}, "550.54.14", "the proprietary one"),
        ({"kernel": "5.15.0", "open_module": None}, "550.54.14", "flavour is unknown"),
        ({"kernel": "6.8.0", "open_module": True}, "470.82.01", "driver 470.82.01, needs >= 515"),
        (None, "550.54.14", "not checked"),  # facts from an older probe
    ],
)
def test_gpudirect_rdma_through_nvidia_peermem_or_dma_buf(dmabuf, driver, words):
    facts = _ib_node(peermem=False, dmabuf=dmabuf)
    facts["gpu_health"]["smi"]["driver"] = driver
    out = fabric.check_node("n1", facts)
    if words is None:
        assert problems(out) == [] and "GPUDirect RDMA through DMA-BUF" in out[0]["message"]
    else:
        assert problems(out) == [("fabric", WARN)] and "nvidia_peermem is not loaded" in out[0]["message"]
        assert words in out[0]["message"]
    assert problems(fabric.check_node("n1", _ib_node(peermem=True, dmabuf=dmabuf))) == []


def test_the_probe_tells_the_open_nvidia_module_from_the_proprietary_one(monkeypatch):
    files = {"/sys/module/nvidia/taint": "POE\n"}
    monkeypatch.setattr(probe.gpuhealth, "read", lambda path, limit=1 << 20: files.get(path))
    assert probe.nvidia_module_open() is False
    files["/sys/module/nvidia/taint"] = "OE\n"
    assert probe.nvidia_module_open() is True
    del files["/sys/module/nvidia/taint"]
    assert probe.nvidia_module_open() is None
    files["/proc/driver/nvidia/version"] = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05\n"
    assert probe.nvidia_module_open() is True


def test_malformed_nvlink_and_p2p_facts_are_listed_not_a_crash():
    facts = _nvlink_node(nvlink={"0": "x", "1": {"active": "12"}}, nvlink_errors={"0": 5}, nvlink_rising=[3],
                         p2p={"gpus": 2, "bad": ["x", {"a": 0, "b": 1, "code": "$(rm -rf /)"}]},
                         dmabuf={"kernel": 5, "open_module": "yes"})
    clean = clean_facts(json.loads(json.dumps(facts)))
    fields = {m["field"] for m in clean["malformed"]}
    assert {"gpu_health.nvlink.0", "gpu_health.nvlink_errors.0", "gpu_health.p2p.bad[0]",
            "gpu_health.p2p.bad[1].code", "gpu_health.dmabuf.open_module"} <= fields, fields
    assert all(f["check"] == "fabric" for f in fabric.check_node("n1", clean))
