"""The campaign's invariants (issue 43), pure checks over what one job left: `check(result, expect)` -> the
violations, each a line that says what was expected and what happened. `result` is runner.Result.to_json();
`expect` is the fault's catalog entry as a dict (runner.expectations)."""

from __future__ import annotations

import re

EXIT_CODES = {"COMPLETED": 0, "FAILED": 1, "CANCELLED": 130}
TRACEBACK = "Traceback (most recent call last)"


def check(r: dict, e: dict) -> list[str]:
    out: list[str] = []
    out += ends_in_time(r)
    out += outcome(r, e)
    out += why_names(r, e)
    out += retries(r, e)
    out += requeued(r, e)
    out += nothing_left(r)
    out += records(r)
    out += output_kept(r)
    out += no_traceback(r)
    out += quiet(r, e)
    out += pace_true(r)
    return out


def ends_in_time(r: dict) -> list[str]:
    if r.get("rc") is None:
        return [f"submit did not end within {r['bound']:.0f}s (killed)"]
    if r["elapsed"] > r["bound"]:
        return [f"submit took {r['elapsed']:.0f}s, over its bound {r['bound']:.0f}s"]
    return []


def outcome(r: dict, e: dict) -> list[str]:
    # "A|B" or `also`: either may follow (a rerun that completes, or not yet)
    wants = [*e["outcome"].split("|"), *e.get("also", [])] if r.get("landed", True) else ["COMPLETED"]
    if e["retried"] == "if node" and (r.get("why") or {}).get("category") == "node":
        wants = ["COMPLETED"]  # rerun without the node: the second attempt completes
    out = []
    if r.get("state") not in wants:
        out.append(f"outcome {r.get('state')}, expected {' or '.join(wants)}")
    code = EXIT_CODES.get(str(r.get("state")), 1)
    if r.get("rc") is not None and r["rc"] != code:
        out.append(f"submit exited {r['rc']} for {r.get('state')}, expected {code}")
    said = r.get("said") or ""
    if r.get("state") in ("COMPLETED", "FAILED") and f"job {str(r['state']).lower()}" not in said:
        out.append(f"submit's last line does not say the outcome: {said[:200]!r}")
    return out


def why_names(r: dict, e: dict) -> list[str]:
    w = r.get("why")
    if not r.get("landed", True) or r.get("first_state") == "COMPLETED":
        return [] if not (w and w.get("category") not in (None, "ok")) else [f"why blamed a job that completed: {w}"]
    if not w:
        return ["no verdict from why for the failed attempt"]
    cat = w.get("category")
    out = []
    if cat not in (*e["why"], "unknown"):
        out.append(f"why says {cat} ({w.get('headline', '')[:160]}), expected {' or '.join(e['why'])} or unknown")
    nodes = list(w.get("nodes") or [])
    if cat == "node" and nodes != [r["node"]]:
        out.append(f"why blames nodes {nodes}, expected [{r['node']}]")
    elif e["culprit"] == "node" and cat != "unknown" and nodes and nodes != [r["node"]]:  # never another node
        out.append(f"why names nodes {nodes} ({cat}), expected none or [{r['node']}]")
    # a code or OOM cause names the node its rank ran on (where, not who): only a node cause blames it
    if e["culprit"] == "rank" and cat not in ("unknown", "node") and r["rank"] not in (w.get("ranks") or []):
        out.append(f"why names ranks {w.get('ranks')}, expected rank {r['rank']} among them")
    return out


def retries(r: dict, e: dict) -> list[str]:
    attempts = r.get("attempts") or []
    blamed = (r.get("why") or {}).get("category") == "node"
    rerun = e["retried"] is True or (e["retried"] == "if node" and blamed)
    want = 2 if rerun and r.get("landed", True) else 1
    if want == 2 and len(attempts) == 1 and e["culprit"] == "node" and r["node"] in (r.get("requeued_after") or []):
        # Slurm requeued the job itself when the node failed (JobRequeue=1, its default for batch jobs): the
        # rerun is Slurm's, under the same id, on other nodes; submit said after which node
        out = progress(r)
        if r["node"] in (r.get("hosts2") or []):
            out.append(f"Slurm's requeue ran on {r['node']} again")
        return out
    if len(attempts) != want:
        return [f"{len(attempts)} attempt(s), expected {want} ({'rerun' if rerun else 'not rerun'})"]
    if want == 1:
        return []
    out = progress(r)
    if e["culprit"] != "node" and not blamed:
        return out  # the scheduler's failure: rerun on any node
    second = attempts[1]
    if r["node"] not in (second.get("exclude") or []):
        out.append(f"attempt 2 does not exclude {r['node']}: {second.get('exclude')}")
    if r["node"] in (r.get("hosts2") or []):
        out.append(f"attempt 2 ran on {r['node']} again")
    if r.get("ckpt_before") and not r.get("resumed"):
        out.append(f"attempt 2 did not resume from the checkpoint at step {r['ckpt_before']}")
    return out


def progress(r: dict) -> list[str]:
    """The rerun (a new attempt, or Slurm's requeue) started from the last checkpoint the run before it wrote,
    and went on from there."""
    if r.get("ckpt_last") and (r.get("resumed") is None or r["resumed"] < r["ckpt_last"]):
        return [f"the rerun resumed from step {r.get('resumed')}, not from the checkpoint at step {r['ckpt_last']}"]
    if r.get("resumed") is not None and r.get("reached", 0) <= r["resumed"] and not r.get("finished"):
        return [f"the rerun made no progress past step {r['resumed']} (reached {r.get('reached')})"]
    return []


def requeued(r: dict, e: dict) -> list[str]:
    """A requeue (preemption): the job ran again under the same job id, resumed from the checkpoint, and submit
    said it was requeued."""
    if not e.get("requeued") or not r.get("landed", True):
        return []
    out = progress(r) if r.get("state") == "COMPLETED" else []
    if not r.get("requeued_said"):
        out.append("submit did not say the job was requeued")
    return out


def nothing_left(r: dict) -> list[str]:
    return [f"30 s after the end still running: {p[:200]}" for p in r.get("leftovers") or []]


def records(r: dict) -> list[str]:
    out = [f"job folder: {p}" for p in r.get("record_problems") or []]
    if r.get("recorded_state") not in (None, r.get("state")):
        out.append(f"job.json says {r.get('recorded_state')}, submit said {r.get('state')}")
    return out


def output_kept(r: dict) -> list[str]:
    before, after = r.get("before") or "", r.get("after") or ""
    if before and not after.startswith(before):
        return [f"rank 0's output before the fault is not kept ({len(before)} bytes then, {len(after)} now)"]
    return []


def no_traceback(r: dict) -> list[str]:
    """A traceback in submit's own output (the ranks' lines come prefixed [rank N]: their tracebacks are theirs)."""
    lines = [ln for ln in (r.get("submit_err") or "").splitlines() if TRACEBACK in ln and not re.match(r"\[rank", ln)]
    return [f"clusterdoc printed a traceback: {lines[0][:200]}"] if lines else []


QUIET = ("clusterdoc: job stalled", "straggler:")


def quiet(r: dict, e: dict) -> list[str]:
    """Where nothing failed (a clock step): no stall reported, no straggler named."""
    if not e.get("quiet"):
        return []
    said = [ln for ln in (r.get("submit_err") or "").splitlines() if any(q in ln for q in QUIET)]
    return [f"a healthy job was said to stall or straggle: {said[0][:200]}"] if said else []


PACE = re.compile(r"rank (\d+) \(([^)]*)\): compute ([\d.]+) (ms|s), waiting ([\d.]+) (ms|s)")


def pace_true(r: dict) -> list[str]:
    """The per-rank pace that rank 0 prints at the end (compute and waiting) fits in the time submit ran: a figure
    longer than the whole job is measured on a clock that moved (a node's wall clock stepped)."""
    out = []
    for m in PACE.finditer(r.get("submit_err") or ""):
        took = sum(float(v) / (1000 if unit == "ms" else 1) for v, unit in (m.group(3, 4), m.group(5, 6)))
        if took > r["elapsed"] + 5:
            out.append(f"rank {m.group(1)} ({m.group(2)})'s pace adds up to {took:.0f} s in a job of "
                       f"{r['elapsed']:.0f} s")  # fmt: skip
    return out
