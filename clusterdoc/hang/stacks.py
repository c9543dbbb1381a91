"""Per-rank stack files: <folder>/stacks/rank<R>.txt, written from the ranks' answers (no shared FS needed)."""

from __future__ import annotations

from pathlib import Path

from clusterdoc import private

MAX_STACKS = 4 << 20  # characters of one rank's stacks saved and printed


def write(folder: Path, dumps: dict[int, dict], world: int) -> str:
    """Write each answering rank's stacks; return the hint the report prints (`.../rank{0..3}.txt`)."""
    d = private.mkdir(Path(folder) / "stacks", parents=True)
    for rank, dump in dumps.items():
        private.write(d / f"rank{rank}.txt", text(dump))
    return f"{d}/rank{{0..{world - 1}}}.txt" if world > 1 else f"{d}/rank0.txt"


def text(dump: dict) -> str:
    """A rank's stacks as saved and printed. The dump came over the job's store: a field of another type (a list
    where the stacks' text belongs) is said, not a TypeError; the text is cut at MAX_STACKS characters."""
    head = f"rank {dump.get('rank')} on {dump.get('host')} (pid {dump.get('pid')})\n"
    stacks = dump.get("stacks")
    if stacks is None or stacks == "":
        return head + "(no stacks)\n"
    if not isinstance(stacks, str):
        return head + f"(its stacks came as a {type(stacks).__name__}, not text: not shown)\n"
    return head + stacks[:MAX_STACKS]
