"""ssh: key login to each node from here (no prompt), and node to node (`mesh`), as mpirun needs."""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, finding, probe_errors

CHECK = "ssh"
MESH = "mesh"

FIXES = {
    "refused": "start sshd on the node, or fix Port/HostName for it in the ssh config",
    "timeout": "check that the node is up and reachable (firewall, sshd hung); raise --timeout if it is only slow",
    "auth": "install your public key on the node (ssh-copy-id -i ~/.ssh/id_ed25519.pub USER@NODE), "
            "or pass the right key with -i",
    "unknown_host_key": "verify the node's fingerprint, then add it (ssh-keyscan NODE >> ~/.ssh/known_hosts), "
                        "or rerun with --accept-new-host-keys",
    "changed_host_key": "if the node was reinstalled, drop the old key (ssh-keygen -R NODE) and verify the new one; "
                        "otherwise treat it as an attack",
    "unreachable": "check the node's name or address in the hostfile / ssh config / DNS",
    "too_large": "find what prints on the node before or instead of the command (~/.bashrc, /etc/bash.bashrc, "
                 "/etc/profile.d, a ForceCommand): measure with `ssh NODE true | wc -c`, which must print 0",
    "error": "run ssh -v NODE by hand to see what fails",
}


def check(node: str, conn: dict, facts: dict | None) -> list[dict]:
    """`conn`: how reaching the node went ({status, message, elapsed, exit_code, stderr}, see doctor)."""
    status = conn.get("status")
    if status == "local":
        return [finding(node, CHECK, OK, "this machine (--local: no SSH)")]
    if status != "ok":
        return [finding(node, CHECK, FAIL, conn.get("message") or status,
                        FIXES.get(status, FIXES["error"]).replace("NODE", node))]
    if facts is None:
        return [finding(node, CHECK, FAIL, f"logged in, but the probe gave no facts: {conn.get('message')}",
                        "run `python3 - < clusterdoc/probe.py` on the node to see the error")]
    out = [finding(node, CHECK, OK, f"key login ok ({conn.get('elapsed', 0):.1f}s)")]
    if facts.get("python_missing"):
        out.append(finding(node, CHECK, FAIL, f"the job's python {facts['python_missing']} is not on the node: "
                           "its ranks cannot start (only shell facts)",
                           "install the training environment at the same path on every node, or give --python"))
    elif facts.get("probe") == "shell":
        out.append(finding(node, CHECK, WARN, "no python3 on the node: only shell facts (kernel, GPUs, nvcc, gcc)",
                           "install python3 (and the training environment) on the node"))
    return out


def check_mesh(node: str, facts: dict | None) -> list[dict]:
    """From this node to every other: one finding per failure reason (peers grouped)."""
    if not facts or facts.get("mesh") is None:
        return probe_errors(node, facts or {}, MESH)
    failed, untested = {}, []
    for peer, res in sorted(facts["mesh"].items()):
        if res.get("ok") is None:
            untested.append(peer)
        elif not res.get("ok"):
            failed.setdefault(res.get("message") or "failed", []).append(peer)
    out = []
    if untested:
        out.append(finding(node, MESH, WARN, f"ssh to {_compact(untested)} not tested: the probe ran out of time",
                           "raise --timeout (the mesh is N x N ssh logins), or skip it with --no-mesh"))
    if not failed and not untested:
        return [finding(node, MESH, OK, f"ssh to all {len(facts['mesh'])} other nodes ok")]
    for message, peers in failed.items():
        # No source name in the text: the report merges the same failure seen from many nodes
        # into one line (node[1-4,6-64]: ssh to node5 fails: ...).
        out.append(finding(node, MESH, FAIL, f"ssh to {_compact(peers)} fails: {message}", mesh_fix(peers, message)))
    return out


def _compact(names: list[str]) -> str:
    from clusterdoc.hostfile import compress_hostlist

    return compress_hostlist(names)


def mesh_fix(peers: list[str], message: str) -> str:
    """The fix for one failure reason of ssh from the node(s) to `peers`."""
    names = " ".join(peers[:8]) + (" ..." if len(peers) > 8 else "")
    test = f"test with: ssh -o BatchMode=yes {peers[0]} true"
    low = message.lower()
    if "host key" in low:
        return (f"on the node(s) named, record the host keys of {names} after checking their fingerprints "
                f"(ssh-keyscan {names} >> ~/.ssh/known_hosts); {test}")
    if "permission denied" in low:
        return f"install the node's public key on {names} (ssh-copy-id), or share one key cluster-wide; {test}"
    if "could not resolve" in low or "name or service not known" in low:
        return f"make {names} resolvable on the node(s) named (/etc/hosts or DNS), as in the hostfile; {test}"
    return f"run ssh -v {peers[0]} on the node(s) named to see why; {test}"
