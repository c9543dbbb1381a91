"""`clusterdoc submit`, `status`, `logs`: settings, backend choice, preflight, attempts, waiting, reporting.

The backends (local.py, slurm.py, mpi.py) only start ranks, poll them and cancel them; everything a user
sees about a job's life is decided here, the same for all of them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from clusterdoc import config, private
from clusterdoc.errors import UsageError
from clusterdoc.hang import channel, seal
from clusterdoc.jobs import slurmcmd
from clusterdoc.launch import lifeline
from clusterdoc.launch.backend import Handle, backend_for, by_affinity
from clusterdoc.launch.hangwatch import HangWatch
from clusterdoc.launch.job import (
    JobDir,
    JobSpec,
    default_root,
    discard,
    find_job,
    format_command,
    get_arg,
    init_job_dir,
    reserve_job_dir,
    set_arg,
)
from clusterdoc.launch.options import SubmitOptions
from clusterdoc.launch.outcome import Outcome, describe_code
from clusterdoc.launch.stream import LogStreamer
from clusterdoc.untrusted import printable, printable_lines

BATCH_ARGS = ("batch-size", "batch_size", "per-device-batch-size", "per_device_train_batch_size", "bs")


# --- settings -> spec ----------------------------------------------------------------------------


def resolve_settings(opts: SubmitOptions) -> tuple[dict, dict]:
    return config.resolve(opts.flags(), explicit_config=opts.config)


def resolve(opts: SubmitOptions) -> tuple[JobSpec, dict, str]:
    """(the job every backend runs, the resolved settings, why that backend): flag > env > config file > default."""
    settings, origin = resolve_settings(opts)
    backend, why = backend_and_why(settings, origin)
    return build_spec(settings, opts.script, list(opts.script_args), backend), settings, why


def parse_oom_retry(value: str | None, script_args: list[str]) -> tuple[str, int] | None:
    """`batch-size` or `batch-size:8` (minimum) -> ("batch-size", 8). The script must get --ARG."""
    if not value:
        return None
    name, _, minimum = value.lstrip("-").partition(":")
    if not name:
        raise UsageError(f"--oom-retry needs the name of the script's argument, e.g. 'batch-size', not {value!r}")
    try:
        low = int(minimum) if minimum else 1
    except ValueError:
        raise UsageError(f"--oom-retry {value!r}: the minimum after ':' must be an integer") from None
    current = get_arg(script_args, name)
    if current is None:
        raise UsageError(
            f"--oom-retry {name}: the script's arguments have no --{name} to lower",
            hint=f"pass it after the script, e.g. 'clusterdoc submit --oom-retry {name} train.py --{name} 64'",
        )
    if not current.isdigit() or int(current) < max(low, 1):
        raise UsageError(f"--oom-retry {name}: --{name} {current!r} must be an integer of at least {max(low, 1)}")
    return name, max(low, 1)


def choose_backend(settings: dict) -> str:
    return backend_and_why(settings, {})[0]


def backend_and_why(settings: dict, origin: dict, environ=os.environ) -> tuple[str, str]:
    """The backend and why, in words for the first line of every submit: the choice changes with the
    environment (an exported SLURM_CONF sends the next job to Slurm), so the user must see it."""
    chosen = settings["backend"]
    if chosen != "auto":
        where = origin.get("backend", "flag")
        if where in ("flag", "default"):
            return chosen, f"--backend {chosen}"
        elsewhere = "" if chosen == "local" else "; --backend local to run here"
        return chosen, (f"{where}={chosen}" if where.startswith(config.ENV_PREFIX) else f"set in {where}") + elsewhere
    return by_affinity(settings, environ)


def build_spec(settings: dict, script: str, script_args: list[str], backend: str) -> JobSpec:
    path = Path(script).expanduser()
    if not path.is_file():
        raise UsageError(f"script not found: {script}")
    gpus = settings["gpus_per_node"] or 0
    tasks = settings["tasks_per_node"] or (gpus if gpus > 0 else 1)
    for key in ("hostfile", "ssh_config"):
        if settings[key] and not Path(settings[key]).expanduser().is_file():
            raise UsageError(f"--{key.replace('_', '-')} {settings[key]!r} does not exist")
    backend_for(backend).validate(settings)
    if backend == "mpirun":
        from clusterdoc import hostfile

        count = len(hostfile.parse_file(settings["hostfile"]))
        if count < settings["nodes"]:
            raise UsageError(
                f"--nodes {settings['nodes']} but the hostfile lists {count} host(s)", where=settings["hostfile"]
            )
    parse_oom_retry(settings["oom_retry"], script_args)
    if settings["straggler"] >= 100:
        raise UsageError(
            f"--straggler {settings['straggler']}: a percentage of the step below 100",
            hint="e.g. --straggler 10 (the default), or 0 to switch the straggler watch off",
        )
    return JobSpec(
        script=str(path.absolute()),
        script_args=list(script_args),
        backend=backend,
        nodes=settings["nodes"],
        tasks_per_node=tasks,
        gpus_per_node=gpus,
        hostfile=_abs(settings["hostfile"]),
        ssh_config=_abs(settings["ssh_config"]),
        partition=settings["partition"],
        time=settings["time"],
        debug=settings["debug"],
        log_level=settings["log_level"],
        overflow=settings["overflow"],
        oom_retry=settings["oom_retry"],
        mpirun=settings["mpirun"],
        preflight=not settings["no_preflight"],
        python=settings["python"] or sys.executable,
        hang_timeout=settings["hang_timeout"],
        on_hang=settings["on_hang"],
        trace=settings["trace"],
        straggler=settings["straggler"],
        port=settings["port"],
        retries=settings["retries"],
        slurm_wait=settings["slurm_wait"],
    )


def _abs(p: str | None) -> str | None:
    return str(Path(p).expanduser().absolute()) if p else None


def check_ready(spec: JobSpec) -> None:
    """What the backend can know before anything starts (Slurm: sbatch, slurm.conf, the controller)."""
    backend_for(spec.backend).check_ready()


# --- effective batch note ------------------------------------------------------------------------


def batch_note(spec: JobSpec, root: Path) -> str | None:
    """When this script last ran on another shape, say what happens to the effective batch."""
    prev = None
    for rec_path in sorted(root.glob("*/job.json"), key=_mtime, reverse=True):
        try:
            rec = private.read_json(rec_path)
        except (OSError, ValueError):
            continue
        found = rec.get("spec") if isinstance(rec, dict) else None
        if isinstance(found, dict) and found.get("script") == spec.script:
            prev = found
            break
    if prev is None or not all(isinstance(prev.get(k), (int, type(None))) for k in ("nodes", "tasks_per_node")):
        return None
    old = (prev.get("nodes"), prev.get("tasks_per_node"), prev.get("gpus_per_node"))
    if old == (spec.nodes, spec.tasks_per_node, spec.gpus_per_node):
        return None
    old_world = (prev.get("nodes") or 1) * (prev.get("tasks_per_node") or 1)
    shape = f"{spec.nodes} node(s) x {spec.gpus_per_node} GPU(s), {spec.world_size} ranks"
    old_shape = f"{old[0]} node(s) x {old[2]} GPU(s), {old_world} ranks"
    names = ([spec.oom_retry.split(":")[0].lstrip("-")] if spec.oom_retry else []) + list(BATCH_ARGS)
    per_rank = next((get_arg(spec.script_args, n) for n in names if get_arg(spec.script_args, n)), None)
    if per_rank and per_rank.isdigit():
        b = int(per_rank)
        return (
            f"note: {old_shape} -> {shape}: effective batch = per-GPU batch {b} x world size = "
            f"{b * spec.world_size} (was {b * old_world}); scale the learning rate or the per-GPU batch"
        )
    return (
        f"note: {old_shape} -> {shape}: the effective batch is per-GPU batch x world size, "
        f"so it changes by {spec.world_size}/{old_world}"
    )


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


# --- preflight -----------------------------------------------------------------------------------


def preflight(spec: JobSpec, job_id: str, out=sys.stderr) -> None:
    """The doctor on the job's nodes; raises PreflightFailed (with the report) when it finds problems."""
    ok, text = backend_for(spec.backend).preflight(spec, job_id)
    if text and out is not None:
        print(text, file=out)
    if not ok:
        raise PreflightFailed(text)


class PreflightFailed(Exception):
    """The preflight found problems: the job was not submitted. str() is the doctor's report."""


# --- running attempts ----------------------------------------------------------------------------


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
        if spec.backend != "local" and stream:
            print(
                f"{spec.backend} job {handle.backend_id} {'submitted' if spec.backend == 'slurm' else 'started'}",
                file=err,
            )
        watch = HangWatch(jd, spec.world_size, spec.on_hang, err) if spec.hang_timeout > 0 else None
        try:
            outcome = wait_for(handle, streamer, backend.poll_interval, watch)
        except KeyboardInterrupt:
            _hold_signals()
            failed = handle.cancel()  # Slurm: what scancel said when the controller stayed away
            if streamer:
                streamer.pump(final=True)
            outcome = Outcome(state="CANCELLED", message="cancelled (Ctrl-C or a signal to clusterdoc submit)")
            if failed:
                outcome = Outcome(
                    state="UNKNOWN",
                    message=f"could not cancel slurm job {handle.backend_id}: the controller does not answer "
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
        final = outcome.ok or outcome.state in ("CANCELLED", "UNKNOWN")
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
    from clusterdoc.launch import retry

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


def wait_for(handle: Handle, streamer: LogStreamer | None, interval: float, watch: HangWatch | None = None) -> Outcome:
    while True:
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


# --- commands -----------------------------------------------------------------------------------


def start(opts: SubmitOptions) -> JobDir:
    """Preflight, then the job under a detached supervisor (what `clusterdoc.submit()` does): returns at once."""
    spec, settings, _why = resolve(opts)
    check_ready(spec)
    jd = reserve_job_dir(default_root(settings["folder"]), spec.backend)  # its id: the rendezvous port's seed
    try:
        if spec.preflight:
            preflight(spec, jd.id, out=None)
        init_job_dir(jd, spec)
    except BaseException:
        discard(jd)
        raise
    detach(spec, jd, quiet=True)
    return jd


def main(opts: SubmitOptions) -> int:
    """`clusterdoc submit`: with --wait (the default for local) streams the ranks' output until the end."""
    spec, settings, why = resolve(opts)
    backend = spec.backend
    print(f"backend: {backend} ({why})", file=sys.stderr, flush=True)
    check_ready(spec)
    root = default_root(settings["folder"])
    wait = settings["wait"] if settings["wait"] is not None else backend == "local"
    note = batch_note(spec, root) if root.is_dir() else None
    if note:
        print(note, file=sys.stderr)
    jd = reserve_job_dir(root, backend)  # its id is known before the preflight: the rendezvous port derives from it
    try:
        if not settings["no_preflight"]:
            preflight(spec, jd.id)
        init_job_dir(jd, spec)
    except PreflightFailed:
        discard(jd)
        print(
            "clusterdoc submit: preflight found problems; job not submitted "
            "(fix them, or pass --no-preflight to submit anyway)",
            file=sys.stderr,
        )
        return 1
    except BaseException:
        discard(jd)
        raise
    print(
        f"job {jd.id} ({backend}, {spec.nodes} node(s) x {spec.tasks_per_node} rank(s)); logs: {jd.path}",
        file=sys.stderr,
    )
    if not wait:
        return detach(spec, jd)
    _cancel_on_signals()
    try:
        outcome = run_attempts(spec, jd, stream=True)
    except KeyboardInterrupt:
        _hold_signals()
        print(f"clusterdoc submit: cancelled; logs kept in {jd.path}", file=sys.stderr)
        return 130
    print(f"clusterdoc submit: {outcome.describe()} (logs: {jd.path})", file=sys.stderr)
    return 0 if outcome.ok else 1


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _hold_signals() -> None:
    """Once cancelling, a second Ctrl-C or signal must not cut the cancel short (it is bounded: STOP_GRACE per
    step, then SIGKILL) nor turn the exit code 130 into death by SIGINT: CI saw a late SIGINT do that."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


def _cancel_on_signals() -> None:
    """Ctrl-C and `kill` both cancel the job (stop the ranks / scancel) and keep the logs. SIGINT is set
    explicitly: a shell starts background commands with it ignored, and Python keeps that."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _raise_interrupt)


def detach(spec: JobSpec, jd: JobDir, quiet: bool = False) -> int:
    """--no-wait: a supervisor in its own session runs the attempts (stops ranks on failure, OOM retries)."""
    log = private.open_append(jd.path / "supervisor.log", True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterdoc.launch.submit", "--supervise", str(jd.path)],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=spec.cwd,
    )
    log.close()
    jd.update(supervisor_pid=proc.pid, supervisor_start=lifeline.start_time(proc.pid))
    # Slurm's id is worth waiting a moment for: it is what users pass to squeue / scancel
    if spec.backend == "slurm":
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not jd.read().get("backend_id"):
            time.sleep(0.2)
        rec = jd.read()
        bid = rec.get("backend_id")
        if not bid and proc.poll() is not None:  # sbatch refused it: say why instead of an id
            why = (rec.get("outcome") or {}).get("message") or f"see {jd.path / 'supervisor.log'}"
            if quiet:
                raise UsageError(f"job {jd.id} was not submitted: {why}")
            print(f"clusterdoc submit: job {jd.id} was not submitted: {why}", file=sys.stderr)
            return 1
        if bid and not quiet:
            print(f"slurm job {bid}", file=sys.stderr)
    if not quiet:
        print(jd.id)
    return 0


def supervise(path: str) -> int:
    jd = JobDir(Path(path))
    rec = jd.read()
    spec = JobSpec(**rec["spec"])
    _cancel_on_signals()  # `clusterdoc cancel` sends SIGTERM: stop the ranks, record CANCELLED
    try:
        outcome = run_attempts(spec, jd, stream=False)
    except KeyboardInterrupt:
        return 130
    except UsageError as exc:  # could not start (sbatch refused it): on record already, for `status`
        print(f"clusterdoc: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - recorded for `clusterdoc status`
        jd.update(state="FAILED", outcome=Outcome(state="FAILED", message=f"supervisor error: {exc}").to_json())
        raise
    return 0 if outcome.ok else 1


def live_state(jd: JobDir, rec: dict) -> str:
    return live(jd, rec)[0]


def live(jd: JobDir, rec: dict) -> tuple[str, str]:
    """(the job's state now, what the record alone does not say). A job recorded running whose submit process
    is gone (killed: it could not record the end) is Slurm's word if Slurm has one, else LOST / UNKNOWN; a Slurm
    controller that does not answer makes it UNKNOWN, never ended."""
    state = rec.get("state", "UNKNOWN")
    if state not in ("PENDING", "RUNNING", "UNKNOWN"):
        return state, ""
    pid = rec.get("supervisor_pid")
    gone = state != "UNKNOWN" and bool(pid) and not supervisor_alive(rec)  # UNKNOWN: submit gave up, on record
    note = (
        f"clusterdoc submit (pid {pid}) is gone (killed?) before it recorded the end: this attempt's outcome, "
        "its retries and its hang watch were not done"
        if gone
        else ""
    )
    backend = backend_for(rec["spec"]["backend"])
    if backend.name == "slurm" and rec.get("backend_id"):
        job_id = slurmcmd.checked_id(rec["backend_id"], jd.record_path)
        try:
            now = backend.live_state(jd, rec)
        except slurmcmd.Unreachable as exc:
            away = f"the Slurm controller does not answer ({exc}): slurm job {job_id} may still be running"
            return "UNKNOWN", f"{away}; {note}" if note else away
        if now is None and gone:
            return "UNKNOWN", f"{note}; Slurm no longer knows job {job_id}: how it ended is not known"
        return now or state, note
    if gone:
        return "LOST", note
    return state, ""


def supervisor_alive(rec: dict) -> bool:
    """The job's launcher still runs: its pid is alive and is the process recorded (a record from before start
    times were kept: the pid is alive)."""
    pid = rec.get("supervisor_pid")
    if "supervisor_start" in rec:
        return lifeline.same_process(pid, rec["supervisor_start"])
    return isinstance(pid, int) and pid > 0 and _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def cancel_main(job: str, folder: str | None, grace: float = 30.0, quiet: bool = False) -> int:
    """Stop a job's live ranks, on every backend: through its launcher if it is alive (it stops the ranks
    its own way and records CANCELLED), scancel for Slurm, and the recorded processes if nothing else is left.
    What job.json says is data (its owner may have edited it): a Slurm id must look like one, and a recorded
    process is signalled only while it is the very process recorded (pid and start time)."""
    jd = find_job(job, folder)
    rec = jd.read()
    state = live_state(jd, rec)
    if state not in ("PENDING", "RUNNING", "LOST", "UNKNOWN"):
        if not quiet:
            print(f"job {jd.id} has already ended ({state})")
        return 0
    failed = backend_for(rec["spec"]["backend"]).cancel(jd, rec)  # Slurm: scancel, tried again while away
    if failed:
        job_id = rec.get("backend_id")
        print(
            f"clusterdoc cancel: could not cancel slurm job {job_id}: the Slurm controller does not answer "
            f"({failed}); it may still be running: try again once it answers (scontrol ping)",
            file=sys.stderr,
        )
        return 1
    pid, started = rec.get("supervisor_pid"), rec.get("supervisor_start")
    if isinstance(pid, int) and lifeline.same_process(pid, started):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while lifeline.same_process(pid, started) and time.monotonic() < deadline:
            time.sleep(0.2)
    pids, starts = rec.get("pids") or [], rec.get("pid_starts") or []
    recorded = list(zip(pids, starts)) if isinstance(pids, list) and isinstance(starts, list) else []
    left = [(p, s) for p, s in recorded if lifeline.same_process(p, s)]
    for sig in (signal.SIGTERM, signal.SIGKILL):  # the launcher was gone (LOST) or did not finish
        for p, s in left:
            if lifeline.same_process(p, s):
                try:
                    os.killpg(p, sig)  # each rank leads its own session (local, mpirun)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + 5
        while (
            sig == signal.SIGTERM and any(lifeline.same_process(p, s) for p, s in left) and time.monotonic() < deadline
        ):
            time.sleep(0.2)
    rec = jd.read()
    if rec.get("state") in ("PENDING", "RUNNING", "UNKNOWN"):  # UNKNOWN: submit gave up on an away controller
        jd.update(state="CANCELLED", ended=time.time())
    if not quiet:
        print(f"job {jd.id} cancelled")
    return 0


def status_main(job: str, folder: str | None) -> int:
    jd = find_job(job, folder)
    rec = jd.read()
    try:  # job.json is data from the job folder: a field of another shape is a usage error, not a traceback
        lines, code = _status_lines(jd, rec)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise UsageError(
            f"{printable(jd.record_path)}: not a valid clusterdoc job record ({type(exc).__name__}: "
            f"{printable(exc, 120)})",
            hint="it was edited or cut short; the ranks' own files are in the same folder ('clusterdoc logs')",
        ) from None
    for line in lines:  # escaped: another user may have shaped the folder's files
        print(printable_lines(line))
    return code


def _status_lines(jd: JobDir, rec: dict) -> tuple[list[str], int]:
    spec = rec["spec"]
    state, note = live(jd, rec)
    world = spec["nodes"] * spec["tasks_per_node"]
    out = [f"job {rec['id']}: {state}"]
    out.append(
        f"  backend {spec['backend']}"
        + (f" (id {rec['backend_id']})" if rec.get("backend_id") else "")
        + f", {spec['nodes']} node(s) x {spec['tasks_per_node']} rank(s)"
    )
    if not isinstance(spec["script_args"], list) or not isinstance(spec["script"], str):
        raise TypeError("spec.script is not a path with a list of arguments")
    out.append(f"  script  {format_command([spec['script'], *map(str, spec['script_args'])])}")
    out.append(f"  logs    {jd.path}")
    attempts = rec.get("attempts") or []
    if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
        raise TypeError("attempts is not a list of records")
    reason = (rec.get("outcome") or {}).get("message") or ""
    if state == "LOST" and not reason:
        reason = f"its supervisor (pid {rec.get('supervisor_pid')}) ended without a word: see {jd.path}/supervisor.log"
    if reason and not any((a.get("outcome") or {}).get("message") == reason for a in attempts):
        out.append(f"  reason  {reason}")  # what no attempt line says: it never started, or its supervisor failed
    if note:
        out.append(f"  note    {note}")
    if not attempts and reason:
        return out, 0 if state in ("RUNNING", "PENDING") else 1  # it never started: no rank has anything to say
    for a in attempts:
        o = a.get("outcome")
        out.append(
            f"  attempt {a['n']}: {format_command([str(x) for x in a['script_args']])}: "
            + (
                Outcome(**{**o, "codes": {int(k): v for k, v in o["codes"].items()}}).describe()
                if o
                else "running"
                if state in ("RUNNING", "PENDING") and not note
                else f"not recorded (the job is {state} now)"
            )
        )
        why = a.get("why")
        if isinstance(why, dict) and why.get("category"):  # `clusterdoc why`'s verdict, kept at the attempt's end
            nodes = why.get("nodes") or []
            out.append(
                f"    why: {printable(why['category'], 40)}: {printable(why.get('headline'), 500)}"
                + (
                    f"; next attempt without {printable(', '.join(map(str, nodes)), 500)}"
                    if a.get("n") != len(rec["attempts"]) and why.get("retry") and nodes
                    else ""
                )
            )
    ranks = []
    for r in range(world):
        e = jd.rank_exit(r)
        ranks.append(
            f"rank {r}: "
            + (
                "running"
                if e is None and state == "RUNNING" and not note
                else "no exit record"
                if e is None
                else describe_code(e["code"])
            )
        )
    out.append("  " + "\n  ".join(ranks))
    return out, 0 if state in ("COMPLETED", "RUNNING", "PENDING") else 1


def rank_logs(jd: JobDir, rank: int | None) -> tuple[str, list[str]]:
    """(every line of the ranks' stdout then stderr, prefixed "[rank R] "; the files refused as symlinks)."""
    spec = jd.read()["spec"]
    world = spec["nodes"] * spec["tasks_per_node"]
    ranks = range(world) if rank is None else [rank]
    if rank is not None and not 0 <= rank < world:
        raise UsageError(f"--rank {rank}: job {jd.id} has ranks 0-{world - 1}")
    refused, lines = [], []
    for r in ranks:
        for path in (jd.out(r), jd.err(r)):
            if path.is_symlink():
                refused.append(path.name)
                continue
            try:
                text = private.read(path).decode("utf-8", "replace")
            except OSError:
                continue
            lines += [f"[rank {r}] {line}\n" for line in text.splitlines()]
    return "".join(lines), refused


def logs_main(job: str, folder: str | None, rank: int | None) -> int:
    jd = find_job(job, folder)
    text, refused = rank_logs(jd, rank)
    # all on stdout: this is the command's output, for grep and less; escaped (a rank's output, or a file
    # someone put in the folder, must not drive the terminal): the files themselves hold the raw bytes
    sys.stdout.write(printable_lines(text.removesuffix("\n")) + "\n" if text else "")
    sys.stdout.flush()
    if refused:
        print(
            f"clusterdoc logs: not following symlinks in {jd.path}: {', '.join(refused)} (a rank file must be "
            "a file the rank wrote; someone replaced it)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--supervise":
        raise SystemExit(supervise(sys.argv[2]))
    raise SystemExit("usage: python -m clusterdoc.launch.submit --supervise JOBDIR")
