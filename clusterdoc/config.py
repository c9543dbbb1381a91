"""Settings for `clusterdoc submit` and `python -m clusterdoc.run`: flag > env > file > default.

Files are YAML mappings whose keys are the flag names (`debug: true`, `log-level: INFO`; `log_level` works
too). They are layered, later ones winning: ~/.config/clusterdoc/config.yaml, then ./clusterdoc.yaml, then
the file given with --config. Each setting also has an environment variable, CLUSTERDOC_<KEY>
(CLUSTERDOC_DEBUG=1, CLUSTERDOC_LOG_LEVEL=INFO, ...). An unknown key or a value of the wrong type is a
UsageError naming the key and the file:line, so a typo never silently does nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from clusterdoc.errors import UsageError

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
BACKENDS = ("auto", "local", "slurm", "mpirun")
ON_HANG = ("abort", "wait")


@dataclass(frozen=True)
class Setting:
    key: str  # the attribute name argparse uses (dashes become underscores)
    type: type  # bool, int or str
    default: object
    choices: tuple = ()


SETTINGS = {
    s.key: s
    for s in [
        Setting("backend", str, "auto", BACKENDS),
        Setting("nodes", int, 1),
        Setting("tasks_per_node", int, None),
        Setting("gpus_per_node", int, 0),
        Setting("hostfile", str, None),
        Setting("ssh_config", str, None),
        Setting("partition", str, None),
        Setting("time", int, 60),
        Setting("debug", bool, False),
        Setting("log_level", str, None, LOG_LEVELS),
        Setting("overflow", bool, False),
        Setting("oom_retry", str, None),
        Setting("no_preflight", bool, False),
        Setting("wait", bool, None),
        Setting("folder", str, "clusterdoc-jobs"),
        Setting("mpirun", str, None),
        Setting("python", str, None),
        Setting("hang_timeout", int, 300),
        Setting("on_hang", str, "abort", ON_HANG),
        Setting("trace", bool, False),
        Setting("port", int, None),
    ]
}

ZERO_ALLOWED = ("gpus_per_node", "hang_timeout")  # 0 GPUs; 0 s: no hang watch
ENV_PREFIX = "CLUSTERDOC_"
USER_CONFIG = Path("~/.config/clusterdoc/config.yaml")
CWD_CONFIG = Path("clusterdoc.yaml")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def env_name(key: str) -> str:
    """CLUSTERDOC_<OPTION>. (The shim's nccl/gloo choice is CLUSTERDOC_DIST_BACKEND, not `backend`.)"""
    return ENV_PREFIX + key.upper()


def config_files(explicit: str | None = None, cwd: Path | None = None, home: Path | None = None) -> list[Path]:
    """The files to read, lowest precedence first. An explicit --config file must exist."""
    user = Path(home, ".config/clusterdoc/config.yaml") if home else USER_CONFIG.expanduser()
    files = [p for p in (user, Path(cwd or ".") / CWD_CONFIG) if p.is_file()]
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise UsageError(f"config file not found: {explicit}", hint="give an existing YAML file to --config")
        files.append(path)
    return files


def _convert(setting: Setting, value, where: str, what: str):
    """Check one value against its setting's type and choices; `what` names it in the error."""
    t = setting.type
    if value is None:
        return None
    ok = isinstance(value, t) and not (t is int and isinstance(value, bool))
    if t is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        value, ok = str(value), True  # `partition: 123` is a fine name
    if not ok:
        raise UsageError(f"{what} must be {_type_name(t)}, not {type(value).__name__} ({value!r})", where=where)
    if setting.key == "log_level":
        value = value.upper()
    if setting.choices and value not in setting.choices:
        raise UsageError(f"{what} must be one of {', '.join(setting.choices)}, not {value!r}", where=where)
    low = 0 if setting.key in ZERO_ALLOWED else 1
    if t is int and value < low:
        raise UsageError(f"{what} must be at least {low}, not {value}", where=where)
    return value


def _type_name(t: type) -> str:
    return {bool: "true or false", int: "an integer", str: "a string"}[t]


def read_file(path: Path) -> dict[str, object]:
    """One YAML file -> {key: value}, checked. Errors carry file:line."""
    try:
        text = path.read_text()
        root = yaml.compose(text)
    except OSError as err:
        raise UsageError(f"cannot read config file: {err.strerror}", where=str(path)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise UsageError(
            f"not valid YAML: {getattr(err, 'problem', None) or err}",
            where=where,
            hint="the file is a mapping of flag names to values, e.g. 'debug: true'",
        ) from None
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise UsageError(
            "expected a mapping of flag names to values, e.g. 'nodes: 4'", where=f"{path}:{root.start_mark.line + 1}"
        )
    out: dict[str, object] = {}
    for key_node, value_node in root.value:
        where = f"{path}:{key_node.start_mark.line + 1}"
        name = str(key_node.value)
        key = name.replace("-", "_")
        if key not in SETTINGS:
            raise UsageError(
                f"unknown key '{name}'",
                where=where,
                hint="known keys: " + ", ".join(k.replace("_", "-") for k in SETTINGS),
            )
        if not isinstance(value_node, yaml.ScalarNode):
            raise UsageError(
                f"key '{name}' must be {_type_name(SETTINGS[key].type)}, not a list or mapping", where=where
            )
        value = yaml.safe_load(yaml.serialize(value_node))
        out[key] = _convert(SETTINGS[key], value, where, f"key '{name}'")
    return out


def read_env(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    env: Mapping[str, str] = os.environ if environ is None else environ
    out: dict[str, object] = {}
    for key, setting in SETTINGS.items():
        name = env_name(key)
        if name not in env:
            continue
        raw = env[name].strip()
        value: object
        if setting.type is bool:
            if raw.lower() not in _TRUE + _FALSE:
                raise UsageError(f"{name} must be 1/true/yes/on or 0/false/no/off, not {raw!r}", where="environment")
            value = raw.lower() in _TRUE
        elif setting.type is int:
            try:
                value = int(raw)
            except ValueError:
                raise UsageError(f"{name} must be an integer, not {raw!r}", where="environment") from None
        else:
            value = raw or None
        out[key] = _convert(setting, value, "environment", name)
    return out


def resolve(
    flags: dict[str, object],
    explicit_config: str | None = None,
    environ: dict[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> tuple[dict[str, object], dict[str, str]]:
    """Merge the layers. Returns (settings, origin) where origin[key] says where each value came from.

    `flags` holds argparse values; None means "not given" (every submit flag defaults to None for this).
    """
    settings = {k: s.default for k, s in SETTINGS.items()}
    origin = {k: "default" for k in SETTINGS}
    for path in config_files(explicit_config, cwd, home):
        for key, value in read_file(path).items():
            settings[key], origin[key] = value, str(path)
    for key, value in read_env(environ).items():
        settings[key], origin[key] = value, env_name(key)
    for key, value in flags.items():
        if key in SETTINGS and value is not None:
            settings[key] = _convert(SETTINGS[key], value, "", "--" + key.replace("_", "-"))
            origin[key] = "flag"
    return settings, origin
