"""What every transport is: the probe request (built once), a node's answer, and the Transport interface.

A transport carries the probe (and, for actions such as build-wheel's install, a shell command or a file) to
nodes and brings back each node's answer, keyed by the node it really ran on. Which one is used is decided in one
place (transports/__init__.py: `resolve`); each lives in its own file (ssh.py, srun.py, local.py, saved.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from clusterdoc.doctor.payload import probe_argv
from clusterdoc.remote import RunResult

__all__ = ["Answer", "ProbeRequest", "RunResult", "Transport"]


@dataclass(frozen=True)
class ProbeRequest:
    """What the probe is asked, whatever carries it: the probe's own arguments are spelled here once (argv). The
    per-node part (peers, mesh, trust, ports, order, proxies) is what the doctor's full SSH gather adds; a transport
    that cannot carry it (srun, this machine, saved facts) is never asked it (those checks are `ssh_only`)."""

    timeout: float  # seconds a node has to answer
    python: str | None = None  # the job's interpreter: the probe runs under it (default python3)
    wrap: str | None = None  # a command prefix the probe runs under, as the ranks do (apptainer exec IMG)
    head_mpirun: str | None = None  # the head's mpirun (the mpi check compares the nodes' with it)
    env: dict[str, str] = field(default_factory=dict)  # what the probe sees instead of the node's (--env)
    space: tuple[str, ...] = ()  # folders whose free space counts (the job folder)
    files: tuple[str, ...] = ()  # paths hashed on every node (the files check)
    peers: tuple[str, ...] = ()  # every node resolves (net) and judges ssh trust towards (mesh) these: --peers
    mesh: dict[str, list[str]] = field(default_factory=dict)  # {node: the peers it really logs in to}
    trust: bool = False  # each node reports what decides ssh to each of `peers` (judged from facts, not tried)
    ports: dict[str, dict] = field(default_factory=dict)  # {node: its port plan: listen, connect} (checks/net.plan)
    order: tuple[str, ...] = ()  # the order the nodes start in (the port plan's); others after them, as given
    proxies: dict[str, list[str]] = field(default_factory=dict)  # {node: its MPI proxy, started in the same trip}
    on_done: Callable[[bool], None] | None = field(default=None, compare=False)  # per node as it answers: failed?

    def args(self, node: str | None = None) -> dict:
        """probe.gather's keyword arguments for `node` (its part of the port plan; None: no node's)."""
        plan = self.ports.get(node or "", {})
        return {
            "peers": list(self.peers),
            "env": dict(self.env),
            "listen": list(plan.get("listen") or []),
            "connect": list(plan.get("connect") or []),
            "space": list(self.space),
            "files": list(self.files),
        }

    def argv(self, node: str | None = None) -> list[str]:
        """The probe's command-line arguments for those keyword arguments."""
        return probe_argv(self.args(node))


@dataclass
class Answer:
    """One node's answer to the probe: how reaching it went (a doctor `conn`) and its facts (None: none came)."""

    status: str  # ok | auth | refused | timeout | error | local | ... (remote.STATUSES)
    message: str = ""
    elapsed: float = 0.0
    exit_code: int | None = None
    facts: dict | None = None
    via: str | None = None  # set where the report says how it was reached ("srun": the ssh check's words)

    def conn(self) -> dict:
        c = {"status": self.status, "message": self.message, "elapsed": self.elapsed, "exit_code": self.exit_code}
        return dict(c, transport=self.via) if self.via else c


class Transport(Protocol):
    """How requests reach nodes. `probe`: every node's facts, in order (a transport that learns the names, srun
    inside an allocation, returns them); `run`: a shell command on each node, its stdin given; `put`: one file
    copied to one node. Results are keyed by the node the transport ran them on, never by what a node says."""

    name: str

    def probe(self, nodes: list[str], request: ProbeRequest) -> tuple[list[str], dict[str, Answer]]: ...

    def run(
        self, nodes: list[str], command: str, timeout: float, stdin: bytes | None = None
    ) -> dict[str, RunResult]: ...

    def put(self, node: str, local: Path, target: str, timeout: float) -> RunResult: ...
