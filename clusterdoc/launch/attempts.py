"""Running a job's attempts: start one through its backend, wait for it (streaming the ranks' logs, the hang
watch), record how it ended, and start the next on OOM (--oom-retry) or when `why` blames a node (--retries).
Ctrl-C and `kill` cancel the attempt and keep the logs.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.hang import channel, seal
from clusterdoc.jobs.folder import JobDir
from clusterdoc.launch import lifeline
from clusterdoc.launch.backend import Handle, backend_for
from clusterdoc.launch.hangwatch import HangWatch
from clusterdoc.launch.job import JobSpec, format_command, get_arg, set_arg
from clusterdoc.launch.outcome import Outcome
from clusterdoc.launch.settings import parse_oom_retry
from clusterdoc.launch.stream import LogStreamer
from clusterdoc.launch.watchthread import WatchThread


def lowered(value: int, minimum: int) -> int | None:
    new = max(value // 2, minimum)
    return new if new < value else None


def run_attempts(spec: JobSpec, jd: JobDir, stream: bool, out=sys.stdout, err=sys.stderr) -> Outcome:
    """Launch, wait, and on OOM re-launch with --ARG lowered, until done. Records everything in jd."""
    backend = backend_for(spec.backend)
    script_args = list(spec.script_args)
    retry = parse_oom_retry(spec.oom_retry, script_args)
    streamer = LogStreamer(jd, spec.world_size, out, err, extra=backend.extra_logs(jd)) if stream else None
    # `status` tells a dead supervisor (LOST) from a running job; `cancel` signals only this very process
    jd.update(supervisor_pid=os.getpid(), supervisor_start=lifeline.start_time(os.getpid()))
    attempt = 1
    while True:
        jd.log_attempt(f"attempt {attempt} started: {format_command([spec.script, *script_args])}")
        try:
            seal.write_secret(jd.path)  # a fresh one per attempt: the ranks read it from the job folder
            handle = backend.start(spec, jd, script_args)
        except Exception as exc:  # sbatch refused, mpirun missing, ...: on record, then reported by the CLI
            _finish_attempt(jd, attempt, Outcome(state="FAILED", message=f"could not start: {one_line(exc)}"))
            raise
        record = jd.read()
        record["attempts"].append(
            {
                "n": attempt,
                "script_args": script_args,
                "backend_id": handle.backend_id,
                "started": time.time(),
                **({"exclude": spec.exclude} if spec.exclude else {}),
            }
        )
        pids = handle.pids
        jd.update(
            state="RUNNING",
            backend_id=handle.backend_id,
            attempts=record["attempts"],
            pids=pids,
            pid_starts=[lifeline.start_time(p) for p in pids],
        )  # what `clusterdoc cancel` stops if we are gone (these very processes, not whatever has their pid later)
        if backend.start_word and stream:
            print(f"{backend.name} job {handle.backend_id} {backend.start_word}", file=err)
        # its store calls on a thread of their own: one that blocks must not hold up Ctrl-C or `clusterdoc cancel`
        watch = (
            WatchThread(HangWatch(jd, spec.world_size, spec.on_hang, err), spec.hang_timeout)
            if spec.hang_timeout > 0
            else None
        )
        try:
            outcome = wait_for(handle, streamer, backend.poll_interval, watch)
        except KeyboardInterrupt:
            hold_signals()
            failed = handle.cancel()  # Slurm: what scancel said when the controller stayed away
            if watch is not None:
                watch.close()  # after the ranks: a look waiting on rank 0's store ends with it
            if streamer:
                streamer.pump(final=True)
            outcome = Outcome(state="CANCELLED", message="cancelled (Ctrl-C or a signal to clusterdoc submit)")
            if failed:
                outcome = Outcome(
                    state="UNKNOWN",
                    message=f"could not cancel {backend.name} job {handle.backend_id}: the controller does not answer "
                    f"({failed}); it may still be running: clusterdoc cancel {jd.id} (or scancel) once it answers",
                )
                print(f"clusterdoc: {outcome.message}", file=err, flush=True)
            _finish_attempt(jd, attempt, outcome)
            raise
        new = None
        if outcome.oom and retry and outcome.state != "UNKNOWN":
            name, minimum = retry
            value = get_arg(script_args, name)
            assert value is not None  # checked before the first attempt; set_arg keeps it
            current = int(value)
            new = lowered(current, minimum)
            if new is None:
                outcome.message = f"out of memory at --{name} {current}, which is the minimum ({minimum}); giving up"
        _finish_attempt(jd, attempt, outcome)
        # UNKNOWN: the scheduler could not say whether the job still runs; a new attempt could run a second copy
        # unstartable: too few nodes to start it; a new attempt would ask for the same nodes and pend the same way
        final = outcome.ok or outcome.state in ("CANCELLED", "UNKNOWN") or outcome.unstartable
        nxt = None if new is not None or final else _retry(spec, jd, attempt, err)
        if nxt is not None:
            jd.archive_attempt(attempt, spec.world_size)
            spec = nxt
            if streamer:
                streamer.reset()
            attempt += 1
            continue
        if new is not None:
            line = f"attempt {attempt}: out of memory at --{name} {current}; retrying on every rank with --{name} {new}"
            jd.log_attempt(line)
            print(f"clusterdoc: {line}", file=err)
            jd.archive_attempt(attempt, spec.world_size)
            script_args = set_arg(script_args, name, str(new))
            if streamer:
                streamer.reset()
            attempt += 1
            continue
        private.release(jd.reserve_path)  # its last record is written: the space set aside is free again
        return outcome


def _retry(spec: JobSpec, jd: JobDir, attempt: int, err) -> JobSpec | None:
    """After a failed attempt: `clusterdoc why`'s verdict goes on record (status and why show it); with retries
    left and a node or the scheduler to blame, the spec of the next attempt (the blamed nodes excluded)."""
    from clusterdoc.launch import retry  # start-up cost: retry loads `why` (its verdicts), needed after a failure only

    return retry.next_attempt(spec, jd, attempt, err)


def one_line(exc: BaseException) -> str:
    """An error and its fix on one line (for `status` and the attempts log)."""
    if isinstance(exc, UsageError):
        return exc.message + (f" (fix: {exc.hint})" if exc.hint else "")
    return " ".join(str(exc).split())


def _finish_attempt(jd: JobDir, attempt: int, outcome: Outcome) -> None:
    if not outcome.ok and (note := disk_full_note(jd)):
        outcome.message = f"{outcome.message}; {note}" if outcome.message else note
    private.remove_temps(jd.path / "stacks")  # the ranks are gone: a half-written stacks file of a stopped one
    record = jd.read()
    for a in record["attempts"]:
        if a["n"] == attempt:
            a.update(ended=time.time(), outcome=outcome.to_json())
    jd.update(state=outcome.state, attempts=record["attempts"], outcome=outcome.to_json(), ended=time.time())
    jd.log_attempt(f"attempt {attempt} ended: {outcome.describe()}")


def disk_full_note(jd: JobDir) -> str | None:
    """Why a job may have failed that its ranks could not say (their logs are on the same file system)."""
    try:
        st = os.statvfs(jd.path)
    except OSError:
        return None
    free = st.f_bavail * st.f_frsize
    if free >= 1 << 20:
        return None
    return f"the job folder's file system is full ({free // 1024} KiB free): ranks could not write their logs"


def wait_for(
    handle: Handle, streamer: LogStreamer | None, interval: float, watch: WatchThread | None = None
) -> Outcome:
    while True:
        if _cancel_asked:  # a signal's KeyboardInterrupt that some C code swallowed: the cancel still happens
            raise KeyboardInterrupt
        outcome = handle.poll()
        if outcome is None and watch is not None and watch.poll(rank_codes(handle)):
            handle.cancel()
            outcome = Outcome(
                state="FAILED",
                codes=rank_codes(handle),
                message=f"stalled ({(watch.reported or '').removeprefix('clusterdoc: job stalled: ')}); "
                "every rank stopped (--on-hang abort)",
            )
        if streamer:
            streamer.pump(final=outcome is not None)
        if outcome is not None:
            if watch is not None:
                watch.close()  # its state is read below
            if not outcome.ok and watch is not None and not watch.reported and outcome.state != "CANCELLED":
                text = watch.postmortem(outcome.codes, outcome.failed)
                if text:
                    print(text, file=watch.err, flush=True)
            if watch is not None and watch.rejected:
                print(f"clusterdoc: {channel.rejected_note(watch.rejected)}", file=watch.err, flush=True)
            return outcome
        time.sleep(interval)


def rank_codes(handle: Handle) -> dict[int, int | None]:
    """Each rank's exit code as far as the backend can tell (None: running or unknown)."""
    return handle.rank_codes()


# Set by the signal handler, read by wait_for: a signal's KeyboardInterrupt is raised wherever the main thread is,
# and C code that runs Python and clears its errors swallows it. So in the detached supervisor: its hang watch's
# first store connect imports torch, torch._C's init imports numpy and clears any error there (it goes on without
# numpy), and a SIGTERM from `clusterdoc cancel` landing then vanished: the job ran on until cancel stopped the
# ranks itself after its 30 s, and the supervisor recorded their deaths (FAILED, not CANCELLED).
_cancel_asked = False


def _raise_interrupt(signum, frame):
    global _cancel_asked
    _cancel_asked = True  # first: the exception below may be swallowed, this flag is not
    raise KeyboardInterrupt


def hold_signals() -> None:
    """Once cancelling, a second Ctrl-C or signal must not cut the cancel short (it is bounded: STOP_GRACE per
    step, then SIGKILL) nor turn the exit code 130 into death by SIGINT: CI saw a late SIGINT do that."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


def cancel_on_signals() -> None:
    """Ctrl-C and `kill` both cancel the job (stop the ranks / scancel) and keep the logs. SIGINT is set
    explicitly: a shell starts background commands with it ignored, and Python keeps that."""
    global _cancel_asked
    _cancel_asked = False
    signal.signal(signal.SIGINT, _raise_interrupt)  # what default_int_handler does, and the flag
    signal.signal(signal.SIGTERM, _raise_interrupt)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _raise_interrupt)
