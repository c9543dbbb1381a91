"""docs/development.md's layout table names every module and package of clusterdoc (issue 37.5): a top-level
module or package by its path in the first column (`clusterdoc/x.py`, `clusterdoc/x/`, or `x.py` beside one
there), each module of a package by its name in that package's row (`name` or `name.py`, in backticks)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "clusterdoc"


def layout_rows(text: str) -> dict[str, str]:
    """{path named in the first column: the row's text}, from the table under '## Layout'."""
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) < 3 or not cells[1].strip().startswith("`"):
            continue
        names = re.findall(r"`([^`]+)`", cells[1])
        base = ""
        for name in names:  # `clusterdoc/__init__.py`, `api.py`: a bare name is beside the first one's folder
            if "/" in name:
                base = name.rsplit("/", 1)[0] if not name.endswith("/") else ""
                rows[name] = line
            elif base:
                rows[f"{base}/{name}"] = line
    return rows


def missing(rows: dict[str, str], package: Path = PACKAGE) -> list[str]:
    out = []
    for p in sorted(package.iterdir()):
        rel = f"clusterdoc/{p.name}"
        if p.is_dir() and (p / "__init__.py").exists():
            row = rows.get(rel + "/")
            if row is None:
                out.append(rel + "/")
                continue
            named = set(re.findall(r"`([\w]+)(?:\.py)?`", row)) | set(re.findall(r"`([\w]+)\.py", row))
            out += [f"{rel}/{m.name}" for m in sorted(p.glob("*.py"))
                    if m.stem not in ("__init__", "__main__") and m.stem not in named]
        elif p.suffix == ".py" and rel not in rows:
            out.append(rel)
    return out


def test_the_layout_table_names_every_module_and_package():
    rows = layout_rows((ROOT / "docs" / "development.md").read_text())
    assert missing(rows) == []


def test_the_layout_check_sees_a_module_left_out(tmp_path):
    pkg = tmp_path / "clusterdoc"
    (pkg / "why").mkdir(parents=True)
    for f in ("__init__.py", "api.py", "why/__init__.py", "why/main.py", "why/logs.py", "gone.py"):
        (pkg / f).write_text("")
    text = ("## Layout\n\n| path | job |\n|---|---|\n| `clusterdoc/__init__.py`, `api.py` | the API |\n"
            "| `clusterdoc/why/` | `main.py` (the command) |\n")
    assert missing(layout_rows(text), pkg) == ["clusterdoc/gone.py", "clusterdoc/why/logs.py"]
