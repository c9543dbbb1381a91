"""`clusterdoc submit`'s options, one row each: the one place an option is spelled.

Everything else derives from OPTIONS: the submit parser (`add_arguments`, in the table's order) and what it parsed
(`from_args`), `SubmitOptions.flags()`, the YAML config's keys and the environment's CLUSTERDOC_<KEY> variables with
their checks (clusterdoc/config.py), the JobSpec's fields and defaults (`default`, `spec_values`) and the variables
every rank gets (JobSpec.shim_env, `rank_switches`). A new submit option is one row here, a field of SubmitOptions and,
when the job needs it, of JobSpec (tests/test_option_table.py holds them together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ENV_PREFIX = "CLUSTERDOC_"
MAX_INT = 2**31 - 1  # no setting needs more (node counts, minutes, seconds)
MAX_PORT = 65535
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
BACKENDS = ("auto", "local", "slurm", "mpirun")  # auto and launch/backend.py's table
ON_HANG = ("abort", "wait")


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
    Option("nodes", int, 1, "number of nodes (default {default})", short="-N"),
    Option("tasks_per_node", int, None, "ranks per node (default 1, or GPUs per node)"),
    Option("gpus_per_node", int, 0, "GPUs per node (default {default})", low=0),
    Option("hostfile", str, None, "hostfile for the mpirun backend and the preflight check", metavar="FILE"),
    Option("ssh_config", str, None, "OpenSSH client config for mpirun and the preflight check", metavar="FILE"),
    Option("partition", str, None, "Slurm partition", short="-p"),
    Option("time", int, 60, "time limit in minutes (Slurm, default {default})", metavar="MIN"),
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
        if o.negative:  # a switch pair: --wait / --no-wait
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
