"""clusterdoc's exceptions: the root every one of them derives from, and the errors that are the user's to fix
(printed as one clear message, never a traceback).

Each package that raises errors of its own has one base beside it, derived from ClusterdocError: `LaunchError`
(launch/errors.py), `WhyError` (why/errors.py), `HangError` (hang/errors.py), `JobsError` (jobs/errors.py),
`ShimError` (shim/errors.py). Each error keeps the built-in base its meaning has (a ValueError, a RuntimeError),
so code that caught it as that catches it still. The doctor and build-wheel raise UsageError only.
"""


class ClusterdocError(Exception):
    """The root of every exception clusterdoc raises of its own: `except clusterdoc.ClusterdocError`."""


class UsageError(ClusterdocError, ValueError):
    """Bad input from the user (flags, files). The CLI prints it and exits 2.

    `where` is "file:line" (or just the file) when the problem is in a file.
    """

    exit_code = 2

    def __init__(self, message: str, where: str = "", hint: str = ""):
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  {self.hint}"
        return text
