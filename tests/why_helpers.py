"""What the why tests share: a pasted log's verdict, as `clusterdoc why --log` gives it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from clusterdoc.why import foreign, verdict

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """scripts/NAME.py as a module (the catalogue scripts, which the tests regenerate tables with)."""
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
