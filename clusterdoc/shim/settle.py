"""Where the ranks meet after an OOM-retry attempt: the job's rendezvous store, never a collective.

A collective cannot be the meeting point: after one rank ran out of memory its peers may be inside DDP's
gradient all_reduce (or any other collective), and a different collective there is a size mismatch (gloo:
SIGABRT; NCCL: a hang or mixed buffers). The store has its own connection and server thread. Keys, under
`clusterdoc/oom/<n>/` (n counts this job's attempts, the same on every rank):

    status/<rank>   {status: ok|oom|failed|aborted, note}: how the attempt ended on that rank
    wake/<rank>     what the rank's Listener waits for: "fail <reason>" (set by a rank that failed, for every
                    rank, right after its status) or "end"
    end             set, with every wake key, by a rank that finds every status there after setting its own
    log/<rank>      the rank's gate log (attempt.py), published once the attempt is aborted

Every value is sealed under the job's secret (hang/channel.py, hang/seal.py): a stranger who reaches the store
can neither read a rank's status nor wake, abort or steer an attempt (a forged value is ignored; a wait goes on
until the genuine value is there or the deadline). Without a secret, `available()` is False: the old agreement.

A rank whose attempt did not end well publishes its status and wakes every rank: their listeners abort the gate
at once (nothing more is issued) and publish the logs; then every rank drains (drain.py) and waits for `end`.
All ranks then hold the same statuses and take the same decision. Every wait ends at the deadline: the ranks
still missing are named (RetryUnsafe).
"""

from __future__ import annotations

import os
import time

from . import attempt as attempt_mod
from . import drain

OK, OOM, FAILED, ABORTED = "ok", "oom", "failed", "aborted"
WHAT = {OOM: "ran out of memory", FAILED: "failed with an error other than out of memory"}
_clients: dict = {}


def _status(value) -> dict:
    """A rank's {status, note}; one of another form (only a bug can seal one) counts as failed."""
    if (
        isinstance(value, dict)
        and value.get("status") in (OK, OOM, FAILED, ABORTED)
        and isinstance(value.get("note"), str)
    ):
        return value
    return {"status": FAILED, "note": "its status could not be read"}


_number = [0]


def available() -> bool:
    """A store to meet on: more than one rank and torchrun's MASTER_ADDR/MASTER_PORT (shim.init() sets them)."""
    import torch.distributed as dist

    from clusterdoc.hang import seal

    return (
        dist.is_available()
        and dist.is_initialized()
        and dist.get_world_size() > 1
        and bool(os.environ.get("MASTER_ADDR"))
        and (os.environ.get("MASTER_PORT") or "").isdigit()
        and seal.from_env() is not None
    )


def _client(role: str):
    """One store connection per role (the main thread's, the listener's), made once."""
    store = _clients.get(role)
    if store is None:
        from clusterdoc.hang import channel

        store = _clients[role] = channel.connect(
            os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), timeout=30.0, prefix=channel.OOM_PREFIX
        )
    return store


class Meeting:
    """One attempt's side channel on this rank: started before the attempt runs, settled after it."""

    def __init__(self, gate, timeout: float):
        import torch.distributed as dist

        _number[0] += 1
        self.p = f"{_number[0]}/"
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.gate, self.timeout = gate, timeout
        self.store = _client("main")
        self.listener = attempt_mod.Listener(
            _client("listener"), self.key("wake", self.rank), gate, timeout, self.publish
        )
        self.listener.start()
        self.failed_by = None

    def key(self, what, rank=None):
        return self.p + what + ("" if rank is None else f"/{rank}")

    def publish(self, store) -> None:
        snap = self.gate.snapshot()
        if snap is not None:
            store.set(self.key("log", self.rank), snap)

    def _wait(self, keys, deadline, what) -> dict:
        """The keys' genuine values once all are there; RetryUnsafe naming the ranks missing at the deadline."""
        try:
            return self.store.wait(keys, deadline)
        except TimeoutError as exc:
            per_rank = keys if len(keys) == self.world else [self.key("status", r) for r in range(self.world)]
            gone = set(exc.args[0]) if len(keys) == self.world else set(per_rank) - set(self.store.valid(per_rank))
            missing = [r for r, k in enumerate(per_rank) if k in gone]
            raise drain.RetryUnsafe(
                f"rank(s) {missing or 'unknown'} did not {what} within {self.timeout:.0f} s"
                f"{' after ' + self.failed_by if self.failed_by else ''}: a rank may be inside a collective the "
                "shim cannot see (torch.distributed's functional collectives, send/recv, a name bound before "
                "shim.init()) or in a long step with no collective"
            ) from None

    def statuses(self, deadline: float | None = None) -> dict:
        keys = [self.key("status", r) for r in range(self.world)]
        found = self._wait(keys, deadline or time.monotonic() + self.timeout, "publish its status")
        return {r: _status(found[k]) for r, k in enumerate(keys)}

    def _wake_all(self, value: str, extra: tuple = ()) -> None:
        keys = [self.key("wake", r) for r in range(self.world)] + list(extra)
        self.store.store.multi_set(keys, [self.store.seal(k, value) for k in keys])

    def settle(self, status: str, note: str) -> dict:
        """Publish this rank's outcome, drain if any rank failed; every rank's {status, note} by rank."""
        deadline = time.monotonic() + self.timeout
        mine = {"status": status, "note": note}
        if status in (OOM, FAILED):
            reason = f"rank {self.rank} {WHAT[status]} ({note})"
            self.gate.abort(reason)
            self.store.set(self.key("status", self.rank), mine)
            self._wake_all("fail " + reason)
        else:
            self.store.set(self.key("status", self.rank), mine)
        # the last rank to set its status finds them all (each looks after its own set): it ends the attempt
        if len(self.store.valid([self.key("status", r) for r in range(self.world)])) == self.world:
            self._wake_all("end", (self.key("end"),))
        if not self.listener.woken.wait(max(0.05, deadline - time.monotonic())):
            self._wait([self.key("end")], deadline, "end the attempt")
        if self.gate.aborted is None:  # woken by `end`: every rank is here
            found = self.statuses(deadline)
            if all(s["status"] == OK for s in found.values()):
                return found
            bad = next(r for r, s in found.items() if s["status"] != OK)
            self.gate.abort(f"rank {bad} {WHAT.get(found[bad]['status'], 'stopped')} ({found[bad]['note']})")
        self.failed_by = self.gate.aborted
        self.publish(self.store)
        keys = [self.key("log", r) for r in range(self.world)]
        found = self._wait(keys, deadline, "publish its collectives")
        drain.run({r: found[k] for r, k in enumerate(keys)}, self.rank, deadline)
        self._wait([self.key("end")], deadline, "leave the attempt")
        return self.statuses(deadline)

    def close(self) -> None:
        """Release the listener (if nothing woke it) and join it."""
        if not self.listener.woken.is_set():
            try:
                self.store.set(self.key("wake", self.rank), "end")
            except Exception:  # the store is gone: the listener's own wait fails soon after
                pass
        self.listener.join(timeout=5.0)
