"""SubmitOptions: what a user asks `clusterdoc submit` / `clusterdoc.submit()` for, before it is resolved.

None means "not given": then CLUSTERDOC_<KEY>, the YAML config files and the default decide, in that
order (clusterdoc/config.py). `resolve()` turns the request into a JobSpec, the resolved job every backend runs.
One field per row of clusterdoc/optiontable.py (its type, default and help are there; tests/test_option_table.py
holds the two together), typed here for the API's users and mypy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterdoc.optiontable import OPTIONS


@dataclass
class SubmitOptions:
    script: str
    script_args: list[str] = field(default_factory=list)
    backend: str | None = None
    nodes: int | None = None
    tasks_per_node: int | None = None
    gpus_per_node: int | None = None
    hostfile: str | None = None
    ssh_config: str | None = None
    partition: str | None = None
    time: int | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = None
    mem: str | None = None
    mem_per_gpu: str | None = None
    exclusive: bool | None = None
    cpus_per_task: int | None = None
    reservation: str | None = None
    sbatch_option: list[str] | None = None
    srun_option: list[str] | None = None
    setup: list[str] | None = None
    debug: bool | None = None
    log_level: str | None = None
    overflow: bool | None = None
    oom_retry: str | None = None
    preflight: bool | None = None
    wait: bool | None = None
    folder: str | None = None
    mpirun: str | None = None
    python: str | None = None
    hang_timeout: int | None = None
    on_hang: str | None = None
    trace: bool | None = None
    straggler: int | None = None
    port: int | None = None
    retries: int | None = None
    slurm_wait: int | None = None
    config: str | None = None

    def flags(self) -> dict[str, object]:
        """The settings given here, by config key (None: not given)."""
        return {o.key: o.to_field(getattr(self, o.attr)) for o in OPTIONS if o.layered}
