"""How a job attempt ended, the same for every backend: per-rank exit codes, who failed first, OOM or not."""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass, field

from clusterdoc import private
from clusterdoc.launch.job import OOM_EXIT_CODE, OOM_MARKER, JobDir


@dataclass
class Outcome:
    state: str  # COMPLETED, FAILED, CANCELLED, TIMEOUT, LOST, UNKNOWN (Slurm's controller did not answer)
    codes: dict[int, int | None] = field(default_factory=dict)  # rank -> exit code (None: unknown)
    failed: list[int] = field(default_factory=list)  # the ranks that failed first
    oom: bool = False  # a failed rank died of out-of-memory
    message: str = ""
    unstartable: bool = False  # the scheduler could not start it (too few nodes): no new attempt would start either

    @property
    def ok(self) -> bool:
        return self.state == "COMPLETED"

    def to_json(self) -> dict:
        d = asdict(self)
        d["codes"] = {str(k): v for k, v in self.codes.items()}
        return d

    def describe(self) -> str:
        if self.ok:
            return (
                f"job completed: {self.message}"
                if self.message
                else f"job completed: all {len(self.codes)} ranks exited 0"
            )
        text = f"job {self.state.lower()}"
        if self.failed:
            text += ": " + ", ".join(
                f"rank {r} {describe_code(self.codes.get(r))}" + (" (out of memory)" if _rank_oom(self, r) else "")
                for r in self.failed
            )
        later = [(r, c) for r, c in sorted(self.codes.items()) if r not in self.failed and c != 0]
        if self.failed and later:
            exited = [f"rank {r} {describe_code(c)}" for r, c in later if c is not None and c > 0]
            stopped = [r for r, c in later if c is None or c < 0]
            text += "; afterwards " + ", ".join(
                exited + ([f"rank{'s' if len(stopped) > 1 else ''} {_ranges(stopped)} stopped"] if stopped else [])
            )
        if self.message:
            text += f"{'; ' if self.failed else ': '}{self.message}"
        return text


def _rank_oom(outcome: Outcome, rank: int) -> bool:
    return outcome.oom and outcome.codes.get(rank) == OOM_EXIT_CODE


def describe_code(code: int | None) -> str:
    if code is None:
        return "ended without an exit code"
    if code < 0 or code > 128 and code - 128 in _SIGNALS:
        num = -code if code < 0 else code - 128
        return f"was killed by {_SIGNALS.get(num, f'signal {num}')}"
    return f"exited with code {code}"


_SIGNALS = {s.value: s.name for s in signal.Signals}


def _ranges(ranks: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    out, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            out.append(str(start) if start == r else f"{start}-{r}")
            start = None
    return ", ".join(out)


def rank_died_of_oom(jd: JobDir, rank: int, code: int | None) -> bool:
    """clusterdoc.run's record, or its marker on stderr (if the exit file could not be written)."""
    rec = jd.rank_exit(rank)
    if rec is not None and rec.get("oom"):
        return True
    if code == OOM_EXIT_CODE:
        try:
            with private.open_read(jd.err(rank)) as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 65536))
                return OOM_MARKER.encode() in f.read()
        except OSError:
            return False
    return False


def outcome_from_codes(
    codes: dict[int, int | None],
    jd: JobDir,
    first_failed: list[int] | None = None,
    stopped: bool = False,
    state: str | None = None,
    message: str = "",
) -> Outcome:
    failed = first_failed if first_failed is not None else [r for r, c in sorted(codes.items()) if c not in (0,)]
    left = _early_exit(jd, len(codes)) if failed and not message and state in (None, "FAILED") else None
    if left:  # a rank ended its loop early: the others failed waiting for it (gloo: 'Connection closed by peer')
        failed, message = left[0], left[1]
        codes = {**codes, **{r: 0 for r in failed}}  # its own record: its script exited 0 (stopped in teardown)
    oom = any(rank_died_of_oom(jd, r, codes.get(r)) for r in failed)
    if state is None:
        state = "FAILED" if failed else ("COMPLETED" if all(c == 0 for c in codes.values()) else "FAILED")
    return Outcome(state=state, codes=codes, failed=failed, oom=oom, message=message)


def _lost_node(jd: JobDir, world_size: int) -> tuple[list[int], str] | None:
    from clusterdoc.why.evidence import rank_facts
    from clusterdoc.why.verdict import Evidence, lost_node_note

    try:
        ranks = [rank_facts(jd.path, r) for r in range(world_size)]
    except Exception:  # a diagnosis aid: never let it cost the outcome itself
        return None
    from clusterdoc.why.logs import launcher_lost

    try:
        lost = launcher_lost(private.read(jd.path / "mpirun.err", limit=1 << 20).decode("utf-8", "replace"))
    except OSError:
        lost = []
    ev = Evidence(job=jd.id, backend="", world=world_size, state="FAILED", ranks=ranks, launcher_lost=lost)
    return lost_node_note(ev)


def _early_exit(jd: JobDir, world_size: int) -> tuple[list[int], str] | None:
    """The ranks that exited 0 before the others' last collective, and the sentence for it (hang/early.py,
    from the exit records, and a stopped rank's place (rank<R>.where): what `why` says too)."""
    from clusterdoc.hang import early

    try:
        ends = [early.from_record(r, jd.rank_exit(r) or early.stand_in(jd.rank_where(r))) for r in range(world_size)]
        found = early.find(ends, world_size)
    except Exception:  # a diagnosis aid: never let it cost the outcome itself
        return None
    if found is None:
        return None
    return found.ranks, f"{found.sentence()}: the others' failures are its effects ('clusterdoc why' for the evidence)"


def outcome_from_records(
    jd: JobDir, world_size: int, launcher_code: int | None, state: str | None = None, message: str = ""
) -> Outcome:
    """For launchers that see only their own exit (mpirun, srun): ranks' codes from their exit records.

    The first failure is the earliest non-zero record; ranks without a record were stopped (killed).
    """
    recs = {r: jd.rank_exit(r) for r in range(world_size)}
    codes = {r: (rec["code"] if rec else None) for r, rec in recs.items()}
    bad = sorted((rec.get("time", 0.0), r) for r, rec in recs.items() if rec and rec["code"] != 0)
    if not bad and launcher_code == 0 and all(c == 0 for c in codes.values()):
        return Outcome(state="COMPLETED", codes=codes)
    first = [bad[0][1]] if bad else []
    lost = _lost_node(jd, world_size)
    if lost:  # a node died: its ranks left no record, and the ranks that noticed must not be blamed
        first = lost[0]
        message = f"{message}; {lost[1]}" if message else lost[1]
    if not first and not message:
        message = (
            f"no rank recorded a failure; the launcher exited with {launcher_code}"
            if launcher_code is not None
            else "no rank recorded a failure"
        )
    return outcome_from_codes(codes, jd, first_failed=first, state=state or "FAILED", message=message)
