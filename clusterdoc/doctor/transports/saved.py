"""Saved facts (`--facts DIR`): NODE.json per node, as `--save-facts` wrote them or as collected by hand. Nothing
reaches a node; each file is read bounded and is as untrusted as a node's output. It cannot run commands."""

from __future__ import annotations

from pathlib import Path

from clusterdoc import private
from clusterdoc.doctor.transports.base import Answer, ProbeRequest, RunResult
from clusterdoc.errors import UsageError
from clusterdoc.hostfile import is_valid_hostname, natural_key
from clusterdoc.untrusted import clean_facts, printable

LOCAL = "localhost"
RUN_FILE = "_run.json"  # beside the node files (an underscore is never in a host name): the head's side
MAX_FACTS_FILE = 4 << 20


class SavedTransport:
    name = "saved"

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def probe(self, nodes: list[str], request: ProbeRequest) -> tuple[list[str], dict[str, Answer]]:
        found = node_files(self.folder)
        names = list(nodes) or sorted(found, key=natural_key)
        answers = {}
        for n in names:
            if n in found:
                answers[n] = Answer("ok", "", 0.0, 0, load(found[n], n))
            else:
                answers[n] = Answer("error", "no facts saved for this node")
        return names, answers

    def run(self, nodes: list[str], command: str, timeout: float, stdin: bytes | None = None) -> dict[str, RunResult]:
        raise UsageError("saved facts (--facts) cannot run commands on nodes", hint="give the nodes instead")

    def put(self, node: str, local: Path, target: str, timeout: float) -> RunResult:
        raise UsageError("saved facts (--facts) cannot copy files to nodes", hint="give the nodes instead")


def node_files(folder: Path) -> dict[str, Path]:
    """{node: its NODE.json} in `folder` (not the head's _run.json, not a dot-file still being written)."""
    if not folder.is_dir():
        raise UsageError(
            f"--facts {printable(folder)}: not a folder", hint="give the folder of NODE.json files (--save-facts)"
        )
    return {p.stem: p for p in sorted(folder.glob("*.json")) if p.name != RUN_FILE and not p.name.startswith(".")}


def load(path: Path, node: str | None) -> dict:
    """One saved file; its contents are as untrusted as a node's output."""
    where = printable(path)
    if node is not None and not valid_name(node):
        raise UsageError(
            f"{printable(path.name)}: '{printable(node, 80)}' is not a host name",
            where=where,
            hint="name each file after its node: NODE.json",
        )
    try:
        data = private.read_json(path, MAX_FACTS_FILE)  # bounded, no NaN / Infinity, no RecursionError
    except OSError as err:
        raise UsageError(f"cannot read saved facts: {err.strerror or err}", where=where) from None
    except ValueError as err:
        raise UsageError(f"cannot read saved facts: not valid JSON: {printable(err, 200)}", where=where) from None
    if not isinstance(data, dict):
        raise UsageError("expected a JSON object (the probe's facts)", where=where)
    return clean_facts(data) if node is not None else data


def valid_name(name: str) -> bool:
    return name == LOCAL or is_valid_hostname(name)
