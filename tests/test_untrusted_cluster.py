"""Nodes that misbehave, and SSH as OpenSSH does it, on the test cluster (real sshd, planted at the node).

A node whose nvidia-smi prints escape codes, a node whose login prints hundreds of MB, a global
known_hosts contradicting a node's key, ProxyJump / ProxyCommand, an sshd that stalls during login."""

import json
import socket
import subprocess
import sys
import time

import pytest

from clusterdoc.hostfile import Host
from clusterdoc.remote import SSHOptions, run_one

pytestmark = pytest.mark.cluster

ESC = "\x1b"
EVIL_GPU = f"NVIDIA A100{ESC}]0;owned{chr(7)}{ESC}[2J"      # retitles, then clears the operator's terminal
EVIL_DRIVER = f"550.54.14{ESC}[8m"                            # a driver version that hides what follows
ESCAPES = {"node2": {"driver": EVIL_DRIVER,
                     "gpus": [{"model": EVIL_GPU, "capability": "8.0", "memory_mib": 81920, "count": 8}]}}
FLOOD = {"node3": {"login_output": 300_000_000}}


# Started from a small python, so the check's max RSS is its own (a child forked from pytest would count
# pytest's pages until it execs).
MEASURE = ("import resource, subprocess, sys\n"
           "code = subprocess.call(sys.argv[1:])\n"
           "sys.stderr.write('\\nMAXRSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
           "sys.exit(code)\n")


def run_check(*args, timeout=180):
    """`clusterdoc check ARGS` -> (exit code, stdout, stderr, max RSS of the check and its children, MiB)."""
    p = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "clusterdoc", "check",
                        *map(str, args)], capture_output=True, timeout=timeout)
    text, errors = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    errors, _, rss = errors.rpartition("\nMAXRSS_KB ")
    assert "Traceback" not in errors, errors
    return p.returncode, text, errors, int(rss) / 1024


def names(cluster):
    return ",".join(n.name for n in cluster.nodes)


def test_escape_codes_in_gpu_name_and_driver_are_escaped_and_not_trusted(cluster):
    with cluster.planted(ESCAPES):
        code, text, errors, _ = run_check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--no-mesh",
                                          "--mpirun", cluster.mpirun, "-v")
        code_j, js, _, _ = run_check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--no-mesh",
                                     "--mpirun", cluster.mpirun, "--json")
    assert code == code_j == 1
    assert ESC not in text + errors and "\x07" not in text and ESC not in js
    assert "[FAIL] cuda node2: the node sent a malformed driver version: '550.54.14\\x1b[8m'" in text
    assert "[FAIL] arch node2: the node sent a malformed GPU name: 'NVIDIA A100\\x1b]0;owned\\x07" in text
    assert text.count("malformed GPU name") == 1  # eight GPUs, one finding
    doc = json.loads(js)
    node2 = next(n for n in doc["nodes"] if n["node"] == "node2")
    assert node2["status"]["cuda"] == "fail" and node2["status"]["arch"] == "fail"
    assert node2["facts"]["driver"] is None and node2["facts"]["gpus"][0]["name"] is None
    assert {m["field"] for m in node2["facts"]["malformed"]} >= {"driver", "gpus[0].name", "gpus[0].driver"}
    # the driver is not judged ok on node2; the other nodes are judged as usual
    ok = [f for f in doc["findings"] if f["status"] == "ok" and "driver" in f["message"]]
    assert {f["node"] for f in ok if "supports CUDA" in f["message"]} == {"node1", "node3", "node4"}


def test_login_flood_is_capped_named_and_memory_stays_bounded(cluster):
    with cluster.planted(FLOOD):
        start = time.monotonic()
        code, js, errors, rss = run_check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--no-mesh",
                                          "--mpirun", cluster.mpirun, "--timeout", 20, "--json")
        took = time.monotonic() - start
    doc = json.loads(js)
    print(f"\nlogin flood of 300 MB: check took {took:.1f}s, max RSS {rss:.0f} MiB")
    assert rss < 250, rss
    assert code == 1
    ssh = {n["node"]: n["ssh"] for n in doc["nodes"]}
    assert ssh["node3"]["status"] == "too_large" and "output too large" in ssh["node3"]["message"]
    assert {n: s["status"] for n, s in ssh.items() if n != "node3"} == {"node1": "ok", "node2": "ok", "node4": "ok"}
    fails = [f for f in doc["findings"] if f["status"] == "fail" and f["check"] == "ssh"]
    assert [f["node"] for f in fails] == ["node3"] and "~/.bashrc" in fails[0]["fix"]


@pytest.mark.slow
def test_must_show_full_check_with_both_bad_nodes(cluster):
    """The issue's demonstration: the default check (mesh included) over both bad nodes."""
    with cluster.planted({**ESCAPES, **FLOOD}):
        start = time.monotonic()
        code, text, errors, rss = run_check("-w", names(cluster), "--ssh-config", cluster.ssh_config,
                                            "--mpirun", cluster.mpirun, "--timeout", 20)
        took = time.monotonic() - start
    print(f"\nfull check, escape node + 300 MB node: {took:.1f}s, max RSS {rss:.0f} MiB\n{text}")
    assert code == 1 and rss < 250
    assert ESC not in text + errors and "\x07" not in text
    assert "node2: the node sent a malformed driver version" in text
    assert "[FAIL] ssh node3: node3 sent more than 4 MiB on stdout: output too large" in text


# node2's python answers the probe with {"gpus": [null]}: the real probe runs, its answer is edited on the way out.
# Named python3.11 so the node's packages (the torch stub) stay where its python looks.
GPUS_NULL = """#!/bin/sh
/usr/bin/python3 "$@" | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        facts = json.loads(line)
        facts["gpus"] = [None]
        line = json.dumps(facts) + "\\n"
    sys.stdout.write(line)'
"""


def test_a_node_answering_gpus_null_fails_alone_and_the_others_are_reported(cluster, tmp_path):
    hostile = tmp_path / "bin" / "python3.11"
    hostile.parent.mkdir()
    hostile.write_text(GPUS_NULL)
    hostile.chmod(0o755)
    nodes = ["-w", names(cluster), "--ssh-config", cluster.ssh_config]
    with cluster.planted({"node2": {"python": str(hostile)}}):
        code, js, _, _ = run_check(*nodes, "--no-mesh", "--mpirun", cluster.mpirun, "--json")
        code_t, text, _, _ = run_check(*nodes, "--no-mesh", "--mpirun", cluster.mpirun)
        wheel = subprocess.run([sys.executable, "-m", "clusterdoc", "build-wheel", *map(str, nodes), "--dry-run",
                                "--out", tmp_path / "dist", "--cache", tmp_path], capture_output=True, text=True,
                               timeout=180)
    assert code == code_t == 1
    doc = json.loads(js, parse_constant=lambda c: pytest.fail(f"invalid JSON: {c}"))
    status = {n["node"]: n["status"] for n in doc["nodes"]}
    assert status["node2"]["arch"] == "fail" and doc["nodes"][1]["facts"]["gpus"] is None
    bad = [f for f in doc["findings"] if f["status"] != "ok"]
    assert [(f["node"], f["check"], f["message"]) for f in bad] == [
        ("node2", "arch", "the node sent a malformed GPU entry: null (not trusted, not judged)")], bad
    for n in ("node1", "node3", "node4"):  # their full report, every check judged
        assert None not in status[n].values() and set(status[n].values()) == {"ok"}, status[n]
    assert doc["summary"]["needed_arch_list"] == "8.0+PTX"  # from the other nodes' A100s
    assert "[FAIL] arch node2: the node sent a malformed GPU entry: null" in text and "crashed" not in text
    # build-wheel: node2 named, the others' GPUs still decide, nothing built
    assert "Traceback" not in wheel.stderr and wheel.returncode == 1, wheel.stdout + wheel.stderr
    assert "node2: the node sent malformed GPU facts (gpus[0]: null): not trusted" in wheel.stdout
    assert "arch list: 8.0+PTX  (from nodes; GPUs: node1, node3, node4: 8.0)" in wheel.stdout
    assert not (tmp_path / "dist").exists()


# --- SSH as OpenSSH does it ---------------------------------------------------------------------

def node_key_line(cluster, node, names_field):
    key = " ".join((cluster.node_dir(node) / "ssh_host_ed25519_key.pub").read_text().split()[:2])
    return f"{names_field} {key}\n"


def key_names(cluster, node):
    return f"{node.addr}" if cluster.port == 22 else f"[{node.addr}]:{cluster.port}"


def test_global_known_hosts_is_read_for_checking_and_refusing(cluster, tmp_path):
    node = cluster.nodes[2]
    user_kh, global_kh = tmp_path / "known_hosts", tmp_path / "ssh_known_hosts"
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host {node.name}\n  UserKnownHostsFile {user_kh}\n  GlobalKnownHostsFile {global_kh}\n"
                   + cluster.ssh_config.read_text())
    wrong = (cluster.dir / "shared" / "wrong_host_key.pub").read_text().split()[:2]
    args = ["-w", names(cluster), "--ssh-config", cfg, "--checks", "ssh", "--json"]

    # the global file records another key: refused as changed, with and without --accept-new-host-keys
    global_kh.write_text(f"{key_names(cluster, node)} {' '.join(wrong)}\n")
    user_kh.write_text("")
    for extra in ([], ["--accept-new-host-keys"]):
        code, js, _, _ = run_check(*args, *extra)
        ssh = {n["node"]: n["ssh"] for n in json.loads(js)["nodes"]}
        assert code == 1 and ssh[node.name]["status"] == "changed_host_key", (extra, ssh[node.name])
        assert str(global_kh) in ssh[node.name]["message"] and "HAS CHANGED" in ssh[node.name]["message"]
        assert {n for n, s in ssh.items() if s["status"] != "ok"} == {node.name}
        assert user_kh.read_text() == ""

    # the global file records the right key (hashed): the node is known without any user entry
    import paramiko
    global_kh.write_text(node_key_line(cluster, node, paramiko.HostKeys.hash_host(key_names(cluster, node))))
    code, js, _, _ = run_check(*args)
    assert code == 0, js
    assert user_kh.read_text() == ""


def cfg_with(cluster, tmp_path, text):
    cfg = tmp_path / "ssh_config"
    cfg.write_text(text + cluster.ssh_config.read_text())
    return cfg


def test_proxyjump_is_honoured_with_the_same_host_key_rules(cluster, tmp_path):
    # node2 by its name resolves only on the nodes (their /etc/hosts), not here: only the jump reaches it
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("node2", 22)
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    n1 = cluster.nodes[0]
    cfg = cfg_with(cluster, tmp_path,
                   "Host viajump\n  HostName node2\n  ProxyJump node1\n"
                   "Host viatwo\n  HostName node4\n  ProxyJump node1,node3\n"
                   f"Host unknownbastion\n  HostName {n1.addr}\n  UserKnownHostsFile {empty}\n"
                   "Host viaunknown\n  HostName node2\n  ProxyJump unknownbastion\n"
                   "Host viadead\n  HostName node2\n  ProxyJump root@127.0.0.251\n"
                   f"Host viacmd\n  HostName node2\n  ProxyCommand /usr/bin/ssh -F {cluster.ssh_config} -W %h:%p node1\n"
                   "Host both\n  HostName node2\n  ProxyJump node1\n  ProxyCommand /bin/false\n")
    opts = SSHOptions(ssh_config=cfg, timeout=15.0)
    for alias, want in (("viajump", "node2"), ("viatwo", "node4"), ("viacmd", "node2")):
        res = run_one(Host(alias), "hostname", opts)
        assert (res.status, res.stdout.strip()) == ("ok", want), (alias, res)
    res = run_one(Host("viaunknown"), "hostname", opts)
    assert res.status == "unknown_host_key" and "unknownbastion (jump host for viaunknown)" in res.message, res
    assert empty.read_text() == ""
    res = run_one(Host("viadead"), "hostname", opts)
    assert res.status == "refused" and "jump host for viadead" in res.message, res
    # both options for one host: a clear usage error (exit 2) naming the host, no connection
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "-w", "both", "--ssh-config", str(cfg)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "both ProxyJump and ProxyCommand apply to both" in p.stderr


# nc as the openbsd one takes it (not installed here): `nc HOST PORT`, any other word is refused
NETCAT = f"""#!{sys.executable}
import os, socket, sys, threading
if len(sys.argv) != 3:
    sys.exit("nc: port range not valid")
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
def up():
    while data := os.read(0, 65536):
        s.sendall(data)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
while data := s.recv(65536):
    os.write(1, data)
"""


def test_proxycommand_runs_through_the_shell_as_ssh_runs_it(cluster, tmp_path):
    # without the shell, nc would get '2>/dev/null' as a third word, refuse it, and the node would be a
    # 30 s banner timeout
    nc = tmp_path / "nc"
    nc.write_text(NETCAT)
    nc.chmod(0o755)
    node = cluster.nodes[1]
    cfg = cfg_with(cluster, tmp_path, f"Host viaredirect\n  HostName {node.addr}\n  ProxyCommand {nc} %h %p 2>/dev/null\n")
    res = run_one(Host("viaredirect"), "hostname", SSHOptions(ssh_config=cfg, timeout=10.0))
    assert (res.status, res.stdout.strip()) == ("ok", node.name), res


@pytest.fixture
def stalling_sshd(cluster, tmp_path):
    """A real sshd whose login stalls: AuthorizedKeysCommand sleeps before answering."""
    key = tmp_path / "host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    probe = socket.socket()
    probe.bind(("127.0.0.249", 0))
    port = probe.getsockname()[1]
    probe.close()
    conf = tmp_path / "sshd_config"
    conf.write_text(f"ListenAddress 127.0.0.249:{port}\nHostKey {key}\nPidFile {tmp_path}/sshd.pid\n"
                    "AuthorizedKeysFile none\nAuthorizedKeysCommand /usr/bin/sleep 20\n"
                    "AuthorizedKeysCommandUser nobody\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\n")
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(conf), "-E", str(tmp_path / "sshd.log")])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.249", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        kh = tmp_path / "known_hosts"
        kh.write_text(f"[127.0.0.249]:{port} " + " ".join(key.with_suffix(".pub").read_text().split()[:2]) + "\n")
        cfg = tmp_path / "ssh_config"
        cfg.write_text(f"Host stall\n  HostName 127.0.0.249\n  Port {port}\n  User root\n  IdentityFile {cluster.key}\n"
                       f"  UserKnownHostsFile {kh}\n  GlobalKnownHostsFile /dev/null\n")
        yield cfg
    finally:
        sshd.terminate()
        sshd.wait(10)


def test_sshd_stalling_during_login_is_a_timeout_within_the_deadline(stalling_sshd):
    start = time.monotonic()
    res = run_one(Host("stall"), "true", SSHOptions(ssh_config=stalling_sshd, timeout=3.0))
    took = time.monotonic() - start
    assert res.status == "timeout" and "login" in res.message, res
    assert took < 4.5, took


def test_accept_new_records_hashed_under_the_alias_and_only_when_nothing_is_known(cluster, tmp_path):
    node = cluster.nodes[1]
    user_kh = tmp_path / "known_hosts"
    user_kh.write_text("")
    cfg = cfg_with(cluster, tmp_path, f"Host {node.name}\n  UserKnownHostsFile {user_kh}\n  HashKnownHosts yes\n"
                                      "  HostKeyAlias gpu-box\n")
    opts = SSHOptions(ssh_config=cfg, timeout=10.0)
    assert run_one(Host(node.name), "true", opts).status == "unknown_host_key"
    opts.accept_new_host_keys = True
    assert run_one(Host(node.name), "true", opts).ok
    recorded = user_kh.read_text().split()
    assert recorded[0].startswith("|1|") and "gpu-box" not in user_kh.read_text()
    opts.accept_new_host_keys = False
    assert run_one(Host(node.name), "true", opts).ok  # known now, under the alias
    assert user_kh.read_text().count("\n") == 1


def test_one_deadline_across_a_jump_through_a_silent_bastion(cluster, tmp_path):
    srv = socket.socket()  # the kernel completes the TCP handshake; nothing ever answers
    srv.bind(("127.0.0.248", 0))
    srv.listen(8)
    try:
        cfg = cfg_with(cluster, tmp_path, f"Host silentbastion\n  HostName 127.0.0.248\n  Port {srv.getsockname()[1]}\n"
                                          "Host viasilent\n  HostName node2\n  ProxyJump silentbastion\n")
        start = time.monotonic()
        res = run_one(Host("viasilent"), "true", SSHOptions(ssh_config=cfg, timeout=2.0))
        took = time.monotonic() - start
    finally:
        srv.close()
    assert res.status == "timeout" and "silentbastion (jump host for viasilent)" in res.message, res
    assert took < 3.5, took
