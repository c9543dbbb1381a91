"""SSH fan-out with paramiko: one connection per node, in threads, with one deadline per node.

It follows OpenSSH (StrictHostKeyChecking=yes) wherever security depends on it:
- Host keys are looked up in UserKnownHostsFile (default ~/.ssh/known_hosts ~/.ssh/known_hosts2) and
  GlobalKnownHostsFile (default /etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2), with OpenSSH's
  patterns (* ? !), hashed names, [host]:port, HostKeyAlias and @revoked. A key matching an entry is ok;
  a host whose entries all differ has a changed key, always refused; a revoked key is refused; a host
  with no entry is refused, or with accept_new_host_keys recorded in the first user file (hashed with
  HashKnownHosts yes), like `accept-new`. The key types already known are asked for first, as ssh does.
- ProxyJump is honoured: each jump host is reached (its own config, the same host key rules) and the
  next hop is a direct-tcpip channel through it. ProxyCommand runs through the shell, as ssh runs it.
  Both for one host is refused.
- One deadline per node covers TCP connect, banner, key exchange, login and the command: a stall
  anywhere is `timeout`, never a key or login problem.
- Only key authentication: no password and no keyboard-interactive prompt, ever.
What a node sends back is read up to untrusted.MAX_STREAM bytes per stream (then `too_large`).
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import os
import re
import shlex
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import paramiko
import paramiko.config

from clusterdoc.errors import UsageError
from clusterdoc.hostfile import Host
from clusterdoc.openssh import (
    GLOBAL_KNOWN_HOSTS,
    USER_KNOWN_HOSTS,
    KnownHosts,
    KnownKey,
    Target,
    fingerprint,
    judge_host_key,
    load_config,
    parse_jump,
    proxy_command_argv,
)
from clusterdoc.untrusted import MAX_STREAM, decode, printable

# paramiko's SSHConfig asks getpass.getuser() (the environment, then a passwd lookup) once per config block per
# lookup: with a block per node (a generated ssh_config) that is nodes x blocks lookups, the head's largest CPU cost
# after the crypto at 64 nodes (bench/bench_check.py). The local user cannot change during a run: ask once.
if hasattr(paramiko.config, "getpass"):
    import functools
    import getpass
    import types

    paramiko.config.getpass = types.SimpleNamespace(getuser=functools.lru_cache(maxsize=1)(getpass.getuser))

# paramiko logs every failed handshake at ERROR level; we report failures ourselves, once.
logging.getLogger("paramiko").setLevel(logging.CRITICAL)

STATUSES = (
    "ok",
    "refused",
    "timeout",
    "auth",
    "unknown_host_key",
    "changed_host_key",
    "unreachable",  # the name does not resolve (or a jump host cannot reach it)
    "no_route",
    "too_large",
    "error",
)
DEFAULT_KEYS = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
MAX_JUMPS = 8
REUSE_FOR = 60.0  # seconds a connection made by reach() waits for its login, at most
# known_hosts key type -> the host key algorithms that present it
KEY_ALGORITHMS = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256")}


@dataclass
class SSHOptions:
    ssh_config: Path | None = None  # default: ~/.ssh/config when it exists
    identities: list[str] = field(default_factory=list)
    user: str | None = None
    timeout: float = 20.0  # per node: connect + command
    accept_new_host_keys: bool = False
    known_hosts: list[Path] | None = None  # replaces the user files (UserKnownHostsFile); global ones still read


@dataclass
class RunResult:
    host: str
    status: str  # one of STATUSES; "ok" means the command ran (see exit_code)
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    elapsed: float = 0.0
    message: str = ""  # one line for humans, set whenever status != "ok"
    sent_at: float | None = None  # time.time() when the command was sent, and when its answer was complete
    received_at: float | None = None  # (the clock check's round trip)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.exit_code == 0


# --- failures ------------------------------------------------------------------------------------


class _UnknownHostKey(Exception):
    def __init__(self, name: str, key: paramiko.PKey):
        self.name, self.key = name, key
        super().__init__(name)


class _ChangedHostKey(Exception):
    def __init__(self, name: str, key: paramiko.PKey, entry: KnownKey):
        self.name, self.key, self.entry = name, key, entry
        super().__init__(name)


class _Timeout(Exception):
    def __init__(self, stage: str):
        self.stage = stage
        super().__init__(stage)


class _TooLarge(Exception):
    def __init__(self, stream: str):
        self.stream = stream
        super().__init__(stream)


class _KeyFileError(Exception):
    pass


def _load_key(path: str) -> paramiko.PKey:
    try:
        return paramiko.PKey.from_path(path)
    except paramiko.PasswordRequiredException:
        raise _KeyFileError(f"private key {path} needs a passphrase; load it into ssh-agent (we never prompt)")
    except Exception as err:
        raise _KeyFileError(f"cannot use private key {path}: {err}")


# --- the config, keys and known_hosts one run shares ---------------------------------------


class SSHContext:
    """What one run shares across hosts, parsed once: the OpenSSH client config, known_hosts files and
    private keys (parsing them per connection costs tens of ms of head CPU each)."""

    def __init__(self, opts: SSHOptions):
        self.config, self.where = load_config(opts.ssh_config)
        self.opts = opts
        self.known = KnownHosts()
        self._lock = threading.Lock()
        self._keys: dict[str, paramiko.PKey | Exception] = {}
        self._targets: dict[tuple, Target] = {}
        # reach()'s connections, for the logins: {(address, port): (socket, when it connected)}
        self._sockets: dict[tuple[str, int], tuple[socket.socket, float]] = {}

    def keep_socket(self, t: Target, sock: socket.socket) -> None:
        with self._lock:
            if (t.hostname, t.port) in self._sockets:  # the same sshd twice in the list: one is enough
                sock.close()
            else:
                self._sockets[(t.hostname, t.port)] = (sock, time.monotonic())

    def take_socket(self, t: Target) -> socket.socket | None:
        """reach()'s connection to t, while sshd still waits for the login on it (LoginGraceTime, 120 s by
        default: a connection kept longer than REUSE_FOR is closed, and the login makes its own)."""
        with self._lock:
            sock, since = self._sockets.pop((t.hostname, t.port), (None, 0.0))
        if sock is not None and time.monotonic() - since > REUSE_FOR:
            sock.close()
            return None
        return sock

    def drop_sockets(self) -> None:
        with self._lock:
            left, self._sockets = [s for s, _ in self._sockets.values()], {}
        _close_all(left)

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

    def _files(self, value: str | None, default, tokens: dict) -> list[Path]:
        if value is None:
            words = list(default)
        else:
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
        if [w.lower() for w in words] == ["none"]:
            return []
        out = []
        for w in words:
            w = re.sub(r"%[%dunhpr]", lambda m: tokens.get(m.group(0), m.group(0)), w)
            out.append(Path(os.path.expanduser(w)))
        return out

    def lookup(
        self, host: Host, port: int | None = None, jumps: list[tuple] | None = None, jump: bool = False
    ) -> Target:
        """`port`/`jumps` override the config (a ProxyJump hop's own spec); `jump`: a jump host, which
        takes its user from its spec or config only (as `ssh -J` does), not from --user. Memoized: a
        config's lookup walks every Host block, and each node is looked up several times per run."""
        key = (host.host, host.user, port, None if jumps is None else tuple(jumps), jump)
        with self._lock:
            known = self._targets.get(key)
        if known is None:
            known = self._lookup(host, port, jumps, jump)
            with self._lock:
                self._targets[key] = known
        return dataclasses.replace(
            known, identities=list(known.identities), known_hosts=list(known.known_hosts), jumps=list(known.jumps)
        )

    def _lookup(self, host: Host, port: int | None, jumps: list[tuple] | None, jump: bool) -> Target:
        c = self.config.lookup(host.host)
        where = self.where
        hostname = c.get("hostname", host.host)
        try:
            port = port or int(c.get("port", 22))
        except ValueError:
            raise UsageError(f"Port {c.get('port')!r} for {host.host} is not a number", where=where)
        user = host.user or (None if jump else self.opts.user) or c.get("user") or os.environ.get("USER") or "root"
        proxy_command, proxy_jump = c.get("proxycommand"), c.get("proxyjump")
        if proxy_jump and proxy_jump.lower() == "none":
            proxy_jump = None
        if proxy_command and proxy_jump and jumps is None:
            raise UsageError(
                f"both ProxyJump and ProxyCommand apply to {host.host}: ssh uses whichever comes "
                "first, clusterdoc refuses to guess",
                where=where,
                hint=f"keep one of them for {host.host} (or add `ProxyJump none` / `ProxyCommand none`)",
            )
        if jumps is None:
            jumps = parse_jump(proxy_jump, host.host) if proxy_jump else []
        elif jumps:
            proxy_command = None  # an explicit chain replaces the hop's own proxy settings
        home = str(Path.home())
        tokens = {
            "%%": "%",
            "%d": home,
            "%u": os.environ.get("USER") or "root",
            "%n": host.host,
            "%h": hostname,
            "%p": str(port),
            "%r": user,
        }
        if proxy_command:
            proxy_command = shlex.join(proxy_command_argv(proxy_command, tokens, host.host))
        user_files = self.opts.known_hosts
        if user_files is None:
            user_files = self._files(c.get("userknownhostsfile"), USER_KNOWN_HOSTS, tokens)
        global_files = self._files(c.get("globalknownhostsfile"), GLOBAL_KNOWN_HOSTS, tokens)
        identities = self.opts.identities or [
            os.path.expanduser(p) for p in c.get("identityfile", []) if os.path.exists(os.path.expanduser(p))
        ]
        alias = c.get("hostkeyalias")
        key_name = alias or (hostname if port == 22 else f"[{hostname}]:{port}")
        return Target(
            host.host,
            hostname,
            port,
            user,
            identities,
            list(user_files) + global_files,
            len(user_files),
            key_name,
            c.get("hashknownhosts", "no").lower() == "yes",
            proxy_command,
            jumps,
        )

    def auth_keys(self, t: Target) -> tuple[list, list]:
        """(keys to offer in order, things to close after login): the given identities; without any,
        the agent's keys then the default key files, as ssh does."""
        if t.identities:
            keys, errors = [], []
            for path in t.identities:
                try:
                    keys.append(self.private_key(path))
                except _KeyFileError as err:
                    errors.append(err)
            if not keys:
                raise errors[0]
            return keys, []
        keys, closers = [], []
        if os.environ.get("SSH_AUTH_SOCK"):
            try:
                agent = paramiko.Agent()
                keys += list(agent.get_keys())
                closers.append(agent)
            except Exception:  # no agent behind the socket: as ssh, go on without it
                pass
        for path in DEFAULT_KEYS:
            path = os.path.expanduser(path)
            if os.path.isfile(path):
                try:
                    keys.append(self.private_key(path))
                except _KeyFileError:
                    pass
        return keys, closers


# --- connecting ----------------------------------------------------------------------------------


class Connection:
    """An authenticated connection to a host, and what it goes through (jump hosts, a ProxyCommand)."""

    def __init__(self, transport: paramiko.Transport, closers: list):
        self.transport, self.closers = transport, closers

    def get_transport(self) -> paramiko.Transport:
        return self.transport

    def open_sftp(self) -> paramiko.SFTPClient:
        sftp = paramiko.SFTPClient.from_transport(self.transport)
        if sftp is None:  # from_transport gives None when it gets no channel
            raise paramiko.SSHException("could not open an SFTP session")
        return sftp

    def close(self) -> None:
        _close_all(self.closers)


def _close_all(things) -> None:
    for thing in reversed(things):
        try:
            thing.close()
        except Exception:
            pass


class _Deadline:
    """The node's one deadline: `left()` for each step, and at the deadline everything opened so far is
    closed, so any wait inside paramiko ends at once (then `fired` says it was a timeout)."""

    def __init__(self, deadline: float):
        self.deadline, self.fired, self.done = deadline, False, False
        self.closers: list = []  # anything with close(): sockets, transports, the agent
        self.stage = "the TCP connect"
        self.lock = threading.Lock()
        self.timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self.timer.daemon = True
        self.timer.start()

    def _fire(self):
        with self.lock:
            if self.done:
                return
            self.fired = True
        _close_all(list(self.closers))

    def left(self, stage: str) -> float:
        self.stage = stage
        left = self.deadline - time.monotonic()
        if left <= 0 or self.fired:
            raise _Timeout(stage)
        return left

    def cancel(self) -> bool:
        """Stop the clock; False when it had already fired (what was opened is closed)."""
        with self.lock:
            self.done = True
        self.timer.cancel()
        return not self.fired


def _check_host_key(context: SSHContext, t: Target, key: paramiko.PKey) -> None:
    entries = context.known.entries(t.known_hosts, t.key_name)
    verdict, entry = judge_host_key(entries, key.get_name(), key.asbytes())
    if verdict in ("changed", "revoked"):
        assert entry is not None  # judge_host_key names the entry it compared with
        raise _ChangedHostKey(t.key_name, key, entry)
    if verdict == "new":
        if not context.opts.accept_new_host_keys or not t.user_files:
            raise _UnknownHostKey(t.key_name, key)
        context.known.record(t.known_hosts[0], t.key_name, key, t.hash_new)


def _prefer_known_key_types(context: SSHContext, t: Target, transport: paramiko.Transport) -> None:
    known = [e.keytype for e in context.known.entries(t.known_hosts, t.key_name) if e.marker is None]
    opts = transport.get_security_options()
    want = [a for k in known for a in KEY_ALGORITHMS.get(k, (k,)) if a in opts.key_types]
    if want:
        opts.key_types = tuple(dict.fromkeys(want + list(opts.key_types)))


def _open_socket(context: SSHContext, t: Target, clock: _Deadline, depth: int):
    """The byte stream to `t`'s sshd: TCP, a ProxyCommand, or a channel through its jump hosts."""
    if t.jumps:
        *before, (user, host, port) = t.jumps
        hop = context.lookup(Host(host, user=user), port=port, jumps=before or None, jump=True)
        via = _connect(context, hop, clock, depth + 1)
        clock.closers.append(via)
        try:
            chan = via.transport.open_channel(
                "direct-tcpip",
                (t.hostname, t.port),
                ("127.0.0.1", 0),
                timeout=clock.left(f"the ProxyJump through {hop.name}"),
            )
        except BaseException as err:
            via.close()
            if isinstance(err, paramiko.ChannelException):
                raise _JumpRefused(hop.name, t, err) from None
            raise
        return chan, [via]
    if t.proxy_command:  # already `$SHELL -c "exec ..."` (proxy_command_argv): paramiko shlex-splits it back
        proxy = paramiko.ProxyCommand(t.proxy_command)
        return proxy, [proxy]
    sock = context.take_socket(t)  # reach() connected it already
    if sock is not None:
        return sock, [sock]
    sock = socket.create_connection((t.hostname, t.port), timeout=clock.left("the TCP connect"))
    return sock, [sock]


class _JumpRefused(Exception):
    def __init__(self, hop: str, t: Target, err):
        super().__init__(
            f"jump host {hop} could not open a connection to {t.hostname}:{t.port} "
            f"({printable(getattr(err, 'text', err), 200)})"
        )


def _connect(context: SSHContext, t: Target, clock: _Deadline, depth: int = 0) -> Connection:
    """Open one authenticated connection before the clock's deadline."""
    if depth > MAX_JUMPS:
        raise UsageError(f"ProxyJump for {t.name} goes through more than {MAX_JUMPS} jump hosts (a loop?)")
    closers: list = []
    try:
        sock, closers = _open_socket(context, t, clock, depth)
        clock.closers += closers
        transport = paramiko.Transport(sock)
        closers.append(transport)
        clock.closers.append(transport)
        # paramiko's own timeouts end just after ours: the clock closing the transport is the one deadline
        transport.banner_timeout = transport.handshake_timeout = clock.left("the SSH banner") + 1
        _prefer_known_key_types(context, t, transport)
        transport.start_client(timeout=clock.left("the SSH banner and key exchange") + 1)
        key = transport.get_remote_server_key()
        _check_host_key(context, t, key)
        _login(context, t, transport, clock)
        return Connection(transport, closers)
    except BaseException as err:
        _close_all(closers)
        if clock.fired and not isinstance(err, (_Timeout, KeyboardInterrupt)):
            err = _Timeout(clock.stage)  # whatever broke when the clock closed the connection
        if depth and not hasattr(err, "hop"):
            err.hop = t.name  # type: ignore[attr-defined]  # the jump host it happened on, for the message
        raise err


def _login(context: SSHContext, t: Target, transport: paramiko.Transport, clock: _Deadline) -> None:
    keys, closers = context.auth_keys(t)
    clock.closers += closers
    try:
        if not keys:
            raise paramiko.AuthenticationException(
                "no private key to offer (give one with -i, IdentityFile or ssh-agent)"
            )
        last = None
        for key in keys:
            transport.auth_timeout = clock.left("the login") + 1
            try:
                transport.auth_publickey(t.user, key)
            except paramiko.AuthenticationException as err:
                if "timeout" in str(err).lower():
                    raise _Timeout("the login") from None
                clock.left("the login")
                last = err
            if transport.is_authenticated():
                return
        raise last or paramiko.AuthenticationException("the server did not accept the key")
    finally:
        _close_all(closers)


def connect(
    host: Host, opts: SSHOptions, context: SSHContext | None = None, deadline: float | None = None
) -> Connection:
    """Open one authenticated connection, all of it (jumps, TCP, banner, keys, login) before `deadline`
    (time.monotonic(); default: opts.timeout from now). Raises; run_one classifies what it raised."""
    context = context or SSHContext(opts)
    clock = _Deadline(deadline if deadline is not None else time.monotonic() + opts.timeout)
    try:
        conn = _connect(context, context.lookup(host), clock)
    finally:
        in_time = clock.cancel()
    if not in_time:
        conn.close()
        raise _Timeout("the login")
    return conn


def _describe(err: BaseException, host: str, addr: str, timeout: float) -> tuple[str, str]:
    """Map what paramiko/socket raised to (status, one-line message)."""
    at = f"{host} ({addr})"
    hop = getattr(err, "hop", None)
    if hop:
        host = at = f"{hop} (jump host for {host})"
    if isinstance(err, _Timeout):
        return "timeout", f"{at} did not get through {err.stage} within {timeout:g}s"
    if isinstance(err, _TooLarge):
        return (
            "too_large",
            f"{host} sent more than {MAX_STREAM >> 20} MiB on {err.stream}: output too large, stopped reading",
        )
    if isinstance(err, _UnknownHostKey):
        return (
            "unknown_host_key",
            f"host key of {host} ({err.name}, {err.key.get_name()} "
            f"{fingerprint(err.key.asbytes())}) is not in known_hosts; "
            "refusing to trust it unseen",
        )
    if isinstance(err, _ChangedHostKey):
        what = "IS REVOKED" if err.entry.marker == "@revoked" else "HAS CHANGED"
        return (
            "changed_host_key",
            f"HOST KEY OF {host} {what} ({err.key.get_name()} {fingerprint(err.key.asbytes())} is not the key "
            f"recorded in {err.entry.where}): possible man-in-the-middle, refusing to connect",
        )
    if isinstance(err, _JumpRefused):
        return "unreachable", f"{host}: {err}"
    if isinstance(err, _KeyFileError):
        return "auth", f"{host}: {err}"
    if isinstance(err, paramiko.AuthenticationException):
        return "auth", f"key login to {host} failed ({printable(err, 200)}); no password or interactive login is tried"
    if isinstance(err, paramiko.PasswordRequiredException):
        return "auth", f"the private key for {host} needs a passphrase; load it into ssh-agent"
    if isinstance(err, ConnectionRefusedError):
        return "refused", f"connection to {at} refused: is sshd running there?"
    if isinstance(err, (socket.timeout, TimeoutError)):
        return "timeout", f"{at} did not answer within {timeout:g}s"
    if isinstance(err, socket.gaierror):
        return "unreachable", f"{host}: name does not resolve ({err.strerror})"
    if isinstance(err, UsageError):
        return "error", f"{host}: {printable(err, 300)}"
    if isinstance(err, paramiko.SSHException) and "banner" in str(err).lower():
        return "timeout", f"{at} accepted the connection but sent no SSH banner within {timeout:g}s"
    if isinstance(err, paramiko.ProxyCommandFailure):
        return "error", f"{host}: ProxyCommand failed: {printable(err, 300)}"
    if isinstance(err, OSError) and err.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return "no_route", f"{at}: {os.strerror(err.errno)} (nothing answers at this address)"
    if isinstance(err, OSError) and err.errno is not None:
        return "unreachable", f"{at}: {os.strerror(err.errno)}"
    return "error", f"{at}: {type(err).__name__}: {printable(err, 300)}"


def run(
    client: Connection,
    command: str,
    stdin: bytes | None,
    deadline: float,
    cap: int = MAX_STREAM,
    times: list | None = None,
) -> tuple[int | None, str, str]:
    """Run one command on an open connection; returns (exit code or None on timeout, stdout, stderr).
    Raises _TooLarge, after closing the channel, when a stream passes `cap` bytes."""
    chan = client.get_transport().open_session(timeout=max(0.1, deadline - time.monotonic()))
    try:
        chan.settimeout(0.2)
        if times is not None:
            times.append(time.time())
        chan.exec_command(command)
        if stdin:
            chan.sendall(stdin)
        chan.shutdown_write()
        out, err = bytearray(), bytearray()
        code: int | None
        while True:
            got = False
            while chan.recv_ready() and len(out) <= cap:
                out += chan.recv(65536)
                got = True
            while chan.recv_stderr_ready() and len(err) <= cap:
                err += chan.recv_stderr(65536)
                got = True
            if len(out) > cap or len(err) > cap:
                raise _TooLarge("stdout" if len(out) > cap else "stderr")
            if chan.exit_status_ready() and not chan.recv_ready() and not chan.recv_stderr_ready():
                if times is not None:
                    times.append(time.time())
                code = chan.recv_exit_status()
                break
            if time.monotonic() > deadline:
                code = None
                break
            if not got:
                time.sleep(0.01)
    finally:
        chan.close()
    return code, decode(out), decode(err)


def _failed(host: Host, err: BaseException, addr: str, opts: SSHOptions, start: float) -> RunResult:
    status, message = _describe(err, host.host, addr, opts.timeout)
    return RunResult(host.host, status, elapsed=time.monotonic() - start, message=message)


def run_one(
    host: Host, command: str, opts: SSHOptions, stdin: bytes | None = None, context: SSHContext | None = None
) -> RunResult:
    start = time.monotonic()
    deadline = start + opts.timeout
    context = context or SSHContext(opts)
    addr = context.lookup(host).hostname
    try:
        client = connect(host, opts, context, deadline)
    except Exception as exc:  # every failure becomes this node's result, never the run's
        return _failed(host, exc, addr, opts, start)
    times: list[float] = []
    try:
        code, out, err = run(client, command, stdin, deadline, times=times)
    except Exception as e:
        return _failed(host, e, addr, opts, start)
    finally:
        client.close()
    elapsed = time.monotonic() - start
    if code is None:
        return RunResult(
            host.host,
            "timeout",
            None,
            out,
            err,
            elapsed,
            f"{host.host}: the command did not finish within {opts.timeout:g}s",
        )
    return RunResult(
        host.host,
        "ok",
        code,
        out,
        err,
        elapsed,
        "" if code == 0 else f"{host.host}: the command exited with {code}",
        *(times if len(times) == 2 else (None, None)),
    )


def reach(hosts: list[Host], opts: SSHOptions, context: SSHContext, window: float = 1.0) -> dict[str, RunResult]:
    """TCP-connect to every host's sshd at once, for at most `window` seconds: a name that does not resolve,
    a refused connection or no route is known in milliseconds, before anything else starts. Returns those
    hosts' failures; the connections made are kept in `context` for the logins (no second connection).
    A host that has not answered in the window is left to the login's own timeout; hosts behind a
    ProxyJump or ProxyCommand are left to the login (their names are the jump host's to resolve)."""
    targets = {h.host: context.lookup(h) for h in hosts}
    direct = [h for h in hosts if not targets[h.host].jumps and not targets[h.host].proxy_command]
    failed: dict[str, RunResult] = {}

    def try_one(h: Host) -> None:
        t, start = targets[h.host], time.monotonic()
        try:
            sock = socket.create_connection((t.hostname, t.port), timeout=window)
        except (TimeoutError, socket.timeout):
            return
        except OSError as err:
            failed[h.host] = _failed(h, err, t.hostname, opts, start)
            return
        context.keep_socket(t, sock)

    if direct:
        with ThreadPoolExecutor(max_workers=min(len(direct), 128)) as pool:
            list(pool.map(try_one, direct))
    return {h.host: failed[h.host] for h in hosts if h.host in failed}


def run_many(
    hosts: list[Host],
    command: str | Callable[[Host], str],
    opts: SSHOptions,
    stdin: bytes | None = None,
    fanout: int = 32,
    on_done: Callable[[RunResult], None] | None = None,
    context: SSHContext | None = None,
) -> dict[str, RunResult]:
    """Run `command` (the same for all, or one per host from a callable) on every host, `fanout` at a
    time. Results keyed by host name, in input order. A config that cannot be followed for a host
    (ProxyJump unreadable, ...) is a UsageError before any connection."""
    if fanout < 1:
        raise UsageError(f"--fanout must be at least 1, got {fanout}")
    context = context or SSHContext(opts)
    for h in hosts:
        context.lookup(h)
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
    addr = context.lookup(host).hostname
    try:
        client = connect(host, opts, context)
        try:
            sftp = client.open_sftp()
            chan = sftp.get_channel()
            assert chan is not None  # the session's own channel
            chan.settimeout(opts.timeout)
            sftp.put(str(local), remote)
            sftp.close()
        finally:
            client.close()
    except Exception as err:
        return _failed(host, err, addr, opts, start)
    return RunResult(host.host, "ok", 0, elapsed=time.monotonic() - start)
