"""The test cluster's own network: one bridge, one network namespace per node, a veth pair between them.

Address plan (198.18.0.0/15, reserved for benchmarking, RFC 2544): the range is cut into 32 blocks of a /20;
a cluster takes the first block no interface of this machine has an address in (so clusters of different
directories coexist), under a lock, and keeps it in cluster.json. In block b (base = 198.18.0.0 + b * 4096):
    head (the bridge, root namespace)  base + 0.1                     198.18.0.1 in block 0
    node i (1 <= i <= 3999)            base + (i // 250).(i % 250 + 1)  node1 198.18.0.2, node250 198.18.1.1
every address on a /20, so no address ends in .0 or .255. MACs are fixed (02:cd + the IPv4 address) and every
node has the head and all other nodes as permanent neighbours, and the head all nodes: no ARP broadcast is copied
to hundreds of namespaces (with ARP, `srun -N 256` reached 54 of 256 nodes here; with this, all). Nothing routes out: the nodes' only route is the
/20 on their interface (no default route), the bridge has no port but the nodes' veths, and this machine
forwards nothing to the bridge (no NAT, no forwarding rule is added; net.ipv4.ip_forward is left alone).

Names carry a prefix made from the cluster directory (`cd` + 6 hex digits of its sha1), so two clusters
never share one: bridge PREFIXbr, host-side veth PREFIXvI, namespace PREFIX-nodeI (/run/netns/...). A crashed
cluster is cleaned on the next `up` from that prefix alone.
"""
from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import os
import socket
import subprocess
import time
from pathlib import Path

from .procs import ClusterError

RANGE = ipaddress.ip_network("198.18.0.0/15")
BLOCK_PREFIX = 20
BLOCKS = 2 ** (BLOCK_PREFIX - RANGE.prefixlen)  # 32
MAX_NODES = 16 * 250 - 1
IP = "/usr/sbin/ip" if os.access("/usr/sbin/ip", os.X_OK) else "/sbin/ip"
NETNS_DIR = Path("/run/netns")
LOCK_NAME = b"\0clusterdoc-test-cluster-net"  # abstract socket: gone with its holder, nothing on disk


def prefix_for(cluster_dir: Path) -> str:
    return "cd" + hashlib.sha1(str(cluster_dir).encode()).hexdigest()[:6]


def block_base(block: int) -> ipaddress.IPv4Address:
    if not 0 <= block < BLOCKS:
        raise ValueError(f"address block {block} is outside 0..{BLOCKS - 1}")
    return RANGE.network_address + block * 2 ** (32 - BLOCK_PREFIX)


def addr_of(block: int, index: int) -> str:
    """Address of node `index` in `block`; index 0 is the head (the bridge)."""
    if not 0 <= index <= MAX_NODES:
        raise ValueError(f"node index {index} is outside 1..{MAX_NODES}")
    return str(block_base(block) + (index // 250) * 256 + index % 250 + 1)


def mac_of(addr: str) -> str:
    """The fixed MAC of the interface holding addr (node side of a veth, or the bridge for the head)."""
    return "02:cd:" + ":".join(f"{b:02x}" for b in ipaddress.ip_address(addr).packed)


def neighbours(addrs: list[str], dev: str, skip: str = "") -> list[str]:
    """`ip -batch` lines making each address a permanent neighbour on dev (no ARP on the bridge: one ARP
    broadcast is copied to every node, and with hundreds of nodes on two loaded cores cold ARP misses its
    3 s, so connects time out; every MAC is known in advance, see mac_of)."""
    return [f"neigh replace {a} lladdr {mac_of(a)} dev {dev} nud permanent" for a in addrs if a != skip]


def netns_name(prefix: str, node_name: str) -> str:
    return f"{prefix}-{node_name}"


def bridge_name(prefix: str) -> str:
    return f"{prefix}br"


def host_veth(prefix: str, index: int) -> str:
    return f"{prefix}v{index}"  # at most 8 + 1 + 4 = 13 characters (IFNAMSIZ is 16 with the NUL)


def ip_batch(lines: list[str], netns: str | None = None, what: str = "ip -batch") -> None:
    if not lines:
        return
    argv = [IP] + (["-n", netns] if netns else []) + ["-batch", "-"]
    proc = subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise ClusterError(f"{what} failed: {proc.stderr.strip()[-2000:]}")


@contextlib.contextmanager
def address_lock(timeout: float = 60):
    """One cluster at a time picks a block and puts its address on its bridge."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                sock.bind(LOCK_NAME)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise ClusterError("timed out waiting for another test cluster to pick its addresses") from None
                time.sleep(0.05)
        yield
    finally:
        sock.close()


def blocks_in_use() -> set[int]:
    """Blocks in which some interface of the root namespace has an IPv4 address."""
    out = subprocess.run([IP, "-4", "-o", "addr", "show"], capture_output=True, text=True, timeout=30).stdout
    used = set()
    for line in out.splitlines():
        parts = line.split()
        if "inet" in parts:
            addr = ipaddress.ip_interface(parts[parts.index("inet") + 1]).ip
            if addr in RANGE:
                used.add((int(addr) - int(RANGE.network_address)) >> (32 - BLOCK_PREFIX))
    return used


def our_netns(prefix: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(NETNS_DIR) if n.startswith(prefix + "-"))
    except OSError:
        return []


def our_links(prefix: str) -> list[str]:
    """Interfaces of the root namespace whose name carries the prefix (bridge, host-side veths)."""
    try:
        names = os.listdir("/sys/class/net")
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(prefix))


def netns_inodes(prefix: str) -> set[int]:
    out = set()
    for name in our_netns(prefix):
        try:
            out.add(os.stat(NETNS_DIR / name).st_ino)
        except OSError:
            pass
    return out


def create(prefix: str, block: int, nodes: list, ifnames: dict[str, str]) -> None:
    """The bridge with the head's address, one namespace per node and a veth pair into it (node side named
    as its spec says, still down and without an address: the node's net.batch sets those)."""
    br, head = bridge_name(prefix), addr_of(block, 0)
    lines = [f"link add {br} address {mac_of(head)} type bridge", f"link set {br} addrgenmode none",
             f"addr add {head}/{BLOCK_PREFIX} dev {br}", f"link set {br} up"]
    for n in nodes:
        ns, v = netns_name(prefix, n.name), host_veth(prefix, n.index)
        lines += [f"netns add {ns}",
                  f"link add {v} type veth peer name {ifnames[n.name]} address {mac_of(n.addr)} netns {ns}",
                  f"link set {v} addrgenmode none", f"link set {v} master {br} up"]
    lines += neighbours([n.addr for n in nodes], br)
    ip_batch(lines, what="creating the cluster network")


def teardown(prefix: str) -> None:
    """Remove every interface and namespace carrying the prefix (a node's nft table goes with its namespace).
    The host ends of the veths go first (each takes its pair along), then the bridge, then the namespaces,
    so nothing waits on the kernel's asynchronous namespace cleanup."""
    links = our_links(prefix)
    br = bridge_name(prefix)
    lines = [f"link delete {name}" for name in links if name != br] + [f"link delete {br}"] * (br in links)
    lines += [f"netns delete {ns}" for ns in our_netns(prefix)]
    if lines:
        # -force: go on past a veth the kernel removed meanwhile; what is left afterwards is the error
        subprocess.run([IP, "-force", "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=120)
    left = our_links(prefix) + our_netns(prefix)
    if left:
        raise ClusterError(f"could not remove {', '.join(left[:5])}{' ...' if len(left) > 5 else ''}")
