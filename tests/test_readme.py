"""README's Python API example runs as written (issue 13), on this one machine."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def api_example() -> str:
    section = ROOT.joinpath("README.md").read_text().split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


@pytest.mark.slow
def test_readme_api_example_runs():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLUSTERDOC_")}
    p = subprocess.run([sys.executable, "-c", api_example()], cwd=ROOT, capture_output=True, text=True,
                       timeout=600, env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert re.match(r"[01] \d+\n", p.stdout)          # print(report.exit_code, len(report.findings))
    assert "job failed: rank 1 exited with code 3" in p.stdout
    assert "dry run: nothing is built" in p.stdout
