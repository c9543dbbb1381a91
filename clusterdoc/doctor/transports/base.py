"""What every transport is: the probe request (built once), a node's answer, and the Transport interface.

A transport carries the probe (and, for actions such as build-wheel's install, a shell command or a file) to
nodes and brings back each node's answer, keyed by the node it really ran on. Which one is used is decided in one
place (transports/__init__.py: `resolve`); each lives in its own file (ssh.py, srun.py, local.py, saved.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from clusterdoc.doctor.payload import probe_argv
from clusterdoc.remote import RunResult

__all__ = ["Answer", "ProbeRequest", "RunResult", "Transport"]


@dataclass(frozen=True)
class ProbeRequest:
    """What the probe is asked, whatever carries it: the probe's own arguments are spelled here once (argv)."""

    timeout: float  # seconds a node has to answer
    python: str | None = None  # the job's interpreter: the probe runs under it (default python3)
    wrap: str | None = None  # a command prefix the probe runs under, as the ranks do (apptainer exec IMG)
    head_mpirun: str | None = None  # the head's mpirun (the mpi check compares the nodes' with it)
    env: dict[str, str] = field(default_factory=dict)  # what the probe sees instead of the node's (--env)
    space: tuple[str, ...] = ()  # folders whose free space counts (the job folder)
    files: tuple[str, ...] = ()  # paths hashed on every node (the files check)

    def args(self, peers: list[str] | None = None, listen=None, connect=None) -> dict:
        """probe.gather's keyword arguments (the SSH path adds each node's peers and port plan)."""
        return {
            "peers": list(peers or []),
            "env": dict(self.env),
            "listen": list(listen or []),
            "connect": list(connect or []),
            "space": list(self.space),
            "files": list(self.files),
        }

    def argv(self, peers: list[str] | None = None, listen=None, connect=None) -> list[str]:
        """The probe's command-line arguments for those keyword arguments."""
        return probe_argv(self.args(peers, listen, connect))


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
