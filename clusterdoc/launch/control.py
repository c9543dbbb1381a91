"""A job on record, now: its live state, its status lines, its ranks' logs, and cancelling it. Data in, data out:
the CLI (launch/submit.py's *_main) and the Python API (api.Job) both render what these return.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.jobs import slurmcmd
from clusterdoc.jobs.folder import JobDir
from clusterdoc.launch import lifeline
from clusterdoc.launch.backend import of_record
from clusterdoc.launch.job import format_command
from clusterdoc.launch.outcome import Outcome, describe_code
from clusterdoc.untrusted import printable


@dataclass
class Cancelled:
    """What `cancel` did: `state` is "cancelled", "ended" (nothing left to stop) or "failed" (the scheduler did not
    answer: the job may still run); `message` says it in one line."""

    job: str
    state: str
    message: str

    @property
    def ok(self) -> bool:
        return self.state != "failed"


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
    backend = of_record(rec)
    if backend.scheduler and rec.get("backend_id"):
        job = f"{backend.name} job {rec['backend_id']}"  # live_state checks the id before the scheduler sees it
        try:
            now = backend.live_state(jd, rec)
        except slurmcmd.Unreachable as exc:
            away = f"the {backend.scheduler} controller does not answer ({exc}): {job} may still be running"
            return "UNKNOWN", f"{away}; {note}" if note else away
        if now is None and gone:
            forgot = f"{backend.scheduler} no longer knows job {rec['backend_id']}"
            return "UNKNOWN", f"{note}; {forgot}: how it ended is not known"
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


def cancel(jd: JobDir, grace: float = 30.0) -> Cancelled:
    """Stop a job's live ranks, on every backend: through its launcher if it is alive (it stops the ranks
    its own way and records CANCELLED), scancel for Slurm, and the recorded processes if nothing else is left.
    What job.json says is data (its owner may have edited it): a Slurm id must look like one, and a recorded
    process is signalled only while it is the very process recorded (pid and start time)."""
    rec = jd.read()
    state = live_state(jd, rec)
    if state not in ("PENDING", "RUNNING", "LOST", "UNKNOWN"):
        return Cancelled(jd.id, "ended", f"job {jd.id} has already ended ({state})")
    failed = of_record(rec).cancel(jd, rec)  # Slurm: scancel, tried again while away
    if failed:
        return Cancelled(
            jd.id,
            "failed",
            f"could not cancel slurm job {rec.get('backend_id')}: the Slurm controller does not answer "
            f"({failed}); it may still be running: try again once it answers (scontrol ping)",
        )
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
    return Cancelled(jd.id, "cancelled", f"job {jd.id} cancelled")


def status(jd: JobDir) -> tuple[list[str], int]:
    """(the lines `clusterdoc status` prints, unescaped; its exit code: 0 when the job completed or still runs)."""
    rec = jd.read()
    try:  # job.json is data from the job folder: a field of another shape is a usage error, not a traceback
        return _status_lines(jd, rec)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise UsageError(
            f"{printable(jd.record_path)}: not a valid clusterdoc job record ({type(exc).__name__}: "
            f"{printable(exc, 120)})",
            hint="it was edited or cut short; the ranks' own files are in the same folder ('clusterdoc logs')",
        ) from None


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


ALIVE_STATES = ("COMPLETED", "RUNNING", "PENDING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED")


def slurm_status(job_id: str, not_ours: str) -> tuple[list[str], int]:
    """`clusterdoc status` of a Slurm job clusterdoc did not start (or whose folder is not here): the controller's
    word while it knows the job, accounting's (sacct) once it has forgotten it. `not_ours`: why no clusterdoc job
    was found (the error when Slurm does not know the job either)."""
    from clusterdoc.jobs import sacct

    jid = slurmcmd.checked_id(job_id, "JOB")
    try:
        info = slurmcmd.read_job(jid)
    except slurmcmd.Unreachable as exc:
        info, away = {}, str(exc)
    else:
        away = ""
    acc = None if info else sacct.query(jid)
    if not info and not acc:
        raise UsageError(
            f"{not_ours}; Slurm does not know job {printable(job_id)}"
            + (f" (its controller does not answer: {away})" if away else " any more, and keeps no accounting of it"),
            hint="give a job id printed by 'clusterdoc submit', its log folder, or --folder ROOT",
        )
    if info:
        state = info.get("JobState") or "UNKNOWN"
        out = [f"slurm job {jid}: {state}", "  from    the Slurm controller (scontrol); not started by clusterdoc"]
        out.append(f"  nodes   {info.get('NodeList') or '?'}")
        if info.get("Reason") and info["Reason"] != "None":
            out.append(f"  reason  {info['Reason']}")
        if info.get("ExitCode"):
            out.append(f"  exit    {info['ExitCode']}")
        out += [f"  output  {info[k]}" for k in ("StdOut", "StdErr") if info.get(k)][:1]
    else:
        assert acc is not None
        state = acc.state
        out = [
            f"slurm job {jid}: {state}"
            + (f" by {sacct.user_name(acc.cancelled_by)}" if acc.cancelled_by is not None else ""),
            "  from    accounting (sacct): the controller no longer knows the job; not started by clusterdoc"
            + (f" (the controller does not answer: {away})" if away else ""),
            f"  nodes   {acc.nodes}",
            f"  exit    {acc.exit_code}"
            + (f" (derived {acc.derived_exit_code})" if acc.derived_exit_code not in ("", "0:0") else ""),
        ]
        if acc.reason and acc.reason != "None":
            out.append(f"  reason  {acc.reason}")
        if acc.elapsed:
            out.append(f"  ran     {acc.elapsed}" + (f" (time limit {acc.time_limit})" if acc.time_limit else ""))
        if acc.steps:
            out.append(f"  steps   {acc.step_states()}")
        output = sacct.default_output(acc)
        if output:
            out.append(f"  output  {output}")
    out.append(f"  why     clusterdoc why {jid}")
    return out, 0 if state in ALIVE_STATES else 1
