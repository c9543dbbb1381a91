"""One failure signature of `clusterdoc why`: what an engineer greps for in a job's output.

An entry holds `needles`, plain substrings that must all be in the line (linear, no backtracking), an optional
`node` pattern (one anchored group, bounded) to name the host it blames, the category, what it means and what
to do, and the real line it was learned from with its source. The tables are in why/sigtable/, one per
category; why/signatures.py looks a line up in them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_CAP = 4096  # the part of a line any parser looks at: the cost of a line is bounded whatever its length


@dataclass(frozen=True)
class Signature:
    name: str
    category: str
    needles: tuple[str, ...]
    meaning: str
    learned: str  # the real line it was learned from
    source: str  # where that line was posted
    next_step: str = ""
    node: re.Pattern | None = None  # group 1: the node the line blames
    weak: bool = False
    lower: bool = False  # needles are matched against the lowercased line
    unless: tuple[str, ...] = ()  # a line holding one of these is not it (a retry's INFO line, a hint)
    whole: bool = False  # the line is one of the needles and nothing else (a shell's bare "Killed")

    def matches(self, line: str, low: str) -> bool:
        text = low if self.lower else line
        if self.whole:  # alone on its line, or right after a progress bar's last redraw ("... 0/2 [00:00<?]Killed")
            bare = text.strip()
            return bare in self.needles or (bare.endswith("]" + self.needles[0]) and "|" in bare)
        return all(n in text for n in self.needles) and not any(u in text for u in self.unless)

    def node_of(self, line: str) -> str | None:
        if self.node is None:
            return None
        m = self.node.search(line)
        return m.group(1) if m else None


NODE = "([A-Za-z0-9][\\w.-]{0,62})"  # a host name, as a `node` pattern's group 1
S = Signature
