"""Preflight: the doctor on the job's nodes before any rank starts.

- local: `clusterdoc check --local --python PY` (this machine);
- mpirun: `clusterdoc check --python PY` on the first N hosts of the hostfile, over SSH with the job's --ssh-config;
  in both, the probe runs under the job's own interpreter PY, as in Slurm's allocation, so its torch and
  packages are what is judged (not whatever python3 comes first on PATH);
- slurm: the nodes are known only once the allocation exists, so the check is the job's first step: `--judge`
  in the batch shell runs the doctor through srun (doctor/srun.py, as `clusterdoc check` inside an allocation:
  one task per node, no SSH), judges, and stops the job on failure (exit 3, report in <job>/preflight.txt).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from clusterdoc import private
from clusterdoc.checks import registry
from clusterdoc.errors import UsageError
from clusterdoc.launch.job import JobSpec
from clusterdoc.launch.setup import failed_line, wrap_text

ALLOCATION_CHECKS = registry.allocation()  # judged from facts alone (a check's `allocation`), in column order
# per node inside the allocation: every rank is about to import torch anyway, and on a busy node that import
# alone can take longer than the doctor's interactive limits (the torch child gets most of it)
GATHER_TIMEOUT = 60.0


def run_local(spec: JobSpec) -> tuple[bool, str]:
    """The local backend's preflight: this machine, as the ranks will start from this shell."""
    from clusterdoc import doctor  # start-up cost: the doctor loads only when a preflight runs

    opts = doctor.CheckOptions(
        local=True,
        skip=["mpi"],
        python=spec.python,
        tasks_per_node=spec.tasks_per_node,
        launcher="local",
        wrap=wrap_text(spec.setup),  # the probe runs after the --setup lines, as the ranks do
    )
    try:
        report = doctor.check(opts)  # the ranks start from this shell: its NCCL_* etc. are judged (doctor/jobenv.py)
    except UsageError as err:
        said = failed_line(str(err)) if spec.setup else None
        if said is None:
            raise
        raise UsageError(
            f"the preflight stopped at a setup line: {said}",
            hint="the same line runs before every rank: fix it (or end it with '|| true' if its failure does not "
            "matter)",
        ) from None
    return report.ok, "preflight (this machine):\n" + report.render()


def hostfile_nodes(spec: JobSpec) -> list[str]:
    """The mpirun backend's nodes: the hostfile's first spec.nodes hosts, as [user@]host."""
    from clusterdoc import hostfile

    if spec.hostfile is None:
        raise UsageError("the mpirun backend needs --hostfile", hint="or use --backend local / slurm")
    return [(f"{h.user}@" if h.user else "") + h.host for h in hostfile.parse_file(spec.hostfile)[: spec.nodes]]


def run_mpirun(spec: JobSpec, job_id: str = "") -> tuple[bool, str]:
    """The mpirun backend's preflight: the doctor over SSH on the hostfile's nodes. `job_id`: the job's id, from
    which its rendezvous port derives (unless spec.port): the port check listens there on the first node."""
    from clusterdoc import doctor  # start-up cost: the doctor loads only when a preflight runs

    nodelist = hostfile_nodes(spec)
    # files: the job's interpreter and script, the same bytes on every node (the ranks run them by path)
    files = [spec.python, spec.script]
    from clusterdoc.shim.env import port_from_job_id

    port = spec.port or port_from_job_id(job_id)  # the MASTER_PORT the mpirun backend gives the ranks
    report = doctor.check(
        doctor.CheckOptions(
            nodelist=nodelist,
            python=spec.python,
            ssh_config=spec.ssh_config,
            mpirun=spec.mpirun,
            launcher=_mpi_launcher(spec.mpirun),  # MPICH passes this shell on, Open MPI only the -x names
            files=files,
            port=port,
            tasks_per_node=spec.tasks_per_node,
            progress=False,
            wrap=wrap_text(spec.setup),  # the probe runs after the --setup lines, as the ranks do
        )
    )
    return report.ok, f"preflight ({len(nodelist)} node(s) of {spec.hostfile}):\n" + report.render()


def _mpi_launcher(mpirun: str | None) -> str:
    """The mpirun backend's flavour as a launcher of doctor/jobenv.py (what it passes on of this shell)."""
    from clusterdoc.launch import mpi

    flavour = mpi.flavour_from_version(mpi.version_text(mpirun or "mpirun"), mpirun or "mpirun")
    return "mpich" if flavour == "mpich" else "openmpi"


# --- inside a Slurm allocation ---------------------------------------------------------------------

SHELL_FILE = "shell-env.json"  # in the job folder: the submitting shell's judged variables (doctor/jobenv.py)


def record_shell(job_dir: Path, environ=None) -> None:
    """At submission: the variables of the submitting shell the checks read, which sbatch's --export=ALL hands to
    the job. The batch shell has them too, but also what Slurm set there itself (a gres' CUDA_VISIBLE_DEVICES):
    the preflight tells them apart with this record."""
    from clusterdoc.doctor.jobenv import judged

    env = os.environ if environ is None else environ
    private.write(job_dir / SHELL_FILE, json.dumps({k: v for k, v in env.items() if judged(k)}, sort_keys=True))


def recorded_shell(job_dir: Path) -> dict[str, str] | None:
    """What record_shell wrote (None: no record, a job submitted before it existed)."""
    try:
        doc = private.read_json(job_dir / SHELL_FILE)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    return {k: v for k, v in doc.items() if isinstance(k, str) and isinstance(v, str)}


def judge(
    job_dir: Path,
    nodes: int,
    tasks_per_node: int | None = None,
    through_srun: bool = False,
    srun_options: list[str] | None = None,
) -> int:
    """In the batch shell (`through_srun`): the doctor through srun (the same transport as `clusterdoc check`
    inside an allocation: one task per allocated node, no SSH), its probe under this interpreter (the job's), the
    facts kept in <job>/preflight/; else the facts already there. It runs after the job's --setup lines in the batch
    shell, whose environment srun passes on; `srun_options`: the ranks' own (a container image). The report goes
    to <job>/preflight.txt; exit 1 stops the job."""
    from clusterdoc import doctor

    folder = str(job_dir / "preflight")
    opts = doctor.CheckOptions(
        checks=ALLOCATION_CHECKS,
        progress=False,
        tasks_per_node=tasks_per_node,
        launcher="slurm",  # the submitting shell's variables reach the ranks (--export=ALL)
        environ=recorded_shell(job_dir),  # those, not what Slurm set in the batch shell (None: the batch shell's)
    )
    if through_srun:
        opts.transport, opts.python, opts.timeout, opts.save_facts = "srun", sys.executable, GATHER_TIMEOUT, folder
        opts.srun_options = list(srun_options or [])
    else:
        opts.facts_dir = folder
    g = doctor.gather(opts)
    report = doctor.Report.build(g, doctor.judge(g, opts))
    text, code = report.render(), report.exit_code
    answered = len(g.answered())
    if answered < nodes:
        text += f"\nonly {answered} of {nodes} node(s) gave facts (see the job's submitit logs)"
        code = 1
    verdict = (
        "ok: starting the ranks"
        if code == 0
        else "FAILED: the job stops here (clusterdoc submit --no-preflight skips this)"
    )
    private.write(job_dir / "preflight.txt", f"preflight on the allocation's nodes:\n{text}\npreflight {verdict}\n")
    print(text)
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m clusterdoc.launch.preflight")
    p.add_argument("--judge", metavar="JOBDIR", required=True)
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--tasks-per-node", type=int, default=None)
    p.add_argument("--srun-option", action="append", default=[])
    ns = p.parse_args(argv)
    return judge(Path(ns.judge), ns.nodes, ns.tasks_per_node, through_srun=True, srun_options=ns.srun_option)


if __name__ == "__main__":
    sys.exit(main())
