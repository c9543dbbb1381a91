"""launch's one base exception: `except clusterdoc.LaunchError` catches every error submit and its backends raise
of their own (`submit.PreflightFailed`: the preflight found problems, the job was not submitted).

LaunchError derives from clusterdoc.ClusterdocError; a user's mistake is a clusterdoc.UsageError, as everywhere."""

from clusterdoc.errors import ClusterdocError


class LaunchError(ClusterdocError):
    """Raised by clusterdoc.launch (submit, status, cancel, logs, the backends)."""
