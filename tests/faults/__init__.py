"""A fault campaign on the test cluster (issue 43): `python -m tests.faults --backend slurm --jobs 20 --seed 1`.

    catalog.py     the faults, one class each: what it does to the cluster, and what must follow (outcome, why)
    invariants.py  pure checks over what a job left (submit's exit code and output, job.json, why, leftovers)
    runner.py      one job: submit, wait for the moment, plant the fault, wait for the end, gather, check
    job.py         the small checkpointing training job every campaign job runs
    __main__.py    the command line: the table as it goes, totals per kind, the JSON report

The same seed draws the same faults, victims and moments. docs/reliability.md has the figures.
"""
