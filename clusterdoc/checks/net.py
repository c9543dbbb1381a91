"""net and port: names, interfaces and TCP between the nodes, judged from each node's `net` and `port` facts.

net: a node's own name must not resolve to loopback when other nodes reach it by that name (Debian's
`127.0.1.1 host` line); every node resolves every peer name to the same address; the interfaces named by
NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME exist, are up and share a subnet with the first node's; one MTU on the
interfaces the job uses; InfiniBand ports ACTIVE and present on every node or none.
port: the first node (MASTER_ADDR) listened on the rendezvous port during the check and every other node
connected to it; a seeded sample of node-to-node connections (port + 1).
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Mapping
from typing import Any

from clusterdoc.checks import FAIL, OK, WARN, Finding, clock, finding, probe_errors
from clusterdoc.checks.nccl import if_selected, parse_if_list
from clusterdoc.checks.spec import Check, Context, Shared
from clusterdoc.checks.ssh import UNREACHABLE

NET, PORT = "net", "port"
IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
DEBIAN_LOOPBACK = "127.0.1.1"
SAMPLE_PEERS = 2  # node-to-node TCP connections per node (seeded sample, as the mesh would)


def _hostlist(names) -> str:
    from clusterdoc.hostfile import compress_hostlist

    return compress_hostlist(list(names))


def _loopback(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr.split("%")[0]).is_loopback
    except ValueError:
        return False


def match_ifaces(spec: str, ifaces: list[dict], exact_only: bool = False) -> list[dict]:
    """The interfaces NCCL would consider for NCCL_SOCKET_IFNAME=spec, read as NCCL reads it (nccl.parse_if_list:
    comma list of name prefixes, `=` for exact names, a leading `^` to exclude; loopback is not special). gloo's
    GLOO_SOCKET_IFNAME (`exact_only`) is torch's: a comma list of exact names, no `^` or `=`. Down interfaces are
    kept (NCCL skips them: the check says so)."""
    if exact_only:
        wanted = spec.split(",")
        return [i for i in ifaces if (i.get("name") or "") in wanted]
    parsed = parse_if_list(spec)
    return [i for i in ifaces if if_selected(i.get("name") or "", -1, parsed)]


def chosen_iface(facts: dict) -> tuple[str, dict] | None:
    """(variable, interface) NCCL/gloo bootstrap on from this node when NCCL_SOCKET_IFNAME (else
    GLOO_SOCKET_IFNAME) is set: the first running match with an address, in the kernel's interface order."""
    net = _net(facts)
    env = net.get("ifname_env") or {}
    for var in IFNAME_VARS:
        if env.get(var):
            for i in match_ifaces(env[var], net.get("ifaces") or [], var.startswith("GLOO")):
                if i.get("up") and i.get("running") and i.get("addrs"):
                    return var, i
            return None
    return None


def _net(facts: dict | None) -> dict:
    return (facts or {}).get("net") or {}


def _first_addr(addrs) -> str | None:
    return addrs[0] if addrs else None


def used_ifaces(facts: dict) -> tuple[str | None, list[dict]]:
    """(the variable that names them or None, the up interfaces the job's traffic uses on this node): those
    NCCL_SOCKET_IFNAME (else GLOO_SOCKET_IFNAME) names, else the one with the route to the first node."""
    net = _net(facts)
    ifaces = net.get("ifaces") or []
    env = net.get("ifname_env") or {}
    for var in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        if env.get(var):
            return var, [i for i in match_ifaces(env[var], ifaces, var.startswith("GLOO")) if i.get("up")]
    route = net.get("route") or {}
    return None, [i for i in ifaces if i.get("name") == route.get("iface")]


def check_node(node: str, facts: dict, peer_view: dict[str, str] | None, multi: bool) -> list[Finding]:
    """One node: its own name (when the job spans several nodes), the interfaces its NCCL/GLOO_SOCKET_IFNAME
    name, its InfiniBand ports. `peer_view`: {other node: the first address it resolves this node's name to}."""
    out = probe_errors(node, facts, NET)
    net = _net(facts)
    if not net:
        return out
    name = net.get("hostname") or node
    own = net.get("own") or []
    if multi:
        others = {a for a in (peer_view or {}).values() if a}
        if net.get("own_error") or not own:
            out.append(
                finding(
                    node,
                    NET,
                    FAIL,
                    f"{node} cannot resolve its own name {name}: {net.get('own_error')} "
                    "(gloo and torch's rendezvous look it up to pick the address they announce)",
                    f"add {name} with its cluster address to /etc/hosts on {node} (or fix DNS)",
                )
            )
        elif _loopback(own[0]) and (not others or others != {own[0]}):
            debian = " (Debian's default /etc/hosts line)" if own[0] == DEBIAN_LOOPBACK else ""
            seen = f" (the other nodes resolve it to {', '.join(sorted(others))})" if others else ""
            out.append(
                finding(
                    node,
                    NET,
                    FAIL,
                    f"{node} resolves its own name {name} to {own[0]}{debian}{seen}: "
                    "ranks on other nodes cannot reach the address it announces",
                    f"map {name} to its cluster address in /etc/hosts on {node}, or remove the {own[0]} {name} line",
                )
            )
        elif _loopback(own[0]):
            out.append(
                finding(
                    node,
                    NET,
                    OK,
                    f"own name {name} -> {own[0]}, as every node resolves it (loopback: the nodes share one machine)",
                )
            )
        else:
            out.append(finding(node, NET, OK, f"own name {name} -> {own[0]}"))
    env = net.get("ifname_env") or {}
    ifaces = net.get("ifaces") or []
    have = ", ".join(i["name"] for i in ifaces if i.get("name")) or "none"
    for var in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        spec = env.get(var)
        if not spec:
            continue
        matched = match_ifaces(spec, ifaces, var.startswith("GLOO"))
        up = [i for i in matched if i.get("up") and i.get("running")]
        if not matched:
            out.append(
                finding(
                    node,
                    NET,
                    FAIL,
                    f"{var}={spec} matches no interface on {node} (it has: {have})",
                    f"set {var} to the cluster network's interface on every node (a prefix like eth, "
                    f"or =name for one exact name), or unset it",
                )
            )
        elif not up:
            names = ", ".join(i["name"] for i in matched)
            out.append(
                finding(
                    node,
                    NET,
                    FAIL,
                    f"{var}={spec}: {names} on {node} is down (no link)",
                    f"bring it up on {node} (ip link set {matched[0]['name']} up; check the cable/port), "
                    f"or name another interface in {var}",
                )
            )
        else:
            out.append(finding(node, NET, OK, f"{var}={spec} -> {', '.join(i['name'] for i in up)} (up)"))
    ib = net.get("ib") or []
    by_dev: dict[str, list[dict]] = {}
    for p in ib:
        by_dev.setdefault(p.get("device") or "?", []).append(p)
    for dev, ports in sorted(by_dev.items()):
        down = [p for p in ports if p.get("state") != "ACTIVE"]
        if not down:
            continue
        states = ", ".join(f"port {p.get('port')} {p.get('state') or 'unknown'}" for p in down)
        status = FAIL if len(down) == len(ports) else WARN
        out.append(
            finding(
                node,
                NET,
                status,
                f"InfiniBand {dev} on {node}: {states}"
                + (" (no ACTIVE port: NCCL falls back to TCP or fails)" if status == FAIL else ""),
                f"check the cable and the subnet manager (ibstat {dev}; opensm running?), or leave the "
                "device out with NCCL_IB_HCA",
            )
        )
    if ib and not any(f["status"] != OK for f in out if f["check"] == NET):
        out.append(finding(node, NET, OK, f"InfiniBand: {len(ib)} port(s) ACTIVE"))
    if not out:
        out.append(finding(node, NET, OK, "no interface named by NCCL/GLOO_SOCKET_IFNAME; no InfiniBand"))
    return out


def peer_views(all_facts: dict[str, dict]) -> dict[str, dict[str, str]]:
    """{name: {node: the first address that node resolves name to}}, each node's view of its own name left out."""
    views: dict[str, dict[str, str]] = {}
    for node, f in all_facts.items():
        for name, addrs in (_net(f).get("resolve") or {}).items():
            if name != node and addrs:
                views.setdefault(name, {})[node] = addrs[0]
    return views


def _split(groups: Mapping[Any, list[str]]) -> tuple[str, list[str]]:
    """'v1 on node[1-3]; v2 on node4' and the nodes outside the largest group (all when there is no majority)."""
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
    desc = "; ".join(f"{v} on {_hostlist(ns)}" for v, ns in ordered)
    majority = len(ordered[0][1]) > len(ordered[1][1])
    return desc, [n for _, ns in (ordered[1:] if majority else ordered) for n in ns]


def check_cluster(all_facts: dict[str, dict], nodes: list[str]) -> list[Finding]:
    """Across the nodes that answered: peer names resolved alike, named interfaces on the first node's subnet,
    one MTU, InfiniBand everywhere or nowhere."""
    out: list[Finding] = []
    facts = {n: all_facts[n] for n in nodes if all_facts.get(n) and _net(all_facts[n])}
    if len(facts) < 2:
        return out
    # Peer names: every node, the same address; and resolvable at all.
    failing: dict[tuple[str, str], list[str]] = {}
    for node, f in facts.items():
        for name, err in (_net(f).get("resolve_errors") or {}).items():
            if name != node:
                failing.setdefault((name, err), []).append(node)
    for (name, err), who in sorted(failing.items()):
        out.append(
            finding(
                _hostlist(who),
                NET,
                FAIL,
                f"{_hostlist(who)} cannot resolve {name}: {err}",
                f"add {name} to /etc/hosts (or DNS) on {_hostlist(who)}, with the address the other nodes use",
                nodes=who,
            )
        )
    for name, view in sorted(peer_views(facts).items()):
        groups: dict[str, list[str]] = {}
        for node, addr in view.items():
            groups.setdefault(addr, []).append(node)
        if len(groups) > 1:
            desc, odd = _split(groups)
            out.append(
                finding(
                    _hostlist(odd),
                    NET,
                    FAIL,
                    f"{name} resolves to different addresses: {desc}",
                    f"make {name} resolve to its one cluster address everywhere (/etc/hosts or DNS on "
                    f"{_hostlist(odd)})",
                    nodes=odd,
                )
            )
    # Named interfaces share the first node's subnet; one MTU on the interfaces in use.
    first = next((n for n in nodes if n in facts), None)
    used = {n: used_ifaces(f) for n, f in facts.items()}

    def nets(ifs):
        got = set()
        for i in ifs:
            for a in i.get("addrs") or []:
                try:
                    got.add(ipaddress.ip_interface(a).network)
                except ValueError:
                    pass
        return got

    # The interface a node's NCCL/gloo bootstrap binds to, announced to every other node: loopback reaches none.
    for n, f in facts.items():
        got = chosen_iface(f)
        if got and (got[1].get("loopback") or all(_loopback(a.split("/")[0]) for a in got[1]["addrs"])):
            chosen_var, i = got
            spec = (_net(f).get("ifname_env") or {}).get(chosen_var)
            real = [x["name"] for x in _net(f).get("ifaces") or [] if not x.get("loopback") and x.get("up")]
            out.append(
                finding(
                    n,
                    NET,
                    FAIL,
                    f"{chosen_var}={spec} on {n} picks {i['name']} ({', '.join(i['addrs'])}), the loopback interface: "
                    "the other nodes cannot reach the address it announces (the job hangs at init, then "
                    "'Connection refused' / a timeout)",
                    f"on {n}: set {chosen_var} to the cluster network's interface"
                    + (
                        f" (={real[0]}; the first node uses {', '.join(i2['name'] for i2 in used[first][1])})"
                        if real and first and first != n and used[first][1]
                        else f" ({', '.join(real)})"
                        if real
                        else ""
                    )
                    + ", or unset it",
                    nodes=[n],
                )
            )
            used[n] = (chosen_var, [])  # said here: not also blamed for sharing no subnet
    base = nets(used[first][1]) if first else set()
    off = [n for n, (var, ifs) in used.items() if var and ifs and base and n != first and not (nets(ifs) & base)]
    if off:
        var = used[off[0]][0]
        desc = "; ".join(
            f"{n}: {', '.join(a for i in used[n][1] for a in i.get('addrs') or []) or 'no address'}" for n in off[:8]
        )
        out.append(
            finding(
                _hostlist(off),
                NET,
                FAIL,
                f"the {var} interfaces of {_hostlist(off)} share no subnet with {first}'s "
                f"({', '.join(sorted(map(str, base)))}): {desc}",
                f"name the interface of the cluster network in {var} (the same network on every node)",
                nodes=off,
            )
        )
    mtus: dict[int, list[str]] = {}
    for n, (_var, ifs) in used.items():
        if ifs and ifs[0].get("mtu"):
            mtus.setdefault(min(i.get("mtu") or 0 for i in ifs), []).append(n)
    if len(mtus) > 1:
        desc, odd = _split(mtus)
        which = {v for v, _ in used.values() if v is not None}
        what = f"the {'/'.join(sorted(which))} interfaces" if which else "the interface with the route to " + f"{first}"
        out.append(
            finding(
                _hostlist(odd),
                NET,
                FAIL,
                f"MTU differs on {what}: {desc} (frames larger than the "
                "smallest MTU are dropped: collectives stall on large messages)",
                "set one MTU on the cluster network's interfaces of every node (ip link set DEV mtu N; "
                f"persist it in the network config), starting with {_hostlist(odd)}",
                nodes=odd,
            )
        )
    with_ib = [n for n, f in facts.items() if _net(f).get("ib")]
    if with_ib and len(with_ib) < len(facts):
        without = [n for n in facts if n not in with_ib]
        out.append(
            finding(
                _hostlist(without),
                NET,
                WARN,
                f"InfiniBand devices on {_hostlist(with_ib)} but none on {_hostlist(without)}: NCCL falls "
                "back to TCP sockets there, and every ring through those nodes runs at TCP speed",
                f"install/enable the HCA driver on {_hostlist(without)} (ibv_devinfo), or keep the job off those nodes",
                nodes=without,
            )
        )
    return out


# --- port -------------------------------------------------------------------------------------------------


def schedule(nodes: list[str]) -> list[str]:
    """The order the head starts the nodes' probes in: the first node (the rendezvous) first, the others in a
    seeded shuffle (the same nodes, the same order), so that neighbours in it are spread over the racks."""
    rest = list(nodes[1:])
    random.Random(",".join(nodes)).shuffle(rest)
    return nodes[:1] + rest


def sample_peers(nodes: list[str], k: int = SAMPLE_PEERS) -> dict[str, list[str]]:
    """{node: the peers it connects to}: its k predecessors in `schedule` order (the first k nodes: the others
    among the first k + 1). The head starts the probes in that order, `fanout` at a time, so a node's targets started
    just before it and are listening when it connects, however many nodes there are."""
    order = schedule(nodes)
    out = {}
    for i, n in enumerate(order):
        peers = order[max(0, i - k) : i] if i >= k else order[:i] + order[i + 1 : k + 1]
        out[n] = sorted(peers, key=nodes.index)
    return out


def plan(nodes: list[str], port: int) -> dict[str, dict]:
    """What each node's probe is asked to do: {node: {"listen": [(port, mode, expected)], "connect": [targets]}}.
    The first node listens on `port` as torch's TCPStore would (MASTER_ADDR:MASTER_PORT); every node listens on
    port + 1 for the sampled node-to-node connections."""
    if len(nodes) < 2:
        return {}
    sample = sample_peers(nodes)
    incoming = {n: sum(n in ps for ps in sample.values()) for n in nodes}
    out = {}
    for n in nodes:
        listen = [(port + 1, "peer", incoming[n])]
        connect = [f"{p}:{port + 1}" for p in sample[n]]
        if n == nodes[0]:
            listen.insert(0, (port, "store", len(nodes) - 1))
        else:
            connect.insert(0, f"{nodes[0]}:{port}")
        out[n] = {"listen": listen, "connect": connect}
    return out


def _why(error: str | None) -> str:
    return {
        "timeout": "timed out (nothing answered: a firewall drops it)",
        "refused": "refused (nothing listening there, or a firewall rejects it)",
        "unreachable": "no route to it",
        "unresolved": "the name does not resolve",
    }.get(error or "", error or "failed")


def _after_close(all_facts: Mapping[str, Any], node: str, c: dict, host: str, p: str) -> bool:
    """Whether `node`'s last attempt at host:p was made after host's listener had stopped (head's clock)."""
    mine, theirs = all_facts.get(node) or {}, all_facts.get(host) or {}
    listener = next(
        (x for x in (theirs.get("port") or {}).get("listen") or [] if str(x.get("port")) == p and x.get("closed")),
        None,
    )
    a, b = clock.probe_offset(mine), clock.probe_offset(theirs)
    if listener is None or c.get("at") is None or a is None or b is None:
        return False
    return c["at"] - a[0] + a[1] + b[1] >= listener["closed"] - b[0]


def check_port(all_facts: dict[str, dict | None], nodes: list[str], port: int) -> list[Finding]:
    """The first node's rendezvous listener, and every connection the nodes tried, named by target node."""
    out = []
    first = nodes[0]
    ff = all_facts.get(first) or {}
    listens = {(x.get("port"), x.get("mode")): x for x in ((ff.get("port") or {}).get("listen") or [])}
    store = next((x for (p, m), x in listens.items() if m == "store"), None)
    port = store.get("port") if store and store.get("port") else port
    if store and store.get("status") == "in_use":
        out.append(
            finding(
                first,
                PORT,
                FAIL,
                f"port {port} is already in use on {first} (the first node: "
                "MASTER_ADDR): a leftover rank or another job holds the rendezvous port",
                f"find its owner on {first} with `ss -ltnp 'sport = :{port}'` and stop it, or use "
                f"another port (MASTER_PORT; check with --port)",
            )
        )
    elif store and store.get("status") != "listening":
        out.append(
            finding(
                first,
                PORT,
                FAIL,
                f"{first} cannot listen on port {port}: {store.get('message')}",
                f"run `python3 -m http.server {port}` on {first} to see why",
            )
        )
    failed: dict[tuple[str, str, str], list[str]] = {}
    tested: dict[str, int] = {}

    def listened(host: str, p: str) -> bool:
        """Whether `host`'s probe held a listener on port p: a node that gave no facts (down, no python3) or
        could not listen is reported for that, not blamed for every connection to it."""
        got = ((all_facts.get(host) or {}).get("port") or {}).get("listen") or []
        return any(str(x.get("port")) == p and x.get("status") in ("listening", "in_use") for x in got)

    late: dict[tuple[str, str], list[str]] = {}
    for n in nodes:
        for c in ((all_facts.get(n) or {}).get("port") or {}).get("connect") or []:
            target = c.get("target") or ""
            host, _, p = target.rpartition(":")
            if not listened(host, p):
                continue
            if not c.get("ok") and c.get("error") == "refused" and _after_close(all_facts, n, c, host, p):
                late.setdefault((host, p), []).append(n)  # nothing to tell: the listener had already stopped
                continue
            tested[n] = tested.get(n, 0) + 1
            if not c.get("ok"):
                failed.setdefault((host, p, c.get("error") or ""), []).append(n)
    for (host, p), who in sorted(late.items()):
        rendezvous = host == first and p == str(port)
        out.append(
            finding(
                host,
                PORT,
                WARN if rendezvous else OK,
                f"{'the rendezvous ' if rendezvous else ''}{host}:{p} not tested from {_hostlist(who)}: they "
                f"connected after its listener had stopped (the check outlasted {host}'s hold)",
                "raise --timeout (the listener holds for most of it) or --fanout, or check fewer nodes at once",
                nodes=[host],
            )
        )
    for (host, p, error), who in sorted(failed.items()):
        rendezvous = host == first and p == str(port)
        if rendezvous and store and store.get("status") != "listening":
            continue  # said above
        what = (
            f"the rendezvous {host}:{p} (MASTER_ADDR:MASTER_PORT)"
            if rendezvous
            else f"{host} on TCP port {p} (node to node)"
        )
        fix = (
            f"open TCP port {p} on {host} (nft list ruleset / iptables -S on {host}: accept it from the cluster "
            "network)"
            if error in ("timeout", "refused")
            else f"check the route and the name of {host} on {_hostlist(who)}"
        ) + (", or use a port the firewall allows (--port, MASTER_PORT)" if rendezvous else "")
        out.append(
            finding(
                host, PORT, FAIL, f"{what} cannot be reached from {_hostlist(who)}: {_why(error)}", fix, nodes=[host]
            )
        )
    blamed = {f["node"] for f in out if f["status"] != OK}
    for n in nodes:
        mine = all_facts.get(n)
        if n in blamed or not mine or not mine.get("port"):
            continue
        k = tested.get(n, 0)
        extra = f"listened on {port} (rendezvous); " if n == first else ""
        out.append(finding(n, PORT, OK, f"{extra}{k} TCP connection(s) from here ok"))
    return out


def _views(c: Context) -> dict:
    return peer_views(dict(c.answered)) if c.multi else {}


def _port(c: Context) -> list[Finding]:
    if not c.multi:
        return []
    # the port plan's nodes: those the head could connect to (the others were left out of it)
    planned = [n for n in c.nodes if c.conns[n]["status"] not in UNREACHABLE]
    return check_port(dict(c.all_facts), planned or c.nodes, c.opts.port)


CHECKS = (
    Check(
        "net",
        30,
        "names resolve alike, the interface NCCL/gloo pick, node-to-node TCP",
        reads=("net",),
        probe_errors={"net": WARN},
        prepare=(Shared("views", _views, {}),),
        node=lambda c: check_node(c.node, c.facts, c.shared["views"].get(c.node), c.multi),
        cluster=lambda c: check_cluster(dict(c.answered), c.nodes) if c.multi else [],
        cluster_order=10,
    ),
    Check(
        "port",
        50,
        "the rendezvous port is free on the first node and reachable from the others",
        reads=("port",),
        probe_errors={"port": WARN},
        local=False,
        ssh_only=True,
        cluster=_port,
        cluster_order=20,
    ),
)
