"""SSH between nodes: the mesh logins tried, and what decides ssh trust (keys, known_hosts, config).

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import os
import re
import subprocess
import threading
import time

from clusterdoc.probe.base import _parallel, run, which
from clusterdoc.probe.network import resolve

# Key exchanges offered first by the mesh's logins: the default's sntrup761x25519 key generation costs ~0.13 s
# of client CPU per login in OpenSSH 8.5-9.8's portable code (curve25519: ~1 ms); three logins per node make it
# most of a node's check. These logins carry no data (`true`), so post-quantum key exchange buys nothing here.
# Every name exists since OpenSSH 7.3; a client that rejects the option, or a server that accepts none of
# these, gets the login retried with the node's own defaults, so the answer is the one MPI's ssh would get.
MESH_KEX = (
    "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
    "diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,"
    "diffie-hellman-group14-sha256"
)
KEX_REFUSED = ("KexAlgorithms", "no matching key exchange", "Unable to negotiate")


def mesh_argv(ssh, peer, limit, fast_kex=True):
    argv = [ssh, "-o", "BatchMode=yes", "-o", "ConnectTimeout=%d" % max(1, int(limit))]
    argv += ["-o", "NumberOfPasswordPrompts=0"]
    if fast_kex:
        argv += ["-o", "KexAlgorithms=" + MESH_KEX]
    return argv + [peer, "true"]


def probe_mesh(peers, timeout, deadline=None):
    """From this node, `ssh -o BatchMode=yes PEER true` to each peer, 16 at a time, all before
    `deadline` (time.time() value): peers not reached by then are reported untested (ok: None)."""
    ssh = which("ssh")
    result = {}
    if not ssh:
        return {p: {"ok": False, "message": "no ssh client on this node"} for p in peers}
    deadline = deadline or time.time() + 4 * (timeout + 1)
    lock = threading.Lock()

    def login(peer, fast_kex):
        left = deadline - time.time()
        if left < 0.5:
            return {"ok": None, "message": "not tested: the probe's time limit was reached"}
        limit = min(timeout + 1, left)
        try:
            # the peer's login may print without end: only stderr is kept
            code, out, err = run(mesh_argv(ssh, peer, limit, fast_kex), limit, stdout=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {"ok": False, "message": "timed out after %gs" % round(limit, 1)}
        except OSError as exc:
            return {"ok": False, "message": str(exc)}
        if code == 255 and fast_kex and any(s in err for s in KEX_REFUSED):
            return login(peer, False)
        msg = "ok" if code == 0 else (err.strip().splitlines() or ["exit %d" % code])[-1][:200]
        return {"ok": code == 0, "message": msg}

    def one(peer):
        entry = login(peer, True)
        with lock:
            result[peer] = entry

    _parallel([(lambda p=p: one(p)) for p in peers], width=16)
    return result


# --- ssh trust: what decides whether ssh from here to a peer (and from a peer to here) works ----------

MAX_KEY_FILE = 4 << 20  # bytes read of one known_hosts / authorized_keys file
KEY_TYPE = re.compile(r"(ssh|ecdsa|sk)-[A-Za-z0-9@.-]+$")  # ssh-ed25519, ecdsa-sha2-nistp256, sk-...@openssh.com


def _key_fingerprint(b64):
    """SHA256:... of a base64 key blob, as `ssh-keygen -l` prints it."""
    import base64
    import hashlib

    try:
        blob = base64.b64decode(b64.encode(), validate=True)
    except Exception:
        return None
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read(MAX_KEY_FILE).decode("utf-8", "replace").splitlines()
    except (OSError, IOError):
        return []


def _keys_in(path):
    """Fingerprints of the keys in an authorized_keys / .pub file (options before the key type are skipped)."""
    out = []
    for line in _read_lines(path):
        fields = line.split()
        for i, f in enumerate(fields[:-1]):
            if KEY_TYPE.match(f):
                fp = _key_fingerprint(fields[i + 1])
                if fp:
                    out.append(fp)
                break
    return out


def _tokens(path, home, user, host=""):
    path = path.replace("%d", home).replace("%u", user).replace("%h", host or home).replace("%%", "%")
    return os.path.expanduser(path)


def _config_lines(path, depth=0):
    """(keyword, args) of an ssh/sshd config file, Include expanded (ssh's own rules, minus Match)."""
    import glob

    out = []
    for line in _read_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"[\s=]+", line, maxsplit=1)
        key, arg = parts[0].lower(), (parts[1] if len(parts) > 1 else "").strip()
        if key == "include" and depth < 8:
            for pattern in arg.split():
                if not os.path.isabs(os.path.expanduser(pattern)):
                    pattern = os.path.join(os.path.dirname(path), pattern)
                for inc in sorted(glob.glob(os.path.expanduser(pattern))):
                    out.extend(_config_lines(inc, depth + 1))
        else:
            out.append((key, arg))
    return out


_GLOB_RX = {}  # type: dict


def _glob(pattern, name):
    """ssh's patterns: only * and ? are wildcards ('[host]:port' is literal); case-insensitive."""
    if "*" not in pattern and "?" not in pattern:  # most patterns name one host: no regex (N peers x N lines)
        return pattern.lower() == name.lower()
    rx = _GLOB_RX.get(pattern)
    if rx is None:
        rx = _GLOB_RX[pattern] = re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "\\Z", re.I)
    return rx.match(name) is not None


def _host_matches(patterns, name):
    hit = False
    for p in patterns.split():
        neg = p.startswith("!")
        if _glob(p[1:] if neg else p, name):
            if neg:
                return False
            hit = True
    return hit


class ClientConfig(object):
    """An ssh client config's lines in blocks, indexed: a cluster's config often has a Host block per node,
    and every node asks about every peer, so blocks that name plain hosts are found by name."""

    def __init__(self, lines):
        self.has_match = any(key == "match" for key, _ in lines)
        self.blocks = [(None, [])]  # (Host patterns, lines); the first: before any Host line, always active
        for key, arg in lines:
            if key == "host":
                self.blocks.append((arg, []))
            else:
                self.blocks[-1][1].append((key, arg))
        self.by_name, self.other = {}, []
        for i, (patterns, _) in enumerate(self.blocks):
            if patterns is None:
                continue
            if any(c in patterns for c in "*?!"):
                self.other.append(i)
            else:
                for name in patterns.split():
                    self.by_name.setdefault(name.lower(), []).append(i)

    def lines_for(self, peer):
        """The lines that apply to `peer`, in file order (None: a Match block, then only `ssh -G` can tell)."""
        if self.has_match:
            return None
        hit = set(self.by_name.get(peer.lower(), ()))
        hit.update(i for i in self.other if _host_matches(self.blocks[i][0], peer))
        out = list(self.blocks[0][1])
        for i in sorted(hit):
            out.extend(self.blocks[i][1])
        return out


def ssh_client_settings(peer, lines, home, user):
    """The settings ssh would use for `peer` (lines: _config_lines' list or a ClientConfig): the first value
    of each keyword wins, identity files add up. None when the config has a Match block."""
    config = lines if isinstance(lines, ClientConfig) else ClientConfig(lines)
    mine = config.lines_for(peer)
    if mine is None:
        return None
    got = {"identityfile": []}
    for key, arg in mine:
        if key == "identityfile":
            got["identityfile"].append(arg)
        elif key not in got:
            got[key] = arg
    host = got.get("hostname", peer).replace("%h", peer)
    ids = got["identityfile"] or ["~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ed25519"]
    return {
        "hostname": host,
        "port": int(got.get("port", "22")) if got.get("port", "22").isdigit() else 22,
        "identities": [_tokens(i.strip('"'), home, user, host) for i in ids],
        "known_files": [
            _tokens(f.strip('"'), home, user, host)
            for f in (got.get("userknownhostsfile") or "~/.ssh/known_hosts ~/.ssh/known_hosts2").split()
        ]
        + [
            f for f in (got.get("globalknownhostsfile") or "/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2").split()
        ],
    }


def _known_entries(path):
    """[(host patterns, fingerprint)] of a known_hosts file; @revoked lines are left out (never a match)."""
    out = []
    for line in _read_lines(path):
        fields = line.split()
        if len(fields) < 3 or line.lstrip().startswith("#"):
            continue
        if fields[0].startswith("@"):
            if fields[0] != "@cert-authority" or len(fields) < 4:
                continue
            fields = fields[1:]
        fp = _key_fingerprint(fields[2])
        if fp:
            out.append((fields[0], fp))
    return out


def _known_match(patterns, names):
    import base64
    import hashlib
    import hmac

    if patterns.startswith("|1|"):
        try:
            salt, want = [base64.b64decode(x) for x in patterns[3:].split("|")]
        except Exception:
            return False
        return any(hmac.new(salt, n.encode(), hashlib.sha1).digest() == want for n in names)
    return any(_host_matches(patterns.replace(",", " "), n) for n in names)


class _KnownIndex(object):
    """One known_hosts file's entries: those naming plain hosts by name (most of a cluster's file), the
    rest (hashed, wildcards, negations) in file order, matched one by one."""

    def __init__(self, entries):
        self.by_name, self.other = {}, []
        for pats, fp in entries:
            names = pats.split(",")
            if pats.startswith("|") or any(c in pats for c in "*?!"):
                self.other.append((pats, fp))
            else:
                for n in names:
                    self.by_name.setdefault(n.lower(), set()).add(fp)

    def fingerprints(self, names):
        out = set()
        for n in names:
            out.update(self.by_name.get(n.lower(), ()))
        out.update(fp for pats, fp in self.other if _known_match(pats, names))
        return out


def probe_ssh_trust(peers, timeout):
    """For every peer: which host keys this node's ssh would accept for it; and this node's own side: the
    keys its ssh offers, the keys its sshd accepts for this user, its host keys. The head compares these
    across nodes to judge every pair without N x N logins (checks/ssh.py)."""
    import getpass

    home = os.path.expanduser("~")
    try:
        user = getpass.getuser()
    except Exception:
        user = str(os.getuid())
    lines = ClientConfig(_config_lines(os.path.join(home, ".ssh", "config")) + _config_lines("/etc/ssh/ssh_config"))
    known, identities, files_cache, idents_seen = {}, set(), {}, set()
    for peer in peers:
        cfg = ssh_client_settings(peer, lines, home, user)
        if cfg is None:
            known[peer] = None  # a Match block: not judged from facts
            continue
        for ident in cfg["identities"]:
            if ident not in idents_seen:
                idents_seen.add(ident)
                identities.update(_keys_in(ident + ".pub"))
        names = [cfg["hostname"], peer]
        try:  # as gethostbyname: the first IPv4 address
            names += [a for a in resolve(cfg["hostname"]) if ":" not in a][:1]
        except (OSError, UnicodeError):
            pass
        if cfg["port"] != 22:
            names = ["[%s]:%d" % (n, cfg["port"]) for n in names]
        fps = set()
        for path in cfg["known_files"]:
            if path not in files_cache:
                files_cache[path] = _KnownIndex(_known_entries(path))
            fps.update(files_cache[path].fingerprints(names))
        known[peer] = sorted(fps)
    sshd = _config_lines("/etc/ssh/sshd_config")
    first = {}
    for key, arg in sshd:
        if key == "match":
            break
        if key == "hostkey":
            first.setdefault("hostkey", []).append(arg)
        else:
            first.setdefault(key, arg)
    auth_files = (first.get("authorizedkeysfile") or ".ssh/authorized_keys .ssh/authorized_keys2").split()
    authorized = []
    for f in auth_files:
        path = _tokens(f, home, user, home)
        authorized += _keys_in(path if os.path.isabs(path) else os.path.join(home, path))
    host_keys = []
    for f in first.get("hostkey") or [
        "/etc/ssh/ssh_host_rsa_key",
        "/etc/ssh/ssh_host_ecdsa_key",
        "/etc/ssh/ssh_host_ed25519_key",
    ]:
        host_keys += _keys_in(f + ".pub")
    return {
        "user": user,
        "identities": sorted(identities),
        "authorized": sorted(set(authorized)),
        "host_keys": sorted(set(host_keys)),
        "known": known,
    }
