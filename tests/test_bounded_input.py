"""Bounded input everywhere (issue 22, item 5): the config file, `--facts` files, `--save-facts`, another user's
job, a full disk and many submits in the same second. Each case is an exit 2 with a message (or the job's own
failure, recorded), never a traceback, a hang, unbounded memory or invalid JSON.
"""
import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clusterdoc import config
from clusterdoc.errors import UsageError
from clusterdoc.launch.job import JobSpec, create_job_dir
from tests.test_shared_files import needs_root, other_user  # noqa: F401  (a fixture: a second Unix user)

ROOT = Path(__file__).resolve().parents[1]
ESC = "\x1b"


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    env.update(extra)
    return env


def cli(*args, cwd, timeout=60, limit_mib=None):
    def cap():
        if limit_mib:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))

    return subprocess.run([sys.executable, "-m", "clusterdoc", *map(str, args)], cwd=cwd, env=clean_env(),
                          capture_output=True, text=True, timeout=timeout, preexec_fn=cap)


def read_config(tmp_path, text: str):
    (tmp_path / "clusterdoc.yaml").write_text(text)
    return config.resolve({}, environ={}, cwd=tmp_path, home=tmp_path)[0]


# --- the config file -----------------------------------------------------------------------------------------


def laughs(levels=9) -> str:
    """The classic: each level refers nine times to the one before, all inside one mapping key (352 bytes)."""
    rows = ["&a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for i in range(1, levels):
        p, c = chr(ord("a") + i - 1), chr(ord("a") + i)
        rows.append(f"&{c} [" + ",".join([f"*{p}"] * 9) + "]")
    return "? [" + ", ".join(rows) + "]\n: 1\n"


def test_billion_laughs_in_a_key_is_refused_in_bounded_memory(tmp_path):
    text = laughs()
    assert len(text) < 400
    (tmp_path / "clusterdoc.yaml").write_text(text)
    (tmp_path / "s.py").write_text("print('hi')\n")
    # 1 GiB of address space: before the fix this took 7.6 GB (a MemoryError here, or the time limit)
    res = cli("submit", "--backend", "local", "s.py", cwd=tmp_path, timeout=120, limit_mib=1024)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "aliases (*name) are not allowed" in res.stderr and "clusterdoc.yaml:1" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("text,needle", [
    ("nodes: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 16 levels deep"),
    ("nodes: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "nested more than 16 levels deep"),
    ("nodes: " + "9" * 5000 + "\n", "key 'nodes': not a value clusterdoc can read"),
    ("time: 99999999999999\n", "key 'time' must be at most 2147483647"),
    ("port: 70000\n", "key 'port' must be at most 65535"),
    ("# padding\n" * 7000 + "nodes: 2\n", "config file larger than 64 KiB"),
])
def test_config_bounds_are_usage_errors(tmp_path, text, needle):
    with pytest.raises(UsageError) as err:
        read_config(tmp_path, text)
    assert needle in str(err.value)


def test_a_config_holding_a_nul_or_linked_to_proc_environ_is_a_usage_error(tmp_path, monkeypatch):
    with pytest.raises(UsageError, match="holds a NUL byte at offset 9: not a YAML text file"):
        read_config(tmp_path, "nodes: 2\n\0\n")
    with pytest.raises(UsageError, match="not valid YAML: unacceptable character #x0001"):
        read_config(tmp_path, "nodes: 2\n\x01\n")
    (tmp_path / "clusterdoc.yaml").unlink()
    (tmp_path / "clusterdoc.yaml").symlink_to("/proc/self/environ")
    monkeypatch.setenv("CDT_SECRET_TOKEN", "hunter2")
    with pytest.raises(UsageError) as err:
        config.resolve({}, environ={}, cwd=tmp_path, home=tmp_path)
    assert "holds a NUL byte" in str(err.value) and "hunter2" not in str(err.value) + str(err.value.hint)


def test_escapes_in_config_keys_and_values_are_escaped_in_messages(tmp_path):
    with pytest.raises(UsageError) as err:
        read_config(tmp_path, '"\\e]0;pwned\\a\\e[2J": 1\n')
    assert ESC not in str(err.value) and "\\x1b]0;pwned\\x07" in str(err.value)
    with pytest.raises(UsageError) as err:
        read_config(tmp_path, 'backend: "\\e[2Jslurm"\n')
    assert ESC not in str(err.value) and "\\x1b[2Jslurm" in str(err.value)


# --- --facts and --save-facts ----------------------------------------------------------------------------------


def facts_dir(tmp_path, text: str, name="node1.json") -> Path:
    d = tmp_path / "facts"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return d


HEALTHY = (ROOT / "tests/facts/healthy.json").read_text()


@pytest.mark.parametrize("text,needle", [
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    (HEALTHY.replace('"schema": ', '"x_nan": NaN, "schema": ', 1), "NaN is not a JSON number"),
    (HEALTHY.replace('"schema": ', '"x_inf": -Infinity, "schema": ', 1), "-Infinity is not a JSON number"),
    (" " * (5 << 20) + "{}", "larger than 4 MiB"),
])
def test_bad_facts_files_exit_2_naming_the_file(tmp_path, text, needle):
    d = facts_dir(tmp_path, text)
    res = cli("check", "--facts", d, "--json", cwd=tmp_path)
    assert res.returncode == 2, res.stdout[-500:] + res.stderr[-2000:]
    assert needle in res.stderr and "node1.json" in res.stderr, res.stderr[-2000:]
    assert "Traceback" not in res.stderr


def test_a_facts_file_name_with_escapes_is_shown_escaped(tmp_path):
    d = facts_dir(tmp_path, HEALTHY, name=f"{ESC}]0;pwned\a{ESC}[2J.json")
    res = cli("check", "--facts", d, cwd=tmp_path)
    assert res.returncode == 2 and "is not a host name" in res.stderr, res.stderr
    assert ESC not in res.stderr and "\\x1b]0;pwned" in res.stderr


def test_report_json_is_valid_json_whatever_a_float_became():
    from clusterdoc.untrusted import clean_facts, json_text

    assert json.loads(json_text({"a": [float("nan"), 1.5, {"b": float("inf")}]})) == {"a": [None, 1.5, {"b": None}]}
    facts = clean_facts({"elapsed": float("nan"), "clock": {"start": float("inf")}})
    assert facts["elapsed"] is None and facts["clock"]["start"] is None
    assert {m["field"] for m in facts["malformed"]} == {"elapsed", "clock.start"}


def test_save_facts_where_nothing_can_be_written_exits_2(tmp_path):
    d = facts_dir(tmp_path, HEALTHY)
    (tmp_path / "a-file").write_text("")
    for target in (tmp_path / "a-file" / "sub", "/proc/clusterdoc-facts"):
        res = cli("check", "--facts", d, "--save-facts", target, cwd=tmp_path)
        assert res.returncode == 2, res.stdout[-500:] + res.stderr[-2000:]
        assert "--save-facts: cannot write" in res.stderr and "Traceback" not in res.stderr, res.stderr


# --- another user's job ----------------------------------------------------------------------------------------


def run_as(uid: int, gid: int, argv: list[str], cwd: Path) -> tuple[int, str]:
    """cli.main(argv) in a forked child that became `uid` (the second user cannot start this venv's Python:
    it lives under /root). Returns (exit code, what it wrote to stderr and stdout)."""
    # What the commands import lazily, imported here as root: the child cannot read /root's Python (0700 here)
    import email.parser  # noqa: F401  (importlib.metadata's)
    import getpass  # noqa: F401

    from clusterdoc import cli as cli_mod
    from clusterdoc.checks import registry  # noqa: F401  (and pkgutil)
    from clusterdoc.launch import inspect, submit  # noqa: F401  (imported before the fork, as root)

    out = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 99
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os.chdir(cwd)
            sys.stdout = sys.stderr = open(out.fileno(), "w", closefd=False)
            code = cli_mod.main(argv)
        except BaseException:  # noqa: BLE001 - what the test looks for: a traceback
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    out.seek(0)
    return os.waitstatus_to_exitcode(status), out.read().decode()


@needs_root
def test_commands_on_another_users_job_exit_2_without_traceback(other_user):  # noqa: F811  (the fixture)
    _, uid, gid = other_user
    base = Path(tempfile.mkdtemp(prefix="cd-other-"))
    try:
        base.chmod(0o755)
        spec = JobSpec(script="/nonexistent/t.py", script_args=[], backend="local", nodes=1, tasks_per_node=1)
        private_job = create_job_dir(base / "jobs", spec)  # 0700: nothing in it is open to the other user
        shown_job = create_job_dir(base / "shown", spec)  # opened read-only to others (chmod a+rX)
        trace = shown_job.path / "trace"
        trace.mkdir()
        (trace / "rank0.jsonl").write_text(json.dumps({"seq": 1, "op": "all_reduce", "start": 1.0, "end": 2.0}) + "\n")
        subprocess.run(["chmod", "-R", "a+rX", str(base / "shown")], check=True)
        for argv in (["status", str(private_job.path)], ["logs", str(private_job.path)],
                     ["trace", str(shown_job.path)], ["cancel", str(shown_job.path)]):
            code, text = run_as(uid, gid, argv, base)
            assert code == 2, (argv, text)
            assert "Traceback" not in text and "error:" in text, (argv, text)
    finally:
        shutil.rmtree(base)


# --- a full disk -----------------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs mounted for the test."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


FILLER = """import sys
print("started", flush=True)
for i in range(1_000_000):  # until the job folder's file system is full (print raises ENOSPC)
    print("x" * 200)
"""


def leftovers(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.name.endswith(".tmp") or (p.is_file() and p.stat().st_size == 0
                                                                              and p.suffix in (".json", ".exit"))]


@pytest.mark.slow
@needs_root
def test_a_job_that_fills_its_disk_ends_on_record(tmp_path, small_disk):
    (tmp_path / "fill.py").write_text(FILLER)
    res = cli("submit", "--backend", "local", "--no-preflight", "--hang-timeout", "0", "--tasks-per-node", "2",
              "--folder", small_disk / "jobs", "fill.py", cwd=tmp_path, timeout=300)
    assert res.returncode == 1, res.stderr[-3000:]
    assert 'File "' + str(ROOT / "clusterdoc") not in res.stderr, res.stderr[-3000:]  # no clusterdoc traceback
    assert "the job folder's file system is full" in res.stderr, res.stderr[-3000:]
    (job,) = (small_disk / "jobs").iterdir()
    record = json.loads((job / "job.json").read_text())
    assert record["state"] == "FAILED" and "file system is full" in record["outcome"]["message"]
    for rank in (0, 1):
        assert json.loads((job / f"rank{rank}.exit").read_text())["code"] == 1
    assert leftovers(small_disk) == []


@needs_root
def test_submit_on_a_full_disk_is_a_clear_error_and_leaves_nothing(tmp_path, small_disk):
    (tmp_path / "s.py").write_text("print('hi')\n")
    (small_disk / "jobs").mkdir()
    with open(small_disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    res = cli("submit", "--backend", "local", "--no-preflight", "--folder", small_disk / "jobs", "s.py",
              cwd=tmp_path)
    assert res.returncode == 2, res.stderr[-3000:]
    assert "No space left on device" in res.stderr and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert list((small_disk / "jobs").iterdir()) == []


# --- job ids ---------------------------------------------------------------------------------------------------


def _allocate(root: str, n: int, out) -> None:
    spec = JobSpec(script="/t.py", script_args=[], backend="local")
    ids, errors = [], []
    for _ in range(n):
        try:
            ids.append(create_job_dir(Path(root), spec).id)
        except Exception as exc:  # noqa: BLE001 - what the test counts
            errors.append(str(exc))
    out.put((ids, errors))


def test_job_ids_are_unique_under_concurrent_submits(tmp_path):
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_allocate, args=(str(tmp_path / "jobs"), 50, out)) for _ in range(20)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    ids = [i for got, _ in results for i in got]
    errors = [e for _, errs in results for e in errs]
    assert errors == [] and len(ids) == 1000 == len(set(ids)), errors[:3]
    assert len(list((tmp_path / "jobs").iterdir())) == 1000
