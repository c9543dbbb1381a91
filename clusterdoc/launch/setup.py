"""`--setup LINE`: the user's shell lines that make the job's environment (`module load cuda/12.4`, `conda activate`,
`source env.sh`), run before the ranks start and before the preflight probes the nodes.

A line is the user's own shell code and runs as such: in Slurm's batch script (submitit's setup lines, so the
preflight step and the ranks' srun inherit what it sets), and for local and mpirun in a bash of each rank's own
(`bash -c 'LINES; exec "$@"' clusterdoc-setup PYTHON ...`, and the doctor's probe under the same prefix). Nothing
clusterdoc writes is mixed into a line (each is `eval`ed as the user wrote it; the job's own values, paths and hosts,
are arguments after the lines). Each line must be a complete command (checked with `bash -n` before anything is
submitted); one that fails stops the job with SETUP_FAILED and says which. Where a line uses `module` and the shell
has no `module` function yet, the site's Lmod or Environment Modules init is sourced first (as a login shell would).
"""

from __future__ import annotations

import re
import shlex
import subprocess

from clusterdoc.errors import UsageError
from clusterdoc.untrusted import printable

SETUP_FAILED = 4  # the exit status of a batch script or rank whose setup line failed
MAX_LINE = 1024  # a setup line's characters (the doctor reports the wrapped command, 4096 at most)
MODULE_INITS = (  # Lmod, then Environment Modules (Debian's and others' paths)
    "/usr/share/lmod/lmod/init/bash",
    "/etc/profile.d/lmod.sh",
    "/etc/profile.d/modules.sh",
    "/usr/share/modules/init/bash",
)
USES_MODULE = re.compile(r"(^|[;&|({\s])(module|ml)(\s|$)")
NAME = "clusterdoc-setup"  # $0 of the wrapping shell


def check(lines: list[str] | None) -> None:
    """UsageError for a line that is no complete shell command (a NUL, a newline, too long, `bash -n` refuses)."""
    for i, line in enumerate(lines or [], 1):
        shown = printable(line, 120)
        if "\0" in line or "\n" in line or "\r" in line or len(line) > MAX_LINE:
            raise UsageError(
                f"--setup line {i} {shown!r}: one line of shell, at most {MAX_LINE} characters",
                hint="give each command as its own --setup (or item of `setup:` in the config)",
            )
        try:
            res = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return  # no bash here to ask: the batch shell will say it
        if res.returncode != 0:
            said = printable((res.stderr.strip().splitlines() or ["syntax error"])[-1], 200)
            raise UsageError(
                f"--setup line {i} {shown!r} is not a complete shell command: {said}",
                hint="each --setup is run as one line of bash, e.g. --setup 'module load cuda/12.4'",
            )


def module_init() -> str:
    """Bash that makes `module` a function where it is not one yet: the first init file the node has."""
    files = " ".join(shlex.quote(f) for f in MODULE_INITS)
    return (
        "if ! declare -F module >/dev/null 2>&1; then for clusterdoc_init in "
        f'{files}; do if [ -r "$clusterdoc_init" ]; then . "$clusterdoc_init"; break; fi; done; fi'
    )


def script_lines(lines: list[str] | None) -> list[str]:
    """The setup lines as bash lines, one each: the user's line run as it is (`eval` of it quoted, so a comment at
    its end cannot hide what follows), and when it fails the shell stops with SETUP_FAILED naming it; the module
    init first where a line uses `module`. No line holds a line break (the doctor's `wrap` is one line)."""
    lines = list(lines or [])
    if not lines:
        return []
    out = [module_init()] if any(USES_MODULE.search(line) for line in lines) else []
    for i, line in enumerate(lines, 1):
        said = (
            shlex.quote(f"clusterdoc: --setup line {i} failed (exit ") + '"$clusterdoc_rc"' + shlex.quote(f"): {line}")
        )
        out.append(f"eval {shlex.quote(line)} || {{ clusterdoc_rc=$?; echo {said} >&2; exit {SETUP_FAILED}; }}")
    return out


FAILED_LINE = re.compile(r"clusterdoc: (--setup line \d+ failed \(exit \d+\): [^\n]*)")


def failed_line(text: str) -> str | None:
    """The last `--setup line N failed (exit C): LINE` that a shell of script_lines said in `text`, else None."""
    found = FAILED_LINE.findall(text)
    return printable(found[-1], 300) if found else None


def wrap_argv(lines: list[str] | None, argv: list[str]) -> list[str]:
    """`argv` run after the setup lines, in a bash of its own that then becomes `argv` (exec: the rank's pid,
    signals and exit status are the program's)."""
    if not lines:
        return list(argv)
    return ["bash", "-c", "; ".join([*script_lines(lines), 'exec "$@"']), NAME, *argv]


def wrap_text(lines: list[str] | None) -> str | None:
    """The same prefix as one command string (the doctor's `wrap`: its probe runs under it), None without lines."""
    return shlex.join(wrap_argv(lines, [])) if lines else None
