"""One campaign job: submit the small checkpointing job, wait for the fault's moment, plant it, wait for the end,
heal the cluster, gather what the job left and check the invariants (invariants.py)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.faults import invariants
from tests.faults.catalog import CATALOG, Fault, Planted
from tests.faults.unlisted import UNLISTED

FAULTS = {**CATALOG, **UNLISTED}  # the catalog, and the faults in no list (asked for by --kinds only)

JOB = Path(__file__).with_name("job.py")
STEPS, EVERY, STEP_TIME = 12, 4, 0.2
NODES = 3  # the job's nodes; the cluster has one more, for the attempt without a failed node
HANG = 15  # --hang-timeout
PER_ATTEMPT = 150.0  # seconds an attempt may take on 2 loaded cores, start to records (the stated bound)
INIT_TIMEOUT = 30  # the ranks' rendezvous timeout (CLUSTERDOC_INIT_TIMEOUT; default 300)
LINGER = 30.0  # seconds after the end by which nothing of the job may be left


@dataclass
class Ctx:
    cluster: object
    backend: str
    env: dict
    planted: Planted
    job_dir: Path = Path("/nonexistent")

    def clusterdoc_argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "clusterdoc", *args]

    def start_record(self, rank: int) -> dict | None:
        try:
            rec = json.loads((self.job_dir / f"rank{rank}.start").read_text())
        except (OSError, ValueError):
            return None
        return rec if isinstance(rec, dict) else None


@dataclass
class Result:
    fault: str
    at: str
    backend: str
    rank: int
    node: str | None = None
    step: int = 0
    landed: bool = True
    rc: int | None = None
    elapsed: float = 0.0
    bound: float = 0.0
    state: str | None = None  # the final state submit said
    said: str = ""  # submit's last line
    first_state: str | None = None
    recorded_state: str | None = None
    why: dict | None = None
    attempts: list = field(default_factory=list)
    hosts2: list = field(default_factory=list)
    ckpt_before: int = 0
    resumed: int | None = None
    ckpt_last: int = 0  # the last checkpoint attempt 1 (or the run before a requeue) wrote
    reached: int = 0  # the last step rank 0 reached, in the end
    finished: bool = False  # rank 0 did all its steps, in the end
    requeued_said: bool = False  # submit said the job was requeued
    requeued_after: list = field(default_factory=list)  # the failed nodes submit said Slurm requeued it after
    before: str = ""
    after: str = ""
    leftovers: list = field(default_factory=list)
    record_problems: list = field(default_factory=list)
    submit_err: str = ""
    note: str = ""
    violations: list = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)

    def report(self) -> dict:
        """The report's entry (issue 43's shape, and a few facts to read a violation by)."""
        w = self.why or {}
        culprit = ",".join(w.get("nodes") or []) or ",".join(f"rank {r}" for r in w.get("ranks") or []) or None
        return {"fault": self.fault, "at": self.at, "outcome": self.state, "why": w.get("category"),
                "culprit": culprit, "violations": self.violations, "rank": self.rank, "node": self.node,
                "step": self.step, "landed": self.landed, "rc": self.rc, "elapsed": round(self.elapsed, 1),
                "attempts": len(self.attempts), "headline": (w.get("headline") or "")[:300], "note": self.note}  # fmt: skip


def expectations(fault: type[Fault]) -> dict:
    return {"outcome": fault.outcome, "also": list(getattr(fault, "also", ())), "why": list(fault.why),
            "culprit": fault.culprit, "retried": fault.retried, "requeued": getattr(fault, "requeued", False),
            "quiet": getattr(fault, "quiet", False)}  # fmt: skip


def draw(rng: random.Random, kinds: list[str]) -> tuple[str, str, int, int]:
    """(kind, moment, victim rank, step): the same seed, the same draws."""
    kind = rng.choice(kinds)
    moment = rng.choice(FAULTS[kind].moments)
    rank = rng.randrange(NODES)
    step = {"start": 0, "step": rng.randint(1, STEPS - 1), "ckpt": EVERY * rng.randint(1, STEPS // EVERY - 1),
            "exit": STEPS}.get(moment, 0)  # fmt: skip  # "limit": the scheduler's own moment
    return kind, moment, rank, step


def backend_args(cluster, backend: str) -> list[str]:
    if backend == "mpirun":
        return ["--backend", "mpirun", "--hostfile", str(cluster.hostfile("plain")), "--ssh-config",
                str(cluster.ssh_config), "--mpirun", str(cluster.mpirun)]  # fmt: skip
    return ["--backend", backend]


def clean_env(cluster, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    # a rank that never reaches the rendezvous (stopped, killed before it) fails its peers' join after INIT_TIMEOUT
    return {**env, **cluster.env(), "HOME": str(home), "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "CLUSTERDOC_INIT_TIMEOUT": str(INIT_TIMEOUT)}  # fmt: skip


def read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def wait_until(check, timeout: float, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            return check()
        time.sleep(0.1)
    return None


def marker(ctx: Ctx, moment: str, step: int) -> bool:
    if moment == "start":
        return ctx.start_record(ctx.planted.rank) is not None
    out = read(ctx.job_dir / "rank0.out")
    if moment == "ckpt":
        return f"checkpoint at step {step}\n" in out
    return f"rank 0: step {step}\n" in out


def ours(run: Path) -> list[str]:
    """The processes (anywhere on this machine: the nodes share its process table) whose command names the
    job's run folder: its ranks, launchers and supervisor."""
    out, me = [], os.getpid()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == me:
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = next((ln for ln in (p / "status").read_text().splitlines() if ln.startswith("State:")), "")
        except OSError:
            continue
        if str(run) in cmd and " Z " not in f" {state.split(':')[-1].strip()[:1]} ":
            out.append(f"{p.name} {cmd.strip()}")
    return out


def sweep(run: Path, env: dict) -> None:
    """Whatever is left is stopped, and Slurm's jobs cancelled, so the next job starts on a clean cluster."""
    for line in ours(run):
        try:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    if "SLURM_CONF" in env:
        ids = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True, timeout=30)
        for i in ids.stdout.split():
            subprocess.run(["scancel", i], env=env, capture_output=True, timeout=30)


def run_one(cluster, backend: str, kind: str, moment: str, rank: int, step: int, run: Path) -> Result:
    fault_cls = FAULTS[kind]
    fault = fault_cls()
    run.mkdir(parents=True)
    env = clean_env(cluster, run)
    ctx = Ctx(cluster, backend, env, Planted(run, rank, step=step))
    res = Result(kind, moment, backend, rank, step=step)
    res.bound = max(HANG, INIT_TIMEOUT) + PER_ATTEMPT * (2 if fault.retried else 1) + getattr(fault, "outage", 0) + getattr(
        fault, "pause", 0)  # fmt: skip
    getattr(fault, "prepare", lambda ctx: None)(ctx)  # the fault's ground (a small file system for the job folder)
    if fault.before_submit:
        fault.plant(ctx)
    argv = ctx.clusterdoc_argv("submit", *backend_args(cluster, backend), "--nodes", str(NODES), "--no-preflight",
                               "--retries", "1", "--wait", "--hang-timeout", str(HANG),
                               *getattr(fault, "submit_args", ()), str(JOB), "--steps",
                               str(STEPS), "--every", str(EVERY), "--step-time", str(STEP_TIME), "--ckpt",
                               str(run / "ckpt"), "--faults", str(run / "faults"),
                               *getattr(fault, "job_args", ()))  # fmt: skip
    started = time.monotonic()
    with open(run / "submit.err", "w") as err:
        proc = subprocess.Popen(argv, cwd=run, env=env, stdout=err, stderr=err, start_new_session=True)
    try:
        jobs = run / "clusterdoc-jobs"
        found = wait_until(lambda: next(iter(jobs.iterdir()), None) if jobs.is_dir() else None, 120, proc)
        ctx.job_dir = found or ctx.job_dir
        if not fault.before_submit:
            if wait_until(lambda: marker(ctx, moment, step), res.bound, proc) and proc.poll() is None:
                ctx.planted.node = (ctx.start_record(rank) or {}).get("host")
                res.before = read(ctx.job_dir / "rank0.out")
                fault.plant(ctx)
            else:
                ctx.planted.landed = False
        try:
            res.rc = proc.wait(timeout=max(1.0, res.bound - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:  # over its bound (a violation): cancelled as a user would, then killed
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        res.elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            fault.heal(ctx)
        except Exception as exc:  # noqa: BLE001 - a heal that failed is said, the campaign goes on
            ctx.planted.note += f" heal failed: {exc}"
    res.node = ctx.planted.node or (ctx.start_record(rank) or {}).get("host")
    res.landed, res.note = ctx.planted.landed, ctx.planted.note
    gather(ctx, res)
    deadline = time.monotonic() + LINGER
    while (left := ours(run)) and time.monotonic() < deadline:
        time.sleep(1)
    res.leftovers = left
    sweep(run, env)
    try:
        getattr(fault, "release", lambda ctx: None)(ctx)
    except Exception as exc:  # noqa: BLE001 - said, the campaign goes on
        res.note += f" release failed: {exc}"
    res.violations = invariants.check(res.to_json(), expectations(fault_cls))
    return res


def gather(ctx: Ctx, res: Result) -> None:
    jd = ctx.job_dir
    res.submit_err = read(ctx.planted.run / "submit.err")[-200_000:]
    lines = [ln for ln in res.submit_err.splitlines() if ln.startswith("clusterdoc submit: ")]
    res.said = lines[-1] if lines else ""
    m = re.match(r"clusterdoc submit: job (\w+)", res.said)
    res.state = m.group(1).upper() if m else ("CANCELLED" if "cancelled" in res.said else None)
    try:
        rec = json.loads((jd / "job.json").read_text())
    except (OSError, ValueError) as exc:
        res.record_problems.append(f"job.json does not parse: {exc}")
        return
    res.recorded_state = rec.get("state")
    res.attempts = [{k: a.get(k) for k in ("n", "exclude", "outcome", "why")} for a in rec.get("attempts") or []]
    for a in res.attempts:
        if not isinstance(a.get("outcome"), dict):
            res.record_problems.append(f"attempt {a.get('n')} has no outcome")
    first = res.attempts[0] if res.attempts else {}
    res.first_state = (first.get("outcome") or {}).get("state")
    res.why = first.get("why")
    if res.why is None and res.first_state not in (None, "COMPLETED"):
        why = subprocess.run(ctx.clusterdoc_argv("why", jd.name, "--attempt", "1", "--json", "--no-probe"),
                             cwd=ctx.planted.run, env=ctx.env, capture_output=True, text=True, timeout=120)  # fmt: skip
        try:
            got = json.loads(why.stdout)
            cause = got.get("cause") or {}
            res.why = {"category": cause.get("category"), "headline": cause.get("headline"),
                       "nodes": cause.get("nodes"), "ranks": cause.get("ranks"),
                       "candidates": cause.get("candidates")}  # fmt: skip
        except ValueError:
            res.record_problems.append(f"why --json did not answer JSON: {(why.stdout + why.stderr)[-300:]}")
    two = len(res.attempts) > 1
    res.after = read(jd / "attempt1" / "rank0.out") if two else read(jd / "rank0.out")
    res.ckpt_before = max((int(s) for s in re.findall(r"checkpoint at step (\d+)", res.before)), default=0)
    final = read(jd / "rank0.out")
    res.finished = "rank 0: done after" in final
    res.reached = max((int(s) for s in re.findall(r"rank 0: step (\d+)\n", final)), default=0)
    res.requeued_said = "requeued" in res.said or any("requeued" in ln for ln in lines)
    # the run before the rerun: attempt 1's output, or (a requeue: one attempt, the runs appended to one file)
    # what came before the last run's "ready at step N" (N: where it started, 0 without a checkpoint)
    runs = list(re.finditer(r"rank 0: ready at step (\d+)\n", final))
    first_out = read(jd / "attempt1" / "rank0.out") if two else final[: runs[-1].start()] if len(runs) > 1 else ""
    res.ckpt_last = max((int(s) for s in re.findall(r"checkpoint at step (\d+)", first_out)), default=0)
    said_after = re.search(r"requeued by Slurm [^(\n]*\(after ([\w.,\- ]+) failed\)", res.said)
    res.requeued_after = [n.strip() for n in said_after.group(1).split(",")] if said_after else []
    if not two and len(runs) > 1:  # a requeue: the second run under the same job id
        res.resumed = int(runs[-1].group(1))
        res.hosts2 = sorted({(ctx.start_record(r) or {}).get("host") or "?" for r in range(NODES)})
    if two:
        res.hosts2 = sorted({(ctx.start_record(r) or {}).get("host") or "?" for r in range(NODES)})
        m2 = re.search(r"resumed from step (\d+)", read(jd / "rank0.out"))
        res.resumed = int(m2.group(1)) if m2 else None
