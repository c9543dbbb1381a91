"""Before anything is queued: may this user submit to this account, partition and QOS? (Slurm accounting)

A site with `AccountingStorageEnforce=associations` refuses a job whose user/account/partition has no
association with sbatch's "Invalid account or account/partition combination specified", and a QOS the
association does not list with "Invalid qos specification": neither says which accounts or QOS the user has.
`check_association` asks accounting (sacctmgr) first and, where the job would be refused, says what the user
has. `judge` is the pure part (facts in, a Refusal or None out).

Unknown is never a refusal: no sacctmgr, no accounting, a cluster that does not enforce associations, or a
sacctmgr that does not answer in time: None, and sbatch has the last word.
"""

from __future__ import annotations

import getpass
import re
import shutil
import subprocess
from dataclasses import dataclass

from clusterdoc.errors import UsageError

TIMEOUT = 15.0  # every sacctmgr / scontrol call
MAX_ROWS = 4096  # associations read


@dataclass(frozen=True)
class Assoc:
    cluster: str
    account: str
    partition: str  # "" = every partition
    qos: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    message: str
    hint: str

    def error(self) -> UsageError:
        return UsageError(self.message, hint=self.hint)

    def __str__(self) -> str:
        return f"{self.message}\n  {self.hint}"


_NAME = re.compile(r"[A-Za-z0-9_.@+-]{0,128}")


def parse_assocs(text: str) -> list[Assoc] | None:
    """`sacctmgr -P -n show assoc where user=U format=Cluster,Account,Partition,QOS`; None when a line is not
    of that form (not sacctmgr's: nothing is judged from it)."""
    out = []
    for line in text.splitlines()[:MAX_ROWS]:
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != 4 or not all(_NAME.fullmatch(p) for p in parts[:3]):
            return None
        qos = tuple(q for q in parts[3].split(",") if q)
        if not all(_NAME.fullmatch(q) for q in qos):
            return None
        out.append(Assoc(parts[0], parts[1], parts[2], qos))
    return out


def _has(a: Assoc) -> str:
    where = f" in partition {a.partition}" if a.partition else ""
    return f"{a.account}{where} (QOS {','.join(a.qos) or 'none'})"


def judge(
    assocs: list[Assoc],
    user: str,
    account: str | None,
    partition: str | None,
    qos: str | None,
    default_account: str | None = None,
    cluster: str | None = None,
) -> Refusal | None:
    """Would Slurm refuse this user/account/partition/QOS? account None: the user's default account; partition
    None: any (the default partition, which the caller does not know); qos None: the association's default."""
    mine = [a for a in assocs if cluster is None or not a.cluster or a.cluster == cluster]
    where = f" on cluster {cluster}" if cluster else ""
    has = "; ".join(_has(a) for a in mine[:12]) + ("; ..." if len(mine) > 12 else "")
    show = f"sacctmgr show assoc where user={user} format=Account,Partition,QOS"
    if not mine:
        return Refusal(
            f"Slurm accounting has no association for user {user}{where}: every job of {user} will be refused",
            hint=f"ask the cluster's admins to add {user} to an account (sacctmgr add user {user} account=...)",
        )
    acct = account or default_account
    if acct is None:
        return None  # no account asked and no default known: sbatch decides
    ours = [a for a in mine if a.account == acct]
    accounts = sorted({a.account for a in mine})
    if not ours:
        asked = f"account {acct!r}" if account else f"the default account {acct!r} of {user}"
        return Refusal(
            f"{asked} is not one of {user}'s{where} (Slurm would refuse the job: Invalid account): {user} has {has}",
            hint=f"--account {accounts[0]}"
            + (f" (or one of {', '.join(accounts)})" if len(accounts) > 1 else "")
            + f"; see: {show}",
        )
    fits = [a for a in ours if not a.partition or partition is None or a.partition == partition]
    if not fits:
        parts = sorted({a.partition for a in ours})
        return Refusal(
            f"account {acct!r} of {user} has no association with partition {partition!r}{where} (Slurm would "
            f"refuse the job: Invalid account or account/partition combination): {user} has {has}",
            hint=f"--partition {parts[0]}"
            + (f" (or one of {', '.join(parts)})" if len(parts) > 1 else "")
            + f", or another account; see: {show}",
        )
    if qos and not any(qos in a.qos for a in fits):
        allowed = sorted({q for a in fits for q in a.qos})
        return Refusal(
            f"QOS {qos!r} is not allowed for {user} in account {acct!r}{where} (Slurm would refuse the job: Invalid "
            f"qos specification): allowed there: {', '.join(allowed) or 'none'}",
            hint=(f"--qos {allowed[0]}" if allowed else "ask the admins for a QOS") + f"; see: {show}",
        )
    return None


def _ask(argv: list[str]) -> str | None:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout[: 1 << 20] if res.returncode == 0 else None


def enforced() -> tuple[bool, str | None]:
    """(whether the cluster enforces associations, its ClusterName) from `scontrol show config`."""
    text = _ask(["scontrol", "show", "config"]) or ""
    conf = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            conf[key.strip()] = value.strip()
    enforce = conf.get("AccountingStorageEnforce", "")
    on = conf.get("AccountingStorageType", "") not in ("", "accounting_storage/none") and any(
        w in enforce.split(",") for w in ("associations", "limits", "qos", "safe")
    )  # limits, qos and safe imply associations (slurm.conf(5))
    return on, conf.get("ClusterName") or None


def associations(user: str | None = None) -> list[Assoc] | None:
    """This user's (default: this one's) associations (`sacctmgr show assoc`); None when accounting does not
    answer, or not in sacctmgr's form. What the preflight judges, and what a refused --account or --qos is told
    to pick from (launch/refusal.py)."""
    user = user or getpass.getuser()
    if not shutil.which("sacctmgr") or not user or not _NAME.fullmatch(user):
        return None
    text = _ask(
        ["sacctmgr", "-P", "-n", "show", "assoc", "where", f"user={user}", "format=Cluster,Account,Partition,QOS"]
    )
    return parse_assocs(text) if text is not None else None


def check_association(
    account: str | None, partition: str | None, qos: str | None, user: str | None = None
) -> Refusal | None:
    """Ask accounting whether Slurm will take a job of `user` (default: this one) in this account (None: the
    user's default), partition (None: the default) and QOS (None: the default); a Refusal that names what the
    user has, or None (allowed, or not known: see the module's docstring)."""
    if not shutil.which("sacctmgr") or not shutil.which("scontrol"):
        return None
    user = user or getpass.getuser()
    if not _NAME.fullmatch(user) or not user:
        return None
    on, cluster = enforced()
    if not on:
        return None
    assocs = associations(user)
    if assocs is None:
        return None
    default = None
    if account is None:
        got = (_ask(["sacctmgr", "-P", "-n", "show", "user", user, "format=DefaultAccount"]) or "").split()
        default = got[0] if len(got) == 1 and _NAME.fullmatch(got[0]) else None
    return judge(assocs, user, account, partition, qos, default, cluster)
