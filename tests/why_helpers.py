"""What the why tests share: a pasted log's verdict, as `clusterdoc why --log` gives it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from clusterdoc.why import foreign, signatures, verdict
from clusterdoc.why.signature import Signature

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """scripts/NAME.py as a module (the catalogue scripts, which the tests regenerate tables with); scripts/ goes on
    sys.path, as running one puts it, for their shared module (scripts/catalogue_common.py)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(f"{name}_script", SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses in the script look their module up
    spec.loader.exec_module(mod)
    return mod


def judge_log(text: str) -> verdict.Cause:
    """The cause `why` names for `text` (a foreign job's output, Slurm job id 1)."""
    cause = verdict.judge(foreign.evidence_from_output(text, "1")).cause
    assert cause is not None
    return cause


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "why"


def fixture_log(path: str) -> str:
    """A real log of tests/fixtures/why (PATH relative to it: "heldout-fresh22d/x.log"), as `why --log` reads it."""
    return (FIXTURES / path).read_text(encoding="utf-8", errors="replace")


# --- what the catalogue tests share (tests/test_why_catalogue_*.py: the tables scripts/catalogue_*.py make) ---


def assert_generated(text: str, table: Path, how: str) -> None:
    """The committed table is what its script makes now (`how`: the command that regenerates it)."""
    assert text == table.read_text(encoding="utf-8"), f"run {how}"


def learned(line: str) -> Signature | None:
    """The learned signature (every table but the catalogues' `cat-` rows) a line matches: what main's rules name."""
    low = line.lower()
    return next((s for s in signatures.SIGNATURES if not s.name.startswith("cat-") and s.matches(line, low)), None)


def keys_without(excluded) -> tuple[str, ...]:
    """The pre-check's keys (signatures._KEYS) as the signatures but `excluded` (a catalogue's) would make them: equal
    to _KEYS when the catalogue adds no key of its own (no line pays one more check)."""
    out = {id(s) for s in excluded}
    first = {s.needles[0].lower() for s in signatures.SIGNATURES if id(s) not in out}
    picked = signatures._KEYS_PICKED
    return picked + tuple(sorted(first - {n for n in first if any(k in n for k in picked)}))
