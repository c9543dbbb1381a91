"""The launcher's hang watch on a thread of its own, so that its store calls never hold up the main thread.

A store call blocks in torch's C++ until the store answers: a rank 0 that is stopped (SIGSTOP, a frozen node), or
a node gone without a reset, keeps a compare_set waiting for minutes (torch's `timeout` bounds neither it nor the
connect's handshake; SO_RCVTIMEO on its socket is not heeded either). On the main thread that wait held up the
signal handler too: `clusterdoc cancel` or Ctrl-C went unanswered. Here the main thread only hands the ranks' exit
codes over and reads the verdict; `HangWatch.poll` runs on the thread, one look at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from clusterdoc.hang import early
from clusterdoc.launch.hangwatch import HangWatch

JOIN = 5.0  # how long close() waits for a look under way (the ranks are stopped by then: the store answers or is gone)
SILENT = 30.0  # seconds past the hang timeout a look may wait on the store before its silence is the stall
# threads closed while their look was still under way (inside torch's C++: a connect whose handshake rank 0's exit
# cut, retried past JOIN): the interpreter's exit would abort the process (CI, ci51: submit ended rc -6, "terminate
# called without an active exception"); the CLI leaves with os._exit then (cli.main)
_UNDER_WAY: list[threading.Thread] = []


def look_under_way() -> bool:
    """A closed watch's look still inside a store call: exiting through the interpreter's teardown would abort."""
    return any(t.is_alive() for t in _UNDER_WAY)


class WatchThread:
    """`hang_timeout` (> 0): a look that waits on the store longer than it plus SILENT is itself a stall, of rank 0
    (whose process holds the store): stopped (SIGSTOP, a frozen node) or cut off. The ranks' own watchdogs cannot
    say it (they report through that store), so the launcher does, and stops the job under --on-hang abort: a
    campaign found submit waiting for ever on a job whose rank 0 was stopped (issue 43)."""

    def __init__(self, watch: HangWatch, hang_timeout: float = 0.0):
        self.watch = watch
        self.limit = hang_timeout + SILENT if hang_timeout > 0 else None
        self._look_started: float | None = None  # when the look under way began (None: none under way)
        self._silent: str | None = None  # the stall the store's silence made, once said
        self._codes: dict[int, int | None] = {}
        self._wake = threading.Event()
        self._closed = False
        self._stop_job = False  # a look said: stop the job now (--on-hang abort)
        self._thread = threading.Thread(target=self._run, name="clusterdoc-hangwatch", daemon=True)
        self._thread.start()

    def poll(self, codes: Mapping[int, int | None]) -> bool:
        """Ask for a look with the ranks' codes now (HangWatch.poll's own pace: at most once a second); never
        waits. True once a look said the job must be stopped."""
        self._codes = dict(codes)
        self._wake.set()
        started = self._look_started
        if self.limit is not None and started is not None and self._silent is None and self.watch.reported is None:
            waited = time.monotonic() - started
            if waited > self.limit:
                self._silent = (
                    f"clusterdoc: job stalled: {early.STORE_SILENT} {waited:.0f}s "
                    "(rank 0 stopped, or its node frozen or cut off)"
                )
                print(self._silent, file=self.watch.err, flush=True)
                if self.watch.on_hang == "abort":
                    self._stop_job = True
        return self._stop_job

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            self._look_started = time.monotonic()
            try:
                if self.watch.poll(self._codes):
                    self._stop_job = True
            except Exception:  # the watch is advice: its failure is never the job's
                pass
            finally:
                self._look_started = None

    def close(self, wait: float = JOIN) -> None:
        """No more looks; wait up to `wait` s for one under way, so that the watch's state is read after it (and
        so that no thread is inside torch as the interpreter exits: that aborts, shim/watch.py's EXIT_JOIN)."""
        self._closed = True
        self._wake.set()
        self._thread.join(wait)
        if self._thread.is_alive():
            _UNDER_WAY.append(self._thread)
        self.watch.release()

    @property
    def reported(self) -> str | None:
        return self.watch.reported or self._silent

    @property
    def rejected(self) -> int:
        return self.watch.rejected

    @property
    def err(self):
        return self.watch.err

    def postmortem(self, codes: dict[int, int | None], failed: list[int]) -> str | None:
        return self.watch.postmortem(codes, failed)
