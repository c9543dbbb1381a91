"""The straggler watch: every rank's pace rides in its heartbeat; rank 0's watchdog judges windows of them.

Each rank's heartbeat on the job's store (hang/channel.py, sealed) carries `pace`: its cumulative figures from
track.Tracker.pace() plus its peak memory. Rank 0's watchdog reads every heartbeat each PERIOD seconds (no
collective on the job's group), closes a window once it spans WINDOW_STEPS steps and WINDOW_SECONDS, and judges
it (straggler.judge; the first window, the job's start, is not). A picture is logged on rank 0's stderr when two
windows in a row agree on it and it is not the one last logged: a straggler once, then again only when who
straggles changes (or it clears). At exit rank 0 prints the per-rank summary (straggler.summary_text) from the
last heartbeats, judged like the windows: over the span from the end of each rank's start-up (the tracker marks
it) to its last collective, and only when that span is two windows' worth (settled). A rank's figures end at its
last completed collective, so what rank 0 does for the shim after it (waiting for the others to let go of its
store, reading their last heartbeats, printing this) is nobody's compute.
"""

from __future__ import annotations

import resource
import sys
import time

from . import straggler, track

PERIOD = 2.0  # seconds between rank 0's reads of the heartbeats
WINDOW_STEPS = straggler.WINDOW_STEPS  # a window spans at least this many steps (collectives, with no optimizer)
WINDOW_SECONDS = straggler.WINDOW_SECONDS  # ... and at least this long


def own_pace() -> dict:
    """This rank's figures for its heartbeat: the tracker's, with its peak memory (GPU where CUDA is in use)."""
    pace = track.TRACKER.pace()
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            pace["peak"], pace["memory"] = int(torch.cuda.max_memory_allocated()), "GPU"
            return pace
    except Exception:  # no CUDA figure: the process's own
        pass
    pace["peak"], pace["memory"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "RSS"  # KiB on Linux
    return pace


def from_states(states: dict[int, dict], since_start: bool = False) -> list[straggler.Figures]:
    """Figures from the ranks' heartbeats or dumps (watch.rank_state): what the store held, checked. With
    `since_start`, each rank's figures since its start-up ended (a rank not past it yet is left out)."""
    out = []
    for rank, state in sorted(states.items()):
        pace = state.get("pace") if isinstance(state, dict) else None
        f = straggler.figures(pace, rank, state.get("host", "?")) if isinstance(pace, dict) else None
        if f is not None and since_start:
            start = pace.get("start")  # type: ignore[union-attr]
            s = straggler.figures(start, rank, f.host) if isinstance(start, dict) else None
            f = straggler.delta(f, s) if s is not None and s.wall <= f.wall else None
        if f is not None:
            out.append(f)
    return out


def settled(states: dict[int, dict]) -> tuple[list[straggler.Figures], bool]:
    """The figures a whole run is judged by, and whether to judge them: every rank's since its start-up ended,
    when every rank is past it and the span is two windows' worth (the watch names a straggler only once two
    windows in a row agree: no less evidence for the summary); otherwise every rank's since tracking began,
    start-up included, to show but not to judge (a short job, or one still starting)."""
    every = from_states(states)
    since = from_states(states, since_start=True)
    if len(since) == len(every) and straggler.long_enough(since, windows=2):
        return since, True
    return every, False


def title(ranks: list[straggler.Figures], judged: bool) -> str:
    """What a summary's figures cover: the span judged, or all of it, not judged."""
    if not judged:
        return "since tracking began, start-up included, too short to judge"
    unit = "steps" if max(f.steps for f in ranks) > 0 else "collectives"
    return f"over the last {min(map(straggler.span, ranks)):.0f} {unit}, start-up left out"


class Watch:
    """Rank 0's straggler watch (called from its watchdog's tick)."""

    def __init__(self, world: int, threshold: float, out=None):
        self.world, self.threshold, self.out = world, threshold, out
        self.next = 0.0
        self.base: dict[int, straggler.Figures] | None = None  # the current window's first sample
        self.windows = 0  # windows closed so far
        self.previous: tuple | None = None  # the last window's picture
        self.logged: tuple = ()  # the picture last logged (empty: healthy)

    def tick(self, heartbeats) -> str | None:
        """Every PERIOD: read the heartbeats (`heartbeats()` -> {rank: state}), judge a window when one is
        complete; the line logged, if any."""
        now = time.monotonic()
        if now < self.next:
            return None
        self.next = now + PERIOD
        sample = {f.rank: f for f in from_states(heartbeats())}
        if len(sample) < self.world:
            return None
        if self.base is None:
            self.base = sample
            return None
        window = [straggler.delta(sample[r], self.base[r]) for r in sample]
        if not straggler.long_enough(window):
            return None
        self.base, self.windows = sample, self.windows + 1
        if self.windows == 1:  # the start: ranks that began late kept the others waiting once; not judged
            return None
        return self.judged(straggler.judge(window, self.threshold))

    def judged(self, verdict: straggler.Verdict | None) -> str | None:
        picture = verdict.key() if verdict is not None else ()
        agreed, self.previous = picture == self.previous, picture
        if not agreed or picture == self.logged:
            return None
        self.logged = picture
        line = straggler.verdict_text(verdict) if verdict is not None else straggler.CLEARED
        print(line, file=self.out or sys.stderr, flush=True)
        return line


def summary(states: dict[int, dict], threshold: float, out=None) -> None:
    """Rank 0 at exit: the per-rank summary from the ranks' last heartbeats, judged past the start-up (settled)."""
    ranks, judged = settled(states)
    if len(ranks) > 1:
        text = straggler.summary_text(ranks, f"clusterdoc: per-rank pace ({title(ranks, judged)}):", threshold, judged)
        print(text, file=out or sys.stderr, flush=True)
