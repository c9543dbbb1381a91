"""Local backend: N nodes x K tasks as processes on this machine, each with its own node's rank environment.

So `--nodes 4` can be tried on a laptop: rank r is on pretend node r // K, with LOCAL_RANK, NODE_RANK and
LOCAL_WORLD_SIZE as torchrun would set them on that node. Each rank gets its own session so that Ctrl-C in
the terminal reaches only the launcher, which then stops every rank (and its children) itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from clusterdoc import private
from clusterdoc.launch import lifeline
from clusterdoc.launch.job import JobDir, JobSpec, free_port, rank_env
from clusterdoc.launch.outcome import Outcome, outcome_from_codes

STOP_GRACE = 3.0  # seconds between SIGTERM and SIGKILL when stopping ranks
# After a rank failed, how long the others have to end on their own before they are stopped: its peers fail too
# (gloo: 'Connection closed by peer'), and on a loaded machine one may not have run yet; stopped, it records no
# failure of its own, and a rank that left early (hang/early.py) could then not be told (CI saw it twice). Ranks
# that end sooner end the wait sooner; a rank still in a collective past it is stopped, its place on record
# (rank<R>.where, shim/where.py).
FAIL_GRACE = 5.0


class LocalJob:
    backend = "local"

    def __init__(self, spec: JobSpec, jd: JobDir, script_args: list[str]):
        self.spec, self.jd = spec, jd
        self.procs: list[subprocess.Popen] = []
        self.failed_at: dict[int, float] = {}  # rank -> when it exited non-zero
        self.failure_seen: float | None = None  # when our poll first saw a rank fail (monotonic)
        self.backend_id = str(os.getpid())
        port = spec.port or free_port()
        cmd = spec.rank_command(jd.path, script_args)
        base = {**os.environ, **spec.shim_env()}
        slices = gpu_slices(spec.nodes, spec.gpus_per_node, os.environ)
        for rank in range(spec.world_size):
            node, local = divmod(rank, spec.tasks_per_node)
            env = {
                **base,
                **rank_env(rank, spec.world_size, local, spec.tasks_per_node, node, "127.0.0.1", port),
                "CLUSTERDOC_LOCAL_NODE": str(node),
            }
            if slices:
                env["CUDA_VISIBLE_DEVICES"] = slices[node]
            # the launcher opens the files too: errors before clusterdoc.run redirects (bad python) still land
            # new files (O_EXCL): an earlier attempt's were moved aside; one already there was not made by us
            with (
                private.open_append(jd.out(rank), True, exclusive=True) as out,
                private.open_append(jd.err(rank), True, exclusive=True) as err,
            ):
                self.procs.append(lifeline.start(cmd, env, spec.cwd, out, err, signal.SIGTERM))
        self.pids = [p.pid for p in self.procs]

    def poll(self) -> Outcome | None:
        now = time.time()
        codes = {}
        for rank, p in enumerate(self.procs):
            code = p.poll()
            codes[rank] = code
            if code not in (None, 0) and rank not in self.failed_at:
                rec = self.jd.rank_exit(rank)  # clusterdoc.run's own timestamp beats our poll's
                self.failed_at[rank] = rec.get("time", now) if rec else now
        if self.failed_at:
            self.failure_seen = self.failure_seen or time.monotonic()
            if None in codes.values() and time.monotonic() - self.failure_seen < FAIL_GRACE:
                return None  # the others may still be failing on their own: let them record it (FAIL_GRACE)
            # peers of a dead rank fail too, milliseconds later (gloo: "Connection closed by peer"):
            # the cause is the earliest failure, and a rank that left no exit record (killed by a
            # signal) came before the peers it took down, whatever our polls saw first
            abrupt = [r for r in self.failed_at if self.jd.rank_exit(r) is None]
            first = min(abrupt or self.failed_at, key=lambda r: self.failed_at[r])
            self.stop()
            codes = {rank: p.returncode for rank, p in enumerate(self.procs)}
            return outcome_from_codes(codes, self.jd, first_failed=[first], stopped=True)
        if all(c == 0 for c in codes.values()):
            return outcome_from_codes(codes, self.jd)
        return None

    def rank_codes(self) -> dict[int, int | None]:
        return {rank: p.poll() for rank, p in enumerate(self.procs)}

    def stop(self) -> None:
        """SIGTERM every live rank's process group, SIGKILL what is left after STOP_GRACE."""
        live = [p for p in self.procs if p.poll() is None]
        for p in live:
            _signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for p in live:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(p, signal.SIGKILL)
                p.wait()

    def cancel(self) -> None:
        self.stop()


def gpu_slices(nodes: int, gpus_per_node: int, environ) -> list[str] | None:
    """CUDA_VISIBLE_DEVICES for each pretend node, so two "nodes" never share a GPU (NCCL refuses that).
    None when no GPUs are asked for or this machine has too few to give each node its own."""
    if gpus_per_node <= 0:
        return None
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    ids = (
        [d.strip() for d in visible.split(",") if d.strip()]
        if visible is not None
        else [str(i) for i in range(_count_gpus())]
    )
    if len(ids) < nodes * gpus_per_node:
        return None
    return [",".join(ids[n * gpus_per_node : (n + 1) * gpus_per_node]) for n in range(nodes)]


def _count_gpus() -> int:
    try:
        res = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in res.stdout.splitlines() if line.startswith("GPU "))


def _signal_group(p: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def start(spec: JobSpec, jd: JobDir, script_args: list[str]) -> LocalJob:
    return LocalJob(spec, jd, script_args)
