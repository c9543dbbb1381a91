"""One SSH node: its sshd config, its private /etc files, and the namespace it lives in.

Each node is an `unshare --uts --mount` process that runs mount.sh (hostname + mounts) and then execs
sshd, so the sshd is the namespace holder; slurmd and later re-mounts join it with nsenter.
Mounts inside the node (all private to its mount namespace, gone when its last process exits):
  /usr/local                    <- nodes/NAME/local        (toolkits, fakes, torch stub)
  /usr/bin  (only if needed)    <- overlay with whiteouts  (python: none / gcc: none)
  /usr/bin/uname                <- nodes/NAME/uname        (reports the spec kernel)
  /etc  (read-only overlay)     <- nodes/NAME/etc on top   (hosts, ssh/ssh_config, ld.so.preload,
                                                           ld.so.cache of the node's libraries)
  /proc/sys/kernel/osrelease    <- nodes/NAME/osrelease
  /root/.bashrc, /root/.profile <- nodes/NAME/home/...     (the host's shell setup must not leak in)
"""
from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .fakes import write, whiteouts
from .procs import track


@dataclass(frozen=True)
class Node:
    name: str
    addr: str

    @property
    def index(self) -> int:
        return int(self.name[4:])


def make_nodes(count: int) -> list[Node]:
    if not 1 <= count <= 250:
        raise ValueError(f"--nodes must be between 1 and 250, got {count}")
    return [Node(f"node{i}", f"127.0.0.{i + 1}") for i in range(1, count + 1)]


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


def etc_hosts(nodes: list[Node], host_name: str) -> str:
    lines = [f"127.0.0.1\tlocalhost {host_name}".rstrip()]
    lines += [f"{n.addr}\t{n.name}" for n in nodes]
    lines += ["::1\tlocalhost ip6-localhost ip6-loopback"]
    return "\n".join(lines) + "\n"


def write_node_files(node_dir: Path, node: Node, nodes: list[Node], *, port: int, cluster_dir: Path,
                     spec: dict, env: dict, host_name: str, preload: Path | None) -> None:
    """Everything the node's mounts point at, except the /usr/local tree (fakes.realise)."""
    authorized = cluster_dir / "authorized_keys"
    key = cluster_dir / "id_ed25519"
    known = cluster_dir / "known_hosts"
    broken = {name: cluster_dir / "wrong_known_hosts" for name in spec.get("mesh_broken_to") or []}
    write(node_dir / "sshd_config", sshd_config(node_dir, node, port, authorized, env))
    etc = node_dir / "etc"
    write(etc / "hosts", etc_hosts(nodes, host_name))
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
    write(node_dir / "mount.sh", mount_script(node_dir, node, bool(wanted)), 0o755)


def mount_script(node_dir: Path, node: Node, hide_in_usr_bin: bool) -> str:
    d = shlex.quote(str(node_dir))
    overlay_bin = (f"mount -t overlay clusterdoc-usrbin -o lowerdir={d}/usrbin-whiteouts:/usr/bin /usr/bin\n"
                   if hide_in_usr_bin else "")
    return f"""#!/bin/sh
# Inside {node.name}'s namespaces: set its hostname and (re)make its private mounts.
set -e
if [ "$(readlink /proc/self/ns/mnt)" = "$(readlink /proc/1/ns/mnt)" ]; then
  echo "mount.sh: refusing to run in the host's mount namespace" >&2; exit 1
fi
hostname {node.name}
# Undo an earlier round (re-planting), innermost first; each loop ends when the path is no mountpoint.
for m in /root/.ssh /root/.profile /root/.bashrc /proc/sys/kernel/osrelease /etc /usr/bin/uname /usr/bin /usr/local; do
  while mountpoint -q "$m" 2>/dev/null; do umount -l "$m"; done
done
mount --bind {d}/local /usr/local
{overlay_bin}mount --bind {d}/uname /usr/bin/uname
# The node's own linker cache (the host's lists libraries under the host's /usr/local); -X: touch no links.
ldconfig -X -C {d}/etc/ld.so.cache 2>/dev/null || true
mount -t overlay clusterdoc-etc -o ro,lowerdir={d}/etc:/etc /etc
mount --bind {d}/osrelease /proc/sys/kernel/osrelease
if [ -f /root/.bashrc ]; then mount --bind {d}/home/.bashrc /root/.bashrc; fi
if [ -f /root/.profile ]; then mount --bind {d}/home/.profile /root/.profile; fi
if [ -d /root/.ssh ]; then mount --bind {d}/home/.ssh /root/.ssh; fi
if [ "$1" = exec-sshd ]; then
  exec /usr/sbin/sshd -D -f {d}/sshd_config -E {d}/sshd.log
fi
"""


def start(node_dir: Path) -> subprocess.Popen:
    """Start the node: new UTS + mount namespace, mounts, then sshd (returns the holder = sshd process)."""
    log = open(node_dir / "holder.log", "w")
    try:
        return track(subprocess.Popen(
            ["unshare", "--uts", "--mount", "--propagation", "private", "/bin/sh", str(node_dir / "mount.sh"),
             "exec-sshd"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd="/", start_new_session=True))
    finally:
        log.close()


def remount(holder_pid: int, node_dir: Path) -> None:
    """Re-run mount.sh inside a running node (after its spec changed)."""
    proc = subprocess.run(["nsenter", "-t", str(holder_pid), "-m", "-u", "/bin/sh", str(node_dir / "mount.sh")],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"re-mounting {node_dir.name} failed: {proc.stderr.strip()}")
