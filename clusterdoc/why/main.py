"""`clusterdoc why JOB`: gather the evidence, probe the job's nodes, judge, print (text or --json).

Exit codes: 0 the job completed (or runs without a problem), 1 it failed (the cause is printed), 2 usage.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from clusterdoc.errors import UsageError
from clusterdoc.jobs import slurmcmd
from clusterdoc.jobs.folder import JobDir, find_job
from clusterdoc.untrusted import printable
from clusterdoc.why import evidence, logread, verdict

PROBE_TIMEOUT = 20.0
IMMEDIATE = 10  # seconds the probe's srun step waits for its nodes to be free


def probe_nodes(
    ev: evidence.Evidence,
    ssh_config: str | None,
    timeout: float = PROBE_TIMEOUT,
    facts_dir: str | None = None,
    transport: str = "auto",
) -> None:
    """Run the doctor's gpu check (XIDs, ECC, lost GPUs: the probe's facts) on the job's nodes, after the failure,
    through the transport `clusterdoc check` uses (SSH, or srun where only Slurm reaches the nodes; or judge saved
    facts: facts_dir). Fills ev.health, ev.unreachable and ev.probed_through."""
    from clusterdoc.doctor import CheckOptions, gather, judge

    nodes = ev.nodes()
    if not nodes:
        return
    where = dict(facts_dir=facts_dir) if facts_dir else dict(nodelist=nodes, ssh_config=ssh_config)
    # the nodes as they are now: this shell is not the finished job's (launcher none: none of its variables)
    # through srun: a step now or never (--immediate): the nodes of a job whose node died stay allocated to it
    # (COMPLETING) until Slurm declares that node down, and a step waiting for them would hold up the retry
    opts = CheckOptions(
        **where, checks=["gpu"], mesh="off", progress=False, timeout=timeout, launcher="none", transport=transport,
        srun_options=[f"--immediate={IMMEDIATE}"],
    )  # fmt: skip
    g = gather(opts)
    ev.probed_through = g.transport
    runs = [g]
    if g.transport == "srun" and len(nodes) > 1 and not reached(nodes, g.conns, g.facts):
        runs = each_alone(opts, nodes)
    conns = {n: c for r in runs for n, c in r.conns.items()}
    facts = {n: f for r in runs for n, f in r.facts.items() if f}
    if not facts_dir:
        ev.answered = reached(nodes, conns, facts)
        ev.unreachable = unreachable(nodes, conns, facts)
    for f in [f for r in runs for f in judge(r, opts)]:
        if f.get("check") == "gpu" and f.get("node") in nodes and node_problem(f):
            ev.health.setdefault(f["node"], []).append(str(f.get("message")))
    ev.probed = True


def each_alone(opts, nodes: list[str]) -> list:
    """One srun step per node, side by side. One step over all the job's nodes starts on none of them while one
    is still held by the failed job (COMPLETING: its slurmd has not answered that the job's processes are gone,
    as when the node froze or lost its link): then the nodes that are free answer alone, and the one that does
    not is evidence about that node (unreachable() counts it only where another node answered)."""
    from concurrent.futures import ThreadPoolExecutor

    from clusterdoc.doctor import gather

    with ThreadPoolExecutor(len(nodes)) as pool:
        return list(pool.map(lambda n: gather(replace(opts, nodelist=[n])), nodes))


def reached(nodes: list[str], conns: dict, facts: dict) -> list[str]:
    return [n for n in nodes if str((conns.get(n) or {}).get("status")) == "ok" or facts.get(n)]


# what a transport says when the way in is not allowed (no key accepted, the login or connection refused): the
# site's rule about the probe, not a node's health
NOT_ALLOWED = ("auth", "refused", "unknown_host_key", "changed_host_key")


def unreachable(nodes: list[str], conns: dict, facts: dict) -> list[str]:
    """The job's nodes the probe could not reach, as evidence about those nodes: only where the probe reached some
    other node (a probe that reached none says something about the probe: SSH not allowed, Slurm busy or away),
    and never for a refused login (a transport the site does not allow)."""
    status = {n: str((conns.get(n) or {}).get("status")) for n in nodes}
    answered = reached(nodes, conns, facts)
    if not answered:
        return []
    return [n for n in nodes if n not in answered and status[n] not in NOT_ALLOWED and status[n] != "None"]


def probe_transport(backend: str, transport: str) -> str:
    """The way the probe reaches a job's nodes: the way `check` reaches them there. Under `auto`, a Slurm job's
    nodes through srun (its nodes need not allow SSH: pam_slurm_adopt, or no key); the others over SSH."""
    return "srun" if transport == "auto" and backend == "slurm" else transport


def node_problem(f) -> bool:
    """A FAIL of the gpu check, or an XID that fails a node even when an earlier run saw it already (the gpu check
    then only warns, so that a reset GPU is not drained for ever; here the job that just died is the question)."""
    from clusterdoc.checks import FAIL
    from clusterdoc.checks.gpuhealth import xid_status

    if f.get("status") == FAIL:
        return True
    m = re.match(r"XID (\d+) ", str(f.get("message") or ""))
    return m is not None and xid_status(int(m.group(1)), [str(f.get("message"))])[1] == FAIL


def should_probe(ev: evidence.Evidence) -> bool:
    """The nodes are worth asking when a rank vanished, died of a CUDA error or by SIGKILL, or the job stalled."""
    if ev.backend == "local" or ev.state == "COMPLETED":
        return False
    return any((not r.recorded and r.code != 0) or r.cuda or r.peers_lost for r in ev.ranks) or bool(ev.hang)


def render(ev: evidence.Evidence, v: verdict.Verdict, history: list[tuple[int, verdict.Verdict]]) -> str:
    out = []
    bid = f" {ev.backend_id}" if ev.backend_id and ev.backend != "local" else ""
    head = f"job {ev.job} ({ev.backend}{bid}), attempt {ev.attempt}"
    if v.ok:
        out.append(f"{head}: {ev.state.lower()}: nothing to explain")
    else:
        c = v.cause
        assert c is not None
        out.append(f"{head}: {ev.state.lower()}")
        out.append(f"  cause     {c.category}: {c.headline}")
        for e in c.evidence[:8]:
            out.append(f"  evidence  {e}")
        for k in c.candidates if c.category == "unknown" else []:
            out.append(f"  candidate {k}")
        for e in v.effects:
            out.append(f"  effects   {e}")
        for r in v.ruled_out[:6]:
            out.append(f"  ruled out {r}")
        if ev.probed:
            out.append(
                f"  probe     gpu check on {', '.join(ev.nodes())}"
                + (f" through {ev.probed_through}" if ev.probed_through not in (None, "ssh") else "")
                + " after the failure: "
                + ("; ".join(f"{n}: {len(p)} problem(s)" for n, p in ev.health.items()) or "no GPU problem")
                + (f"; unreachable: {', '.join(ev.unreachable)}" if ev.unreachable else "")
            )
        out.append(f"  next      {c.next_step}" + (" (a retry can succeed)" if c.retry else ""))
    for got in ev.read:
        out.append(f"  read      {got['path']}: {got['summary']}")
    if len(history) > 1:
        out.append("  attempts:")
        for n, h in history:
            what = "completed" if h.ok else f"{h.cause.category}: {h.cause.headline}" if h.cause else h.state.lower()
            out.append(f"    {n}: {what}")
    return "\n".join(printable(line, 2000) for line in out)


def history_of(jd: JobDir, live: bool = True) -> list[tuple[int, verdict.Verdict]]:
    rec = jd.read()
    out = []
    for a in rec.get("attempts") or []:
        n = a.get("n")
        if not isinstance(n, int):
            continue
        saved = a.get("why")
        if isinstance(saved, dict) and saved.get("category"):
            c = verdict.Cause(saved["category"], str(saved.get("headline", "")))
            out.append((n, verdict.Verdict(False, str(saved.get("state", "")), c)))
        else:
            out.append((n, verdict.judge(evidence.gather(jd, n, live=live))))
    return out


def explain(
    jd: JobDir,
    attempt: int | None = None,
    probe: bool = True,
    ssh_config: str | None = None,
    live: bool = True,
    transport: str = "auto",
) -> tuple[evidence.Evidence, verdict.Verdict]:
    """The evidence and verdict of one attempt (default the last); what submit --retries calls too."""
    ev = evidence.gather(jd, attempt, live=live)
    spec = jd.read()["spec"]
    if probe and should_probe(ev):
        try:
            probe_nodes(ev, ssh_config or spec.get("ssh_config"), transport=probe_transport(ev.backend, transport))
        except Exception:  # no SSH to the nodes from here (or no answer): judged on the folder alone
            ev.probed = False
    return ev, verdict.judge(ev)


def foreign(job: str, log: str | None) -> tuple[evidence.Evidence, verdict.Verdict]:
    """A Slurm job clusterdoc did not start: scontrol while the controller knows it, else accounting (sacct);
    its output file from --log, Slurm's StdOut/StdErr, or sbatch's default slurm-JOB.out in its WorkDir."""
    from clusterdoc.jobs import sacct
    from clusterdoc.why.foreign import evidence_from_lines

    info: dict = {}
    acc = None
    paths: list[Path] = [Path(log)] if log else []
    if not paths:
        jid = slurmcmd.checked_id(job, "JOB")
        try:
            info = slurmcmd.read_job(jid)
        except slurmcmd.Unreachable as exc:
            acc = sacct.query(jid)  # slurmdbd may answer while slurmctld does not
            if acc is None:
                raise UsageError(
                    f"Slurm job {printable(job)}: the Slurm controller does not answer ({exc})",
                    hint="try again once it answers (scontrol ping), or give its output file with --log",
                ) from None
        acc = acc or sacct.query(jid)  # None where the cluster keeps no accounting
        if not info and acc:
            info = acc.scontrol_like()
        if not info:
            raise UsageError(
                f"no clusterdoc job '{printable(job)}' and Slurm does not know job {printable(job)} any more"
                + ("" if acc else " (and keeps no accounting of it: sacct)"),
                hint="give its output file: clusterdoc why JOB --log slurm-JOB.out",
            )
        paths = [Path(p) for p in {info.get("StdOut"), info.get("StdErr")} if p]
        found = sacct.default_output(acc) if acc and not paths else None
        paths = paths or ([Path(found)] if found else [])
        if not paths and not acc:
            raise UsageError(
                f"Slurm job {printable(job)}: {info.get('JobState')} on {info.get('NodeList')}; its output files "
                "are not known to Slurm any more (accounting keeps no paths)",
                hint=f"give its output file: clusterdoc why {printable(job)} --log slurm-{printable(job)}.out",
            )
    logs = []
    for p in paths:
        try:
            logs.append(logread.read_log(p))  # the end first, the rest streamed: any size, memory bounded
        except OSError as err:
            if acc and not log:  # a file Slurm named, gone since: accounting still speaks
                continue
            raise UsageError(f"cannot read {printable(p)}: {err.strerror or err}") from None
    reads = [got.to_json() for got in logs]
    lines = (line for got in logs for line in got.lines)
    state = info.get("JobState") or "FAILED"
    ev = evidence_from_lines(lines, job, state, info)
    ev.read = reads
    if acc:
        assert ev.scheduler is not None
        ev.scheduler["accounting"] = sacct.facts(acc)
        if not logs:
            ev.message = (
                "no output file read: accounting keeps no path to it"
                + (f" (WorkDir {acc.work_dir}, no slurm-{acc.job}.out there)" if acc.work_dir else "")
                + "; give it with --log"
            )
    return ev, verdict.judge(ev)


def main(
    job: str | None,
    folder: str | None,
    as_json: bool = False,
    attempt: int | None = None,
    probe: bool = True,
    ssh_config: str | None = None,
    log: str | None = None,
    transport: str = "auto",
) -> int:
    if job is None:  # only an output file: it names the job
        job = Path(log or "-").name
    try:
        jd = None if log else find_job(job, folder)
    except UsageError:
        if not re.fullmatch(r"\d+(_\d+)?", job):
            raise
        jd = None
    if jd is None:
        ev, v = foreign(job, log)
        history: list[tuple[int, verdict.Verdict]] = [(1, v)]
    else:
        ev, v = explain(jd, attempt, probe, ssh_config, transport=transport)
        history = history_of(jd)
        if attempt is None and history:
            history[-1] = (history[-1][0], v)
    if as_json:
        print(
            json.dumps(
                {
                    "job": ev.job,
                    "attempt": ev.attempt,
                    "state": ev.state,
                    **v.to_json(),
                    "read": ev.read,
                    "history": [
                        {
                            "attempt": n,
                            "ok": h.ok,
                            "category": h.cause.category if h.cause else None,
                            "headline": h.cause.headline if h.cause else None,
                        }
                        for n, h in history
                    ],
                    "evidence": ev.to_json(),
                },
                indent=2,
            )
        )
    else:
        print(render(ev, v, history))
    return 0 if v.ok else 1
