"""Which nodes, and how to reach them: the options `check` and `build-wheel` share (pdsh/clush/ssh words)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from clusterdoc.errors import UsageError

if TYPE_CHECKING:
    from clusterdoc.hostfile import Host
    from clusterdoc.remote import SSHOptions


@dataclass
class Targets:
    hostfile: str | None = None  # MPICH, Open MPI, plain or Slurm hostlist lines
    nodelist: list[str] = field(default_factory=list)  # Slurm hostlist expressions, e.g. "gpu[001-004]"
    ssh_config: str | None = None  # OpenSSH client config (default ~/.ssh/config)
    identity: list[str] = field(default_factory=list)  # private key files
    user: str | None = None  # default: hostfile, ssh config, then $USER
    timeout: float = 30.0  # per node: connect + probe, seconds
    fanout: int = 32  # nodes handled at once (pdsh's -f)
    accept_new_host_keys: bool = False  # StrictHostKeyChecking=accept-new, never a changed key

    @property
    def given(self) -> bool:
        return bool(self.hostfile or self.nodelist)

    def hosts(self) -> list[Host]:
        from clusterdoc.hostfile import load_targets

        hosts = load_targets(self.hostfile, self.nodelist or None)
        if not hosts:
            raise UsageError("no hosts", where=self.hostfile or "--nodelist", hint="the hostfile lists no host")
        return hosts

    def ssh_options(self) -> SSHOptions:
        """The SSH side, checked: files that must exist do, numbers are in range."""
        from clusterdoc.remote import SSHOptions

        if self.ssh_config and not Path(self.ssh_config).expanduser().is_file():
            raise UsageError(
                f"ssh config {self.ssh_config!r} does not exist", hint="give the path of an OpenSSH client config file"
            )
        for key in self.identity:
            if not Path(key).expanduser().is_file():
                raise UsageError(f"identity file {key!r} does not exist", hint="give the path of a private key")
        if self.timeout <= 0:
            raise UsageError(f"--timeout must be above 0 seconds, got {self.timeout}")
        if self.fanout < 1:
            raise UsageError(f"--fanout must be at least 1, got {self.fanout}")
        return SSHOptions(
            ssh_config=Path(self.ssh_config).expanduser() if self.ssh_config else None,
            identities=list(self.identity),
            user=self.user,
            timeout=self.timeout,
            accept_new_host_keys=self.accept_new_host_keys,
        )
