"""SSH fan-out with paramiko: one connection per node, in threads, with a deadline per node.

Host keys are checked the way OpenSSH's StrictHostKeyChecking=yes does: a key that is not in
known_hosts is refused (accepted and recorded only with accept_new_host_keys, like
`accept-new`), and a key that differs from the recorded one is always refused. Only key
authentication is tried: no password and no keyboard-interactive prompt, ever.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import paramiko

from clusterdoc.errors import UsageError
from clusterdoc.hostfile import Host

# paramiko logs every failed handshake at ERROR level; we report failures ourselves, once.
logging.getLogger("paramiko").setLevel(logging.CRITICAL)

STATUSES = ("ok", "refused", "timeout", "auth", "unknown_host_key", "changed_host_key", "unreachable", "error")

_known_hosts_lock = threading.Lock()


@dataclass
class SSHOptions:
    ssh_config: Path | None = None          # default: ~/.ssh/config when it exists
    identities: list[str] = field(default_factory=list)
    user: str | None = None
    timeout: float = 20.0                   # per node: connect + command
    accept_new_host_keys: bool = False
    known_hosts: list[Path] | None = None   # default: UserKnownHostsFile from the config, else ~/.ssh/known_hosts

    @classmethod
    def from_args(cls, args) -> "SSHOptions":
        """Build from the CLI's shared target options (see cli._add_target_options)."""
        cfg = getattr(args, "ssh_config", None)
        if cfg and not Path(cfg).is_file():
            raise UsageError(f"ssh config {cfg!r} does not exist", hint="give the path of an OpenSSH client config file")
        for key in getattr(args, "identity", None) or []:
            if not Path(key).is_file():
                raise UsageError(f"identity file {key!r} does not exist", hint="give the path of a private key")
        timeout = getattr(args, "timeout", 20.0)
        if timeout <= 0:
            raise UsageError(f"--timeout must be above 0 seconds, got {timeout}")
        return cls(ssh_config=Path(cfg) if cfg else None, identities=list(getattr(args, "identity", None) or []),
                   user=getattr(args, "user", None), timeout=timeout,
                   accept_new_host_keys=getattr(args, "accept_new_host_keys", False))


@dataclass
class RunResult:
    host: str
    status: str                 # one of STATUSES; "ok" means the command ran (see exit_code)
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    elapsed: float = 0.0
    message: str = ""           # one line for humans, set whenever status != "ok"

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.exit_code == 0


class _UnknownHostKey(Exception):
    def __init__(self, hostname: str, key: paramiko.PKey):
        self.hostname, self.key = hostname, key
        super().__init__(hostname)


class _RejectUnknown(paramiko.MissingHostKeyPolicy):
    def __init__(self, known_hosts: paramiko.HostKeys):
        self.known_hosts = known_hosts

    def missing_host_key(self, client, hostname, key):
        known = self.known_hosts.lookup(hostname)
        if known:  # known, but under another key type: treat as changed, never as new
            raise paramiko.BadHostKeyException(hostname, key, next(iter(known.values())))
        raise _UnknownHostKey(hostname, key)


class _AcceptNew(_RejectUnknown):
    """StrictHostKeyChecking=accept-new: record a key never seen before (changed keys still fail)."""

    def __init__(self, known_hosts: paramiko.HostKeys, path: Path):
        super().__init__(known_hosts)
        self.path = path

    def missing_host_key(self, client, hostname, key):
        try:
            super().missing_host_key(client, hostname, key)
        except _UnknownHostKey:
            pass
        with _known_hosts_lock:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(self.path, "a") as f:
                f.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


class SSHContext:
    """What one run shares across hosts, parsed once: the OpenSSH client config, known_hosts files and
    private keys (parsing them per connection costs tens of ms of head CPU each)."""

    def __init__(self, opts: SSHOptions):
        path = opts.ssh_config
        if path is None:
            default = Path.home() / ".ssh" / "config"
            path = default if default.is_file() else None
        try:
            self.config = paramiko.SSHConfig.from_path(str(path)) if path else paramiko.SSHConfig()
        except Exception as err:  # paramiko raises several kinds for a malformed file
            raise UsageError(f"cannot read ssh config: {err}", where=str(path))
        self.opts = opts
        self._lock = threading.Lock()
        self._host_keys: dict[tuple[Path, ...], paramiko.HostKeys] = {}
        self._keys: dict[str, paramiko.PKey | Exception] = {}

    def host_keys(self, files: list[Path]) -> paramiko.HostKeys:
        with self._lock:
            keys = self._host_keys.get(tuple(files))
            if keys is None:
                keys = paramiko.HostKeys()
                for path in files:
                    if path.is_file():
                        keys.load(str(path))
                self._host_keys[tuple(files)] = keys
            return keys

    def private_key(self, path: str) -> paramiko.PKey:
        with self._lock:
            if path not in self._keys:
                try:
                    self._keys[path] = _load_key(path)
                except _KeyFileError as err:
                    self._keys[path] = err
            key = self._keys[path]
        if isinstance(key, Exception):
            raise key
        return key

    def lookup(self, host: Host) -> dict:
        c = self.config.lookup(host.host)
        files = self.opts.known_hosts
        if files is None:
            given = c.get("userknownhostsfile")
            files = [Path(os.path.expanduser(p)) for p in given.split()] if given else \
                [Path.home() / ".ssh" / "known_hosts"]
        identities = self.opts.identities or [os.path.expanduser(p) for p in c.get("identityfile", [])
                                              if os.path.exists(os.path.expanduser(p))]
        return {
            "hostname": c.get("hostname", host.host),
            "port": int(c.get("port", 22)),
            "user": host.user or self.opts.user or c.get("user") or os.environ.get("USER") or "root",
            "identities": identities,
            "known_hosts": files,
            "proxy": c.get("proxycommand"),
        }


def _describe(err: BaseException, host: str, addr: str, timeout: float) -> tuple[str, str]:
    """Map what paramiko/socket raised to (status, one-line message)."""
    if isinstance(err, paramiko.ssh_exception.NoValidConnectionsError) and err.errors:
        err = next(iter(err.errors.values()))  # paramiko wraps the socket error of each address it tried
    if isinstance(err, _UnknownHostKey):
        return ("unknown_host_key",
                f"host key of {host} ({err.hostname}) is not in known_hosts; refusing to trust it unseen")
    if isinstance(err, paramiko.BadHostKeyException):
        return ("changed_host_key",
                f"HOST KEY OF {host} HAS CHANGED ({err.key.get_name()} {err.key.get_fingerprint().hex()} is not the "
                f"recorded one): possible man-in-the-middle, refusing to connect")
    if isinstance(err, _KeyFileError):
        return "auth", f"{host}: {err}"
    if isinstance(err, paramiko.AuthenticationException):
        return "auth", f"key login to {host} failed ({err}); no password or interactive login is tried"
    if isinstance(err, paramiko.PasswordRequiredException):
        return "auth", f"the private key for {host} needs a passphrase; load it into ssh-agent"
    if isinstance(err, ConnectionRefusedError):
        return "refused", f"connection to {host} ({addr}) refused: is sshd running there?"
    if isinstance(err, (socket.timeout, TimeoutError)):
        return "timeout", f"{host} ({addr}) did not answer within {timeout:g}s"
    if isinstance(err, socket.gaierror):
        return "unreachable", f"{host}: name does not resolve ({err.strerror})"
    if isinstance(err, paramiko.SSHException) and "banner" in str(err).lower():
        return "timeout", f"{host} ({addr}) accepted the connection but sent no SSH banner within {timeout:g}s"
    if isinstance(err, paramiko.SSHException) and "timeout" in str(err).lower():
        return "timeout", f"{host} ({addr}): SSH handshake did not finish within {timeout:g}s"
    if isinstance(err, OSError) and err.errno is not None:
        return "unreachable", f"{host} ({addr}): {os.strerror(err.errno)}"
    return "error", f"{host} ({addr}): {type(err).__name__}: {err}"


class _KeyFileError(Exception):
    pass


def _load_key(path: str) -> paramiko.PKey:
    try:
        return paramiko.PKey.from_path(path)
    except paramiko.PasswordRequiredException:
        raise _KeyFileError(f"private key {path} needs a passphrase; load it into ssh-agent (we never prompt)")
    except Exception as err:
        raise _KeyFileError(f"cannot use private key {path}: {err}")


def connect(host: Host, opts: SSHOptions, context: SSHContext | None = None,
            timeout: float | None = None) -> paramiko.SSHClient:
    """Open one authenticated connection. Raises what paramiko raises; run_many classifies it."""
    context = context or SSHContext(opts)
    c = context.lookup(host)
    timeout = opts.timeout if timeout is None else timeout
    client = paramiko.SSHClient()
    known = context.host_keys(c["known_hosts"])
    client._system_host_keys = known  # shared and read-only: paramiko only reads it while connecting
    client.set_missing_host_key_policy(
        _AcceptNew(known, c["known_hosts"][0]) if opts.accept_new_host_keys else _RejectUnknown(known))
    keys = c["identities"]
    # paramiko's own key_filename loading can fail on valid PEM keys; load the first key ourselves
    pkey = context.private_key(keys[0]) if keys else None
    sock = paramiko.ProxyCommand(c["proxy"]) if c["proxy"] else None
    try:
        client.connect(
            c["hostname"], port=c["port"], username=c["user"],
            pkey=pkey, key_filename=keys[1:] or None,
            look_for_keys=not c["identities"], allow_agent=not c["identities"],
            password=None, timeout=timeout, banner_timeout=timeout, auth_timeout=timeout,
            channel_timeout=timeout, sock=sock,
        )
    except BaseException:
        client.close()
        raise
    return client


def run(client: paramiko.SSHClient, command: str, stdin: bytes | None, deadline: float) -> tuple[int | None, str, str]:
    """Run one command on an open connection; returns (exit code or None on timeout, stdout, stderr)."""
    chan = client.get_transport().open_session(timeout=max(0.1, deadline - time.monotonic()))
    chan.settimeout(0.2)
    chan.exec_command(command)
    if stdin:
        chan.sendall(stdin)
    chan.shutdown_write()
    out, err = bytearray(), bytearray()
    while True:
        got = False
        while chan.recv_ready():
            out += chan.recv(65536)
            got = True
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(65536)
            got = True
        if chan.exit_status_ready() and not chan.recv_ready() and not chan.recv_stderr_ready():
            code = chan.recv_exit_status()
            break
        if time.monotonic() > deadline:
            chan.close()
            code = None
            break
        if not got:
            time.sleep(0.01)
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run_one(host: Host, command: str, opts: SSHOptions, stdin: bytes | None = None,
            context: SSHContext | None = None) -> RunResult:
    start = time.monotonic()
    deadline = start + opts.timeout
    context = context or SSHContext(opts)
    addr = context.lookup(host)["hostname"]
    try:
        client = connect(host, opts, context)
    except BaseException as err:  # every failure becomes this node's result, never the run's
        if isinstance(err, KeyboardInterrupt):
            raise
        status, message = _describe(err, host.host, addr, opts.timeout)
        if status == "error" and isinstance(err, paramiko.SSHException) and \
                time.monotonic() - start >= 0.9 * opts.timeout:
            status, message = "timeout", (f"{host.host} ({addr}) accepted the connection but the SSH handshake "
                                          f"did not finish within {opts.timeout:g}s")
        return RunResult(host.host, status, elapsed=time.monotonic() - start, message=message)
    try:
        code, out, err = run(client, command, stdin, deadline)
    except Exception as e:
        status, message = _describe(e, host.host, addr, opts.timeout)
        return RunResult(host.host, status, elapsed=time.monotonic() - start, message=message)
    finally:
        client.close()
    elapsed = time.monotonic() - start
    if code is None:
        return RunResult(host.host, "timeout", None, out, err, elapsed,
                         f"{host.host}: the command did not finish within {opts.timeout:g}s")
    return RunResult(host.host, "ok", code, out, err, elapsed,
                     "" if code == 0 else f"{host.host}: the command exited with {code}")


def run_many(hosts: list[Host], command: str | Callable[[Host], str], opts: SSHOptions,
             stdin: bytes | None = None, fanout: int = 32,
             on_done: Callable[[RunResult], None] | None = None) -> dict[str, RunResult]:
    """Run `command` (the same for all, or one per host from a callable) on every host, `fanout` at a
    time. Results keyed by host name, in input order."""
    if fanout < 1:
        raise UsageError(f"--fanout must be at least 1, got {fanout}")
    context = SSHContext(opts)
    command_for = command if callable(command) else (lambda _h: command)
    results: dict[str, RunResult] = {}
    with ThreadPoolExecutor(max_workers=min(fanout, max(1, len(hosts)))) as pool:
        futures = {pool.submit(run_one, h, command_for(h), opts, stdin, context): h for h in hosts}
        for fut in as_completed(futures):
            res = fut.result()
            results[res.host] = res
            if on_done:
                on_done(res)
    return {h.host: results[h.host] for h in hosts}


def put_file(host: Host, local: str | Path, remote: str, opts: SSHOptions) -> RunResult:
    """Copy one file with SFTP (one connection)."""
    start = time.monotonic()
    context = SSHContext(opts)
    addr = context.lookup(host)["hostname"]
    try:
        client = connect(host, opts, context)
        try:
            sftp = client.open_sftp()
            sftp.get_channel().settimeout(opts.timeout)
            sftp.put(str(local), remote)
            sftp.close()
        finally:
            client.close()
    except Exception as err:
        status, message = _describe(err, host.host, addr, opts.timeout)
        return RunResult(host.host, status, elapsed=time.monotonic() - start, message=message)
    return RunResult(host.host, "ok", 0, elapsed=time.monotonic() - start)
