"""WheelOptions (what `build-wheel` is told) and WheelResult (what it did, or plans to do with dry_run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clusterdoc.targets import Targets
from clusterdoc.wheel.preflight import Finding


@dataclass
class WheelOptions(Targets):
    """Targets (hostfile / nodelist / ssh options): the nodes whose GPUs set the arch list, and that take the
    wheel with `install`."""

    arch_list: str | None = None  # TORCH_CUDA_ARCH_LIST instead of asking the nodes, e.g. "8.0;9.0"
    source: str | None = None  # DeepSpeed checkout, sdist, or version to fetch
    ops: str = "cpu_adam,utils"
    aio: bool = False  # also the async I/O op (needs libaio)
    jobs: int | None = None  # parallel compile jobs (default: cores)
    out: str = "dist"  # where the wheel and its manifest go
    cache: str | None = None  # where downloaded sdists are kept
    install: bool = False  # copy the wheel to every node and install it there
    wheel: str | None = None  # with install: a wheel build-wheel made before, installed instead of building one
    no_ptx: bool = False  # SASS only: no +PTX on the highest arch (newer GPUs cannot JIT; flagged)
    dry_run: bool = False  # the environment and commands only, nothing built
    transport: str = "auto"  # how the nodes are reached: ssh | srun | auto (doctor/transports: srun inside an
    #   allocation, or where SSH to every node is refused and Slurm answers)


@dataclass
class WheelResult:
    exit_code: int = 0  # 0 built (and installed), 1 problems (see findings / text)
    arch_list: str | None = None
    arch_source: str | None = None  # "nodes" or "--arch-list"
    findings: list[Finding] = field(default_factory=list)  # the build host's preflight (and the nodes' coverage)
    env: dict[str, str] = field(default_factory=dict)  # what the build sets (TORCH_CUDA_ARCH_LIST, DS_BUILD_*)
    commands: list[str] = field(default_factory=list)  # the plan: shell lines, in order (dry_run)
    wheel: Path | None = None
    lines: list[str] = field(default_factory=list)  # what the CLI prints

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def __str__(self) -> str:
        return self.text
