"""The side channel a stalled job still answers on: the job's own rendezvous store (TCPStore).

Rank 0 hosts it (torch.distributed's env:// rendezvous, or shim.init()), its server runs on its own C++
thread, and a rank blocked in a collective still has its watchdog thread: so every rank, the launcher and
`clusterdoc stacks` can meet there with no shared file system. Keys, under `clusterdoc/hang/`:

    hb/<rank>            the rank's latest heartbeat (its collectives and where its main thread is)
    ctl                  a counter read by every watchdog on every tick (one round trip: a watchdog starved of
                         the GIL by a busy main thread must need few): +1 asks every rank for its full state
                         (stacks of all threads), +ABORT stops every rank
    dump/<n>/<rank>      each rank's answer to dump request n
    stall                a counter: the first rank whose collective waited --hang-timeout raises it
    stall/info           {rank, gen}: who saw the stall first, and the dump request it made
    handled              set by whoever prints the report (the launcher; else the rank that saw it)

The OOM retry (shim/attempt.py, shim/settle.py) meets on the same store under `clusterdoc/oom/<n>/`, n the
job's attempt number: status/<rank>, done (a counter), end, wake/<rank>, log/<rank>.
"""

from __future__ import annotations

import datetime
import json
import socket
import time

PREFIX = "clusterdoc/hang/"
OOM_PREFIX = "clusterdoc/oom/"
ABORT = 1 << 40  # added to `ctl` to stop every rank; what is below it counts dump requests


def connect(addr: str, port: int, timeout: float = 5.0, prefix: str = PREFIX):
    """A client of the job's store, with our prefix. Raises on no answer within `timeout`."""
    import torch.distributed as dist

    # a plain connect first: torch's client logs a C++ backtrace for every refused attempt
    with socket.create_connection((addr, int(port)), timeout=timeout):
        pass
    store = dist.TCPStore(
        addr, int(port), is_master=False, wait_for_workers=False, timeout=datetime.timedelta(seconds=timeout)
    )
    return dist.PrefixStore(prefix, store)


def put(store, key: str, value) -> None:
    store.set(key, json.dumps(value, default=str))


def get(store, key: str):
    """The value, or None when the key is not there (never waits: get() on a missing key would)."""
    if not store.check([key]):
        return None
    return json.loads(store.get(key))


def counter(store, key: str) -> int:
    return store.add(key, 0)


def control(store) -> tuple[int, bool]:
    """(the latest dump request, abort asked)."""
    value = store.add("ctl", 0)
    return value % ABORT, value >= ABORT


def request_dump(store) -> int:
    return store.add("ctl", 1) % ABORT


def request_abort(store) -> None:
    store.add("ctl", ABORT)


def collect(store, world: int, gen: int, wait: float) -> dict[int, dict]:
    """Each rank's answer to dump request `gen`, waiting up to `wait` seconds for the slow ones."""
    keys = {r: f"dump/{gen}/{r}" for r in range(world)}
    got: dict[int, dict] = {}
    deadline = time.monotonic() + wait
    while True:
        for r, key in keys.items():
            if r not in got and store.check([key]):
                got[r] = json.loads(store.get(key))
        if len(got) == world or time.monotonic() >= deadline:
            return got
        time.sleep(0.05)


def heartbeats(store, world: int) -> dict[int, dict]:
    found = {}
    for r in range(world):
        value = get(store, f"hb/{r}")
        if value is not None:
            found[r] = value
    return found
