"""SubmitOptions: what a user asks `clusterdoc submit` / `clusterdoc.submit()` for, before it is resolved.

None means "not given": then CLUSTERDOC_<KEY>, the YAML config files and the default decide, in that
order (clusterdoc/config.py). `resolve()` turns the request into a JobSpec, the resolved job every backend runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SubmitOptions:
    script: str
    script_args: list[str] = field(default_factory=list)
    backend: str | None = None  # auto | local | slurm | mpirun
    nodes: int | None = None
    tasks_per_node: int | None = None
    gpus_per_node: int | None = None
    hostfile: str | None = None  # the mpirun backend's nodes (and the preflight's)
    ssh_config: str | None = None
    partition: str | None = None
    time: int | None = None  # minutes (Slurm)
    debug: bool | None = None  # collective shape checking in every rank
    log_level: str | None = None
    overflow: bool | None = None
    oom_retry: str | None = None  # ARG[:MIN]: relaunch with the script's --ARG halved
    preflight: bool | None = None  # the doctor first (default yes)
    wait: bool | None = None  # CLI: stream and wait (default for local)
    folder: str | None = None  # log folder root (default ./clusterdoc-jobs)
    mpirun: str | None = None
    python: str | None = None  # the ranks' interpreter (default this one)
    hang_timeout: int | None = None  # seconds in one collective before the hang report (0: off)
    on_hang: str | None = None  # abort | wait
    trace: bool | None = None  # keep every collective for `clusterdoc trace`
    straggler: int | None = None  # % of the step the median rank waits for a straggler before it is logged (0: off)
    port: int | None = None  # the rendezvous MASTER_PORT (default: derived from the job id)
    retries: int | None = None  # new attempts after a node or scheduler failure, without the blamed nodes
    slurm_wait: int | None = None  # seconds to wait for a Slurm controller that does not answer
    config: str | None = None  # an explicit YAML config file

    def flags(self) -> dict[str, object]:
        """The settings given here, by config.SETTINGS key (None: not given)."""
        from clusterdoc import config

        given = {k: v for k, v in vars(self).items() if k in config.SETTINGS}
        given["no_preflight"] = None if self.preflight is None else not self.preflight
        return given
