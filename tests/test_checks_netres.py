"""net, port, resources, clock, files: each rule from facts dicts (no SSH), one planted problem at a time."""

import copy

from clusterdoc.checks import FAIL, OK, WARN, clock, files, net, resources
from clusterdoc.doctor.facts import Gathered
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.doctor.rules import judge
from clusterdoc.untrusted import clean_facts

NODES = ["node1", "node2", "node3", "node4"]


def iface(name, addr, mtu=1500, up=True, loopback=False):
    return {"name": name, "up": up, "running": up, "loopback": loopback, "mtu": mtu, "addrs": [addr] if addr else []}


def node_facts(i, **over):
    """Healthy facts of node<i> on 198.18.0.<i+1>/24, as the probe sends them."""
    addr = {n: [f"198.18.0.{k + 2}"] for k, n in enumerate(NODES)}
    f = {
        "hostname": f"node{i}",
        "net": {"hostname": f"node{i}", "own": [f"198.18.0.{i + 1}"], "own_error": None,
                "resolve": dict(addr), "resolve_errors": {},
                "ifaces": [iface("lo", "127.0.0.1/8", 65536, loopback=True), iface("eth0", f"198.18.0.{i + 1}/24")],
                "route": {"to": "node1", "addr": "198.18.0.2", "source": f"198.18.0.{i + 1}", "iface": "eth0"},
                "ifname_env": {"NCCL_SOCKET_IFNAME": None, "GLOO_SOCKET_IFNAME": None}, "ib": []},
        "resources": {"shm": {"total_mib": 32000, "free_mib": 31000}, "memlock_kib": -1, "nofile": 65536,
                      "nofile_hard": 65536, "space": {"/tmp": {"total_mib": 100000, "free_mib": 50000}}},
        "clock": {"start": 1000.2, "end": 1000.9, "date": None, "date_at": None, "head_sent": 1000.0,
                  "head_received": 1001.1},
        "port": {"listen": [], "connect": []},
        "errors": [],
    }
    plan = net.plan(NODES, 29400)[f"node{i}"]
    f["port"]["listen"] = [{"port": p, "mode": m, "status": "listening", "message": None, "expected": e, "accepted": e}
                           for p, m, e in plan["listen"]]
    f["port"]["connect"] = [{"target": t, "ok": True, "error": None, "message": "connected", "attempts": 1,
                             "elapsed": 0.01} for t in plan["connect"]]
    for key, value in over.items():
        f[key] = value
    return f


def cluster(**planted):
    facts = {n: node_facts(i + 1) for i, n in enumerate(NODES)}
    for n, change in planted.items():
        change(facts[n], facts)
    return facts


def run(facts, opts=None):
    g = Gathered(list(facts), {n: {"status": "ok", "message": "", "elapsed": 0.1, "exit_code": 0} for n in facts},
                 facts, ["net", "port", "resources", "clock", "files"])
    return judge(g, opts or CheckOptions(port=29400))


def problems(findings):
    return sorted((f["check"], f["status"], f["node"]) for f in findings if f["status"] != OK)


def test_healthy_cluster_all_ok():
    findings = run(cluster())
    assert problems(findings) == []
    assert {f["check"] for f in findings} == {"net", "port", "resources", "clock"}


def test_healthy_facts_pass_validation():
    f = node_facts(1)
    assert clean_facts(f)["malformed"] == []


def test_own_name_on_debian_loopback_fails_with_fix():
    def debian(f, _all):
        f["net"]["own"] = ["127.0.1.1", "198.18.0.3"]
    findings = run(cluster(node2=debian))
    assert problems(findings) == [("net", FAIL, "node2")]
    f = next(x for x in findings if x["status"] == FAIL)
    assert "node2 resolves its own name node2 to 127.0.1.1 (Debian's default /etc/hosts line)" in f["message"]
    assert "198.18.0.3" in f["message"] and "127.0.1.1 node2 line" in f["fix"]


def test_shared_machine_loopback_names_are_ok():
    facts = cluster()
    for k, n in enumerate(NODES):
        facts[n]["net"]["own"] = [f"127.0.0.{k + 2}"]
        for m in NODES:
            facts[m]["net"]["resolve"][n] = [f"127.0.0.{k + 2}"]
    assert problems(run(facts)) == []


def test_own_name_unresolvable():
    def gone(f, _all):
        f["net"]["own"], f["net"]["own_error"] = None, "[Errno -2] Name or service not known"
    assert problems(run(cluster(node3=gone))) == [("net", FAIL, "node3")]


def test_peer_name_resolved_differently_names_nodes_per_address():
    def stale(f, _all):
        f["net"]["resolve"]["node4"] = ["198.18.0.99"]
    findings = run(cluster(node2=stale))
    assert problems(findings) == [("net", FAIL, "node2")]
    msg = next(x["message"] for x in findings if x["status"] == FAIL)
    assert msg == "node4 resolves to different addresses: 198.18.0.5 on node[1,3]; 198.18.0.99 on node2"


def test_peer_name_not_resolvable():
    def miss(f, _all):
        del f["net"]["resolve"]["node3"]
        f["net"]["resolve_errors"]["node3"] = "Name or service not known"
    findings = run(cluster(node1=miss, node4=miss))
    assert problems(findings) == [("net", FAIL, "node[1,4]")]
    assert "cannot resolve node3" in next(x["message"] for x in findings if x["status"] == FAIL)


def test_nccl_ifname_syntax():
    ifs = [iface("lo", "127.0.0.1/8", loopback=True), iface("eth0", "10.0.0.1/24"), iface("eth10", "10.1.0.1/24"),
           iface("ib0", "10.2.0.1/24")]
    names = lambda spec, exact=False: [i["name"] for i in net.match_ifaces(spec, ifs, exact)]  # noqa: E731
    assert names("eth") == ["eth0", "eth10"]
    assert names("=eth0") == ["eth0"]
    # NCCL's ncclOsFindInterfaces (src/os/linux.cc) skips only IPv6 loopback addresses: `^eth` keeps lo
    assert names("^eth") == ["lo", "ib0"]
    assert names("^=eth0") == ["lo", "eth10", "ib0"]
    assert names("=^eth0") == []  # `=` then `^`: the name "^eth0"
    assert names(" eth0") == []  # nothing is stripped: a prefix starting with a blank
    assert names("eth0,,ib") == ["eth0", "ib0"]  # empty entries skipped (strtok)
    assert names("eth0:1") == ["eth0"]  # `:port` is read, and ignored for interfaces
    assert names("ib,eth1") == ["eth10", "ib0"]
    assert names("eth", exact=True) == []


def test_ifname_missing_and_down():
    def wrong(f, _all):
        f["net"]["ifname_env"]["NCCL_SOCKET_IFNAME"] = "ens"
    def down(f, _all):
        f["net"]["ifname_env"]["GLOO_SOCKET_IFNAME"] = "eth0"
        f["net"]["ifaces"][1].update(up=True, running=False)
    findings = run(cluster(node2=wrong, node3=down))
    assert ("net", FAIL, "node2") in problems(findings) and ("net", FAIL, "node3") in problems(findings)
    text = " | ".join(f["message"] for f in findings if f["status"] == FAIL)
    assert "NCCL_SOCKET_IFNAME=ens (set on the node) matches no interface on node2 (it has: lo, eth0)" in text
    assert "GLOO_SOCKET_IFNAME=eth0 (set on the node): eth0 on node3 is down" in text


def test_named_interfaces_off_the_first_nodes_subnet():
    facts = cluster()
    for n in NODES:
        facts[n]["net"]["ifname_env"]["NCCL_SOCKET_IFNAME"] = "eth"
    facts["node3"]["net"]["ifaces"][1]["addrs"] = ["10.9.0.4/24"]
    findings = run(facts)
    assert problems(findings) == [("net", FAIL, "node3")]
    assert "share no subnet with node1's (198.18.0.0/24)" in next(f["message"] for f in findings if f["status"] == FAIL)


def test_mtu_differs_names_the_odd_node():
    def small(f, _all):
        f["net"]["ifaces"][1]["mtu"] = 1400
    findings = run(cluster(node4=small))
    assert problems(findings) == [("net", FAIL, "node4")]
    msg = next(f["message"] for f in findings if f["status"] == FAIL)
    assert "MTU differs on the interface with the route to node1: 1500 on node[1-3]; 1400 on node4" in msg


def test_infiniband_split_and_port_down():
    def ib(f, _all):
        f["net"]["ib"] = [{"device": "mlx5_0", "port": "1", "state": "ACTIVE", "link_layer": "InfiniBand"}]
    def ib_down(f, _all):
        f["net"]["ib"] = [{"device": "mlx5_0", "port": "1", "state": "DOWN", "link_layer": "InfiniBand"}]
    findings = run(cluster(node1=ib, node2=ib, node3=ib_down))
    assert problems(findings) == [("net", FAIL, "node3"), ("net", WARN, "node4")]
    text = " | ".join(f["message"] for f in findings if f["status"] != OK)
    assert "InfiniBand mlx5_0 on node3: port 1 DOWN" in text
    assert "InfiniBand devices on node[1-3] but none on node4" in text


def test_rendezvous_port_in_use_on_first_node():
    def taken(f, _all):
        f["port"]["listen"][0].update(status="in_use", message="[Errno 98] Address already in use", accepted=0)
        for other in _all.values():
            for c in other["port"]["connect"]:
                if c["target"] == "node1:29400":
                    c.update(ok=False, error="refused")
    findings = run(cluster(node1=taken))
    assert problems(findings) == [("port", FAIL, "node1")]
    f = next(x for x in findings if x["status"] == FAIL)
    assert "port 29400 is already in use on node1" in f["message"] and "ss -ltnp 'sport = :29400'" in f["fix"]


def test_rendezvous_dropped_names_first_node_and_timeout():
    def drop(f, _all):
        for other in _all.values():
            for c in other["port"]["connect"]:
                if c["target"] == "node1:29400":
                    c.update(ok=False, error="timeout", message="timed out")
    findings = run(cluster(node1=drop))
    assert problems(findings) == [("port", FAIL, "node1")]
    f = next(x for x in findings if x["status"] == FAIL)
    assert f["message"] == ("the rendezvous node1:29400 (MASTER_ADDR:MASTER_PORT) cannot be reached from node[2-4]: "
                            "timed out (nothing answered: a firewall drops it)")
    assert "open TCP port 29400 on node1" in f["fix"]


def test_sampled_peer_refused():
    facts = cluster()
    who = [n for n in NODES if "node3:29401" in [c["target"] for c in facts[n]["port"]["connect"]]]
    for n in who:
        for c in facts[n]["port"]["connect"]:
            if c["target"] == "node3:29401":
                c.update(ok=False, error="refused")
    findings = run(facts)
    assert problems(findings) == [("port", FAIL, "node3")]
    assert "refused" in next(f["message"] for f in findings if f["status"] == FAIL)


def test_sample_is_seeded_and_follows_the_order_the_head_starts_the_nodes_in():
    names = [f"n{i}" for i in range(100)]
    order = net.schedule(names)
    assert order == net.schedule(list(names)) and order[0] == "n0" and sorted(order) == sorted(names)
    assert order[1:] != names[1:]  # shuffled: neighbours in it are not neighbours in the hostfile (racks)
    a, b = net.sample_peers(names, 3), net.sample_peers(names, 3)
    assert a == b and all(len(v) == 3 and n not in v for n, v in a.items())
    # each node connects to the k nodes started just before it (already listening), the first to the next k
    assert all(0 < order.index(n) - order.index(p) <= 3 for n, v in a.items() if order.index(n) >= 3 for p in v)
    assert all(set(a[n]) == set(order[:4]) - {n} for n in order[:3])
    p = net.plan(names[:4], 29500)
    assert p["n0"]["listen"][0] == (29500, "store", 3) and p["n1"]["connect"][0] == "n0:29500"
    assert sum(p[n]["listen"][-1][2] for n in p) == sum(len(p[n]["connect"]) for n in p) - 3


def test_resources_thresholds():
    def res(**kw):
        f = node_facts(1)
        f["resources"].update(kw)
        return {(x["status"], x["message"].split(" on ")[0]) for x in resources.check("node1", f) if x["status"] != OK}
    assert res(shm={"total_mib": 64, "free_mib": 64}) == {(FAIL, "/dev/shm")}
    assert res(shm={"total_mib": 1500, "free_mib": 1500}) == {(WARN, "/dev/shm")}
    assert res(shm={"total_mib": 8000, "free_mib": 100}) == {(FAIL, "/dev/shm")}
    assert res(shm=None) == {(FAIL, "no /dev/shm")}
    assert res(nofile=1024) == {(WARN, "open-files limit (ulimit -n)")}
    assert res(space={"/tmp": {"total_mib": 9000, "free_mib": 500}}) == {(FAIL, "/tmp")}
    assert res(space={"/tmp": {"total_mib": 9000, "free_mib": 3000}}) == {(WARN, "/tmp")}
    assert res(memlock_kib=8192) == set()  # no InfiniBand: not judged


def test_memlock_with_infiniband():
    f = node_facts(1)
    f["net"]["ib"] = [{"device": "mlx5_0", "port": "1", "state": "ACTIVE", "link_layer": "InfiniBand"}]
    for kib, status in ((8192, FAIL), (1 << 20, WARN), (-1, OK)):
        f["resources"]["memlock_kib"] = kib
        got = [x for x in resources.check("node1", f) if "memlock" in x["message"]]
        assert got[0]["status"] == status
        if status != OK:
            assert "memlock unlimited" in got[0]["fix"]


def test_docker_shm_message_and_fix():
    f = node_facts(4)
    f["resources"]["shm"] = {"total_mib": 64, "free_mib": 64}
    x = next(x for x in resources.check("node4", f) if x["status"] == FAIL)
    assert "/dev/shm on node4 is 64 MiB" in x["message"] and "unhandled system error" in x["message"]
    assert "--shm-size" in x["fix"]


def test_clock_offsets():
    def status(start, end, date=None, date_at=None):
        f = node_facts(1)
        f["clock"] = {"start": start, "end": end, "date": date, "date_at": date_at, "head_sent": 1000.0,
                      "head_received": 1001.0}
        return [x["status"] for x in clock.check("node1", f)]
    assert status(1000.1, 1000.9) == [OK]
    assert status(1005.1, 1005.9) == [WARN]
    assert status(1100.1, 1100.9) == [FAIL]
    assert status(900.1, 900.9) == [FAIL]
    assert status(1000.1, 1000.9, date=1500.0, date_at=1000.5) == [FAIL]   # `date` shows the node's clock
    assert status(1001.0, 1001.0) == [OK]   # 0.5 s +- 0.5: within the bound
    theta, delta = clock.offset({"clock": {"start": 10.2, "end": 10.8, "head_sent": 0.0, "head_received": 1.0}})
    assert round(theta, 3) == 10.0 and round(delta, 3) == 0.2


def test_files_missing_and_different():
    facts = {n: {"files": {"/opt/venv/bin/python": {"sha256": "a" * 64, "size": 10, "realpath": "/x"},
                           "/job/train.py": {"sha256": "b" * 64, "size": 5, "realpath": "/job/train.py"}}}
             for n in NODES}
    facts["node2"]["files"]["/job/train.py"] = {"error": "FileNotFoundError: No such file or directory"}
    facts["node3"]["files"]["/opt/venv/bin/python"] = dict(facts["node3"]["files"]["/opt/venv/bin/python"],
                                                           sha256="c" * 64)
    out = files.check(facts, NODES)
    bad = sorted((x["node"], x["message"]) for x in out if x["status"] == FAIL)
    assert bad == [("node2", "/job/train.py is not usable on node2: FileNotFoundError: No such file or directory"),
                   ("node3", "/opt/venv/bin/python differs between nodes: sha256 aaaaaaaaaaaa on node[1-2,4]; "
                             "sha256 cccccccccccc on node3")]
    assert [x["node"] for x in out if x["status"] == OK] == ["node1", "node4"]


def test_malformed_new_facts_are_dropped_and_reported():
    f = copy.deepcopy(node_facts(1))
    f["net"]["ifaces"][1]["name"] = "eth\x1b[2J"
    f["net"]["resolve"]["node2"] = ["not an address"]
    f["port"]["connect"][0]["ok"] = "yes"
    f["resources"]["shm"]["total_mib"] = "lots"
    f["clock"]["start"] = "now"
    f["files"] = {"/x": {"sha256": "zz"}}
    bad = {(m["field"], m["check"]) for m in clean_facts(f)["malformed"]}
    assert bad == {("net.ifaces[1].name", "net"), ("net.resolve.node2[0]", "net"), ("port.connect[0].ok", "port"),
                   ("resources.shm.total_mib", "resources"), ("clock.start", "clock"), ("files./x.sha256", "files")}


def test_local_selection_and_options():
    assert CheckOptions().selected() == ["ssh", "mesh", "net", "nccl", "port", "mpi", "kernel", "cuda", "arch", "gpu",
                                         "compute", "fabric", "resources", "clock", "consistency"]
    assert "files" in CheckOptions(files=["/x"]).selected()
    assert CheckOptions(env=["NCCL_SOCKET_IFNAME=eth0"]).env == {"NCCL_SOCKET_IFNAME": "eth0"}
    import pytest

    from clusterdoc.errors import UsageError
    with pytest.raises(UsageError):
        CheckOptions(env=["oops"])
    with pytest.raises(UsageError):
        CheckOptions(port=0).validate()


def test_connections_to_a_node_without_facts_are_not_blamed_on_it():
    facts = cluster()
    facts["node3"] = None          # down: ssh says so
    for n in ("node1", "node2", "node4"):
        for c in facts[n]["port"]["connect"]:
            if c["target"].startswith("node3:"):
                c.update(ok=False, error="refused")
    g = Gathered(NODES, {n: {"status": "ok" if facts[n] else "refused", "message": "", "elapsed": 0.1,
                             "exit_code": 0} for n in NODES}, facts, ["port"])
    assert [f for f in judge(g, CheckOptions(port=29400)) if f["status"] != OK and f["check"] == "port"] == []


def _late(facts, node, target, at, closed):
    """`node`'s connect to target refused at `at`; the target's listener closed at `closed` (head clock: the
    facts' clocks agree with the head's)."""
    host, _, p = target.rpartition(":")
    for c in facts[node]["port"]["connect"]:
        if c["target"] == target:
            c.update(ok=False, error="refused", message="refused", at=at)
    for x in facts[host]["port"]["listen"]:
        if str(x["port"]) == p:
            x["closed"] = closed


def test_a_connection_refused_after_the_listener_stopped_is_not_tested_not_failed():
    facts = cluster()
    for n in ("node2", "node3"):  # the check outlasted node1's hold: they came after it stopped listening
        _late(facts, n, "node1:29400", at=1010.0, closed=1005.0)
    findings = run(facts)
    assert problems(findings) == [("port", WARN, "node1")]
    f = next(x for x in findings if x["status"] == WARN)
    assert "the rendezvous node1:29400 not tested from node[2-3]" in f["message"] and "--timeout" in f["fix"]
    facts = cluster()
    _late(facts, "node2", "node1:29400", at=1003.0, closed=1005.0)  # refused while it listened: a firewall
    findings = run(facts)
    assert problems(findings) == [("port", FAIL, "node1")]
    assert "cannot be reached from node2: refused" in next(x["message"] for x in findings if x["status"] == FAIL)
