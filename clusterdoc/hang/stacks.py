"""Per-rank stack files: <folder>/stacks/rank<R>.txt, written from the ranks' answers (no shared FS needed)."""
from __future__ import annotations

from pathlib import Path


def write(folder: Path, dumps: dict[int, dict], world: int) -> str:
    """Write each answering rank's stacks; return the hint the report prints (`.../rank{0..3}.txt`)."""
    d = Path(folder) / "stacks"
    d.mkdir(parents=True, exist_ok=True)
    for rank, dump in dumps.items():
        (d / f"rank{rank}.txt").write_text(text(dump))
    return f"{d}/rank{{0..{world - 1}}}.txt" if world > 1 else f"{d}/rank0.txt"


def text(dump: dict) -> str:
    head = f"rank {dump.get('rank')} on {dump.get('host')} (pid {dump.get('pid')})\n"
    return head + (dump.get("stacks") or "(no stacks)\n")
