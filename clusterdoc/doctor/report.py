"""Step 3 of the doctor: the Report, what `clusterdoc.check()` returns and the CLI prints (render.py draws it)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from clusterdoc.checks import FAIL, WARN, Finding, arch, perf
from clusterdoc.doctor import render
from clusterdoc.doctor.facts import Gathered
from clusterdoc.untrusted import escape_all, json_text


@dataclass
class NodeResult:
    name: str
    ssh: dict  # how reaching it went: status, message, elapsed, exit_code
    status: dict[str, str | None]  # {check: its worst status on this node, None when not judged}
    facts: dict | None  # what its probe found (None: it gave none)

    def to_json(self) -> dict:
        return {"node": self.name, "ssh": self.ssh, "status": self.status, "facts": self.facts}


@dataclass
class Report:
    nodes: list[NodeResult]
    findings: list[Finding]
    checks: list[str]
    needed_arch_list: str | None  # the TORCH_CUDA_ARCH_LIST the nodes' GPUs need
    strict: bool = False  # warnings count as problems
    elapsed: float | None = None
    head_mpirun: dict | None = None
    mpirun: dict | None = None
    verbose: int = 0
    perf: dict | None = None  # --perf figures (checks/perf.py summary)
    transport: str = "ssh"  # how the facts came: ssh | srun | local | saved
    not_applicable: list[str] = field(default_factory=list)  # checks the transport cannot run (srun: mesh...)
    job_env: dict | None = None  # what the probe was told on top of the nodes' own, and from where (jobenv.py)
    names: list[str] = field(init=False)

    def __post_init__(self):
        self.names = [n.name for n in self.nodes]

    @classmethod
    def build(cls, g: Gathered, findings: list[Finding], strict: bool = False, verbose: int = 0, opts=None) -> Report:
        status = render.node_status(findings, g.nodes, g.checks)
        nodes = [NodeResult(n, g.conns[n], status[n], g.facts.get(n)) for n in g.nodes]
        return cls(
            nodes,
            findings,
            list(g.checks),
            _needed_arch_list(g),
            strict,
            round(time.monotonic() - g.started, 3),
            g.head_mpirun,
            g.mpirun,
            verbose,
            _perf_figures(g, opts),
            g.transport,
            list(g.not_applicable),
            g.job_env.to_json() if g.job_env.values else None,
        )

    @property
    def exit_code(self) -> int:
        """0 ok, 1 problems found (warnings too with strict)."""
        return render.exit_code(self.findings, self.strict)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def failures(self, check: str | None = None) -> list[Finding]:
        return [f for f in self.findings if f["status"] == FAIL and check in (None, f["check"])]

    def warnings(self, check: str | None = None) -> list[Finding]:
        return [f for f in self.findings if f["status"] == WARN and check in (None, f["check"])]

    def summary(self) -> dict:
        s = render.summary(self.names, self.findings, self.checks, self.needed_arch_list, self.strict)
        s["elapsed"] = self.elapsed
        s["transport"] = self.transport
        if self.not_applicable:
            s["not_applicable"] = list(self.not_applicable)
        if self.job_env:
            s["job_env"] = escape_all(self.job_env)
        s["head_mpirun"] = self.head_mpirun
        if self.mpirun is not None:
            s["mpirun"] = escape_all({k: v for k, v in self.mpirun.items() if k != "stderr"})
        if self.perf is not None:
            s["perf"] = self.perf
        return s

    def to_dict(self) -> dict:
        return {"nodes": [n.to_json() for n in self.nodes], "findings": self.findings, "summary": self.summary()}

    def to_json(self) -> str:
        """The `clusterdoc check --json` document (schema in README): indented, but each node's facts on one line
        (json's C encoder; an indented encode runs in Python and was most of the report's CPU at 64 nodes)."""
        doc = self.to_dict()
        facts = {}
        for i, n in enumerate(doc["nodes"]):
            if n["facts"] is not None:
                facts[f"@@facts-{i}@@"] = json_text(n["facts"])
                n["facts"] = f"@@facts-{i}@@"
        text = json_text(doc, indent=2)
        return re.sub(r'"(@@facts-\d+@@)"', lambda m: facts[m.group(1)], text) if facts else text

    def render(self, verbose: int | None = None) -> str:
        """The table the CLI prints."""
        return render.render(
            self.names,
            self.findings,
            self.checks,
            self.needed_arch_list,
            self.verbose if verbose is None else verbose,
            self.elapsed,
            self.transport,
            self.not_applicable,
        )

    def __str__(self) -> str:
        return self.render()


def _perf_figures(g: Gathered, opts) -> dict | None:
    if g.perf is None or g.perf.get("error"):
        return None
    try:
        if opts is None:
            return perf.summary(g.perf, g.nodes)
        return perf.summary(g.perf, g.nodes, opts.busbw_fraction, opts.min_busbw)
    except Exception:  # judge() reported the same crash as a finding; the report goes on
        return None


def _needed_arch_list(g: Gathered) -> str | None:
    try:
        return arch.needed_arch_list(g.answered())
    except Exception:  # judge() reported the same crash as a finding; the report goes on
        return None
