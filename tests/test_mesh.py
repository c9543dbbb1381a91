"""--mesh sample (issue 11 item 4): k real logins per node, every other pair judged from the nodes' ssh facts."""

import subprocess
from collections import Counter

import pytest

from clusterdoc.probe import ssh as probe  # the ssh module: its private helpers too
from clusterdoc.checks import FAIL, OK, ssh
from clusterdoc.doctor.mesh import sample, targets

KEY_A = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C7okWi0dh2l9GKJl"
KEY_B = "AAAAC3NzaC1lZDI1NTE5AAAAIHb/rPsR/tVjJrN9x1Hh9pxbN4GXGRUXfr7Pxn2o6bz5"


@pytest.mark.parametrize("n", [2, 3, 4, 5, 17, 64, 256])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_every_node_is_a_source_and_a_target_exactly_k_times(n, k):
    names = [f"node{i}" for i in range(1, n + 1)]
    s = sample(names, k, seed=7)
    want = min(k, n - 1)
    assert sorted(s) == sorted(names)
    assert all(len(set(peers)) == len(peers) == want and a not in peers for a, peers in s.items())
    assert set(Counter(p for peers in s.values() for p in peers).values()) == {want}
    assert s == sample(names, k, seed=7)                      # seeded: the same sample again
    if n > 5:
        assert s != sample(names, k, seed=8)


def test_full_and_off():
    names = ["a", "b", "c"]
    assert targets(names, "full") == {"a": ["b", "c"], "b": ["a", "c"], "c": ["a", "b"]}
    assert targets(names, "off") == {"a": [], "b": [], "c": []}


def trust(identities=(), authorized=(), host_keys=(), known=None):
    return {"user": "u", "identities": list(identities), "authorized": list(authorized),
            "host_keys": list(host_keys), "known": known or {}}


def test_trust_problems_from_facts():
    b = trust(authorized=["SHA256:ka"], host_keys=["SHA256:hb"])
    assert ssh.trust_problems(trust(["SHA256:ka"], known={"b": ["SHA256:hb"]}), b, "b") == []
    assert ssh.trust_problems(trust(["SHA256:ka"], known={"b": []}), b, "b") == ["unknown"]
    assert ssh.trust_problems(trust(["SHA256:ka"], known={"b": ["SHA256:old"]}), b, "b") == ["changed"]
    assert ssh.trust_problems(trust(["SHA256:kx"], known={"b": ["SHA256:hb"]}), b, "b") == ["auth"]
    # what facts cannot tell is not judged: keys from an agent, unreadable host keys, a Match block
    assert ssh.trust_problems(trust([], known={"b": ["SHA256:hb"]}), b, "b") == []
    assert ssh.trust_problems(trust(["SHA256:ka"], known={"b": []}), trust(["x"], ["SHA256:ka"]), "b") == []
    assert ssh.trust_problems(trust(["SHA256:ka"], known={"b": None}), b, "b") == []


def cluster_facts(n, bad_known=(), tried=None):
    """n nodes sharing one key; `bad_known`: (source, target) pairs whose known_hosts lacks the target."""
    names = [f"node{i}" for i in range(1, n + 1)]
    facts = {}
    for a in names:
        known = {b: ([] if (a, b) in bad_known else [f"SHA256:host-{b}"]) for b in names if b != a}
        facts[a] = {"ssh_trust": trust(["SHA256:k"], ["SHA256:k"], [f"SHA256:host-{a}"], known),
                    "mesh": {b: {"ok": ok, "message": "ok"} for (x, b), ok in (tried or {}).items() if x == a}}
    return facts


def test_check_trust_names_exactly_the_failing_pairs():
    facts = cluster_facts(6, bad_known={("node1", "node5"), ("node2", "node5"), ("node3", "node6")})
    out = ssh.check_trust(facts)
    fails = sorted((f["message"], f["nodes"]) for f in out if f["status"] == FAIL)
    assert [m.split(" (judged")[0] for m, _ in fails] == ["ssh from node3 to node6", "ssh from node[1-2] to node5"]
    assert fails[1][1] == ["node1", "node2", "node5"]
    assert "ssh-keyscan node5" in [f for f in out if "node5" in f["message"]][0]["fix"]


def test_pairs_tried_for_real_are_not_judged_and_a_kind_they_refute_is_not_trusted():
    healthy = ssh.check_trust(cluster_facts(4, tried={("node1", "node2"): True}))
    assert [f["status"] for f in healthy] == [OK] and "11 more pair(s)" in healthy[0]["message"]
    # the facts say node1 -> node2 fails, but the real login worked: facts cannot see what decides here
    refuted = cluster_facts(4, bad_known={("node1", "node2"), ("node3", "node4")}, tried={("node1", "node2"): True})
    assert [f["status"] for f in ssh.check_trust(refuted)] == [OK]


def test_probe_reads_known_hosts_as_ssh_does(tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text(f"node1,10.0.0.1 ssh-ed25519 {KEY_A}\n[node2]:2222 ssh-ed25519 {KEY_B}\n"
                  f"@revoked node3 ssh-ed25519 {KEY_A}\n# node4 ssh-ed25519 {KEY_A}\n")
    hashed = tmp_path / "hashed"
    hashed.write_text(f"node5 ssh-ed25519 {KEY_B}\n")
    subprocess.run(["ssh-keygen", "-H", "-f", str(hashed)], check=True, capture_output=True)
    assert hashed.read_text().startswith("|1|")
    fa, fb = probe._key_fingerprint(KEY_A), probe._key_fingerprint(KEY_B)
    entries = probe._known_entries(str(kh)) + probe._known_entries(str(hashed))
    assert [fp for pats, fp in entries if probe._known_match(pats, ["node1"])] == [fa]
    assert [fp for pats, fp in entries if probe._known_match(pats, ["[node2]:2222"])] == [fb]
    assert [fp for pats, fp in entries if probe._known_match(pats, ["node2"])] == []
    assert [fp for pats, fp in entries if probe._known_match(pats, ["node3"])] == []       # revoked: never
    assert [fp for pats, fp in entries if probe._known_match(pats, ["node5"])] == [fb]     # hashed
    # the index the probe builds (plain names by name, the rest scanned) answers the same, for any case
    more = tmp_path / "more"
    more.write_text(f"NODE6,node7 ssh-ed25519 {KEY_A}\nnode*,!node7 ssh-ed25519 {KEY_B}\n")
    entries += probe._known_entries(str(more))
    index = probe._KnownIndex(entries)
    for names in (["node1"], ["10.0.0.1"], ["[node2]:2222"], ["node2"], ["node3"], ["node5"], ["Node6"], ["node7"],
                  ["node8", "10.0.0.1"], ["other"]):
        assert index.fingerprints(names) == {fp for pats, fp in entries if probe._known_match(pats, names)}, names
    assert index.fingerprints(["node7"]) == {fa} and index.fingerprints(["node6"]) == {fa, fb}
    out = subprocess.run(["ssh-keygen", "-lf", "/dev/stdin"], input=f"ssh-ed25519 {KEY_A}\n", text=True,
                         capture_output=True).stdout
    assert fa in out  # the same fingerprint ssh-keygen prints


def test_probe_reads_the_client_config_per_peer(tmp_path):
    inc = tmp_path / "more.conf"
    inc.write_text("Host node3\n  UserKnownHostsFile /k/wrong\n")
    cfg = tmp_path / "config"
    cfg.write_text(f"Include {inc}\nHost node2 n2\n  HostName 10.0.0.2\n  Port 2222\n"
                   "Host *\n  IdentityFile %d/.ssh/cluster_key\n  UserKnownHostsFile /k/known\n"
                   "  GlobalKnownHostsFile /dev/null\n")
    lines = probe._config_lines(str(cfg))
    n2 = probe.ssh_client_settings("node2", lines, "/home/u", "u")
    assert (n2["hostname"], n2["port"], n2["identities"]) == ("10.0.0.2", 2222, ["/home/u/.ssh/cluster_key"])
    assert n2["known_files"] == ["/k/known", "/dev/null"]
    assert probe.ssh_client_settings("node3", lines, "/home/u", "u")["known_files"][0] == "/k/wrong"
    assert probe.ssh_client_settings("node1", [("match", "host x")] + lines, "/h", "u") is None


def test_probe_reads_authorized_keys_with_options(tmp_path):
    ak = tmp_path / "authorized_keys"
    ak.write_text(f'from="10.0.0.*",no-pty ssh-ed25519 {KEY_A} me@x\n\nssh-ed25519 {KEY_B}\ngarbage line\n')
    assert probe._keys_in(str(ak)) == [probe._key_fingerprint(KEY_A), probe._key_fingerprint(KEY_B)]


# --- on the test cluster: one real login per node, the other pairs judged from what the nodes show ----------

import json  # noqa: E402
import sys  # noqa: E402


def mesh_check(cluster, *extra):
    p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "-w", ",".join(n.name for n in cluster.nodes),
                        "--ssh-config", str(cluster.ssh_config), "--checks", "ssh,mesh", "--mesh-k", "1", "--json",
                        *extra], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


@pytest.mark.cluster
def test_sampled_mesh_on_the_cluster_judges_the_other_pairs_from_facts(cluster):
    code, doc = mesh_check(cluster)
    mesh = [f for f in doc["findings"] if f["check"] == "mesh"]
    assert code == 0 and all(f["status"] == OK for f in mesh), mesh
    tried = {n["node"]: list((n["facts"]["mesh"] or {})) for n in doc["nodes"]}
    assert all(len(peers) == 1 for peers in tried.values())                       # k = 1 real login each
    assert any("8 more pair(s) judged from facts" in f["message"] for f in mesh)  # 4 x 3 - 4 tried
    trust = doc["nodes"][0]["facts"]["ssh_trust"]
    assert trust["identities"] and trust["authorized"] and trust["host_keys"] and len(trust["known"]) == 3


@pytest.mark.cluster
def test_broken_pairs_are_named_whether_tried_or_judged(cluster):
    names = [n.name for n in cluster.nodes]
    (tried,) = sample(names, 1)["node1"]
    untried = next(n for n in names[1:] if n != tried)
    with cluster.planted({"node1": {"mesh_broken_to": [tried, untried]}}):
        code, doc = mesh_check(cluster)
    bad = sorted((f["message"], f.get("nodes")) for f in doc["findings"] if f["check"] == "mesh" and f["status"] == FAIL)
    assert code == 1 and len(bad) == 2, bad
    judged = [m for m, _ in bad if "judged from facts" in m]
    assert judged == [f"ssh from node1 to {untried} (judged from facts, not tried): their known_hosts has another key "
                      f"for {untried} than the ones {untried} has: ssh refuses it as a possible attack"]
    logged = [m for m, _ in bad if "judged" not in m]
    assert len(logged) == 1 and logged[0].startswith(f"ssh to {tried} fails") and "host key" in logged[0].lower()
