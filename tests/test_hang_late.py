"""Issue 38's flake: the hang report called a rank silent ('did not answer') whose heartbeat was 5 s late under
load (CI, tests/test_hang_parallel.py[pipeline]). A loaded node starves a rank's watchdog thread: its heartbeat
and its answer to the dump request come seconds late. The launcher now waits (bounded) for a rank it saw alive
lately; only a rank that stays quiet is silent.

Here the launcher's real HangWatch reads a real TCPStore (sealed as in a job) where four simulated ranks publish
heartbeats and answer the dump request, one of them late by a different delay on each run; the waits are scaled
down (COLLECT, LATE) so that many runs take seconds. The same end to end, with a rank's watchdog really starved
(a thread holding the GIL in native code): tests/test_hang_local.py, scenario `late`.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
import time

import pytest
import torch.distributed as dist

from clusterdoc import private
from clusterdoc.hang import channel, seal
from clusterdoc.launch import hangwatch
from clusterdoc.launch.job import JobDir

WORLD = 4


def state(rank: int) -> dict:
    op = "barrier" if rank == 1 else "all_reduce"
    site = ["/job/train.py", 40 if rank == 1 else 30, "step"]
    c = {"op": op, "seq": 4, "group": "world", "start": time.time() - 20, "waited": 20.0, "site": site}
    if op == "all_reduce":
        c.update(dtype="float32", shape=[16])
    return {"rank": rank, "time": time.time(), "collectives": {"current": c}, "frames": []}


class Rank(threading.Thread):
    """One rank's watchdog, as shim/watch.py does it: a heartbeat each tick, and the dump request answered on
    the tick that sees it. From `pause_at` (after the request) nothing for `pause` seconds (starved); `silent`:
    no tick at all once the request is made."""

    def __init__(self, port: int, secret: str, rank: int, pause: float = 0.0, silent: bool = False):
        super().__init__(daemon=True)
        self.port, self.secret, self.rank, self.pause, self.silent = port, secret, rank, pause, silent
        self.stop = threading.Event()

    def run(self):
        store = channel.connect("127.0.0.1", self.port, timeout=5.0, secret=self.secret)
        answered = 0
        while not self.stop.is_set():
            gen, _ = channel.control(store)
            if gen > answered and self.silent:
                return
            if gen > answered and self.pause:
                time.sleep(self.pause)  # starved: no heartbeat, no answer
            channel.put(store, f"hb/{self.rank}", state(self.rank))
            if gen > answered:
                channel.put(store, f"dump/{gen}/{self.rank}", state(self.rank))
                answered = gen
            self.stop.wait(0.05)


@pytest.fixture
def job(tmp_path, monkeypatch):
    monkeypatch.setattr(hangwatch, "COLLECT", 0.5)
    monkeypatch.setattr(hangwatch, "LATE", 3.0, raising=False)
    server = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5), wait_for_workers=False)
    seal.write_secret(tmp_path)
    secret = seal.read_secret(tmp_path)
    private.write(tmp_path / "watch.json", json.dumps({"addr": "127.0.0.1", "port": server.port}) + "\n")
    yield JobDir(tmp_path), server.port, secret
    del server


def run_stall(jd: JobDir, port: int, secret: str, ranks: list[Rank], before: float = 0.3) -> tuple[str, float]:
    """Ranks up, the launcher watching, a stall claimed by rank 0: the report the launcher prints, and how long
    its poll took once it saw the stall."""
    for r in ranks:
        r.start()
    watch = hangwatch.HangWatch(jd, WORLD, on_hang="abort", err=open("/dev/null", "w"))  # noqa: SIM115
    deadline = time.monotonic() + before
    while time.monotonic() < deadline:  # the launcher's looks before the stall: it sees every heartbeat
        watch.next_look = 0.0
        watch.poll({})
        time.sleep(0.1)
    claimer = channel.connect("127.0.0.1", port, timeout=5.0, secret=secret)
    channel.claim_stall(claimer, 0, lambda: channel.request_dump(claimer))
    watch.next_look = 0.0
    start = time.monotonic()
    assert watch.poll({}) is True  # --on-hang abort: stop the job
    took = time.monotonic() - start
    for r in ranks:
        r.stop.set()
    for r in ranks:
        r.join(timeout=5)
    return (jd.path / "stacks" / "report.txt").read_text(), took


@pytest.mark.parametrize("delay", [0.6, 1.1, 1.5, 1.9, 2.4])
def test_a_rank_late_by_seconds_is_waited_for_not_called_silent(job, delay):
    jd, port, secret = job
    ranks = [Rank(port, secret, r, pause=delay if r == 2 else 0.0) for r in range(WORLD)]
    text, took = run_stall(jd, port, secret, ranks)
    assert "did not answer" not in text, text
    assert [line for line in text.splitlines() if line.endswith("<- differs")] == [
        next(line for line in text.splitlines() if line.startswith("  rank 1 "))], text
    assert "ranks 0,2-3  in all_reduce #4 float32[16]" in text, text
    assert took < hangwatch.COLLECT + hangwatch.LATE + 1.0, took  # bounded


def test_a_rank_quiet_long_before_the_stall_is_silent_without_the_long_wait(job):
    """A rank stuck in native code since before the stall: no heartbeat lately, so no patience for it."""
    jd, port, secret = job
    ranks = [Rank(port, secret, r) for r in range(WORLD) if r != 2]
    stuck = Rank(port, secret, 2)
    stuck.start()
    time.sleep(0.5)
    stuck.stop.set()  # its last heartbeat, then nothing
    text, took = run_stall(jd, port, secret, ranks, before=hangwatch.LATE + 0.5)
    assert re.search(r"(?m)^  rank 2 +did not answer \(its last heartbeat, \d+ s old", text), text
    assert took < hangwatch.COLLECT + 1.0, took


def test_a_rank_that_goes_quiet_at_the_request_is_silent_after_the_bounded_wait(job):
    jd, port, secret = job
    ranks = [Rank(port, secret, r, silent=r == 2) for r in range(WORLD)]
    text, took = run_stall(jd, port, secret, ranks)
    assert re.search(r"(?m)^  rank 2 +did not answer \(its last heartbeat, \d+ s old", text), text
    assert hangwatch.COLLECT + hangwatch.LATE - 0.2 <= took < hangwatch.COLLECT + hangwatch.LATE + 1.0, took
