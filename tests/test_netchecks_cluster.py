"""net, port, resources, clock, files end to end on the one-machine test cluster.

On the 127.0.0.x cluster (one network stack) the port test, resources and files show; the faults that need
each node in its own network namespace (a node's own name on 127.0.1.1, a firewall dropping the rendezvous
port, another MTU, a small /dev/shm) run once the test cluster has the `netns` node spec keys, and are
skipped with that reason until then."""

import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.cluster

NETNS_KEYS = ("hosts", "mtu", "ifname", "firewall", "shm_mib", "memlock_kib", "clock_offset_s", "link_down")


ROOT = Path(__file__).resolve().parents[1]


def netns_ready() -> bool:
    spec = Path(__file__).parent / "cluster" / "spec.py"
    text = spec.read_text() if spec.exists() else ""
    return all(f'"{k}"' in text for k in NETNS_KEYS)


needs_netns = pytest.mark.skipif(not netns_ready(), reason="needs the test cluster's network namespaces (branch "
                                 "netns: node spec keys hosts, mtu, firewall, shm_mib, ...), not merged yet")


def check(*args, timeout=180):
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--json", *map(str, args)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


def not_ok(doc):
    return sorted((f["check"], f["status"], f["node"]) for f in doc["findings"] if f["status"] != "ok")


def free_port() -> int:
    """A port with port + 1 free too, on every node address (they share this machine's stack here)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("0.0.0.0", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("0.0.0.0", port))
                b.bind(("0.0.0.0", port + 1))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair")


def names(cluster):
    return ",".join(n.name for n in cluster.nodes)


def test_port_resources_clock_net_ok_on_the_cluster(cluster):
    port = free_port()
    code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--port", port,
                      "--checks", "ssh,net,port,resources,clock", "--timeout", 30)
    assert not_ok(doc) == [] and code == 0, not_ok(doc)
    for n in doc["nodes"]:
        facts = n["facts"]
        assert facts["malformed"] == []
        assert facts["resources"]["shm"]["total_mib"] > 0 and facts["net"]["ifaces"]
        assert all(c["ok"] for c in facts["port"]["connect"])
    first = doc["nodes"][0]["facts"]["port"]["listen"]
    assert first[0]["port"] == port and first[0]["status"] == "listening" and first[0]["accepted"] == 3
    assert doc["summary"]["checks"] == ["ssh", "net", "port", "resources", "clock"]


def test_rendezvous_port_in_use_on_the_first_node(cluster):
    """A leftover holding the port on node1's address: the first node cannot listen there."""
    port = free_port()
    first = cluster.nodes[0]
    # the leftover runs on node1 (in its network namespace), as a stray rank would
    holder = subprocess.Popen(["ip", "netns", "exec", cluster.netns(first), sys.executable, "-c",
                               "import socket, sys, time; s = socket.socket(); "
                               f"s.bind(('{first.addr}', {port})); s.listen(8); print('held', flush=True); "
                               "time.sleep(120)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--port", port,
                          "--checks", "ssh,port", "--timeout", 30)
    finally:
        holder.kill()
        holder.wait()
    assert code == 1
    assert not_ok(doc) == [("port", "fail", first.name)]
    f = next(f for f in doc["findings"] if f["status"] == "fail")
    assert f"port {port} is already in use on {first.name}" in f["message"]
    assert f"ss -ltnp 'sport = :{port}'" in f["fix"]


def test_files_hashed_on_every_node(cluster, tmp_path):
    from clusterdoc import doctor

    script = tmp_path / "train.py"   # the nodes share this machine's /tmp: the same file everywhere
    script.write_text("print('hi')\n")
    opts = doctor.CheckOptions(nodelist=[n.name for n in cluster.nodes], ssh_config=str(cluster.ssh_config),
                               checks=["ssh"], files=[sys.executable, str(script), "/nonexistent/job.py"],
                               timeout=30, progress=False)
    report = doctor.check(opts)
    bad = [(f["check"], f["status"], f["node"]) for f in report.findings if f["status"] != "ok"]
    assert bad == [("files", "fail", "node[1-4]")]
    assert "/nonexistent/job.py is not usable on node[1-4]" in report.failures("files")[0]["message"]
    facts = report.nodes[0].facts["files"]
    assert len({n.facts["files"][str(script)]["sha256"] for n in report.nodes}) == 1
    assert facts[sys.executable]["sha256"]


@needs_netns
def test_healthy_netns_cluster_is_all_ok(cluster):
    code, doc = check("hostfiles/testcluster.txt", "--ssh-config", cluster.ssh_config, "--port", 29400,
                      "--mpirun", cluster.mpirun, "--timeout", 30)
    assert not_ok(doc) == [] and code == 0, not_ok(doc)


@needs_netns
def test_netns_faults_named_exactly_with_fixes(cluster):
    """node2's own name on 127.0.1.1; node1 (the first host) drops TCP to 29400; node4: 64 MiB /dev/shm, MTU 1400."""
    plant = {"node1": {"firewall": {"drop_tcp": [29400]}},
             "node2": {"hosts": ["127.0.1.1\tnode2"]},
             "node4": {"shm_mib": 64, "mtu": 1400}}
    with cluster.planted(plant):
        code, doc = check("hostfiles/testcluster.txt", "--ssh-config", cluster.ssh_config, "--port", 29400,
                          "--mpirun", cluster.mpirun, "--timeout", 30)
    assert code == 1
    assert not_ok(doc) == [("net", "fail", "node2"), ("net", "fail", "node4"), ("port", "fail", "node1"),
                           ("resources", "fail", "node4")], not_ok(doc)
    text = {f["check"] + " " + f["node"]: (f["message"], f["fix"]) for f in doc["findings"] if f["status"] != "ok"}
    assert "node2 resolves its own name node2 to 127.0.1.1 (Debian's default /etc/hosts line)" in text["net node2"][0]
    assert "timed out" in text["port node1"][0] and "open TCP port 29400 on node1" in text["port node1"][1]
    assert "MTU differs" in text["net node4"][0] and "1400 on node4" in text["net node4"][0]
    assert "/dev/shm on node4 is 64 MiB" in text["resources node4"][0]
    # the mpirun backend's preflight: the same findings, and nothing submitted
    with cluster.planted(plant), tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "mpirun", "--nodes", "4",
                            "--hostfile", str(ROOT / "hostfiles/testcluster.txt"), "--ssh-config",
                            str(cluster.ssh_config), "--mpirun", str(cluster.mpirun), "--port", "29400",
                            str(ROOT / "jobs/train_ddp.py")], capture_output=True, text=True, timeout=300, cwd=tmp)
        assert p.returncode == 1 and "preflight found problems; job not submitted" in p.stderr, p.stderr[-3000:]
        for line in ("[FAIL] net node2: node2 resolves its own name node2 to 127.0.1.1",
                     "[FAIL] port node1: the rendezvous node1:29400", "[FAIL] resources node4: /dev/shm on node4",
                     "MTU differs"):
            assert line in p.stderr, (line, p.stderr[-3000:])
        assert not (Path(tmp) / "clusterdoc-jobs").exists()
    assert all(fix for _, fix in text.values())


@needs_netns
def test_netns_clock_offset_and_memlock(cluster):
    with cluster.planted({"node3": {"clock_offset_s": 120}}):
        code, doc = check("hostfiles/testcluster.txt", "--ssh-config", cluster.ssh_config, "--checks", "ssh,clock",
                          "--timeout", 30)
    assert not_ok(doc) == [("clock", "fail", "node3")]
    assert "node3's clock is 120" in next(f["message"] for f in doc["findings"] if f["status"] == "fail")


@needs_netns
def test_netns_interface_down_and_named(cluster):
    with cluster.planted({"node3": {"link_down": True}}):
        code, doc = check("hostfiles/testcluster.txt", "--ssh-config", cluster.ssh_config, "--checks", "ssh,net",
                          "--timeout", 20)
    assert ("ssh", "fail", "node3") in not_ok(doc)   # its only link is down: unreachable, and said so
