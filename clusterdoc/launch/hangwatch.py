"""The launcher's side of the hang doctor, the same for every backend.

While `clusterdoc submit` waits, it is a client of the job's store (address in watch.json, written by rank 0's
watchdog; the state itself travels through the store, not the file system). It keeps the ranks' latest
heartbeats, and when a rank's watchdog claims the stall it collects every rank's dump, adds what only
the launcher knows (which ranks are gone, with their exit codes), prints one report, writes the stack files
into the job folder, and tells submit whether to stop the job (--on-hang abort) or keep waiting.

Every value read there opens under the job's secret (hang/seal.py, from the job folder) or is ignored and
counted (`rejected`, which submit reports); what is printed is escaped like node output.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Collection

from clusterdoc import private
from clusterdoc.hang import channel, early, report, seal, stacks
from clusterdoc.launch.job import JobDir
from clusterdoc.untrusted import printable, printable_lines

POLL = 1.0  # seconds between looks at the store
COLLECT = 5.0  # how long the ranks have to answer a dump request
LATE = 10.0  # and how much longer a rank seen alive that recently: its watchdog may only be starved (a loaded node)


class HangWatch:
    def __init__(self, jd: JobDir, world: int, on_hang: str = "abort", err=sys.stderr):
        self.jd, self.world, self.on_hang, self.err = jd, world, on_hang, err
        self.store: channel.Channel | None = None
        self.secret = seal.read_secret(jd.path)
        self.left = False  # rank 0 said its store is going: we let go of it for good
        self.rejected_before = 0  # forged values seen through earlier connections
        self.next_look = 0.0
        self.heartbeats: dict[int, dict] = {}
        self.seen: dict[int, float] = {}  # rank -> when (our clock) its heartbeat last changed
        self.reported: str | None = None  # the report's headline, once printed
        self.marked = self._mark()

    def _mark(self) -> bool:
        """Tell rank 0 (through the job folder, before any connect) that we watch: it waits for our bye."""
        if self.secret is None:
            return False  # no secret, no connect: nobody to wait for
        try:
            private.write(self.jd.path / channel.WATCHER_FILE, "launcher\n")
        except OSError:
            return False
        return True

    def release(self) -> None:
        """We watch no more (the job ended, or submit is leaving): rank 0 need not wait for us."""
        if self.marked:
            self.marked = False
            try:
                (self.jd.path / channel.WATCHER_FILE).unlink()
            except OSError:
                pass

    @property
    def rejected(self) -> int:
        """Values on the job's store that failed authentication (ignored): someone else wrote there."""
        return self.rejected_before + (self.store.rejected if self.store is not None else 0)

    def _connect(self):
        if self.secret is None:
            return None
        try:
            info = private.read_json(self.jd.path / "watch.json")
            store = channel.connect(info["addr"], info["port"], timeout=3.0, secret=self.secret)
        except Exception:  # not up yet, already gone, or an unreadable file: try again later
            return None
        try:
            channel.put(store, "hello/launcher", True)  # rank 0 waits for our bye before its store goes
        except Exception:
            return None
        return store

    def _drop(self):
        if self.store is not None:
            self.rejected_before += self.store.rejected
        self.store = None

    def poll(self, codes: dict[int, int | None]) -> bool:
        """Look at the store (at most once a second). True when the job must be stopped now."""
        now = time.monotonic()
        if now < self.next_look or self.reported or self.left:
            return False
        self.next_look = now + POLL
        if codes.get(0) is not None:  # rank 0 ended and its store with it: never talk to a store that is gone
            self.left = True
            self._drop()
            return False
        if self.store is None:
            self.store = self._connect()
            if self.store is None:
                return False
        store = self.store
        try:
            if channel.closing(store):  # rank 0 is leaving: let go first (shutdown order)
                channel.bye(store, "launcher")
                self.left = True
                self._drop()
                return False
            self._beats(channel.heartbeats(store, self.world))
            if channel.counter(store, "stall") == 0:
                return False
            info = channel.get(store, "stall/info")
            gen = info.get("gen") if isinstance(info, dict) else None
            if not isinstance(gen, int) or isinstance(gen, bool) or gen < 1:
                return False
            if store.claim("handled", "launcher") != "launcher":  # a rank printed it already (we were late)
                self.reported = "reported by a rank"
                return self.on_hang == "abort"
            now = time.monotonic()
            recent = [r for r, t in self.seen.items() if now - t < LATE and codes.get(r) is None]
            dumps = channel.collect(store, self.world, gen, COLLECT, late=LATE, patient=recent)
            alive = self._beats(channel.heartbeats(store, self.world))  # a late rank's heartbeat still came
        except Exception:  # rank 0 (the store) ended: the job's own outcome says why
            self._drop()
            return False
        self.print_report(dumps, codes, alive)
        try:  # done with the store: rank 0 need not wait for us when it leaves
            channel.bye(store, "launcher")
        except Exception:  # gone already
            pass
        self._drop()
        return self.on_hang == "abort"

    def _beats(self, beats: dict[int, dict]) -> set[int]:
        """Keep the ranks' latest heartbeats; the ranks whose heartbeat changed since the last look."""
        changed = {r for r, hb in beats.items() if hb.get("time") != (self.heartbeats.get(r) or {}).get("time")}
        now = time.monotonic()
        self.seen.update({r: now for r in changed})
        self.heartbeats.update(beats)
        return changed

    def print_report(self, dumps: dict[int, dict], codes: dict[int, int | None], alive: Collection[int] = ()) -> None:
        """`alive`: ranks whose heartbeat moved while the dumps were collected: they answer late, not never (their
        heartbeat stands for their dump)."""
        gone = self._gone(codes, dumps)
        now = time.time()
        states = {
            r: dumps.get(r) or (self.heartbeats.get(r) if r in alive else self._stale(r, now))
            for r in range(self.world)
        }
        for r in gone:
            states[r] = self._ended(r, states[r])
        try:
            hint = stacks.write(self.jd.path, dumps, self.world) if dumps else None
            text = report.build(states, self.world, exits=gone, stacks_hint=hint)
        except Exception as exc:  # a rank's state of an unexpected form: a finding, not a crash
            text = (
                "clusterdoc: job stalled; the ranks' states could not be read "
                f"({type(exc).__name__}: {printable(exc, 200)}); stacks: {self.jd.path / 'stacks'}"
            )
        recorder = sorted(self.jd.path.glob("nccl_trace_rank_*"))
        if recorder:
            text += f"\n  NCCL flight recorder: {self.jd.path}/nccl_trace_rank_* ({len(recorder)} files)"
        if any((dumps.get(r) or {}).get("unfinished") is not None for r in dumps):
            text += f"\n  flight recorder: {self.jd.path}/fr/rank*.json ('clusterdoc trace {self.jd.id}' draws it)"
        private.write(private.mkdir(self.jd.path / "stacks") / "report.txt", text + "\n")
        self.reported = text.splitlines()[0]
        print(printable_lines(text), file=self.err, flush=True)
        try:
            starts = [c["start"] for s in states.values() if s and (c := report.oldest(s))]
            left = report.early_exit(states, self.world, gone)
        except Exception:  # see above
            starts, left = [], None
        info = {"printed": time.time(), "stall_started": min(starts) if starts else None}
        if left is not None:  # `why` says the same (the ranks left waiting are stopped without a record)
            info["early_exit"] = dataclasses.asdict(left)
        private.write(self.jd.path / "stacks" / "report.json", json.dumps(info) + "\n")

    def _stale(self, rank: int, now: float) -> dict | None:
        hb = self.heartbeats.get(rank)
        when = hb.get("time") if hb else None
        return {**hb, "stale": max(0.0, now - when) if isinstance(when, (int, float)) else 0.0} if hb else None

    def _gone(self, codes: dict[int, int | None], dumps: dict[int, dict]) -> dict[int, int | None]:
        """Ranks that ended, with their codes: the backend's own view, else the ranks' exit records."""
        gone: dict[int, int | None] = {}
        for r in range(self.world):
            if r in dumps:
                continue
            code = _code(codes.get(r), self.jd.rank_exit(r))
            if code is not None:
                gone[r] = code
        return gone

    def _ended(self, rank: int, state: dict | None) -> dict | None:
        """A gone rank's last state with what its exit record adds: where it was in its collectives, and the
        calls it made (per group and op: an early exit is told by them, hang/early.py). A rank that left no record
        (stopped, killed) has its place from rank<R>.where, fresher than any heartbeat."""
        rec = self.jd.rank_exit(rank) or early.stand_in(self.jd.rank_where(rank)) or {}
        extra = {k: rec[k] for k in ("collectives", "issued", "ops") if isinstance(rec.get(k), dict)}
        return {**(state or {}), **extra} if extra else state

    def postmortem(self, codes: dict[int, int | None], failed: list[int]) -> str | None:
        """Where each rank was when the job failed: its last heartbeat, or what its exit record says."""
        states = {r: self._ended(r, self.heartbeats.get(r)) for r in range(self.world)}
        if not any(states.values()):
            return None
        exits = {r: _code(codes.get(r), self.jd.rank_exit(r)) for r in range(self.world)}
        first = ", ".join(f"rank {r}" for r in failed) or "a rank"
        try:
            text = report.build(
                states,
                self.world,
                exits=exits,
                headline=f"clusterdoc: where the ranks were when {first} failed",
                first_failed=failed,
            )
        except Exception:  # a heartbeat of an unexpected form: no post-mortem rather than a crash
            return None
        return printable_lines(text)


def _code(launcher: int | None, rec: dict | None) -> int | None:
    """A rank's exit code: the backend's, else its exit record's; the record's 0 over a signal (its script
    finished; the launcher stopped it in its teardown, after a peer failed)."""
    mine = rec.get("code") if isinstance(rec, dict) and isinstance(rec.get("code"), int) else None
    if mine == 0 and (launcher is None or launcher < 0):
        return 0
    return launcher if launcher is not None else mine
