"""The job's environment as the job will get it, and where each value came from (pure: no I/O).

A rank sees three layers, the later winning: the node's own environment (what the probe reads there), the
environment of the shell that submits the job where the launcher passes it on, and `--env`. Launchers
(reference.md §5-6): Slurm's sbatch/srun export the submitting shell's whole environment (`--export=ALL`, the
default); MPICH's Hydra propagates mpiexec's whole environment; `clusterdoc submit --backend local` starts the ranks
with its own; Open MPI's mpirun passes only the `-x` names (none of the variables judged here: give them with --env);
a login per node (pdsh, ssh + torchrun) passes nothing. Only the variables the checks read travel from the shell
(NCCL_*, GLOO_SOCKET_IFNAME, CUDA_VISIBLE_DEVICES, TORCH_CUDA_ARCH_LIST), never a secret-looking name.
`annotate` then says in each finding where the value it quotes came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterdoc.checks import Finding

# launcher -> how it passes the shell on (None: it does not)
PASSES = {
    "slurm": "passed on by Slurm's --export=ALL",
    "mpich": "passed on by MPICH's mpiexec",
    "local": "inherited by the ranks started here",
    "openmpi": None,  # only -x names reach the ranks
    "none": None,
}
LAUNCHERS = ("auto", *PASSES)
FROM_ENV = "from --env"
FROM_NODE = "set on the node"
PREFIXES = ("NCCL_",)
NAMES = ("GLOO_SOCKET_IFNAME", "CUDA_VISIBLE_DEVICES", "TORCH_CUDA_ARCH_LIST")
SECRET = re.compile(r"(^|_)(TOKEN|PASSWORD|PASSWD|PASS|SECRET|CREDENTIALS?|AUTH|(API|ACCESS|PRIVATE)_?KEY|KEY)(_|$)")
MAX_VALUE = 1024  # a longer value is no interface list: not sent to the probe


def judged(name: str) -> bool:
    """A variable some check reads, and not one whose value could be a secret."""
    return (name.startswith(PREFIXES) or name in NAMES) and not SECRET.search(name.upper())


def from_shell(launcher: str) -> str | None:
    how = PASSES.get(launcher)
    return f"from your shell, {how}" if how else None


@dataclass(frozen=True)
class JobEnv:
    """What the probe is told on top of the node's own environment, and where each of those values came from."""

    values: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    launcher: str = "none"

    def view(self, node_env: Mapping[str, str | None]) -> dict[str, tuple[str, str]]:
        """{name: (value, source)} a rank on a node with `node_env` gets: the node's own, then ours on top."""
        out = {k: (v, FROM_NODE) for k, v in node_env.items() if v is not None}
        out.update((k, (v, self.sources.get(k, FROM_NODE))) for k, v in self.values.items())
        return out

    def source(self, name: str, value: str) -> str:
        """Where `value` of `name` came from: ours when it is the value we told the probe, else the node's."""
        return self.sources[name] if name in self.sources and self.values.get(name) == value else FROM_NODE

    def to_json(self) -> dict:
        return {"launcher": self.launcher, "values": dict(self.values), "sources": dict(self.sources)}

    @classmethod
    def from_json(cls, doc) -> JobEnv:
        """Back from _run.json (saved facts): anything not of the expected form is dropped."""
        if not isinstance(doc, dict):
            return cls()
        values, sources = doc.get("values"), doc.get("sources")
        values = {k: v for k, v in (values or {}).items() if isinstance(k, str) and isinstance(v, str)}
        sources = {k: v for k, v in (sources or {}).items() if k in values and isinstance(v, str)}
        launcher = str(doc.get("launcher")) if doc.get("launcher") in PASSES else "none"
        return cls(values, {k: sources.get(k, FROM_ENV) for k in values}, launcher)


def merge(shell: Mapping[str, str], given: Mapping[str, str] | None, launcher: str) -> JobEnv:
    """The job's variables on top of the node's: the shell's judged ones where `launcher` passes them on, then
    --env (`given`), which wins."""
    how = from_shell(launcher)
    passed = {k: v for k, v in shell.items() if how and judged(k) and len(v) <= MAX_VALUE}
    values = {**passed, **(given or {})}
    sources = {k: FROM_ENV if k in (given or {}) else str(how) for k in values}
    return JobEnv(values, sources, launcher)


def node_values(facts: Mapping | None) -> dict[str, str]:
    """The judged variables as the probe saw them on a node (after --env and the shell's on top)."""
    facts = facts or {}
    out: dict[str, str] = {}
    for part in (
        facts.get("env"),
        (facts.get("net") or {}).get("ifname_env"),
        (facts.get("nccl") or {}).get("env"),
    ):
        if isinstance(part, Mapping):
            out.update((k, v) for k, v in part.items() if isinstance(k, str) and isinstance(v, str) and judged(k))
    return out


SHELL_FIX = "it comes from your shell: change it there (export or unset {name}) before you run or submit the job"


def annotate(finding: Finding, values: Mapping[str, str], env: JobEnv) -> None:
    """Write the source after each `NAME=VALUE` the finding's message quotes (`values`: the node's, as judged);
    a problem whose value came from the shell says in its fix where to change it."""
    message, fix = finding.get("message") or "", finding.get("fix") or ""
    for name in sorted(values, key=len, reverse=True):
        quoted = f"{name}={values[name]}"
        at = _find(message, quoted)
        if at < 0 or not values[name]:
            continue
        source = env.source(name, values[name])
        end = at + len(quoted)
        message = f"{message[:end]} ({source}){message[end:]}"
        if source.startswith("from your shell") and finding.get("status") not in ("ok", None) and fix:
            fix = f"{fix}; {SHELL_FIX.format(name=name)}"
    finding["message"], finding["fix"] = message, fix


def _find(text: str, quoted: str) -> int:
    """The first `quoted` in `text` standing as a word of its own (not the tail of a longer name or value)."""
    for m in re.finditer(re.escape(quoted), text):
        before = text[m.start() - 1] if m.start() else " "
        after = text[m.end()] if m.end() < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after in "_-."):
            return m.start()
    return -1
