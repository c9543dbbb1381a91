"""nccl: each rule from facts dicts (no SSH), one planted problem at a time; NCCL's own list syntax; the probe's
facts of real wheels (nvidia-nccl-cu12 and -cu13 from the registry, cached like the other real-package tests)."""

import copy
import json
import os
import subprocess
import sys

import pytest

from clusterdoc.checks import FAIL, OK, WARN, nccl
from clusterdoc.probe import nccl as nccl_probe
from clusterdoc.doctor.facts import Gathered
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.doctor.rules import judge
from clusterdoc.untrusted import clean_facts
from tests.test_checks_netres import NODES, cluster, problems
from tests.test_gcc_limit_real import pip_target

WHEELS = ["nvidia-nccl-cu12==2.32.3", "nvidia-nccl-cu13==2.32.3"]  # ~350 + 300 MB, downloaded once


def with_nccl(f, **over):
    f["nccl"] = {"env": {}, "wheels": [], "torch_pin": None, "ld_path": [], "preload": [], "gids": []}
    f["nccl"].update(over)
    f["torch"] = {"version": "2.5.1+cu124", "cuda": "12.4", "nccl": "2.21.5", "nccl_lib": None, "path": None}
    f["gpus"] = [{"index": i, "name": "NVIDIA A100", "capability": "8.0", "memory_mib": 81920} for i in range(2)]
    f["env"] = {}
    return f


def run(facts, tasks_per_node=None, checks=("nccl", "net")):
    facts = {n: clean_facts(f) for n, f in facts.items()}
    g = Gathered(list(facts), {n: {"status": "ok", "message": "", "elapsed": 0.1, "exit_code": 0} for n in facts},
                 facts, list(checks))
    return judge(g, CheckOptions(tasks_per_node=tasks_per_node))


def healthy():
    facts = cluster()
    for f in facts.values():
        with_nccl(f, wheels=[{"name": "nvidia-nccl-cu12", "version": "2.21.5", "path": "/venv/site-packages",
                              "lib": "/venv/site-packages/nvidia/nccl/lib/libnccl.so.2"}],
                  torch_pin={"nvidia-nccl-cu12": "2.21.5"})
    return facts


def test_healthy_cluster_has_no_finding():
    findings = run(healthy(), tasks_per_node=2)
    assert problems(findings) == []
    assert any(f["check"] == "nccl" and "nvidia-nccl-cu12 2.21.5" in f["message"] for f in findings)


def test_parse_if_list_as_nccl():
    assert nccl.parse_if_list("^=mlx5_0:1,mlx5_1") == (True, True, [("mlx5_0", 1), ("mlx5_1", -1)])
    assert nccl.parse_if_list("mlx5_0:x,,:2") == (False, False, [("mlx5_0", 0)])  # atoi("x") = 0; ":2" has no name
    sel = lambda spec, dev, port: nccl.if_selected(dev, port, nccl.parse_if_list(spec))  # noqa: E731
    assert sel("mlx5", "mlx5_10", 1) and not sel("=mlx5_1", "mlx5_10", 1)
    assert sel("mlx5_0:1", "mlx5_0", 1) and not sel("mlx5_0:1", "mlx5_0", 2)
    assert not sel("^mlx5_0", "mlx5_0", 1) and sel("^mlx5_0:2", "mlx5_0", 1)
    assert sel("", "anything", 1) and not sel("^", "anything", 1)


def test_two_wheels_in_one_environment():
    facts = healthy()
    facts["node2"]["nccl"]["wheels"].append({"name": "nvidia-nccl-cu13", "version": "2.27.7",
                                            "path": "/venv/site-packages",
                                            "lib": "/venv/site-packages/nvidia/nccl/lib/libnccl.so.2"})
    findings = run(facts)
    assert problems(findings) == [("nccl", FAIL, "node2")]
    bad = next(f for f in findings if f["status"] == FAIL)
    assert "nvidia-nccl-cu12 2.21.5 and nvidia-nccl-cu13 2.27.7 are both installed" in bad["message"]
    assert bad["fix"] == ("on node2: pip uninstall -y nvidia-nccl-cu12 nvidia-nccl-cu13 && pip install "
                          "nvidia-nccl-cu12==2.21.5 (the one torch was built against)")


def test_torch_loads_a_foreign_libnccl():
    facts = healthy()
    t = facts["node3"]["torch"]
    t["nccl"], t["nccl_lib"] = "2.18.3", "/opt/nccl/lib/libnccl.so.2.18.3"
    facts["node3"]["nccl"]["ld_path"] = [{"path": "/opt/nccl/lib/libnccl.so.2",
                                          "realpath": "/opt/nccl/lib/libnccl.so.2.18.3"}]
    findings = run(facts)
    assert problems(findings) == [("nccl", FAIL, "node3")]
    bad = next(f for f in findings if f["status"] == FAIL)
    assert "loads /opt/nccl/lib/libnccl.so.2.18.3 (NCCL 2.18.3, through LD_LIBRARY_PATH)" in bad["message"]
    assert "built against 2.21.5" in bad["message"] and "/opt/nccl/lib out of LD_LIBRARY_PATH" in bad["fix"]
    # the same file, torch not importable on the node: judged from the paths
    t["nccl"], t["nccl_lib"] = None, None
    assert problems(run(facts)) == [("nccl", WARN, "node3")]


def test_unknown_nccl_variable_named_with_the_closest():
    facts = healthy()
    facts["node4"]["nccl"]["env"] = {"NCCL_SOCKET_IFACE": "eth0", "NCCL_DEBUG": "INFO", "NCCL_OFI_USE_X": "1",
                                     "NCCL_VERSION": "2.21.5"}
    findings = run(facts)
    assert problems(findings) == [("nccl", WARN, "node4")]
    assert "did you mean NCCL_SOCKET_IFNAME?" in next(f["message"] for f in findings if f["status"] == WARN)


def ib(dev, port, state="ACTIVE", layer="InfiniBand"):
    return {"device": dev, "port": port, "state": state, "link_layer": layer}


def test_ib_hca_against_the_nodes_ports():
    def hca(spec, ports):
        facts = healthy()
        facts["node1"]["net"]["ib"] = ports
        facts["node1"]["nccl"]["env"] = {"NCCL_IB_HCA": spec}
        return [(f["status"], f["message"]) for f in run(facts, checks=["nccl"]) if f["status"] != OK]

    two = [ib("mlx5_0", "1"), ib("mlx5_1", "1")]
    assert hca("mlx5", two) == [] and hca("=mlx5_0:1", two) == [] and hca("^mlx5_1", two) == []
    (status, msg), = hca("mlx5_0,mlx5_4", two)
    assert status == FAIL and msg.startswith("NCCL_IB_HCA=mlx5_0,mlx5_4 (set on the node) names mlx5_4, which node1 does not have")
    assert hca("=mlx5", two)[0][0] == FAIL  # exact: no device is called mlx5
    assert "names mlx5_0:2" in hca("mlx5_0:2", two)[0][1]  # no port 2
    (status, msg), = hca("^mlx5", two)
    assert status == FAIL and "leaves NCCL no ACTIVE InfiniBand/RoCE port" in msg
    assert "leaves NCCL no ACTIVE" in hca("mlx5_1", [ib("mlx5_0", "1"), ib("mlx5_1", "1", "DOWN")])[0][1]


def test_gid_index_on_roce():
    def gid(index, table):
        facts = healthy()
        facts["node2"]["net"]["ib"] = [ib("mlx5_0", "1", layer="Ethernet")]
        facts["node2"]["nccl"]["env"] = {"NCCL_IB_GID_INDEX": str(index)}
        facts["node2"]["nccl"]["gids"] = [dict(device="mlx5_0", port="1", **g) for g in table]
        return [(f["status"], f["message"]) for f in run(facts, checks=["nccl"]) if f["status"] != OK]

    table = [{"index": 0, "gid": "fe80:0000:0000:0000:0000:0000:0000:0001", "type": "IB/RoCE v1"},
             {"index": 1, "gid": "fe80:0000:0000:0000:0000:0000:0000:0001", "type": "RoCE v2"},
             {"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:c612:0003", "type": "RoCE v2"}]
    assert gid(3, table) == []
    (status, msg), = gid(5, table + [{"index": 5, "gid": None, "type": None}])
    assert status == FAIL and "has no entry 5; its RoCE v2 entries: 1 (fe80:" in msg
    (status, msg), = gid(0, table)
    assert status == WARN and "IB/RoCE v1" in msg


def test_tasks_per_node_against_gpus_and_visible_devices():
    facts = healthy()
    findings = run(facts, tasks_per_node=4, checks=["nccl"])
    assert problems(findings) == [("nccl", FAIL, n) for n in NODES]
    bad = next(f for f in findings if f["status"] == FAIL and f["node"] == "node1")
    assert bad["message"].startswith("4 tasks per node on node1, which has 2 GPU(s): local ranks 2..3")
    assert "--tasks-per-node 2" in bad["fix"]
    facts = healthy()
    facts["node2"]["env"]["CUDA_VISIBLE_DEVICES"] = "1"
    findings = run(facts, tasks_per_node=2, checks=["nccl"])
    assert problems(findings) == [("nccl", FAIL, "node2")]
    assert "(CUDA_VISIBLE_DEVICES=1 (set on the node) shows 1)" in next(f["message"] for f in findings if f["status"] == FAIL)


def test_socket_ifname_on_loopback_reaches_no_other_node():
    facts = healthy()
    facts["node3"]["net"]["ifname_env"]["NCCL_SOCKET_IFNAME"] = "lo"
    findings = run(facts)
    assert problems(findings) == [("net", FAIL, "node3")]
    bad = next(f for f in findings if f["status"] == FAIL)
    assert "NCCL_SOCKET_IFNAME=lo (set on the node) on node3 picks lo (127.0.0.1/8), the loopback interface" in bad["message"]
    assert bad["fix"].startswith("on node3: set NCCL_SOCKET_IFNAME to the cluster network's interface (=eth0")
    facts = healthy()  # `^eth` leaves lo to NCCL as well (only IPv6 loopback is skipped)
    facts["node1"]["net"]["ifname_env"]["NCCL_SOCKET_IFNAME"] = "^eth"
    assert problems(run(facts)) == [("net", FAIL, "node1")]


@pytest.mark.slow
def test_probe_finds_both_real_wheels(tmp_path):
    """The real nvidia-nccl-cu12 and -cu13 wheels installed side by side on the python path (as pip leaves
    them: one nvidia/nccl/lib/libnccl.so.2), seen by the probe without importing anything."""
    site = pip_target("nccl-cu12-cu13", WHEELS)
    env = dict(os.environ, PYTHONPATH=str(site), NCCL_SOCKET_IFACE="eth0")
    out = subprocess.run([sys.executable, "-m", "clusterdoc.probe", "--timeout", "20"], env=env,
                         capture_output=True, text=True, timeout=120).stdout
    facts = json.loads(out)["nccl"]
    assert [(w["name"], w["version"], w["lib"]) for w in facts["wheels"]] == [
        ("nvidia-nccl-cu12", "2.32.3", str(site / "nvidia/nccl/lib/libnccl.so.2")),
        ("nvidia-nccl-cu13", "2.32.3", str(site / "nvidia/nccl/lib/libnccl.so.2"))]
    assert facts["env"]["NCCL_SOCKET_IFACE"] == "eth0"
    f = copy.deepcopy(healthy()["node1"])
    f["nccl"] = facts
    assert problems(run({"node1": f}, checks=["nccl"])) == [("nccl", FAIL, "node1"), ("nccl", WARN, "node1")]


def test_runtime_hidden_by_a_container():
    facts = healthy()
    f = facts["node2"]
    f["net"]["ib"] = [ib("mlx5_0", "1")]
    f["nccl"]["runtime"] = {"driver_module": "470.239.06", "sys_infiniband": ["mlx5_0"], "dev_infiniband": None}
    f["driver"] = "470.239.06"  # nvidia-smi answers: the cuda check judges the driver, not this one
    assert problems(run(facts, checks=["nccl"])) == []  # not wrapped, not in a container: the host's own view
    f["wrapped"] = "apptainer exec train.sif"
    f["torch"]["cuda"], f["driver"] = "12.8", None  # the image's torch; no nvidia-smi inside
    findings = [x for x in run(facts, checks=["nccl"]) if x["status"] != OK]
    assert [(x["node"], x["status"]) for x in findings] == [("node2", FAIL)] * 2
    text = " | ".join(x["message"] for x in findings)
    assert "the job's environment (apptainer exec train.sif) has no /dev/infiniband" in text
    assert "built for CUDA 12.8 but the host's NVIDIA kernel module on node2 is 470.239.06" in text
    assert "--bind /dev/infiniband" in findings[0]["fix"]


def test_probe_reads_the_nvidia_kernel_module_version():
    """The two forms /proc/driver/nvidia/version has (public outputs: NVIDIA forum posts, nvidia-open issues)."""
    import re

    from clusterdoc.probe import nccl as probe_nccl
    src = open(probe_nccl.__file__).read()
    pattern = re.search(r're\.search\(r"(.+?)", read', src).group(1).replace("\\\\", "\\")
    for line, version in (("NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 19:21:56 UTC 2022",
                           "515.76"),
                          ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  "
                           "(dvs-builder@U16)  Tue May 20 2025", "575.57.08")):
        assert re.search(pattern, line).group(1) == version


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the wrapper mounts a tmpfs in its own mount namespace (root)")
def test_check_under_a_wrapper_judges_the_wrapped_environment(tmp_path):
    """No container runtime runs in this sandbox (Debian's podman 4.3: `crun: setrlimit RLIMIT_NOFILE: Operation
    not permitted`), so the wrapper is a plain command prefix that does what a container does to the ranks: its own
    64 MiB /dev/shm (Docker's default), the image's python packages (both real NCCL wheels)."""
    site = pip_target("nccl-cu12-cu13", WHEELS)
    wrap = tmp_path / "container.sh"
    wrap.write_text("#!/bin/sh\nexec unshare --mount --propagation private sh -c "
                    f"'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec env PYTHONPATH={site} \"$@\"' wrap \"$@\"\n")
    wrap.chmod(0o755)
    base = [sys.executable, "-m", "clusterdoc", "check", "--local", "--json", "--checks", "nccl,resources"]
    plain = json.loads(subprocess.run(base, capture_output=True, text=True, timeout=120).stdout)
    p = subprocess.run(base + ["--wrap", f"{wrap}", "--python", sys.executable], capture_output=True, text=True,
                       timeout=120)
    wrapped = json.loads(p.stdout)
    assert wrapped["nodes"][0]["facts"]["wrapped"] == str(wrap)
    bad = {(f["check"], f["status"]) for f in wrapped["findings"] if f["status"] != OK}
    assert ("nccl", FAIL) in bad and ("resources", FAIL) in bad, wrapped["findings"]
    text = " | ".join(f["message"] for f in wrapped["findings"])
    assert "nvidia-nccl-cu12 2.32.3 and nvidia-nccl-cu13 2.32.3 are both installed" in text and "64 MiB" in text
    assert not any("both installed" in f["message"] or "64 MiB" in f["message"] for f in plain["findings"])


def test_a_fifo_or_blanks_as_torchs_metadata_neither_block_nor_stall_the_probe(tmp_path):
    """torch's METADATA is the node's file: a FIFO there is not waited on (the probe answers, no pin), and a
    METADATA of blank lines after `Requires-Dist:` is read in linear time."""
    import time

    info = tmp_path / "torch-2.5.1.dist-info"
    info.mkdir()
    os.mkfifo(info / "METADATA")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "clusterdoc.probe", "--timeout", "5"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert json.loads(p.stdout)["nccl"]["torch_pin"] == {}
    (info / "METADATA").unlink()
    (info / "METADATA").write_text(("Requires-Dist:" + " " * 200 + "\n" * 50) * 1000)
    t0 = time.monotonic()
    assert nccl_probe._torch_pin([str(tmp_path)]) == {}
    assert time.monotonic() - t0 < 1.0
    (info / "METADATA").write_text("Requires-Dist: nvidia-nccl-cu12==2.21.5; platform_system == \"Linux\"\n")
    assert nccl_probe._torch_pin([str(tmp_path)]) == {"nvidia-nccl-cu12": "2.21.5"}


def test_a_probe_stuck_past_its_budget_ends_itself():
    """The payload arms its own end (probe/payload.py MAIN): a probe stuck on something of the node's is gone
    a little after the head's deadline for the node, never left running there."""
    import time

    from clusterdoc.doctor import payload

    stuck = b"import os, sys, time\ndef main():\n    time.sleep(120)\n    return 0\n" + payload.MAIN.encode()
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-", "--budget", "1"], input=stuck, capture_output=True, timeout=60)
    assert p.returncode == -14 and time.monotonic() - t0 < 20, (p.returncode, p.stderr)  # SIGALRM
