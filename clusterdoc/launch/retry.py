"""`submit --retries N`: after a failed attempt, ask `clusterdoc why` and decide whether a new attempt can succeed.

- a node is to blame (it vanished, its GPU failed, Slurm says NODE_FAIL): run again without it (Slurm's
  `--exclude`, the hostfile minus it for mpirun), refusing when too few nodes remain;
- the scheduler ended it (time limit, preemption; the ranks had SIGUSR1 ahead of it to checkpoint): run again;
- anything else (the code's own exception, OOM, a desync): no retry, it would fail the same way; say so.
Each attempt's verdict is kept in job.json (attempts[].why); the new attempt's ranks get
TORCHELASTIC_RESTART_COUNT and CLUSTERDOC_PREVIOUS_ATTEMPT (the last attempt's folder, attempt<N>/).
"""

from __future__ import annotations

import time
from dataclasses import replace

from clusterdoc.launch.backend import backend_for
from clusterdoc.launch.job import JobDir, JobSpec
from clusterdoc.untrusted import printable


def record_verdict(jd: JobDir, attempt: int, probe: bool):
    from clusterdoc.why.main import explain

    try:
        ev, v = explain(jd, attempt=None, probe=probe)
    except Exception as exc:  # a diagnosis must never stop the job's own bookkeeping
        return None, f"why: {exc}"
    rec = jd.read()
    c = v.cause
    for a in rec["attempts"]:
        if a["n"] == attempt and c is not None:
            a["why"] = {
                "state": v.state,
                "category": c.category,
                "headline": c.headline,
                "nodes": c.nodes,
                "ranks": c.ranks,
                "retry": c.retry,
                "evidence": c.evidence[:6],
                "ruled_out": v.ruled_out[:6],
                "time": time.time(),
            }
    jd.update(attempts=rec["attempts"])
    return v, None


def available_nodes(spec: JobSpec) -> list[str] | None:
    """The nodes a new attempt could use (None: unknown, e.g. sinfo not answering)."""
    return backend_for(spec.backend).available_nodes(spec)


def _short(host: str) -> str:
    return host.split(".")[0]


def next_attempt(spec: JobSpec, jd: JobDir, attempt: int, err, probe: bool = True) -> JobSpec | None:
    left = spec.retries - (attempt - 1)
    v, problem = record_verdict(jd, attempt, probe=probe and left > 0)
    if left <= 0 or v is None or v.cause is None:
        if problem and left > 0:
            print(f"clusterdoc: not retrying: {problem}", file=err, flush=True)
        return None
    c = v.cause
    # a rank's exception text: no terminal escapes reach the user's terminal
    headline = f"{printable(c.category, 40)}: {printable(c.headline, 500)}"
    if not c.retry:
        line = f"attempt {attempt} failed: {headline}; not retrying: {printable(c.next_step, 300)}"
        jd.log_attempt(line)
        print(f"clusterdoc: {line}", file=err, flush=True)
        return None
    exclude = list(spec.exclude)
    if c.category == "node" and backend_for(spec.backend).leaves_out_nodes:
        exclude += [n for n in c.nodes if n and n not in exclude]
    nodes = available_nodes(spec)
    if nodes is not None:
        usable = [n for n in nodes if n not in exclude and _short(n) not in exclude]
        if len(usable) < spec.nodes:
            line = (
                f"attempt {attempt} failed: {headline}; not retrying: {len(usable)} node(s) left "
                f"without {printable(', '.join(exclude), 300)}, the job needs {spec.nodes}"
            )
            jd.log_attempt(line)
            print(f"clusterdoc: {line}", file=err, flush=True)
            return None
    without = f" without {printable(', '.join(exclude), 300)}" if exclude else ""
    line = f"attempt {attempt} failed: {headline}; retrying{without} (attempt {attempt + 1})"
    jd.log_attempt(line)
    print(f"clusterdoc: {line}", file=err, flush=True)
    return replace(spec, exclude=exclude, restart=attempt, previous_attempt=str(jd.attempt_dir(attempt)))
