"""The side channel a stalled job still answers on: the job's own rendezvous store (TCPStore).

Rank 0 hosts it (torch.distributed's env:// rendezvous, or shim.init()), its server runs on its own C++
thread, and a rank blocked in a collective still has its watchdog thread: so every rank, the launcher and
`clusterdoc stacks` can meet there with no shared file system. Keys, under `clusterdoc/hang/`:

    hb/<rank>            the rank's latest heartbeat (its collectives, where its main thread is, its pace)
    ctl                  {gen, abort}, read by every watchdog on every tick: gen counts dump requests (each asks
                         every rank for its full state, stacks of all threads), abort stops every rank
    dump/<n>/<rank>      each rank's answer to dump request n
    stall                {n: 1, rank, gen}: claimed by the first rank whose collective waited --hang-timeout
    stall/info           {rank, gen}: who saw the stall first, and the dump request it made
    handled              claimed by whoever prints the report (the launcher; else the rank that saw it)
    hello/launcher       the launcher is a client (rank 0 then waits for its bye too)
    closing, bye/<who>   rank 0 is leaving (its store goes with it); each client says it let go (shutdown order)

A launcher that watches also leaves WATCHER_FILE in the job folder while it does: rank 0 then waits for its bye
even when no hello came yet (its first connect may be under way as rank 0 leaves; shim/watch.py).

Trust: anyone who reaches the port can read and write the store. Every value clusterdoc writes is sealed
(seal.py: encrypted and authenticated under the job's secret, bound to its key's name); a value that does not
open is ignored and counted in `rejected`, never acted on; a genuine value older than one this client has already
read for the key (its writer's sequence, seal.py) is a replay: the newer one is kept and the replay counted.
There are no store.add() counters: what was one is
a sealed value changed by compare-and-set (`update`) or claimed once (`claim`), readers keeping the highest
they saw. What a stranger can still do is deny service (delete or overwrite keys): then the hang report or
the OOM meeting is missing, and says so; it cannot stop, steer or read the job.

The OOM retry (shim/attempt.py, shim/settle.py) meets on the same store under `clusterdoc/oom/<n>/`, n the
job's attempt number: status/<rank>, end, wake/<rank>, log/<rank>.
"""

from __future__ import annotations

import datetime
import hashlib
import socket
import time
from collections.abc import Collection

from clusterdoc.hang import seal as seal_mod
from clusterdoc.hang.errors import HangError

PREFIX = "clusterdoc/hang/"
OOM_PREFIX = "clusterdoc/oom/"
_ABSENT = b"\x00clusterdoc: absent"  # compare_set's answer for a key that is not there (see peek)
MAX_REJECTED = 10000  # distinct rejected values remembered (so one forged value read each tick counts once)
MAX_KEYS = 100000  # keys whose newest value a client remembers (a job uses a few per rank)


class NoSecret(HangError, RuntimeError):
    """No job secret in this process: the side channel stays off (seal.py)."""


def rejected_note(count: int) -> str:
    """What the launcher and each rank say at the end when values on the store failed authentication."""
    return (
        f"ignored {count} value(s) on the job's store that failed authentication or were replayed (older than one "
        "already seen): someone else can reach its port and wrote there"
    )


class Channel:
    """A client of the job's store under one prefix, every value sealed. Never waits on a missing key."""

    def __init__(self, store, sealer: seal_mod.Seal, prefix: str):
        self.store, self.sealer, self.prefix = store, sealer, prefix
        self._rejected: set[bytes] = set()
        self._replayed: set[bytes] = set()
        self._newest: dict[str, tuple[int, object]] = {}  # key -> (sequence, value): the newest genuine one read
        self._ctl = (0, False)  # the highest dump request and the abort flag seen so far

    @property
    def rejected(self) -> int:
        """How many distinct values were ignored: forged, altered, foreign, or replayed (older than one seen)."""
        return len(self._rejected) + len(self._replayed)

    @property
    def replayed(self) -> int:
        return len(self._replayed)

    def seal(self, key: str, value, sequence: int | None = None) -> bytes:
        return self.sealer.seal(self.prefix + key, value, sequence)

    def open(self, key: str, blob: bytes | None):
        """The value in `blob` if it opens for `key`, else None (counted when it was there but forged); the newest
        value seen for the key when `blob` is an older genuine one (a replay, counted)."""
        return self._open(key, blob)[1]

    def _open(self, key: str, blob: bytes | None) -> tuple[int, object]:
        if blob is None or blob == _ABSENT:
            return 0, None
        try:
            seq, value = self.sealer.open_fresh(self.prefix + key, bytes(blob))
        except seal_mod.Rejected:
            self._count(self._rejected, key, blob)
            return 0, None
        newest = self._newest.get(key)
        if newest is not None and seq < newest[0]:
            self._count(self._replayed, key, blob)
            return newest
        if newest is not None or len(self._newest) < MAX_KEYS:
            self._newest[key] = (seq, value)
        return seq, value

    @staticmethod
    def _count(seen: set, key: str, blob: bytes) -> None:
        if len(seen) < MAX_REJECTED:
            seen.add(hashlib.sha256(key.encode() + b"\0" + bytes(blob)).digest())

    def set(self, key: str, value) -> None:
        self.store.set(key, self.seal(key, value))

    def raw(self, key: str) -> bytes | None:
        """The key's bytes in one round trip, None when absent (compare_set with an expected value that is never
        there answers the current value and changes nothing; torch's get() would wait for a missing key)."""
        blob = self.store.compare_set(key, _ABSENT, _ABSENT)
        return None if blob == _ABSENT else blob

    def get(self, key: str):
        return self.open(key, self.raw(key))

    def update(self, key: str, change, tries: int = 100):
        """Atomically replace the key's value v by change(v) (v None when absent or forged); the new value."""
        cur = self.raw(key)
        for _ in range(tries):
            seq, old = self._open(key, cur)
            new = change(old)
            blob = self.seal(key, new, self.sealer.next_sequence(after=seq))  # newer than what it replaces
            expected = b"" if cur is None else cur
            got = self.store.compare_set(key, expected, blob)
            if got == blob:
                return new
            cur = None if got == expected else got  # `expected` back: the key is gone (deleted meanwhile)
        raise RuntimeError(f"the job's store key {self.prefix}{key} kept changing")

    def claim(self, key: str, value):
        """Set the key to `value` unless it already holds a genuine value; return the value that holds it.
        A forged value there does not hold a claim."""
        return self.update(key, lambda old: value if old is None else old)

    def valid(self, keys: list[str]) -> dict:
        """The keys present with a genuine value -> their values."""
        values = {key: self.get(key) for key in keys}
        return {key: value for key, value in values.items() if value is not None}

    def wait(self, keys: list[str], deadline: float, poll: float = 0.02) -> dict:
        """Wait until every key holds a genuine value; the values, or TimeoutError listing what is missing."""
        found: dict = {}
        while True:
            left = [k for k in keys if k not in found]
            try:
                self.store.wait(left, datetime.timedelta(seconds=max(0.01, deadline - time.monotonic())))
            except Exception:  # DistStoreError on timeout: say which
                pass
            found.update(self.valid(left))
            if len(found) == len(keys):
                return found
            if time.monotonic() >= deadline:
                raise TimeoutError([k for k in keys if k not in found])
            time.sleep(poll)  # a forged value sits there: look again until the genuine one replaces it


def connect(addr: str, port: int, timeout: float = 5.0, prefix: str = PREFIX, secret: str | None = None) -> Channel:
    """A client of the job's store, with our prefix and the job's seal (`secret`, else CLUSTERDOC_JOB_SECRET).
    Raises NoSecret without one, and on no answer within `timeout`."""
    import torch.distributed as dist

    sealer = seal_mod.Seal(secret) if secret else seal_mod.from_env()
    if sealer is None:
        raise NoSecret(f"no job secret ({seal_mod.ENV} unset or shorter than {seal_mod.MIN_SECRET} characters)")
    # a plain connect first: torch's client logs a C++ backtrace for every refused attempt
    with socket.create_connection((addr, int(port)), timeout=timeout):
        pass
    store = dist.TCPStore(
        addr, int(port), is_master=False, wait_for_workers=False, timeout=datetime.timedelta(seconds=timeout)
    )
    return Channel(dist.PrefixStore(prefix, store), sealer, prefix)


def put(store: Channel, key: str, value) -> None:
    store.set(key, value)


def get(store: Channel, key: str):
    """The genuine value, or None when the key is not there or its value is forged (never waits)."""
    return store.get(key)


def counter(store: Channel, key: str) -> int:
    """A claimed key's count (`stall`): 0 when absent or forged."""
    value = store.get(key)
    n = value.get("n") if isinstance(value, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


def _ctl(value) -> tuple[int, bool]:
    if isinstance(value, dict) and isinstance(value.get("gen"), int) and not isinstance(value.get("gen"), bool):
        return max(0, value["gen"]), value.get("abort") is True
    return 0, False


def control(store: Channel) -> tuple[int, bool]:
    """(the latest dump request, abort asked), never lower than what this client saw before (a stranger who
    puts back an older genuine value changes nothing)."""
    return _seen(store, store.get("ctl"))


def _seen(store: Channel, value) -> tuple[int, bool]:
    gen, abort = _ctl(value)
    seen = store._ctl
    store._ctl = (max(gen, seen[0]), abort or seen[1])
    return store._ctl


def request_dump(store: Channel) -> int:
    seen = store._ctl
    new = store.update("ctl", lambda old: {"gen": max(_ctl(old)[0], seen[0]) + 1, "abort": _ctl(old)[1] or seen[1]})
    return _seen(store, new)[0]


def request_abort(store: Channel) -> None:
    seen = store._ctl
    _seen(store, store.update("ctl", lambda old: {"gen": max(_ctl(old)[0], seen[0]), "abort": True}))


def claim_stall(store: Channel, rank: int, gen_of) -> dict:
    """The stall claim that holds: ours ({n: 1, rank, gen}, gen_of() asked for the dump) if we were first."""
    mine = {"n": 1, "rank": rank, "gen": -1}
    held = store.claim("stall", mine)
    if held is mine or held == mine:
        held = {"n": 1, "rank": rank, "gen": gen_of()}
        store.set("stall", held)
        store.set("stall/info", {"rank": rank, "gen": held["gen"]})
    return held


def _dump(value, rank: int) -> dict | None:
    """A rank's state as the report reads it, or None (a genuine value of the wrong form is a finding there)."""
    return value if isinstance(value, dict) and value.get("rank") == rank else None


def collect(
    store: Channel, world: int, gen: int, wait: float, late: float = 0.0, patient: Collection[int] = ()
) -> dict[int, dict]:
    """Each rank's answer to dump request `gen`, waiting up to `wait` seconds for the slow ones, then up to
    `late` seconds more while a rank in `patient` has not answered: one whose heartbeat was seen lately. A loaded
    node starves a rank's watchdog thread for seconds (its heartbeat is late too): late is not silent. Returns
    as soon as every rank answered."""
    keys = {r: f"dump/{gen}/{r}" for r in range(world)}
    got: dict[int, dict] = {}
    start = time.monotonic()
    while True:
        for r, key in keys.items():
            if r not in got:
                value = _dump(store.get(key), r)
                if value is not None:
                    got[r] = value
        spent = time.monotonic() - start
        if len(got) == world or spent >= wait + late or (spent >= wait and not any(r not in got for r in patient)):
            return got
        time.sleep(0.05)


def heartbeats(store: Channel, world: int) -> dict[int, dict]:
    found = {}
    for r in range(world):
        value = _dump(get(store, f"hb/{r}"), r)
        if value is not None:
            found[r] = value
    return found


# --- shutdown in order: rank 0's store outlives every client that still talks to it ----------------

WATCHER_FILE = "watcher"  # in the job folder while a launcher watches the store (rank 0 waits for its bye)


def closing(store: Channel) -> bool:
    return store.get("closing") is True


def bye(store: Channel, who: str) -> None:
    store.set(f"bye/{who}", True)


def close(store: Channel, clients: list[str], wait: float) -> None:
    """Rank 0, before its store goes: tell every client, and wait (up to `wait` s) until each let go."""
    store.set("closing", True)
    keys = [f"bye/{c}" for c in clients]
    try:
        store.wait(keys, time.monotonic() + wait, poll=0.02)
    except TimeoutError:
        pass
