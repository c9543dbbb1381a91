"""Launching jobs: `clusterdoc submit`, `status`, `logs`.

Core (the same for every backend), in the spirit of submitit's core vs its executors:
    job.py        job spec, rank environment, script-argument editing (the folder: clusterdoc/jobs/folder.py)
    outcome.py    how an attempt ended: per-rank exit codes, first failure, OOM
    stream.py     rank-tagged streaming of the rank log files
    preflight.py  the doctor on the job's nodes (before submitting, or as the Slurm job's first step)
    submit.py     settings -> spec, backend choice, attempts (--oom-retry), waiting, status, logs
Backends (start / poll / cancel only), each behind backend.py's interface (Backend, Handle) in one table, BACKENDS:
    local.py      N x K processes on this machine
    slurm.py      sbatch through submitit, one srun task per rank; state without sacct
    mpi.py        mpirun, MPICH or Open MPI flags
Every rank runs `python -m clusterdoc.run` (clusterdoc/run.py), which writes its own log files.
"""
