"""Per-rank stack files: <folder>/stacks/rank<R>.txt, written from the ranks' answers (no shared FS needed)."""

from __future__ import annotations

from pathlib import Path

from clusterdoc import private


def write(folder: Path, dumps: dict[int, dict], world: int) -> str:
    """Write each answering rank's stacks; return the hint the report prints (`.../rank{0..3}.txt`)."""
    d = private.mkdir(Path(folder) / "stacks", parents=True)
    for rank, dump in dumps.items():
        private.write(d / f"rank{rank}.txt", text(dump))
    return f"{d}/rank{{0..{world - 1}}}.txt" if world > 1 else f"{d}/rank0.txt"


def text(dump: dict) -> str:
    head = f"rank {dump.get('rank')} on {dump.get('host')} (pid {dump.get('pid')})\n"
    return head + (dump.get("stacks") or "(no stacks)\n")
