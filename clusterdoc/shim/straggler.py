"""Which rank keeps the others waiting, from each rank's pace figures (pure; no torch, no I/O).

A rank's pace (track.Tracker.pace(), published in its heartbeat) is cumulative: wall seconds since tracking
began, seconds spent waiting in collectives (the time some collective of this rank was outstanding), optimizer
steps, collectives, and its wait per call site. Two samples give a window. In a synchronous job the rank that
computes longest arrives last at each collective and hardly waits, while every other rank waits for it: so a
straggler is a rank whose share of time waiting lies `threshold` (default 10 % of the step) below the median
rank's. Ranks that all wait alike (a slow link, heavy communication) are not stragglers.

Only a span of at least WINDOW_STEPS steps and WINDOW_SECONDS is judged (long_enough), and never the job's
start-up: ranks that began late keep the others waiting once, and a first step is slow in its own ways (lazy
allocations, DDP's bucket rebuild, compilation). The tracker marks where a rank's start-up ends (the first
collective completed once a window's worth has passed, track.Tracker.end), so a whole run's figures can be
taken from there (pace.settled).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from statistics import median

ENV = "CLUSTERDOC_STRAGGLER"  # the threshold: a percentage of the step (10); 0 turns the straggler watch off
DEFAULT_THRESHOLD = 0.10
MEMORY_TOLERANCE = 0.20  # peak memory this far from the median is named in the summary
WINDOW_STEPS = 10  # a judged span covers at least this many steps (collectives, for a job with no optimizer steps)
WINDOW_SECONDS = 4.0  # ... and at least this long; the first such span of a job is its start-up, never judged


def threshold_from_env(environ=os.environ) -> float:
    """The straggler threshold as a fraction, from CLUSTERDOC_STRAGGLER (a percentage of the step, `10` or
    `10%`, as `clusterdoc submit --straggler` sets it); the default when unset or not a number in [0, 100)."""
    try:
        value = float(environ.get(ENV, "").strip().removesuffix("%")) / 100
    except ValueError:
        return DEFAULT_THRESHOLD
    return value if 0 <= value < 1 else DEFAULT_THRESHOLD


@dataclass
class Figures:
    """One rank over a window (or since tracking began)."""

    rank: int
    host: str = "?"
    wall: float = 0.0  # seconds
    wait: float = 0.0  # seconds waiting in collectives
    steps: float = 0.0  # optimizer steps (0: the job has none; then collectives count as its steps)
    calls: float = 0.0  # collectives
    sites: dict[str, float] = field(default_factory=dict)  # call site -> seconds waited there
    peak: int | None = None  # peak memory, bytes
    memory: str = "RSS"  # "GPU" (torch.cuda.max_memory_allocated) or "RSS" (the process's peak resident set)

    @property
    def compute(self) -> float:
        return max(0.0, self.wall - self.wait)

    @property
    def share(self) -> float:
        return self.wait / self.wall if self.wall > 0 else 0.0


@dataclass
class Verdict:
    slow: list[int]  # the straggling ranks
    hosts: list[str]  # their nodes
    compute: float  # the slowest of them: compute per step, seconds
    median_compute: float  # the median rank's compute per step
    waited: float  # how much longer the median rank waits per step than the straggler, seconds
    share: float  # that, as a share of the step
    site: str | None  # where the others wait most
    per: str  # "step" or "collective"

    def key(self) -> tuple:
        """What a change of picture is judged by: who straggles."""
        return tuple(self.slow)


def figures(pace: dict, rank: int, host: str = "?") -> Figures | None:
    """A rank's published pace as Figures (None when malformed: it came over the job's store)."""
    try:
        sites = pace.get("sites") or {}
        f = Figures(
            rank,
            str(host),
            float(pace["wall"]),
            float(pace["wait"]),
            float(pace.get("steps", 0)),
            float(pace.get("calls", 0)),
            {str(k): float(v) for k, v in list(sites.items())[:8]},
            int(pace["peak"]) if isinstance(pace.get("peak"), int) else None,
            "GPU" if pace.get("memory") == "GPU" else "RSS",
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return f


def delta(new: Figures, old: Figures) -> Figures:
    """The window between two samples of one rank."""
    sites = {k: v - old.sites.get(k, 0.0) for k, v in new.sites.items()}
    return Figures(
        new.rank,
        new.host,
        new.wall - old.wall,
        new.wait - old.wait,
        new.steps - old.steps,
        new.calls - old.calls,
        {k: v for k, v in sites.items() if v > 0},
        new.peak,
        new.memory,
    )


def span(f: Figures) -> float:
    """A window's length in the job's unit: steps, or collectives for a job with no optimizer steps."""
    return f.steps if f.steps > 0 else f.calls


def long_enough(ranks: list[Figures], windows: int = 1) -> bool:
    """Whether every rank's figures span `windows` windows' worth (WINDOW_STEPS steps and WINDOW_SECONDS each):
    less is not judged."""
    return (
        bool(ranks)
        and min(map(span, ranks)) >= windows * WINDOW_STEPS
        and min(f.wall for f in ranks) >= windows * WINDOW_SECONDS
    )


def judge(ranks: list[Figures], threshold: float = DEFAULT_THRESHOLD) -> Verdict | None:
    """The ranks that keep the others waiting over this window, or None (a healthy window, or too little to
    tell). Fewer than half the ranks can straggle: when most are slow, the median is the slow pace."""
    ranks = [f for f in ranks if f.wall > 0]
    if len(ranks) < 2 or threshold <= 0:
        return None
    mid = median(f.share for f in ranks)
    slow = sorted((f for f in ranks if mid - f.share > threshold), key=lambda f: f.rank)
    if not slow or 2 * len(slow) > len(ranks):
        return None
    others = [f for f in ranks if f not in slow]
    steps = max((f.steps for f in ranks), default=0)
    per, unit = ("step", "steps") if steps > 0 else ("collective", "calls")
    count = median(getattr(f, unit) for f in ranks) or 1.0
    worst = min(slow, key=lambda f: f.share)
    sites: dict[str, float] = {}
    for f in others:
        for site, seconds in f.sites.items():
            sites[site] = sites.get(site, 0.0) + seconds
    return Verdict(
        slow=[f.rank for f in slow],
        hosts=sorted({f.host for f in slow}),
        compute=worst.compute / count,
        median_compute=median(f.compute for f in ranks) / count,
        waited=(mid - worst.share) * median(f.wall for f in ranks) / count,
        share=mid - worst.share,
        site=max(sites, key=lambda s: sites[s]) if sites else None,
        per=per,
    )


def _ranks(ranks: list[int]) -> str:
    return ("ranks " if len(ranks) > 1 else "rank ") + ",".join(map(str, ranks))


def seconds(s: float) -> str:
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def verdict_text(v: Verdict) -> str:
    """The log line."""
    slower = f"{v.compute / v.median_compute:.1f}x" if v.median_compute > 0 else "far more than"
    text = (
        f"clusterdoc: straggler: {_ranks(v.slow)} on {', '.join(v.hosts)} keep{'s' if len(v.slow) == 1 else ''} "
        f"the others waiting: {seconds(v.compute)} of compute per {v.per} against a median of "
        f"{seconds(v.median_compute)} ({slower} the median); the median rank waits {seconds(v.waited)} per {v.per} "
        f"({v.share:.0%}) for {'them' if len(v.slow) > 1 else 'it'}"
    )
    return text + (f", at {v.site}" if v.site else "")


CLEARED = "clusterdoc: straggler: no rank keeps the others waiting any more"


def memory_outliers(peaks: dict[int, int], tolerance: float = MEMORY_TOLERANCE) -> list[tuple[int, int, float]]:
    """(rank, peak, median) for every rank whose peak memory differs from the median by more than `tolerance`."""
    if len(peaks) < 2:
        return []
    mid = median(peaks.values())
    return [(r, p, mid) for r, p in sorted(peaks.items()) if mid > 0 and abs(p - mid) > tolerance * mid]


def size_text(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def summary_text(ranks: list[Figures], title: str, threshold: float = DEFAULT_THRESHOLD, judged: bool = True) -> str:
    """Per rank: compute, wait (its share), where it waited most, peak memory; then the verdict over the whole
    span (unless `judged` is False: figures that include the start-up, or too short a span) and the ranks whose
    peak memory stands out."""
    lines = [title]
    for f in sorted(ranks, key=lambda f: f.rank):
        line = f"  rank {f.rank} ({f.host}): compute {seconds(f.compute)}, waiting {seconds(f.wait)} ({f.share:.0%})"
        if f.sites:
            line += f" mostly at {max(f.sites, key=lambda s: f.sites[s])}"
        if f.peak is not None:
            line += f"; peak {f.memory} {size_text(f.peak)}"
        lines.append(line)
    v = judge(ranks, threshold) if judged else None
    if v is not None:
        lines.append("  " + verdict_text(v).removeprefix("clusterdoc: "))
    peaks = {f.rank: f.peak for f in ranks if f.peak is not None}
    kind = ranks[0].memory if ranks else "RSS"
    for rank, peak, mid in memory_outliers(peaks):
        more = "above" if peak > mid else "below"
        lines.append(
            f"  rank {rank}'s peak {kind} {size_text(peak)} is {abs(peak - mid) / mid:.0%} {more} the median "
            f"{size_text(mid)}" + (" (the fullest GPU limits the batch size)" if kind == "GPU" and peak > mid else "")
        )
    return "\n".join(lines)
