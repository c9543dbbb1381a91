"""What the catalogue scripts share (scripts/catalogue_*.py: NCCL's, torch's, the MPI launchers', the HPC runtimes',
the applications'): the repository root, the raw lists' reading, the learned signatures a line already matches, and
the rendering of a generated table (string literals cut to a width, the CLASSES block, the module's head and tail).

A catalogue script is run as `python scripts/catalogue_X.py` (its folder is then first on sys.path) or loaded by
the tests (tests/why_helpers.load_script puts this folder on sys.path): either way `import catalogue_common` finds
this file. Behaviour-neutral: each table it helps render is byte-identical to what its script made before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "tests" / "fixtures" / "why" / "catalogue"  # the raw lists
SIGTABLE = ROOT / "clusterdoc" / "why" / "sigtable"  # the generated tables


def read_tsv(path: Path, skip: int = 0) -> list[list[str]]:
    """The raw list's rows, each split at its tabs: comment lines (#) and blank lines left out, after `skip` head
    lines."""
    lines = path.read_text(encoding="utf-8").splitlines()[skip:]
    return [ln.split("\t") for ln in lines if ln.strip() and not ln.startswith("#")]


def learned_matcher() -> Callable[[str], object]:
    """known(line): the learned signature (every table of why/signatures.py but the catalogues' `cat-` rows) the
    line already matches, or None."""
    sys.path.insert(0, str(ROOT))
    from clusterdoc.why import signatures

    learned = [s for s in signatures.SIGNATURES if not s.name.startswith("cat-")]

    def known(line: str):
        low = line.lower()
        return next((s for s in learned if s.matches(line, low)), None)

    return known


def picked_keys() -> tuple[str, ...]:
    """The pre-check's picked keys (why/signatures._KEYS_PICKED): a row's first needle holds one, so no line pays a
    new check."""
    sys.path.insert(0, str(ROOT))
    from clusterdoc.why.signatures import _KEYS_PICKED

    return _KEYS_PICKED


def lit(s: str, indent: str, width: int = 100) -> str:
    """A string literal split into pieces of at most `width` characters (implicit concatenation), one a line."""
    chunks = [s[i : i + width] for i in range(0, len(s), width)] or [""]
    return ("\n" + indent).join(repr(c) for c in chunks)


def module_head(doc: Iterable[str]) -> list[str]:
    """A generated table's first lines: its docstring's lines (the opening quotes in the first), the closing quotes,
    the imports."""
    imports = ["from __future__ import annotations", "", "from clusterdoc.why.signature import S, Signature", ""]
    return [*doc, '"""', "", *imports]


def classes_block(classes: dict[str, tuple[str, bool, str, str]], used: Iterable[str]) -> list[str]:
    """The CLASSES dict of a generated table (the classes its rows use, sorted), `# fmt: off` before it."""
    out = ["# class -> (category, weak, meaning, next step)", "# fmt: off",
           "CLASSES: dict[str, tuple[str, bool, str, str]] = {"]  # fmt: skip
    for cls in sorted(set(used)):
        cat, weak, meaning, step = classes[cls]
        out.append(f"    {cls!r}: ({cat!r}, {weak!r},")
        out.append("        " + lit(meaning, "        ") + ",")
        out.append("        " + lit(step, "        ") + "),")
    out.append("}")
    return out


def rows_block(rows: Iterable[dict]) -> list[str]:
    """ROWS of a table whose rows are (name, class, needles, the line it prints, its source), up to its last row."""
    out = ["# name, class, needles, the line it prints, its source",
           "ROWS: list[tuple[str, str, tuple[str, ...], str, str]] = ["]  # fmt: skip
    for r in rows:
        out.append(f"    ({r['name']!r}, {r['cls']!r},")
        out.append(f"     {r['needles']!r},")
        out.append("     " + lit(r["learned"], "     ") + ",")
        out.append("     " + lit(r["source"], "     ") + "),")
    return out


def signatures_tail(call: str, loop: str) -> list[str]:
    """The end of ROWS (`# fmt: on` after it) and SIGNATURES, one S(...) per row with its class's fields."""
    return ["]", "# fmt: on", "", "SIGNATURES: list[Signature] = [", f"    {call}", f"    {loop}",
            "    for cat, weak, meaning, step in (CLASSES[cls],)", "]"]  # fmt: skip
