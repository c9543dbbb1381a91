"""The Slurm transport: no SSH to the nodes, Slurm runs the work (inside an allocation on its nodes, else as a
step of its own). The probe: one srun step, one task per node, each task's facts bound to the node Slurm labelled
it with (doctor/srun.py: task labels, bounded output). A command or a file: one step per node (--nodelist of
that node alone, one task), so its output is that node's by construction; stdin carries the file or script;
each step's output is read up to a bound and the step is ended at its timeout."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from clusterdoc.doctor import srun
from clusterdoc.doctor.transports.base import Answer, ProbeRequest, RunResult
from clusterdoc.errors import UsageError
from clusterdoc.untrusted import printable

MAX_OUTPUT = 4 << 20  # bytes of a step's stdout kept (as over SSH); stderr: its tail
STARTUP = 30.0  # seconds Slurm may take to start a step, on top of the command's own timeout


class SrunTransport:
    name = "srun"

    def __init__(
        self,
        partition: str | None = None,
        count: int | None = None,
        srun_options: list[str] | None = None,
        prefix: list[str] | None = None,
        fanout: int = 32,
    ):
        self.partition, self.count = partition, count
        self.srun_options, self.prefix = list(srun_options or []), list(prefix or [])
        self.fanout = fanout

    def probe(self, nodes: list[str], request: ProbeRequest) -> tuple[list[str], dict[str, Answer]]:
        asked = list(nodes) or None
        argv = srun.srun_argv(
            request.timeout, asked, self.count, self.partition, request.python, None, self.srun_options, self.prefix,
            request.argv(),
        )  # fmt: skip
        names, conns, facts = srun.gather(argv, request.timeout, asked, self.count)
        answers = {}
        for n in names:
            c = conns[n]
            answers[n] = Answer(c["status"], c["message"], c["elapsed"], c["exit_code"], facts[n], via="srun")
        return names, answers

    def step_argv(self, node: str, timeout: float, argv: list[str]) -> list[str]:
        """srun running `argv` once, on `node` alone."""
        if not srun.NAME.fullmatch(node):
            raise UsageError(f"{printable(node, 80)!r} is not a Slurm node name")
        step = ["srun", "--nodes=1", "--ntasks=1", f"--nodelist={node}", "--kill-on-bad-exit=0", "--quiet"]
        if self.partition:
            step.append(f"--partition={self.partition}")
        if not srun.in_allocation():  # a step of its own: ask for no more time than the command takes
            step.append(f"--time={max(1, int(timeout // 60) + 2)}")
        return step + self.srun_options + argv

    def run(self, nodes: list[str], command: str, timeout: float, stdin: bytes | None = None) -> dict[str, RunResult]:
        argvs = {n: self.step_argv(n, timeout, ["bash", "-c", command]) for n in nodes}
        with ThreadPoolExecutor(max_workers=max(1, min(self.fanout, len(nodes)))) as pool:
            futures = {n: pool.submit(run_step, n, argvs[n], stdin, timeout) for n in nodes}
            return {n: futures[n].result() for n in nodes}

    def put(self, node: str, local: Path, target: str, timeout: float) -> RunResult:
        """The file through the step's stdin (`cat > TARGET` on the node): no SFTP, no shared filesystem needed."""
        argv = self.step_argv(node, timeout, ["sh", "-c", 'cat > "$1"', "clusterdoc-put", target])
        try:
            data = Path(local).read_bytes()
        except OSError as err:
            return RunResult(node, "error", None, message=f"cannot read {printable(local)}: {err.strerror or err}")
        r = run_step(node, argv, data, timeout)
        if r.status == "ok" and r.exit_code != 0:
            tail = (r.stderr.strip().splitlines() or [f"exit {r.exit_code}"])[-1]
            r.status, r.message = "error", f"{node}: copy failed: {printable(tail, 200)}"
        return r


def run_step(node: str, argv: list[str], stdin: bytes | None, timeout: float) -> RunResult:
    """One srun step: its exit code, stdout (at most MAX_OUTPUT bytes kept) and stderr's tail; killed (SIGTERM:
    srun cancels the step, then SIGKILL) past `timeout` + STARTUP seconds."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )  # fmt: skip
    except OSError as exc:
        return RunResult(node, "error", None, message=f"{node}: cannot start srun: {exc.strerror or exc}")
    out, err = bytearray(), bytearray()
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None

    def drain(fd: int, buf: bytearray, keep_head: bool) -> None:
        for chunk in iter(lambda: os.read(fd, 65536), b""):
            if keep_head:
                buf.extend(chunk[: max(0, MAX_OUTPUT - len(buf))])
            else:
                buf.extend(chunk)
                del buf[: -(64 << 10)]

    readers = [
        threading.Thread(target=drain, args=(proc.stdout.fileno(), out, True), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr.fileno(), err, False), daemon=True),
    ]
    for t in readers:
        t.start()

    def feed() -> None:
        try:
            if stdin:
                proc.stdin.write(stdin)  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass  # the step ended before reading it all: its exit code says so

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    code: int | None = srun._stop(proc, timeout + STARTUP)
    killed = time.monotonic() - start >= timeout + STARTUP
    for t in readers:
        t.join(5)
    elapsed = time.monotonic() - start
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if killed:
        return RunResult(node, "timeout", None, stdout, stderr, elapsed, f"{node}: did not finish within {timeout:g}s")
    message = "" if code == 0 else f"{node}: the command exited with {code} (srun)"
    return RunResult(node, "ok", code, stdout, stderr, elapsed, message)
