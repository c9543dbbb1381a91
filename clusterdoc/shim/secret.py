"""The job's secret when no launcher of ours gave one: from the user's own secret file, agreed by every rank.

The hang watch, debug mode's side channel and the OOM meeting seal what they put in the job's store under a
secret every rank holds (hang/seal.py). `clusterdoc submit` hands each attempt a fresh one. A job started by
torchrun, `accelerate launch`, srun, mpirun or deepspeed gets it here, with no setup:

  - each user has one secret, `~/.config/clusterdoc/job-secret` (64 hex digits, made on first use: the folder
    0700, the file 0600 and created whole, by link(), so ranks starting at once all read the same one). It is
    opened without following links and checked by its descriptor (a regular file, owned by this user, no
    access for group or others); a home shared between the nodes (the usual NFS home) shares it.
  - per job, rank 0 puts a fresh random nonce on the job's store; every rank derives the job's secret as
    HMAC(user secret, nonce), so values sealed in an earlier job never open in this one. Rank 0 adds a proof
    (HMAC of the derived secret), each rank compares it with its own and the ranks count disagreements on the
    store: only when every rank agrees does any rank export CLUSTERDOC_JOB_SECRET.
  - otherwise (a home not shared between the nodes, an unreadable file, a stranger meddling with the store)
    nothing is sealed, so the side channels stay off, and rank 0 says once, in one line, what to do.

Neither the user secret nor the job's appears on the store, a command line or the output.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import socket
import stat
import sys
from pathlib import Path

from clusterdoc.hang import seal

RELATIVE = Path(".config") / "clusterdoc" / "job-secret"
KEY = "clusterdoc/secret/"  # on the job's store: nonce, proof, bad, arrived, done, why
_said: list = []  # the one line rank 0 said, if any (the watchdog then says nothing more)


def said() -> bool:
    return bool(_said)


def user_file(environ=os.environ) -> Path:
    return Path(environ.get("HOME") or os.path.expanduser("~")) / RELATIVE


def _open_dir(path: Path) -> int:
    """The folder, made 0700 if missing; refused when it is a link, not ours, or writable by others."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        raise OSError(errno.EPERM, "not owned by you, or writable by others", str(path))
    return fd


def _read(dfd: int, name: str, path: Path) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise OSError(errno.EPERM, "not a regular file of yours with mode 0600", str(path))
        text = os.read(fd, 4096).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    if len(text) < seal.MIN_SECRET:
        raise OSError(errno.EINVAL, f"holds fewer than {seal.MIN_SECRET} characters", str(path))
    return text


def user_secret(path: Path) -> str:
    """The user's secret from `path`, made (whole, 0600) when there is none yet."""
    dfd = _open_dir(path.parent)
    try:
        try:
            return _read(dfd, path.name, path)
        except FileNotFoundError:
            pass
        tmp = f".{path.name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (seal.new_secret() + "\n").encode())
            os.fsync(fd)
            os.close(fd)
            try:
                os.link(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)  # fails if another rank made it first
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp, dir_fd=dfd)
        return _read(dfd, path.name, path)
    finally:
        os.close(dfd)


def derive(user: str, nonce: str) -> str:
    return hmac.new(user.encode(), b"clusterdoc job secret v1/" + nonce.encode(), hashlib.sha256).hexdigest()


def _proof(job: str) -> bytes:
    return hmac.new(job.encode(), b"clusterdoc job secret proof", hashlib.sha256).hexdigest().encode()


def establish(store, rank: int, world: int, environ=os.environ) -> bool:
    """Give this rank the job's secret (environ[CLUSTERDOC_JOB_SECRET]) unless it has one: True when it has.
    Every rank of the group calls it at once (shim.init(), after the process group is up), on the same store."""
    if environ.get(seal.ENV) or world < 2:
        # made here, on the main thread: the watchdog's thread must not be the first to import `cryptography`
        # while this thread imports it too (a half-initialised module is an ImportError there)
        return seal.from_env(environ) is not None
    path = user_file(environ)
    why = ""
    try:
        user = user_secret(path)
    except OSError as exc:
        user, why = "", f"rank {rank} on {socket.gethostname()} cannot use {path} ({exc.strerror or exc})"
    job = ""
    if rank == 0:
        nonce = secrets.token_hex(16)
        got = store.compare_set(KEY + "nonce", "", nonce)
        if bytes(got) != nonce.encode():
            user, why = "", why or "the job's store already held a secret nonce (someone else wrote there)"
        if user:
            job = derive(user, nonce)
            store.set(KEY + "proof", _proof(job))
        else:
            store.set(KEY + "proof", b"-")
    else:
        nonce = bytes(store.get(KEY + "nonce")).decode("ascii", "replace")
        proof = bytes(store.get(KEY + "proof"))
        if user:
            job = derive(user, nonce)
            if not hmac.compare_digest(proof, _proof(job)):
                job = ""
                if proof != b"-":  # rank 0 could not read its own file: it says why itself
                    why = (
                        f"rank {rank} on {socket.gethostname()} has another {path} than rank 0 "
                        "(is the home folder shared between the nodes?)"
                    )
    if why:
        store.compare_set(KEY + "why", "", why[:400])
    store.add(KEY + "bad", 0 if job else 1)
    if store.add(KEY + "arrived", 1) == world:
        store.set(KEY + "done", b"1")
    store.wait([KEY + "done"])
    if store.add(KEY + "bad", 0) == 0 and job:
        environ[seal.ENV] = job
        return seal.from_env(environ) is not None  # imports `cryptography` on this thread (see above)
    if rank == 0:
        # compare_set with an expected value never there answers the key's value, or that value when absent
        reason = bytes(store.compare_set(KEY + "why", "\0", "\0")).decode("utf-8", "replace").strip("\0")
        say(rank, reason or "a rank disagreed")
    return False


def say(rank: int, reason: str) -> None:
    """Rank 0 says once, in one line, that the side channels are off and what to do."""
    from clusterdoc.untrusted import printable

    if rank != 0 or _said:
        return
    line = (
        f"clusterdoc: hang watch off: no job secret every rank agrees on ({printable(reason, 400)}); "
        f"export CLUSTERDOC_JOB_SECRET=<the same random value, {seal.MIN_SECRET}+ characters> in every rank, "
        "or start the job with clusterdoc submit"
    )
    _said.append(line)
    print(line, file=sys.stderr, flush=True)
