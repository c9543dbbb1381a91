"""clusterdoc: a doctor for distributed PyTorch training on SLURM/MPI clusters.

    import clusterdoc
    report = clusterdoc.check("hostfile")          # the doctor -> Report (str() is the CLI's table)
    job = clusterdoc.submit("train.py", nodes=4)   # a job -> Job (state, wait(), logs(), cancel())
    plan = clusterdoc.build_wheel(arch_list="8.0;9.0", dry_run=True)

Where things live: doctor/ (gather -> judge -> report) with the rules in checks/ and what a node
reports in probe/; launch/ (submit, the local/slurm/mpirun backends, the hang watch); shim/ (imported
in the job: tracking, debug mode, logging, OOM retry, overflow); wheel/ (build-wheel); cli.py (arguments only).
Importing this package is cheap: the API's names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from clusterdoc.api import Job, build_wheel, check, submit
    from clusterdoc.checks import Finding
    from clusterdoc.doctor import CheckOptions, NodeResult, Report
    from clusterdoc.errors import ClusterdocError, UsageError
    from clusterdoc.hang.errors import HangError
    from clusterdoc.jobs.errors import JobsError
    from clusterdoc.launch.errors import LaunchError
    from clusterdoc.launch.job import JobSpec
    from clusterdoc.launch.options import SubmitOptions
    from clusterdoc.launch.outcome import Outcome
    from clusterdoc.launch.submit import PreflightFailed
    from clusterdoc.shim.errors import ShimError
    from clusterdoc.wheel.options import WheelOptions, WheelResult
    from clusterdoc.why.errors import WhyError

_EXPORTS = {
    "check": "clusterdoc.api",
    "submit": "clusterdoc.api",
    "build_wheel": "clusterdoc.api",
    "Job": "clusterdoc.api",
    "Report": "clusterdoc.doctor",
    "NodeResult": "clusterdoc.doctor",
    "CheckOptions": "clusterdoc.doctor",
    "Finding": "clusterdoc.checks",
    "JobSpec": "clusterdoc.launch.job",
    "SubmitOptions": "clusterdoc.launch.options",
    "Outcome": "clusterdoc.launch.outcome",
    "PreflightFailed": "clusterdoc.launch.submit",
    "WheelOptions": "clusterdoc.wheel.options",
    "WheelResult": "clusterdoc.wheel.options",
    "UsageError": "clusterdoc.errors",
    # one base per package that raises errors of its own, all under ClusterdocError (clusterdoc/errors.py)
    "ClusterdocError": "clusterdoc.errors",
    "LaunchError": "clusterdoc.launch.errors",
    "WhyError": "clusterdoc.why.errors",
    "HangError": "clusterdoc.hang.errors",
    "JobsError": "clusterdoc.jobs.errors",
    "ShimError": "clusterdoc.shim.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'clusterdoc' has no attribute {name!r}")
