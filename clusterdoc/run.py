"""`python -m clusterdoc.run [OPTIONS] SCRIPT ARGS...`: run a training script with the shim switched on.

What `clusterdoc submit` starts in every rank, and usable by hand under srun, mpirun or torchrun:
1. with --log-dir, this rank's stdout/stderr go to DIR/rank<R>.out|.err (file descriptors, so C++ and child
   processes land there too) and DIR/rank<R>.exit records how the rank ended;
2. settings from flags > env (CLUSTERDOC_DEBUG, CLUSTERDOC_LOG_LEVEL, CLUSTERDOC_OVERFLOW) > config files;
3. shim.init() (rank environment, process group), debug mode, log level, overflow hooks;
4. the script runs as __main__ with its own argv. A script that calls shim.init() or
   torch.distributed.init_process_group() itself still works: the second call is a no-op.
An out-of-memory death prints OOM_MARKER on stderr and exits OOM_EXIT_CODE, which `--oom-retry` acts on.
"""

from __future__ import annotations

import argparse
import faulthandler
import io
import json
import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import NoReturn, cast

from clusterdoc import clock, config, private
from clusterdoc.errors import UsageError
from clusterdoc.hang import seal
from clusterdoc.launch.job import OOM_EXIT_CODE, OOM_MARKER

# Where each launcher puts the global rank (reference.md §5). A Slurm batch shell has SLURM_PROCID too,
# but only a task under srun has SLURM_STEP_ID.
_RANK_VARS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SUBMITIT_LOCAL_GLOBALID")


def env_rank(environ=os.environ) -> int:
    for name in _RANK_VARS:
        if environ.get(name, "").isdigit():
            return int(environ[name])
    if "SLURM_STEP_ID" in environ and environ.get("SLURM_PROCID", "").isdigit():
        return int(environ["SLURM_PROCID"])
    return 0


# (rank, world size, local rank, local world size) per MPI flavour
_MPI_VARS = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
)


def torchrun_vars_from_mpi(environ) -> dict[str, str]:
    """Under `clusterdoc submit --backend mpirun` the launcher already chose MASTER_ADDR/PORT, so the ranks
    need nothing from MPI itself: naming them the torchrun way spares the nodes an mpi4py that must match
    the mpirun (an MPICH-bound mpi4py under Open MPI sees every rank as rank 0 of 1)."""
    if environ.get("CLUSTERDOC_LAUNCHER") != "mpirun" or "RANK" in environ or not environ.get("MASTER_PORT"):
        return {}
    for names in _MPI_VARS:
        if all(environ.get(n, "").isdigit() for n in names):
            return dict(zip(("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"), (environ[n] for n in names)))
    return {}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m clusterdoc.run", description="Run SCRIPT as __main__ with the clusterdoc shim switched on."
    )
    p.add_argument("--log-dir", metavar="DIR", help="write this rank's stdout/stderr to DIR/rank<R>.out|.err")
    p.add_argument("--debug", action="store_true", default=None, help="collective shape checks (debug mode)")
    p.add_argument("--log-level", default=None, help="shim log level")
    p.add_argument("--overflow", action="store_true", default=None, help="inf/nan hooks on every module")
    p.add_argument("--config", metavar="FILE", help="YAML config (as for clusterdoc submit)")
    p.add_argument("--module", action="store_true", help="SCRIPT is a module name, run as `python -m SCRIPT`")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def _reserve_path(log_dir: Path, rank: int) -> Path:
    return log_dir / f".rank{rank}.reserve"


def _redirect(log_dir: Path, rank: int) -> None:
    private.mkdir(log_dir, parents=True)
    private.reserve(_reserve_path(log_dir, rank), 16 * 1024)  # room for the exit record on a full disk
    sys.stdout.flush()
    sys.stderr.flush()
    for fd, name in ((1, f"rank{rank}.out"), (2, f"rank{rank}.err")):
        f = private.open_fd(log_dir / name)
        os.dup2(f, fd)
        os.close(f)
    # line buffering: --wait streams these files while the rank runs
    # (the interpreter's own streams, TextIOWrapper: typeshed only promises TextIO)
    cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)
    cast(io.TextIOWrapper, sys.stderr).reconfigure(line_buffering=True)


def _write_exit(log_dir: Path | None, rank: int, code: int, oom: bool) -> None:
    """The rank's exit record: what the launcher judges the job by, so it is written first (before the shim's
    optional files), through the rank's reserve on a full disk, and without the collectives if even then
    the whole record does not fit."""
    if log_dir is None:
        return
    path, reserve = log_dir / f"rank{rank}.exit", _reserve_path(log_dir, rank)
    record = {"code": code, "oom": oom, "time": clock.now(), **_usr1_record()}
    try:
        try:
            private.write(path, json.dumps({**record, **_collectives()}) + "\n", reserve=reserve)
        except OSError as err:
            if err.errno not in private.FULL:
                raise
            private.write(path, json.dumps(record) + "\n")
    except OSError as err:
        print(f"clusterdoc.run: rank {rank}: cannot write {path}: {err.strerror or err}", file=sys.stderr)
    private.release(reserve)


def _write_start(log_dir: Path, rank: int, environ=os.environ) -> None:
    """rank<R>.start: where this rank runs (host, and the address its peers reach it by), written before the
    script starts. A rank whose node dies leaves no exit record; this is how `clusterdoc why` still names
    the node, and matches the address in a peer's 'Connection closed by peer [ADDR]' to it."""
    import socket

    addr = None
    master = environ.get("MASTER_ADDR")
    if master:
        try:  # the source address of the route to the master: what the peers see this rank as
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((master, int(environ.get("MASTER_PORT") or 29500)))
                addr = s.getsockname()[0]
        except (OSError, ValueError):
            addr = None
    record = {
        "host": environ.get("SLURMD_NODENAME") or socket.gethostname(),  # Slurm's name: what --exclude takes
        "addr": addr,
        "pid": os.getpid(),
        "time": clock.now(),
        "slurm_job": environ.get("SLURM_JOB_ID"),
        "attempt": environ.get("TORCHELASTIC_RESTART_COUNT"),
        "world": environ.get("WORLD_SIZE") or (environ.get("SLURM_NTASKS") if "SLURM_STEP_ID" in environ else None),
    }
    try:
        private.write(log_dir / f"rank{rank}.start", json.dumps(record) + "\n")
    except OSError:
        pass  # a diagnostic aid only: the job runs without it


def _keep_running_on_usr1() -> None:
    """Slurm's warning ahead of the time limit (`submit` asks for SIGUSR1) must not kill a script that does not
    handle it (SIGUSR1's default action): it keeps running to the limit, having been told. A script that sets
    its own handler (to checkpoint) replaces this one."""
    import signal

    if hasattr(signal, "SIGUSR1") and signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL:
        signal.signal(signal.SIGUSR1, _note_usr1)


def _note_usr1(*_) -> None:
    _usr1["noted"] = True
    print("clusterdoc.run: SIGUSR1 (the time limit or preemption is near)", file=sys.stderr)


_usr1 = {"noted": False}


def _usr1_record() -> dict:
    """{"usr1": "ignored"} in the exit record when Slurm's warning came and only clusterdoc's own note handled it:
    the script went on to its own end, it did not stop for the warning (a checkpoint-and-stop would have set a
    handler of its own)."""
    import signal

    if _usr1["noted"] and hasattr(signal, "SIGUSR1") and signal.getsignal(signal.SIGUSR1) is _note_usr1:
        return {"usr1": "ignored"}
    return {}


def _keep_place(log_dir: Path, rank: int) -> None:
    """rank<R>.where from now on: where this rank is in its collectives, for when it leaves no exit record
    (stopped by its launcher, killed; shim/where.py)."""
    try:
        from clusterdoc.shim import where

        where.start(log_dir, rank)
    except Exception:  # a diagnosis aid: never the job's failure
        pass


def _collectives() -> dict:
    """Where the rank was in its collectives when it ended (a failed rank's report names its call)."""
    track = sys.modules.get("clusterdoc.shim.track")
    if track is None or not track.installed():
        return {}
    out: dict = {"collectives": track.TRACKER.snapshot()}
    try:  # the calls it made per group (and op): a rank that ended early is told by its count (hang/early.py)
        out.update(issued=track.TRACKER.issued(), ops=track.TRACKER.issued_ops())
    except Exception:  # a diagnosis aid: never the exit record's loss
        pass
    return out


def is_oom(exc: BaseException) -> bool:
    """Out of memory in any of its forms (the shim's rule). Never raises: the rank is already dying."""
    try:
        from clusterdoc.shim.oom import is_oom_error

        return bool(is_oom_error(exc))
    except Exception:
        return isinstance(exc, MemoryError)


def print_script_traceback(exc: BaseException) -> None:
    """The traceback from the script's first frame on: run.py and runpy frames are noise to the user."""
    tb = exc.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__) or "runpy" in tb.tb_frame.f_code.co_filename
    ):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__)


def _make_init_idempotent() -> None:
    """Scripts written for torchrun call init_process_group() themselves; after shim.init() that would raise."""
    import torch.distributed as dist

    original = dist.init_process_group
    if getattr(original, "_clusterdoc_wrapped", False):
        return

    def init_process_group(*args, **kwargs):
        if dist.is_available() and dist.is_initialized():
            return None
        return original(*args, **kwargs)

    init_process_group._clusterdoc_wrapped = True  # type: ignore[attr-defined]  # marks our wrapper
    init_process_group.__wrapped__ = original  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group


def apply_settings(settings: dict) -> None:
    """Switch the shim's features on in this process (env too: the shim and child processes read it)."""
    if settings.get("log_level"):
        os.environ[config.env_name("log_level")] = settings["log_level"]
    for key in ("debug", "overflow"):
        if settings.get(key):
            os.environ[config.env_name(key)] = "1"
    from clusterdoc import shim  # after the env is set: the shim reads its switches at import too

    shim.init()
    if settings.get("debug"):
        shim.enable_debug()
    if settings.get("overflow"):
        shim.enable_overflow_detection()


def run_module(name: str, args: list[str]) -> None:
    """`python -m NAME ARGS`: the current directory first on the path, as python puts it."""
    sys.argv = [name, *args]  # run_module sets argv[0] to the module's file
    sys.path.insert(0, os.getcwd())
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def run_script(script: str, args: list[str]) -> None:
    path = Path(script)
    if not path.is_file():
        raise UsageError(f"script not found: {script}")
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.absolute().parent))
    runpy.run_path(str(path), run_name="__main__")


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    os.environ.update(torchrun_vars_from_mpi(os.environ))
    rank = env_rank()
    log_dir = Path(ns.log_dir) if ns.log_dir else None
    if log_dir is not None:
        _redirect(log_dir, rank)
        _write_start(log_dir, rank)
        os.environ["CLUSTERDOC_LOG_DIR"] = str(log_dir.absolute())  # stacks/, trace/, watch.json go here
        secret = seal.read_secret(log_dir)  # the job's store seal (hang/seal.py): from the folder, never argv
        if secret:
            os.environ[seal.ENV] = secret
        # per-rank overflow reports next to the logs; set before the shim is first imported, since
        # importing it with CLUSTERDOC_OVERFLOW=1 already switches detection on
        os.environ.setdefault("CLUSTERDOC_OVERFLOW_DIR", str(log_dir))
    _keep_running_on_usr1()
    faulthandler.enable()  # a rank killed by SIGABRT/SIGSEGV (gloo's std::terminate) still shows its stack
    from clusterdoc.shim.env import RankEnvironmentError

    code, oom = 0, False
    try:
        settings, _ = config.resolve(
            {"debug": ns.debug, "log_level": ns.log_level, "overflow": ns.overflow}, explicit_config=ns.config
        )
        _make_init_idempotent()
        apply_settings(settings)
        if log_dir is not None:
            _keep_place(log_dir, rank)
        (run_module if ns.module else run_script)(ns.script, ns.script_args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except UsageError as err:
        print(f"clusterdoc.run: error: {err}", file=sys.stderr)
        code = 2
    except RankEnvironmentError as err:  # the launcher's environment, not the script: no traceback
        print(f"clusterdoc.run: rank {rank}: {err}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:  # the launcher cancelling the job (mpirun forwards SIGINT): no traceback
        print(f"clusterdoc.run: rank {rank} interrupted", file=sys.stderr)
        code = 130
    except BaseException as exc:  # every way a rank can die must be recorded
        oom = is_oom(exc)
        code = OOM_EXIT_CODE if oom else 1
        try:  # stderr's file system may be the full one: the exit record still comes
            print_script_traceback(exc)
            if oom:
                print(
                    f"{OOM_MARKER} on rank {rank}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                    file=sys.stderr,
                )
        except OSError:
            pass
    _flush()
    _write_exit(log_dir, rank, code, oom)
    if code == 0:
        _shutdown()
    return code


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a full disk: what could not be written is lost, the exit record must not be
            pass


def _shutdown() -> None:
    """Tear the process group down after a clean run (torch warns when a script forgets)."""
    mod = sys.modules.get("torch.distributed")
    watch = sys.modules.get("clusterdoc.shim.watch")
    try:
        if watch is not None:
            watch.stop_hang_watch()  # first: rank 0's store goes with the group, its clients must let go before
    except Exception:  # the group must still go: left to the interpreter, its threads abort
        pass
    try:
        if mod is not None and mod.is_available() and mod.is_initialized():
            mod.destroy_process_group()
    except Exception:  # the script's work is done; never turn success into failure here
        pass


def _teardown_would_abort() -> bool:
    """A thread of ours still inside a torch call: the interpreter's teardown would abort the rank with
    'terminate called without an active exception' (shim/watch.py's EXIT_JOIN says how)."""
    watch = sys.modules.get("clusterdoc.shim.watch")
    try:
        return bool(watch is not None and watch.still_in_torch())
    except Exception:  # a check at exit: never a reason to fail
        return False


def leave(code: int) -> NoReturn:
    """A failed rank must not wait in interpreter teardown for peers stuck in a collective; a healthy one must not
    be aborted by it either (a thread of ours still in torch): both leave with os._exit, after a flush."""
    _flush()
    if code or _teardown_would_abort():
        os._exit(code)
    sys.exit(0)


RANK_PID = "CLUSTERDOC_RANK_PID"  # set in a rank of a batch script: its children (spawned workers, helpers) are not


def take_over(kind: str, target: str, args: list[str], log_dir: str) -> NoReturn:
    """A rank of a user's own batch script, taken over at start-up by the job's sitecustomize
    (rankhook/sitecustomize.py): its script or module runs as under `python -m clusterdoc.run --log-dir`,
    with the same records, then the process ends as the interpreter would (threads joined, atexit handlers run,
    streams flushed) with the script's code, never back in site.py (which would run the script a second time)."""
    import atexit
    import threading

    os.environ[RANK_PID] = str(os.getpid())
    code = main(["--log-dir", log_dir, *(["--module"] if kind == "module" else []), target, *args])
    if code == 0 and not _teardown_would_abort():
        try:
            threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter does at exit: join threads
            atexit._run_exitfuncs()
        except Exception:  # the script's work is done; never turn success into failure here
            pass
    _flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main())
