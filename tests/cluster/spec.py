"""Node specs: YAML with `defaults:` plus per-node overrides under `nodes:`.

A resolved node spec is a plain dict with every key of KEYS present. Dict values merge key by key
(so planting {"torch": {"cuda": "11.8"}} keeps the other torch fields); everything else replaces.
"""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

DEFAULT_SPEC = Path(__file__).with_name("default.yaml")

KEYS = {
    "kernel", "gpus", "driver", "toolkits", "path_toolkit", "ld_toolkit", "cuda_home", "gcc", "python",
    "torch", "deepspeed", "libaio", "env", "mesh_broken_to", "hang", "fail", "login_output",
}
# What a node looks like when neither the spec file nor a plant says anything.
BASE = {
    "kernel": "5.15.0-105-generic", "gpus": [], "driver": None, "toolkits": [], "path_toolkit": None,
    "ld_toolkit": None, "cuda_home": None, "gcc": None, "python": "/usr/bin/python3", "torch": None,
    "deepspeed": None, "libaio": False, "env": {}, "mesh_broken_to": [], "hang": [], "fail": [],
    "login_output": 0,  # bytes every ssh session's shell prints on stdout before the command (~/.bashrc)
}


class SpecError(ValueError):
    pass


def merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def check_keys(spec: dict, where: str) -> None:
    if not isinstance(spec, dict):
        raise SpecError(f"{where}: expected a mapping of spec keys, got {type(spec).__name__}")
    unknown = sorted(set(spec) - KEYS)
    if unknown:
        raise SpecError(f"{where}: unknown spec key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")


def load(path: Path | str | None = None) -> dict:
    """Return {"defaults": {...}, "nodes": {name: {...}}} from a YAML file (default.yaml when None)."""
    path = Path(path) if path else DEFAULT_SPEC
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SpecError(f"{path}: cannot read spec: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"defaults", "nodes"}:
        raise SpecError(f"{path}: expected top-level keys 'defaults' and 'nodes'")
    defaults = data.get("defaults") or {}
    nodes = data.get("nodes") or {}
    check_keys(defaults, f"{path}: defaults")
    for name, node in nodes.items():
        check_keys(node or {}, f"{path}: nodes.{name}")
    return {"defaults": defaults, "nodes": {k: (v or {}) for k, v in nodes.items()}}


def resolve(spec: dict, name: str) -> dict:
    """The full spec of one node: BASE <- defaults <- nodes[name]."""
    return merge(merge(BASE, spec["defaults"]), spec["nodes"].get(name, {}))


def as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
