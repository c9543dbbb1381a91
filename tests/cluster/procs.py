"""Process, socket and wait helpers (Linux /proc only, stdlib only)."""
from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path


class ClusterError(RuntimeError):
    """A daemon did not start or the cluster cannot be used; the message says which and why."""


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-lines:]) or f"(empty log {path})"


def wait_for(check, timeout: float, what: str, log: Path | None = None, interval: float = 0.05):
    """Poll check() until truthy; on timeout raise ClusterError naming what and quoting the log."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            msg = f"timed out after {timeout:.0f}s waiting for {what}"
            if log:
                msg += f"; last lines of {log}:\n{tail(log)}"
            raise ClusterError(msg)
        time.sleep(interval)
        interval = min(interval * 1.5, 0.5)


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


def read_pid(path: Path) -> int | None:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def args(pid: int) -> str:
    """The command line as one string (daemons like sshd rewrite their argv into one string)."""
    return " ".join(cmdline(pid))


def exe_name(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).replace(" (deleted)", "")
    except OSError:
        return ""


def mnt_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def net_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def ancestors(pid: int) -> set[int]:
    out = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def kill_all(pids: set[int], grace: float = 3.0) -> None:
    """TERM, wait up to grace seconds, then KILL what is left; waits until they are gone."""
    pids = {p for p in pids if alive(p)} - ancestors(os.getpid())
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 5.0)
        while time.monotonic() < deadline:
            _reap()
            pids = {p for p in pids if alive(p)}
            if not pids:
                return
            time.sleep(0.05)
    if pids:
        raise ClusterError(f"processes survived SIGKILL: {sorted(pids)}")


_CHILDREN: list = []


def track(popen):
    """Remember a daemon this process started, so stopping it can collect its exit status."""
    _CHILDREN.append(popen)
    return popen


def _reap() -> None:
    """Collect exited daemons we started (only ours: other children of a pytest run are not ours to reap)."""
    for child in list(_CHILDREN):
        if child.poll() is not None:
            _CHILDREN.remove(child)


def listeners(pid: int | str = "self") -> set[tuple[str, int]]:
    """(address, port) of every listening TCP socket in the network namespace of pid (default: ours);
    '0.0.0.0' / '::' for wildcards."""
    out = set()
    for name, v6 in ((f"/proc/{pid}/net/tcp", False), (f"/proc/{pid}/net/tcp6", True)):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 4 or parts[3] != "0A":
                continue
            hexaddr, hexport = parts[1].split(":")
            raw = bytes.fromhex(hexaddr)
            if v6:
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                addr = socket.inet_ntop(socket.AF_INET6, raw)
                if addr.startswith("::ffff:"):
                    addr = addr[7:]
            else:
                addr = socket.inet_ntop(socket.AF_INET, raw[::-1])
            out.add((addr, int(hexport, 16)))
    return out


def free_ports(count: int, start: int = 17000, avoid: set[int] = frozenset()) -> list[int]:
    """count ports nothing listens on (any address) and that we can bind on 127.0.0.1 right now."""
    taken = {p for _, p in listeners()}
    out = []
    port = start
    while len(out) < count and port < 60000:
        if port not in taken and port not in avoid:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                    out.append(port)
                except OSError:
                    pass
        port += 1
    if len(out) < count:
        raise ClusterError(f"could not find {count} free TCP ports from {start}")
    return out
