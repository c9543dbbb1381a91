"""Every exception clusterdoc defines derives from its package's one base, and every base from ClusterdocError
(issue 37): a user of `import clusterdoc` catches "any error of launch" or "any clusterdoc error" by one name, and
each error keeps the built-in base it had (no behaviour change for code that caught that)."""

import ast
import importlib
from pathlib import Path

import pytest

import clusterdoc
from clusterdoc.errors import ClusterdocError

PACKAGE = Path(clusterdoc.__file__).parent
BASES = {"launch": "LaunchError", "why": "WhyError", "hang": "HangError", "jobs": "JobsError", "shim": "ShimError"}


def defined_exceptions(package: Path = PACKAGE):
    """(module name, class) for every public exception class a module of clusterdoc defines at its top level (the
    probe is sent to nodes as stdlib-only text: it defines none)."""
    for p in sorted(package.rglob("*.py")):
        rel = p.relative_to(package.parent).with_suffix("")
        if rel.name == "__main__" or rel.parts[1:2] == ("probe",):
            continue
        names = [n.name for n in ast.parse(p.read_text()).body if isinstance(n, ast.ClassDef)]
        if not names:
            continue
        module = importlib.import_module(".".join(rel.parts))
        for name in names:
            cls = getattr(module, name)
            if isinstance(cls, type) and issubclass(cls, BaseException) and not name.startswith("_"):
                yield module.__name__, cls


def expected_base(module: str) -> type:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in BASES:
        return getattr(clusterdoc, BASES[parts[1]])
    return ClusterdocError


def wrong_bases(found) -> list[str]:
    return [
        f"{m}.{c.__name__} (not a {expected_base(m).__name__})" for m, c in found if not issubclass(c, expected_base(m))
    ]


FOUND = list(defined_exceptions())


def test_every_exception_derives_from_its_package_base():
    assert wrong_bases(FOUND) == []


def test_each_base_is_exported_and_under_the_root():
    for name in [*BASES.values(), "ClusterdocError", "UsageError"]:
        assert name in clusterdoc.__all__
        assert issubclass(getattr(clusterdoc, name), ClusterdocError)
    assert issubclass(clusterdoc.PreflightFailed, clusterdoc.LaunchError)
    # every package base the scan saw is one of BASES: a new package's errors get a base of their own
    assert {m.split(".")[1] for m, _ in FOUND if m.count(".") > 1} <= set(BASES)
    assert len(FOUND) >= 14


def test_the_built_in_bases_are_kept():
    from clusterdoc.hang.channel import NoSecret
    from clusterdoc.hang.seal import Rejected

    assert issubclass(clusterdoc.UsageError, ValueError)
    assert issubclass(NoSecret, RuntimeError) and issubclass(NoSecret, clusterdoc.HangError)
    assert issubclass(Rejected, ValueError) and issubclass(Rejected, clusterdoc.HangError)


def test_the_check_sees_an_exception_with_the_wrong_base():
    class Stray(Exception):
        pass

    class Fine(clusterdoc.LaunchError):
        pass

    found = [("clusterdoc.launch.stray", Stray), ("clusterdoc.launch.fine", Fine), ("clusterdoc.remote", Stray)]
    assert wrong_bases(found) == [
        "clusterdoc.launch.stray.Stray (not a LaunchError)",
        "clusterdoc.remote.Stray (not a ClusterdocError)",
    ]


def test_a_failed_preflight_is_caught_by_launch_s_base_and_the_root():
    from clusterdoc.launch.submit import PreflightFailed

    with pytest.raises(clusterdoc.LaunchError, match="report"):
        raise PreflightFailed("the doctor's report")
    with pytest.raises(ClusterdocError):
        raise PreflightFailed("the doctor's report")
    with pytest.raises(ClusterdocError):
        raise clusterdoc.UsageError("bad flag")
