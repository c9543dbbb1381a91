"""Settings for `clusterdoc submit` and `python -m clusterdoc.run`: flag > env > file > default.

The environment is CLUSTERDOC_<KEY>, then sbatch's own variable of a Slurm option (SBATCH_ACCOUNT, SBATCH_QOS,
SBATCH_TIMELIMIT...: what sbatch itself would honour), both above the files.

Files are YAML mappings whose keys are the flag names (`debug: true`, `log-level: INFO`; `log_level` works
too). They are layered, later ones winning: ~/.config/clusterdoc/config.yaml, then ./clusterdoc.yaml, then
the file given with --config. Each setting also has an environment variable, CLUSTERDOC_<KEY>
(CLUSTERDOC_DEBUG=1, CLUSTERDOC_LOG_LEVEL=INFO, ...). The settings, their types, defaults, choices and bounds are
the rows of clusterdoc/optiontable.py. An unknown key or a value of the wrong type is a UsageError naming the key
and the file:line, so a typo never silently does nothing.

A config file can name the Python that runs the ranks and switch the preflight off, and the files found by
themselves (the user's and ./clusterdoc.yaml) are found, not chosen: they are used only when they belong to
the user running clusterdoc (or to root) and nobody else can write them; a working directory shared with
others cannot hand its `clusterdoc.yaml` to whoever runs clusterdoc there (root included). Every file is read
bounded (MAX_CONFIG bytes, no YAML aliases, MAX_DEPTH levels), so no file can take memory or time without
end, and what it says is escaped in messages.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

import yaml

from clusterdoc.errors import UsageError
from clusterdoc.optiontable import (  # noqa: F401 (config.X users)
    BACKENDS,
    ENV_PREFIX,
    OPTIONS,
    Option,
    env_name,
    from_sbatch_env,
)
from clusterdoc.untrusted import printable

# every setting is a row of clusterdoc/optiontable.py: its key, type, default, choices and bounds
SETTINGS: dict[str, Option] = {o.key: o for o in OPTIONS if o.layered}
USER_CONFIG = Path("~/.config/clusterdoc/config.yaml")
CWD_CONFIG = Path("clusterdoc.yaml")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")
MAX_CONFIG = 64 * 1024  # bytes: a config file is a few lines
MAX_DEPTH = 16  # nesting levels (a config is one flat mapping; deeper is refused before Python's recursion limit)


def config_files(
    explicit: str | None = None, cwd: Path | None = None, home: Path | None = None
) -> list[tuple[Path, bool]]:
    """The files to read, lowest precedence first, each with whether it was chosen (--config) rather than
    found. An explicit --config file must exist."""
    user = Path(home, ".config/clusterdoc/config.yaml") if home else USER_CONFIG.expanduser()
    files = [(p, False) for p in (user, Path(cwd or ".") / CWD_CONFIG) if p.exists()]
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise UsageError(
                f"config file not found: {printable(explicit)}", hint="give an existing YAML file to --config"
            )
        files.append((path, True))
    return files


def read_text(path: Path, trusted: bool = True) -> str:
    """A config file's text: a regular file (a FIFO or a device is refused, never waited on) of at most
    MAX_CONFIG bytes. A file clusterdoc found by itself (`trusted` False) must belong to this user or root and be
    writable by nobody else; that is checked on the file as opened, so swapping it afterwards does not help."""
    where = printable(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder)")
            if not trusted:
                _check_owner(st, where)
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(MAX_CONFIG + 1)
        finally:
            os.close(fd)
    except OSError as err:
        raise UsageError(f"cannot read config file: {err.strerror or err}", where=where) from None
    if len(data) > MAX_CONFIG:
        raise UsageError(f"config file larger than {MAX_CONFIG // 1024} KiB, the most clusterdoc reads", where=where)
    return data.decode("utf-8", "replace")


def _check_owner(st: os.stat_result, where: str) -> None:
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        raise UsageError(
            f"refusing this config file: it belongs to {_user(st.st_uid)}, not to you ({_user(me)})",
            where=where,
            hint="clusterdoc uses a config file it finds by itself only when it is yours (or root's): "
            "remove it, or pass it with --config FILE if you trust what it says",
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UsageError(
            f"refusing this config file: others can write it (mode {stat.filemode(st.st_mode)})",
            where=where,
            hint=f"make it yours alone: chmod go-w {where}",
        )


def _user(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


class _Loader(yaml.SafeLoader):
    """SafeLoader's composer with bounds: no aliases (a few hundred bytes of nested aliases expand to
    gigabytes; a config never needs them) and at most MAX_DEPTH levels of nesting."""

    depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in a config file", event.start_mark
            )
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


MAX_ITEMS = 256  # a repeatable setting's items (setup lines, srun options)


def _convert(setting: Option, value, where: str, what: str):
    """Check one value against its setting's type and choices; `what` names it in the error. A repeatable
    setting's value is a list (one item alone is a list of one), each item checked."""
    if setting.repeat and value is not None:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(items) > MAX_ITEMS:
            raise UsageError(f"{what}: more than {MAX_ITEMS} items", where=where)
        out = [_convert_one(setting, v, where, what) for v in items]
        return [v for v in out if v is not None] or None
    return _convert_one(setting, value, where, what)


def _convert_one(setting: Option, value, where: str, what: str):
    t = setting.type
    if value is None:
        return None
    ok = isinstance(value, t) and not (t is int and isinstance(value, bool))
    if t is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        value, ok = str(value), True  # `partition: 123` is a fine name
    if not ok:
        raise UsageError(
            f"{what} must be {_type_name(t)}, not {type(value).__name__} ({printable(repr(value), 80)})", where=where
        )
    if setting.fold_case:
        value = value.upper()
    if setting.choices and value not in setting.choices:
        raise UsageError(
            f"{what} must be one of {', '.join(setting.choices)}, not {printable(repr(value), 80)}", where=where
        )
    if setting.pattern and not re.fullmatch(setting.pattern, value):
        raise UsageError(
            f"{what} must be of the form {setting.metavar or setting.pattern}, not {printable(repr(value), 80)}",
            where=where,
            hint=f"{setting.flag}: {setting.help_text()}",
        )
    if t is str and any(c in value for c in "\0\n\r"):  # it may become a line of a batch script: one line
        raise UsageError(
            f"{what} must be one line (no line break or NUL byte), not {printable(repr(value), 80)}", where=where
        )
    low, high = setting.low, setting.high
    if t is int and value < low:
        raise UsageError(f"{what} must be at least {low}, not {printable(value, 40)}", where=where)
    if t is int and value > high:
        raise UsageError(f"{what} must be at most {high}, not {printable(value, 40)}", where=where)
    return value


def _type_name(t: type) -> str:
    return {bool: "true or false", int: "an integer", str: "a string"}[t]


def read_file(path: Path, trusted: bool = True) -> dict[str, object]:
    """One YAML file -> {key: value}, checked. Errors carry file:line."""
    text = read_text(path, trusted)
    shown = printable(path)
    if "\0" in text:  # a binary file, or a link to one such as /proc/self/environ (the environment, secrets too)
        raise UsageError(
            f"holds a NUL byte at offset {text.index(chr(0))}: not a YAML text file",
            where=shown,
            hint="the file is a mapping of flag names to values, e.g. 'debug: true'; is it a link to another file?",
        )
    loader = None
    try:
        loader = _Loader(text)  # the reader rejects other control characters here already
        root = loader.get_single_node()
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise UsageError(
            f"not valid YAML: {printable(getattr(err, 'problem', None) or err, 200)}",
            where=f"{shown}:{mark.line + 1}" if mark else shown,
            hint="the file is a mapping of flag names to values, e.g. 'debug: true'",
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise UsageError(
            "expected a mapping of flag names to values, e.g. 'nodes: 4'", where=f"{shown}:{root.start_mark.line + 1}"
        )
    out: dict[str, object] = {}
    for key_node, value_node in root.value:
        where = f"{shown}:{key_node.start_mark.line + 1}"
        if not isinstance(key_node, yaml.ScalarNode):
            raise UsageError("a key must be a flag name, not a list or mapping", where=where)
        name = printable(key_node.value, 80)
        key = key_node.value.replace("-", "_")
        if key not in SETTINGS:
            raise UsageError(
                f"unknown key '{name}'",
                where=where,
                hint="known keys: " + ", ".join(k.replace("_", "-") for k in SETTINGS),
            )
        repeated = SETTINGS[key].repeat and isinstance(value_node, yaml.SequenceNode)
        if repeated and not all(isinstance(v, yaml.ScalarNode) for v in value_node.value):
            raise UsageError(f"key '{name}' must be a list of strings, not of lists or mappings", where=where)
        if not isinstance(value_node, yaml.ScalarNode) and not repeated:
            raise UsageError(
                f"key '{name}' must be {_type_name(SETTINGS[key].type)}, not a list or mapping", where=where
            )
        try:
            value = _Loader(yaml.serialize(value_node)).get_single_data()
        except (ValueError, yaml.YAMLError) as err:  # an integer of 5000 digits, a date out of range...
            raise UsageError(f"key '{name}': not a value clusterdoc can read ({printable(err, 120)})", where=where)
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
        if setting.repeat:  # one item a line
            value = [line for line in env[name].splitlines() if line.strip()] or None
        elif setting.type is bool:
            if raw.lower() not in _TRUE + _FALSE:
                raise UsageError(
                    f"{name} must be 1/true/yes/on or 0/false/no/off, not {printable(repr(raw), 80)}",
                    where="environment",
                )
            value = raw.lower() in _TRUE
        elif setting.type is int:
            try:
                value = int(raw)
            except ValueError:
                raise UsageError(
                    f"{name} must be an integer, not {printable(repr(raw), 80)}", where="environment"
                ) from None
        else:
            value = raw or None
        out[key] = _convert(setting, value, "environment", name)
    return out


def read_sbatch_env(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """sbatch's own variables for the rows that have one (SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...). They are sbatch's
    to judge: one clusterdoc cannot read (SBATCH_TIMELIMIT=UNLIMITED, a typo) is left to sbatch, never an error
    here (a rank reads these layers too)."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    out: dict[str, object] = {}
    for o in SETTINGS.values():
        if o.sbatch_env and o.sbatch_env in env:
            try:
                value = _convert(o, from_sbatch_env({o.sbatch_env: env[o.sbatch_env]}).get(o.key), "", o.sbatch_env)
            except (ValueError, UsageError):
                continue
            if value is not None:
                out[o.key] = value
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
    for path, chosen in config_files(explicit_config, cwd, home):
        for key, value in read_file(path, trusted=chosen).items():
            settings[key], origin[key] = value, str(path)
    for key, value in read_sbatch_env(environ).items():  # sbatch's own: below ours, as a file is below both
        settings[key], origin[key] = value, SETTINGS[key].sbatch_env
    for key, value in read_env(environ).items():
        settings[key], origin[key] = value, env_name(key)
    for key, value in flags.items():
        if key in SETTINGS and value is not None:
            settings[key] = _convert(SETTINGS[key], value, "", "--" + key.replace("_", "-"))
            origin[key] = "flag"
    return settings, origin
