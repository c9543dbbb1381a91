"""The SSH transport: one paramiko session per node (remote.py: host keys checked, per-node timeout, bounded
output, bounded fan-out), the probe read from stdin. The doctor's full SSH gather (the mesh, the port plan, MPI
proxies in the same round trip) builds on the same remote.run_many (doctor/facts.py: gather_nodes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from clusterdoc import remote
from clusterdoc.doctor.payload import parse_output, probe_source, probe_timeout, remote_command
from clusterdoc.doctor.transports.base import Answer, ProbeRequest, RunResult
from clusterdoc.hostfile import Host
from clusterdoc.untrusted import MAX_TEXT, printable


class SSHTransport:
    name = "ssh"

    def __init__(self, hosts: list[Host], ssh: remote.SSHOptions, fanout: int = 32):
        self.hosts = {h.host: h for h in hosts}  # a hostfile's user and slots stay with the name
        self.ssh = ssh
        self.fanout = fanout

    def _hosts(self, nodes: list[str]) -> list[Host]:
        return [self.hosts.get(n) or Host(n) for n in nodes]

    def probe(self, nodes: list[str], request: ProbeRequest) -> tuple[list[str], dict[str, Answer]]:
        t = request.timeout
        command = remote_command(
            probe_timeout(t), None, round(t * 0.75, 1), request.head_mpirun, request.python, request.argv(),
            False, request.wrap,
        )  # fmt: skip
        ssh = replace(self.ssh, timeout=t)
        results = remote.run_many(self._hosts(nodes), command, ssh, stdin=probe_source(), fanout=self.fanout)
        return list(nodes), {n: answer(results[n], request.python) for n in nodes}

    def run(self, nodes: list[str], command: str, timeout: float, stdin: bytes | None = None) -> dict[str, RunResult]:
        ssh = replace(self.ssh, timeout=timeout)
        return remote.run_many(self._hosts(nodes), command, ssh, stdin=stdin, fanout=self.fanout)

    def put(self, node: str, local: Path, target: str, timeout: float) -> RunResult:
        return remote.put_file(self._hosts([node])[0], local, target, replace(self.ssh, timeout=timeout))


def answer(r: RunResult, python: str | None = None) -> Answer:
    """A node's facts from its round trip: what it printed, parsed (untrusted.clean_facts), or why there are none."""
    a = Answer(r.status, printable(r.message, MAX_TEXT), round(r.elapsed, 3), r.exit_code)
    a.facts = parse_output(r.stdout) if r.status in ("ok", "timeout") else None
    if a.facts is None and r.status == "ok":
        tail = (r.stderr.strip().splitlines() or [f"exit {r.exit_code}, no output"])[-1]
        a.message = printable(tail, 300)
    if a.facts is not None and r.status == "timeout":
        a.status = "ok"  # the facts came; whatever hung is in its errors
    if a.facts and a.facts.get("probe") == "shell" and python:
        a.facts["python_missing"] = python  # the job's interpreter is not there: its ranks cannot start
    return a
