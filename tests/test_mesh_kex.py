"""The mesh's node-to-node logins offer cheap key exchanges first, and fall back to the node's own ssh defaults
when the client or the server refuses them: the answer must be the one MPI's ssh would get.

A real sshd on loopback; `ssh` on PATH is a wrapper around the real client that records each call."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from clusterdoc import probe

pytestmark = pytest.mark.skipif(
    not Path("/usr/sbin/sshd").exists() or not shutil.which("ssh-keygen"), reason="needs OpenSSH's sshd"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sshd(tmp_path):
    """start(kex=None) -> (port, log): a real sshd on 127.0.0.1 accepting our key; kex: its only KexAlgorithms."""
    procs = []
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "host")], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "id")], check=True)

    def start(kex=None):
        port = _free_port()
        log = tmp_path / f"sshd-{port}.log"
        lines = [f"ListenAddress 127.0.0.1:{port}", f"HostKey {tmp_path / 'host'}",
                 f"AuthorizedKeysFile {tmp_path / 'id.pub'}", "PasswordAuthentication no",
                 "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PermitRootLogin prohibit-password",
                 f"PidFile {tmp_path / f'sshd-{port}.pid'}"]
        if kex:
            lines.append(f"KexAlgorithms {kex}")
        cfg = tmp_path / f"sshd-{port}.conf"
        cfg.write_text("\n".join(lines) + "\n")
        procs.append(subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(cfg)], stderr=log.open("w")))
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        host_pub = (tmp_path / "host.pub").read_text().split()
        (tmp_path / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
        return port, log

    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=10)


def _ssh_wrapper(tmp_path: Path, port: int, old_client: bool) -> Path:
    """bin/ssh: the real client with this test's identity and known_hosts; records its arguments. old_client:
    refuses -o KexAlgorithms as a client older than the names would (exit 255, as ssh does)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    refuse = ('case "$*" in *KexAlgorithms=*) echo "command-line line 0: Bad SSH2 KexAlgorithms" >&2; exit 255;; '
              "esac\n") if old_client else ""
    w = bin_dir / "ssh"
    w.write_text("#!/bin/sh\n"
                 f'echo "$*" >> {tmp_path / "calls"}\n' + refuse +
                 f"exec /usr/bin/ssh -F /dev/null -p {port} -i {tmp_path / 'id'} -o IdentitiesOnly=yes "
                 f"-o UserKnownHostsFile={tmp_path / 'known_hosts'} -o StrictHostKeyChecking=yes "
                 '-o GlobalKnownHostsFile=/dev/null "$@"\n')
    w.chmod(w.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def _mesh(tmp_path, monkeypatch, port, old_client=False):
    monkeypatch.setenv("PATH", f"{_ssh_wrapper(tmp_path, port, old_client)}{os.pathsep}{os.environ['PATH']}")
    result = probe.probe_mesh(["127.0.0.1"], timeout=8)["127.0.0.1"]
    calls = (tmp_path / "calls").read_text().splitlines()
    return result, calls


def test_a_default_server_is_reached_with_the_cheap_key_exchange_in_one_login(sshd, tmp_path, monkeypatch):
    port, log = sshd()
    result, calls = _mesh(tmp_path, monkeypatch, port)
    assert result == {"ok": True, "message": "ok"}
    assert len(calls) == 1 and "KexAlgorithms=curve25519-sha256," in calls[0]


def test_a_server_with_only_post_quantum_kex_is_retried_with_the_nodes_defaults(sshd, tmp_path, monkeypatch):
    port, log = sshd(kex="sntrup761x25519-sha512@openssh.com")
    result, calls = _mesh(tmp_path, monkeypatch, port)
    assert result == {"ok": True, "message": "ok"}, result
    assert len(calls) == 2 and "KexAlgorithms" in calls[0] and "KexAlgorithms" not in calls[1]
    assert "no matching key exchange method" in log.read_text()  # the first login was really refused


def test_a_client_that_rejects_the_option_is_retried_without_it(sshd, tmp_path, monkeypatch):
    port, _ = sshd()
    result, calls = _mesh(tmp_path, monkeypatch, port, old_client=True)
    assert result == {"ok": True, "message": "ok"}
    assert len(calls) == 2 and "KexAlgorithms" not in calls[1]


def test_a_login_that_fails_for_another_reason_is_not_retried(sshd, tmp_path, monkeypatch):
    port, _ = sshd()
    (tmp_path / "id.pub").write_text("")  # the server accepts no key: a real trust problem
    result, calls = _mesh(tmp_path, monkeypatch, port)
    assert result["ok"] is False and "Permission denied" in result["message"]
    assert len(calls) == 1
