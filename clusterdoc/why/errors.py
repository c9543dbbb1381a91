"""why's one base exception: `except clusterdoc.WhyError` catches every error `clusterdoc why` raises of its own
(`logread.GrepFailed`: the system's grep could not scan a log, and Python scans it instead).

WhyError derives from clusterdoc.ClusterdocError; a user's mistake is a clusterdoc.UsageError, as everywhere."""

from clusterdoc.errors import ClusterdocError


class WhyError(ClusterdocError):
    """Raised by clusterdoc.why (explaining a job's failure)."""
