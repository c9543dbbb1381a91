"""README.md and docs/*.md stay true: every command in them parses, the ones this machine can run run as
written and print what the page shows, every file and link they name exists (issues 13 and 25)."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from clusterdoc import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MAKE_TARGETS = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence
    lang: str
    text: str

    def where(self, offset: int = 0) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line + 1 + offset}"


@dataclass
class Command:
    where: str
    argv: list[str]
    output: list[str]  # the lines a console block shows after the command


def blocks(page: Path) -> list[Block]:
    found, lines, i = [], page.read_text().splitlines(), 0
    while i < len(lines):
        m = re.match(r"\s*```(\w*)\s*$", lines[i])
        if m:
            start, i = i, i + 1
            while not lines[i].strip().startswith("```"):
                i += 1
            indent = len(lines[start]) - len(lines[start].lstrip())
            found.append(Block(page, start, m.group(1), "\n".join(x[indent:] for x in lines[start + 1 : i])))
        i += 1
    return found


def split_commands(line: str) -> list[list[str]]:
    """The simple commands of one shell line: split at && || | ;, redirections and comments dropped."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    out, cur, skip = [], [], False
    for tok in lex:
        if skip:
            skip = False
        elif tok in ("&&", "||", "|", ";", "&"):
            out.append(cur)
            cur = []
        elif tok in (">", ">>", "<", "2>"):
            skip = True
        else:
            cur.append(tok)
    return [c for c in out + [cur] if c]


def commands(page: Path) -> list[Command]:
    found = []
    for b in blocks(page):
        if b.lang not in ("sh", "console"):
            continue
        lines = b.text.splitlines()
        i = 0
        while i < len(lines):
            line, n = lines[i], i
            if b.lang == "console" and not line.startswith("$ "):
                i += 1
                continue
            line = line[2:] if b.lang == "console" else line
            while line.endswith("\\"):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            output = []
            if b.lang == "console":
                while i < len(lines) and not lines[i].startswith("$ "):
                    output.append(lines[i])
                    i += 1
            for argv in split_commands(line):
                found.append(Command(b.where(n), argv, output))
    return found


def clusterdoc_commands(page: Path) -> list[Command]:
    return [c for c in commands(page) if c.argv[0] == "clusterdoc"]


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def env_without_config() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the venv, activated
    return env


def run_clusterdoc(argv: list[str], timeout: float = 300, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clusterdoc", *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env_without_config(),
    )


def normalised(line: str) -> str:
    """What varies between two runs of one command: times, dates, job ids, elided paths."""
    line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+", "TIME", line)
    line = re.sub(r"local-\d{8}-\d{6}-[0-9a-f]{4,8}", "JOB", line)
    line = re.sub(r"\d+(\.\d+)?s\b", "Ns", line)
    line = re.sub(r"waited \d+ s", "waited N s", line)
    line = re.sub(r"loss \d\.\d+", "loss X", line)
    line = re.sub(r"\[rank (\d+)/(\d+) [^\]]+\]", r"[rank \1/\2 HOST]", line)  # the machine's host name
    line = re.sub(r"preflight on \S+ ", "preflight on HOST ", line)
    return line.rstrip()


def assert_shown_lines_printed(cmd: Command, printed: str, only=None) -> None:
    """Every line the page shows (but `...` and lines with an elided path) is among the lines printed."""
    real = {normalised(x) for x in printed.splitlines()}
    real_tails = [normalised(x) for x in printed.splitlines()]
    for shown in cmd.output:
        if shown.strip() in ("...", "") or (only and not only(shown)):
            continue
        if "..." in shown:  # a path shortened by the page: the rest of the line must be printed
            head, tail = (normalised(p) for p in shown.split("...", 1))
            assert any(x.startswith(head) and x.endswith(tail.split("/")[-1]) for x in real_tails), (
                f"{cmd.where}: the page shows {shown!r}, not printed:\n{printed[-3000:]}"
            )
        else:
            assert normalised(shown) in real, f"{cmd.where}: the page shows {shown!r}, not printed:\n{printed[-3000:]}"


# --- every page -------------------------------------------------------------------------------------


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_one_way_to_call_clusterdoc(page):
    """`clusterdoc` on PATH everywhere (README says once how); `python -m clusterdoc.run` is the ranks' entry."""
    text = page.read_text()
    for wrong in (r"\.venv/bin/python -m clusterdoc\b", r"python3? -m clusterdoc(?!\.)", r"\.venv/bin/clusterdoc"):
        assert not re.search(wrong, text), f"{page_id(page)}: {re.search(wrong, text).group(0)!r}: write `clusterdoc`"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_clusterdoc_command_parses(page):
    parser = cli.build_parser()
    for cmd in clusterdoc_commands(page):
        try:
            parser.parse_args(cmd.argv[1:])
        except SystemExit as e:
            assert e.code == 0, f"{cmd.where}: {shlex.join(cmd.argv)!r} does not parse (exit {e.code})"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_make_target_and_script_exists(page):
    for cmd in commands(page):
        if cmd.argv[0] == "make":
            targets = [a for a in cmd.argv[1:] if "=" not in a and not a.startswith("-")]
            assert set(targets) <= MAKE_TARGETS, f"{cmd.where}: no make target {set(targets) - MAKE_TARGETS}"
        if cmd.argv[0] in ("python", "bash") and cmd.argv[1:2] != ["-m"]:
            assert (ROOT / cmd.argv[1]).exists(), f"{cmd.where}: {cmd.argv[1]} does not exist"


# Files a page names: `jobs/x.py`, (tests/test_x.py), [text](../bench/) - repository paths that must exist.
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:clusterdoc|jobs|tests|bench|hostfiles|scripts|docs)/[\w./*{}-]*[\w*/])(?![\w./*{}<-])"
)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_named_file_exists(page):
    missing = []
    for path in REPO_PATH.findall(page.read_text()):
        if "{" in path:
            continue  # a pattern (stacks/rank{0..3}.txt)
        if not list(ROOT.glob(path.rstrip("/"))):
            missing.append(path)
    assert not missing, f"{page_id(page)} names files that do not exist: {sorted(set(missing))}"


def anchors(page: Path) -> set[str]:
    slugs = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", page.read_text(), flags=re.S), re.M):
        slugs.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return slugs


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_link_leads_somewhere(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"\w+://", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page_id(page)}: link to {target}: no such file"
        if anchor and dest.suffix == ".md":
            assert anchor in anchors(dest), f"{page_id(page)}: link to {target}: no such heading in {dest.name}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_python_block_is_python(page):
    for b in blocks(page):
        if b.lang == "python":
            ast.parse(b.text, filename=b.where())


def test_no_path_of_the_machine_it_was_written_on():
    """A path like the checkout's own (or the dev machine's /work/...) in a tracked file is a leftover."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    machine = re.compile(re.escape(str(ROOT)) + r"\b|/work/(main|wt|shared|ci)\b")
    found = []
    for name in files:
        path = ROOT / name
        if not path.is_file() or name == "tests/test_readme.py":
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        found += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1) if machine.search(line)]
    assert not found, f"paths of this machine in: {found}"


# --- commands this machine runs as written ----------------------------------------------------------------


# What runs here without root, SSH, MPI or Slurm; the rest of each page is parsed only (above), and the test
# cluster's commands run in test_readme_cluster_check.
def runs_here(cmd: Command) -> bool:
    args = cmd.argv[1:]
    if not args or any(a in ("hostfile", "hosts", "train.py", "JOB") or a.startswith(".cluster/") for a in args[1:]):
        return False
    return args[0] == "hosts" or args[:2] == ["check", "--local"] or "--dry-run" in args or args == ["--version"]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_quick_commands_run_as_written(page):
    for cmd in clusterdoc_commands(page):
        if runs_here(cmd) and cmd.argv[1] in ("hosts", "--version"):
            p = run_clusterdoc(cmd.argv, timeout=60)
            assert p.returncode == 0, f"{cmd.where}: exit {p.returncode}\n{p.stderr[-2000:]}"
            assert_shown_lines_printed(cmd, p.stdout + p.stderr)


@pytest.mark.slow
def test_readme_build_wheel_dry_run_as_shown():
    (cmd,) = [c for c in clusterdoc_commands(ROOT / "README.md") if "build-wheel" in c.argv]
    p = run_clusterdoc(cmd.argv, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert_shown_lines_printed(cmd, p.stdout, only=lambda x: x.startswith(("arch list", "dry run", "export DS_")))


@pytest.mark.slow
def test_readme_check_local_as_shown():
    (cmd,) = [c for c in clusterdoc_commands(ROOT / "README.md") if c.argv[1:] == ["check", "--local"]]
    p = run_clusterdoc(cmd.argv, timeout=300)
    assert p.returncode in (0, 1), p.stderr[-2000:]  # 1: this machine has a problem; the report says which
    assert_shown_lines_printed(cmd, p.stdout, only=lambda x: x.startswith(("nodes ", "TORCH_CUDA_ARCH_LIST")))
    assert re.search(r"^localhost\s+1\s", p.stdout, re.M), p.stdout


def readme_job(word: str) -> Command:
    (cmd,) = [c for c in clusterdoc_commands(ROOT / "README.md") if c.argv[1] == "submit" and word in c.argv[-3:]]
    return cmd


@pytest.mark.slow
def test_readme_job_as_shown(tmp_path):
    cmd = readme_job("--epochs")
    p = run_in(tmp_path, cmd)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert_shown_lines_printed(cmd, p.stdout + p.stderr, only=lambda x: not x.startswith(("localhost", "[rank 1]")))
    assert "Exception raised from" not in p.stderr, p.stderr[-3000:]  # torch's backtrace for a store gone


@pytest.mark.slow
def test_readme_hang_report_as_shown(tmp_path):
    cmd = readme_job("skip")
    p = run_in(tmp_path, cmd)
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert_shown_lines_printed(cmd, p.stdout + p.stderr)


def run_in(folder: Path, cmd: Command) -> subprocess.CompletedProcess:
    """A README job, its script paths from the repository, its job folder in `folder`."""
    argv = [str(ROOT / a) if a.startswith("jobs/") else a for a in cmd.argv]
    return run_clusterdoc(argv, timeout=600, cwd=folder)


def test_every_readme_command_is_run_somewhere():
    """A command added to README's tour is either run above, or needs the test cluster (run below)."""
    for cmd in clusterdoc_commands(ROOT / "README.md"):
        is_job = cmd.argv[1] == "submit" and ("--epochs" in cmd.argv[-3:] or "skip" in cmd.argv[-3:])
        assert runs_here(cmd) or is_job or ".cluster/ssh_config" in cmd.argv, f"{cmd.where}: not run by a test"


@pytest.mark.cluster
def test_readme_cluster_check_as_shown(cluster):
    (cmd,) = [c for c in clusterdoc_commands(ROOT / "README.md") if ".cluster/ssh_config" in c.argv]
    argv = [str(cluster.ssh_config) if a == ".cluster/ssh_config" else a for a in cmd.argv]
    p = run_clusterdoc(argv, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert_shown_lines_printed(cmd, p.stdout)


# --- Python examples ----------------------------------------------------------------------------------------


def python_blocks(page: Path) -> list[str]:
    return [b.text for b in blocks(page) if b.lang == "python"]


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env_without_config()
    )


@pytest.mark.slow
def test_readme_shim_example_runs():
    (code,) = python_blocks(ROOT / "README.md")
    p = run_python(code + "\nprint(env.world_size, train.__name__)\n")
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.endswith("1 train\n") and "loss 0.500" in p.stderr


@pytest.mark.slow
def test_api_example_runs():
    """docs/api.md's first example, on this one machine (issue 13)."""
    p = run_python(python_blocks(ROOT / "docs" / "api.md")[0])
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert re.match(r"[01] \d+\n", p.stdout)  # print(report.exit_code, len(report.findings))
    assert "job failed: rank 1 exited with code 3" in p.stdout
    assert "dry run: nothing is built" in p.stdout
