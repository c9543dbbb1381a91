"""The one-machine test cluster: real sshd per node, node spec realised as real files, MPICH, Slurm."""
from __future__ import annotations

import ipaddress
import os
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster import Cluster, cuda_facts, fakes, limits, net, spec

FACTS = r"""
echo "hostname=$(hostname)"
echo "uname_r=$(uname -r)"
echo "osrelease=$(cat /proc/sys/kernel/osrelease)"
echo "gpus=$(nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits | head -1)"
echo "gpu_count=$(nvidia-smi -L | wc -l)"
echo "banner=$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*')"
echo "nvcc=$(nvcc --version | grep release)"
echo "gcc=$(gcc -dumpfullversion)"
echo "cuda_home=$CUDA_HOME"
echo "arch=$TORCH_CUDA_ARCH_LIST"
echo "host_config=$(grep -o '__GNUC__ > [0-9]*' $CUDA_HOME/include/crt/host_config.h | head -1)"
echo "python=$(command -v python3 || echo none)"
if command -v python3 >/dev/null; then
  python3 -c 'import torch, platform; print("torch=%s %s %s %d %s %s" % (torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_capability(0) if torch.cuda.is_available() else None, torch.cuda.nccl.version())); print("platform_release=" + platform.release())'
fi
"""


def facts(cluster, node: str) -> dict:
    proc = cluster.ssh(node, FACTS)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


@pytest.mark.cluster
def test_every_node_has_its_own_hostname_and_the_default_spec(cluster):
    head = ipaddress.ip_address(cluster.head_addr)
    assert head in ipaddress.ip_network("198.18.0.0/15") and cluster.head_addr.endswith(".1")
    assert [(n.name, n.addr) for n in cluster.nodes] == [(f"node{i}", str(head + i)) for i in range(1, 5)]
    for node in cluster.nodes:
        f = facts(cluster, node.name)
        assert f["hostname"] == node.name
        assert f["uname_r"] == f["osrelease"] == f["platform_release"] == "5.15.0-105-generic"
        assert f["gpus"] == "0, NVIDIA A100-SXM4-80GB, 8.0, 81920, 550.54.14"
        assert f["gpu_count"] == "8"
        assert f["banner"] == "CUDA Version: 12.4"
        assert f["nvcc"] == "Cuda compilation tools, release 12.1, V12.1.105"
        assert f["gcc"] == "11.4.0"
        assert f["cuda_home"] == "/usr/local/cuda-12.1"
        assert f["arch"] == "8.0"
        assert f["host_config"] == "__GNUC__ > 12"
        assert f["torch"] == "2.3.1+cu121 12.1 True 8 (8, 0) (2, 20, 5)"


@pytest.mark.cluster
def test_nvidia_smi_answers_any_field_order_and_refuses_unknown_fields(cluster):
    out = cluster.ssh("node1", "nvidia-smi --query-gpu=driver_version,memory.total,index --format=csv -i 3")
    assert out.stdout.splitlines() == ["driver_version, memory.total [MiB], index", "550.54.14, 81920 MiB, 3"]
    bad = cluster.ssh("node1", "nvidia-smi --query-gpu=index,bogus --format=csv")
    assert bad.returncode == 2 and 'Field "bogus" is not a valid field to query.' in bad.stdout


@pytest.mark.cluster
def test_planting_changes_one_node_and_restoring_brings_it_back(cluster):
    change = {
        "node2": {"kernel": "5.4.0-150-generic", "driver": "470.182.03", "toolkits": ["11.8", "12.4"],
                  "path_toolkit": "11.8", "ld_toolkit": "12.4", "cuda_home": "11.8", "gcc": "13.2.0",
                  "gpus": [{"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 2}],
                  "torch": {"cuda": "12.4", "version": "2.4.0+cu124"}, "env": {"TORCH_CUDA_ARCH_LIST": "Ampere"}},
        "node3": {"python": "none"},
    }
    with cluster.planted(change):
        f2 = facts(cluster, "node2")
        assert f2["hostname"] == "node2" and f2["uname_r"] == "5.4.0-150-generic"
        assert f2["platform_release"] == "5.4.0-150-generic"
        # driver 470 predates the compute_cap query field, like a real one
        assert "not a valid field" in f2["gpus"]
        assert f2["gpu_count"] == "2" and f2["banner"] == "CUDA Version: 11.7"
        assert f2["nvcc"] == "Cuda compilation tools, release 11.8, V11.8.89"
        assert f2["gcc"] == "13.2.0" and f2["cuda_home"] == "/usr/local/cuda-11.8" and f2["arch"] == "Ampere"
        assert f2["host_config"] == "__GNUC__ > 11"
        # torch built for CUDA 12.4 does not initialise on a 470 driver
        assert f2["torch"].startswith("2.4.0+cu124 12.4 False 0")
        ld = cluster.ssh("node2", "echo $LD_LIBRARY_PATH; readlink /usr/local/cuda; ls /usr/local/cuda-12.4/lib64")
        assert ld.stdout.split() == ["/usr/local/cuda-12.4/lib64", "cuda-11.8", "libcudart.so", "libcudart.so.12",
                                     "libcudart.so.12.4.131"]
        f3 = facts(cluster, "node3")
        assert f3["python"] == "none" and "torch" not in f3
        assert cluster.ssh("node3", "ls /usr/bin/python3").returncode != 0
        assert facts(cluster, "node1")["uname_r"] == "5.15.0-105-generic"  # the others are untouched
        with cluster.planted({"node2": {"kernel": "6.1.0-18-amd64"}}):  # plants nest
            assert cluster.ssh("node2", "uname -r").stdout.strip() == "6.1.0-18-amd64"
        assert cluster.ssh("node2", "uname -r; gcc -dumpfullversion").stdout.split() == ["5.4.0-150-generic", "13.2.0"]
    for name in ("node2", "node3"):
        f = facts(cluster, name)
        assert f["uname_r"] == "5.15.0-105-generic" and f["gpu_count"] == "8" and f["python"] == "/usr/bin/python3"
        assert f["torch"] == "2.3.1+cu121 12.1 True 8 (8, 0) (2, 20, 5)"


@pytest.mark.cluster
def test_hang_fail_deepspeed_and_real_torch(cluster):
    plant = {"node1": {"hang": ["nvidia-smi"], "fail": ["nvcc"]},
             "node2": {"deepspeed": {"version": "0.14.4", "ops": ["cpu_adam", "async_io"]}, "libaio": False},
             "node4": {"torch": "real"}}
    with cluster.planted(plant):
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            cluster.ssh("node1", "nvidia-smi", timeout=2)
        assert time.monotonic() - t0 < 10
        failed = cluster.ssh("node1", "nvcc --version")
        assert failed.returncode != 0 and "nvcc" in failed.stderr
        ds = cluster.ssh("node2", "python3 -c 'import deepspeed.git_version_info as g; "
                                  "print(g.version, sorted(k for k, v in g.installed_ops.items() if v))'; "
                                  "ls /usr/local/lib/libaio.so.1")
        assert ds.stdout.splitlines()[0] == "0.14.4 ['async_io', 'cpu_adam']"
        assert ds.returncode != 0  # libaio planted absent
        real = cluster.ssh("node4", "python3 -c 'import torch, sys; print(torch.__version__, sys.prefix)'", timeout=120)
        assert real.returncode == 0, real.stderr
        assert "+cpu" in real.stdout and ".venv" in real.stdout
    assert cluster.ssh("node1", "nvcc --version").returncode == 0
    assert cluster.ssh("node2", "ls /usr/local/lib/libaio.so.1").returncode == 0


@pytest.mark.cluster
def test_node_to_node_ssh_and_a_broken_mesh_pair(cluster):
    cmd = "for n in node1 node2 node3 node4; do ssh -o BatchMode=yes $n hostname || echo FAIL-$n; done"
    assert cluster.ssh("node1", cmd).stdout.split() == ["node1", "node2", "node3", "node4"]
    with cluster.planted({"node1": {"mesh_broken_to": ["node3"]}}):
        out = cluster.ssh("node1", cmd + " 2>&1")
        assert "Host key verification failed" in out.stdout
        assert [w for w in out.stdout.split() if w.startswith(("node", "FAIL"))] == \
            ["node1", "node2", "FAIL-node3", "node4"]
        assert cluster.ssh("node3", "ssh node1 hostname").stdout.strip() == "node1"  # only that direction
    assert cluster.ssh("node1", "ssh node3 hostname").stdout.strip() == "node3"


@pytest.mark.cluster
def test_mpirun_reaches_every_node_through_the_cluster_ssh_config(cluster):
    for by in ("name", "addr"):
        hostfile = cluster.hostfile("mpich", by=by)
        proc = subprocess.run(cluster.mpirun_cmd("-n", "4", "-ppn", "1", "hostname", hostfile=hostfile),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert sorted(proc.stdout.split()) == ["node1", "node2", "node3", "node4"]


@pytest.mark.cluster
def test_srun_ranks_land_on_their_nodes_and_sbatch_runs(cluster, tmp_path):
    env = dict(os.environ, **cluster.env())
    proc = subprocess.run(["srun", "-N", "4", "--ntasks-per-node=1", "sh", "-c",
                           "echo $SLURM_PROCID $(hostname) $SLURM_NTASKS"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == [f"{i} node{i + 1} 4" for i in range(4)]
    gpus = subprocess.run(["srun", "-N", "2", "--gpus-per-node=2", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert gpus.stdout.split() == ["0,1", "0,1"], gpus.stderr
    script = tmp_path / "job.sh"
    out = tmp_path / "job.out"
    script.write_text(f"#!/bin/sh\n#SBATCH -N 2\n#SBATCH -o {out}\nsrun hostname\n")
    job = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        state = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, env=env).stdout
        if "JobState=COMPLETED" in state or "JobState=FAILED" in state:
            break
        time.sleep(0.5)
    assert "JobState=COMPLETED" in state
    assert sorted(out.read_text().split()) == ["node1", "node2"]


# ---- the nodes' own network (tests/cluster/net.py) and the network facts planted at each node's edge

def py(cluster, node: str, code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run a python snippet on a node (the node's /usr/bin/python3)."""
    return cluster.ssh(node, "python3 -c " + shlex.quote(code), timeout=timeout)


CONNECT = """
import socket, sys
for port in map(int, sys.argv[2:]):
    try:
        with socket.create_connection((sys.argv[1], port), timeout=2) as s:
            print(port, "accepted", s.recv(64).decode().strip() or "-")
    except Exception as exc:
        print(port, type(exc).__name__)
"""


def connect(cluster, node: str, host: str, *ports: int) -> dict[int, str]:
    """From `node`, a TCP connect to host:port for each port: 'accepted MSG', 'ConnectionRefusedError',
    'TimeoutError'."""
    proc = cluster.ssh(node, f"python3 -c {shlex.quote(CONNECT)} {host} {' '.join(map(str, ports))}")
    assert proc.returncode == 0, proc.stderr
    return {int(line.split(None, 1)[0]): line.split(None, 1)[1] for line in proc.stdout.splitlines()}


LISTEN = """
import os, socket, sys, threading, time
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()  # gone with its ssh session
socks = []
for port in map(int, sys.argv[1:]):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(8); s.settimeout(0.2); socks.append(s)
print("ready", flush=True)
end = time.monotonic() + 60
while time.monotonic() < end:
    for s in socks:
        try:
            c, peer = s.accept()
        except socket.timeout:
            continue
        c.sendall(("%s from %s\\n" % (socket.gethostname(), peer[0])).encode()); c.close()
"""


class Listener:
    """TCP listeners on a node (in its netns) for the with-block; each accepted connection gets
    'NODENAME from PEER_ADDRESS'."""

    def __init__(self, cluster, node: str, *ports: int):
        self.proc = subprocess.Popen(["ssh", "-F", str(cluster.ssh_config), node,
                                      f"exec python3 -c {shlex.quote(LISTEN)} {' '.join(map(str, ports))}"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __enter__(self):
        assert self.proc.stdout.readline().strip() == "ready", self.proc.stderr.read()
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()  # the listener reads EOF and exits, then the ssh session ends
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.mark.cluster
def test_each_node_has_its_own_interface_and_address_and_no_route_out(cluster):
    head = cluster.head_addr
    head_name = socket.gethostname().split(".")[0]
    for node in cluster.nodes:
        out = cluster.ssh(node.name, "ip -o -4 addr show; echo --; ip route; echo --; ls /sys/class/net; cat "
                                     f"/sys/class/net/eth0/mtu; echo --; getent hosts $(hostname) node1 {head_name}")
        assert out.returncode == 0, out.stderr
        addrs, routes, links, hosts = (part.strip().splitlines() for part in out.stdout.split("--\n"))
        assert [line.split()[1:4] for line in addrs] == [["lo", "inet", "127.0.0.1/8"],
                                                         ["eth0", "inet", f"{node.addr}/20"]]
        network = ipaddress.ip_interface(f"{node.addr}/20").network
        assert network.network_address == ipaddress.ip_address(head) - 1
        assert [r.split()[:3] for r in routes] == [[str(network), "dev", "eth0"]]  # no default route
        assert links == ["eth0", "lo", "1500"]
        # its own name, another node's, and the head's (Hydra's proxies connect back to it by name)
        assert [h.split() for h in hosts] == [[node.addr, node.name], [cluster.nodes[0].addr, "node1"],
                                              [head, head_name]]
    # neighbours are known in advance (no ARP broadcast to every node): the head and every other node
    neigh = cluster.ssh("node2", "ip neigh show dev eth0; cat /sys/class/net/eth0/address").stdout.split("\n")
    want = {(a, net.mac_of(a)) for a in [head] + [n.addr for n in cluster.nodes if n.name != "node2"]}
    assert {(line.split()[0], line.split()[2]) for line in neigh if "PERMANENT" in line} == want
    assert neigh[-2] == net.mac_of(cluster.node("node2").addr)
    # the only way out of a node is the bridge: anything else is unreachable (refused by the kernel, nothing is sent)
    out = py(cluster, "node1", "import socket\ntry:\n socket.create_connection(('203.0.113.1', 80), timeout=2)\n"
                               "except OSError as e:\n print(e.errno)")
    assert out.stdout.strip() == "101", out  # ENETUNREACH
    # the head reaches every node at its address, on the bridge
    for node in cluster.nodes:
        with socket.create_connection((node.addr, cluster.port), timeout=5) as s:
            assert s.recv(64).startswith(b"SSH-2.0-")


@pytest.mark.cluster
def test_nodes_reach_each_other_over_tcp_by_name_and_from_their_own_address(cluster):
    n1, n3 = cluster.node("node1"), cluster.node("node3")
    with Listener(cluster, "node3", 29500):
        got = connect(cluster, "node1", "node3", 29500)
        assert got == {29500: f"accepted node3 from {n1.addr}"}
        assert connect(cluster, "node4", n3.addr, 29500) == {29500: f"accepted node3 from {cluster.node('node4').addr}"}
        with socket.create_connection((n3.addr, 29500), timeout=5) as s:  # and the head, from its bridge address
            assert s.recv(64).decode().strip() == f"node3 from {cluster.head_addr}"
    # a port nobody listens on is refused at once (the node answers with a reset)
    assert connect(cluster, "node1", "node3", 29500) == {29500: "ConnectionRefusedError"}


@pytest.mark.cluster
def test_planted_hosts_lines_come_first_in_that_nodes_etc_hosts(cluster):
    with cluster.planted({"node2": {"hosts": ["127.0.1.1 node2", "198.18.255.254 storage"]}}):
        out = py(cluster, "node2", "import socket\nprint(socket.gethostbyname(socket.gethostname()))\n"
                                   "print(socket.gethostbyname('storage'))")
        assert out.stdout.split() == ["127.0.1.1", "198.18.255.254"]  # the Debian loopback-hostname trap
        assert cluster.ssh("node2", "getent hosts node2").stdout.split()[:2] == ["127.0.1.1", "node2"]
        assert cluster.ssh("node1", "getent hosts node2").stdout.split() == [cluster.node("node2").addr, "node2"]
    assert cluster.ssh("node2", "getent hosts node2").stdout.split() == [cluster.node("node2").addr, "node2"]
    assert cluster.ssh("node2", "getent hosts storage").returncode == 2


@pytest.mark.cluster
def test_planted_mtu_and_interface_name(cluster):
    with cluster.planted({"node2": {"mtu": 1400, "ifname": "ib0"}}):
        out = cluster.ssh("node2", "ip -o link show | cut -d: -f2 | cut -d@ -f1; cat /sys/class/net/ib0/mtu; "
                                   "ip -o -4 addr show dev ib0 | awk '{print $4}'")
        assert out.stdout.split() == ["lo", "ib0", "1400", f"{cluster.node('node2').addr}/20"], out
        # still reached by name from another node, and a transfer bigger than the MTU goes through
        with Listener(cluster, "node2", 29501):
            assert connect(cluster, "node1", "node2", 29501)[29501].startswith("accepted node2")
        big = cluster.ssh("node1", "ssh node2 'head -c 3000000 /dev/zero' | wc -c")
        assert big.stdout.strip() == "3000000"
        with cluster.planted({"node2": {"mtu": 9000}}):  # nested: the name stays, the MTU changes
            assert cluster.ssh("node2", "cat /sys/class/net/ib0/mtu").stdout.strip() == "9000"
        assert cluster.ssh("node2", "cat /sys/class/net/ib0/mtu").stdout.strip() == "1400"
    out = cluster.ssh("node2", "ls /sys/class/net; cat /sys/class/net/eth0/mtu")
    assert out.stdout.split() == ["eth0", "lo", "1500"]


@pytest.mark.cluster
def test_planted_firewall_drops_incoming_tcp_to_its_ports_only(cluster):
    with Listener(cluster, "node2", 29400, 29401):
        with cluster.planted({"node2": {"firewall": {"drop_tcp": [29400]}}}):
            t0 = time.monotonic()
            got = connect(cluster, "node1", "node2", 29400, 29401, 29402)
            assert got[29400] == "TimeoutError" and time.monotonic() - t0 >= 2  # the SYN is dropped: no answer
            assert got[29401] == f"accepted node2 from {cluster.node('node1').addr}"
            assert got[29402] == "ConnectionRefusedError"
            assert "tcp dport 29400 drop" in cluster.ssh("node2", "nft list ruleset").stdout
            assert cluster.ssh("node2", "hostname").stdout.strip() == "node2"  # ssh (port 22) still passes
        assert connect(cluster, "node1", "node2", 29400)[29400].startswith("accepted node2")
    assert cluster.ssh("node2", "nft list ruleset").stdout.strip() == ""


@pytest.mark.cluster
def test_planted_shm_memlock_and_clock_offset(cluster):
    head_memlock = str(resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] // 1024)  # what a node has when not planted
    shown = "df -m --output=size /dev/shm | tail -1; ulimit -l; date +%s"
    with cluster.planted({"node2": {"shm_mib": 64, "memlock_kib": 64, "clock_offset_s": 120}}):
        size, memlock, clock = cluster.ssh("node2", shown).stdout.split()
        assert (size, memlock) == ("64", "64")
        assert 115 <= int(clock) - time.time() <= 125
        ms = cluster.ssh("node2", "date +%s.%N; date -u +%Y").stdout.split()
        assert 115 <= float(ms[0]) - time.time() <= 125 and len(ms[0].split(".")[1]) == 9
        # the tmpfs is the node's own: a file there is not on the machine's /dev/shm nor on another node's
        assert cluster.ssh("node2", "echo x > /dev/shm/cd-test").returncode == 0
        assert not Path("/dev/shm/cd-test").exists()
        assert cluster.ssh("node1", "ls /dev/shm/cd-test").returncode != 0
        size1, memlock1, clock1 = cluster.ssh("node1", shown).stdout.split()
        assert size1 != "64" and memlock1 == head_memlock and abs(int(clock1) - time.time()) <= 5
    size, memlock, clock = cluster.ssh("node2", shown).stdout.split()
    assert size != "64" and memlock == head_memlock and abs(int(clock) - time.time()) <= 5


@pytest.mark.cluster
def test_planted_link_down_makes_the_node_unreachable(cluster):
    n3 = cluster.node("node3")
    with cluster.planted({"node3": {"link_down": True}}):
        t0 = time.monotonic()
        out = subprocess.run(["ssh", "-F", str(cluster.ssh_config), "-o", "ConnectTimeout=3", "node3", "true"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 255 and ("timed out" in out.stderr or "No route to host" in out.stderr), out.stderr
        assert time.monotonic() - t0 < 10
        with pytest.raises(OSError):
            socket.create_connection((n3.addr, cluster.port), timeout=3)
        assert connect(cluster, "node1", "node3", cluster.port)[cluster.port] in ("TimeoutError", "OSError")
    assert cluster.ssh("node3", "hostname; cat /sys/class/net/eth0/operstate").stdout.split() == ["node3", "up"]
    assert cluster.ssh("node1", "ssh node3 hostname").stdout.strip() == "node3"


THROUGHPUT = """
import socket, sys, time
# argv: listen PORT | send HOST PORT MB. The receiver prints Mbit/s from first to last byte.
if sys.argv[1] == "listen":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(sys.argv[2]))); s.listen(1); print("ready", flush=True)
    c, _ = s.accept(); got = 0; t0 = None
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        t0 = t0 or time.monotonic(); got += len(b)
    print(round(got * 8 / (time.monotonic() - t0) / 1e6))
else:
    with socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10) as c:
        c.sendall(b"x" * (int(sys.argv[4]) << 20))
"""
SPIN = ("import os, time\nt = time.monotonic(); c = os.times()\nx = 0\nfor i in range(6000000): x += i\n"
        "print(round((time.monotonic() - t) / (os.times().user - c.user + os.times().system - c.system), 2))")


def mbits(cluster, src: str, dst: str, port: int, mb: int = 6) -> int:
    """Mbit/s of one TCP transfer of mb MiB from node src to node dst (their own link, real sockets)."""
    rx = subprocess.Popen(["ssh", "-F", str(cluster.ssh_config), dst, f"exec python3 -c {shlex.quote(THROUGHPUT)} "
                           f"listen {port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert rx.stdout.readline().strip() == "ready"
        tx = cluster.ssh(src, f"python3 -c {shlex.quote(THROUGHPUT)} send {dst} {port} {mb}", timeout=60)
        assert tx.returncode == 0, tx.stderr
        return int(rx.communicate(timeout=30)[0])
    finally:
        rx.kill()


@pytest.mark.slow
@pytest.mark.cluster
def test_planted_link_rate_and_cpu_quota_slow_that_node_down(cluster):
    with cluster.planted({"node3": {"link_rate_mbit": 200}, "node2": {"cpu_quota": 0.25}}):
        to3, from3, healthy = (mbits(cluster, "node1", "node3", 29600), mbits(cluster, "node3", "node1", 29601),
                               mbits(cluster, "node1", "node4", 29602))
        assert 100 <= to3 <= 230 and 100 <= from3 <= 230, (to3, from3)  # both directions, at the planted rate
        assert healthy > 2 * 230, healthy
        group = limits.cgroup_of(cluster.prefix, "node2")
        assert (group / "cpu.cfs_quota_us").read_text().strip() == "25000"
        throttled = int((group / "cpu.stat").read_text().split("nr_throttled")[1].split()[0])
        # a CPU loop over ssh: wall time per CPU second is ~4 on node2 (a quarter of one CPU), ~1 elsewhere
        slow = float(py(cluster, "node2", SPIN).stdout)
        assert slow >= 2.5, slow
        assert int((group / "cpu.stat").read_text().split("nr_throttled")[1].split()[0]) > throttled
        sessions = py(cluster, "node2", "print(open('/proc/self/cgroup').read())").stdout
        assert f":cpu:/{group.name}" in sessions or f"cpu,cpuacct:/{group.name}" in sessions, sessions
    assert not group.exists()
    assert mbits(cluster, "node1", "node3", 29603) > 2 * 230
    assert "tbf" not in cluster.ssh("node3", "tc qdisc show").stdout


@pytest.mark.slow
@pytest.mark.cluster
def test_up_twice_crash_and_down_leave_nothing_behind(cluster, tmp_path):
    """Beside the session's cluster (so two clusters share the machine: other names, another address block)."""
    c = Cluster(tmp_path / "c", nodes=2)
    try:
        assert c.up() is True
        assert c.prefix != cluster.prefix and c.block != cluster.block
        assert net.our_netns(c.prefix) == [f"{c.prefix}-node1", f"{c.prefix}-node2"]
        assert net.our_links(c.prefix) == [f"{c.prefix}br", f"{c.prefix}v1", f"{c.prefix}v2"]
        assert cluster.ssh("node1", f"ssh -o ConnectTimeout=3 {c.nodes[0].addr} true").returncode == 255  # apart
        slow = {"node2": {"link_rate_mbit": 200, "cpu_quota": 0.25}}
        c.plant(slow)  # a crash leaves its cgroup behind; the next up removes it
        assert limits.our_cgroups(c.prefix) == [limits.cgroup_of(c.prefix, "node2")]
        pids = c.our_pids()
        assert c.up() is False and c.our_pids() == pids  # second up notices and changes nothing
        # crash: every process killed, stale pid files and state left behind
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)
        assert not c.is_running() and (c.dir / "cluster.json").exists()
        assert len(net.our_netns(c.prefix)) == 2  # namespaces outlive their processes (/run/netns)
        assert c.up() is True  # cleans up and starts again
        env = dict(os.environ, **c.env())
        proc = subprocess.run(["srun", "-N", "2", "hostname"], capture_output=True, text=True, timeout=120, env=env)
        assert sorted(proc.stdout.split()) == ["node1", "node2"], proc.stderr
        assert limits.our_cgroups(c.prefix) == []
        c.plant(slow)
        assert "tbf" in subprocess.run([limits.TC, "qdisc", "show", "dev", f"{c.prefix}v2"], capture_output=True,
                                       text=True).stdout
        in_nodes = subprocess.Popen(  # an ssh session still running at stop time
            ["ssh", "-F", str(c.ssh_config), "node2", "sleep 300"], stdout=subprocess.DEVNULL)
        time.sleep(1)
    finally:
        c.down()
    in_nodes.wait(timeout=10)
    assert c.our_pids() == set()
    prefix = str(c.dir) + "/"
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if prefix in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").replace("\0", " "):
                leftovers.append(pid)
            if prefix in Path(f"/proc/{pid}/mountinfo").read_text():
                leftovers.append(f"mount in {pid}")
        except OSError:
            pass
    assert leftovers == []
    assert net.our_netns(c.prefix) == [] and net.our_links(c.prefix) == []
    assert limits.our_cgroups(c.prefix) == [] and not any(c.prefix in n for n in os.listdir(limits.CPU_CGROUP))
    assert c.prefix not in subprocess.run([limits.TC, "qdisc", "show"], capture_output=True, text=True).stdout
    ip = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout + \
        subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout + \
        subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    assert c.prefix not in ip and c.head_addr not in ip
    assert cluster.ssh("node1", "hostname").stdout.strip() == "node1"  # the other cluster is untouched
    status = subprocess.run([sys.executable, "-m", "tests.cluster", "status", "--dir", str(c.dir)],
                            capture_output=True, text=True, timeout=60, cwd=Path(__file__).parent.parent)
    assert status.returncode == 1 and "not running" in status.stdout, status.stdout + status.stderr
    assert "Slurm down" in status.stdout and "slurmd up" not in status.stdout, status.stdout


# ---- the fakes and spec handling on their own (no root, no cluster: these run everywhere, fast)

def test_nvcc_arch_list_follows_the_reference_table():
    assert cuda_facts.gpu_arches("12.1")[0] == "compute_50" and "compute_90" in cuda_facts.gpu_arches("12.1")
    assert "compute_35" in cuda_facts.gpu_arches("11.8") and "compute_35" not in cuda_facts.gpu_arches("12.0")
    assert cuda_facts.max_gcc("11.8") == 11 and cuda_facts.max_gcc("12.1") == 12 and cuda_facts.max_gcc("13.0") == 15
    assert cuda_facts.driver_cuda("550.54.14") == "12.4" and cuda_facts.driver_cuda("535.104.05") == "12.2"


def test_fake_nvcc_13_lists_the_same_archs_as_a_real_one_when_present(tmp_path):
    nvcc = shutil.which("nvcc")
    real = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True) if nvcc else None
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout if nvcc else ""
    if not real or real.returncode != 0 or "release 13.0" not in version:
        pytest.skip("needs a real CUDA 13.0 nvcc on PATH to compare with")
    fake = tmp_path / "nvcc"
    fakes.script(fake, fakes.nvcc("13.0"))
    ours = subprocess.run([str(fake), "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
    assert sorted(ours) == sorted(real.stdout.split())
    assert subprocess.run([str(fake), "--version"], capture_output=True, text=True).stdout.splitlines()[3] == \
        version.splitlines()[3]


def test_spec_files_refuse_unknown_keys_with_the_file_named(tmp_path):
    bad = tmp_path / "spec.yaml"
    bad.write_text("defaults:\n  kernal: 5.4.0\n")
    with pytest.raises(spec.SpecError, match=r"spec.yaml: defaults: unknown spec key\(s\) kernal"):
        spec.load(bad)
    merged = spec.resolve({"defaults": {"torch": {"version": "2.3.1", "cuda": "12.1"}},
                           "nodes": {"node2": {"torch": {"cuda": "11.8"}}}}, "node2")
    assert merged["torch"] == {"version": "2.3.1", "cuda": "11.8"}


def test_address_plan_fits_thousands_of_nodes_per_cluster_and_32_clusters():
    assert [net.addr_of(0, i) for i in (0, 1, 2, 249, 250, 251, 3999)] == \
        ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.250", "198.18.1.1", "198.18.1.2", "198.18.15.250"]
    assert net.addr_of(1, 0) == "198.18.16.1" and net.addr_of(31, 3999) == "198.19.255.250"
    every = [ipaddress.ip_address(net.addr_of(b, i)) for b in (0, 31) for i in range(net.MAX_NODES + 1)]
    assert len(set(every)) == len(every) and all(a in net.RANGE for a in every)
    assert not any(str(a).endswith((".0", ".255")) for a in every)
    for b in (0, 17):  # one /20 per cluster holds its head and all its nodes
        block = ipaddress.ip_network(f"{net.addr_of(b, 0)}/20", strict=False)
        assert all(ipaddress.ip_address(net.addr_of(b, i)) in block for i in (0, 1, net.MAX_NODES))
    with pytest.raises(ValueError):
        net.addr_of(0, net.MAX_NODES + 1)
    prefix = net.prefix_for(Path("/home/alice/clusterdoc/.cluster"))
    assert prefix != net.prefix_for(Path("/srv/ci/clusterdoc/.cluster")) and len(prefix) == 8
    assert max(len(net.bridge_name(prefix)), len(net.host_veth(prefix, net.MAX_NODES))) <= 15  # IFNAMSIZ - 1


def test_network_spec_keys_are_checked_before_they_reach_ip_or_nft():
    good = spec.resolve({"defaults": {}, "nodes": {}}, "node1")
    spec.check_network(spec.merge(good, {"hosts": ["127.0.1.1\tnode2"], "mtu": 1400, "ifname": "ib0",
                                         "firewall": {"drop_tcp": [29400]}, "shm_mib": 64, "memlock_kib": 64,
                                         "clock_offset_s": -30, "link_down": True,
                                         "link_rate_mbit": 200, "cpu_quota": 0.25}), "ok")
    for bad, what in [({"ifname": "ib0; reboot"}, "ifname"), ({"ifname": "a" * 16}, "ifname"),
                      ({"ifname": "lo"}, "ifname"), ({"mtu": 20}, "mtu"), ({"mtu": "1400"}, "mtu"),
                      ({"firewall": {"drop_tcp": ["29400; flush ruleset"]}}, "firewall"),
                      ({"firewall": {"drop_udp": [1]}}, "firewall"), ({"hosts": ["1.2.3.4 a\n5.6.7.8 b"]}, "hosts"),
                      ({"hosts": "127.0.1.1 node2"}, "hosts"), ({"shm_mib": 0}, "shm_mib"),
                      ({"memlock_kib": -1}, "memlock_kib"), ({"clock_offset_s": 1.5}, "clock_offset_s"),
                      ({"link_down": "yes"}, "link_down"), ({"link_rate_mbit": "200mbit"}, "link_rate_mbit"),
                      ({"link_rate_mbit": 0}, "link_rate_mbit"), ({"cpu_quota": 0}, "cpu_quota"),
                      ({"cpu_quota": "1; reboot"}, "cpu_quota")] + [
            # a node's limit can only be lowered (root here lacks CAP_SYS_RESOURCE)
            ({"memlock_kib": hard // 1024 + 1}, "memlock_kib")
            for hard in [resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]] if hard != resource.RLIM_INFINITY]:
        with pytest.raises(spec.SpecError, match=rf"plant node2: {what}: "):
            spec.check_network(spec.merge(good, bad), "plant node2")


def test_clusters_search_their_slurm_ports_in_ranges_of_their_own():
    from tests.cluster import cluster as cl
    from tests.cluster import net

    starts = [cl.ports_from(b) for b in range(net.BLOCKS)]
    assert len(set(starts)) == net.BLOCKS and min(starts) >= 17000 and max(starts) + cl.PORTS_PER_BLOCK <= 60000
    assert all(b - a >= cl.PORTS_PER_BLOCK for a, b in zip(starts, starts[1:]))
