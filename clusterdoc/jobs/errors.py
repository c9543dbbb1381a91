"""jobs' one base exception: `except clusterdoc.JobsError` catches every error the job folder and the Slurm
commands raise of their own (`slurmcmd.Unreachable`: Slurm's controller did not answer).

JobsError derives from clusterdoc.ClusterdocError; a user's mistake is a clusterdoc.UsageError, as everywhere."""

from clusterdoc.errors import ClusterdocError


class JobsError(ClusterdocError):
    """Raised by clusterdoc.jobs (a job's folder, the Slurm commands asked about it)."""
