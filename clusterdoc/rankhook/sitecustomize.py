"""Put on PYTHONPATH of a user's own batch script's job by `clusterdoc submit` (copied into the job folder): every
Python the job starts imports this at start-up, and the ones that are ranks run their script under clusterdoc's
shim (clusterdoc.run.take_over), as `python -m clusterdoc.run --log-dir JOBDIR SCRIPT` would.

A rank: a script file or `-m module` (not `-c`, not stdin), with RANK set (torchrun's and accelerate's workers, a
script's own `RANK=$SLURM_PROCID`) or run as a task of an srun step of several tasks (SLURM_STEP_ID, SLURM_PROCID;
a one-task step is a helper: a server beside the training, a preprocessing); not a launcher
(torchrun, accelerate, deepspeed: their workers are the ranks), not clusterdoc's own processes, and not a child of a
rank (a spawned DataLoader worker, a helper it runs: the rank marks its environment). Standard library only: this
runs in every python of the job, including ones without torch or clusterdoc, and then does nothing else.
Another sitecustomize on the path (a site's, a distribution's), which this one shadows, is run first. A rank's
python without clusterdoc gets the package alone (CLUSTERDOC_PACKAGE_ROOT, last on its path) when it is of the
submitting python's version; otherwise it says on stderr that its shim is off, and its script runs as it is.
"""

import os
import sys

LAUNCHERS = {
    "torchrun",
    "torch.distributed.run",
    "torch.distributed.launch",
    "accelerate",
    "accelerate.commands.launch",
    "accelerate.commands.accelerate_cli",
    "deepspeed",
    "deepspeed.launcher.runner",
    "deepspeed.launcher.launch",
    "submitit.core._submit",
}
_ARG_OPTS = "WX"  # interpreter options that take a value


def main_of(argv):
    """('script', path) / ('module', name) / ('code', None) / (None, None) from the interpreter's own argv."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-" or not a.startswith("-"):
            return ("script", a) if a != "-" else (None, None)
        if a.startswith("--"):
            i += 2 if a == "--check-hash-based-pycs" else 1
            continue
        cluster = a[1:]
        for j, ch in enumerate(cluster):
            if ch == "c":
                return "code", None
            if ch == "m":
                name = cluster[j + 1 :] or (argv[i + 1] if i + 1 < len(argv) else "")
                return ("module", name) if name else (None, None)
            if ch in _ARG_OPTS:
                if not cluster[j + 1 :]:
                    i += 1  # the value is the next word
                break
        i += 1
    return None, None


def rank_of(environ, argv):
    """This process's rank when it is one of the job's ranks, else None."""
    if not environ.get("CLUSTERDOC_BATCH_DIR") or environ.get("CLUSTERDOC_RANK_PID"):
        return None
    kind, target = main_of(argv)
    if kind not in ("script", "module") or not target:
        return None
    name = target if kind == "module" else os.path.basename(target)
    if name.endswith(".py"):
        name = name[:-3]
    if name in LAUNCHERS or name.split(".")[0] in ("clusterdoc", "submitit"):
        return None
    if environ.get("RANK", "").isdigit():
        return int(environ["RANK"])
    if "SLURM_STEP_ID" in environ and environ.get("SLURM_PROCID", "").isdigit():
        if environ.get("SLURM_NTASKS", environ.get("SLURM_NPROCS")) == "1":
            return None  # a one-task step: a helper (a server beside the training, a preprocessing), no rank
        return int(environ["SLURM_PROCID"])
    return None


def _chain():
    """The sitecustomize this one shadows, if any."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _clusterdoc_importable(environ):
    import importlib.util

    if importlib.util.find_spec("clusterdoc") is not None:
        return True
    root, version = environ.get("CLUSTERDOC_PACKAGE_ROOT"), environ.get("CLUSTERDOC_PY_VERSION")
    if root and version == "{}.{}".format(*sys.version_info[:2]):
        sys.path.append(root)  # last: the rank's own packages win
        return importlib.util.find_spec("clusterdoc") is not None
    return False


def _start():
    argv = getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv]
    rank = rank_of(os.environ, argv)
    if rank is None:
        return
    if not _clusterdoc_importable(os.environ):
        sys.stderr.write(
            f"clusterdoc: rank {rank}: the shim is off: this python ({sys.executable}) cannot import clusterdoc; "
            "install clusterdoc in it to get the rank's records\n"
        )
        return
    try:
        from clusterdoc import run
    except ImportError as err:  # clusterdoc's own imports (yaml, ...) missing here: the script runs as it is
        sys.stderr.write(f"clusterdoc: rank {rank}: the shim is off: clusterdoc cannot be imported here: {err}\n")
        return
    kind, target = main_of(argv)
    run.take_over(kind, target, list(sys.argv[1:]), os.environ["CLUSTERDOC_BATCH_DIR"])


try:  # the site's own first: it may set up what the rank's script needs
    _chain()
except Exception as err:
    sys.stderr.write(f"clusterdoc: error in the sitecustomize after clusterdoc's: {type(err).__name__}: {err}\n")
_start()
