"""What a job folder (and Slurm, and the probe) says about how an attempt ended: gathered once, as plain data.

`gather()` reads; `clusterdoc.why.verdict.judge()` decides. Everything read here comes from a job folder its
ranks (or anyone with write access) wrote: read through clusterdoc.private (no symlink followed, bounded),
and the text is never executed, only matched.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from clusterdoc import private
from clusterdoc.hang import early
from clusterdoc.jobs import sacct, slurmcmd
from clusterdoc.jobs.folder import JobDir
from clusterdoc.why import logread, logs

TAIL = 256 * 1024  # the end of a rank's stderr is where it died


@dataclass
class RankFacts:
    rank: int
    host: str | None = None  # from rank<R>.start (clusterdoc.run writes it first)
    addr: str | None = None  # the address its peers reach it by
    started: float | None = None
    code: int | None = None  # exit code: the rank's own record, else the launcher's view (None: unknown)
    recorded: bool = False  # it ended through clusterdoc.run (rank<R>.exit exists)
    ended: float | None = None  # the record's time
    oom: bool = False
    oom_size: str | None = None
    signs: list[dict] = field(default_factory=list)  # its lines that name a failure beyond its code (logs.own_signs)
    raised: dict | None = None  # logs.Raised as a dict: the exception it died of
    peers_lost: list[str] = field(default_factory=list)  # peers whose connection it saw drop
    cuda: str | None = None  # a CUDA error it printed
    issued: dict = field(default_factory=dict)  # group -> collective calls it made (its exit record)
    ops: dict = field(default_factory=dict)  # group -> op -> calls
    at: dict | None = None  # the collective it failed in, or was in when it ended: {op, seq, group, site}
    last: dict | None = None  # its last completed collective
    rendezvous: list[int] | None = None  # it hosted the store and timed out: [seconds, joined, expected]

    @property
    def signalled(self) -> bool:
        c = self.code
        return c is not None and (c < 0 or c in (130, 137, 143))


@dataclass
class Evidence:
    job: str
    backend: str
    world: int
    state: str  # the attempt's state as recorded (COMPLETED, FAILED, ...; RUNNING while it runs)
    attempt: int = 1
    backend_id: str | None = None
    started: float | None = None
    ended: float | None = None
    message: str = ""  # the launcher's own note on the outcome
    ranks: list[RankFacts] = field(default_factory=list)
    hang: dict | None = None  # the hang report: {"headline", "odd": [ranks], "silent", "gone", "lines", "started"}
    preflight: list[str] | None = None  # the preflight's failed lines (it refused the allocation)
    scheduler: dict | None = None  # {"state", "reason", "nodes", "ends": [logs.slurm_ends], "tasks": [...]}
    health: dict[str, list[str]] = field(default_factory=dict)  # node -> the probe's problems after the failure
    foreign: bool = False  # a log clusterdoc did not write (no exit records): thin evidence is "unknown"
    signs: list[dict] = field(default_factory=list)  # signature lines (logs.Hit as dicts), in log order
    unreachable: list[str] = field(default_factory=list)  # job nodes the probe could not reach
    answered: list[str] = field(default_factory=list)  # job nodes the probe reached (they answer after the failure)
    launcher_lost: list[str] = field(default_factory=list)  # nodes mpirun lost its connection to (mpirun.err)
    probed: bool = False
    probed_through: str | None = None  # the transport the probe went through (ssh, srun, saved)
    read: list[dict] = field(default_factory=list)  # what was read of each log (logread.LogRead.to_json)
    # a foreign log's lines that name the rank or node that failed, without saying how: torchrun's Root Cause
    # entry, srun's "node: task N: Exited" ({rank, node, line, how}); gloo's monitoredBarrier ({ranks, line, text})
    culprits: list[dict] = field(default_factory=list)
    barrier: list[dict] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)  # a foreign log's failure lines by family (why/vocab.py)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Evidence:
        d = dict(d)
        d["ranks"] = [RankFacts(**r) for r in d.get("ranks") or []]
        return cls(**d)

    def nodes(self) -> list[str]:
        return sorted({r.host for r in self.ranks if r.host})


def _tail(path: Path) -> str:
    try:
        with private.open_read(path) as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - TAIL))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _record(path: Path, limit: int = 1 << 20) -> dict | None:
    try:
        rec = private.read_json(path, limit=limit)
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _log(path: Path, reads: list[dict] | None = None) -> str:
    """A rank's whole log as logread reads it (the end line by line, the rest for failure words); a log
    longer than that end is noted in `reads`."""
    try:
        got = logread.read_log(path)
    except OSError:
        return ""
    if reads is not None and got.size > got.tail:
        reads.append(got.to_json())
    return got.text()


def rank_facts(folder: Path, rank: int, launcher_code: int | None = None, reads: list[dict] | None = None) -> RankFacts:
    start = _record(folder / f"rank{rank}.start", 1 << 16) or {}
    ex = _record(folder / f"rank{rank}.exit") or {}
    err = _log(folder / f"rank{rank}.err", reads)
    code = ex.get("code") if isinstance(ex.get("code"), int) else launcher_code
    raised = logs.last_traceback(err)
    f = RankFacts(
        rank=rank,
        host=start.get("host") if isinstance(start.get("host"), str) else None,
        addr=start.get("addr") if isinstance(start.get("addr"), str) else None,
        started=_num(start.get("time")),
        code=code,
        recorded=bool(ex),
        ended=_num(ex.get("time")),
        oom=bool(ex.get("oom")) or logs.is_oom(err),
        oom_size=logs.oom_size(err),
        signs=logs.own_signs(err),
        raised=asdict(raised) if raised else None,
        peers_lost=logs.peers_lost(err),
        cuda=logs.cuda_error(err),
        rendezvous=logs.rendezvous_short(err),
    )
    col = ex["collectives"] if isinstance(ex.get("collectives"), dict) else {}
    if not ex:  # stopped or killed: its place as it kept it (shim/where.py) says where it waited
        col = (early.stand_in(_record(folder / f"rank{rank}.where", 1 << 16)) or {}).get("collectives") or {}
    ops = ex["ops"] if isinstance(ex.get("ops"), dict) else {}
    f.issued = _counts(ex.get("issued"))
    f.ops = {str(g)[:200]: _counts(v) for g, v in list(ops.items())[:64]}
    f.at = _call(col.get("failed") or col.get("current") or next(iter(col.get("pending") or []), None))
    f.last = _call(col.get("last"))
    if code == 0:
        f.oom = False
    return f


def _counts(d) -> dict:
    """{name: count} from a record, bounded, counts as plain ints (anything else dropped)."""
    if not isinstance(d, dict):
        return {}
    return {
        str(k)[:200]: v for k, v in list(d.items())[:64] if isinstance(v, int) and not isinstance(v, bool) and v >= 0
    }


def _call(c) -> dict | None:
    """A collective of the exit record, reduced to what a verdict names: op, seq, group, site (bounded)."""
    if not isinstance(c, dict) or not isinstance(c.get("op"), str):
        return None
    out = {k: c[k] for k in ("op", "seq", "group", "peer") if isinstance(c.get(k), (str, int)) and k in c}
    site = c.get("site")
    if isinstance(site, list) and len(site) == 3:
        out["site"] = [str(site[0])[:500], site[1] if isinstance(site[1], int) else 0, str(site[2])[:200]]
    out["op"] = out["op"][:100]
    return out


REPORT_MAX = 16 << 20  # bytes of the hang report read (from its start: the headline and every group's line)
DIFFERS = "<- differs"


def ranks_of(text: str, world: int | None = None) -> list[int]:
    """'0,2-3' -> [0, 2, 3]; ranks at or above `world` (or a number of more than 7 digits) are not ranks."""
    out: list[int] = []
    top = world if world is not None else 10**7
    for part in text.replace(" ", "").split(","):
        a, _, b = part.partition("-")
        if a.isdigit() and len(a) <= 7 and (not b or (b.isdigit() and len(b) <= 7)):
            out += range(int(a), min(int(b or a), top - 1) + 1)
    return out


def odd_line(line: str) -> tuple[str, str] | None:
    """A report line marked '<- differs': (its rank list, its text), read without a regex (linear: the
    report's lines are padded, and a backtracking pattern took minutes on a 1,024-rank report)."""
    body = line.rstrip()
    if not body.endswith(DIFFERS) or not line[:1].isspace():
        return None
    parts = body[: -len(DIFFERS)].split(None, 2)
    if len(parts) < 3 or parts[0] not in ("rank", "ranks"):
        return None
    return parts[1], parts[2].strip()


def hang_report(folder: Path, world: int | None = None) -> dict | None:
    """The hang report the launcher wrote (stacks/report.txt), reduced to its odd ranks and its lines. Read
    from its start, line by line, bounded (REPORT_MAX): linear in its size."""
    try:
        with private.open_read(folder / "stacks" / "report.txt") as f:
            lines = list(logread.lines_of(f, REPORT_MAX, REPORT_MAX))  # a group's line lists all its ranks
    except OSError:
        return None
    if not any(line.strip() for line in lines):
        return None
    odd: set[int] = set()
    silent: set[int] = set()  # odd ranks that did not answer the hang watch (their heartbeat stopped)
    gone = loader = idle = False
    before = ""  # the end of the line before: a sentence of the report may wrap between two words
    for line in lines:
        found = odd_line(line)
        if found:
            odd.update(ranks_of(found[0], world))
            gone = gone or found[1].startswith("gone:")
            if found[1].startswith("did not answer"):
                silent.update(ranks_of(found[0], world))
        joined = before + " " + line.lstrip()
        loader = loader or "DataLoader worker" in joined
        idle = idle or "in no collective" in joined
        before = line[-40:]
    info = _record(folder / "stacks" / "report.json", 1 << 16) or {}
    return {
        "headline": lines[0],
        "odd": sorted(odd),
        "silent": sorted(silent),
        "gone": gone,
        "lines": [line[:2000] for line in lines[:40]],
        "started": _num(info.get("stall_started")) or _num(info.get("printed")),
        "loader": loader or any(_in_loader(folder, r) for r in sorted(odd)[:64]),
        "idle": idle,
        "early_exit": info.get("early_exit") if isinstance(info.get("early_exit"), dict) else None,
    }


_LOADER = re.compile(r"torch/utils/data/|_next_data|_MultiProcessingDataLoaderIter|DataLoader", re.IGNORECASE)


def _in_loader(folder: Path, rank: int) -> bool:
    """The odd rank's stacks (stacks/rank<R>.txt) show its main thread in torch's DataLoader."""
    text = _tail(folder / "stacks" / f"rank{rank}.txt")
    start = text.find("Thread MainThread")
    if start >= 0:
        end = text.find("\nThread ", start + 1)
        text = text[start : end if end > 0 else None]
    return bool(_LOADER.search(text))


def preflight_failures(folder: Path) -> list[str] | None:
    text = _tail(folder / "preflight.txt")
    if "preflight FAILED" not in text:
        return None
    return [line.strip() for line in text.splitlines() if re.search(r"\b(FAIL|✗)\b", line)][:20] or [
        text.strip().splitlines()[-1]
    ]


def slurm_facts(jd: JobDir, backend_id: str | None, live: bool = True, folder: Path | None = None) -> dict | None:
    """Slurm's side: `scontrol show job` while Slurm remembers the job, then `sacct` (where the cluster keeps
    accounting: the job's state, its steps', MaxRSS), and slurmstepd's lines in submitit's logs (there when
    accounting is not)."""
    if not backend_id:
        return None
    text = ""
    for p in sorted((jd.path / "submitit").glob(f"{backend_id}_*")) if (jd.path / "submitit").is_dir() else []:
        if p.suffix in (".out", ".err") and not p.is_symlink():
            text += _tail(p)
    info: dict[str, str] = {}
    acc = None
    if live:
        try:
            info = slurmcmd.read_job(slurmcmd.checked_id(backend_id, jd.record_path))
            if not info:  # forgotten by the controller (MinJobAge): accounting may know it
                acc = sacct.query(slurmcmd.checked_id(backend_id, jd.record_path))
                info = acc.scontrol_like() if acc else {}
        except Exception:  # Slurm not reachable from here: the logs still speak
            info = {}
    ends = logs.slurm_ends(text)
    for e in ends:
        try:
            e["time"] = time.mktime(time.strptime(e["at"], "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            e["time"] = None
    warned = _tail((folder or jd.path) / "slurm-warned").strip()
    return {
        "warned": float(warned) if warned.isdigit() else None,
        "state": info.get("JobState"),
        "reason": info.get("Reason"),
        "nodes": info.get("NodeList"),
        "ends": ends,
        "tasks": logs.srun_task_errors(text),
        "accounting": sacct.facts(acc),
    }


def gather(jd: JobDir, attempt: int | None = None, live: bool = True) -> Evidence:
    """An attempt's evidence (default: the last). An earlier attempt's rank files are in attempt<N>/."""
    rec = jd.read()
    spec = rec["spec"]
    world = spec["nodes"] * spec["tasks_per_node"]
    attempts = rec.get("attempts") or []
    last = attempts[-1]["n"] if attempts else 1
    n = attempt or last
    a: dict = next((x for x in attempts if x.get("n") == n), {})
    folder = jd.path if n == last else jd.attempt_dir(n)
    outcome = a.get("outcome") or (rec.get("outcome") if n == last else None) or {}
    codes = {int(k): v for k, v in (outcome.get("codes") or {}).items() if str(k).isdigit()}
    state = outcome.get("state") or (rec.get("state") if n == last else "UNKNOWN") or "UNKNOWN"
    reads: list[dict] = []
    ev = Evidence(
        job=jd.id,
        backend=spec.get("backend", "?"),
        world=world,
        state=state,
        attempt=n,
        backend_id=a.get("backend_id") or (rec.get("backend_id") if n == last else None),
        started=_num(a.get("started")),
        ended=_num(a.get("ended")),
        message=str(outcome.get("message") or ""),
        ranks=[rank_facts(folder, r, codes.get(r), reads) for r in range(world)],
        hang=hang_report(folder, world),
        preflight=preflight_failures(folder),
        read=reads,
    )
    if ev.backend == "mpirun":
        ev.launcher_lost = logs.launcher_lost(_tail(folder / "mpirun.err"))
    if ev.backend == "slurm":
        ev.scheduler = slurm_facts(jd, ev.backend_id, live and n == last, folder)
        now = ev.scheduler.get("state") if ev.scheduler else None
        if ev.state in ("RUNNING", "PENDING", "UNKNOWN") and now in ENDED:
            ev.state = now  # its end was not recorded (submit killed): Slurm's word, or accounting's
    return ev


# Slurm's states of an ended job (a record still RUNNING takes them: nothing recorded the end)
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
         "OUT_OF_MEMORY")  # fmt: skip
