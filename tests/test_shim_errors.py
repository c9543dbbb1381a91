"""Every error the shim raises on a rank has one base a user can catch (issue 37), and keeps the built-in base
the peers' names promise (Accelerate and transformers raise these as Exception/RuntimeError/ValueError)."""

import ast
import importlib
from pathlib import Path

import pytest

from clusterdoc import shim

SHIM = Path(shim.__file__).parent


def exception_classes():
    for p in sorted(SHIM.glob("*.py")):
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, ast.ClassDef):
                cls = getattr(importlib.import_module(f"clusterdoc.shim.{p.stem}"), node.name)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    yield cls


@pytest.mark.parametrize("cls", list(exception_classes()), ids=lambda c: c.__name__)
def test_every_shim_exception_is_a_shim_error(cls):
    assert issubclass(cls, shim.ShimError), f"{cls.__module__}.{cls.__name__} does not derive from shim.ShimError"


def test_the_peers_bases_are_kept():
    assert issubclass(shim.BatchSizeSearchError, RuntimeError)
    assert issubclass(shim.RankEnvironmentError, RuntimeError)
    assert issubclass(shim.OverflowDetected, ValueError)
    assert issubclass(shim.AttemptAborted, RuntimeError) and issubclass(shim.RetryUnsafe, RuntimeError)
    assert len(list(exception_classes())) >= 6


def test_a_zero_batch_size_is_caught_as_a_shim_error_and_as_accelerate_s_runtime_error():
    @shim.find_executable_batch_size(starting_batch_size=0)
    def train(batch_size):
        return batch_size

    with pytest.raises(shim.ShimError, match="No executable batch size found, reached zero."):
        train()
