"""The faults, each a real act on the test cluster (a signal to a rank's process, a node's processes killed,
slurmctld stopped, a user's cancel), or the job's own act (an exception, a simulated torch OOM, an early exit)
asked for by a file the job reads at each step (tests/faults/job.py). Each says what must follow: the outcome and
exit code of `submit`, the categories `why` may name (besides "unknown"), who it must name, whether --retries
reruns it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tests.cluster import limits
from tests.cluster.procs import read_pid

# the moments a fault can land at: before the rendezvous (the rank's start record is there, torch still
# importing), mid-step, right after a checkpoint, at the exit (after the last step)
MOMENTS = ("start", "step", "ckpt", "exit")


@dataclass
class Planted:
    """Where a fault lands: the job's run folder, the victim rank and its node, the step it lands at."""

    run: Path  # the campaign's folder for this job (checkpoints, the job's fault files)
    rank: int
    node: str | None = None
    step: int = 0
    landed: bool = True  # the act found what it acts on (a live process)
    note: str = ""


class Fault:
    name: ClassVar[str]
    moments: ClassVar[tuple[str, ...]] = ("start", "step", "ckpt")
    backends: ClassVar[tuple[str, ...]] = ("slurm", "mpirun", "local")
    outcome: ClassVar[str] = "FAILED"  # submit's final state
    why: ClassVar[tuple[str, ...]] = ()  # categories why may name for attempt 1 (besides unknown)
    culprit: ClassVar[str | None] = None  # "rank" or "node": why must name the victim
    retried: ClassVar[bool | str] = False  # --retries 1 runs a second attempt ("if node": when why blames it)
    before_submit: ClassVar[bool] = False  # planted before the job starts (the job's own acts)

    def plant(self, ctx) -> None:  # ctx: runner.Ctx
        raise NotImplementedError

    def heal(self, ctx) -> None:
        return None


def rank_pid(ctx, rank: int) -> int | None:
    rec = ctx.start_record(rank)
    pid = rec.get("pid") if rec else None
    return pid if isinstance(pid, int) and pid > 1 else None


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def signal_all(pids, sig: int) -> bool:
    """`sig` to each live pid (None skipped); True when it reached at least one."""
    hit = False
    for pid in pids:
        try:
            if pid:
                os.kill(pid, sig)
                hit = True
        except ProcessLookupError:
            pass
    return hit


def signal_rank(ctx, sig: int) -> bool:
    pid = rank_pid(ctx, ctx.planted.rank)
    if pid is None:
        return False
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


class Kill9(Fault):
    """SIGKILL from outside (the kernel's OOM killer, an admin): why.md counts a rank so killed, its node's only
    one here, with its peers losing its address, as that node's processes killed: `node`, rerun without it. Or
    unknown (Slurm gives no per-rank code). Never code."""

    name = "kill9"
    why = ("node",)
    culprit = "rank"
    retried = "if node"  # type: ignore[assignment]  # rerun exactly when why blamed the node

    def plant(self, ctx) -> None:
        ctx.planted.landed = signal_rank(ctx, signal.SIGKILL)


class StopForever(Fault):
    name = "stop"
    why = ("hang",)
    culprit = "rank"

    def plant(self, ctx) -> None:
        ctx.planted.landed = signal_rank(ctx, signal.SIGSTOP)


class StopWhile(Fault):
    name = "pause"
    outcome = "COMPLETED"
    pause = 3.0  # well under the hang timeout: the job goes on

    def plant(self, ctx) -> None:
        ctx.planted.landed = signal_rank(ctx, signal.SIGSTOP)
        time.sleep(self.pause)  # the fault itself: the rank is stopped this long
        signal_rank(ctx, signal.SIGCONT)


class JobAct(Fault):
    """The job's own act at a step (the file tests/faults/job.py reads): at `exit`, after the last step."""

    act: ClassVar[str]
    moments = ("start", "step", "ckpt", "exit")
    before_submit = True
    culprit = "rank"

    def plant(self, ctx) -> None:
        who = "all" if self.act == "exit1" else f"rank{ctx.planted.rank}"
        (ctx.planted.run / "faults").mkdir(parents=True, exist_ok=True)
        (ctx.planted.run / "faults" / f"{who}.{self.act}").write_text(f"{ctx.planted.step}\n")


class Exception_(JobAct):
    name = "exception"
    act = "exception"
    why = ("code",)


class Oom(JobAct):
    name = "oom"  # the job's own simulated torch.OutOfMemoryError (no GPU here): its message, its exit
    act = "oom"
    why = ("oom",)


class Exit0(JobAct):
    name = "exit0"  # one rank leaves early with code 0; its peers wait in the next collective
    act = "exit0"
    moments = ("start", "step", "ckpt")
    why = ("hang", "desync", "code")


class AllExit1(JobAct):
    name = "allexit1"  # every rank os._exit(1) (no exit record): a code failure, no node at fault (issue 43)
    act = "exit1"
    why = ("code",)
    culprit = None


class NodeKill(Fault):
    """Every process of the victim's node killed (its slurmd first), as when a node crashes; the node comes back
    (slurmd restarted, resumed) once the job is over."""

    name = "nodekill"
    moments = ("step", "ckpt")
    backends = ("slurm", "mpirun")
    outcome = "COMPLETED"  # --retries 1: the second attempt runs without it
    why = ("node",)
    culprit = "node"
    retried = True

    def plant(self, ctx) -> None:
        node = ctx.planted.node
        assert node
        slurmd = read_pid(ctx.cluster.slurm.dir / f"slurmd-{node}.pid") if ctx.backend == "slurm" else None
        ctx.planted.landed = signal_all([slurmd, *ctx.cluster.node_pids(node)], signal.SIGKILL)

    def heal(self, ctx) -> None:
        if ctx.backend != "slurm":
            return
        cl, node = ctx.cluster, ctx.planted.node
        cl.slurm.start_slurmd(cl.node(node), cl.holder_pid(cl.node(node)))
        resume(ctx, node)


def resume(ctx, node: str) -> None:
    """The node back in Slurm's service (an admin's `scontrol update State=RESUME`), once it answers again."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], env=ctx.env,
                       capture_output=True, timeout=20)  # fmt: skip
        if ctx.cluster.slurm.node_states().get(node, "").startswith(("idle", "mix", "alloc")):
            return
        time.sleep(1)
    ctx.planted.note = f"{node} did not come back idle"


class Cancel(Fault):
    name = "cancel"  # the user's `clusterdoc cancel JOB`
    outcome = "CANCELLED"
    why = ("scheduler",)

    def plant(self, ctx) -> None:
        res = subprocess.run(ctx.clusterdoc_argv("cancel", ctx.job_dir.name), cwd=ctx.planted.run, env=ctx.env,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        ctx.planted.note = (res.stdout + res.stderr).strip()[-300:]


class CtldRestart(Fault):
    name = "ctldrestart"  # slurmctld stopped for a while, then back with its saved state
    backends = ("slurm",)
    outcome = "COMPLETED"
    outage = 8.0

    def plant(self, ctx) -> None:
        ctx.cluster.slurm.stop_ctld()
        try:
            time.sleep(self.outage)
        finally:
            ctx.cluster.slurm.restart_ctld()




def kinds_for(backend: str) -> list[str]:
    return [name for name, f in CATALOG.items() if backend in f.backends]


# --- node and network faults (issue 43): a node cut off, packet loss, a killed slurmd, a GPU off the bus ---------


class NetDrop(Fault):
    """The victim node's namespace drops every packet in and out (nft, loopback spared), until the job is over:
    a switch port or cable gone. Its peers lose it (or wait for it until the hang watch stops them). why: node or
    network naming that node, never another, or unknown; rerun without it when it is blamed. Its own ranks keep
    running cut off: Slurm ends them once the node answers again (slurmctld kills the job's steps it finds there);
    under mpirun nothing of the product can reach a node that does not answer, so the ssh session that started them
    ends them when the link is back (its peer gone), and the campaign's heal checks that (runner.LINGER)."""

    name = "netdrop"
    backends = ("slurm", "mpirun")
    why = ("node", "network")
    culprit = "node"
    retried = "if node"  # type: ignore[assignment]
    table = "clusterdoc_netdrop"

    def plant(self, ctx) -> None:
        node = ctx.planted.node
        assert node
        ns = ctx.cluster.netns(node)
        nft = ["ip", "netns", "exec", ns, "nft"]
        subprocess.run([*nft, "delete", "table", "inet", self.table], capture_output=True, timeout=30)
        for argv in (["add", "table", "inet", self.table],
                     ["add", "chain", "inet", self.table, "out", "{ type filter hook output priority -10; }"],
                     ["add", "chain", "inet", self.table, "in", "{ type filter hook input priority -10; }"],
                     ["add", "rule", "inet", self.table, "out", "oifname", "!=", "lo", "drop"],
                     ["add", "rule", "inet", self.table, "in", "iifname", "!=", "lo", "drop"]):  # fmt: skip
            res = subprocess.run([*nft, *argv], capture_output=True, text=True, timeout=30)
            if res.returncode != 0:
                ctx.planted.landed = False
                ctx.planted.note = f"nft {' '.join(argv)}: {res.stderr.strip()[:200]}"
                return

    def heal(self, ctx) -> None:
        if ctx.planted.node:
            subprocess.run(["ip", "netns", "exec", ctx.cluster.netns(ctx.planted.node), "nft", "delete", "table",
                            "inet", self.table], capture_output=True, timeout=30)  # fmt: skip
            if ctx.backend == "slurm":  # Slurm set it DOWN (not responding) meanwhile: back in service
                resume(ctx, ctx.planted.node)


class Loss(Fault):
    """30 % of the victim node's packets dropped at random, both ways, for the job's duration (nft numgen, as
    `tc netem loss 30%` would: netem is not in this machine's kernel; tests/cluster/limits.py). TCP retransmits:
    the job completes, or fails blamed on that node (or its network); never another node, never the code."""

    name = "loss"
    backends = ("slurm", "mpirun")
    outcome = "COMPLETED"
    also: ClassVar[tuple[str, ...]] = ("FAILED",)
    why = ("node", "network", "hang")
    culprit = "node"
    retried = "if node"  # type: ignore[assignment]
    percent = 30

    def plant(self, ctx) -> None:
        assert ctx.planted.node
        limits.packet_loss(ctx.cluster.netns(ctx.planted.node), self.percent)

    def heal(self, ctx) -> None:
        if ctx.planted.node:
            limits.packet_loss(ctx.cluster.netns(ctx.planted.node), None)
            if ctx.backend == "slurm":
                resume(ctx, ctx.planted.node)


class SlurmdKill(NodeKill):
    """The victim node's slurmd killed -9 mid-job; its slurmstepd and ranks run on (Slurm only). Slurm: the
    steps finish and report to slurmctld by themselves (slurmstepd talks to it directly), so the job completes;
    the node stops answering slurmctld's pings and is set DOWN (NOT_RESPONDING) after SlurmdTimeout (60 s on the
    test cluster), which kills a job still running there with NODE_FAIL. So: completed, or failed blamed on that
    node (rerun without it); never another node. slurmd is restarted and the node resumed after the job (heal)."""

    name = "slurmdkill"
    backends = ("slurm",)
    outcome = "COMPLETED"
    also: ClassVar[tuple[str, ...]] = ("FAILED",)
    why = ("node", "scheduler")
    culprit = "node"
    retried = "if node"  # type: ignore[assignment]

    def plant(self, ctx) -> None:
        pid = read_pid(ctx.cluster.slurm.dir / f"slurmd-{ctx.planted.node}.pid")
        try:
            os.kill(pid or 0, signal.SIGKILL) if pid else None
        except ProcessLookupError:
            pid = None
        ctx.planted.landed = pid is not None


class Xid79(JobAct):
    """One of the victim node's GPUs falls off the bus mid-job: what the node shows then is planted on it (the
    test cluster's fakes: the driver's XID 79 line in its kernel log, /dev/kmsg; nvidia-smi naming the GPU lost,
    as on an 8-GPU node with 7 left, tests/test_gpuhealth_cluster.py), and the rank using it fails its next CUDA
    call with the error the field shows then ("CUDA error: unspecified launch failure": NVIDIA's XID catalog
    says XID 79 ends the GPU's running contexts; pytorch/pytorch#27837 and forum reports quote that error beside
    XID 79). why: node, that node (the probe's XID and lost GPU), rerun without it, resumed, completed."""

    name = "xid79"
    act = "cudaerror"
    moments = ("step", "ckpt")
    before_submit = False
    backends = ("slurm", "mpirun")
    outcome = "COMPLETED"
    why = ("node",)
    culprit = "node"
    retried = True
    fell_off: ClassVar[dict] = {"gpus": [{"model": "NVIDIA A100-SXM4-80GB", "capability": "8.0", "memory_mib": 81920,
                                          "count": 8}], "gpus_visible": 7, "xid": [79]}  # fmt: skip
    before: dict | None = None

    def plant(self, ctx) -> None:
        assert ctx.planted.node
        done = ctx.job_dir / f"rank{ctx.planted.rank}.exit"
        pid = rank_pid(ctx, ctx.planted.rank)
        if pid is None or done.exists() or not alive(pid):  # rank 0's line came late: the victim is done
            ctx.planted.landed = False
            return
        self.before = ctx.cluster.plant({ctx.planted.node: self.fell_off})
        super().plant(ctx)  # the rank's next CUDA call fails (tests/faults/job.py), or its last act after the loop
        deadline = time.monotonic() + 60
        while not done.exists() and alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        try:
            code = json.loads(done.read_text()).get("code")
        except (OSError, ValueError, AttributeError):
            code = None
        if code == 0:  # it passed its last act before the file was there: nothing failed
            ctx.planted.landed = False
            ctx.planted.note = f"rank {ctx.planted.rank} had finished its steps"

    def heal(self, ctx) -> None:
        if self.before:
            ctx.cluster.put_back(self.before)


CATALOG: dict[str, type[Fault]] = {
    f.name: f for f in (Kill9, StopForever, StopWhile, Exception_, Oom, Exit0, AllExit1, NodeKill, Cancel, CtldRestart)
}
CATALOG["netdrop"] = NetDrop
CATALOG["loss"] = Loss
CATALOG["slurmdkill"] = SlurmdKill
CATALOG["xid79"] = Xid79


class ClockJump(Fault):
    """The victim node's wall clock steps mid-job, as when NTP or chrony steps a drifted clock or an admin runs
    `date -s`: an hour ahead, or ten minutes back (by the step's parity). The nodes share this machine's clock and
    a time namespace cannot move CLOCK_REALTIME, so the node's clock is its ranks' (tests/faults/clockjump.c, loaded
    into every rank with LD_PRELOAD; it reads the node's offset from a file: 0 until the act). The monotonic clock
    does not move, as with a real step. Nothing failed: the job completes, without a stall or a straggler said."""

    name = "clockjump"
    moments = ("start", "step", "ckpt")
    backends = ("slurm", "mpirun")
    outcome = "COMPLETED"
    quiet = True  # no stall report, no straggler named (invariants.quiet)

    def prepare(self, ctx) -> None:
        clock = ctx.planted.run / "clock"
        clock.mkdir(parents=True, exist_ok=True)
        ctx.env["LD_PRELOAD"] = str(clockjump_library(ctx.planted.run.parent))
        ctx.env["CLOCKJUMP_DIR"] = str(clock)

    def plant(self, ctx) -> None:
        assert ctx.planted.node
        pid = rank_pid(ctx, ctx.planted.rank)
        ctx.planted.landed = pid is not None and alive(pid)
        seconds = 3600 if ctx.planted.step % 2 == 0 else -600
        (ctx.planted.run / "clock" / ctx.planted.node).write_text(f"{seconds}\n")
        ctx.planted.note = f"{ctx.planted.node}'s clock {seconds:+d} s"


def clockjump_library(where: Path) -> Path:
    """tests/faults/clockjump.c built once into `where` (gcc, as DeepSpeed's build needs it anyway)."""
    lib = where / "clockjump.so"
    if not lib.exists():
        src = Path(__file__).with_name("clockjump.c")
        tmp = lib.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(tmp), str(src), "-ldl"], check=True,
                       capture_output=True, timeout=120)  # fmt: skip
        tmp.replace(lib)
    return lib


CATALOG["clockjump"] = ClockJump


# --- the scheduler's and the job folder's faults (issue 43: the time limit, a requeue, a full job folder) ---


def slurm_id(ctx) -> str | None:
    try:
        rec = json.loads((ctx.job_dir / "job.json").read_text())
    except (OSError, ValueError):
        return None
    got = rec.get("backend_id") if isinstance(rec, dict) else None
    return str(got) if got else None


class TimeLimit(Fault):
    """The job's time limit is reached mid-run: submitted with `--time 1` (a minute, Slurm's least) and made long
    enough to outrun it (40 steps of 2.5 s). Slurm warns the batch shell ahead (SIGUSR1; the job does not
    handle it: clusterdoc.run notes it and the ranks go on), then ends the job: TIMEOUT. A time limit is the
    scheduler's failure: --retries 1 reruns it, resumed from the last checkpoint, and the rerun makes progress
    (it completes, or reaches the limit again further on)."""

    name = "timelimit"
    moments = ("limit",)
    backends = ("slurm",)
    outcome = "COMPLETED|TIMEOUT"  # the rerun completes, or reaches its own limit further on
    why = ("scheduler",)
    retried = True
    before_submit = True
    submit_args = ("--time", "1")
    job_args = ("--steps", "40", "--step-time", "2.5")
    outage = 120.0  # the limit (60 s) and slurmctld's check of it (every 30 s), past the usual attempt

    def plant(self, ctx) -> None:
        return None  # the act is the limit itself, asked for at submit


class Requeue(Fault):
    """`scontrol requeue JOB` mid-job, as a site's preemption does it (submitit's own requeue on SIGUSR1 calls
    the same): Slurm stops the job's processes and starts the batch script again under the same job id, once
    it is eligible again. The second run resumes from the checkpoint and completes; submit ends with exit 0
    and says the job was requeued; why of the first run: scheduler."""

    name = "requeue"
    moments = ("step", "ckpt")
    backends = ("slurm",)
    outcome = "COMPLETED"
    why = ("scheduler",)
    requeued = True
    outage = 180.0  # Slurm holds a requeued job (BeginTime, 120 s) before it runs again, then schedules it

    def plant(self, ctx) -> None:
        job = slurm_id(ctx)
        if job is None:
            ctx.planted.landed = False
            return
        res = subprocess.run(["scontrol", "requeue", job], env=ctx.env, capture_output=True, text=True, timeout=60)
        ctx.planted.landed = res.returncode == 0
        ctx.planted.note = (res.stdout + res.stderr).strip()[-300:]


class FullFs(Fault):
    """The job folder's file system fills up mid-job: the campaign puts the job folder on a small file system of
    its own (16 MiB ext4 on a loop device, mounted on the head and in every node's mount namespace: one
    superblock, so every node sees the same files; a tmpfs mounted on the head would not reach the nodes'
    private namespaces) and fills it with a file at the moment; the job logs 8 KiB a step on every rank, so its
    next writes find no space. The job fails or completes, the records it
    managed to write still parse, why says the disk is full (environment) or unknown, never a node. The space
    is freed after (heal), the file system taken down at the end (release)."""

    name = "fullfs"
    moments = ("start", "step", "ckpt")
    backends = ("slurm", "mpirun", "local")
    outcome = "COMPLETED|FAILED"
    why = ("environment",)
    size_mib = 16
    job_args = ("--chatter", "8192")  # a real job's log: its writes after the fill find no space

    def prepare(self, ctx) -> None:
        run = ctx.planted.run
        image, folder = run / "fs.img", run / "clusterdoc-jobs"
        folder.mkdir(parents=True, exist_ok=True)
        with open(image, "wb") as f:
            f.truncate(self.size_mib << 20)
        sh(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)])
        self.loop = sh(["losetup", "--find", "--show", str(image)]).strip()
        self.mounted: list[int | None] = []
        for pid in [None, *self.holders(ctx)]:
            sh([*self.enter(pid), "mount", "-t", "ext4", self.loop, str(folder)])
            self.mounted.append(pid)
        (folder / "lost+found").rmdir()  # the job folder's parent holds job folders only (the runner's look)

    @staticmethod
    def holders(ctx) -> list[int]:
        if ctx.backend == "local":
            return []
        cl = ctx.cluster
        return [p for n in cl.nodes for p in [cl.holder_pid(n)] if p]

    @staticmethod
    def enter(pid: int | None) -> list[str]:
        return ["nsenter", "-t", str(pid), "-m"] if pid else []

    def plant(self, ctx) -> None:
        filler = ctx.planted.run / "clusterdoc-jobs" / "filler"
        # the rest of the file system, at once: the ranks' next write finds no space
        res = subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True, timeout=60)
        ctx.planted.note = res.stderr.decode(errors="replace").strip().splitlines()[-1][:200] if res.stderr else ""

    def heal(self, ctx) -> None:
        (ctx.planted.run / "clusterdoc-jobs" / "filler").unlink(missing_ok=True)

    def release(self, ctx) -> None:
        folder = ctx.planted.run / "clusterdoc-jobs"
        # what the job left, kept for reading after (its file system goes)
        try:
            shutil.copytree(folder, ctx.planted.run / "clusterdoc-jobs.kept", ignore=shutil.ignore_patterns("filler"),
                            dirs_exist_ok=True, ignore_dangling_symlinks=True)  # fmt: skip
        except (OSError, shutil.Error) as exc:
            ctx.planted.note += f" the job folder not kept: {exc}"[:300]
        for pid in reversed(getattr(self, "mounted", [])):
            subprocess.run([*self.enter(pid), "umount", "-l", str(folder)], capture_output=True, timeout=60)
        if getattr(self, "loop", None):
            subprocess.run(["losetup", "-d", self.loop], capture_output=True, timeout=60)
        (ctx.planted.run / "fs.img").unlink(missing_ok=True)


def sh(argv: list[str]) -> str:
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {(res.stdout + res.stderr).strip()[-300:]}")
    return res.stdout


CATALOG[TimeLimit.name] = TimeLimit
CATALOG[Requeue.name] = Requeue
CATALOG[FullFs.name] = FullFs
