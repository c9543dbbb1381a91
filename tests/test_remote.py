"""SSH fan-out against real sshd nodes of the test cluster, and each way a connection can fail."""

import hashlib
import socket
import subprocess
import threading
import time

import paramiko
import pytest

from clusterdoc.hostfile import Host
from clusterdoc.remote import SSHOptions, put_file, run_many, run_one

pytestmark = pytest.mark.cluster


def opts_for(cluster, **kw):
    base = dict(ssh_config=cluster.ssh_config, timeout=10.0)
    base.update(kw)
    return SSHOptions(**base)


def test_every_node_answers_with_its_own_hostname(cluster):
    hosts = [Host(n.name) for n in cluster.nodes]
    results = run_many(hosts, "hostname", opts_for(cluster), fanout=2)
    assert list(results) == [n.name for n in cluster.nodes]
    for name, res in results.items():
        assert (res.status, res.exit_code, res.stdout.strip()) == ("ok", 0, name)


def test_stdin_exit_code_and_stderr(cluster):
    node = Host(cluster.nodes[0].name)
    res = run_one(node, "cat; echo oops >&2; exit 3", opts_for(cluster), stdin=b"payload\n" * 10000)
    assert res.status == "ok" and res.exit_code == 3 and not res.ok
    assert res.stdout == "payload\n" * 10000 and res.stderr.strip() == "oops"


def test_command_that_hangs_costs_one_timeout(cluster):
    start = time.monotonic()
    res = run_one(Host(cluster.nodes[0].name), "sleep 60", opts_for(cluster, timeout=2.0))
    assert res.status == "timeout" and "did not finish within 2s" in res.message
    assert time.monotonic() - start < 6


def test_refused_when_nothing_listens(cluster, tmp_path):
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host down\n  HostName 127.0.0.254\n  Port 2201\n")
    res = run_one(Host("down"), "true", SSHOptions(ssh_config=cfg, timeout=5.0, known_hosts=[cluster.known_hosts]))
    assert res.status == "refused" and "refused" in res.message


def test_node_that_accepts_and_never_answers_times_out(cluster, tmp_path):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.253", 0))
    srv.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])  # accept, then say nothing
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host silent\n  HostName 127.0.0.253\n  Port {srv.getsockname()[1]}\n")
    try:
        start = time.monotonic()
        res = run_one(Host("silent"), "true", SSHOptions(ssh_config=cfg, timeout=2.0,
                                                         known_hosts=[cluster.known_hosts]))
        assert res.status == "timeout", res
        assert time.monotonic() - start < 8
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        srv.close()


def test_unknown_host_key_refused_unless_accept_new(cluster, tmp_path):
    node = Host(cluster.nodes[1].name)
    kh = tmp_path / "known_hosts"
    kh.write_text("")
    res = run_one(node, "true", opts_for(cluster, known_hosts=[kh]))
    assert res.status == "unknown_host_key" and "not in known_hosts" in res.message
    assert kh.read_text() == ""
    res = run_one(node, "true", opts_for(cluster, known_hosts=[kh], accept_new_host_keys=True))
    assert res.ok, res
    assert kh.read_text().count("\n") == 1
    res = run_one(node, "true", opts_for(cluster, known_hosts=[kh]))  # now known
    assert res.ok, res


def test_changed_host_key_is_never_accepted(cluster, tmp_path):
    node = cluster.nodes[2]
    entry = node.addr if cluster.port == 22 else f"[{node.addr}]:{cluster.port}"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")], check=True)
    # the nodes offer ed25519 keys: a different key of the same type, and a key of another type
    for other in (paramiko.Ed25519Key.from_path(str(tmp_path / "k")), paramiko.ECDSAKey.generate()):
        kh = tmp_path / "known_hosts"
        kh.write_text(f"{entry} {other.get_name()} {other.get_base64()}\n")
        for accept_new in (False, True):
            res = run_one(Host(node.name), "true",
                          opts_for(cluster, known_hosts=[kh], accept_new_host_keys=accept_new))
            assert res.status == "changed_host_key" and "HAS CHANGED" in res.message, (other.get_name(), res)
        assert kh.read_text().count("\n") == 1


def test_wrong_key_is_an_auth_failure_without_prompting(cluster, tmp_path):
    key = tmp_path / "id_wrong"
    paramiko.RSAKey.generate(2048).write_private_key_file(str(key))  # a PEM key, not authorized there
    res = run_one(Host(cluster.nodes[0].name), "true", opts_for(cluster, identities=[str(key)]))
    assert res.status == "auth" and "no password" in res.message, res
    (tmp_path / "garbage").write_text("not a key\n")
    res = run_one(Host(cluster.nodes[0].name), "true", opts_for(cluster, identities=[str(tmp_path / "garbage")]))
    assert res.status == "auth" and "cannot use private key" in res.message, res


def test_sftp_put(cluster, tmp_path):
    src = tmp_path / "blob"
    src.write_bytes(bytes(range(256)) * 100)
    node = Host(cluster.nodes[3].name)
    dest = f"/tmp/clusterdoc-test-put-{time.time_ns()}"
    assert put_file(node, src, dest, opts_for(cluster)).ok
    res = run_one(node, f"md5sum {dest} && rm -f {dest}", opts_for(cluster))

    assert res.stdout.split()[0] == hashlib.md5(src.read_bytes()).hexdigest()


def test_reach_tells_dead_nodes_at_once_and_the_logins_reuse_its_connections(cluster, tmp_path):
    from clusterdoc.remote import SSHContext, reach

    n1 = cluster.nodes[0]
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host closed\n  HostName 127.0.0.1\n  Port {_free_port()}\n" + cluster.ssh_config.read_text())
    opts = SSHOptions(ssh_config=cfg, timeout=10.0)
    context = SSHContext(opts)
    hosts = [Host(n1.name), Host("nosuchhost"), Host("closed")]
    dead = reach(hosts, opts, context)
    assert {h: r.status for h, r in dead.items()} == {"nosuchhost": "unreachable", "closed": "refused"}
    assert "name does not resolve" in dead["nosuchhost"].message
    # the live node's connection is kept for its login: the login makes no second TCP connection
    target = context.lookup(Host(n1.name))
    kept = context._sockets[(target.hostname, target.port)][0]
    res = run_many([Host(n1.name)], "hostname", opts, context=context)
    assert (res[n1.name].status, res[n1.name].stdout.strip()) == ("ok", n1.name)
    assert kept.fileno() == -1 and not context._sockets  # used by the login, and closed with it


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
