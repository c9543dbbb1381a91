"""Settings -> the job: flag > env > config file > default resolved (clusterdoc/config.py; the settings are
clusterdoc/optiontable.py's rows), the backend chosen
(by name, or by affinity: launch/backend.py), checked and made into the JobSpec every backend runs; the note on the
effective batch when the same script last ran on another shape.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from clusterdoc import config, private
from clusterdoc.errors import UsageError
from clusterdoc.launch import batchscript
from clusterdoc.launch.backend import backend_for, by_affinity
from clusterdoc.launch.batchscript import is_batch_script
from clusterdoc.launch.job import JobSpec, get_arg
from clusterdoc.launch.options import SubmitOptions
from clusterdoc.launch.setup import check as check_setup
from clusterdoc.optiontable import sbatch_options, spec_values, srun_option

BATCH_ARGS = ("batch-size", "batch_size", "per-device-batch-size", "per_device_train_batch_size", "bs")


def resolve_settings(opts: SubmitOptions) -> tuple[dict, dict]:
    return config.resolve(opts.flags(), explicit_config=opts.config)


def resolve(opts: SubmitOptions) -> tuple[JobSpec, dict, str]:
    """(the job every backend runs, the resolved settings, why that backend): flag > env > config file > default."""
    settings, origin = resolve_settings(opts)
    backend, why = backend_and_why(settings, origin)
    if is_batch_script(opts.script):
        return batch_spec(settings, origin, opts, backend), settings, why
    return build_spec(settings, opts.script, list(opts.script_args), backend), settings, why


def batch_spec(settings: dict, origin: dict, opts: SubmitOptions, backend: str) -> JobSpec:
    """A user's own batch script: its #SBATCH lines are the job's shape, under the flags and CLUSTERDOC_*
    variables (sbatch's command line, which overrides them), over the config files and the defaults."""
    if not backend_for(backend).runs_batch_scripts:
        raise UsageError(
            f"{opts.script} is a batch script (#SBATCH lines or a shell's #!), which runs through Slurm's sbatch, "
            f"not the {backend} backend",
            hint="submit it from a machine where Slurm answers (or with SLURM_CONF set), with --backend slurm; "
            "a Python training script runs on any backend",
        )
    if settings["srun_option"]:
        where = origin.get("srun_option", "flag")
        raise UsageError(
            f"--srun-option {settings['srun_option'][0]!r}"
            + ("" if where == "flag" else f" (from {where})")
            + f": {opts.script} is a batch script, which writes its own srun lines",
            hint="put the option on the script's srun line (or in SLURM_* variables the script exports); "
            "--srun-option is for a Python script that clusterdoc starts",
        )
    if settings["setup"] and batchscript.interpreter(opts.script) != "bash":
        raise UsageError(
            f"--setup with {opts.script}: its lines run in the batch shell before the script's first line, which "
            f"bash does (BASH_ENV) and {batchscript.interpreter(opts.script) or 'a script without #!'} does not",
            hint="start the script with #!/bin/bash, or write the setup lines at its top",
        )
    req = batchscript.request(opts.script)
    merged, args = batchscript.merge(settings, origin, req)
    spec = build_spec(merged, opts.script, list(opts.script_args), backend)
    spec.batch_script, spec.sbatch_args = True, args
    return spec


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
    parse_oom_retry(settings["oom_retry"], script_args)
    check_setup(settings["setup"])
    sbatch_options(settings)  # every --sbatch-option checked now, before anything starts
    srun = [srun_option(o) for o in settings["srun_option"] or []] or None
    if settings["straggler"] >= 100:
        raise UsageError(
            f"--straggler {settings['straggler']}: a percentage of the step below 100",
            hint="e.g. --straggler 10 (the default), or 0 to switch the straggler watch off",
        )
    derived = {  # the spec's resolved forms of a few settings; every other row goes in as it is
        "backend": backend,
        "tasks_per_node": tasks,
        "gpus_per_node": gpus,
        "hostfile": _abs(settings["hostfile"]),
        "ssh_config": _abs(settings["ssh_config"]),
        "python": settings["python"] or sys.executable,
        "srun_option": srun,
    }
    values = {**spec_values(settings), **derived}
    return JobSpec(script=str(path.absolute()), script_args=list(script_args), **values)


def _abs(p: str | None) -> str | None:
    return str(Path(p).expanduser().absolute()) if p else None


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
