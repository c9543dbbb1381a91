"""The job's secret, and the sealing of every value clusterdoc puts in the job's store.

The store (torch's TCPStore) answers anyone who reaches its port, so nothing in it is trusted as such. Each
value is sealed with AES-256-GCM under a key derived (HMAC-SHA256) from a per-job secret, with the store key's
full name as associated data: a value can be neither read, forged, altered nor moved to another key without
the secret. GCM's tag is the MAC (checked in constant time by OpenSSL).

Freshness: what is sealed is [sequence, value], the sequence the writer's clock in nanoseconds, kept increasing
by each Seal (and above the value it replaces, in a compare-and-set: channel.update). A genuine value put back
later (a heartbeat from the job's start, replayed in a loop) opens, but carries an older sequence than one the
reader has already seen: the channel keeps the newest and counts the replay (channel.py).

The secret never travels through the store. `clusterdoc submit` writes a fresh one for each attempt into the
private job folder (0600 in 0700, `secret`); each rank's `clusterdoc.run --log-dir` reads it from there into
its own environment (CLUSTERDOC_JOB_SECRET), never onto a command line. Ranks started without clusterdoc
submit (torchrun, srun, mpirun + shim.init()) derive one per job from the user's own secret file and check they
agree (shim/secret.py), unless CLUSTERDOC_JOB_SECRET is set to the same value in every rank.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from pathlib import Path

from clusterdoc import private
from clusterdoc.hang.errors import HangError

ENV = "CLUSTERDOC_JOB_SECRET"
FILE = "secret"  # in the job folder
MAGIC = b"cd2"  # format version: nonce (12 bytes) and the GCM ciphertext+tag of JSON [sequence, value] follow
MIN_SECRET = 16  # characters: a user's own CLUSTERDOC_JOB_SECRET shorter than this is refused


class Rejected(HangError, ValueError):
    """A value that is not sealed under this job's secret for this key (forged, altered, moved, foreign)."""


class Seal:
    def __init__(self, secret: str):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        key = hmac.new(secret.encode(), b"clusterdoc job store v1", hashlib.sha256).digest()
        self._aead = AESGCM(key)
        self._key = key
        self._last = 0  # the last sequence this writer sealed

    def next_sequence(self, after: int = 0) -> int:
        """This writer's clock (ns), above anything it sealed before and above `after`."""
        self._last = max(time.time_ns(), self._last + 1, after + 1)
        return self._last

    def seal(self, name: str, value, sequence: int | None = None) -> bytes:
        nonce = os.urandom(12)
        seq = self.next_sequence() if sequence is None else sequence
        return MAGIC + nonce + self._aead.encrypt(nonce, json.dumps([seq, value]).encode(), name.encode())

    def open_fresh(self, name: str, blob: bytes) -> tuple[int, object]:
        """(sequence, value) sealed for `name`; Rejected for anything else."""
        from cryptography.exceptions import InvalidTag

        if len(blob) < len(MAGIC) + 12 + 16 or not blob.startswith(MAGIC):
            raise Rejected(name)
        nonce, body = blob[len(MAGIC) : len(MAGIC) + 12], blob[len(MAGIC) + 12 :]
        try:
            doc = json.loads(self._aead.decrypt(nonce, body, name.encode()))
        except (InvalidTag, ValueError, RecursionError):
            raise Rejected(name) from None
        ok = isinstance(doc, list) and len(doc) == 2 and type(doc[0]) is int and doc[0] >= 0
        if not ok:
            raise Rejected(name)
        return doc[0], doc[1]

    def open(self, name: str, blob: bytes):
        """The value sealed for `name`; Rejected for anything else."""
        return self.open_fresh(name, blob)[1]

    def token(self, *parts) -> bytes:
        """A value only holders of the secret can compute (debug mode's peer handshake), 16 bytes."""
        return hmac.new(self._key, "/".join(map(str, parts)).encode(), hashlib.sha256).digest()[:16]


def new_secret() -> str:
    return secrets.token_hex(32)


def write_secret(folder: Path) -> None:
    """A fresh secret for the job's next attempt (values sealed for an earlier one no longer open)."""
    private.write(Path(folder) / FILE, new_secret() + "\n")


def read_secret(folder: Path) -> str | None:
    try:
        text = private.read(Path(folder) / FILE, limit=4096).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) >= MIN_SECRET else None


def from_env(environ=os.environ) -> Seal | None:
    """This rank's seal, or None when no usable secret was given (the side channels stay off)."""
    secret = environ.get(ENV, "")
    if len(secret) < MIN_SECRET:
        return None
    try:
        return Seal(secret)
    except ImportError:  # no `cryptography` (it comes with paramiko, a clusterdoc dependency)
        return None
