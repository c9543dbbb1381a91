"""Preflight: the doctor on the job's nodes before any rank starts.

- local: `clusterdoc check --local --python PY` (this machine);
- mpirun: `clusterdoc check --python PY` on the first N hosts of the hostfile, over SSH with the job's --ssh-config;
  in both, the probe runs under the job's own interpreter PY, as in Slurm's allocation, so its torch and
  packages are what is judged (not whatever python3 comes first on PATH);
- slurm: the nodes are known only once the allocation exists, so the check is the job's first step:
  `srun --ntasks-per-node=1 ... --gather` writes every allocated node's facts (probe.gather, no SSH), then
  `--judge` runs the doctor's checks on them in the batch shell and stops the job on failure
  (exit 3, report in <job>/preflight.txt).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import socket
import sys
import tempfile
import time
from pathlib import Path

from clusterdoc.launch.job import JobSpec

ALLOCATION_CHECKS = ["kernel", "cuda", "arch", "consistency"]  # judged from facts alone
GATHER_WAIT = 60.0
# per probe command inside the allocation: every rank is about to import torch anyway, and on a busy
# node that import alone can take longer than the doctor's interactive 8 s
GATHER_PROBE_TIMEOUT = 30.0


def _doctor(argv: list[str]) -> tuple[int, str]:
    """Run `clusterdoc check ARGV` in this process; (exit code, its report)."""
    from clusterdoc import doctor
    from clusterdoc.cli import build_parser

    args = build_parser().parse_args(["check", *argv])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = doctor.main(args)
    return code, out.getvalue().rstrip()


def run(spec: JobSpec) -> tuple[bool, str]:
    """(ok, report) for the local and mpirun backends; slurm's runs inside the job."""
    if spec.backend == "slurm":
        return True, "preflight: runs in the allocation as the job's first step (see preflight.txt in the log folder)"
    if spec.backend == "local":
        code, text = _doctor(["--local", "--skip", "mpi", "--python", spec.python])
        return code == 0, "preflight (this machine):\n" + text
    from clusterdoc import hostfile

    hosts = hostfile.parse_file(spec.hostfile)[:spec.nodes]
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
        f.write("\n".join((f"{h.user}@" if h.user else "") + h.host for h in hosts) + "\n")
    try:
        argv = [f.name, "--python", spec.python] + (["--ssh-config", spec.ssh_config] if spec.ssh_config else [])
        if spec.mpirun:
            argv += ["--mpirun", spec.mpirun]
        code, text = _doctor(argv)
    finally:
        os.unlink(f.name)
    return code == 0, f"preflight ({len(hosts)} node(s) of {spec.hostfile}):\n" + text


# --- inside a Slurm allocation ---------------------------------------------------------------------

def gather(job_dir: Path) -> int:
    from clusterdoc import probe

    name = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    out = job_dir / "preflight"
    out.mkdir(exist_ok=True)
    facts = probe.gather(timeout=GATHER_PROBE_TIMEOUT)
    tmp = out / f".{name}.json"
    tmp.write_text(json.dumps(facts))
    tmp.replace(out / f"{name}.json")
    return 0


def judge(job_dir: Path, nodes: int) -> int:
    from clusterdoc import doctor, report
    from clusterdoc.checks import arch

    folder = job_dir / "preflight"
    deadline = time.monotonic() + GATHER_WAIT
    while len(list(folder.glob("[!.]*.json"))) < nodes and time.monotonic() < deadline:
        time.sleep(0.5)
    facts = {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("[!.]*.json"))}
    names = sorted(facts, key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)])
    conns = {n: {"status": "ok", "message": "", "elapsed": 0.0, "exit_code": 0} for n in names}
    findings = doctor.judge(names, conns, facts, ALLOCATION_CHECKS, argparse.Namespace(arch_list=None),
                            None, None, None)
    text = report.render(names, findings, ALLOCATION_CHECKS, arch.needed_arch_list(facts), 0, None)
    code = report.exit_code(findings)
    if len(facts) < nodes:
        text += f"\nonly {len(facts)} of {nodes} node(s) gave facts (see the job's submitit logs)"
        code = 1
    verdict = "ok: starting the ranks" if code == 0 else "FAILED: the job stops here (clusterdoc submit --no-preflight skips this)"
    (job_dir / "preflight.txt").write_text(f"preflight on the allocation's nodes:\n{text}\npreflight {verdict}\n")
    print(text)
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m clusterdoc.launch.preflight")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gather", metavar="JOBDIR")
    g.add_argument("--judge", metavar="JOBDIR")
    p.add_argument("--nodes", type=int, default=1)
    ns = p.parse_args(argv)
    if ns.gather:
        return gather(Path(ns.gather))
    return judge(Path(ns.judge), ns.nodes)


if __name__ == "__main__":
    sys.exit(main())
