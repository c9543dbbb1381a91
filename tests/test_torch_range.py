"""The supported torch range as the repository states it: pyproject.toml bounds torch from below only (installing
clusterdoc must never downgrade a user's torch), `make test-torch-range` tests that bound and the newest release,
the CUDA build runs in the newest end's venv, and the README says the same."""
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_torch_is_bounded_from_below_only_and_both_ends_are_tested_and_stated():
    tomllib = pytest.importorskip("tomllib")
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (torch,) = [d for d in deps if re.match(r"torch\b", d)]
    assert re.fullmatch(r"torch>=([\d.]+)", torch.replace(" ", "")), f"{torch}: a lower bound only, no cap or pin"
    oldest = torch.split(">=")[1].strip()
    ends = re.search(r"^TORCH_RANGE\s*\?=\s*(.+)$", (REPO / "Makefile").read_text(), re.M).group(1).split()
    assert ends[0] == oldest and len(ends) == 2, ends
    newest = ends[1]
    cuda = re.search(r"^TORCH=(\S+)", (REPO / "scripts" / "cuda_venv.sh").read_text(), re.M)
    assert cuda and cuda.group(1) == newest  # the CUDA build reuses the newest end's venv: no venv of its own
    readme = " ".join((REPO / "README.md").read_text().split())
    assert f"Supported torch: {oldest} and newer, tested on {oldest} and {newest}" in readme
