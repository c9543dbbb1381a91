"""What a job is on disk and to Slurm, one floor below `launch` (which makes and runs jobs) and `why` (which
explains them): neither imports the other for these.

    folder.py     one job's folder: layout, job.json record, reserving it safely, finding a job by id
    slurmcmd.py   every Slurm command clusterdoc asks (squeue, scontrol, scancel), with a checked job id
    sacct.py      what accounting (sacct) remembers of a job the controller forgot: a bounded parser, a query
    errors.py     JobsError, the base of their own errors (slurmcmd.Unreachable)
"""
