"""`clusterdoc submit`'s options, one row each: the one place an option is spelled.

Everything else derives from OPTIONS: the submit parser (`add_arguments`, in the table's order) and what it parsed
(`from_args`), `SubmitOptions.flags()`, the YAML config's keys and the environment's CLUSTERDOC_<KEY> variables with
their checks (clusterdoc/config.py), the JobSpec's fields and defaults (`default`, `spec_values`), the variables
every rank gets (JobSpec.shim_env, `rank_switches`) and what sbatch gets (`sbatch_options`: every row with an
`sbatch` name, passed on as that sbatch option by launch/slurm.py, with sbatch's own SBATCH_* variable read as a layer
of its own: `from_sbatch_env`). A new submit option is one row here, a field of SubmitOptions and, when the job needs
it, of JobSpec (tests/test_option_table.py holds them together); a new sbatch option is nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENV_PREFIX = "CLUSTERDOC_"
MAX_INT = 2**31 - 1  # no setting needs more (node counts, minutes, seconds)
MAX_PORT = 65535
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
BACKENDS = ("auto", "local", "slurm", "mpirun")  # auto and launch/backend.py's table
ON_HANG = ("abort", "wait")
MEMORY = r"\d{1,12}[KMGT]?"  # sbatch's --mem / --mem-per-gpu: megabytes, or a unit (0: all of the node's)
SLURM_TIME = re.compile(r"(?:(\d{1,5})-)?(\d{1,7})(?::(\d{1,2}))?(?::(\d{1,2}))?")


@dataclass(frozen=True)
class Option:
    key: str  # --key-with-dashes, the config key (dashes or underscores), CLUSTERDOC_<KEY>, SubmitOptions' field
    type: type  # bool (a switch: --key), int or str
    default: Any  # what nothing given means (flag > env > config file > default)
    help: str  # --help's text; "{default}" stands for the default
    metavar: str | None = None
    short: str = ""  # "-N"
    choices: tuple[str, ...] = ()
    fold_case: bool = False  # upper-cased before the choices are checked: the parser takes any case
    low: int = 1  # an int's least value (0 where 0 switches the thing off)
    high: int = MAX_INT
    negative: tuple[str, ...] = ()  # a switch's twin and its help, the two exclusive ("--no-wait", "print ...")
    field: str = ""  # the SubmitOptions and JobSpec field when it is the key's opposite (preflight = not no_preflight)
    layered: bool = True  # a config key and an environment variable (not --config itself)
    spec: bool = True  # a JobSpec field (not what only the submitting process reads: --wait, --folder, --config)
    to_ranks: bool = False  # every rank gets it as CLUSTERDOC_<KEY> (the shim reads it there)
    sbatch: str = ""  # the sbatch long option the value is passed on as (launch/slurm.py, generically)
    sbatch_env: str = ""  # sbatch's own variable for it (SBATCH_ACCOUNT): a layer below CLUSTERDOC_<KEY>
    repeat: bool = False  # given several times (a list: `--setup A --setup B`, a YAML list, lines of the variable)
    pattern: str = ""  # a string value must match it whole (its form is said in the help's metavar)

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    @property
    def env(self) -> str:
        return env_name(self.key)

    @property
    def attr(self) -> str:
        """The SubmitOptions (and JobSpec) field."""
        return self.field or self.key

    def help_text(self) -> str:
        return self.help.replace("{default}", str(self.default))

    def to_field(self, value: Any) -> Any:
        """A setting's value as its field holds it, and back (the one inversion is its own inverse; None stays
        "not given")."""
        return (not value) if self.field and value is not None else value


OPTIONS: tuple[Option, ...] = (
    Option(
        "backend",
        str,
        "auto",
        "where to run (default {default}: Slurm if its commands answer, else mpirun with a hostfile, else local)",
        choices=BACKENDS,
    ),
    Option("nodes", int, 1, "number of nodes (default {default})", short="-N", sbatch="nodes"),
    Option("tasks_per_node", int, None, "ranks per node (default 1, or GPUs per node)", sbatch="ntasks-per-node"),
    Option(
        "gpus_per_node",
        int,
        0,
        "GPUs per node (default {default})",
        low=0,
        sbatch="gpus-per-node",
        sbatch_env="SBATCH_GPUS_PER_NODE",
    ),
    Option("hostfile", str, None, "hostfile for the mpirun backend and the preflight check", metavar="FILE"),
    Option("ssh_config", str, None, "OpenSSH client config for mpirun and the preflight check", metavar="FILE"),
    Option("partition", str, None, "Slurm partition", short="-p", sbatch="partition", sbatch_env="SBATCH_PARTITION"),
    Option(
        "time",
        int,
        60,
        "time limit in minutes (Slurm, default {default})",
        metavar="MIN",
        sbatch="time",
        sbatch_env="SBATCH_TIMELIMIT",
    ),
    Option(
        "account",
        str,
        None,
        "Slurm account the job is charged to",
        metavar="NAME",
        short="-A",
        sbatch="account",
        sbatch_env="SBATCH_ACCOUNT",
    ),
    Option(
        "qos", str, None, "Slurm quality of service", metavar="QOS", short="-q", sbatch="qos", sbatch_env="SBATCH_QOS"
    ),
    Option(
        "constraint",
        str,
        None,
        "Slurm node features the nodes must have, e.g. a100 or 'a100&ib'",
        metavar="FEATURES",
        short="-C",
        sbatch="constraint",
        sbatch_env="SBATCH_CONSTRAINT",
    ),
    Option(
        "mem",
        str,
        None,
        "Slurm memory per node: megabytes or with a unit, 64G; 0: all of it",
        metavar="SIZE",
        sbatch="mem",
        sbatch_env="SBATCH_MEM_PER_NODE",
        pattern=MEMORY,
    ),
    Option(
        "mem_per_gpu",
        str,
        None,
        "Slurm memory per GPU: megabytes or with a unit, 80G",
        metavar="SIZE",
        sbatch="mem-per-gpu",
        sbatch_env="SBATCH_MEM_PER_GPU",
        pattern=MEMORY,
    ),
    Option(
        "exclusive",
        bool,
        False,
        "Slurm: whole nodes, shared with no other job",
        sbatch="exclusive",
        sbatch_env="SBATCH_EXCLUSIVE",
    ),
    Option("cpus_per_task", int, None, "Slurm: CPUs per rank", metavar="N", short="-c", sbatch="cpus-per-task"),
    Option(
        "reservation",
        str,
        None,
        "Slurm reservation to run in",
        metavar="NAME",
        sbatch="reservation",
        sbatch_env="SBATCH_RESERVATION",
    ),
    Option(
        "sbatch_option",
        str,
        None,
        "any other sbatch option, passed on as --KEY=VALUE (KEY alone: a switch); repeatable",
        metavar="KEY=VALUE",
        repeat=True,
    ),
    Option(
        "srun_option",
        str,
        None,
        "an option of the ranks' srun (and the preflight's), e.g. --srun-option=--container-image=IMG, "
        "--srun-option mpi=pmix; repeatable",
        metavar="OPT",
        repeat=True,
    ),
    Option(
        "setup",
        str,
        None,
        "a shell line run before the ranks start and before the preflight probes the nodes, e.g. "
        "'module load cuda/12.4'; repeatable",
        metavar="LINE",
        repeat=True,
    ),
    Option("debug", bool, False, "collective shape checking in every rank", to_ranks=True),
    Option(
        "log_level",
        str,
        None,
        "shim log level (DEBUG, INFO, WARNING, ...)",
        metavar="LEVEL",
        choices=LOG_LEVELS,
        fold_case=True,
        to_ranks=True,
    ),
    Option("overflow", bool, False, "inf/nan detection on every module of every model", to_ranks=True),
    Option(
        "oom_retry",
        str,
        None,
        "on OOM, re-launch with the script's --ARG halved on every rank, down to MIN (default 1), e.g. batch-size:8",
        metavar="ARG[:MIN]",
    ),
    Option("no_preflight", bool, False, "do not run the doctor first", field="preflight"),
    Option(
        "hang_timeout",
        int,
        300,
        "a rank in one collective this long makes every rank report where it is (default {default}; 0: off)",
        metavar="SECONDS",
        low=0,
        to_ranks=True,
    ),
    Option(
        "on_hang",
        str,
        "abort",
        "after the hang report: stop every rank ({default}, the default) or keep waiting",
        choices=ON_HANG,
        to_ranks=True,
    ),
    Option("trace", bool, False, "keep every rank's collectives for 'clusterdoc trace JOB'", to_ranks=True),
    Option(
        "straggler",
        int,
        10,
        "log the rank that keeps the others waiting when the median rank waits this share of the step for it "
        "(default {default}; 0: off)",
        metavar="PERCENT",
        low=0,
        to_ranks=True,
    ),
    Option(
        "port",
        int,
        None,
        "the rendezvous MASTER_PORT (default: derived from the job id; local: a free port); the mpirun preflight "
        "checks that the first node can listen on it and the others reach it",
        metavar="PORT",
        high=MAX_PORT,
    ),
    Option(
        "retries",
        int,
        0,
        "after a failure `clusterdoc why` blames on a node or the scheduler (time limit, preemption), run the job "
        "again up to N times without the blamed nodes; never after the code's own error (default {default})",
        metavar="N",
        low=0,
    ),
    Option(
        "slurm_wait",
        int,
        600,
        "slurm: how long a controller that does not answer (a slurmctld restart) is waited for; the job meanwhile "
        "is 'unknown', never failed nor retried (default {default})",
        metavar="SECONDS",
    ),
    Option(
        "config",
        str,
        None,
        "YAML config (default ./clusterdoc.yaml, then ~/.config/clusterdoc/config.yaml)",
        metavar="FILE",
        layered=False,
        spec=False,
    ),
    Option(
        "wait",
        bool,
        None,
        "stream output and wait (default for local)",
        negative=("--no-wait", "print the job id and return"),
        spec=False,
    ),
    Option("folder", str, "clusterdoc-jobs", "log folder (default ./{default})", metavar="DIR", spec=False),
    Option(
        "mpirun",
        str,
        None,
        "mpirun for the mpirun backend (default: mpirun on PATH; e.g. mpirun.mpich, mpirun.openmpi)",
        metavar="CMD",
    ),
    Option(
        "python",
        str,
        None,
        "python the ranks run (default: this one, which must exist at the same path on the nodes)",
        metavar="PATH",
    ),
)
BY_KEY = {o.key: o for o in OPTIONS}


def env_name(key: str) -> str:
    """CLUSTERDOC_<OPTION>. (The shim's nccl/gloo choice is CLUSTERDOC_DIST_BACKEND, not `backend`.)"""
    return ENV_PREFIX + key.upper()


def default(key: str) -> Any:
    return BY_KEY[key].default


def add_arguments(parser) -> None:
    """Every row as an argparse option of `parser` (the submit subcommand), in the table's order. Each defaults
    to None, "not given", so the environment, the config files and the table's default can decide."""
    for o in OPTIONS:
        names = [o.flag, o.short] if o.short else [o.flag]
        if o.repeat:  # --setup A --setup B: a list, in the order given
            parser.add_argument(
                *names, dest=o.key, action="append", default=None, metavar=o.metavar, help=o.help_text()
            )
        elif o.negative:  # a switch pair: --wait / --no-wait
            group = parser.add_mutually_exclusive_group()
            group.add_argument(*names, dest=o.key, action="store_true", default=None, help=o.help_text())
            group.add_argument(o.negative[0], dest=o.key, action="store_false", help=o.negative[1])
        elif o.type is bool:
            parser.add_argument(*names, dest=o.key, action="store_true", default=None, help=o.help_text())
        else:
            kw: dict[str, Any] = {"dest": o.key, "default": None, "help": o.help_text()}
            if o.type is int:
                kw["type"] = int
            if o.metavar:
                kw["metavar"] = o.metavar
            if o.choices and not o.fold_case:
                kw["choices"] = list(o.choices)
            parser.add_argument(*names, **kw)


def from_args(ns) -> dict[str, Any]:
    """What the submit parser parsed, as SubmitOptions' keyword arguments."""
    return {o.attr: o.to_field(getattr(ns, o.key)) for o in OPTIONS}


def spec_values(settings: dict[str, Any]) -> dict[str, Any]:
    """The resolved settings as JobSpec's keyword arguments, each row that is a JobSpec field (the values the
    spec derives, such as the ranks per node from the GPUs, are settings.build_spec's)."""
    return {o.attr: o.to_field(settings[o.key]) for o in OPTIONS if o.spec}


def rank_switches(values: dict[str, Any]) -> dict[str, str]:
    """CLUSTERDOC_<KEY> for every row the ranks get, from the spec's fields (a switch as 1/0; None: not set)."""
    out = {}
    for o in OPTIONS:
        value = values.get(o.attr)
        if o.to_ranks and value is not None:
            out[o.env] = ("1" if value else "0") if o.type is bool else str(value)
    return out


# --- sbatch: the rows it gets, its own variables, and the options a batch script names ------------------------

# sbatch options clusterdoc writes itself (submitit's batch script, the job's shape, the warning signal, --retries'
# excluded nodes): not to be given as --sbatch-option, with the option that sets each where there is one
OWNED = {
    "nodes": "--nodes",
    "ntasks-per-node": "--tasks-per-node",
    "tasks-per-node": "--tasks-per-node",
    "ntasks": "--nodes and --tasks-per-node",
    "output": "--folder (the job's output goes to its log folder)",
    "error": "--folder (the job's output goes to its log folder)",
    "open-mode": "",
    "signal": "",  # the time-limit warning the ranks get (launch/slurm.py)
    "exclude": "--retries (it leaves the blamed nodes out)",
    "array": "",
    "wait": "",
    "wrap": "",
    "parsable": "",
    "export": "",  # the ranks get the submitting shell's variables (--export=ALL)
}
# sbatch's variables for options clusterdoc writes itself: sbatch would let them win over the batch script's lines
OWNED_ENV = ("SBATCH_OUTPUT", "SBATCH_ERROR", "SBATCH_OPEN_MODE", "SBATCH_SIGNAL", "SBATCH_ARRAY_INX", "SBATCH_WAIT")
# srun options of the ranks' step that clusterdoc sets itself
OWNED_SRUN = ("output", "error", "input", "nodes", "ntasks", "ntasks-per-node", "nodelist", "kill-on-bad-exit")
SBATCH_SHORT = {  # sbatch's one-letter options, as a batch script may spell them
    "A": "account", "C": "constraint", "c": "cpus-per-task", "D": "chdir", "d": "dependency", "e": "error",
    "G": "gpus", "J": "job-name", "N": "nodes", "n": "ntasks", "o": "output", "p": "partition", "q": "qos",
    "t": "time", "w": "nodelist", "x": "exclude", "a": "array", "O": "overcommit", "s": "oversubscribe",
}  # fmt: skip
SBATCH_ALIAS = {"tasks-per-node": "ntasks-per-node", "mem-per-node": "mem"}
_KEY = re.compile(r"[a-z][a-z0-9-]{0,63}")


def sbatch_name(name: str) -> str:
    """An sbatch option as a script or a user spells it (-A, --account, account, --tasks-per-node) -> its long
    name (account, ntasks-per-node)."""
    bare = name.lstrip("-")
    if len(bare) == 1 and name.startswith("-") and not name.startswith("--"):
        bare = SBATCH_SHORT.get(bare, bare)
    return SBATCH_ALIAS.get(bare, bare)


BY_SBATCH = {o.sbatch: o for o in OPTIONS if o.sbatch}


def parse_sbatch_option(text: str) -> tuple[str, str | bool]:
    """`--sbatch-option KEY=VALUE` (or `--KEY=VALUE`, or KEY alone: a switch) -> (KEY, VALUE or True), checked:
    KEY is an option's name, not one clusterdoc writes itself nor one that has its own submit option."""
    from clusterdoc.errors import UsageError
    from clusterdoc.untrusted import printable

    key, eq, value = text.partition("=")
    name = key.strip().lstrip("-")
    shown = printable(text, 120)
    if not _KEY.fullmatch(name) or (key.strip().startswith("-") and not key.strip().startswith("--")):
        raise UsageError(
            f"--sbatch-option {shown!r}: expected KEY=VALUE with KEY an sbatch long option's name",
            hint="e.g. --sbatch-option mail-type=END, or --sbatch-option requeue for a switch",
        )
    name = SBATCH_ALIAS.get(name, name)
    if name in OWNED:
        owner = OWNED[name]
        raise UsageError(
            f"--sbatch-option {shown!r}: clusterdoc sets sbatch's --{name} itself",
            hint=f"use {owner}" if owner else "leave it out: the batch script clusterdoc writes needs its own",
        )
    if name in BY_SBATCH:
        row = BY_SBATCH[name]
        raise UsageError(
            f"--sbatch-option {shown!r}: sbatch's --{name} is a submit option of its own",
            hint=f"use {row.flag}" + ("" if row.type is bool else f" {printable(value, 80) or row.metavar or 'VALUE'}"),
        )
    return name, (value if eq else True)


def srun_option(text: str) -> str:
    """`--srun-option` as given (--mpi=pmix, mpi=pmix, -l) -> the srun argument, checked."""
    from clusterdoc.errors import UsageError
    from clusterdoc.untrusted import printable

    arg = text.strip() if text.strip().startswith("-") else "--" + text.strip()
    name = arg.lstrip("-").partition("=")[0]
    if not name or "\n" in arg or "\0" in arg or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", name):
        raise UsageError(
            f"--srun-option {printable(text, 120)!r}: expected an srun option, e.g. --container-image=IMG or mpi=pmix"
        )
    if name in OWNED_SRUN:
        raise UsageError(
            f"--srun-option {printable(text, 120)!r}: clusterdoc sets the ranks' srun --{name} itself",
            hint="leave it out: each rank's output goes to its log folder; the shape is --nodes, --tasks-per-node",
        )
    return arg


def sbatch_options(values: Mapping[str, Any]) -> dict[str, str | bool | int]:
    """{sbatch long option: value} for a job's fields (or settings, by key): every row with an `sbatch` name that
    is set (a switch when True), then the --sbatch-option ones. Nothing else says which option becomes which."""
    out: dict[str, str | bool | int] = {}
    for o in OPTIONS:
        value = values.get(o.attr, values.get(o.key))
        if o.sbatch and value is not None and value is not False and not (type(value) is int and value == 0):
            out[o.sbatch] = value  # (0 GPUs: no --gpus-per-node at all, as sbatch without it)
    for text in values.get("sbatch_option") or ():
        key, value = parse_sbatch_option(text)
        out[key] = value
    return out


def slurm_minutes(text: str, unlimited: bool = False) -> int:
    """Slurm's time forms (MIN, MIN:SEC, H:MM:SS, D-H, D-H:MM, D-H:MM:SS) -> whole minutes, rounded up as Slurm
    does; ValueError for anything else. `unlimited` (a batch script's own line, which sbatch takes as it is):
    UNLIMITED, INFINITE and 0 are 0, no time limit; otherwise they have no minutes (ValueError for UNLIMITED, and
    0 is the least limit, 1)."""
    if unlimited and text.strip().upper() in ("UNLIMITED", "INFINITE"):
        return 0
    m = SLURM_TIME.fullmatch(text.strip())
    if not m:
        raise ValueError(f"not a Slurm time ({text!r}): MIN, H:MM:SS or D-H:MM:SS")
    days, a, b, c = m.groups()
    if days is not None:  # D-H[:MM[:SS]]
        secs = int(days) * 86400 + int(a) * 3600 + int(b or 0) * 60 + int(c or 0)
    elif c is not None:  # H:MM:SS
        secs = int(a) * 3600 + int(b) * 60 + int(c)
    elif b is not None:  # MIN:SEC
        secs = int(a) * 60 + int(b)
    else:
        secs = int(a) * 60
    return -(-secs // 60) if unlimited else max(1, -(-secs // 60))


def from_sbatch_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """sbatch's own variables (SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...) as settings by key, as sbatch reads them
    (SBATCH_EXCLUSIVE set: whole nodes; its user/mcs forms are left to sbatch). Values stay text except the time,
    in minutes; config.py checks them as it checks CLUSTERDOC_<KEY>."""
    out: dict[str, Any] = {}
    for o in OPTIONS:
        if not o.sbatch_env or o.sbatch_env not in environ:
            continue
        raw = environ[o.sbatch_env].strip()
        if o.type is bool:
            if raw.lower() in ("user", "mcs"):
                continue
            out[o.key] = True
        elif o.key == "time":
            out[o.key] = slurm_minutes(raw)  # ValueError for UNLIMITED: sbatch's own to take
        elif raw:
            out[o.key] = int(raw) if o.type is int and raw.isdigit() else raw
    return out


def count(value: str) -> int:
    """`4`, or the count in `gpu:4`, `a100:4`, `gpu:a100:4` (a GPU type dropped); ValueError for anything else."""
    last = value.split(":")[-1]
    if not last.isdigit():
        raise ValueError(value)
    return int(last)


def from_sbatch(options: Mapping[str, str | bool]) -> dict[str, Any]:
    """{sbatch option: value} as a batch script's #SBATCH lines give them (`-A`, `--account`, `account`; True for
    a switch) -> settings by key, the same as the flags: a row's option to its key (the time in minutes, numbers as
    numbers, a GPU type dropped: a100:4 is 4), every other one to `sbatch_option` as KEY=VALUE (ValueError for a
    value that is not of its row's form; a time limit of UNLIMITED or 0 is 0, no limit, as sbatch takes it from a
    script). Options clusterdoc sets itself (OWNED: nodes, output...) that no row takes are left out; the caller
    reads them from `options` if it needs them."""
    out: dict[str, Any] = {}
    rest: list[str] = []
    for given, value in options.items():
        name = sbatch_name(given)
        row = BY_SBATCH.get(name)
        if row is not None:
            if row.type is bool:
                out[row.key] = value is True or str(value).lower() not in ("0", "no", "false")
            elif row.key == "time":
                out[row.key] = slurm_minutes(str(value), unlimited=True)
            elif row.type is int:  # ValueError for what is no count; `--gpus-per-node=a100:4`: its count
                out[row.key] = count(str(value))
            else:
                out[row.key] = str(value)
        elif name not in OWNED:
            rest.append(name if value is True else f"{name}={value}")
    if rest:
        out["sbatch_option"] = rest
    return out
