"""Launching jobs: `clusterdoc submit`, `status`, `logs`.

Core (the same for every backend), in the spirit of submitit's core vs its executors:
    job.py        job spec, rank environment, script-argument editing (the folder: clusterdoc/jobs/folder.py)
    outcome.py    how an attempt ended: per-rank exit codes, first failure, OOM
    stream.py     rank-tagged streaming of the rank log files
    preflight.py  the doctor on the job's nodes (before submitting, or as the Slurm job's first step)
    accounting.py may the user submit to this account, partition and QOS (Slurm accounting, before sbatch)
    settings.py   settings -> spec, the backend's choice (by name, or by affinity)
    attempts.py   start an attempt, wait (streaming, the hang watch), record it, retry (--oom-retry, --retries)
    supervise.py  --no-wait's detached supervisor (`python -m clusterdoc.launch.submit --supervise`)
    control.py    a job on record: live state, status, cancel, logs, as data (the CLI and api.Job render it)
    submit.py     the commands: `submit`, `status`, `logs`, `cancel`, printed
    errors.py     LaunchError, the base of launch's own errors (PreflightFailed)
Backends (start / poll / cancel only), each behind backend.py's interface (Backend, Handle) in one table, BACKENDS:
    local.py      N x K processes on this machine
    slurm.py      sbatch through submitit, one srun task per rank; state from squeue, scontrol, then sacct
    mpi.py        mpirun, MPICH or Open MPI flags
Every rank runs `python -m clusterdoc.run` (clusterdoc/run.py), which writes its own log files.
"""
