"""signatures.match tries a line only against the signatures filed under the keys it holds, and logs.scan skips the
lookup for a block of lines that holds no key (session 21, for the 300 MB bound of issue 41): both must give what
trying every signature on every line gives."""

from __future__ import annotations

from pathlib import Path

from clusterdoc.why import logs, signatures
from clusterdoc.why.signature import LINE_CAP

FIXTURES = Path(__file__).parent / "fixtures" / "why"


def _every(line: str):
    line = line[:LINE_CAP]
    low = line.lower()
    return next((sig for needle, lower, sig in signatures._FIRST
                 if needle in (low if lower else line) and sig.matches(line, low)), None)  # fmt: skip


def _lines() -> list[str]:
    out = [s.learned for s in signatures.SIGNATURES]
    for p in sorted(FIXTURES.rglob("*.log")):
        out += p.read_text(errors="replace").splitlines()
    return out


def test_the_key_index_finds_what_trying_every_signature_finds():
    lines = _lines()
    assert len(lines) > 5000
    assert [signatures.match(x) for x in lines] == [_every(x) for x in lines]


def test_a_block_without_keys_skips_the_lookup_and_loses_no_hit():
    for p in sorted((FIXTURES / "real").glob("*.log"))[:120]:
        text = p.read_text(errors="replace")
        s = logs.Scanner()
        for line in text.splitlines():
            s.feed(line)  # line by line, every lookup made
        assert logs.scan_text(text).hits == s.facts.hits, p.name
