"""The launcher's side of the hang doctor, the same for every backend.

While `clusterdoc submit` waits, it is a client of the job's store (address in watch.json, written by rank 0's
watchdog; the state itself travels through the store, not the file system). It keeps the ranks' latest
heartbeats, and when a rank's watchdog raises the stall counter it collects every rank's dump, adds what only
the launcher knows (which ranks are gone, with their exit codes), prints one report, writes the stack files
into the job folder, and tells submit whether to stop the job (--on-hang abort) or keep waiting.
"""

from __future__ import annotations

import json
import sys
import time

from clusterdoc import private
from clusterdoc.hang import channel, report, stacks
from clusterdoc.launch.job import JobDir

POLL = 1.0  # seconds between looks at the store
COLLECT = 5.0  # how long the ranks have to answer a dump request


class HangWatch:
    def __init__(self, jd: JobDir, world: int, on_hang: str = "abort", err=sys.stderr):
        self.jd, self.world, self.on_hang, self.err = jd, world, on_hang, err
        self.store = None
        self.next_look = 0.0
        self.heartbeats: dict[int, dict] = {}
        self.reported: str | None = None  # the report's headline, once printed

    def _connect(self):
        try:
            info = json.loads((self.jd.path / "watch.json").read_text())
        except (OSError, ValueError):
            return None
        try:
            return channel.connect(info["addr"], info["port"], timeout=3.0)
        except Exception:  # noqa: BLE001 - not up yet, or already gone: try again later
            return None

    def poll(self, codes: dict[int, int | None]) -> bool:
        """Look at the store (at most once a second). True when the job must be stopped now."""
        now = time.monotonic()
        if now < self.next_look or self.reported:
            return False
        self.next_look = now + POLL
        if self.store is None:
            self.store = self._connect()
            if self.store is None:
                return False
        try:
            self.heartbeats.update(channel.heartbeats(self.store, self.world))
            if channel.counter(self.store, "stall") == 0:
                return False
            info = channel.get(self.store, "stall/info")
            if info is None:
                return False
            if self.store.check(["handled"]):  # a rank printed it already (we were late)
                self.reported = "reported by a rank"
                return self.on_hang == "abort"
            self.store.set("handled", "launcher")
            dumps = channel.collect(self.store, self.world, info["gen"], COLLECT)
        except Exception:  # noqa: BLE001 - rank 0 (the store) ended: the job's own outcome says why
            self.store = None
            return False
        self.print_report(dumps, codes)
        return self.on_hang == "abort"

    def print_report(self, dumps: dict[int, dict], codes: dict[int, int | None]) -> None:
        gone = self._gone(codes, dumps)
        now = time.time()
        states = {r: dumps.get(r) or self._stale(r, now) for r in range(self.world)}
        hint = stacks.write(self.jd.path, dumps, self.world) if dumps else None
        text = report.build(states, self.world, exits=gone, stacks_hint=hint)
        recorder = sorted(self.jd.path.glob("nccl_trace_rank_*"))
        if recorder:
            text += f"\n  NCCL flight recorder: {self.jd.path}/nccl_trace_rank_* ({len(recorder)} files)"
        if any((dumps.get(r) or {}).get("unfinished") is not None for r in dumps):
            text += f"\n  flight recorder: {self.jd.path}/fr/rank*.json ('clusterdoc trace {self.jd.id}' draws it)"
        private.write(private.mkdir(self.jd.path / "stacks") / "report.txt", text + "\n")
        self.reported = text.splitlines()[0]
        print(text, file=self.err, flush=True)
        starts = [c["start"] for s in states.values() if s and (c := report.oldest(s))]
        private.write(
            self.jd.path / "stacks" / "report.json",
            json.dumps({"printed": time.time(), "stall_started": min(starts) if starts else None}) + "\n",
        )

    def _stale(self, rank: int, now: float) -> dict | None:
        hb = self.heartbeats.get(rank)
        return {**hb, "stale": max(0.0, now - hb.get("time", now))} if hb else None

    def _gone(self, codes: dict[int, int | None], dumps: dict[int, dict]) -> dict[int, int | None]:
        """Ranks that ended, with their codes: the backend's own view, else the ranks' exit records."""
        gone: dict[int, int | None] = {}
        for r in range(self.world):
            if r in dumps:
                continue
            code = codes.get(r)
            rec = self.jd.rank_exit(r)
            if code is None and rec is not None:
                code = rec.get("code")
            if code is not None:
                gone[r] = code
        return gone

    def postmortem(self, codes: dict[int, int | None], failed: list[int]) -> str | None:
        """Where each rank was when the job failed: its last heartbeat, or what its exit record says."""
        states: dict[int, dict | None] = {}
        for r in range(self.world):
            rec = self.jd.rank_exit(r) or {}
            hb = self.heartbeats.get(r)
            col = rec.get("collectives")
            states[r] = {**(hb or {}), "collectives": col} if col else hb
        if not any(states.values()):
            return None
        exits = {
            r: (codes.get(r) if codes.get(r) is not None else (self.jd.rank_exit(r) or {}).get("code"))
            for r in range(self.world)
        }
        first = ", ".join(f"rank {r}" for r in failed) or "a rank"
        return report.build(
            states, self.world, exits=exits, headline=f"clusterdoc: where the ranks were when {first} failed"
        )
