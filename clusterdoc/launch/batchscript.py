"""A user's own batch script given to `clusterdoc submit`: told from a Python script, and its `#SBATCH` lines read
as sbatch reads them, into the job's settings (nodes, tasks and GPUs per node, and every option of the submit
option table's rows: partition, time, account, QOS, constraint, memory... mapped by optiontable.from_sbatch as the
flags are). Pure functions over the file's text; the Slurm backend submits the script itself unchanged.

sbatch's rules (sbatch(1), "The batch script may contain options preceded with #SBATCH before any executable
commands"): only the leading block of comments and blank lines is read, up to the first command; a directive
is `#SBATCH` at the start of the line (`##SBATCH` and `# SBATCH` are comments); a line may hold several options;
a token that starts with `#` ends the line's options (a trailing comment); quotes group a value.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.optiontable import BY_SBATCH, ENV_PREFIX, OPTIONS, count, from_sbatch, sbatch_name, sbatch_options

MAX_SCRIPT = 1 << 20  # read at most this much of a script: directives sit at its top
SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish")

# sbatch's short options that take a value (the others, e.g. -H -O -Q -W -k -s -v -h, are flags); their long
# names and the aliases are optiontable's (SBATCH_SHORT, SBATCH_ALIAS: one table for the script and the flags)
_SHORT_VALUE = set("ABCDFGJLMNSabcdeimnopqtwx")
_SHORT_FLAG = set("HOQWkshvV")
# long options that never take a value unless written `--opt=value`
_LONG_FLAGS = {
    "exclusive",
    "overcommit",
    "oversubscribe",
    "requeue",
    "no-requeue",
    "hold",
    "wait",
    "contiguous",
    "spread-job",
    "use-min-nodes",
    "parsable",
    "test-only",
    "quiet",
    "verbose",
    "ignore-pbs",
    "reboot",
    "no-kill",
    "get-user-env",
}


@dataclass
class Directive:
    name: str  # the long name without dashes (`-N` -> `nodes`)
    value: str | None  # None for a flag
    line: int


@dataclass
class BatchRequest:
    """What the script's `#SBATCH` lines ask for, as clusterdoc settings, and where each came from."""

    path: str
    directives: list[Directive] = field(default_factory=list)
    settings: dict = field(default_factory=dict)  # settings key -> value (nodes, tasks_per_node, ...)
    lines: dict = field(default_factory=dict)  # settings key -> the script's line number

    def where(self, key: str) -> str:
        return f"{self.path}:{self.lines[key]}" if key in self.lines else self.path


def is_batch_script(path: str | Path) -> bool:
    """A shell script (`#!` naming a shell) or one with `#SBATCH` lines in its leading comments: never Python."""
    try:
        head = private.read(Path(path).resolve(), limit=64 * 1024).decode("utf-8", "replace")  # the user's link
    except OSError:
        return False
    first = head.split("\n", 1)[0]
    if first.startswith("#!"):
        prog = _program(first)
        if prog in SHELLS:
            return True
        if prog.startswith("python"):
            return False
    elif Path(path).suffix == ".py":
        return False  # Python without a #!: its #SBATCH comments are no batch script (sbatch wants a #!)
    return any(True for _ in _header_lines(head))


def _program(first: str) -> str:
    if not first.startswith("#!"):
        return ""
    words = first[2:].split()
    prog = Path(words[0]).name if words else ""
    if prog == "env" and len(words) > 1:
        prog = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), "")
    return prog


def _header_lines(text: str):
    """(line number, text after `#SBATCH`) of the leading comment block, as sbatch reads it."""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if n == 1 and line.startswith("#!"):
            continue
        if not line:
            continue
        if not line.startswith("#"):
            return  # the first command: sbatch reads no directive after it
        if raw.startswith("#SBATCH") and (len(raw) == 7 or raw[7] in " \t"):
            yield n, raw[7:]


def read_directives(path: str | Path) -> list[Directive]:
    p = Path(path)
    try:
        text = private.read(p.resolve(), limit=MAX_SCRIPT).decode("utf-8", "replace")  # a link of the user's: followed
    except OSError as err:
        raise UsageError(f"cannot read the batch script: {err.strerror or err}", where=str(path)) from None
    return parse_directives(text, str(path))


def parse_directives(text: str, path: str = "script") -> list[Directive]:
    out: list[Directive] = []
    for n, rest in _header_lines(text):
        try:
            tokens = shlex.split(_uncommented(rest), comments=False, posix=True)
        except ValueError as err:
            raise UsageError(f"#SBATCH line: {err} (unbalanced quotes?)", where=f"{path}:{n}") from None
        out += _options(tokens, path, n)
    return out


def _uncommented(rest: str) -> str:
    """The options of a line without its trailing comment: from an unquoted `#` that starts a word (the comment's
    own quotes, `# the user's`, are no quotes)."""
    quote, escaped = "", False
    for i, c in enumerate(rest):
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or rest[i - 1].isspace()):
            return rest[:i]
    return rest


def _options(tokens: list[str], path: str, n: int) -> list[Directive]:
    out, i = [], 0
    where = f"{path}:{n}"
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok.startswith("--") and len(tok) > 2:
            name, eq, value = tok[2:].partition("=")
            name = sbatch_name(name)
            if eq:
                out.append(Directive(name, value, n))
            elif name in _LONG_FLAGS or i >= len(tokens) or tokens[i].startswith("-"):
                out.append(Directive(name, None, n))
            else:
                out.append(Directive(name, tokens[i], n))
                i += 1
        elif tok.startswith("-") and len(tok) > 1 and tok[1] != "-":
            letter = tok[1]
            if letter in _SHORT_FLAG and len(tok) == 2:
                out.append(Directive(sbatch_name(tok), None, n))
                continue
            if letter not in _SHORT_VALUE:
                raise UsageError(
                    f"#SBATCH: unknown option {tok!r}",
                    where=where,
                    hint="sbatch's options are listed by 'sbatch --help'; a comment after options starts with '#'",
                )
            value = tok[2:].removeprefix("=")
            if not value:
                if i >= len(tokens):
                    raise UsageError(f"#SBATCH: {tok} needs a value (e.g. '{tok} 2')", where=where)
                value = tokens[i]
                i += 1
            out.append(Directive(sbatch_name(tok[:2]), value, n))
        else:
            raise UsageError(
                f"#SBATCH: expected an option (--name=value, --name value, -X value), found {tok!r}",
                where=where,
                hint="a trailing comment must start with '#'",
            )
    return out


def _gpus_from_gres(value: str) -> int | None:
    """The GPUs per node in `--gres` (`gpu`, `gpu:4`, `gpu:a100:4`, `gpu:a100`; other resources ignored)."""
    for item in value.split(","):
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        if len(parts) == 1 or (len(parts) == 2 and not parts[1][:1].isdigit()):
            return 1
        return count(item)
    return None


# read here, not by optiontable.from_sbatch: a node range, and the tasks' and GPUs' other spellings, which make the
# job's shape; every other option of a submit option's row is mapped by from_sbatch, as the flags are
_SHAPE = ("nodes", "ntasks-per-node", "ntasks", "gres", "gpus-per-task")


def request(path: str | Path) -> BatchRequest:
    """The script's directives made into settings; a value sbatch would refuse is an error naming its line."""
    req = BatchRequest(path=str(path), directives=read_directives(path))
    s, lines = req.settings, req.lines
    ntasks: tuple[int, int] | None = None
    gpus_per_task: tuple[int, int] | None = None
    for d in req.directives:
        where = f"{path}:{d.line}"
        value = d.value
        if value is not None and re.fullmatch(r"<[^>]*>", value.strip()):
            raise UsageError(
                f"#SBATCH --{d.name}={value}: a placeholder left in the script",
                where=where,
                hint=f"put the real value there, or pass --{d.name} on the command line",
            )
        row = BY_SBATCH.get(d.name)
        if row is None and d.name not in _SHAPE:
            continue  # sbatch's to read from the script (job name, mail, output...): nothing the preflight needs
        try:
            if d.name == "nodes":
                first = (value or "").split("-")[0].split(":")[0]
                s["nodes"], lines["nodes"] = _positive(first), d.line
            elif d.name == "ntasks-per-node":
                s["tasks_per_node"], lines["tasks_per_node"] = _positive(value or ""), d.line
            elif d.name == "ntasks":
                ntasks = (_positive(value or ""), d.line)
            elif d.name == "gres":
                g = _gpus_from_gres(value or "")
                if g is not None:
                    s["gpus_per_node"], lines["gpus_per_node"] = g, d.line
            elif d.name == "gpus-per-task":
                gpus_per_task = (count(value or ""), d.line)
            elif row is not None:
                if row.type is not bool and not value:
                    raise ValueError(value)
                for key, got in from_sbatch({d.name: True if value is None else value}).items():
                    s[key], lines[key] = got, d.line
        except ValueError:
            raise UsageError(
                f"#SBATCH --{d.name}: {value!r} is not {_EXPECTED.get(d.name, 'a valid value')}", where=where
            ) from None
    nodes = s.get("nodes", 1)
    if ntasks is not None and "tasks_per_node" not in s:
        if ntasks[0] % nodes:
            raise UsageError(
                f"#SBATCH --ntasks={ntasks[0]} over {nodes} node(s): Slurm would spread them unevenly, and clusterdoc "
                "follows a job's ranks as nodes x ranks per node",
                where=f"{path}:{ntasks[1]}",
                hint="give the script --ntasks-per-node (or a --ntasks that the nodes divide)",
            )
        s["tasks_per_node"], lines["tasks_per_node"] = ntasks[0] // nodes, ntasks[1]
    if gpus_per_task is not None and "gpus_per_node" not in s:
        s["gpus_per_node"] = gpus_per_task[0] * s.get("tasks_per_node", 1)
        lines["gpus_per_node"] = gpus_per_task[1]
    return req


_EXPECTED = {
    "nodes": "a node count (e.g. 2, or 2-4)",
    "ntasks-per-node": "a positive integer",
    "ntasks": "a positive integer",
    "gpus-per-node": "a GPU count (e.g. 8 or a100:8)",
    "gres": "a generic resource (e.g. gpu:4)",
    "gpus-per-task": "a GPU count (e.g. 1)",
    "time": "a time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED)",
    "partition": "a partition name",
    "account": "an account name",
    "qos": "a QOS name",
    "constraint": "a node feature expression",
    "mem": "a memory size (e.g. 64G)",
    "mem-per-gpu": "a memory size (e.g. 80G)",
    "cpus-per-task": "a CPU count",
    "reservation": "a reservation name",
}


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValueError(value)
    return int(value)


def merge(settings: dict, origin: dict, req: BatchRequest) -> tuple[dict, list[str]]:
    """(the settings the preflight and the record see, the sbatch options for its command line), for every option
    with an sbatch name (optiontable's rows and --sbatch-option), each layer's value being what the job gets: a flag,
    CLUSTERDOC_* or sbatch's own SBATCH_* variable over the script's line (sbatch's command line and its variables
    override the script), the script's line over a config file, a config file over nothing (it fills what the
    script leaves unsaid, on the command line too), and a default only where sbatch's own default is meant. The
    command line is optiontable.sbatch_options' (the one place an option becomes an sbatch option)."""
    merged = dict(settings)
    passed: dict = {}
    for o in OPTIONS:
        if not (o.sbatch or o.key == "sbatch_option") or o.key not in settings:
            continue
        where = origin.get(o.key, "default")
        given = where == "flag" or where.startswith(ENV_PREFIX) or (bool(o.sbatch_env) and where == o.sbatch_env)
        if not given and o.key in req.settings:
            merged[o.key] = req.settings[o.key]
        elif given or where != "default":
            passed[o.key] = settings[o.key]
    return merged, [f"--{k}" if v is True else f"--{k}={v}" for k, v in sbatch_options(passed).items()]


def interpreter(path: str | Path) -> str:
    """The program a script's `#!` names (`bash` for `#!/usr/bin/env bash`), "" without one."""
    try:
        first = private.read(Path(path).resolve(), limit=4096).decode("utf-8", "replace").split("\n", 1)[0]
    except OSError:
        return ""
    return _program(first)
