"""The SSH transport: one paramiko session per node (remote.py: host keys checked, per-node timeout, bounded
output, bounded fan-out), the probe read from stdin. The doctor's full SSH gather goes through it too
(doctor/facts.py: gather_nodes): `reach` first (a dead node known in milliseconds, its connection kept for the
login), then `probe` with the request's per-node part (the mesh's logins, the port plan in its start order, each
node's MPI proxy, all in the same round trip); `close` drops what `reach` kept and no login took."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from clusterdoc import remote
from clusterdoc.doctor.payload import parse_output, probe_source, probe_timeout, remote_command, with_proxy
from clusterdoc.doctor.transports.base import Answer, ProbeRequest, RunResult
from clusterdoc.hostfile import Host
from clusterdoc.untrusted import MAX_TEXT, printable


class SSHTransport:
    name = "ssh"

    def __init__(self, hosts: list[Host], ssh: remote.SSHOptions, fanout: int = 32):
        self.hosts = {h.host: h for h in hosts}  # a hostfile's user and slots stay with the name
        self.ssh = ssh
        self.fanout = fanout
        self.context: remote.SSHContext | None = None  # reach()'s, with its connections waiting for the logins

    def _hosts(self, nodes: list[str]) -> list[Host]:
        return [self.hosts.get(n) or Host(n) for n in nodes]

    def reach(self, nodes: list[str], window: float) -> dict[str, Answer]:
        """The nodes known unreachable within `window` seconds (a name that does not resolve, a refused
        connection, no route: remote.reach), each with its answer; the connections made wait for probe's logins."""
        self.context = self.context or remote.SSHContext(self.ssh)
        dead = remote.reach(self._hosts(nodes), self.ssh, self.context, window)
        return {n: answer(r) for n, r in dead.items()}

    def close(self) -> None:
        if self.context is not None:
            self.context.drop_sockets()

    def probe(self, nodes: list[str], request: ProbeRequest) -> tuple[list[str], dict[str, Answer]]:
        t = request.timeout

        def command_for(h: Host) -> str:
            # The probe must answer before the node's timeout: the mesh stops at 75% of it.
            command = remote_command(
                probe_timeout(t), request.mesh.get(h.host), round(t * 0.75, 1), request.head_mpirun, request.python,
                request.argv(h.host), request.trust, request.wrap,
            )  # fmt: skip
            return with_proxy(command, request.proxies.get(h.host))  # its MPI proxy starts in the same trip

        # In the request's order: each node connects to nodes started just before it (the port plan). The first
        # node holds the rendezvous listener until every other node has connected: it gets a connection beside
        # the fan-out.
        first = {n: i for i, n in enumerate(request.order)}
        started = sorted(self._hosts(nodes), key=lambda h: first.get(h.host, len(first)))
        fanout = self.fanout + 1 if request.ports else self.fanout
        report = request.on_done
        on_done = (lambda r: report(r.status != "ok")) if report else None
        results = remote.run_many(
            started, command_for, replace(self.ssh, timeout=t), stdin=probe_source(), fanout=fanout,
            on_done=on_done, context=self.context,
        )  # fmt: skip
        return list(nodes), {n: answer(results[n], request, nodes) for n in nodes}

    def run(self, nodes: list[str], command: str, timeout: float, stdin: bytes | None = None) -> dict[str, RunResult]:
        ssh = replace(self.ssh, timeout=timeout)
        return remote.run_many(self._hosts(nodes), command, ssh, stdin=stdin, fanout=self.fanout)

    def put(self, node: str, local: Path, target: str, timeout: float) -> RunResult:
        return remote.put_file(self._hosts([node])[0], local, target, replace(self.ssh, timeout=timeout))


def answer(r: RunResult, request: ProbeRequest | None = None, names: list[str] | None = None) -> Answer:
    """A node's facts from its round trip: what it printed, parsed (untrusted.clean_facts), or why there are none.
    Only what it was asked: a node cannot add mesh pairs or trusted peers (`names`: the nodes asked with it)."""
    a = Answer(r.status, printable(r.message, MAX_TEXT), round(r.elapsed, 3), r.exit_code)
    f = a.facts = parse_output(r.stdout) if r.status in ("ok", "timeout") else None
    if f is None and r.status == "ok":
        tail = (r.stderr.strip().splitlines() or [f"exit {r.exit_code}, no output"])[-1]
        a.message = printable(tail, 300)
    if f is not None and r.status == "timeout":
        a.status = "ok"  # the facts came; whatever hung is in its errors
    if not f or request is None:
        return a
    if f.get("mesh"):
        f["mesh"] = {p: v for p, v in f["mesh"].items() if p in (request.mesh.get(r.host) or [])}
    if isinstance((f.get("ssh_trust") or {}).get("known"), dict):
        f["ssh_trust"]["known"] = {
            p: v for p, v in f["ssh_trust"]["known"].items() if p in (names or []) and p != r.host
        }
    if isinstance(f.get("clock"), dict) and r.sent_at and r.received_at:
        f["clock"]["head_sent"], f["clock"]["head_received"] = r.sent_at, r.received_at
    if f.get("probe") == "shell" and request.python:
        f["python_missing"] = request.python  # the job's interpreter is not there: its ranks cannot start
    return a
