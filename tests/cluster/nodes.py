"""One SSH node: its sshd config, its private /etc files, its network, and the namespaces it lives in.

Each node is an `nsenter --net=/run/netns/NETNS unshare --uts --mount` process that runs mount.sh (hostname, network,
mounts) and then execs sshd, so the sshd is the namespace holder; slurmd and later re-mounts join it with
nsenter. The network namespace (net.py) holds one veth to the cluster bridge; mount.sh gives it the node's
address, name, MTU, link state (net.batch) and firewall (nft.conf, an nft table inside the namespace).
Mounts inside the node (all private to its mount namespace, gone when its last process exits):
  /usr/local                    <- nodes/NAME/local        (toolkits, fakes, torch stub, `date` if clock_offset_s)
  /usr/bin  (only if needed)    <- overlay with whiteouts  (python: none / gcc: none)
  /usr/bin/uname                <- nodes/NAME/uname        (reports the spec kernel)
  /etc  (read-only overlay)     <- nodes/NAME/etc on top   (hosts, ssh/ssh_config, ld.so.preload,
                                                           ld.so.cache of the node's libraries)
  /proc/sys/kernel/osrelease    <- nodes/NAME/osrelease
  /dev/kmsg                     <- nodes/NAME/kmsg        (XIDs in the kernel log)
  /sys/module (read-only overlay) <- nodes/NAME/sysmodule on top (nvidia, nvidia_peermem loaded, nvidia/taint)
  /sys/bus/pci/devices          <- nodes/NAME/pci/bus/devices (the GPUs, their switch ports' ACS, IOMMU groups)
  /sys/class (only if ib_rate_gbps) <- read-only overlay: nodes/NAME/sysclass (infiniband) on the netns's sysfs
  /root/.bashrc, /root/.profile <- nodes/NAME/home/...     (the host's shell setup must not leak in)
  /dev/shm (only if shm_mib)    <- a tmpfs of that size
  /sys/class/net, /sys/devices/virtual/net <- from a sysfs mounted inside the node's netns (its interfaces)
  /run/netns                    unmounted                 (the node does not see the cluster's namespaces)
"""
from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import net
from .fakes import write, whiteouts
from .procs import track


@dataclass(frozen=True)
class Node:
    name: str
    addr: str

    @property
    def index(self) -> int:
        return int(self.name[4:])


def make_nodes(count: int, block: int = 0) -> list[Node]:
    if not 1 <= count <= net.MAX_NODES:
        raise ValueError(f"--nodes must be between 1 and {net.MAX_NODES}, got {count}")
    return [Node(f"node{i}", net.addr_of(block, i)) for i in range(1, count + 1)]


def sshd_config(node_dir: Path, node: Node, port: int, authorized_keys: Path, env: dict) -> str:
    for key, value in env.items():
        if '"' in value or "\n" in value:
            raise ValueError(f"{node.name}: env {key} contains a quote or newline, sshd SetEnv cannot carry it")
    setenv = " ".join(f'"{k}={v}"' for k, v in sorted(env.items()))
    return f"""# sshd of {node.name} (clusterdoc test cluster)
ListenAddress {node.addr}:{port}
HostKey {node_dir}/ssh_host_ed25519_key
PidFile {node_dir}/sshd.pid
AuthorizedKeysFile {authorized_keys}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PermitUserEnvironment no
X11Forwarding no
PrintMotd no
PrintLastLog no
UseDNS no
MaxStartups 200:30:400
MaxSessions 100
LogLevel INFO
Subsystem sftp internal-sftp
SetEnv {setenv}
"""


def ssh_client_config(nodes: list[Node], port: int, key: Path, known_hosts: Path,
                      broken: dict[str, Path] | None = None) -> str:
    """ssh_config naming every node; `broken` maps node names to a known_hosts file with a wrong key."""
    lines = ["# clusterdoc test cluster: ssh -F this file (or paramiko.SSHConfig)"]
    by_name = {n.name: n for n in nodes}
    for name, bad in (broken or {}).items():
        if name in by_name:
            lines += [f"Host {name} {by_name[name].addr}", f"  UserKnownHostsFile {bad}"]
    for n in nodes:
        lines += [f"Host {n.name} {n.addr}", f"  HostName {n.addr}"]
    lines += [
        "Host *", "  User root", f"  Port {port}", f"  IdentityFile {key}", "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {known_hosts}", "  GlobalKnownHostsFile /dev/null", "  StrictHostKeyChecking yes",
        "  HashKnownHosts no", "  BatchMode yes", "  ConnectTimeout 10", "  LogLevel ERROR",
    ]
    return "\n".join(lines) + "\n"


def etc_hosts(nodes: list[Node], host_name: str, head_addr: str, planted: list[str] = ()) -> str:
    """The node's /etc/hosts: planted lines first (they win, as a wrong line at the top of a real one does),
    then localhost, the head's name on the bridge (Hydra's proxies connect back to it), every node."""
    lines = list(planted)
    lines += ["127.0.0.1\tlocalhost"]
    if host_name:
        lines += [f"{head_addr}\t{host_name}"]
    lines += [f"{n.addr}\t{n.name}" for n in nodes]
    lines += ["::1\tlocalhost ip6-localhost ip6-loopback"]
    return "\n".join(lines) + "\n"


def write_node_files(node_dir: Path, node: Node, nodes: list[Node], *, port: int, cluster_dir: Path,
                     spec: dict, env: dict, host_name: str, head_addr: str, preload: Path | None,
                     before: dict | None = None) -> None:
    """Everything the node's mounts point at, except the /usr/local tree (fakes.realise). `before` is the spec
    the running node has now (None when it is about to start)."""
    authorized = cluster_dir / "authorized_keys"
    key = cluster_dir / "id_ed25519"
    known = cluster_dir / "known_hosts"
    broken = {name: cluster_dir / "wrong_known_hosts" for name in spec.get("mesh_broken_to") or []}
    write(node_dir / "sshd_config", sshd_config(node_dir, node, port, authorized, env))
    # what a real node shows: its sshd's config (host keys, AuthorizedKeysFile) at /etc/ssh/sshd_config
    write(node_dir / "etc" / "ssh" / "sshd_config", sshd_config(node_dir, node, port, authorized, env))
    etc = node_dir / "etc"
    write(etc / "hosts", etc_hosts(nodes, host_name, head_addr, spec.get("hosts") or []))
    write(etc / "hostname", node.name + "\n")
    write(etc / "ssh" / "ssh_config", ssh_client_config(nodes, port, key, known, broken))
    write(etc / "ld.so.preload", f"{preload}\n" if preload else "")
    home = node_dir / "home"
    flood = int(spec.get("login_output") or 0)  # Debian's bash reads ~/.bashrc for ssh commands
    write(home / ".bashrc", f"# {node.name} of the clusterdoc test cluster: no host shell setup here\n"
          + (f"head -c {flood} /dev/zero | tr '\\0' x\n" if flood else ""))
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items()))
    write(home / ".profile", f"# {node.name}: login shells get the node's environment back after /etc/profile\n"
                             + exports)
    (home / ".ssh").mkdir(exist_ok=True)
    wh = node_dir / "usrbin-whiteouts"
    wh.mkdir(exist_ok=True)
    wanted = set(whiteouts(spec))
    for entry in os.listdir(wh):
        if entry not in wanted:
            os.unlink(wh / entry)
    for name in wanted - set(os.listdir(wh)):
        os.mknod(wh / name, 0o600 | 0o020000, os.makedev(0, 0))  # char device 0:0 = overlay whiteout
    write(node_dir / "net.batch", net_batch(node, spec, before, [head_addr] + [n.addr for n in nodes]))
    firewall = bool(spec["firewall"]["drop_tcp"]) or bool(before and before["firewall"]["drop_tcp"])
    write(node_dir / "nft.conf", nft_conf(node, spec))
    write(node_dir / "mount.sh", mount_script(node_dir, node, bool(wanted), spec, firewall), 0o755)


def net_batch(node: Node, spec: dict, before: dict | None, peers: list[str]) -> str:
    """`ip -batch` input run inside the node's netns: its interface's name, address, MTU and state, and the
    head and every other node as permanent neighbours (net.neighbours says why)."""
    ifname = spec["ifname"]
    lines = ["link set lo up"]
    if before and before["ifname"] != ifname:
        lines += [f"link set {before['ifname']} down", f"link set {before['ifname']} name {ifname}"]
    lines += [f"addr replace {node.addr}/{net.BLOCK_PREFIX} dev {ifname}", f"link set {ifname} mtu {spec['mtu']}",
              f"link set {ifname} {'down' if spec['link_down'] else 'up'}"]
    lines += net.neighbours(peers, ifname, skip=node.addr)
    return "\n".join(lines) + "\n"


def nft_conf(node: Node, spec: dict) -> str:
    """`nft -f` input: (re)make the node's one table, dropping incoming TCP to the planted ports."""
    ports = spec["firewall"]["drop_tcp"]
    text = f"# firewall of {node.name} (inside its netns)\ntable inet clusterdoc\ndelete table inet clusterdoc\n"
    if ports:
        text += ("table inet clusterdoc {\n  chain input {\n    type filter hook input priority 0; policy accept;\n"
                 f"    tcp dport {{ {', '.join(str(p) for p in sorted(set(ports)))} }} drop\n  }}\n}}\n")
    return text


def mount_script(node_dir: Path, node: Node, hide_in_usr_bin: bool, spec: dict, firewall: bool) -> str:
    d = shlex.quote(str(node_dir))
    overlay_bin = (f"mount -t overlay clusterdoc-usrbin -o lowerdir={d}/usrbin-whiteouts:/usr/bin /usr/bin\n"
                   if hide_in_usr_bin else "")
    shm = (f"mount -t tmpfs -o size={int(spec['shm_mib'])}m,mode=1777,nosuid,nodev clusterdoc-shm /dev/shm\n"
           if spec.get("shm_mib") else "")
    nft = f"nft -f {d}/nft.conf\n" if firewall else ""
    # InfiniBand ports (ib_rate_gbps): /sys/class is the node netns's own, with nodes/NAME/sysclass on top
    ib = (f"mkdir -p {d}/sysfs\nmount -t sysfs clusterdoc-sysfs {d}/sysfs\n"
          f"mount -t overlay clusterdoc-sysclass -o ro,lowerdir={d}/sysclass:{d}/sysfs/class /sys/class\n"
          f"umount -l {d}/sysfs\n") if spec.get("ib_rate_gbps") else ""
    host_mnt, host_net = os.readlink("/proc/self/ns/mnt"), os.readlink("/proc/self/ns/net")  # the head's
    return f"""#!/bin/sh
# Inside {node.name}'s namespaces: set its hostname, its network, and (re)make its private mounts.
# `$1 = exec-sshd`: the node is starting (fresh namespaces), then becomes its sshd; else re-planting.
set -e
case "$(readlink /proc/self/ns/mnt /proc/self/ns/net)" in *"{host_mnt}"*|*"{host_net}"*)
  echo "mount.sh: refusing to run in the head's mount or network namespace" >&2; exit 1;;
esac
hostname {node.name}
ip -batch {d}/net.batch
{nft}if [ "$1" = exec-sshd ]; then
  # the other nodes' namespaces are none of this node's business (and `ip` must not find them)
  if mountpoint -q /run/netns; then
    umount -l /run/netns; mount -t tmpfs -o size=16k,mode=755 clusterdoc-netns /run/netns
  fi
  # /sys/class/net of this netns: a sysfs mounted here lists the node's interfaces; only the net parts of it
  # go over the head's /sys (a whole new /sys would drop /sys/fs/cgroup, which slurmd needs)
  mkdir -p {d}/sysfs
  mount -t sysfs clusterdoc-sysfs {d}/sysfs
  mount --bind {d}/sysfs/class/net /sys/class/net
  mount --bind {d}/sysfs/devices/virtual/net /sys/devices/virtual/net
  umount {d}/sysfs
else
  # Undo an earlier round (re-planting), innermost first; each loop ends when the path is no mountpoint.
  for m in /sys/class /root/.ssh /root/.profile /root/.bashrc /proc/sys/kernel/osrelease /etc /usr/bin/uname /usr/bin /usr/local \
           /dev/kmsg /sys/module /sys/bus/pci/devices; do
    while mountpoint -q "$m" 2>/dev/null; do umount -l "$m"; done
  done
  while grep -q '^[^ ]* [^ ]* [^ ]* [^ ]* /dev/shm .* - tmpfs clusterdoc-shm ' /proc/self/mountinfo; do
    umount -l /dev/shm
  done
fi
{shm}mount --bind {d}/local /usr/local
{overlay_bin}mount --bind {d}/uname /usr/bin/uname
# The node's own linker cache (the host's lists libraries under the host's /usr/local); -X: touch no links.
ldconfig -X -C {d}/etc/ld.so.cache 2>/dev/null || true
mount -t overlay clusterdoc-etc -o ro,lowerdir={d}/etc:/etc /etc
mount --bind {d}/osrelease /proc/sys/kernel/osrelease
mount --bind {d}/kmsg /dev/kmsg
mount -t overlay clusterdoc-sysmodule -o ro,lowerdir={d}/sysmodule:/sys/module /sys/module
mount --bind {d}/pci/bus/devices /sys/bus/pci/devices
{ib}if [ -f /root/.bashrc ]; then mount --bind {d}/home/.bashrc /root/.bashrc; fi
if [ -f /root/.profile ]; then mount --bind {d}/home/.profile /root/.profile; fi
if [ -d /root/.ssh ]; then mount --bind {d}/home/.ssh /root/.ssh; fi
if [ "$1" = exec-sshd ]; then
  exec /usr/sbin/sshd -D -f {d}/sshd_config -E {d}/sshd.log
fi
"""


def memlock(spec: dict) -> int | None:
    """The node's soft RLIMIT_MEMLOCK in bytes (what `ulimit -l` shows), or None for the head's own. Only the
    soft limit: raising a hard limit again needs CAP_SYS_RESOURCE, which this machine's root lacks."""
    kib = spec.get("memlock_kib")
    return kib * 1024 if kib else None


def start(node_dir: Path, netns: str, spec: dict) -> subprocess.Popen:
    """Start the node: into its netns, new UTS + mount namespace, network and mounts, then sshd (returns
    the holder = sshd process: nsenter, prlimit, unshare and sh each exec the next). Not `ip netns exec`: it
    mounts a new /sys without /sys/fs/cgroup; mount.sh puts only the netns's /sys/class/net in place."""
    limit = memlock(spec)
    prlimit = ["prlimit", f"--memlock={limit}:", "--"] if limit else []
    log = open(node_dir / "holder.log", "w")
    try:
        return track(subprocess.Popen(
            ["nsenter", f"--net={net.NETNS_DIR / netns}", *prlimit, "unshare", "--uts", "--mount", "--propagation",
             "private",
             "/bin/sh", str(node_dir / "mount.sh"), "exec-sshd"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd="/", start_new_session=True))
    finally:
        log.close()


def remount(holder_pid: int, node_dir: Path) -> None:
    """Re-run mount.sh inside a running node (after its spec changed)."""
    proc = subprocess.run(["nsenter", "-t", str(holder_pid), "-m", "-u", "-n", "/bin/sh", str(node_dir / "mount.sh")],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"re-mounting {node_dir.name} failed: {proc.stderr.strip()}")
