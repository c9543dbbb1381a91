"""What OpenSSH's client reads, read the same way: ssh_config (the system file too, Include followed),
known_hosts (patterns, hashed names, [host]:port, @revoked) and ProxyJump specs. No connections here:
clusterdoc/remote.py connects with what these say."""

from __future__ import annotations

import base64
import functools
import glob
import hashlib
import hmac
import os
import re
import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko

from clusterdoc.errors import UsageError

USER_KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")

# --- known_hosts, as OpenSSH reads it ------------------------------------------------------------


@dataclass(frozen=True)
class KnownKey:
    marker: str | None  # None or "@revoked" (@cert-authority lines are skipped: no host certificates here)
    patterns: str
    keytype: str
    blob: bytes
    where: str  # file:line


def parse_known_hosts(text: str, where: str) -> list[KnownKey]:
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        marker = fields.pop(0) if fields[0].startswith("@") else None
        if marker not in (None, "@revoked") or len(fields) < 3:
            continue
        try:
            blob = base64.b64decode(fields[2], validate=True)
        except ValueError:
            continue
        out.append(KnownKey(marker, fields[0], fields[1], blob, f"{where}:{i}"))
    return out


@functools.lru_cache(maxsize=4096)
def _glob_rx(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.DOTALL)


def _glob(name: str, pattern: str) -> bool:
    if "*" not in pattern and "?" not in pattern:  # most entries name one host: no regex for them
        return name == pattern
    return _glob_rx(pattern).fullmatch(name) is not None


def host_matches(name: str, patterns: str) -> bool:
    """OpenSSH's match for one known_hosts host field: hashed `|1|salt|hash`, or comma-separated patterns
    with * and ?, where a matching `!pattern` excludes the host; case-insensitive."""
    name = name.lower()
    if patterns.startswith("|1|"):
        parts = patterns.split("|")
        try:
            salt, want = base64.b64decode(parts[2]), base64.b64decode(parts[3])
        except (IndexError, ValueError):
            return False
        return len(parts) == 4 and hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), want)
    positive = False
    for pat in patterns.lower().split(","):
        if pat.startswith("!"):
            if _glob(name, pat[1:]):
                return False
        elif _glob(name, pat):
            positive = True
    return positive


def judge_host_key(entries: list[KnownKey], keytype: str, blob: bytes) -> tuple[str, KnownKey | None]:
    """The verdict on a presented key, from the entries recorded for its host name (all files):
    "revoked", "ok" (matches one), "changed" (entries exist, none matches: another key of any type
    counts, stricter than ssh), or "new"."""
    for e in entries:
        if e.marker == "@revoked" and e.blob == blob:
            return "revoked", e
    plain = [e for e in entries if e.marker is None]
    for e in plain:
        if e.blob == blob:
            return "ok", e
    if plain:
        return "changed", next((e for e in plain if e.keytype == keytype), plain[0])
    return "new", None


def fingerprint(blob: bytes) -> str:
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


class KnownHosts:
    """Every known_hosts file of one run, read once; keys recorded with accept-new join them."""

    def __init__(self):
        self._files: dict[Path, list[KnownKey]] = {}
        self._lock = threading.Lock()

    def _load(self, path: Path) -> list[KnownKey]:
        if path not in self._files:
            try:
                self._files[path] = parse_known_hosts(path.read_text(errors="replace"), str(path))
            except OSError:  # missing or unreadable: ssh skips it too
                self._files[path] = []
        return self._files[path]

    def entries(self, files: list[Path], name: str) -> list[KnownKey]:
        with self._lock:
            return [e for f in files for e in self._load(f) if host_matches(name, e.patterns)]

    def record(self, path: Path, name: str, key: paramiko.PKey, hashed: bool) -> None:
        """Append `name key` to `path` (once, even when several threads met the same new host)."""
        blob = key.asbytes()
        with self._lock:
            known = self._load(path)
            if any(e.blob == blob and host_matches(name, e.patterns) for e in known):
                return
            pattern = paramiko.HostKeys.hash_host(name) if hashed else name
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(path, "a") as f:
                f.write(f"{pattern} {key.get_name()} {key.get_base64()}\n")
            known.append(KnownKey(None, pattern, key.get_name(), blob, f"{path}:new"))


# --- the OpenSSH client config -------------------------------------------------------------------


@dataclass
class Target:
    """How to reach one host, from the ssh config (and the hostfile / CLI)."""

    name: str  # as given (hostfile, ProxyJump)
    hostname: str
    port: int
    user: str
    identities: list[str]
    known_hosts: list[Path]  # user files (new keys go to the first), then global ones
    user_files: int  # how many of known_hosts are user files
    key_name: str  # the name its key is known under (HostKeyAlias, host or [host]:port)
    hash_new: bool
    proxy_command: str | None
    jumps: list[tuple]  # ProxyJump hops [(user, host, port)], first to last


def parse_jump(spec: str, host: str) -> list[tuple]:
    """ProxyJump `[user@]host[:port]` or `ssh://[user@]host[:port]`, comma-separated -> [(user, host, port)]."""
    hops = []
    for part in spec.split(","):
        part = part.strip()
        if part.startswith("ssh://"):
            part = part[len("ssh://") :].rstrip("/")
        user, _, rest = part.rpartition("@")
        m = re.fullmatch(r"\[([0-9A-Fa-f:.%\w-]+)\](?::(\d{1,5}))?|([A-Za-z0-9_][A-Za-z0-9._-]*)(?::(\d{1,5}))?", rest)
        if not m or (user and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", user)):
            raise UsageError(
                f"ProxyJump {spec!r} for {host}: cannot read the jump host {part!r}",
                hint="write it as [user@]host[:port], several separated by commas",
            )
        port = m.group(2) or m.group(4)
        hops.append((user or None, m.group(1) or m.group(3), int(port) if port else None))
    return hops


SYSTEM_CONFIG = Path("/etc/ssh/ssh_config")
_SETTING = re.compile(r"\s*(\w+)(?:\s*=\s*|\s+)(.+)")


def read_config(path: Path, system: bool = False, depth: int = 0) -> str:
    """A config file's text with its Include lines replaced by the files they name, as ssh reads them
    (globbed, relative to ~/.ssh, or /etc/ssh for the system file), each followed by `Match all` so the
    including file goes on as before. paramiko ignores Include, which would silently drop what the
    included files say (a ProxyJump...). An Include inside a Host/Match block is refused: ssh applies it
    only where the block matches, and inlining it would change its meaning."""
    if depth > 16:
        raise UsageError("Include nested more than 16 deep (a loop?)", where=str(path))
    try:
        lines = path.read_text().splitlines()
    except OSError as err:
        raise UsageError(f"cannot read ssh config: {err.strerror}", where=str(path))
    out, in_block = [], False
    for i, line in enumerate(lines, 1):
        m = _SETTING.match(line)
        key = m.group(1).lower() if m and not line.lstrip().startswith("#") else ""
        in_block = in_block or key in ("host", "match")
        if key != "include" or m is None:  # (m is set whenever key is)
            out.append(line)
            continue
        if in_block:
            raise UsageError(
                "Include inside a Host or Match block: clusterdoc cannot apply it the way ssh does",
                where=f"{path}:{i}",
                hint="move the Include before the first Host/Match line, or give --ssh-config a file without it",
            )
        base = SYSTEM_CONFIG.parent if system else Path.home() / ".ssh"
        for word in shlex.split(m.group(2)):
            pattern = os.path.expanduser(word)
            pattern = pattern if os.path.isabs(pattern) else str(base / pattern)
            for name in sorted(glob.glob(pattern)):
                out += [read_config(Path(name), system, depth + 1), "Match all"]
    return "\n".join(out) + "\n"


class _SSHConfig(paramiko.SSHConfig):
    """paramiko's reader, with ProxyCommand's %-tokens left for `proxy_command_argv` (paramiko would expand
    them with the config's user for %r, not --user's, and knows no %%)."""

    TOKENS_BY_CONFIG_KEY = {**paramiko.SSHConfig.TOKENS_BY_CONFIG_KEY, "proxycommand": []}


PROXY_TOKENS = ("%%", "%h", "%n", "%p", "%r")  # what ssh_config(5) allows in ProxyCommand


def proxy_command_argv(command: str, tokens: dict[str, str], host: str) -> list[str]:
    """ProxyCommand run as ssh runs it: %-tokens expanded, then `$SHELL -c "exec COMMAND"`, so a redirection
    (`nc %h %p 2>/dev/null`), a pipe or quotes mean what they mean to ssh. Each value is shell-quoted, which
    leaves a plain host name, port or user as ssh writes it and keeps shell syntax out of the command."""

    def expand(m: re.Match) -> str:
        token = m.group(0)
        if token == "%%":
            return "%"
        if token not in PROXY_TOKENS:
            raise UsageError(
                f"ProxyCommand for {host}: unknown token {token}",
                hint=f"ssh allows {', '.join(PROXY_TOKENS)} in ProxyCommand (write %% for a literal %)",
            )
        return shlex.quote(tokens[token])

    shell = os.environ.get("SHELL") or "/bin/sh"  # as ssh (sshconnect.c): the user's shell, else /bin/sh
    return [shell, "-c", "exec " + re.sub(r"%.?", expand, command)]


def load_config(path: Path | None) -> tuple[paramiko.SSHConfig, str]:
    """(config, where) as ssh reads it: `path` alone when given (ssh -F); else ~/.ssh/config, then
    /etc/ssh/ssh_config (first value wins, so the user's file comes first)."""
    if path is not None:
        texts, where = [read_config(Path(path))], str(path)
    else:
        user = Path.home() / ".ssh" / "config"
        texts = [read_config(user)] if user.is_file() else []
        if SYSTEM_CONFIG.is_file():
            texts += ["Match all\n" + read_config(SYSTEM_CONFIG, system=True)]
        where = " + ".join(str(p) for p in (user, SYSTEM_CONFIG) if p.is_file()) or "ssh config"
    try:
        return _SSHConfig.from_text("".join(texts)), where
    except Exception as err:  # paramiko raises several kinds for a malformed file
        raise UsageError(f"cannot read ssh config: {err}", where=where)
