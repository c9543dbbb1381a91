"""`clusterdoc check` end to end on the one-machine test cluster: real sshd nodes, real mpirun.

Planted problems must be reported exactly, each on its own node with its fix; faults (dead node,
silent node, wrong key, changed host key, no python3, hanging or failing probe commands, hanging
mpirun) each on its own node within --timeout while every other node is reported normally."""

import json
import socket
import subprocess
import sys
import threading
import time

import paramiko
import pytest

pytestmark = pytest.mark.cluster


def check(*args, timeout=120):
    """`clusterdoc check --json ARGS`; the tests pass --mpirun cluster.mpirun (the nodes' MPICH), since
    this machine's `mpirun` may be Open MPI's when both are installed (reference.md §6)."""
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--json", *map(str, args)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


def problems(doc, status=None):
    """{(node, check)} of the findings that are not ok (or of one status), cluster-wide ones expanded."""
    out = set()
    for f in doc["findings"]:
        if f["status"] != "ok" and (status is None or f["status"] == status):
            for n in f.get("nodes") or [f["node"]]:
                out.add((n, f["check"]))
    return out


def names(cluster):
    return ",".join(n.name for n in cluster.nodes)


def test_healthy_cluster_is_all_ok(cluster):
    code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 20,
                      "--mpirun", cluster.mpirun)
    assert problems(doc) == set(), [f for f in doc["findings"] if f["status"] != "ok"]
    assert code == 0
    assert [n["node"] for n in doc["nodes"]] == [n.name for n in cluster.nodes]
    for node in doc["nodes"]:
        assert set(node["status"].values()) == {"ok"}
        assert node["facts"]["hostname"] == node["node"]  # each probe ran on its own node
        assert node["facts"]["gpus"] and node["facts"]["torch"]["cuda"] == "12.1"
    assert doc["summary"]["needed_arch_list"] == "8.0+PTX"
    assert set(doc["summary"]["mpirun"]["names"]) == {n.name for n in cluster.nodes}


PLANTED = {
    "node1": {"kernel": "5.4.0-150-generic", "mesh_broken_to": ["node3"]},
    "node2": {"toolkits": ["11.8"], "path_toolkit": "11.8", "ld_toolkit": "11.8", "cuda_home": "11.8"},
    "node3": {"toolkits": ["11.8", "12.1"], "path_toolkit": "12.1", "ld_toolkit": "11.8", "cuda_home": "12.1"},
    "node4": {"gcc": "13.2.0", "env": {"TORCH_CUDA_ARCH_LIST": "8.0;8.6"},
              "gpus": [{"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 8}]},
}


H100 = {"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 8}
FUSED_ADAM = "ops/adam/fused_adam_op.cpython-311-x86_64-linux-gnu.so"
# DeepSpeed installed by someone else (no clusterdoc manifest), its fused_adam op real nvcc output for sm_80 only
DS_SM80 = {"version": "0.19.8", "ops": ["cpu_adam", "fused_adam"],
           "binaries": {FUSED_ADAM: "tests/facts/fatbin/fused_adam_sm80_only.so"}}


@pytest.mark.slow
def test_installed_deepspeed_ops_are_judged_from_their_binaries(cluster):
    plant = {"node1": {"deepspeed": DS_SM80},
             "node2": {"deepspeed": DS_SM80, "gpus": [H100], "env": {"TORCH_CUDA_ARCH_LIST": "8.0;9.0"}}}
    with cluster.planted(plant):
        code, doc = check("-w", "node1,node2", "--ssh-config", cluster.ssh_config, "--mpirun", cluster.mpirun)
    assert code == 1
    assert problems(doc, "fail") == {("node2", "arch")}
    [f] = [f for f in doc["findings"] if f["status"] == "fail"]
    path = doc["nodes"][1]["facts"]["deepspeed"]["path"]
    assert f["message"] == (f"DeepSpeed op fused_adam ({path}/{FUSED_ADAM}) has sm_80 only and no PTX: nothing for "
                            "this node's H100 (sm_90); it fails here with 'no kernel image is "
                            "available for execution on the device'")
    assert f["fix"] == ("rebuild DeepSpeed for this cluster's GPUs: "
                        'clusterdoc build-wheel --arch-list "8.0;9.0+PTX" --install')
    a100 = [f["message"] for f in doc["findings"] if f["node"] == "node1" and f["check"] == "arch"]
    assert "DeepSpeed's compiled ops: fused_adam (sm_80)" in a100  # sm_80 runs on the A100s


@pytest.mark.slow
def test_planted_problems_are_reported_exactly_with_fixes(cluster):
    with cluster.planted(PLANTED):
        code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--mpirun", cluster.mpirun)
    assert code == 1
    assert problems(doc, "fail") == {("node1", "mesh"), ("node1", "kernel"), ("node2", "cuda"),
                                     ("node3", "cuda"), ("node4", "cuda"), ("node4", "arch")}
    assert problems(doc, "warn") == {("node4", "consistency")}  # the H100 among A100s
    fails = {(f["node"], f["check"]): f for f in doc["findings"] if f["status"] == "fail"}
    assert "ssh to node3 fails" in fails["node1", "mesh"]["message"]
    assert "5.4.0-150-generic" in fails["node1", "kernel"]["message"]
    assert "nvcc 11.8" in fails["node2", "cuda"]["message"] and "12.1" in fails["node2", "cuda"]["message"]
    assert fails["node3", "cuda"]["fix"].startswith("export PATH=/usr/local/cuda-12.1/bin:$PATH; "
                                                    "export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64")
    assert "gcc 13.2.0" in fails["node4", "cuda"]["message"] and "gcc-12" in fails["node4", "cuda"]["fix"]
    assert "9.0" in fails["node4", "arch"]["message"]
    assert 'TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"' in fails["node4", "arch"]["fix"]
    assert doc["summary"]["needed_arch_list"] == "8.0;9.0+PTX"
    assert all(f["fix"] for f in doc["findings"] if f["status"] != "ok")


def _silent_listener(addr):
    """A TCP port that accepts connections and never says a word (a hung sshd)."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, 0))
    srv.listen(16)
    held = []

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return srv, held


@pytest.mark.slow
def test_faults_each_reported_on_its_own_node_within_the_timeout(cluster, tmp_path):
    port = paramiko.SSHConfig.from_path(str(cluster.ssh_config)).lookup(cluster.nodes[0].name).get("port", "22")
    wrong_key = tmp_path / "id_wrong"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(wrong_key)], check=True)
    changed_kh = tmp_path / "changed_known_hosts"
    other = paramiko.ECDSAKey.generate()
    n1, n2, n3, n4 = cluster.nodes
    where = n4.addr if str(port) == "22" else f"[{n4.addr}]:{port}"  # known_hosts form
    changed_kh.write_text(f"{where} {other.get_name()} {other.get_base64()}\n")
    srv, held = _silent_listener("127.0.0.250")
    silent_port = srv.getsockname()[1]
    good = f"  Port {port}\n  User root\n  IdentityFile {cluster.key}\n  UserKnownHostsFile {cluster.known_hosts}\n"
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        "".join(f"Host {n.name}\n  HostName {n.addr}\n{good}" for n in (n1, n2, n3)) +
        f"Host wrongkey\n  HostName {n4.addr}\n  Port {port}\n  User root\n  IdentityFile {wrong_key}\n"
        f"  UserKnownHostsFile {cluster.known_hosts}\n"
        f"Host changedkey\n  HostName {n4.addr}\n  Port {port}\n  User root\n  IdentityFile {cluster.key}\n"
        f"  UserKnownHostsFile {changed_kh}\n"
        f"Host down\n  HostName 127.0.0.251\n  Port {port}\n  UserKnownHostsFile {cluster.known_hosts}\n"
        f"Host silent\n  HostName 127.0.0.250\n  Port {silent_port}\n  UserKnownHostsFile {cluster.known_hosts}\n")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node1\nnode2\nnode3\nwrongkey\nchangedkey\ndown\nsilent\n")
    timeout = 8
    plant = {"node1": {"python": "none"}, "node2": {"hang": ["nvidia-smi"]}, "node3": {"fail": ["nvcc"]}}
    try:
        with cluster.planted(plant):
            start = time.monotonic()
            code, doc = check(hostfile, "--ssh-config", cfg, "--timeout", timeout, "--no-mesh", "--mpirun", cluster.mpirun)
            took = time.monotonic() - start
    finally:
        srv.close()
        for c in held:
            c.close()
    assert code == 1
    # a dead node costs one finding (ssh) and one timeout, not one per check
    for node in ("wrongkey", "changedkey", "down", "silent"):
        assert {c for n, c in problems(doc) if n == node} == {"ssh"}
    assert took < 2 * timeout + 15, took  # probes + (re)run of mpirun over the live nodes
    by = {}
    for f in doc["findings"]:
        by.setdefault((f["node"], f["check"]), []).append(f)
    # no python3: shell facts only, still judged
    assert any("no python3" in f["message"] for f in by["node1", "ssh"])
    facts1 = next(n["facts"] for n in doc["nodes"] if n["node"] == "node1")
    assert facts1["probe"] == "shell" and facts1["kernel"]["release"] and facts1["gpus"]
    # hanging nvidia-smi: reported on node2's arch, node2's other facts are there
    assert any(f["status"] == "fail" and "nvidia-smi" in f["message"] for f in by["node2", "arch"])
    facts2 = next(n["facts"] for n in doc["nodes"] if n["node"] == "node2")
    assert facts2["torch"] and facts2["nvcc"]
    # failing nvcc: reported on node3's cuda
    assert any(f["status"] == "fail" and "nvcc" in f["message"] for f in by["node3", "cuda"])
    # the live nodes answered mpirun (run again without the dead ones)
    assert {(n, "mpi") for n in ("node1", "node2", "node3")}.isdisjoint(problems(doc, "fail"))
    ssh_status = {n["node"]: n["ssh"]["status"] for n in doc["nodes"]}
    assert ssh_status == {"node1": "ok", "node2": "ok", "node3": "ok", "wrongkey": "auth",
                          "changedkey": "changed_host_key", "down": "refused", "silent": "timeout"}


def test_a_name_that_does_not_resolve_is_one_finding_and_left_out_of_every_test(cluster):
    code, doc = check("-w", names(cluster) + ",nosuchhost", "--ssh-config", cluster.ssh_config, "--timeout", 20,
                      "--mpirun", cluster.mpirun)
    assert code == 1
    assert problems(doc) == {("nosuchhost", "ssh")}, [f for f in doc["findings"] if f["status"] != "ok"]
    (f,) = [f for f in doc["findings"] if f["status"] != "ok"]
    assert "nosuchhost: name does not resolve" in f["message"]
    assert "not tested because of this: mesh, net, nccl, port, mpi" in f["message"]
    # no node was sent towards it (mesh, net, port), and the mpirun test ran over the four others only
    assert not any("nosuchhost" in json.dumps(n["facts"]) for n in doc["nodes"] if n["node"] != "nosuchhost")
    run = doc["summary"]["mpirun"]
    assert " -n 4 " in run["command"] and not run["timed_out"], run
    assert sorted(run["names"]) == [n.name for n in cluster.nodes]


def test_an_address_where_nothing_answers_is_not_called_a_dns_problem(cluster):
    unused = cluster.nodes[0].addr.rsplit(".", 1)[0] + ".250"  # on the cluster's bridge, no node has it
    code, doc = check("-w", f"{cluster.nodes[0].name},{unused}", "--ssh-config", cluster.ssh_config,
                      "--timeout", 5, "--checks", "ssh")
    (f,) = [f for f in doc["findings"] if f["status"] != "ok"]
    assert f["node"] == unused and f["check"] == "ssh"
    assert "resolve" not in f["message"] and "DNS" not in f["fix"], f


@pytest.mark.slow
def test_hanging_mpirun_costs_one_timeout(cluster, tmp_path):
    fake = tmp_path / "mpirun"
    fake.write_text("#!/bin/sh\ncase \"$1\" in --version) echo 'HYDRA build details:'; "
                    "echo '    Version:                                 4.0.2'; exit 0;; esac\nexec sleep 600\n")
    fake.chmod(0o755)
    start = time.monotonic()
    code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 6, "--mpirun", fake,
                      "--checks", "ssh,mpi,kernel")
    assert time.monotonic() - start < 20
    assert code == 1
    assert problems(doc) == {(n.name, "mpi") for n in cluster.nodes}
    assert all("timed out after 6" in f["message"] for f in doc["findings"] if f["status"] == "fail")


@pytest.mark.slow
def test_comm_all_reduce_over_the_nodes(cluster):
    with cluster.planted({n.name: {"torch": "real", "gpus": [], "toolkits": [], "path_toolkit": None,
                                   "ld_toolkit": None, "cuda_home": None, "env": {"TORCH_CUDA_ARCH_LIST": None}}
                          for n in cluster.nodes}):
        code, doc = check("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--checks", "ssh,comm",
                          "--timeout", 60, timeout=300)
    comm = [f for f in doc["findings"] if f["check"] == "comm"]
    assert [f["status"] for f in comm] == ["ok"] * len(cluster.nodes), comm
    assert all("gloo all_reduce + barrier ok" in f["message"] for f in comm)
    assert code == 0
