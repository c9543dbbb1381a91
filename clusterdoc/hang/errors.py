"""hang's one base exception: `except clusterdoc.HangError` catches every error the hang doctor's shared parts
raise of their own (`channel.NoSecret`: no job secret, the side channel stays off, a RuntimeError as before;
`seal.Rejected`: a value not sealed under the job's secret for its key, a ValueError as before).

HangError derives from clusterdoc.ClusterdocError."""

from clusterdoc.errors import ClusterdocError


class HangError(ClusterdocError):
    """Raised by clusterdoc.hang (the store side channel, its seal)."""
