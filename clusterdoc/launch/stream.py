"""Follow a job's rank files and print new lines tagged with their rank.

Each pass reads ranks in order, so lines written in rank order (the shim's in_order logging, which
waits for rank r before rank r+1 writes) come out in rank order. Partial lines wait for their newline.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from clusterdoc.launch.job import MAX_WORLD, JobDir

CHUNK = 8 * 1024 * 1024  # read per file per poll at most: a rank printing GBs cannot fill our memory


class LogStreamer:
    def __init__(
        self,
        jd: JobDir,
        world_size: int,
        out: TextIO | None = None,
        err: TextIO | None = None,
        extra: dict[str, Path] | None = None,
    ):
        self.files: list[tuple[str, Path, TextIO]] = []
        self.jd, self.out, self.err, self.ranks = jd, out or sys.stdout, err or sys.stderr, 0
        self.offsets: dict[Path, int] = {}
        self.partial: dict[Path, bytes] = {}
        for _ in range(world_size):
            self._add_rank()
        for tag, path in (extra or {}).items():
            self._add(f"[{tag}] ", path, self.err)

    def _add(self, tag: str, path: Path, stream: TextIO) -> None:
        self.files.append((tag, path, stream))
        self.offsets[path], self.partial[path] = 0, b""

    def _add_rank(self) -> None:
        rank = self.ranks
        self._add(f"[rank {rank}] ", self.jd.out(rank), self.out)
        self._add(f"[rank {rank}] ", self.jd.err(rank), self.err)
        self.ranks += 1

    def _grow(self) -> None:
        """Ranks beyond the expected world (a batch script's torchrun starts more workers than srun tasks)."""
        while self.ranks < MAX_WORLD and os.path.lexists(self.jd.out(self.ranks)):
            self._add_rank()

    def reset(self) -> None:
        """A new attempt starts with fresh files."""
        self.offsets = dict.fromkeys(self.offsets, 0)
        self.partial = dict.fromkeys(self.partial, b"")

    def pump(self, final: bool = False) -> None:
        self._grow()
        for tag, path, stream in self.files:
            try:
                # never a symlink: a rank file swapped for one must not make submit print another file
                with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as f:
                    f.seek(self.offsets[path])
                    data = f.read(CHUNK)
            except OSError:
                continue
            if not data and not (final and self.partial[path]):
                continue
            self.offsets[path] += len(data)
            data = self.partial[path] + data
            lines = data.split(b"\n")
            rest = lines.pop()
            if final and rest:
                lines.append(rest)
                rest = b""
            self.partial[path] = rest
            for line in lines:
                stream.write(tag + line.decode("utf-8", "replace") + "\n")
            stream.flush()
