"""The job root (issue 32, item 2): a `clusterdoc-jobs/` another user made, or one others can write, would hand
them the job (its secret, its logs, its heartbeats). submit refuses it, checked on the folder as opened; what it
makes is 0700 whatever the umask (umask 002 as root included), and a rank file made before ours is refused. The
"other user" is a real Unix user, made and removed here."""

import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.launch.job import JobSpec, create_job_dir, reserve_job_dir
from tests.test_shared_files import clean_env, needs_root, other_user  # noqa: F401  (the fixture)


def submit(*args, cwd, umask=0o022, limit=True):
    def setup():
        os.umask(umask)
        if limit:  # a refusal ends under 500 MB (a rank that imports torch and OpenBLAS needs more address space)
            resource.setrlimit(resource.RLIMIT_AS, (500 << 20, 500 << 20))

    return subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--no-preflight",
                           *map(str, args)], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=60,
                          preexec_fn=setup)  # fmt: skip


@pytest.fixture
def shared():
    """A shared project folder others may make folders in (mode 1777, under /tmp so another user reaches it)."""
    path = Path(tempfile.mkdtemp(prefix="cdt-shared-", dir="/tmp"))
    path.chmod(0o1777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def as_user(uid, gid, *argv):
    def drop():
        os.setgid(gid)
        os.setuid(uid)

    return subprocess.run(argv, capture_output=True, text=True, timeout=20, preexec_fn=drop)


@pytest.mark.slow  # submits a real job (local backend) at its end
@needs_root
def test_another_users_world_writable_job_root_is_refused_and_they_read_nothing(shared, other_user):  # noqa: F811
    name, uid, gid = other_user
    (shared / "train.py").write_text("print('secret output')\n")
    planted = shared / "clusterdoc-jobs"
    assert as_user(uid, gid, "mkdir", "-m", "777", str(planted)).returncode == 0
    assert planted.stat().st_uid == uid
    res = submit("train.py", cwd=shared, umask=0o002)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stdout + res.stderr
    assert f"refusing the job root {planted}: it belongs to user {name}" in res.stderr, res.stderr
    assert "--folder DIR" in res.stderr
    assert os.listdir(planted) == []  # nothing of the job was written there
    # the user's own root (even group-writable, made by them) is refused too until they fix it
    own = shared / "mine"
    own.mkdir()
    own.chmod(0o775)
    res = submit("--folder", own, "train.py", cwd=shared, umask=0o002)
    assert res.returncode == 2 and "others can write it (mode drwxrwxr-x)" in res.stderr and "chmod go-w" in res.stderr
    # a root clusterdoc makes itself, under umask 002 as root: 0700, job folders 0700, files 0600
    res = submit("--folder", shared / "jobs", "train.py", cwd=shared, umask=0o002, limit=False)
    assert res.returncode == 0, res.stdout + res.stderr
    root = shared / "jobs"
    (job,) = root.iterdir()
    assert stat.S_IMODE(root.stat().st_mode) == 0o700 and stat.S_IMODE(job.stat().st_mode) == 0o700
    for f in job.iterdir():
        if f.is_file():
            assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
    for path in (job / "rank0.out", job / "job.json"):
        r = as_user(uid, gid, "cat", str(path))
        assert r.returncode != 0 and "secret output" not in r.stdout and "Permission denied" in r.stderr


def test_a_linked_root_and_a_premade_rank_file_are_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "jobs").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="is a symbolic link"):
        reserve_job_dir(tmp_path / "jobs", "local")
    spec = JobSpec(script=str(tmp_path / "t.py"), script_args=[], backend="local", nodes=1, tasks_per_node=1)
    jd = create_job_dir(tmp_path / "root", spec)
    jd.out(0).write_text("")
    with pytest.raises(FileExistsError):  # the launcher makes the rank files new (O_EXCL)
        private.open_append(jd.out(0), exclusive=True)
    os.mkfifo(jd.err(0))
    with pytest.raises(OSError, match="not a regular file|No such device"):  # never blocks on a FIFO
        private.open_fd(jd.err(0))


@needs_root
def test_a_rank_file_another_user_made_first_is_refused_and_ours_are_0600(tmp_path, other_user):  # noqa: F811
    _, uid, gid = other_user
    spec = JobSpec(script=str(tmp_path / "t.py"), script_args=[], backend="local", nodes=1, tasks_per_node=1)
    jd = create_job_dir(tmp_path / "root", spec)
    jd.out(0).write_text("")
    os.chown(jd.out(0), uid, gid)
    jd.out(0).chmod(0o644)
    with pytest.raises(OSError, match="made by another user"):
        private.open_fd(jd.out(0))
    old = os.umask(0)
    try:
        os.close(private.open_fd(jd.err(0)))
    finally:
        os.umask(old)
    assert stat.S_IMODE(jd.err(0).stat().st_mode) == 0o600


@needs_root
def test_a_folder_another_user_made_in_a_job_folder_is_refused(tmp_path, other_user):  # noqa: F811
    _, uid, gid = other_user
    spec = JobSpec(script=str(tmp_path / "t.py"), script_args=[], backend="local", nodes=1, tasks_per_node=1)
    jd = create_job_dir(tmp_path / "root", spec)
    (jd.path / "stacks").mkdir(mode=0o777)
    os.chown(jd.path / "stacks", uid, gid)
    with pytest.raises(OSError, match="a folder made by another user"):
        private.mkdir(jd.path / "stacks")
    assert stat.S_IMODE(private.mkdir(jd.path / "attempt1").stat().st_mode) == 0o700
