"""The check registry: every `CHECKS` tuple declared by a module of clusterdoc/checks/, in column order.

Adding a check is adding a module that declares `CHECKS = (Check(...),)` (clusterdoc/checks/spec.py): nothing
else names it. doctor/rules.judge walks `REGISTRY`; the lists below are all derived from it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from clusterdoc.checks.spec import Check


@cache
def registry() -> tuple[Check, ...]:
    """Every declared check, by `order`. A name declared twice is a bug, caught here."""
    found: list[Check] = []
    for mod in sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])):
        if mod in ("registry", "spec"):
            continue
        found.extend(getattr(importlib.import_module(f"clusterdoc.checks.{mod}"), "CHECKS", ()))
    names = [c.name for c in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RuntimeError(f"check(s) declared twice: {', '.join(twice)}")
    return tuple(sorted(found, key=lambda c: (c.order, c.name)))


def names() -> tuple[str, ...]:
    """The report's column order (ALL_CHECKS)."""
    return tuple(c.name for c in registry())


def by_name(name: str) -> Check:
    return next(c for c in registry() if c.name == name)


def default_off() -> tuple[str, ...]:
    return tuple(c.name for c in registry() if not c.default)


def not_local() -> tuple[str, ...]:
    return tuple(c.name for c in registry() if not c.local)


def ssh_only() -> tuple[str, ...]:
    return tuple(c.name for c in registry() if c.ssh_only)


def allocation() -> list[str]:
    return [c.name for c in registry() if c.allocation]


def probe_error_check() -> dict[str, tuple[str, str]]:
    """{probe name: (check, status)} (PROBE_ERROR_CHECK)."""
    return {probe: (c.name, status) for c in registry() for probe, status in c.probe_errors.items()}


def malformed_labels() -> dict[str, str]:
    return {fld: words for c in registry() for fld, words in c.malformed_labels.items()}


def help_text() -> str:
    """--checks' help: every check with its few words, marking the ones off by default."""
    return ", ".join(f"{c.name} ({c.summary}{'' if c.default else '; off by default'})" for c in registry())
