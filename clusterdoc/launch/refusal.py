"""sbatch's refusal of a job, said with what to do: the accounts the user has (`sacctmgr show assoc`), the QOS
limit the job is over (`sacctmgr show qos`), the features the nodes have (`sinfo`), where the reservations are. The
texts are Slurm's own (22.05: "Invalid account or account/partition combination specified", "Invalid feature
specification", "Job violates accounting/QOS policy ...", "Requested node configuration is not available").
"""

from __future__ import annotations

from clusterdoc.errors import UsageError
from clusterdoc.jobs import slurmcmd
from clusterdoc.launch import accounting
from clusterdoc.launch.job import JobSpec
from clusterdoc.untrusted import printable

NO_CONF = "Could not establish a configuration source"  # what every Slurm command says without slurm.conf
CONF_HINT = (
    "point SLURM_CONF to the cluster's slurm.conf (export SLURM_CONF=/path/to/slurm.conf), or submit from a "
    "machine where Slurm is set up; --backend local runs the job here"
)


def _count(hostlist: str) -> str:
    """How many nodes a Slurm hostlist names ('?' when it cannot be read)."""
    from clusterdoc.hostfile import expand_hostlist

    try:
        return str(len(expand_hostlist(hostlist)))
    except (UsageError, ValueError):
        return "?"


def qos_exceeded(limits: dict[str, str], nodes: int | None, minutes: int | None) -> list[str]:
    """Which of a QOS's per-job limits the job's --nodes and --time exceed, in words (pure)."""
    from clusterdoc.optiontable import slurm_minutes

    out = []
    tres = dict(p.partition("=")[::2] for p in limits.get("MaxTRESPerJob", "").split(",") if "=" in p)
    if nodes and tres.get("node", "").isdigit() and nodes > int(tres["node"]):
        out.append(f"--nodes {nodes} is over its MaxTRESPerJob node={tres['node']}")
    try:
        wall = slurm_minutes(limits["MaxWall"]) if limits.get("MaxWall") else None
    except ValueError:
        wall = None
    if minutes and wall and minutes > wall:
        out.append(f"--time {minutes} is over its MaxWall {limits['MaxWall']} ({wall} min)")
    return out


def sbatch_refused(message: str, spec: JobSpec | None = None) -> UsageError:
    """sbatch's refusal, with the fix for what it says (the accounts the user has, the features the nodes have)."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    said = [ln for ln in lines if "error" in ln.lower() or "unrecognized" in ln.lower()] or lines
    last = printable(said[-1] if said else "no message", 300)
    if NO_CONF in message:
        return UsageError(f"sbatch refused the job: {last}: slurm.conf not found", hint=CONF_HINT)
    low = message.lower()
    asked = lambda key: getattr(spec, key, None) if spec is not None else None
    if "invalid account" in low:
        have = accounting.associations() or []
        listed = ", ".join(sorted({a.account for a in have}))
        return UsageError(
            f"sbatch refused the job: {last} (--account {asked('account') or '(none: your default)'}"
            + (f", --partition {asked('partition')}" if asked("partition") else "")
            + ")",
            hint=(
                f"your accounts: {listed}; pass one with --account (-A)"
                if listed
                else "sacctmgr show assoc user=$USER lists your accounts: pass one with --account (-A)"
            ),
        )
    if "invalid qos" in low or "qos" in low and "policy" in low:
        have = accounting.associations() or []
        qos = ", ".join(sorted({q for a in have for q in a.qos}))
        limits = slurmcmd.qos_limits(str(asked("qos"))) if asked("qos") and "policy" in low else {}
        over = qos_exceeded(limits, asked("nodes"), asked("time"))
        which = (
            "; ".join(over)
            if over
            else (f"QOS {asked('qos')}'s limits: " + ", ".join(f"{k}={v}" for k, v in limits.items()) if limits else "")
        )
        return UsageError(
            f"sbatch refused the job: {last} (--qos {asked('qos') or '(none: the default)'})"
            + (f": {which}" if which else ""),
            hint=(f"the QOS your associations allow: {qos}; " if qos else "")
            + "sacctmgr show qos lists each one's limits (MaxWall, MaxTRES, MaxSubmit)",
        )
    if "invalid feature" in low or "constraint" in low:
        features = slurmcmd.node_features()
        listed = "; ".join(f"{f}: {n}" for f, n in sorted(features.items())) if features else ""
        return UsageError(
            f"sbatch refused the job: {last} (--constraint {asked('constraint')})",
            hint=f"the nodes' features: {listed}; pass one of them with --constraint (-C)"
            if listed
            else "no node has a feature (sinfo -o '%f|%N'): leave --constraint out",
        )
    if "requested node configuration is not available" in low:
        features = slurmcmd.node_features() if asked("constraint") else {}
        listed = "; ".join(f"{f}: {n} ({_count(n)})" for f, n in sorted(features.items()))
        return UsageError(
            f"sbatch refused the job: {last} (--nodes {asked('nodes')}"
            + (f", --constraint {asked('constraint')}" if asked("constraint") else "")
            + ")",
            hint=(f"the nodes' features: {listed}; ask for no more nodes than have them, or " if listed else "")
            + "compare --nodes, --gpus-per-node, --mem, --cpus-per-task with sinfo -N -o '%N %c %m %G %f'",
        )
    if "reservation" in low:
        return UsageError(
            f"sbatch refused the job: {last} (--reservation {asked('reservation')})",
            hint="scontrol show reservation lists the reservations, their users and accounts",
        )
    if "unrecognized option" in low or "invalid option" in low:
        return UsageError(
            f"sbatch refused the job: {last}", hint="check the --sbatch-option names against 'man sbatch'"
        )
    return UsageError(f"sbatch refused the job: {last}", hint="check --partition, --nodes and --time against 'sinfo'")
