"""Interfaces, addresses, routes, name resolution and InfiniBand ports (the net check's facts).

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import os
import threading

from clusterdoc.probe.base import _bounded, listdir_prefix, read

# --- network, ports, resources, clock, files (the net/port/resources/clock/files checks) ---------------

IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
SIOCGIFFLAGS, SIOCGIFADDR, SIOCGIFNETMASK, SIOCGIFMTU = 0x8913, 0x8915, 0x891B, 0x8921


_RESOLVED = {}  # type: dict


def resolve(name):
    """The addresses `name` resolves to here, in getaddrinfo's order (the first is what a rank connects to).
    Remembered for the probe's life: net and the ssh trust facts ask for the same peers."""
    import socket

    if name in _RESOLVED:
        return list(_RESOLVED[name])
    addrs = []
    for info in socket.getaddrinfo(name, None, 0, socket.SOCK_STREAM):
        if info[4][0] not in addrs:
            addrs.append(info[4][0])
    _RESOLVED[name] = addrs[:8]
    return addrs[:8]


def _prefix(mask):
    return sum(bin(int(x)).count("1") for x in mask.split("."))


def probe_interfaces():
    """[{name, up, running, loopback, mtu, addrs ["a.b.c.d/len", "v6/len"]}] from ioctls (no `ip` needed)."""
    import fcntl
    import socket
    import struct

    out = []
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _, name in sorted(socket.if_nameindex())[:256]:
            req = struct.pack("256s", name.encode()[:15])
            flags = struct.unpack("H", fcntl.ioctl(s, SIOCGIFFLAGS, req)[16:18])[0]
            mtu = struct.unpack("i", fcntl.ioctl(s, SIOCGIFMTU, req)[16:20])[0]
            addrs = []
            try:
                addr = socket.inet_ntoa(fcntl.ioctl(s, SIOCGIFADDR, req)[20:24])
                mask = socket.inet_ntoa(fcntl.ioctl(s, SIOCGIFNETMASK, req)[20:24])
                addrs.append("%s/%d" % (addr, _prefix(mask)))
            except OSError:
                pass  # no IPv4 address
            out.append(
                {
                    "name": name,
                    "up": bool(flags & 0x1),
                    "running": bool(flags & 0x40),
                    "loopback": bool(flags & 0x8),
                    "mtu": mtu,
                    "addrs": addrs,
                }
            )
    finally:
        s.close()
    by_name = dict((i["name"], i) for i in out)
    for line in (read("/proc/net/if_inet6") or "").splitlines():
        f = line.split()
        if len(f) == 6 and f[5] in by_name and f[3] == "00":  # global scope only
            a = ":".join(f[0][i : i + 4] for i in range(0, 32, 4))
            by_name[f[5]]["addrs"].append(
                "%s/%d" % (socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, a)), int(f[2], 16))
            )
    return out


def route_source(addr):
    """The local address the kernel picks to reach `addr` (a UDP connect sends nothing)."""
    import socket

    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((addr, 9))
        return s.getsockname()[0]
    finally:
        s.close()


def probe_ib():
    """Every InfiniBand/RoCE port: [{device, port, state "ACTIVE"..., link_layer}]."""
    out = []
    base = "/sys/class/infiniband"
    for dev in sorted(os.listdir(base) if os.path.isdir(base) else [])[:64]:
        for port in sorted(listdir_prefix(os.path.join(base, dev, "ports"), ""))[:16]:
            state = (read(os.path.join(port, "state")) or "").strip()
            out.append(
                {
                    "device": dev,
                    "port": os.path.basename(port),
                    "state": state.split(":")[-1].strip() or None,
                    "link_layer": (read(os.path.join(port, "link_layer")) or "").strip() or None,
                }
            )
    return out


def probe_net(peers, env_over, limit):
    """Own name and peer names as this node resolves them, interfaces, the route to the first peer,
    NCCL/GLOO_SOCKET_IFNAME as a rank here would see them, InfiniBand ports."""
    import socket

    name = socket.gethostname()
    net = {
        "hostname": name,
        "own": None,
        "own_error": None,
        "resolve": {},
        "resolve_errors": {},
        "ifaces": [],
        "route": None,
        "ifname_env": {},
        "ib": [],
    }
    for k in IFNAME_VARS:
        net["ifname_env"][k] = env_over[k] if k in env_over else os.environ.get(k)
    lock = threading.Lock()
    names = [name] + [p for p in peers if p != name]

    def one(n):
        def go():
            try:
                addrs, err = resolve(n), None
            except Exception as exc:
                addrs, err = None, str(exc)[:200]
            with lock:
                if n == name:
                    net["own"], net["own_error"] = addrs, err
                if n in peers:
                    if addrs:
                        net["resolve"][n] = addrs
                    else:
                        net["resolve_errors"][n] = err or "no address"

        return go

    left = _bounded([one(n) for n in names], limit)
    with lock:
        for n in names:
            if n in peers and n not in net["resolve"] and n not in net["resolve_errors"]:
                net["resolve_errors"][n] = "did not resolve within %gs" % limit
        if left and net["own"] is None and net["own_error"] is None:
            net["own_error"] = "did not resolve within %gs" % limit
    net["ifaces"] = probe_interfaces()
    first = peers[0] if peers else name
    target = (net["resolve"].get(first) or (net["own"] if first == name else None) or [None])[0]
    if target:
        try:
            src = route_source(target)
            iface = [i["name"] for i in net["ifaces"] if any(a.split("/")[0] == src for a in i["addrs"])]
            net["route"] = {"to": first, "addr": target, "source": src, "iface": (iface or [None])[0]}
        except OSError as exc:
            net["route"] = {"to": first, "addr": target, "source": None, "iface": None, "error": str(exc)[:200]}
    net["ib"] = probe_ib()
    return net
