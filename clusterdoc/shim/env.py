"""Rank environment: read what the launcher set, agree on a rendezvous, start the process group.

`resolve(environ)` is pure (facts in, RankEnv out) so every launcher's rules are testable from a dict;
`init()` applies it: exports RANK/WORLD_SIZE/... and calls torch.distributed.init_process_group.
"""

from __future__ import annotations

import atexit
import datetime
import os
import socket
import sys
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Optional

from . import rendezvous
from .errors import ShimError


class RankEnvironmentError(ShimError, RuntimeError):
    """The environment cannot describe a consistent set of ranks (raised instead of hanging)."""


@dataclass(frozen=True)
class RankEnv:
    launcher: str  # "torchrun", "openmpi", "mpich", "slurm", "submitit-local", "single"
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: Optional[str] = None  # None: to be agreed at init (MPI)
    master_port: Optional[int] = None

    def exports(self) -> dict:
        """The torch.distributed `env://` variables for this rank."""
        out = {
            "RANK": str(self.rank),
            "WORLD_SIZE": str(self.world_size),
            "LOCAL_RANK": str(self.local_rank),
            "LOCAL_WORLD_SIZE": str(self.local_world_size),
        }
        if self.master_addr is not None:
            out["MASTER_ADDR"] = self.master_addr
        if self.master_port is not None:
            out["MASTER_PORT"] = str(self.master_port)
        return out


def _int(environ: Mapping[str, str], name: str, launcher: str) -> int:
    value = environ.get(name)
    try:
        return int(value or "")
    except (TypeError, ValueError):
        raise RankEnvironmentError(f"{launcher}: environment variable {name}={value!r} is not an integer") from None


def port_from_job_id(job_id: str, step_id: str = "0") -> int:
    """A port every task of one job step computes alike: 15000-29999, below Linux's ephemeral range."""
    try:
        key = int(job_id) * 31 + int(step_id or 0)
    except ValueError:
        key = zlib.crc32(f"{job_id}.{step_id}".encode())  # named ids (local/mpirun jobs)
    return 15000 + key % 15000


def first_resolvable(hosts, resolve: Callable[[str], str] = socket.gethostbyname) -> Optional[str]:
    for host in hosts:
        try:
            resolve(host)
            return host
        except OSError:
            continue
    return None


def _slurm_master(environ: Mapping[str, str], resolve) -> str:
    from clusterdoc.hostfile import expand_hostlist

    nodelist = environ.get("SLURM_STEP_NODELIST") or environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist:
        raise RankEnvironmentError(
            "Slurm: SLURM_JOB_NODELIST is not set; cannot choose MASTER_ADDR (set MASTER_ADDR yourself)"
        )
    hosts = expand_hostlist(nodelist)
    host = first_resolvable(hosts, resolve)
    if host is None:
        raise RankEnvironmentError(
            f"Slurm: no host of the nodelist {nodelist!r} resolves on {socket.gethostname()}; "
            "set MASTER_ADDR to the address of the node running rank 0"
        )
    return host


def resolve(environ: Mapping[str, str] = os.environ, resolve_host=socket.gethostbyname) -> RankEnv:
    """Which launcher started this process, and this process's place among the ranks.

    Order matters: an explicit torchrun/env:// setup wins; MPI beats Slurm because mpirun inside an
    allocation launches its proxies with srun, so SLURM_PROCID there counts nodes, not ranks.
    """
    e = environ
    if "RANK" in e and "WORLD_SIZE" in e:
        world = _int(e, "WORLD_SIZE", "torchrun")
        local = _int(e, "LOCAL_RANK", "torchrun") if "LOCAL_RANK" in e else 0
        lws = _int(e, "LOCAL_WORLD_SIZE", "torchrun") if "LOCAL_WORLD_SIZE" in e else (1 if world == 1 else world)
        port = _int(e, "MASTER_PORT", "torchrun") if "MASTER_PORT" in e else None
        return RankEnv("torchrun", _int(e, "RANK", "torchrun"), world, local, lws, e.get("MASTER_ADDR"), port)

    if "OMPI_COMM_WORLD_RANK" in e:
        return RankEnv(
            "openmpi",
            _int(e, "OMPI_COMM_WORLD_RANK", "Open MPI"),
            _int(e, "OMPI_COMM_WORLD_SIZE", "Open MPI"),
            _int(e, "OMPI_COMM_WORLD_LOCAL_RANK", "Open MPI"),
            _int(e, "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI"),
            e.get("MASTER_ADDR"),
            int(e["MASTER_PORT"]) if e.get("MASTER_PORT") else None,
        )
    if "PMI_RANK" in e and "PMI_SIZE" in e:
        world = _int(e, "PMI_SIZE", "MPICH")
        local = _int(e, "MPI_LOCALRANKID", "MPICH") if "MPI_LOCALRANKID" in e else -1
        lws = _int(e, "MPI_LOCALNRANKS", "MPICH") if "MPI_LOCALNRANKS" in e else -1
        return RankEnv(
            "mpich",
            _int(e, "PMI_RANK", "MPICH"),
            world,
            local,
            lws,
            e.get("MASTER_ADDR"),
            int(e["MASTER_PORT"]) if e.get("MASTER_PORT") else None,
        )
    if "PMI_PORT" in e and "PMI_ID" in e:
        # Hydra with -pmi-port: only mpi4py knows the ranks; -1 marks "ask MPI".
        return RankEnv(
            "mpich", -1, -1, -1, -1, e.get("MASTER_ADDR"), int(e["MASTER_PORT"]) if e.get("MASTER_PORT") else None
        )

    if "SLURM_STEP_ID" in e and "SLURM_PROCID" in e:
        world = _int(e, "SLURM_NTASKS", "Slurm") if "SLURM_NTASKS" in e else _int(e, "SLURM_STEP_NUM_TASKS", "Slurm")
        tasks_here = e.get("SLURM_STEP_TASKS_PER_NODE") or e.get("SLURM_TASKS_PER_NODE") or ""
        lws = _local_tasks(tasks_here, _int(e, "SLURM_NODEID", "Slurm") if "SLURM_NODEID" in e else 0)
        addr = e.get("MASTER_ADDR") or (_slurm_master(e, resolve_host) if world > 1 else "127.0.0.1")
        port = (
            int(e["MASTER_PORT"])
            if e.get("MASTER_PORT")
            else port_from_job_id(e.get("SLURM_JOB_ID", "0"), e.get("SLURM_STEP_ID", "0"))
        )
        return RankEnv(
            "slurm", _int(e, "SLURM_PROCID", "Slurm"), world, _int(e, "SLURM_LOCALID", "Slurm"), lws or 1, addr, port
        )

    if "SUBMITIT_LOCAL_GLOBALID" in e:
        world = _int(e, "SUBMITIT_LOCAL_NTASKS", "submitit local")
        port = int(e["MASTER_PORT"]) if e.get("MASTER_PORT") else port_from_job_id(e.get("SUBMITIT_LOCAL_JOB_ID", "0"))
        return RankEnv(
            "submitit-local",
            _int(e, "SUBMITIT_LOCAL_GLOBALID", "submitit local"),
            world,
            _int(e, "SUBMITIT_LOCAL_LOCALID", "submitit local"),
            world,
            e.get("MASTER_ADDR", "127.0.0.1"),
            port,
        )

    ntasks = e.get("SLURM_NTASKS")
    if ntasks and ntasks.isdigit() and int(ntasks) > 1:
        raise RankEnvironmentError(
            f"Slurm: this process runs in the batch shell of job {e.get('SLURM_JOB_ID', '?')} "
            f"(SLURM_NTASKS={ntasks} but no SLURM_STEP_ID), so it is one process, not {ntasks} ranks. "
            "Start the training with `srun python ...` inside the batch script (or use `clusterdoc submit`)."
        )
    return RankEnv(
        "single", 0, 1, 0, 1, e.get("MASTER_ADDR", "127.0.0.1"), int(e["MASTER_PORT"]) if e.get("MASTER_PORT") else None
    )


def _local_tasks(spec: str, node_id: int) -> int:
    """Tasks on node `node_id` from Slurm's compressed '2(x3),1' form; 0 if unknown."""
    counts = []
    for part in filter(None, spec.split(",")):
        if "(x" in part:
            n, rep = part.rstrip(")").split("(x")
            counts += [int(n)] * int(rep)
        elif part.isdigit():
            counts.append(int(part))
    return counts[node_id] if node_id < len(counts) else 0


def agree_over_mpi(env: RankEnv) -> RankEnv:
    """Fill ranks (if -pmi-port hid them) and MASTER_ADDR/PORT from rank 0, through mpi4py."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise RankEnvironmentError(
            f"{env.launcher}: mpi4py is needed to agree on MASTER_ADDR/MASTER_PORT under mpirun ({exc}); "
            "install it (`pip install mpi4py`) or export MASTER_ADDR and MASTER_PORT to all ranks"
        ) from None
    comm = MPI.COMM_WORLD
    _abort_on_uncaught(comm)
    rank, world = comm.Get_rank(), comm.Get_size()
    if env.world_size not in (-1, world):
        raise RankEnvironmentError(
            f"{env.launcher}: the launcher says {env.world_size} ranks but mpi4py sees {world} "
            f"(library: {MPI.Get_library_version().splitlines()[0]}); mpi4py is bound to a different MPI "
            "than the mpirun that started this job"
        )
    local = env.local_rank
    lws = env.local_world_size
    if local < 0 or lws < 0:
        node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        local, lws = node.Get_rank(), node.Get_size()
        node.Free()
    addr, port = env.master_addr, env.master_port
    if addr is None or port is None:
        mine = (addr or rendezvous.my_address(), port or rendezvous.free_port()) if rank == 0 else None
        # The address must be the master's view: rank 0 speaks for everyone.
        addr, port = comm.bcast(mine, root=0)
        if world > 1 and lws == world:
            addr = "127.0.0.1" if addr == socket.gethostname() else addr
    return RankEnv(env.launcher, rank, world, local, lws, addr, port)


ABORT_GRACE = 1.0  # seconds between a rank's traceback and its MPI_Abort


def _abort_on_uncaught(comm) -> None:
    """A rank that dies of an uncaught exception calls MPI_Abort, as `python -m mpi4py` does: otherwise its exit
    waits in MPI_Finalize (mpi4py's, at exit) for ranks that will never get there, and mpirun waits with it.
    The abort waits for the interpreter's exit (an atexit handler, registered last so it runs first), not in
    the hook: torch's own excepthook (once the process group exists) captures the traceback in a buffer and
    writes it, rank-prefixed, only after the hooks it wraps return; aborting inside would lose the message."""
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        previous(kind, value, tb)
        if not issubclass(kind, (KeyboardInterrupt, SystemExit)):
            atexit.register(_abort, comm)

    sys.excepthook = excepthook


def _abort(comm) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    # MPI_Abort takes every rank down at once, and Hydra's proxies with them: what this rank (and the others,
    # raising the same error) just wrote may still be on its way to mpirun. Let it arrive first.
    time.sleep(ABORT_GRACE)
    comm.Abort(1)


_state: dict = {"env": None}  # the rank environment


def rank_env() -> RankEnv:
    """This process's RankEnv: from init() if it ran, else from the environment (no side effects)."""
    env = _state["env"] or _state.get("guess")
    if env is None:  # resolved once: under Slurm it looks up host names
        try:
            env = resolve(os.environ)
        except (RankEnvironmentError, ImportError):
            env = RankEnv("single", 0, 1, 0, 1)
        _state["guess"] = env
    return env


def _timeout(seconds: Optional[float], var: str, default: float) -> datetime.timedelta:
    if seconds is None:
        seconds = float(os.environ.get(var, default))
    return datetime.timedelta(seconds=seconds)


def _destroy():
    import torch
    import torch.distributed as dist

    from . import teardown, watch

    try:
        watch.stop_hang_watch()  # the store's clients let go before rank 0's store goes with the group
    except Exception:  # best effort at exit; the group must still go below
        pass
    try:
        teardown.destroy_group(dist, torch.__version__)  # bounded: never a rank that cannot exit (teardown.py)
    except Exception:  # best effort at exit
        pass


def gpu_layout_problem(backend: str, env: RankEnv, gpus: int) -> Optional[str]:
    """NCCL takes one GPU per rank: more ranks on a node than GPUs it sees fails at the first collective with
    'Duplicate GPU detected' (seen with torchrun --nproc-per-node 2 on a one-GPU H100). Said before the
    rendezvous, by every rank alike, with the layout's fix."""
    if backend != "nccl" or not gpus or env.local_world_size <= gpus:
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    seen = f"CUDA_VISIBLE_DEVICES={visible}" if visible is not None else "all of them visible"
    return (
        f"{env.launcher}: {env.local_world_size} ranks on this node but {gpus} GPU(s) ({seen}): NCCL needs one GPU "
        f"per rank and would stop at the first collective ('Duplicate GPU detected'). Start at most {gpus} rank(s) "
        f"per node (torchrun --nproc-per-node {gpus}, srun --ntasks-per-node {gpus}), or use backend='gloo'."
    )


def init(
    backend: Optional[str] = None,
    init_timeout: Optional[float] = None,
    timeout: Optional[float] = None,
    set_device: bool = True,
) -> RankEnv:
    """Read the launcher's variables, export RANK/WORLD_SIZE/..., start the default process group.

    Idempotent: a second call (or a call after the script initialised torch.distributed) returns the
    RankEnv without touching the process group. `init_timeout` (CLUSTERDOC_INIT_TIMEOUT, default 300 s)
    bounds the rendezvous, so a rank that never arrives gives an error instead of a hang; `timeout`
    (CLUSTERDOC_TIMEOUT, default torch's) is the process group's collective timeout.
    """
    import torch
    import torch.distributed as dist

    if _state["env"] is not None and dist.is_initialized():
        return _state["env"]
    env = resolve(os.environ)
    if env.launcher in ("openmpi", "mpich"):
        env = agree_over_mpi(env)
    if env.master_addr is None:
        env = RankEnv(
            env.launcher, env.rank, env.world_size, env.local_rank, env.local_world_size, "127.0.0.1", env.master_port
        )
    if env.master_port is None:
        if env.world_size > 1:
            raise RankEnvironmentError(f"{env.launcher}: MASTER_PORT is not set and cannot be derived; export it")
        env = RankEnv(env.launcher, 0, 1, 0, 1, env.master_addr, rendezvous.free_port())
    os.environ.update(env.exports())

    has_gpu = torch.cuda.is_available() and torch.cuda.device_count() > 0
    if has_gpu and set_device:
        torch.cuda.set_device(env.local_rank % torch.cuda.device_count())
    if dist.is_initialized():
        _state["env"] = env
        _agree_on_secret(env)
        from . import watch

        watch.enable_hang_watch()
        return env
    backend = backend or os.environ.get("CLUSTERDOC_DIST_BACKEND") or ("nccl" if has_gpu else "gloo")
    problem = gpu_layout_problem(backend, env, torch.cuda.device_count() if has_gpu else 0)
    if problem:
        raise RankEnvironmentError(problem)
    rendezvous_timeout = _timeout(init_timeout, "CLUSTERDOC_INIT_TIMEOUT", 300)
    assert env.master_addr is not None and env.master_port is not None  # both set just above
    try:
        store = rendezvous.join_store(env.master_addr, env.master_port, env.rank, env.world_size, rendezvous_timeout)
    except Exception as exc:  # torch raises RuntimeError/DistStoreError/TimeoutError variously
        raise RankEnvironmentError(
            f"{env.launcher}: rank {env.rank} of {env.world_size} could not meet the other ranks at "
            f"{env.master_addr}:{env.master_port} within {rendezvous_timeout.total_seconds():.0f} s ({exc}). "
            "A rank did not start, or MASTER_ADDR is not reachable from every node, or the port is taken."
        ) from None
    from . import watch

    os.environ.update(watch.flight_recorder_env(backend, os.environ.get("CLUSTERDOC_LOG_DIR")))
    group_timeout = None
    if timeout is not None or "CLUSTERDOC_TIMEOUT" in os.environ:
        group_timeout = _timeout(timeout, "CLUSTERDOC_TIMEOUT", 600)
    if group_timeout is None:
        dist.init_process_group(backend, store=store, rank=env.rank, world_size=env.world_size)
    else:
        dist.init_process_group(backend, store=store, rank=env.rank, world_size=env.world_size, timeout=group_timeout)
    atexit.register(_destroy)  # the group we made is ours to take down (shim/teardown.py)
    _state["env"] = env
    _agree_on_secret(env)
    from . import debug

    if debug.requested_by_env():
        debug.enable_debug()
    watch.enable_hang_watch()  # collective tracking always; the watchdog unless CLUSTERDOC_HANG_TIMEOUT=0
    return env


def _agree_on_secret(env: RankEnv) -> None:
    """The job's secret for the store's sealed values, from the user's own secret file when no launcher of ours
    gave one (secret.py): two all_gathers on the default group, never through the job's store."""
    from . import progress, secret

    before = progress.issued_now()
    try:
        secret.establish(env.rank, env.world_size)
        progress.hide_own(before)  # its all_gathers are not the job's: the hang report numbers the job's own
    except Exception as exc:  # the job goes on; only the side channels stay off (said once)
        secret.say(env.rank, f"the ranks could not agree on one: {type(exc).__name__}: {exc}")
