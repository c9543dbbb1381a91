"""ssh: key login to each node from here (no prompt), and node to node (`mesh`), as mpirun needs."""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check, Context
from clusterdoc.hostfile import compress_hostlist

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
    "no_route": "check that the node is up and that its address in the hostfile / ssh config is right "
    "(nothing answers at it from here)",
    "too_large": "find what prints on the node before or instead of the command (~/.bashrc, /etc/bash.bashrc, "
    "/etc/profile.d, a ForceCommand): measure with `ssh NODE true | wc -c`, which must print 0",
    "error": "run ssh -v NODE by hand to see what fails",
}


# the head could not even connect: nothing of the node was tested, and no other node was sent to it
UNREACHABLE = ("unreachable", "refused", "no_route")


def check(node: str, conn: dict, facts: dict | None, untested: list[str] | tuple = ()) -> list[Finding]:
    """`conn`: how reaching the node went ({status, message, elapsed, exit_code, stderr}, see doctor).
    `untested`: the other checks, which a node that cannot be reached leaves untested (one cause, one finding)."""
    status: str = conn["status"]  # always there (doctor/facts.py); the doctor reads it the same way
    if status == "local":
        return [finding(node, CHECK, OK, "this machine (--local: no SSH)")]
    if conn.get("transport") == "srun":
        if facts is not None:
            return [finding(node, CHECK, OK, f"reached through srun, no SSH ({conn.get('elapsed', 0):.1f}s)")]
        return [
            finding(
                node,
                CHECK,
                FAIL,
                f"no facts through srun: {conn.get('message') or status}"
                + (f"; not tested because of this: {', '.join(untested)}" if untested else ""),
                f"see why Slurm cannot run a task there: `sinfo -N -n {node}`, `scontrol show node {node}` "
                "(drained, down, not in the allocation?); the job's python must be there too",
            )
        ]
    if status != "ok":
        return [
            finding(
                node,
                CHECK,
                FAIL,
                (conn.get("message") or status)
                + (f"; not tested because of this: {', '.join(untested)}" if untested else ""),
                FIXES.get(status, FIXES["error"]).replace("NODE", node),
            )
        ]
    if facts is None:
        return [
            finding(
                node,
                CHECK,
                FAIL,
                f"logged in, but the probe gave no facts: {conn.get('message')}",
                "run the probe on the node to see the error (`python -m clusterdoc.probe --payload > probe.py`"
                " here, then `python3 - < probe.py` there)",
            )
        ]
    out = [finding(node, CHECK, OK, f"key login ok ({conn.get('elapsed', 0):.1f}s)")]
    if facts.get("python_missing"):
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"the job's python {facts['python_missing']} is not on the node: "
                "its ranks cannot start (only shell facts)",
                "install the training environment at the same path on every node, or give --python",
            )
        )
    elif facts.get("probe") == "shell":
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                "no python3 on the node: only shell facts (kernel, GPUs, nvcc, gcc)",
                "install python3 (and the training environment) on the node",
            )
        )
    return out


def check_mesh(node: str, facts: dict | None) -> list[Finding]:
    """From this node to every other: one finding per failure reason (peers grouped)."""
    if not facts or facts.get("mesh") is None:
        return probe_errors(node, facts or {}, MESH)
    failed: dict[str, list[str]] = {}
    untested: list[str] = []
    for peer, res in sorted(facts["mesh"].items()):
        if res.get("ok") is None:
            untested.append(peer)
        elif not res.get("ok"):
            failed.setdefault(res.get("message") or "failed", []).append(peer)
    out = []
    if untested:
        out.append(
            finding(
                node,
                MESH,
                WARN,
                f"ssh to {_compact(untested)} not tested: the probe ran out of time",
                "raise --timeout (the mesh is N x N ssh logins), or skip it with --no-mesh",
            )
        )
    if not failed and not untested:
        return [
            finding(node, MESH, OK, f"ssh to {len(facts['mesh'])} other node(s) ok ({_compact(list(facts['mesh']))})")
        ]
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
        return (
            f"on the node(s) named, record the host keys of {names} after checking their fingerprints "
            f"(ssh-keyscan {names} >> ~/.ssh/known_hosts); {test}"
        )
    if "permission denied" in low:
        return f"install the node's public key on {names} (ssh-copy-id), or share one key cluster-wide; {test}"
    if "could not resolve" in low or "name or service not known" in low:
        return f"make {names} resolvable on the node(s) named (/etc/hosts or DNS), as in the hostfile; {test}"
    return f"run ssh -v {peers[0]} on the node(s) named to see why; {test}"


# --- every pair, judged from facts (--mesh sample) ------------------------------------------------

TRUST_PROBLEMS = {
    "unknown": (
        "{target}'s host key is not in their known_hosts: ssh stops at 'Host key verification failed'",
        "on {sources}, record {target}'s host key after checking its fingerprint "
        "(ssh-keyscan {target} >> ~/.ssh/known_hosts), or share one known_hosts cluster-wide",
    ),
    "changed": (
        "their known_hosts has another key for {target} than the ones {target} has: ssh refuses it as "
        "a possible attack",
        "if {target} was reinstalled, drop the old key on {sources} (ssh-keygen -R "
        "{target}) and record the new one after checking its fingerprint",
    ),
    "auth": (
        "{target} accepts none of the keys their ssh offers: ssh stops at 'Permission denied (publickey)'",
        "add their public key to {target}'s authorized_keys (ssh-copy-id {target} from each), or share one "
        "key cluster-wide",
    ),
}


def trust_problems(a: dict, b: dict, b_name: str) -> list[str]:
    """Why ssh from a node (its ssh_trust facts `a`) to node `b_name` (facts `b`) would fail; [] when it
    would work or the facts cannot tell (keys from an agent, an unreadable host key, a Match block)."""
    known = (a.get("known") or {}).get(b_name)
    out = []
    if known is not None and b.get("host_keys"):
        if not known:
            out.append("unknown")
        elif not set(known) & set(b["host_keys"]):
            out.append("changed")
    if a.get("identities") and b.get("authorized") and not set(a["identities"]) & set(b["authorized"]):
        out.append("auth")
    return out


def check_trust(facts: dict[str, dict]) -> list[Finding]:
    """Every ordered pair of nodes not logged in for real, judged from their ssh_trust facts. A kind of
    problem the facts predict for a pair whose real login worked is not trusted for any pair (an agent
    or certificates decide there, which facts do not show)."""
    trust = {n: f["ssh_trust"] for n, f in facts.items() if isinstance(f.get("ssh_trust"), dict)}
    if len(trust) < 2:
        return []
    tried = {(a, b): res.get("ok") for a, f in facts.items() for b, res in (f.get("mesh") or {}).items()}
    wrong = {
        kind
        for (a, b), ok in tried.items()
        if ok and a in trust and b in trust
        for kind in trust_problems(trust[a], trust[b], b)
    }
    failing: dict[tuple[str, str], list[str]] = {}
    judged = 0
    for a in trust:
        for b in trust:
            if a == b or (a, b) in tried:
                continue
            judged += 1
            for kind in trust_problems(trust[a], trust[b], b):
                if kind not in wrong:
                    failing.setdefault((kind, b), []).append(a)
    if not failing:
        names = _compact(list(trust))
        return [
            finding(
                names,
                MESH,
                OK,
                f"{judged} more pair(s) judged from facts (keys, known_hosts): all ok",
                nodes=list(trust),
            )
        ]
    out = []
    # the same sources failing the same way towards several targets: one finding
    merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (kind, target), sources in failing.items():
        merged.setdefault((kind, tuple(sources)), []).append(target)
    for (kind, group), targets in sorted(merged.items()):
        src, dst = _compact(list(group)), _compact(targets)
        message, fix = TRUST_PROBLEMS[kind]
        out.append(
            finding(
                src,
                MESH,
                FAIL,
                f"ssh from {src} to {dst} (judged from facts, not tried): " + message.format(target=dst),
                fix.format(target=dst, sources=src),
                nodes=sorted(set(group) | set(targets)),
            )
        )
    return out


def check_names(facts: dict[str, dict], compress) -> list[Finding]:
    """Nodes that call themselves by the same host name (a cloned image, or one machine listed twice): MPI
    launchers, torch's rendezvous and the check itself tell ranks apart by it. One FAIL per shared name,
    listing the nodes; `facts`: {node: facts} of the nodes that answered."""
    claims: dict[str, list[str]] = {}
    for node, f in facts.items():
        if f.get("hostname"):
            claims.setdefault(f["hostname"], []).append(node)
    out = []
    for name, nodes in claims.items():
        if len(nodes) > 1:
            who = f"{', '.join(nodes[:-1])} and {nodes[-1]} both" if len(nodes) == 2 else f"{compress(nodes)} all"
            out.append(
                finding(
                    compress(nodes),
                    CHECK,
                    FAIL,
                    f"{who} call themselves {name}: MPI ranks and their failures cannot be told apart",
                    "give each node its own host name (hostnamectl set-hostname on a cloned image), "
                    "or list each machine once in the hostfile",
                    nodes=nodes,
                )
            )
    return out


def _reach(c: Context) -> list[Finding]:
    f = c.facts or None
    untested = [x for x in c.checks if x != "ssh"] if not f and c.conn["status"] != "ok" else []
    return check(c.node, c.conn, f, untested)


def _names(c: Context) -> list[Finding]:
    return check_names(dict(c.answered), compress_hostlist) if len(c.answered) > 1 else []


def _trust(c: Context) -> list[Finding]:
    return check_trust(dict(c.answered)) if len(c.answered) > 1 else []


CHECKS = (
    Check(
        "ssh",
        10,
        "the head reaches each node, the probe runs, node names are distinct",
        reads=("hostname", "python", "probe"),
        probe_errors={"python3": WARN},
        malformed_labels={"hostname": "host name"},
        node=_reach,
        without_facts=True,
        cluster=_names,
        cluster_order=60,
    ),
    Check(
        "mesh",
        20,
        "node-to-node ssh, as mpirun needs",
        reads=("mesh", "ssh_trust"),
        probe_errors={"mesh": FAIL},
        local=False,
        ssh_only=True,
        node=lambda c: check_mesh(c.node, c.facts),
        cluster=_trust,
        cluster_order=70,
    ),
)
