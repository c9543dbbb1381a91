"""What a check declares about itself (`Check`) and the one object every check is handed (`Context`).

A module of clusterdoc/checks/ declares its checks once, in a module-level `CHECKS` tuple; checks/registry.py
finds them, and everything that names checks (the report's columns, --checks and its help, the defaults, what
runs on one machine or needs SSH, whose probe errors are whose, submit's Slurm preflight) reads the registry.
As gpud's components share one dependency bag, every rule takes a `Context`: the node's facts, every node's
facts, the options, what the head ran. Standard library only, imports nothing of clusterdoc.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

NODE, CLUSTER = "node", "cluster"


@dataclass(frozen=True)
class Context:
    """What a rule may read. A node rule sees its node in `node`, `facts`, `conn`; a cluster rule sees
    `node` = the hostlist of every node (`everyone`), `facts` = {} and `conn` = {}."""

    node: str
    facts: dict
    conn: dict
    nodes: list[str]  # every node, in hostfile order
    everyone: str  # their hostlist (the "node" of a cluster-wide finding)
    all_facts: Mapping[str, dict | None]  # every node's facts, None where it gave none
    answered: Mapping[str, dict]  # the nodes that gave facts
    conns: Mapping[str, dict]  # how reaching each node went: {status, message, elapsed, exit_code}
    checks: list[str]  # the checks this run judges
    opts: Any  # doctor.CheckOptions (not imported: checks/ does not depend on doctor/)
    head_mpirun: dict | None = None  # the head's mpirun: path, flavour, version
    mpirun: dict | None = None  # the head's mpirun run across the nodes
    comm: dict | None = None  # the --comm all_reduce
    perf: dict | None = None  # the --perf rounds
    shared: Mapping[str, Any] = field(default_factory=dict)  # what checks' `prepare` computed once, by key

    @property
    def multi(self) -> bool:
        return len(self.nodes) > 1


Rule = Callable[[Context], list]


@dataclass(frozen=True)
class Shared:
    """A value computed once before any node is judged (`compute(ctx)`, ctx a cluster context), under the
    check's crash guard; `default` when it crashes. Rules read it as ctx.shared[key]."""

    key: str
    compute: Callable[[Context], Any]
    default: Any


@dataclass(frozen=True)
class Check:
    """One column of the report. `order` places it among the columns (ssh 10 ... perf 170); `cluster_order`
    places its cluster-wide rule among the others (findings keep the order they have always come in)."""

    name: str
    order: int
    summary: str  # a few words for --checks help and docs
    reads: tuple[str, ...] = ()  # the top-level facts keys it judges (clusterdoc/probe/__init__.py's schema)
    probe_errors: Mapping[str, str] = field(default_factory=dict)  # {probe name: status}: its probe errors
    malformed_labels: Mapping[str, str] = field(default_factory=dict)  # {field: words} for a malformed value
    default: bool = True  # runs with no --checks
    local: bool = True  # meaningful on one machine (check --local): False for what compares or connects nodes
    ssh_only: bool = False  # needs SSH to the nodes (not applicable through srun)
    allocation: bool = False  # judged from facts alone: submit's Slurm preflight runs it inside the allocation
    node: Rule | None = None  # per node with facts (a remote-only check, local=False, skips a node reached locally)
    cluster: Rule | None = None  # once for all nodes (returns [] when it does not apply)
    cluster_order: int = 0
    prepare: tuple[Shared, ...] = ()
    without_facts: bool = False  # its node rule also runs for a node that gave no facts (ssh: why not)
