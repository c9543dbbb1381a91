"""The shim's one base exception: `except shim.ShimError` catches every error the shim raises on a rank.

Each error also keeps the built-in base the peers' names promise (Accelerate's `DistributedOperationException`
is an `Exception`, a batch-size search that reaches zero a `RuntimeError`, an overflow a `ValueError`), so code
written against them catches it as before."""

from clusterdoc.errors import ClusterdocError


class ShimError(ClusterdocError):
    """Raised by clusterdoc.shim on a rank: a launcher's environment, a collective mismatch, an OOM retry, an
    overflow."""
