"""CheckOptions: everything `clusterdoc check` / `clusterdoc.check()` can be told, in one typed object."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterdoc.checks import registry
from clusterdoc.doctor.jobenv import LAUNCHERS
from clusterdoc.errors import UsageError
from clusterdoc.targets import Targets

DEFAULT_PORT = 29500  # torchrun's default MASTER_PORT (submit derives a port per job: its preflight passes that one)


@dataclass
class CheckOptions(Targets):
    local: bool = False  # this machine only, no SSH (also when no hostfile is given)
    facts_dir: str | None = None  # judge saved facts (one JSON per node) instead of probing
    save_facts: str | None = None  # write each node's facts there (what --facts reads back)
    checks: list[str] | str | None = None  # names or "a,b"; None: all but comm
    skip: list[str] | str | None = None
    comm: bool = False  # also a real torch.distributed all_reduce, one rank per node
    perf: bool = False  # also time each node's compute and localize slow links (checks/perf.py)
    perf_mib: float = 16.0  # MiB each rank of a pair sends (and receives) per exchange
    compute_fraction: float = 0.2  # a node this far below the median compute (or memory) is named
    busbw_fraction: float = 0.5  # a link below this fraction of the reference busbw is slow ...
    min_busbw: float | None = None  # ... or below this many Gb/s, when given
    mesh: str | bool = "sample"  # node-to-node ssh: sample (k peers each, the rest judged from
    mesh_k: int = 3  # facts), full (every pair), off; True/False: sample/off
    mesh_seed: int = 0
    arch_list: str | None = None  # TORCH_CUDA_ARCH_LIST to judge instead of each node's
    mpirun: str | None = None  # the head's mpirun (default: mpirun on PATH)
    python: str | None = None  # the python the job's ranks run: the probe runs under it
    strict: bool = False  # warnings fail too (exit 1)
    verbose: int = 0  # show ok findings, and tracebacks of crashed checks
    progress: bool = True  # 'n/N nodes answered' on a terminal's stderr
    port: int = DEFAULT_PORT  # the rendezvous port the first node listens on (port check)
    env: dict[str, str] | list[str] | None = None  # K=V the probe sees instead of the node's (NCCL_SOCKET_IFNAME...)
    files: list[str] | None = None  # paths hashed on every node (the files check: submit's --python, script)
    job_folder: str | None = None  # its free space counts (resources), besides the temp dir
    gpus_per_node: int | None = None  # GPUs each node must show (gpu check; default: the most common count)
    tasks_per_node: int | None = None  # ranks the job starts per node (nccl check: one GPU each)
    transport: str = "auto"  # ssh | srun | auto (srun inside an allocation or with partition/srun_nodes, or
    #   where SSH to every node is refused and Slurm answers)
    partition: str | None = None  # srun: the partition of the check's own step
    srun_nodes: int | None = None  # srun: how many nodes the check's own step takes
    srun_options: list[str] | None = None  # more srun options (pyxis: --container-image=IMG ...)
    wrap: str | None = None  # a command prefix the probe runs under, as the ranks do (apptainer exec IMG)
    launcher: str = "auto"  # what starts the ranks, so which of the shell's variables reach them (doctor/jobenv.py)
    environ: Mapping[str, str] | None = None  # the shell the job is started from (None: this process's)
    job_env: object = field(default=None, init=False, repr=False, compare=False)  # jobenv.JobEnv, set by gather

    def __post_init__(self):
        if isinstance(self.mesh, bool):
            self.mesh = "sample" if self.mesh else "off"
        if isinstance(self.nodelist, str):
            self.nodelist = [self.nodelist]
        if isinstance(self.identity, str):
            self.identity = [self.identity]
        if isinstance(self.env, (list, tuple)):
            pairs = {}
            for item in self.env:
                key, eq, value = str(item).partition("=")
                if not eq or not key.replace("_", "").isalnum():
                    raise UsageError(f"--env {item!r}: expected NAME=VALUE", hint="e.g. --env NCCL_SOCKET_IFNAME=eth0")
                pairs[key] = value
            self.env = pairs

    @property
    def uses_srun(self) -> bool:
        """Whether the probe goes through srun from the start (no SSH tried first)."""
        from clusterdoc.doctor import srun

        if self.local or self.facts_dir or self.transport == "ssh":
            return False
        if self.transport == "srun" or self.partition or self.srun_nodes:
            return True
        return not self.given and srun.in_allocation()  # `clusterdoc check` inside salloc/sbatch: its nodes

    @property
    def is_local(self) -> bool:
        if self.local and (self.given or self.facts_dir):
            raise UsageError("--local checks this machine only; drop it or the hostfile/--nodelist/--facts")
        if self.facts_dir and self.given:
            raise UsageError("--facts judges saved facts; drop the hostfile/--nodelist, or --facts")
        return self.local or not (self.given or self.facts_dir or self.uses_srun)

    def selected(self) -> list[str]:
        """The checks to run, in report order: --checks (default all but comm), +comm, -skip, -mesh."""
        # with no --checks: every check declared on by default (not comm, files, perf: they start processes or
        # must be told what to compare); every list of checks comes from the registry (checks/registry.py)
        every = registry.names()
        chosen = _names(self.checks, "--checks") or [c for c in every if c not in registry.default_off()]
        if self.files and "files" not in chosen:
            chosen.append("files")
        if self.comm and "comm" not in chosen:
            chosen.append("comm")
        if self.perf and "perf" not in chosen:
            chosen.append("perf")
        skip = set(_names(self.skip, "--skip"))
        if self.mesh == "off":
            skip.add("mesh")
        return [c for c in every if c in chosen and c not in skip]

    def validate(self) -> None:
        """Bad input is a UsageError before any node is touched."""
        from clusterdoc.checks import arch

        self.selected()
        if self.arch_list:
            entries, bad = arch.parse_arch_entries(self.arch_list)
            if bad or not entries:
                raise UsageError(
                    f"--arch-list {self.arch_list!r}: {', '.join(bad) or 'empty'} is not X.Y or X.Y+PTX",
                    hint='give compute capabilities like "8.0;9.0"',
                )
        if self.timeout <= 0:
            raise UsageError(f"--timeout must be above 0 seconds, got {self.timeout}")
        if not 1 <= self.port <= 65534:
            raise UsageError(f"--port must be 1-65534 (port + 1 carries the node-to-node test), got {self.port}")
        if self.fanout < 1:
            raise UsageError(f"--fanout must be at least 1, got {self.fanout}")
        if self.mesh not in ("sample", "full", "off"):
            raise UsageError(f"--mesh {self.mesh!r}: choose sample, full or off")
        if self.launcher not in LAUNCHERS:
            raise UsageError(f"--launcher {self.launcher!r}: choose {', '.join(LAUNCHERS)}")
        if self.transport not in ("ssh", "srun", "auto"):
            raise UsageError(f"--transport {self.transport!r}: choose ssh, srun or auto")
        if self.srun_nodes is not None and self.srun_nodes < 1:
            raise UsageError(f"--nodes must be 1 or more, got {self.srun_nodes}")
        if (self.partition or self.srun_nodes) and self.transport == "ssh":
            raise UsageError("--partition/--nodes ask Slurm for nodes: they go with --transport srun (or auto)")
        if self.tasks_per_node is not None and self.tasks_per_node < 1:
            raise UsageError(f"--tasks-per-node must be 1 or more, got {self.tasks_per_node}")
        if self.gpus_per_node is not None and self.gpus_per_node < 0:
            raise UsageError(f"--gpus-per-node must be 0 or more, got {self.gpus_per_node}")
        for name, value in (("--compute-fraction", self.compute_fraction), ("--busbw-fraction", self.busbw_fraction)):
            if not 0 < value < 1:
                raise UsageError(f"{name} must be between 0 and 1 (a fraction of the median), got {value}")
        if self.min_busbw is not None and self.min_busbw <= 0:
            raise UsageError(f"--min-busbw must be above 0 Gb/s, got {self.min_busbw}")
        if not 0 < self.perf_mib <= 4096:
            raise UsageError(f"--perf-mib must be above 0 and at most 4096, got {self.perf_mib}")
        if self.mesh_k < 1:
            raise UsageError(f"--mesh-k must be at least 1, got {self.mesh_k}")
        self.is_local  # noqa: B018 - raises on contradicting sources


def _names(value: list[str] | str | None, flag: str) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value or [])
    names = [c.strip() for c in items if c.strip()]
    every = registry.names()
    unknown = [c for c in names if c not in every]
    if unknown:
        raise UsageError(f"{flag}: unknown check(s) {', '.join(unknown)}", hint=f"choose from {','.join(every)}")
    return names
