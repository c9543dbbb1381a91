"""The job's secret when no launcher of ours gave one: from the user's own secret file, agreed by every rank.

The hang watch, debug mode's side channel and the OOM meeting seal what they put in the job's store under a
secret every rank holds (hang/seal.py). `clusterdoc submit` hands each attempt a fresh one. A job started by
torchrun, `accelerate launch`, srun, mpirun or deepspeed gets it here, with no setup:

  - each user has one secret, `~/.config/clusterdoc/job-secret` (64 hex digits, made on first use: the folder
    0700, the file 0600 and created whole, by link(), so ranks starting at once all read the same one). It is
    opened without following links and checked by its descriptor (a regular file, owned by this user, no
    access for group or others); a home shared between the nodes (the usual NFS home) shares it.
  - per job, every rank draws 32 random bytes and the ranks exchange them with one all_gather on the default
    process group (torch's own connections between the ranks, never the store, which answers anyone); each
    rank derives the job's secret as HMAC(user secret, all the parts), its own part its own, so nothing sealed
    in an earlier job opens in this one and nothing another user put on the store takes part. A second
    all_gather carries each rank's proof (HMAC of the derived secret and its rank, which reveals neither
    secret): every rank sees the same proofs and so decides alike; only when all prove the same secret does any
    rank export CLUSTERDOC_JOB_SECRET.
  - otherwise (a home not shared between the nodes, an unreadable file) nothing is sealed, so the side channels
    stay off, and rank 0 says once, in one line, what to do.

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
NONCE, PROOF, HOST, WHY = 32, 32, 64, 320  # bytes: each rank's contribution; its proof, host and reason
RECORD = 1 + PROOF + HOST + WHY
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


def derive(user: str, contributions: bytes) -> str:
    """The job's secret: the user's, keyed to every rank's fresh random contribution to this job."""
    digest = hashlib.sha256(contributions).hexdigest()
    return hmac.new(user.encode(), b"clusterdoc job secret v2/" + digest.encode(), hashlib.sha256).hexdigest()


def _proof(job: str, rank: int) -> bytes:
    """What rank `rank` shows the others: 32 bytes only a holder of `job` can compute, reveals nothing of it."""
    return hmac.new(job.encode(), f"clusterdoc job secret proof v2/{rank}".encode(), hashlib.sha256).digest()


def _field(text: str, size: int) -> bytes:
    return text.encode("utf-8", "replace")[:size].ljust(size, b"\0")


def _text(raw: bytes) -> str:
    return raw.rstrip(b"\0").decode("utf-8", "replace")


def pack(ok: bool, proof: bytes, host: str, why: str) -> bytes:
    """A rank's second-round record: ok, its proof, its host name and why it has no secret (fixed size)."""
    return bytes([1 if ok else 0]) + proof[:PROOF].ljust(PROOF, b"\0") + _field(host, HOST) + _field(why, WHY)


def decide(job: str, records: list[bytes], path: Path) -> tuple[bool, str]:
    """(agreed, the first reason when not) from every rank's record, the same at every rank (all saw the same
    records): agreed when every rank had its secret and proved the job's secret this rank derived."""
    for r, rec in enumerate(records):
        if len(rec) != RECORD or rec[0] != 1:
            why = _text(rec[1 + PROOF + HOST :]) if len(rec) == RECORD else ""
            return False, why or f"rank {r} has no job secret"
    for r, rec in enumerate(records):
        if not job or not hmac.compare_digest(rec[1 : 1 + PROOF], _proof(job, r)):
            host = _text(rec[1 + PROOF : 1 + PROOF + HOST])
            shared = "(is the home folder shared between the nodes?)"
            return False, f"rank {r} on {host} has another {path} than rank 0 {shared}"
    return True, ""


def all_gather_bytes(data: bytes) -> list[bytes]:
    """Every rank's `data` (the same size at every rank) through one all_gather on the default group (torch's
    own channel between the ranks, not the store: nothing another user writes on the store enters here)."""
    import torch
    import torch.distributed as dist

    from . import track

    c10d = dist.distributed_c10d
    finder = getattr(c10d, "_get_object_coll_device", None) or getattr(c10d, "_get_pg_default_device", None)
    device = torch.device(finder(None)) if finder is not None else torch.device("cpu")
    world = dist.get_world_size()
    mine = torch.tensor(list(data), dtype=torch.uint8, device=device)
    out = [torch.zeros_like(mine) for _ in range(world)]
    gather = track.ORIGINALS.get("all_gather") or dist.all_gather
    gather(out, mine)
    return [bytes(t.cpu().tolist()) for t in out]


def establish(rank: int, world: int, environ=os.environ, gather=all_gather_bytes) -> bool:
    """Give this rank the job's secret (environ[CLUSTERDOC_JOB_SECRET]) unless it has one: True when it has.
    Every rank of the default group calls it at once (shim.init(), after the process group is up): two
    all_gathers, whatever happens here, so no rank is left waiting in one."""
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
    mine = secrets.token_bytes(NONCE)  # this rank's fresh part: no job secret of an earlier job can match it
    parts = gather(mine)
    if len(parts) != world or any(len(p) != NONCE for p in parts):
        raise ValueError("the ranks' contributions came back malformed")
    parts[rank] = mine
    job = derive(user, b"".join(parts)) if user else ""
    records = gather(pack(bool(user), _proof(job, rank) if job else b"", socket.gethostname(), why))
    agreed, reason = decide(job, records, path)
    if agreed:
        environ[seal.ENV] = job
        return seal.from_env(environ) is not None  # imports `cryptography` on this thread (see above)
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
