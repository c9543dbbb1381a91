"""Files in shared or user-writable places (issue 22, item 2).

A clusterdoc.yaml in the working directory is used only when it is the user's own (or root's) and nobody else
can write it; whatever clusterdoc writes into a job folder never goes through a symlink; reading a job folder
never blocks nor loads without bound; `cancel` neither passes job.json's values to Slurm as options nor signals a
process it did not start. The "other user" is a real Unix user, made and removed here.
"""
import json
import os
import resource
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterdoc import config, private
from clusterdoc.errors import UsageError
from clusterdoc.launch.job import JobDir, JobSpec, create_job_dir

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="makes a second Unix user (useradd)")


@pytest.fixture
def other_user():
    """(name, uid, gid) of a fresh Unix user, removed afterwards."""
    name = "cdt" + secrets.token_hex(3)
    subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, capture_output=True)
    try:
        import pwd

        pw = pwd.getpwnam(name)
        yield name, pw.pw_uid, pw.pw_gid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    env.update(extra)
    return env


def cli(*args, cwd, env=None, timeout=60, limit_mib=None):
    """`clusterdoc ARGS` in a child process (with an address-space cap: an unbounded read fails, not the host)."""
    def cap():
        if limit_mib:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))

    return subprocess.run([sys.executable, "-m", "clusterdoc", *map(str, args)], cwd=cwd, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout, preexec_fn=cap)


def start_time(pid: int) -> int:
    """/proc/PID/stat field 22 (read here too: the test must not trust the code it tests)."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat[stat.rindex(b")") + 2 :].split()[19])


def make_job(tmp_path, backend="local") -> JobDir:
    spec = JobSpec(script=str(tmp_path / "t.py"), script_args=[], backend=backend, nodes=1, tasks_per_node=2)
    return create_job_dir(tmp_path / "jobs", spec)


# --- the config file in the working directory --------------------------------------------------------------


EVIL = "#!/bin/sh\ntouch {marker}\nexec {python} \"$@\"\n"


@needs_root
def test_another_users_clusterdoc_yaml_is_refused_and_roots_submit_runs_nothing_of_it(tmp_path, other_user):
    name, uid, gid = other_user
    marker = tmp_path / "evil-ran"
    evil = tmp_path / "evil-python"
    evil.write_text(EVIL.format(marker=marker, python=sys.executable))
    evil.chmod(0o755)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)  # like /tmp or a group project folder: others may put files here
    cfg = shared / "clusterdoc.yaml"
    cfg.write_text(f"python: {evil}\nno-preflight: true\n")
    os.chown(cfg, uid, gid)
    (shared / "train.py").write_text("print('trained')\n")
    res = cli("submit", "--backend", "local", "--folder", tmp_path / "jobs", "train.py", cwd=shared)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"belongs to user {name}" in res.stderr and "clusterdoc.yaml" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert not marker.exists()
    # chosen with --config, the same file is the user's decision, and is read
    settings, origin = config.resolve({}, explicit_config=str(cfg), environ={}, cwd=tmp_path, home=tmp_path)
    assert settings["python"] == str(evil) and origin["python"] == str(cfg)


def test_a_clusterdoc_yaml_others_can_write_is_refused(tmp_path):
    (tmp_path / "clusterdoc.yaml").write_text("nodes: 2\n")
    (tmp_path / "clusterdoc.yaml").chmod(0o664)
    with pytest.raises(UsageError, match=r"others can write it \(mode -rw-rw-r--\)"):
        config.resolve({}, environ={}, cwd=tmp_path, home=tmp_path)
    (tmp_path / "clusterdoc.yaml").chmod(0o644)
    assert config.resolve({}, environ={}, cwd=tmp_path, home=tmp_path)[0]["nodes"] == 2


@needs_root
def test_a_swapped_user_config_is_checked_as_opened(tmp_path, other_user):
    """The check is on the file actually read: a symlink to another user's file is that user's file."""
    _, uid, gid = other_user
    theirs = tmp_path / "theirs.yaml"
    theirs.write_text("no-preflight: true\n")
    os.chown(theirs, uid, gid)
    (tmp_path / "clusterdoc.yaml").symlink_to(theirs)
    with pytest.raises(UsageError, match="belongs to user"):
        config.resolve({}, environ={}, cwd=tmp_path, home=tmp_path)


# --- writes into a job folder ------------------------------------------------------------------------------


def _trace_records(jd: JobDir):
    d = private.mkdir(jd.path / "trace")
    for rank in (0, 1):
        rec = {"seq": 1, "op": "all_reduce", "group": None, "start": 1.0 + rank, "end": 3.0, "site": None}
        (d / f"rank{rank}.jsonl").write_text(json.dumps(rec) + "\n")


def test_trace_does_not_write_through_a_symlink_in_the_job_folder(tmp_path):
    """An admin running `clusterdoc trace` on a user's job must not overwrite the file trace.json points to."""
    jd = make_job(tmp_path)
    _trace_records(jd)
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    (jd.path / "trace.json").symlink_to(victim)
    res = cli("trace", jd.path, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "precious\n"
    assert not (jd.path / "trace.json").is_symlink()
    assert json.loads((jd.path / "trace.json").read_text())["traceEvents"]


def test_writes_leave_no_temporary_and_never_truncate_a_planted_file(tmp_path):
    jd = make_job(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.link(victim, jd.path / "job.json.tmp")  # the old fixed temporary name, hard-linked to another file
    jd.update(state="RUNNING")
    assert victim.read_text() == "precious\n"
    assert jd.read()["state"] == "RUNNING"
    assert sorted(p.name for p in jd.path.iterdir()) == [".reserve", "job.json", "job.json.tmp"]


def test_a_symlinked_stacks_folder_is_not_written_into(tmp_path):
    from clusterdoc.hang import stacks

    jd = make_job(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (jd.path / "stacks").symlink_to(elsewhere)
    with pytest.raises(OSError, match="symbolic link"):
        stacks.write(jd.path, {0: {"rank": 0}}, 1)
    assert list(elsewhere.iterdir()) == []


# --- reads of a job folder ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command,name", [
    ("status", "job.json"),
    ("stacks", "watch.json"),
    ("trace", "trace/rank0.jsonl"),
])
def test_a_fifo_in_the_job_folder_is_refused_at_once(tmp_path, command, name):
    jd = make_job(tmp_path)
    if name.startswith("trace/"):
        _trace_records(jd)
    target = jd.path / name
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    res = cli(command, jd.path, cwd=tmp_path, timeout=30)  # before the fix: blocked for ever on the FIFO
    assert res.returncode == 2, res.stdout + res.stderr
    assert "not a regular file" in res.stderr or "no hang watch address" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("name", ["job.json", "watch.json", "trace/rank0.jsonl"])
def test_dev_zero_in_the_job_folder_is_refused_without_reading_it(tmp_path, name):
    jd = make_job(tmp_path)
    _trace_records(jd)
    (jd.path / name).unlink(missing_ok=True)
    (jd.path / name).symlink_to("/dev/zero")
    command = {"job.json": "status", "watch.json": "stacks", "trace/rank0.jsonl": "trace"}[name]
    res = cli(command, jd.path, cwd=tmp_path, timeout=60, limit_mib=1024)  # before: reads until out of memory
    assert "Traceback" not in res.stderr and "MemoryError" not in res.stderr, res.stderr[-2000:]
    if command == "trace":  # a rank file that is not a regular file is named, not followed
        assert res.returncode == 2 and "symbolic link" in res.stderr, res.stderr
    else:
        assert res.returncode == 2, res.stderr


def test_read_helpers_refuse_and_bound():
    with pytest.raises(OSError, match="not a regular file"):
        private.read("/dev/zero")
    with pytest.raises(OSError, match="larger than 1 KiB"):
        private.read(__file__, 1024, whole=True)


# --- cancel --------------------------------------------------------------------------------------------------


def _fake_slurm(tmp_path) -> tuple[Path, Path]:
    """scancel and squeue on PATH that log their arguments (the edge a Slurm cluster shows)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "slurm-calls"
    bin_dir.mkdir()
    for cmd in ("scancel", "squeue", "scontrol"):
        (bin_dir / cmd).write_text(f"#!/bin/sh\necho {cmd} \"$@\" >> {log}\necho RUNNING None\n")
        (bin_dir / cmd).chmod(0o755)
    return bin_dir, log


def test_cancel_never_passes_a_backend_id_as_an_option(tmp_path):
    jd = make_job(tmp_path, backend="slurm")
    jd.update(state="RUNNING", backend_id="--user=root")
    bin_dir, log = _fake_slurm(tmp_path)
    res = cli("cancel", jd.path, cwd=tmp_path, env=clean_env(PATH=f"{bin_dir}:{os.environ['PATH']}"))
    calls = log.read_text() if log.exists() else ""
    assert "--user=root" not in calls, calls
    assert res.returncode == 2 and "is not a Slurm job id" in res.stderr, res.stderr
    jd.update(backend_id="12345")
    res = cli("cancel", jd.path, cwd=tmp_path, env=clean_env(PATH=f"{bin_dir}:{os.environ['PATH']}"))
    assert res.returncode == 0, res.stderr
    assert "scancel -- 12345" in log.read_text()


def test_cancel_does_not_signal_a_reused_pid(tmp_path):
    """A stale job (its launcher died) whose supervisor and rank pids now belong to another clusterdoc job."""
    jd = make_job(tmp_path)
    # another job's supervisor: a process whose command line names clusterdoc and this job's folder
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "clusterdoc", str(jd.path)])
    try:
        started = start_time(other.pid)
        # what this job recorded: the same pid numbers, but processes that started at another time
        jd.update(state="RUNNING", supervisor_pid=other.pid, supervisor_start=started - 1,
                  pids=[other.pid], pid_starts=[started - 1])
        res = cli("cancel", jd.path, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        time.sleep(0.3)
        assert other.poll() is None, "cancel signalled a process it did not start"
        assert jd.read()["state"] == "CANCELLED"
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


def test_cancel_still_stops_the_recorded_process(tmp_path):
    jd = make_job(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        jd.update(state="RUNNING", pids=[proc.pid], pid_starts=[start_time(proc.pid)])
        res = cli("cancel", jd.path, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert proc.wait(10) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_remove_temps_takes_only_write_s_own_temps_and_follows_no_link(tmp_path):
    from clusterdoc import private

    folder = tmp_path / "stacks"
    folder.mkdir()
    (folder / ".rank1.txt.d8ddd4ca.tmp").write_text("half a stack")  # a rank killed between create and rename
    keep = [".reserve", "rank1.txt", "job.json.tmp", ".rank2.txt.NOTHEX00.tmp"]
    for name in keep:
        (folder / name).write_text("x")
    target = tmp_path / "elsewhere.txt"
    target.write_text("not ours")
    (folder / ".link.txt.0123abcd.tmp").symlink_to(target)
    (folder / ".dir.txt.89abcdef.tmp").mkdir()
    assert private.remove_temps(folder) == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted(keep + [".link.txt.0123abcd.tmp", ".dir.txt.89abcdef.tmp"])
    assert target.read_text() == "not ours"
    assert private.remove_temps(tmp_path / "missing") == 0
