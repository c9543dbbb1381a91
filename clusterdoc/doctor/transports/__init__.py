"""How requests reach the nodes: one Transport interface (base.py), one file per transport, chosen here.

    ssh.py    one paramiko session per node (host keys, per-node timeout, bounded output)
    srun.py   Slurm runs it: one task per node, bound to the node Slurm labelled it with
    local.py  this machine as the one node
    saved.py  NODE.json files written before (--facts): nothing reaches a node

`resolve` is the one place a name (--transport ssh|srun|auto, --local, --facts, --partition/--nodes) becomes a
transport; `probe` asks the nodes once, falling back from SSH to srun under `auto` where every node refused the
login and Slurm answers (pam_slurm_adopt). A new transport: its file here with a class of the Transport shape,
a line in TRANSPORTS, and, when users choose it by name, in CHOICES (clusterdoc/transportnames.py; docs/development.md).
"""

from __future__ import annotations

from clusterdoc.doctor import srun as slurm_steps
from clusterdoc.doctor.transports.base import Answer, ProbeRequest, RunResult, Transport
from clusterdoc.doctor.transports.local import LocalTransport
from clusterdoc.doctor.transports.saved import SavedTransport
from clusterdoc.doctor.transports.srun import SrunTransport
from clusterdoc.doctor.transports.ssh import SSHTransport
from clusterdoc.errors import UsageError
from clusterdoc.transportnames import CHOICES

__all__ = ["Answer", "ProbeRequest", "RunResult", "Transport", "probe", "resolve", "ssh_refused"]

TRANSPORTS = {"ssh": SSHTransport, "srun": SrunTransport, "local": LocalTransport, "saved": SavedTransport}


def resolve(
    choice: str = "auto",
    given: bool = True,
    local: bool = False,
    facts_dir: str | None = None,
    partition: str | None = None,
    srun_nodes: int | None = None,
) -> str:
    """The transport's name: saved facts, this machine, srun (asked for, --partition/--nodes, or inside an
    allocation with no nodes named: its nodes), else SSH to the nodes named (this machine when none is)."""
    if choice not in CHOICES:
        raise UsageError(f"--transport {choice!r}: choose {', '.join(CHOICES[:-1])} or {CHOICES[-1]}")
    if facts_dir:
        return "saved"
    if local:
        return "local"
    if choice != "ssh" and (choice == "srun" or partition or srun_nodes):
        return "srun"
    if choice != "ssh" and not given and slurm_steps.in_allocation():
        return "srun"
    return "ssh" if given else "local"


def ssh_refused(answers: dict[str, Answer]) -> bool:
    """Every node turned the login down (no key accepted, or sshd refused): SSH is not the way in here."""
    return bool(answers) and all(a.status in ("auth", "refused") for a in answers.values())


def fall_back(choice: str, answers: dict[str, Answer], timeout: float) -> bool:
    """Whether `auto` goes on through srun after SSH: every node refused the login and Slurm answers."""
    return choice == "auto" and ssh_refused(answers) and slurm_steps.slurm_answers(min(timeout, 10.0))


def probe(
    choice: str, transport: Transport, nodes: list[str], request: ProbeRequest, srun_transport: Transport | None = None
) -> tuple[Transport, list[str], dict[str, Answer]]:
    """Every node's answer through `transport`; under `auto`, SSH refused everywhere goes on through srun.
    Returns the transport that answered (later actions on the same nodes go through it too)."""
    names, answers = transport.probe(nodes, request)
    if transport.name == "ssh" and fall_back(choice, answers, request.timeout):
        transport = srun_transport or SrunTransport()
        names, answers = transport.probe(nodes, request)
    return transport, names, answers
