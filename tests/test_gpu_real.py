"""GPU and fabric health on real drivers' output (issue 29): every file under tests/real/ (where each came from:
tests/real/SOURCES.md) fed through the real probe, with a fake nvidia-smi / dcgmi on PATH that prints the file
(the edge a node shows), then the real rules. No crash, no FAIL on a healthy one, every fault that came with the
file named with its GPU. In-process and in seconds: the probe's commands are the fakes, its kernel log the file."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from clusterdoc import probe
from clusterdoc.checks import FAIL, OK, WARN, fabric, gpuhealth
from clusterdoc.probe import gpuhealth as probe_health
from clusterdoc.untrusted import clean_facts

REAL = Path(__file__).parent / "real"
XMLS = sorted((REAL / "nvsmi-xml").glob("*.xml")) + [REAL / "device" / "h100-q-x.xml"]
H100 = REAL / "device" / "h100-q-x.xml"

FAKE_SMI = """#!/bin/sh
# a fake nvidia-smi: prints the real output kept in $D for these arguments (its stderr and exit code beside it)
D={d}
case "$*" in
  "-q -x") f=q-x.xml ;;
  "nvlink -s") f=nvlink-s.txt ;;
  "nvlink -e") f=nvlink-e.txt ;;
  "topo -p2p r") f=topo-p2p-r.txt ;;
  --query-gpu=*) f=query.csv ;;
  "diag -r 1 -j") f=diag.json ;;
  "health -c -j") f=health.json ;;
  *) f=none ;;
esac
[ -f "$D/$f.err" ] && cat "$D/$f.err" >&2
[ -f "$D/$f" ] && cat "$D/$f"
exit $(cat "$D/$f.rc" 2>/dev/null || echo 0)
"""


class Node:
    """One node's edge: the files its fake nvidia-smi (and dcgmi) print, its kernel log, its /sys/class/infiniband."""

    def __init__(self, tmp: Path, monkeypatch, name="n1"):
        self.dir = tmp / name / "out"
        self.bin = tmp / name / "bin"
        self.dir.mkdir(parents=True)
        self.bin.mkdir(parents=True)
        self.state = tmp / name / "state"
        self.kmsg = None
        self.ib = tmp / name / "no-ib"
        self.monkeypatch = monkeypatch
        self.tool("nvidia-smi")

    def tool(self, name):
        path = self.bin / name
        path.write_text(FAKE_SMI.format(d=self.dir))
        path.chmod(0o755)

    def put(self, name, src=None, text=None, err=None, rc=None):
        if src is not None:
            shutil.copyfile(src, self.dir / name)
        if text is not None:
            (self.dir / name).write_text(text)
        if err is not None:
            (self.dir / f"{name}.err").write_text(err)
        if rc is not None:
            (self.dir / f"{name}.rc").write_text(str(rc))
        return self

    def probe(self):
        """The real probe's GPU health on this node, cleaned as the head cleans it."""
        mp = self.monkeypatch
        mp.setenv("PATH", f"{self.bin}{os.pathsep}/usr/bin:/bin")
        mp.setattr(probe_health, "read_kernel_log", lambda: ("/var/log/kern.log", self.kmsg) if self.kmsg else (None, None))
        mp.setattr(probe_health, "IB_CLASS", str(self.ib))
        mp.setattr(probe_health, "acs_bridges", lambda buses: [])
        mp.setattr(probe_health, "iommu_types", lambda buses: {})
        h = probe_health.probe_gpu_health(10, {}, state_dir=str(self.state))
        facts = clean_facts(json.loads(json.dumps({"gpu_health": h})))
        assert facts["malformed"] == [], facts["malformed"]
        return facts


def judge(facts, expected=None, node="n1", pcie=None):
    return gpuhealth.check(node, facts, expected, "test", pcie) + fabric.check_node(node, facts)


def bad(findings, status=None):
    return [f for f in findings if f["status"] != OK and (status is None or f["status"] == status)]


# --- nvidia-smi -q -x of many GPUs and drivers: healthy, read right ------------------------------------------


@pytest.mark.parametrize("xml", XMLS, ids=lambda p: p.name)
def test_every_real_smi_xml_is_read_with_no_fail_and_no_pcie_alarm(tmp_path, monkeypatch, xml):
    facts = Node(tmp_path, monkeypatch).put("q-x.xml", xml).probe()
    smi = facts["gpu_health"]["smi"]
    assert smi["gpus"] and len(smi["gpus"]) == xml.read_text().count("<gpu id=")
    assert all(g["bus"] and g["name"] for g in smi["gpus"])
    findings = judge(facts)
    assert bad(findings, FAIL) == []
    # x8 of x16 on a cloud T4/A10G, a laptop, a dual-GPU board: every peer of the same model trains the same
    assert not [f for f in findings if "PCIe" in f["message"]]


def test_cuda_version_not_found_is_unknown_not_malformed(tmp_path, monkeypatch):
    xml = REAL / "nvsmi-xml" / "netip-gtx1070-530-cuda-not-found.xml"
    assert "<cuda_version>Not Found</cuda_version>" in xml.read_text()
    facts = Node(tmp_path, monkeypatch).put("q-x.xml", xml).probe()
    assert facts["gpu_health"]["smi"]["cuda"] is None and facts["gpu_health"]["smi"]["driver"] == "530.30.02"
    # even from an older probe that sent the words as they were: unknown, not a malformed fact failing the node
    raw = {"gpu_health": {"smi": {"driver": "430.26", "cuda": "Not Found", "attached": "[N/A]", "gpus": []}},
           "gpus": [{"index": 0, "name": "T4", "capability": "[N/A]", "memory_mib": "[Not Supported]",
                     "driver": "Unknown Error"}]}
    clean = clean_facts(raw)
    assert clean["malformed"] == [] and clean["gpu_health"]["smi"]["cuda"] is None
    assert clean["gpus"][0]["capability"] is None and clean["gpus"][0]["driver"] is None


def test_mig_devices_ecc_and_the_drivers_recovery_fields_are_read(tmp_path, monkeypatch):
    mig = Node(tmp_path, monkeypatch, "mig").put("q-x.xml", REAL / "nvsmi-xml" / "netdata-a100-sxm4-mig.xml").probe()
    gpu = mig["gpu_health"]["smi"]["gpus"][0]
    assert gpu["mig"] == "Enabled" and gpu["ecc"]["volatile_uncorrectable"] is None  # the GPU's own reads N/A
    assert gpu["ecc"]["mig_volatile_uncorrectable"] == 0  # read from its MIG devices
    h100 = Node(tmp_path, monkeypatch, "h100").put("q-x.xml", H100).probe()
    rec = h100["gpu_health"]["smi"]["gpus"][0]["recovery"]
    assert rec == {"action": "None", "reset_required": None, "drain_and_reset_recommended": None,
                   "channel_repair_pending": False, "tpc_repair_pending": False, "unrepairable_memory": False}
    assert bad(judge(h100)) == []
    # the same fields saying what to do: named, with the driver's own words
    for field, value, status, words in [("action", "GPU Reset", FAIL, "the driver asks for 'GPU Reset'"),
                                        ("action", "Drain and Reset", FAIL, "Drain and Reset"),
                                        ("reset_required", True, FAIL, "needs a reset"),
                                        ("unrepairable_memory", True, FAIL, "unrepairable memory"),
                                        ("channel_repair_pending", True, WARN, "channel repair pending")]:
        facts = json.loads(json.dumps(h100))
        facts["gpu_health"]["smi"]["gpus"][0]["recovery"][field] = value
        found = bad(judge(facts))
        assert [(f["status"], words in f["message"]) for f in found] == [(status, True)], found
        assert "00000000:00:06.0" in found[0]["message"]
    mig["gpu_health"]["smi"]["gpus"][0]["ecc"]["mig_volatile_uncorrectable"] = 2
    assert [f["status"] for f in bad(judge(mig)) if "uncorrectable ECC" in f["message"]] == [FAIL]


def test_pcie_width_is_judged_against_same_model_peers_across_the_cluster(tmp_path, monkeypatch):
    t4 = Node(tmp_path, monkeypatch, "t4").put("q-x.xml", REAL / "nvsmi-xml" / "telegraf-tesla-t4.xml").probe()
    a10g = Node(tmp_path, monkeypatch, "a10g").put("q-x.xml", REAL / "nvsmi-xml" / "telegraf-a10g.xml").probe()
    rtx = Node(tmp_path, monkeypatch, "rtx").put("q-x.xml", REAL / "nvsmi-xml" / "telegraf-rtx-3090-v12.xml").probe()
    # planted: the same 3090 node's twin trained at x8 (a reseat needed); its x16 peer shows the slot can do x16
    slow = json.loads(json.dumps(rtx))
    slow["gpu_health"]["smi"]["gpus"][0]["pcie"]["width"] = 8
    cluster = {"t4": t4, "a10g": a10g, "rtx": rtx, "slow": slow}
    ref = gpuhealth.pcie_reference(cluster)
    assert ref["Tesla T4"] == 8 and ref["NVIDIA A10G"] == 8 and ref["NVIDIA GeForce RTX 3090"] == 16
    def pcie(n):
        return [f for f in bad(judge(cluster[n], node=n, pcie=ref)) if "PCIe" in f["message"]]

    assert [pcie(n) for n in ("t4", "a10g", "rtx")] == [[], [], []]
    named = pcie("slow")
    assert len(named) == 1 and "x8 where peers of the same model (NVIDIA GeForce RTX 3090) run x16" in \
        named[0]["message"] and "00000000:00:10.0" in named[0]["message"]


# --- lost GPUs: every form nvidia-smi prints ------------------------------------------------------------------

LOST = {
    "doc-ru-rtxa4000-gpu3.txt": "GPU3 (PCI 0000:5F:00.0)",
    "notes-gpu2-no-bus.txt": "GPU2",
    "nvidia-container-toolkit-69.txt": "PCI 0000:65:00.0",
    "dcgm-exporter-604.txt": "PCI 000:BA:80.0",
    "nvidia-docker-1553.txt": "PCI 0000:09:00.0",
    "notes-rtx3080-query-gpu3.txt": "GPU3 (PCI 0000:04:00.0)",
}


@pytest.mark.parametrize("name, named", sorted(LOST.items()))
def test_a_lost_gpu_in_each_real_form_fails_naming_the_gpu(tmp_path, monkeypatch, name, named):
    line = (REAL / "lost" / name).read_text().splitlines()[0]
    # nvidia-smi -q -x answers for the GPUs it reaches and names the lost one on stderr (NVML_ERROR_GPU_IS_LOST)
    facts = Node(tmp_path, monkeypatch).put("q-x.xml", H100, err=line + "\n", rc=15).probe()
    fails = bad(judge(facts, expected=2), FAIL)
    lost = [f for f in fails if f["message"].startswith("a GPU fell off the bus")]
    assert len(lost) == 1 and f"fell off the bus: {named} (nvidia-smi: Unable to determine" in lost[0]["message"]
    assert any("1 GPU(s) visible, expected 2" in f["message"] for f in fails)
    assert not any("healthy" in f["message"] for f in judge(facts, expected=2))


# --- kernel logs: XIDs, the GPU off the bus without one, and lines that only look like XIDs ---------------------

XIDS = {  # file: [(status, words)] of the findings it must give, in XID order
    "doc-ru-rtxa4000-xid79-154.log": [(FAIL, "XID 79 (GPU has fallen off the bus) x1 on PCI 0000:5f:00"),
                                      (FAIL, "XID 154 (the driver changed the GPU's recovery action: 0x1 (GPU "
                                             "Reset Required)) x1 on PCI 0000:5f:00")],
    "issue-nvsentinel-155-fallen-off-no-xid.log": [(FAIL, "XID 79 (GPU has fallen off the bus) x1 on PCI 0000:b3:00")],
    "gpud-dmesg-with-xid-119.log": [(FAIL, "XID 119 (GSP RPC timeout) x5 on PCI 0000:9b:00")],
    "gpud-dmesg.decode.iso.log.0": [(WARN, "XID 13 (graphics engine exception"), (WARN, "XID 43 (GPU stopped")],
    "gpud-memory-dmesg.decode.iso.log": [(WARN, "XID 13 (graphics engine exception"), (WARN, "XID 43 (GPU stopped")],
    "issue-gpud-1174-kmsg-nvlink5-xid149-145.log": [(WARN, "XID 145 (NVLink 5 RLW error (non-fatal, corrected))"),
                                                    (FAIL, "XID 149 (NVLink 5 NETIR error) x2")],
    "issue-open-gpu-kernel-modules-1150-xid45-after-149-145.log": [(WARN, "XID 45 (preemptive cleanup")],
    # the catalog: IGNORE, IGNORE (the pending row remap nvidia-smi shows is judged on its own)
    "mleng-xid63.log": [(OK, "XID 63 (ECC page retirement or row remapping recorded) x1 on PCI 0000:10:1c")],
    "gpud-kmsg.1.log": [],
    "notes-gb202-healthy-journal-ltr.log": [],  # healthy: a driver load's NVRM lines
    "notes-2080ti-vfio-fallen-off-two-lines.log": [(FAIL, "XID 79 (GPU has fallen off the bus) x1 on PCI 0000:01:00")],
    "notes-gb202-cc-guest-fallen-off-three-lines.log": [(FAIL, "XID 79 (GPU has fallen off the bus) x1 on PCI "
                                                               "0000:02:00")],
    # an old driver's one-line form, printed twice for one fall: one XID 79
    "issue-bumblebee-554-gpu-at-fallen-off-old-driver.log": [(FAIL, "XID 79 (GPU has fallen off the bus) x1 on PCI "
                                                                    "0000:01:00")],
}


@pytest.mark.parametrize("name, expected", sorted(XIDS.items()))
def test_every_real_kernel_log_names_its_xids_with_the_catalogs_action(tmp_path, monkeypatch, name, expected):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.kmsg = (REAL / "xid" / name).read_text(errors="replace")
    facts = node.probe()
    found = [(f["status"], f["message"]) for f in judge(facts) if f["message"].startswith("XID")]
    assert len(found) == len(expected), found
    for (status, message), (want_status, words) in zip(found, expected):
        assert status == want_status and words in message, (status, message)
    assert facts["gpu_health"]["xid"]["total"] == sum(c["n"] for c in facts["gpu_health"]["xid"]["counts"])


def test_xid_counts_do_not_stop_at_the_sample(tmp_path, monkeypatch):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.kmsg = (REAL / "xid" / "gpud-dmesg.decode.iso.log.0").read_text()
    facts = node.probe()
    xid = facts["gpu_health"]["xid"]
    assert len(xid["events"]) == 64 and xid["total"] == 636
    assert {(c["xid"], c["n"]) for c in xid["counts"]} == {(13, 629), (43, 7)}
    found = [f["message"] for f in bad(judge(facts))]
    assert any(m.startswith("XID 13 (") and " x629 " in m for m in found)
    # the next run: nothing new; three new 43s after it are counted as new, the 13s as seen before
    node.kmsg += "\n" + "\n".join(["kern  :warn  : 2025-01-21T05:00:00,000000+00:00 NVRM: Xid (PCI:0000:38:00): 43, pid=1, "
                            "name=python, Ch 00000010"] * 3)
    again = {m.split(" (")[0]: m for m in (f["message"] for f in judge(node.probe())) if m.startswith("XID")}
    assert "3 new since the last clusterdoc run" in again["XID 43"] and "x10 " in again["XID 43"]
    assert "seen by an earlier clusterdoc run" in again["XID 13"]


def test_nvlink_outputs_all_links_down_is_kept_and_judged_against_peers(tmp_path, monkeypatch):
    def nvlink(name):
        node = Node(tmp_path, monkeypatch, name).put("q-x.xml", H100).put("nvlink-s.txt", REAL / "nvlink" / name)
        return node.probe()

    # 2x H100 PCIe with a bridge: 12 of 18 links on both (by design); 8x A100: 12 each; A10: no NVLink at all
    for name in ("hpe-h100pcie-x2-nvlink-s.txt", "gpud-nvlink-status-a100.txt", "gpud-nvlink-status-a10.txt"):
        assert bad(fabric.check_node("n1", nvlink(name))) == [], name
    b200 = nvlink("issue-gpud-1085-b200-gpu2-all-inactive.txt")
    assert b200["gpu_health"]["nvlink"] == {"2": {"active": 0, "inactive": [], "all_down": True, "name": "NVIDIA B200"}}
    assert bad(fabric.check_node("n1", b200)) == []  # alone on its node (a VM's slice): no peer, no matter
    down = bad(fabric.check_node("n1", eight_gpus(b200)))
    assert len(down) == 1 and "GPU2: every link down" in down[0]["message"]
    # judged against peers: a PCIe node with no bridge (every GPU says so) is not a fault
    text = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-a)\nNVML: Unable to retrieve NVLink information as all links are inActive\n"
    pcie = Node(tmp_path, monkeypatch, "pcie").put("q-x.xml", H100).put("nvlink-s.txt", text=text * 1).probe()
    assert bad(fabric.check_node("n1", pcie)) == []
    # one A100 of eight with every link down, the others at 12: named (its peers show it should have links)
    a100 = (REAL / "nvlink" / "gpud-nvlink-status-a100.txt").read_text().split("GPU 1:")
    gpu1 = "GPU 1:" + a100[1].split("\nGPU 2:")[0]
    planted = a100[0] + "GPU 1:" + gpu1.split("\n")[0][6:] + "\nNVML: Unable to retrieve NVLink information as all " \
        "links are inActive\nGPU 2:" + a100[1].split("\nGPU 2:")[1]
    one = Node(tmp_path, monkeypatch, "one").put("q-x.xml", H100).put("nvlink-s.txt", text=planted).probe()
    found = bad(fabric.check_node("n1", one))
    assert len(found) == 1 and "GPU1: every link down" in found[0]["message"] and "GPU0" not in found[0]["message"]


def test_the_real_h100_p2p_matrix_with_terminal_underlines_is_read(tmp_path, monkeypatch):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100).put("topo-p2p-r.txt", REAL / "device" / "h100-topo-p2p-r.txt")
    assert "\x1b[4m" in (REAL / "device" / "h100-topo-p2p-r.txt").read_text()
    assert node.probe()["gpu_health"]["p2p"] == {"gpus": 1, "bad": []}


# --- InfiniBand and RoCE ports: a real /sys/class/infiniband tree ----------------------------------------------

IB_TREE = REAL / "ib" / "gpud-sys-class-infiniband-h100.0"


def test_roce_ports_are_judged_apart_from_infiniband_ports(tmp_path, monkeypatch):
    def node(name, tree):
        n = Node(tmp_path, monkeypatch, name).put("q-x.xml", H100)
        n.ib = tree
        return n.probe()

    a, b = node("a", IB_TREE), node("b", IB_TREE)
    ports = {p["device"]: (p["link_layer"], p["rate_gbps"]) for p in a["gpu_health"]["ib"]}
    assert ports["mlx5_bond_0"] == ("Ethernet", 200.0) and ports["mlx5_0"] == ("InfiniBand", 400.0)
    assert fabric.check_cluster({"a": a, "b": b}, lambda ns: ",".join(sorted(ns))) == []
    # planted: one IB port of node c trained at 200 Gb/s: named against the 400 Gb/s IB ports, the bond is not
    tree = tmp_path / "c-tree"
    shutil.copytree(IB_TREE, tree)
    (tree / "mlx5_4" / "ports" / "1" / "rate").write_text("200 Gb/sec (2X NDR)\n")
    c = node("c", tree)
    out = fabric.check_cluster({"a": a, "b": b, "c": c}, lambda ns: ",".join(sorted(ns)))
    assert [(f["node"], f["status"]) for f in out] == [("c", WARN)]
    assert "InfiniBand mlx5_4/1 at 200 Gb/s (peers: 400 Gb/s)" in out[0]["message"] and "bond" not in out[0]["message"]


# --- DCGM: dcgmi diag -r 1 -j and dcgmi health -c -j, where DCGM is installed ---------------------------------

DCGM = REAL / "dcgm"


def test_dcgm_quick_diagnostic_and_health_are_folded_in(tmp_path, monkeypatch):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.tool("dcgmi")
    node.put("diag.json", DCGM / "virtualclient-DCGMIDiag_r2_results.json")
    node.put("health.json", DCGM / "virtualclient-DCGMIHealthCheckResults.json")
    facts = node.probe()
    assert facts["gpu_health"]["dcgm"] == {"diag": {"tests": 11, "results": []},
                                           "health": {"overall": "Healthy", "incidents": []}}
    findings = judge(facts)
    assert bad(findings) == [] and any("DCGM quick diagnostic passed (11 tests)" in f["message"] for f in findings)
    # the r3 run's Skip is no finding; a malformed answer is said, never a crash
    node.put("diag.json", DCGM / "virtualclient-DCGMIDiag_r3_results.json")
    assert bad(judge(node.probe())) == []
    node.put("diag.json", DCGM / "virtualclient-DCGMIIncorrectresults.json", rc=0)
    facts = node.probe()
    assert "error" in facts["gpu_health"]["dcgm"]["diag"] and bad(judge(facts)) == []


def test_dcgm_failures_are_named(tmp_path, monkeypatch):
    """A failing run, from the r2 file with one result turned to Fail (no real failing -j output was found)."""
    doc = json.loads((DCGM / "virtualclient-DCGMIDiag_r2_results.json").read_text())
    pcie = doc["DCGM GPU Diagnostic"]["test_categories"][1]["tests"][0]["results"][0]
    pcie.update(status="Fail", warnings="GPU 0 PCIe bandwidth below threshold")
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.tool("dcgmi")
    node.put("diag.json", text=json.dumps(doc)).put("health.json", text='{"body": {"Overall Health": {"value": '
                                                     '"Failure"}, "GPU": {"children": {"0": {"value": "Failure"}}}}}')
    found = bad(judge(node.probe()))
    assert [(f["status"], f["message"][:60]) for f in found] == [
        (FAIL, "DCGM diagnostic (dcgmi diag -r 1): PCIe Fail on GPU 0: GPU 0"),
        (FAIL, "DCGM health watches: Failure (GPU / 0: Failure)")]


def test_the_payload_sent_to_nodes_reads_real_output_end_to_end(tmp_path, monkeypatch):
    """The one script the head sends (probe/payload.py joins the probe package), run as a node runs it, with the
    fake nvidia-smi first on PATH printing the real H100 file and a lost-GPU line in today's form."""
    import subprocess
    import sys

    from clusterdoc.doctor.payload import parse_output, probe_payload

    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100, err=(REAL / "lost" / "doc-ru-rtxa4000-gpu3.txt").read_text(),
                                           rc=15)
    env = dict(os.environ, PATH=f"{node.bin}{os.pathsep}/usr/bin:/bin", HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-", "--timeout", "10"], input=probe_payload(), capture_output=True,
                         env=env, timeout=60)
    facts = parse_output(out.stdout.decode())
    assert facts and facts["malformed"] == [], out.stderr.decode()[-2000:]
    h = facts["gpu_health"]
    assert [g["name"] for g in h["smi"]["gpus"]] == ["NVIDIA H100 80GB HBM3"]
    assert h["lost"] == [{"bus": "0000:5F:00.0", "index": 3, "message": (REAL / "lost" / "doc-ru-rtxa4000-gpu3.txt")
                          .read_text().strip()}]
    fails = [f["message"] for f in gpuhealth.check("n1", facts, 2, "test") if f["status"] == FAIL]
    assert any(m.startswith("a GPU fell off the bus: GPU3 (PCI 0000:5F:00.0)") for m in fails), fails


# --- issue 36: faults without an Xid line, every kernel-log form, NVLink against the part, old drivers' lost GPU --

FAULTS = {  # file: (the GPU named, words of the finding) of the one FAIL it must give
    "issue-open-gpu-kernel-modules-1151-rminitadapter-journal.log": ("PCI 0000:09:00.0", "the driver could not bring it up"),
    "issue-gpu-operator-1146-rminitadapter-syslog.log": ("PCI 0000:0a:00.0", "the driver could not bring it up"),
    "issue-open-gpu-kernel-modules-116-gsp-init-dmesg.log": ("PCI 0000:01:00.0", "the driver could not bring it up"),
    # the cause named (one finding, not a second one for the RmInitAdapter failure that follows)
    "notes-tesla-m40-power-cables-580.log": ("PCI 0000:01:00.0", "auxiliary power is not connected"),
    # an old driver (331) names the GPU by minor number only; the kernel's `nvidia 0000:01:00.0:` line just before
    "notes-gk106m-rminitadapter-journal-minor.log": ("PCI 0000:01:00.0", "/dev/nvidia0"),
    # GPU6 is the driver's numbering; nothing in the log or the node ties it to a bus: said so, never guessed
    "issue-open-gpu-kernel-modules-1230-gsp-heartbeat-gh100.log": (
        "GPU6 (the driver's numbering; no message names",
        "GSP firmware stopped answering",
    ),
    # the node's only GPU (the H100 file): GPU0 is that one
    "issue-bazzite-4449-gsp-heartbeat-journal-no-hostname.log": (
        "GPU0 (the driver's numbering; the node's only GPU) = PCI 00000000:00:06.0 (GPU-",
        "GSP firmware",
    ),
}


@pytest.mark.parametrize("name, want", sorted(FAULTS.items()))
def test_a_gpu_fault_without_an_xid_line_fails_naming_the_gpu(tmp_path, monkeypatch, name, want):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.kmsg = (REAL / "xid" / name).read_text()
    findings = judge(node.probe())
    fails = bad(findings, FAIL)
    assert len(fails) == 1 and want[0] in fails[0]["message"] and want[1] in fails[0]["message"], fails
    assert not any("healthy" in f["message"] for f in findings)
    # the next run, nothing new: seen before, not failed again (a reset GPU does not keep the node drained)
    again = bad(judge(node.probe()))
    assert [f["status"] for f in again] == [WARN] and "seen by an earlier clusterdoc run" in again[0]["message"]


def test_the_drivers_gpu_index_is_mapped_to_its_bus_where_the_log_ties_them(tmp_path, monkeypatch):
    """Xid 119's own words name GPU4 and its PCI id (a real gpud PR's kmsg); the GSP heartbeat lines of the real
    1230 thread, renumbered GPU4 here (planted), are then named by that bus."""
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    gsp_log = (REAL / "xid" / "issue-open-gpu-kernel-modules-1230-gsp-heartbeat-gh100.log").read_text()
    node.kmsg = (REAL / "xid" / "issue-gpud-pr500-xid119-from-gpu4.log").read_text() + gsp_log.replace("GPU6", "GPU4")
    fails = [f["message"] for f in bad(judge(node.probe()), FAIL)]
    assert len(fails) == 2 and fails[0].startswith("XID 119 (GSP RPC timeout) x2 on PCI 0000:9b:00"), fails
    assert "GSP firmware stopped answering" in fails[1] and "GPU4 (the driver's numbering) = PCI 0000:9b:00" in fails[1]


def test_only_the_second_line_of_an_init_failure_still_fails(tmp_path, monkeypatch):
    """A log grepped for `rm_init_adapter` keeps only an RmInitAdapter failure's second line (the real 1146 syslog,
    its other lines dropped here): still the GPU the driver could not bring up, by its bus id."""
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    lines = (REAL / "xid" / "issue-gpu-operator-1146-rminitadapter-syslog.log").read_text().splitlines(True)
    node.kmsg = "".join(x for x in lines if "rm_init_adapter" in x)
    fails = [f["message"] for f in bad(judge(node.probe()), FAIL)]
    assert len(fails) == 1 and "PCI 0000:0a:00.0: the driver could not bring it up" in fails[0], fails


FORMS = {  # file: the XIDs it must name, by status (the kernel-log forms the probe reads)
    "issue-open-gpu-kernel-modules-446-talos-xid62-45.log": [(WARN, "XID 45 "), (FAIL, "XID 62 ")],  # talosctl dmesg
    "gpud-pr46-dmesg-ctime-xid13-109.log": [(WARN, "XID 13 "), (FAIL, "XID 109 ")],  # dmesg -T / --ctime
    "notes-old-driver-xid-without-pci-prefix-syslog.log": [(WARN, "XID 13 (graphics engine exception (often the "
                                                                  "application: an out-of-bounds access)) x1 on PCI 0000:03:00")],
}


@pytest.mark.parametrize("name, want", sorted(FORMS.items()))
def test_each_real_kernel_log_form_parses(tmp_path, monkeypatch, name, want):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.kmsg = (REAL / "xid" / name).read_text()
    found = [(f["status"], f["message"]) for f in judge(node.probe()) if f["message"].startswith("XID")]
    assert [(s, m[: len(w)]) for (s, m), (_, w) in zip(found, want)] == want and len(found) == len(want), found


# the prefixes each tool writes before the driver's message (dmesg --time-format iso, dmesg -T, journalctl in
# English, German, French, Russian and Japanese locales, -o short-iso and short-full, talosctl, kmsg, rsyslog),
# put here before the real Xid 48 message form the issue quotes (planted: no real Xid 48 log in these forms found)
PREFIXES = [
    "2024-11-15T12:02:03,470068+00:00 ",
    "[Fri Nov 15 12:02:03 2024] ",
    "Nov 15 12:02:03 gpu-node-7 kernel: ",
    "Dez 15 12:02:03 gpu-node-7 kernel: ",
    "déc. 15 12:02:03 gpu-node-7 kernel: ",
    "ноя 15 12:02:03 gpu-node-7 kernel: [ 1843.308145] ",
    "11月 15 12:02:03 gpu-node-7 kernel: ",
    "2024-11-15T12:02:03+0000 gpu-node-7 kernel: ",
    "Fri 2024-11-15 12:02:03 UTC gpu-node-7 kernel: ",
    "10.0.0.7: kern: warning: [2024-11-15T12:02:03.470068Z]: ",
    "kern  :warn  : 2024-11-15T12:02:03,470068+00:00 ",
    "4,1843,1843308145,-;",
    "",
]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_double_bit_ecc_xid_fails_in_every_kernel_log_form(tmp_path, monkeypatch, prefix):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.kmsg = prefix + "NVRM: Xid (PCI:0000:19:00): 48, pid=2411, name=python3, DBE (0x1) detected\n"
    fails = [f["message"] for f in bad(judge(node.probe()), FAIL)]
    assert len(fails) == 1 and fails[0].startswith("XID 48 (double-bit ECC error) x1 on PCI 0000:19:00"), fails
    # the same message behind another program's tag is not the driver's
    node.kmsg = (
        prefix.replace("kernel:", "myapp[12]:").replace("kern:", "user:") + "mydrv: NVRM: Xid (PCI:0000:19:00): 48, x\n"
    )
    assert bad(judge(node.probe()), FAIL) == []


def test_the_kmsg_record_of_a_multi_line_report_is_read():
    """/dev/kmsg escapes the newlines inside one printk (the open driver's 3-line report is one record); the real
    NVSentinel lines joined as the kernel writes that record (planted: no real kmsg capture of it was found)."""
    lines = (REAL / "xid" / "issue-nvsentinel-155-fallen-off-no-xid.log").read_text().splitlines()[:3]
    record = "3,1843,1843308145,-;" + "\\x0a".join(x.strip() for x in lines).split("] ", 1)[1]
    assert probe_health.parse_xids(record + "\n")["counts"] == [{"xid": 79, "bus": "0000:b3:00", "n": 1}]
    assert probe_health.parse_xids("<4>[ 1843.308145] NVRM: Xid (PCI:0000:19:00): 48, x\n")["total"] == 1  # dmesg -r


def test_kernel_log_parsing_is_linear_on_hostile_lines():
    import time

    line = "[" + " " * 5000 + "NVRM: " * 20000 + "\n"
    start = time.monotonic()
    assert probe_health.parse_xids(line * 50 + ("kern: " * 40000) + "NVRM: Xid (PCI:0000:19:00): 48, x\n")["total"] == 0
    assert time.monotonic() - start < 2


# --- NVLink judged against the part ---------------------------------------------------------------------------


def _nvlink(tmp_path, monkeypatch, name, text):
    return Node(tmp_path, monkeypatch, name).put("q-x.xml", H100).put("nvlink-s.txt", text=text).probe()


def eight_gpus(facts, n=8, hypervisor=True):
    """The node of a thread whose file keeps only the faulty GPU's block had 8 GPUs (Azure ND40rs_v2: 8 V100-SXM2 in
    a VM; the B200 thread's HGX B200): nvidia-smi's one GPU repeated to n (planted)."""
    facts = json.loads(json.dumps(facts))
    facts["gpu_health"]["smi"]["gpus"] *= n
    facts["gpu_health"]["hypervisor"] = hypervisor
    return facts


def test_sxm_links_down_are_judged_against_what_the_part_has(tmp_path, monkeypatch):
    v100 = (REAL / "nvlink" / "issue-azhpc-diagnostics-73-v100-sxm2-links-3-5-inactive.txt").read_text()
    found = bad(fabric.check_node("n1", eight_gpus(_nvlink(tmp_path, monkeypatch, "v100", v100))))
    assert len(found) == 1 and found[0]["status"] == WARN, found
    assert (
        "GPU3: 4 of 6 up (link 3, 5 inactive)" in found[0]["message"]
        and "Tesla V100-SXM2-32GB has 6" in found[0]["message"]
    )
    # the same GPU in a VM given 4 GPUs of the board: which of the part's links reach its GPUs is the host's, so
    # judged against its peers only (here none to compare): unknown, no finding; on bare metal, judged by the part
    sliced = eight_gpus(_nvlink(tmp_path, monkeypatch, "v100s", v100), n=4)
    assert bad(fabric.check_node("n1", sliced)) == []
    metal = bad(fabric.check_node("n1", eight_gpus(_nvlink(tmp_path, monkeypatch, "v100m", v100), n=4, hypervisor=False)))
    assert len(metal) == 1 and "GPU3: 4 of 6 up" in metal[0]["message"]
    # every GPU of an 8x A100 board lost the same link (planted from the real A100 file): said as one board fault
    a100 = (REAL / "nvlink" / "gpud-nvlink-status-a100.txt").read_text()
    lost = "\n".join(re.sub(r"Link 7: .*", "Link 7: <inactive>", x) for x in a100.splitlines())
    found = bad(fabric.check_node("n1", _nvlink(tmp_path, monkeypatch, "a100", lost)))
    assert len(found) == 1 and "link 7 inactive on every GPU (all 8; a NVIDIA A100-SXM4-80GB has 12)" in found[0]["message"], found
    # an SXM GPU with every link down: FAIL (the real B200 thread)
    b200 = (REAL / "nvlink" / "issue-gpud-1085-b200-gpu2-all-inactive.txt").read_text()
    found = bad(fabric.check_node("n1", eight_gpus(_nvlink(tmp_path, monkeypatch, "b200", b200))))
    assert [f["status"] for f in found] == [FAIL] and "GPU2: every link down" in found[0]["message"]
    # healthy: the real A100 board, 12 of 12 on every GPU, and the summary counts them
    ok = fabric.check_node("n1", _nvlink(tmp_path, monkeypatch, "ok", a100))
    assert bad(ok) == [] and "8 GPU(s) with all NVLinks up" in ok[0]["message"]


def test_pcie_parts_with_links_inactive_by_design_are_no_fault_and_not_all_up(tmp_path, monkeypatch):
    h100 = _nvlink(tmp_path, monkeypatch, "h100", (REAL / "nvlink" / "hpe-h100pcie-x2-nvlink-s.txt").read_text())
    found = fabric.check_node("n1", h100)
    assert bad(found) == [] and "with all NVLinks up" not in found[0]["message"]
    text = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-a)\nNVML: Unable to retrieve NVLink information as all links are inActive\n"
    found = fabric.check_node("n1", _nvlink(tmp_path, monkeypatch, "rtx", text))
    assert bad(found) == [] and "NVLinks up" not in found[0]["message"]
    # 3 RTX A6000, a bridge on 2: the third has no link up by design, not a fault; the 2 bridged ones are all up
    a6000 = _nvlink(tmp_path, monkeypatch, "a6000", (REAL / "nvlink" / "siboehm-bench-3x-a6000-bridge-on-2.txt").read_text())
    found = fabric.check_node("n1", a6000)
    assert bad(found) == [] and "2 GPU(s) with all NVLinks up" in found[0]["message"]


def test_a_saturated_nvlink_error_counter_fails(tmp_path, monkeypatch):
    """nvidia-smi nvlink -e in the V100-era form ("Link 0: CRC Errors: N"); the value 65535 planted (the 16-bit
    counter's ceiling: it no longer counts, so the link's real error rate is unknown)."""
    text = (
        "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-a)\n\t Link 0: Replay Errors: 0\n\t Link 0: Recovery Errors: 0\n"
        "\t Link 0: CRC Errors: 65535\n\t Link 1: Replay Errors: 3\n"
    )
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100).put("nvlink-e.txt", text=text)
    found = bad(fabric.check_node("n1", node.probe()))
    assert [f["status"] for f in found] == [FAIL, WARN], found
    assert "GPU0 link 0 CRC Errors at 65535" in found[0]["message"]


# --- a lost GPU on a driver without compute_cap; nvidia-smi's lower-case "for gpu" --------------------------------


def test_an_old_drivers_lost_gpu_keeps_the_other_gpus_and_is_reported_once(tmp_path, monkeypatch):
    from clusterdoc.checks import arch
    from clusterdoc.probe.gpus import probe_gpus

    lost = (REAL / "lost" / "owod-81-gpu-is-lost.txt").read_text()
    node = Node(tmp_path, monkeypatch)
    # driver 470: --query-gpu with compute_cap is refused; without it, the GPUs it reaches and the lost one (exit 15)
    node.bin.joinpath("nvidia-smi").write_text(
        '#!/bin/sh\ncase "$*" in\n*compute_cap*) echo \'Field "compute_cap" is not a valid field to query.\'; exit 2 ;;\n'
        f"--query-gpu=*) echo '0, Tesla V100-SXM2-32GB, 32510, 470.57.02'; echo '{lost.strip()}'; exit 15 ;;\n"
        f"-q*) cat {node.dir}/q-x.xml; echo '{lost.strip()}' >&2; exit 15 ;;\nesac\n"
    )
    node.put("q-x.xml", H100)
    facts = node.probe()
    facts["gpus"] = probe_gpus(10)
    assert [(g["index"], g["capability"]) for g in facts["gpus"]] == [(0, "7.0")]
    assert [f for f in arch.check("n1", facts) if f["status"] == FAIL] == []
    lost_findings = [f for f in judge(facts) if "fell off the bus" in f["message"]]
    assert len(lost_findings) == 1 and "PCI 0000:02:00.0" in lost_findings[0]["message"]


def test_lower_case_gpu_keeps_the_bus_id():
    from clusterdoc.probe.gpus import lost_gpu

    line = (REAL / "lost" / "open-gpu-kernel-modules-246-lowercase-gpu.txt").read_text().strip()
    assert lost_gpu(line)["bus"] == "0000:01:00.0"
    assert (
        lost_gpu(
            "Unable to determine the device handle for gpu 0000:01:00.0: GPU is lost.  Reboot the system "
            "to recover this GPU"
        )["bus"]
        == "0000:01:00.0"
    )


@pytest.mark.parametrize("name", ["gpud-kmsg.1.log", "notes-gb202-healthy-journal-ltr.log", "mleng-xid63.log"])
def test_a_healthy_real_kernel_log_gives_no_finding(tmp_path, monkeypatch, name):
    node = Node(tmp_path, monkeypatch).put("q-x.xml", H100)
    node.kmsg = (REAL / "xid" / name).read_text()
    findings = judge(node.probe())
    assert bad(findings) == [] and any("1 GPU(s) healthy" in f["message"] for f in findings)
