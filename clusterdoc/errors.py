"""Errors that are the user's to fix: printed as one clear message, never a traceback."""


class UsageError(ValueError):
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
