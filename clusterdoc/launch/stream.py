"""Follow a job's rank files and print new lines tagged with their rank.

Each pass reads ranks in order, so lines written in rank order (the shim's in_order logging, which
waits for rank r before rank r+1 writes) come out in rank order. Partial lines wait for their newline.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from clusterdoc.launch.job import JobDir

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
        out, err = out or sys.stdout, err or sys.stderr
        for rank in range(world_size):
            self.files.append((f"[rank {rank}] ", jd.out(rank), out))
            self.files.append((f"[rank {rank}] ", jd.err(rank), err))
        for tag, path in (extra or {}).items():
            self.files.append((f"[{tag}] ", path, err))
        self.offsets = {path: 0 for _, path, _ in self.files}
        self.partial = {path: b"" for _, path, _ in self.files}

    def reset(self) -> None:
        """A new attempt starts with fresh files."""
        self.offsets = dict.fromkeys(self.offsets, 0)
        self.partial = dict.fromkeys(self.partial, b"")

    def pump(self, final: bool = False) -> None:
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
