"""This machine as the one node ('localhost'): the probe in this process when it is the job's interpreter, else
under it (or under --wrap) exactly as on a remote node; commands through bash, files copied."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from clusterdoc import probe
from clusterdoc.doctor.payload import parse_output, probe_argv, probe_source, probe_timeout
from clusterdoc.doctor.transports.base import Answer, ProbeRequest, RunResult
from clusterdoc.errors import UsageError
from clusterdoc.untrusted import clean_facts, printable

LOCAL = "localhost"
MAX_OUTPUT = 4 << 20


class LocalTransport:
    name = "local"

    def probe(self, nodes: list[str], request: ProbeRequest) -> tuple[list[str], dict[str, Answer]]:
        facts = gather_local(request.python, request.timeout, request.head_mpirun, request.args(), request.wrap)
        return [LOCAL], {LOCAL: Answer("local", "", 0.0, 0, facts)}

    def run(self, nodes: list[str], command: str, timeout: float, stdin: bytes | None = None) -> dict[str, RunResult]:
        start = time.monotonic()
        try:
            r = subprocess.run(["bash", "-c", command], input=stdin or b"", capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            res = RunResult(LOCAL, "timeout", None, elapsed=timeout, message=f"did not finish within {timeout:g}s")
        else:
            out, err = (b.decode("utf-8", "replace") for b in (r.stdout[:MAX_OUTPUT], r.stderr[-(64 << 10) :]))
            msg = "" if r.returncode == 0 else f"{LOCAL}: the command exited with {r.returncode}"
            res = RunResult(LOCAL, "ok", r.returncode, out, err, time.monotonic() - start, msg)
        return {n: res for n in nodes or [LOCAL]}

    def put(self, node: str, local: Path, target: str, timeout: float) -> RunResult:
        try:
            shutil.copyfile(local, target)
        except OSError as err:
            return RunResult(node, "error", None, message=f"copy failed: {printable(err.strerror or err)}")
        return RunResult(node, "ok", 0)


def gather_local(
    python: str | None,
    timeout: float,
    head_mpirun: str | None = None,
    more: dict | None = None,
    wrap: str | None = None,
) -> dict:
    """This machine's facts as seen by `python` (the job's interpreter): in this process when it is this
    interpreter, else the probe runs under it, exactly as on a remote node. `head_mpirun`: the mpirun
    the check uses (here the head is the node). Cleaned once, here (untrusted.clean_facts): cleaning them again
    would drop the `malformed` list the first pass made, and with it the finding naming a malformed entry."""
    same = not python or os.path.realpath(shutil.which(python) or python) == os.path.realpath(sys.executable)
    if same and not wrap:
        return clean_facts(
            probe.gather(timeout=probe_timeout(timeout), budget=timeout * 0.9, head_mpirun=head_mpirun, **(more or {}))
        )
    prefix = shlex.split(wrap) if wrap else []
    exe = python or "python3" if wrap else shutil.which(python or "")  # wrapped: the python is the wrapper's
    if not exe or (prefix and not shutil.which(prefix[0])):
        what = f"--wrap {wrap!r}" if prefix else f"--python {python!r}"
        raise UsageError(f"{what} is not an executable here", hint="give the command the ranks run under")
    argv = (
        prefix
        + [exe, "-", "--timeout", f"{probe_timeout(timeout):g}", "--budget", f"{timeout * 0.9:g}"]
        + (["--head-mpirun", head_mpirun] if head_mpirun else [])
        + probe_argv(more or {})
        + (["--wrapped", wrap] if wrap else [])
    )
    try:
        r = subprocess.run(argv, input=probe_source(), capture_output=True, timeout=timeout + 5)
    except subprocess.TimeoutExpired:
        raise UsageError(f"the probe under {wrap or python} did not answer in {timeout:g}s") from None
    facts = parse_output(r.stdout.decode(errors="replace"))
    if not facts:
        tail = (r.stderr.decode(errors="replace").strip().splitlines() or [f"exit {r.returncode}"])[-1]
        raise UsageError(
            f"the probe does not run under {wrap or python}: {tail[:200]}",
            hint="the ranks' python must be Python 3.6 or newer",
        )
    return facts
