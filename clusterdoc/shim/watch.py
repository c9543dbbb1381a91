"""The hang watchdog: one daemon thread per rank that still answers while the rank is stuck.

Every `interval` it publishes a heartbeat on the job's store (hang/channel.py), answers dump requests
with the Python stacks of all its threads and what its process groups are doing (torch's flight recorder,
shim/progress.py; its dump goes into <log dir>/fr/), and watches for lack of progress: when an op has been
outstanding for `--hang-timeout` seconds with no collective completed meanwhile (the recorder's counts for
every group, else the shim's own records), it raises the store's stall counter and asks every rank for a dump. Under
`clusterdoc submit` the launcher sees the counter, prints the report (it knows which ranks are gone and how)
and stops the job; with no launcher (plain torchrun + shim.init()), the rank that saw the stall prints the
report itself and, with on_hang=abort, every rank exits 1. The heartbeat also carries the rank's pace
(compute vs waiting in collectives, peak memory): rank 0's watchdog judges it for stragglers and prints the
per-rank summary at exit (shim/pace.py).

Switches (what `clusterdoc submit` sets): CLUSTERDOC_HANG_TIMEOUT (seconds, default 300; 0: no watchdog,
tracking stays), CLUSTERDOC_ON_HANG (abort | wait), CLUSTERDOC_TRACE=1 (keep every collective for
`clusterdoc trace`), CLUSTERDOC_LOG_DIR (where stacks/, trace/ and watch.json go), CLUSTERDOC_HANG_WATCHER=
launcher (a launcher prints the report; the rank prints it only if nobody has after a grace period),
CLUSTERDOC_JOB_SECRET (every store value is sealed under it, hang/seal.py; clusterdoc.run reads it from the job
folder, shim.init() derives one from the user's secret file (secret.py); none: the watchdog stays off, tracking
stays), CLUSTERDOC_STRAGGLER (percent of the step, default 10;
0: no straggler watch, no summary). At exit the store's clients let go in order (shutdown()).
"""

from __future__ import annotations

import atexit
import json
import linecache
import os
import re
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from clusterdoc import clock, private
from clusterdoc.untrusted import printable, printable_lines

from . import loader, pace, progress, straggler, track

DEFAULT_TIMEOUT = 300.0
LAUNCHER_GRACE = 15.0  # how long a rank leaves the report to the launcher before printing it itself
LATE = 10.0  # how much longer the report waits for a rank whose heartbeat is recent (a loaded node: late, not silent)
# At exit the watchdog is waited for until it is out of torch: a daemon thread still inside a store call (C++, GIL
# released) when the interpreter finalizes is ended by pthread_exit as it takes the GIL back, and that unwinds
# through a noexcept C++ frame: "terminate called without an active exception", SIGABRT, on a healthy rank
# (tests/test_exit_abort.py shows it with torch's own TCPStore). Its store calls time out in 10 s, but a connect to a
# store that accepts and then hangs up can take two of those (torch's connect, then its retries: 24.5 s seen here);
# past EXIT_JOIN the rank leaves with os._exit (clusterdoc.run.leave), which cannot abort either.
EXIT_JOIN = 35.0
LAUNCHER_BYE = 6.0  # how long rank 0 waits at exit for a watching launcher's bye (its look a second, connect 3 s)
CLAIM_RETRY = 5.0  # seconds before a claim that could not be made (its key kept changing) is tried again
_watchdog = None


def _frames(frame, limit: int = 40) -> list[dict]:
    """A thread's frames, innermost first, each with its source line and whether it is the user's code."""
    out: list[dict] = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        line = linecache.getline(code.co_filename, frame.f_lineno).strip()
        out.append(
            {
                "file": code.co_filename,
                "line": frame.f_lineno,
                "func": code.co_name,
                "code": line,
                "user": not track.internal(code),
            }
        )
        frame = frame.f_back
    return out


def _stacks(skip_ident: int) -> str:
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        if ident == skip_ident:
            continue
        import traceback

        parts.append(f"Thread {names.get(ident, ident)} (ident {ident}):\n" + "".join(traceback.format_stack(frame)))
    return "\n".join(parts)


def rank_state(rank: int, full: bool = False) -> dict:
    """What this rank tells the others: its collectives, where its main thread is (and with `full`,
    the stacks of all threads but the watchdog's)."""
    main = threading.main_thread().ident
    frame = sys._current_frames().get(main) if main is not None else None
    collectives = track.TRACKER.snapshot()
    state = {
        "rank": rank,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "time": clock.now(),
        "collectives": collectives,
        "frames": _frames(frame),
        "pace": pace.own_pace(),
    }
    blocked = progress.blocked_in(frame)
    if blocked:
        state["blocked"] = blocked
    waiting = loader.loader_wait(frame) if full else None
    if waiting:
        state["loader"] = waiting
    if full:
        state["stacks"] = _stacks(threading.get_ident())
        open_ = [c for c in [collectives["current"], *collectives["pending"]] if c]
        if _watchdog is not None and _watchdog.recorder:
            try:
                state["unfinished"], state["issued"], state["retired"] = progress.unfinished(open_)
            except Exception:  # the recorder unreadable now: the shim's own records stand
                pass
        if "issued" not in state:
            state["issued"] = track.TRACKER.issued()
    return state


def flight_recorder_env(
    backend: str, log_dir: str | None, environ=os.environ, torch_version: str | None = None
) -> dict[str, str]:
    """torch's flight recorder on (a ring of recent collectives per rank: what the watchdog reads, and what it
    writes into the job folder on a stall). With NCCL torch also dumps it itself on a timeout, next to the rank
    logs. Must be set before the process group is made. The names: TORCH_FR_* since the recorder left NCCL's
    code (torch 2.8 warns on each old name, seen on a real H100 with torch 2.11); TORCH_NCCL_* before."""
    if backend != "nccl":
        return {k: v for k, v in {"TORCH_FR_BUFFER_SIZE": progress.BUFFER}.items() if k not in environ}
    if torch_version is None:
        import torch

        torch_version = torch.__version__
    new = tuple(int(x) for x in re.findall(r"\d+", torch_version)[:2]) >= (2, 8)
    env = {"TORCH_FR_BUFFER_SIZE" if new else "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000", "TORCH_NCCL_DUMP_ON_TIMEOUT": "1"}
    if log_dir:
        temp = "TORCH_FR_DUMP_TEMP_FILE" if new else "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"
        env[temp] = str(Path(log_dir) / "nccl_trace_rank_")
    old_names = {
        "TORCH_FR_BUFFER_SIZE": "TORCH_NCCL_TRACE_BUFFER_SIZE",
        "TORCH_FR_DUMP_TEMP_FILE": "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
    }
    return {k: v for k, v in env.items() if k not in environ and old_names.get(k, k) not in environ}


class Watchdog(threading.Thread):
    def __init__(
        self,
        rank: int,
        world: int,
        addr: str,
        port: int,
        timeout: float,
        on_hang: str,
        log_dir: str | None,
        launcher: bool,
    ):
        super().__init__(name="clusterdoc-watchdog", daemon=True)
        self.rank, self.world, self.addr, self.port = rank, world, addr, port
        self.timeout, self.on_hang, self.launcher = timeout, on_hang, launcher
        self.log_dir = Path(log_dir) if log_dir else None
        self.interval = min(1.0, max(0.05, timeout / 20))
        self.answered = 0  # the last dump request answered
        self.stalled = False  # this rank saw its own stall (once)
        self.claim_retry_at = 0.0  # a denied claim is tried again from then
        self.report_due = None  # (gen, time) when this rank must print the report if nobody has
        self.stop = threading.Event()
        self.store: Any = None  # the job store's channel (hang/channel.py), once connected
        self.left = False  # this rank let go of the store (shutdown order, see shutdown())
        self.recorder: bool | None = None if progress.available() else False  # None: on, not yet seen recording
        self.completed = -1  # the recorder's completed ops, all groups: progress is when it moves
        self.progress_at = clock.now()  # when this rank last completed a collective (or started watching)
        self.open_since: float | None = None  # since when an op is outstanding with no progress
        self.threshold = straggler.threshold_from_env()
        self.pace = pace.Watch(world, self.threshold) if rank == 0 and self.threshold > 0 else None

    def run(self):
        from clusterdoc.hang import channel

        try:
            self.store = _connect(self.addr, self.port, self.stop)
        except channel.NoSecret as exc:  # no secret, no side channel: tracking goes on (seal.py)
            from . import secret

            if self.rank != 0 or secret.said():  # said once, by rank 0
                return
            print(
                f"clusterdoc: hang watch off, {exc}: set it to the same random value (16 characters or more) in "
                "every rank to have it (clusterdoc submit does)",
                file=sys.stderr,
            )
            return
        except Exception as exc:  # no channel: say so once, the job itself goes on
            if self.stop.is_set():
                return  # the rank is exiting: nothing to watch any more
            print(
                f"clusterdoc: rank {self.rank}: hang watch off, cannot reach the job's store at "
                f"{self.addr}:{self.port} ({exc})",
                file=sys.stderr,
            )
            return
        if self.rank == 0 and self.log_dir is not None:
            self._write_watch_file()
        errors = 0
        while not self.left:
            try:
                self.tick()
                errors = 0
            except Exception:  # a slow store, or a gone one (rank 0 ended): then stop watching
                errors += 1
                if errors >= 3:
                    break
            if self.stop.wait(self.interval):
                break
        flush_trace(self.rank)

    def shutdown(self):
        """At exit, in order: this thread stops; then rank 0 tells the other clients its store is going and waits
        until they let go, and every other rank lets go (a client of a store that is gone logs a C++ backtrace)."""
        from clusterdoc.hang import channel

        self.stop.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=EXIT_JOIN)  # out of its store call first (see EXIT_JOIN); at once when idle
        store, self.store = self.store, None
        if store is not None and store.rejected:
            from clusterdoc.hang import channel

            print(f"clusterdoc: rank {self.rank}: {channel.rejected_note(store.rejected)}", file=sys.stderr, flush=True)
        if store is None or self.left:
            return
        self.left = True
        try:
            if self.rank == 0:
                clients, wait = leaving_order(self.world, self.interval, self.log_dir if self.launcher else None, store)
                channel.close(store, clients, wait=wait)
                if self.threshold > 0:
                    states = {**channel.heartbeats(store, self.world), 0: rank_state(0)}
                    pace.summary(states, self.threshold)
            else:
                channel.put(store, f"hb/{self.rank}", rank_state(self.rank))  # the final pace, for the summary
                channel.bye(store, f"rank{self.rank}")
        except Exception:  # rank 0 is gone already: nothing to let go of
            pass

    def _write_watch_file(self):
        try:
            addr = socket.gethostbyname(self.addr)
        except OSError:
            addr = self.addr
        private.write(
            self.log_dir / "watch.json",
            json.dumps(
                {
                    "addr": addr,
                    "port": self.port,
                    "world": self.world,
                    "timeout": self.timeout,
                    "host": socket.gethostname(),
                }
            )
            + "\n",
        )

    def tick(self):
        from clusterdoc.hang import channel

        store = self.store
        if self.rank != 0 and channel.closing(store):  # rank 0 is leaving: let go of its store first
            channel.put(store, f"hb/{self.rank}", rank_state(self.rank))  # the final pace, for the summary
            channel.bye(store, f"rank{self.rank}")
            self.left = True
            return
        channel.put(store, f"hb/{self.rank}", rank_state(self.rank))
        gen, abort = channel.control(store)
        if abort:
            self.abort()
        if gen > self.answered:
            self.answer(gen)
        flush_trace(self.rank)
        if self.pace is not None:
            try:
                self.pace.tick(lambda: channel.heartbeats(store, self.world))
            except Exception:  # the straggler watch is advice: never the hang watch's end
                pass
        waited = self.waited()
        now = time.monotonic()
        if not self.stalled and waited is not None and waited >= self.timeout and now >= self.claim_retry_at:
            try:
                held = channel.claim_stall(store, self.rank, lambda: channel.request_dump(store))
            except RuntimeError as exc:  # the key kept changing: someone who reaches the port overwrites it
                self._denied("the stall", exc)
                return
            self.stalled = True
            if held.get("rank") == self.rank:  # the first rank to see it asked everyone
                gen = held["gen"]
                self.answer(gen)
                self.report_due = (gen, time.monotonic() + (LAUNCHER_GRACE if self.launcher else 0.0))
        if self.report_due and now >= self.report_due[1]:
            try:
                mine = store.claim("handled", f"rank {self.rank}") == f"rank {self.rank}"
            except RuntimeError as exc:
                self._denied("the hang report", exc)
                self.report_due = (self.report_due[0], self.claim_retry_at)
                return
            gen, self.report_due = self.report_due[0], None
            if mine:
                self.report(gen)

    def _denied(self, what: str, exc: Exception) -> None:
        """A claim that could not be made is said (escaped) and tried again later: never a silent latch."""
        self.claim_retry_at = time.monotonic() + CLAIM_RETRY
        print(
            f"clusterdoc: rank {self.rank}: could not claim {what} on the job's store ({printable(str(exc))}): "
            f"someone else keeps writing its key; trying again in {CLAIM_RETRY:g}s",
            file=sys.stderr,
            flush=True,
        )

    def waited(self) -> float | None:
        """How long this rank has had an op outstanding with no collective completed meanwhile (None: nothing
        outstanding). The recorder sees every op of every group; the shim's records are the fallback."""
        now = clock.now()
        rec = track.TRACKER.oldest()
        since = rec.start if rec is not None else None
        if self.recorder is not False:
            # taken before the recorder is read: a collective done by then is in it, if it records at all
            seen = track.TRACKER.last
            try:
                counts = progress.status()
            except Exception as exc:  # an unreadable recorder must not stop the watchdog
                self.recorder = False
                progress.say_fallback_once(f"the flight recorder cannot be read ({type(exc).__name__}: {exc})")
                return self.waited()
            if self.recorder is None:  # recording? (an older torch keeps nothing for gloo)
                if counts:
                    self.recorder = True
                elif seen is not None and seen.op not in track.P2P:  # gloo's recorder keeps no send or recv: a
                    self.recorder = False  # rank whose first ops are point-to-point says nothing about it yet
                    if self.rank == 0:
                        progress.say_fallback_once(progress.why_off(_backend()))
            completed = sum(done for _, done in counts.values())
            if completed != self.completed:
                self.completed, self.progress_at = completed, now
            if any(issued > done for issued, done in counts.values()):
                self.open_since = self.open_since or now
                since = self.open_since if since is None else min(since, self.open_since)
            else:
                self.open_since = None
        last = track.TRACKER.last
        if last is not None and last.end is not None:
            self.progress_at = max(self.progress_at, last.end)
        return None if since is None else now - max(since, self.progress_at)

    def answer(self, gen: int):
        from clusterdoc.hang import channel, stacks

        self.answered = gen
        state = rank_state(self.rank, full=True)
        # the files first, the store last: once every dump is in the store, rank 0 reports and stops the job,
        # and the launcher may kill this rank before a file written after put() is on disk
        if self.log_dir is not None:
            try:
                d = private.mkdir(self.log_dir / "stacks")
                private.write(d / f"rank{self.rank}.txt", stacks.text(state))
            except OSError:
                pass
            if self.recorder:
                self.write_recorder()
        if channel.counter(self.store, "stall"):  # a stall: its unfinished collectives go into --trace now
            try:  # (the launcher may stop this rank with a signal before abort() runs)
                flush_trace(self.rank, unfinished=True)
            except OSError:
                pass
        channel.put(self.store, f"dump/{gen}/{self.rank}", state)

    def write_recorder(self):
        """This rank's flight recorder, as torch's JSON with the groups' names added: <log dir>/fr/rank<R>.json
        (`clusterdoc trace` and the report read it)."""
        try:
            c10d = progress._c10d()
            assert c10d is not None
            doc = json.loads(c10d._dump_fr_trace_json(True, False))
            doc["clusterdoc"] = {"rank": self.rank, "groups": progress.group_names()}
            private.write(private.mkdir(self.log_dir / "fr") / f"rank{self.rank}.json", json.dumps(doc) + "\n")
        except Exception:  # the report goes on without the file
            pass

    def report(self, gen: int):
        """No launcher printed it: this rank does (on its stderr), and stops the job if asked to."""
        from clusterdoc.hang import channel, report

        before = channel.heartbeats(self.store, self.world)
        recent = [
            r
            for r, hb in before.items()
            if isinstance(hb.get("time"), (int, float)) and clock.now() - hb["time"] < LATE
        ]
        dumps = channel.collect(self.store, self.world, gen, wait=3.0, late=LATE, patient=recent)
        for r, hb in channel.heartbeats(self.store, self.world).items():  # late, not silent: its heartbeat moved
            if r not in dumps and hb.get("time") != (before.get(r) or {}).get("time"):
                dumps[r] = hb
        hint = f"{self.log_dir}/stacks/rank{{0..{self.world - 1}}}.txt" if self.log_dir else None
        text = report.build(dumps, self.world, stacks_hint=hint)
        print(printable_lines(text), file=sys.stderr, flush=True)
        if self.log_dir is not None:
            try:
                private.write(private.mkdir(self.log_dir / "stacks") / "report.txt", text + "\n")
            except OSError:
                pass
        if self.on_hang == "abort":
            print("clusterdoc: stopping every rank (on-hang abort)", file=sys.stderr, flush=True)
            channel.request_abort(self.store)
            self.abort()

    def abort(self):
        """Every rank leaves at once, exit 1, its exit record written (a collective cannot be left)."""
        if self.log_dir is not None:
            try:
                private.write(
                    self.log_dir / f"rank{self.rank}.exit",
                    json.dumps({"code": 1, "oom": False, "hang": True, "time": clock.now()}) + "\n",
                )
            except OSError:
                pass
        try:
            flush_trace(self.rank, unfinished=True)  # the stalled collectives are the trace's point
        except OSError:
            pass
        self._leave_in_order()
        print(f"clusterdoc: rank {self.rank} stopped by the hang watch", file=sys.stderr, flush=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    def _leave_in_order(self):
        """Rank 0 may host the job's store (srun, mpirun, deepspeed): it leaves last, once every other rank said
        it saw the abort (up to a few ticks), else a rank whose watchdog lost the store before reading the abort
        would stay blocked in its collective where no launcher stops it (srun without --kill-on-bad-exit)."""
        from clusterdoc.hang import channel

        from .rendezvous import agent_serves_store

        store = self.store
        if store is None:
            return
        try:
            if self.rank != 0:
                channel.bye(store, f"abort/rank{self.rank}")
            elif not agent_serves_store():
                keys = [f"bye/abort/rank{r}" for r in range(1, self.world)]
                store.wait(keys, time.monotonic() + 3 * self.interval + 2)
        except Exception:  # a gone store or a slow rank: leave anyway
            pass


def leaving_order(world: int, interval: float, job_folder: Path | None, store) -> tuple[list[str], float]:
    """Whom rank 0 waits for before its store goes, and how long (`job_folder`: where a launcher we were told of
    leaves its WATCHER_FILE while it watches). Such a launcher is waited for even before its hello: its first
    connect may be under way as rank 0 leaves, and a store gone inside torch's connect prints a C++ backtrace on
    the launcher's console (CI, about 1 run in 100). It says bye on its next look (one a second, a connect bounded
    by 3 s: hangwatch.py), connected before or not."""
    from clusterdoc.hang import channel

    clients = [f"rank{r}" for r in range(1, world)]
    wait = 2 * interval + 1.5
    if job_folder is not None and (job_folder / channel.WATCHER_FILE).exists():
        clients.append("launcher")
        wait = max(wait, LAUNCHER_BYE)
    elif channel.get(store, "hello/launcher") is True:  # a launcher this rank was not told of
        clients.append("launcher")
    return clients, wait


def _connect(addr: str, port: int, stop: threading.Event | None = None):
    from clusterdoc.hang import channel

    deadline = time.monotonic() + 30
    while True:
        try:
            return channel.connect(addr, port, timeout=10.0)
        except channel.NoSecret:
            raise
        except Exception:  # rank 0's store may still be starting
            if time.monotonic() > deadline or (stop is not None and stop.is_set()):  # at exit: no new try
                raise
            time.sleep(0.5)


# --- trace ---------------------------------------------------------------------------------------

_trace_lock = threading.Lock()


def trace_dir() -> Path:
    return Path(os.environ.get("CLUSTERDOC_LOG_DIR") or "clusterdoc-trace") / "trace"


def flush_trace(rank: int, unfinished: bool = False) -> None:
    """Append this rank's finished collectives to <log dir>/trace/rank<R>.jsonl; with `unfinished` (the rank is
    being stopped) the unfinished ones too, without an end."""
    recs = track.TRACKER.take_trace(unfinished)
    if not recs:
        return
    with _trace_lock:
        d = private.mkdir(trace_dir(), parents=True)
        with private.open_append(d / f"rank{rank}.jsonl") as f:
            f.write("".join(json.dumps(r.to_dict()) + "\n" for r in recs))


def _backend() -> str:
    try:
        import torch.distributed as dist

        return str(dist.get_backend())
    except Exception:  # only a word in a message
        return "this backend"


# --- switching it on -----------------------------------------------------------------------------


def _env_timeout(environ=os.environ) -> float:
    try:
        return float(environ.get("CLUSTERDOC_HANG_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


def enable_hang_watch(
    timeout: float | None = None, on_hang: str | None = None, log_dir: str | None = None, trace: bool | None = None
) -> bool:
    """Track every collective and start this rank's watchdog (idempotent). Call after the process group is
    up (shim.init() calls it). True when the watchdog runs (it needs world size > 1 and a TCP store)."""
    global _watchdog
    import torch.distributed as dist

    track.install()
    if trace if trace is not None else os.environ.get("CLUSTERDOC_TRACE", "") in ("1", "true", "yes", "on"):
        if track.TRACKER.trace is None:
            track.TRACKER.trace = []
            rank = dist.get_rank() if dist.is_initialized() else 0
            atexit.register(flush_trace, rank)
    timeout = _env_timeout() if timeout is None else float(timeout)
    if _watchdog is not None or timeout <= 0 or not dist.is_initialized() or dist.get_world_size() < 2:
        return _watchdog is not None
    addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    if not addr or not port or not port.isdigit():
        return False
    on_hang = on_hang or os.environ.get("CLUSTERDOC_ON_HANG") or "abort"
    _watchdog = Watchdog(
        dist.get_rank(),
        dist.get_world_size(),
        addr,
        int(port),
        timeout,
        on_hang,
        log_dir or os.environ.get("CLUSTERDOC_LOG_DIR"),
        launcher=os.environ.get("CLUSTERDOC_HANG_WATCHER") == "launcher",
    )
    if _watchdog.recorder is False and _watchdog.rank == 0:
        progress.say_fallback_once(progress.why_off(_backend()))
    if _watchdog.log_dir is not None:
        try:
            workers = private.mkdir(_watchdog.log_dir / "workers")  # DataLoader workers' stacks, on request
            loader.watch_loader_workers(workers / f"rank{_watchdog.rank}.txt")
        except OSError:
            pass
    _watchdog.start()
    atexit.register(_watchdog.shutdown)
    _stop_before_destroy(dist)
    return True


def _stop_before_destroy(dist) -> None:
    """A script's own destroy_process_group() (torchrun examples end with it) takes rank 0's store down: the
    watchdog lets go of it first."""
    original = dist.destroy_process_group
    if getattr(original, "_clusterdoc_wrapped", False):
        return

    def destroy_process_group(group=None):
        if group is None:
            try:
                stop_hang_watch()
            except Exception:  # the script's own teardown must happen whatever ours did
                pass
        return original(group)

    destroy_process_group._clusterdoc_wrapped = True  # type: ignore[attr-defined]
    destroy_process_group.__wrapped__ = original  # type: ignore[attr-defined]
    dist.destroy_process_group = destroy_process_group


def stop_hang_watch() -> None:
    """Stop this rank's watchdog and let go of the job's store, in order (before the process group and its
    store go: clusterdoc.run and shim.init()'s exit hook call it first)."""
    if _watchdog is not None:
        _watchdog.shutdown()


def still_in_torch() -> bool:
    """After stop_hang_watch(): the watchdog thread did not end (stuck in a store call past EXIT_JOIN): the
    interpreter's teardown would abort the process (see EXIT_JOIN), so clusterdoc.run leaves with os._exit."""
    return _watchdog is not None and _watchdog.is_alive() and _watchdog.stop.is_set()


def hang_watch_enabled() -> bool:
    return _watchdog is not None and _watchdog.is_alive()
