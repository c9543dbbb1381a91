"""One job's folder on disk: its layout, its job.json record, making it safely and finding it again.

Layout of one job (the folder is on a shared file system for Slurm and mpirun, as with submitit):

    <root>/<job id>/job.json          spec, backend, backend id, attempts and their results
    <root>/<job id>/attempts.log      one line per attempt (time, script arguments, result)
    <root>/<job id>/rank<R>.out|.err  each rank's stdout / stderr (the latest attempt)
    <root>/<job id>/rank<R>.exit      JSON {"code": N, "oom": bool} written by clusterdoc.run at exit
    <root>/<job id>/rank<R>.where     the rank's place in its collectives, kept as it goes (shim/where.py)
    <root>/<job id>/attempt<N>/...    rank files of earlier attempts (kept on --oom-retry)

Ranks write their own files (clusterdoc.run --log-dir): the same on every backend, no mpirun/srun
output parsing, and each rank's exit code is known even where Slurm has no accounting. `launch` makes and
writes these folders, `why` reads them: this module is below both (submitit's JobPaths).
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
import time
from pathlib import Path

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.untrusted import printable


def new_job_id(backend: str) -> str:
    return f"{backend}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


def default_root(folder: str | None) -> Path:
    return Path(folder or "clusterdoc-jobs").expanduser().absolute()


class JobDir:
    """One job's folder: paths of the rank files and the job.json record."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.made_root = False  # reserve_job_dir made the job root too (discard removes it again)

    @property
    def id(self) -> str:
        return self.path.name

    def out(self, rank: int) -> Path:
        return self.path / f"rank{rank}.out"

    def err(self, rank: int) -> Path:
        return self.path / f"rank{rank}.err"

    def exit_file(self, rank: int) -> Path:
        return self.path / f"rank{rank}.exit"

    def start_file(self, rank: int) -> Path:
        return self.path / f"rank{rank}.start"

    def where_file(self, rank: int) -> Path:
        return self.path / f"rank{rank}.where"

    @property
    def record_path(self) -> Path:
        return self.path / "job.json"

    @property
    def reserve_path(self) -> Path:
        return self.path / ".reserve"

    def read(self) -> dict:
        try:
            record = private.read_json(self.record_path)
        except (OSError, ValueError) as err:
            raise UsageError(
                f"no readable job record in {printable(self.path)} ({printable(_reason(err))})",
                hint="give a job id printed by 'clusterdoc submit' or its log folder",
            ) from None
        check_record(record, self.record_path)
        return record

    def write(self, record: dict) -> None:
        """Whole (status never sees half), and on a full file system through the job's reserve: how the job
        ended is on record whatever its ranks wrote. An error that is no fault of clusterdoc's (no permission,
        no space) is a UsageError naming the file."""
        try:
            private.write(self.record_path, json.dumps(record, indent=2) + "\n", reserve=self.reserve_path)
        except OSError as err:
            raise UsageError(f"cannot write {printable(self.record_path)}: {_reason(err)}") from None

    def update(self, **changes) -> dict:
        record = self.read()
        record.update(changes)
        self.write(record)
        return record

    def log_attempt(self, line: str) -> None:
        """attempts.log is for people; job.json is the record: a full disk must not stop the job here."""
        try:
            with private.open_append(self.path / "attempts.log") as f:
                f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")
        except OSError as err:
            if err.errno not in private.FULL:
                raise

    def rank_exit(self, rank: int) -> dict | None:
        """{"code": N, "oom": bool} if the rank finished through clusterdoc.run, else None."""
        try:
            rec = private.read_json(self.exit_file(rank), limit=1 << 20)
        except (OSError, ValueError):
            return None
        return rec if isinstance(rec, dict) and isinstance(rec.get("code"), (int, type(None))) else None

    def rank_where(self, rank: int) -> dict | None:
        """The rank's last place in its collectives (shim/where.py), unchecked; None if it wrote none."""
        try:
            rec = private.read_json(self.where_file(rank), limit=1 << 16)
        except (OSError, ValueError):
            return None
        return rec if isinstance(rec, dict) else None

    def attempt_dir(self, attempt: int) -> Path:
        return self.path / f"attempt{attempt}"

    def archive_attempt(self, attempt: int, world_size: int) -> None:
        """Move the rank files of a finished attempt aside before the next one starts (its stacks and
        preflight report too: `clusterdoc why` judges each attempt from its own folder)."""
        dest = self.attempt_dir(attempt)
        private.mkdir(dest)
        for name in ("stacks", "preflight.txt", "slurm-warned", "mpirun.err", "mpirun.cmd"):
            p = self.path / name
            if p.exists() and not p.is_symlink():
                p.replace(dest / p.name)
        for rank in range(world_size):
            files = (self.out(rank), self.err(rank), self.exit_file(rank), self.start_file(rank), self.where_file(rank))
            for p in files:
                if p.exists():
                    p.replace(dest / p.name)


MAX_WORLD = 1 << 20  # what a job record may claim (a corrupt or hostile one must not make `status` loop for ever)


def check_record(record, where) -> None:
    """A job.json is data from a file anyone with write access to the folder could have edited."""
    spec = record.get("spec") if isinstance(record, dict) else None
    ok = isinstance(spec, dict) and all(
        isinstance(spec.get(k), int) and not isinstance(spec.get(k), bool) and 1 <= spec[k] <= MAX_WORLD
        for k in ("nodes", "tasks_per_node")
    )
    if not ok or not isinstance(spec, dict) or spec["nodes"] * spec["tasks_per_node"] > MAX_WORLD:
        raise UsageError(
            f"{where}: not a valid clusterdoc job record (spec.nodes and spec.tasks_per_node must be "
            f"integers with a world size of at most {MAX_WORLD})"
        )


def open_root(root: Path) -> tuple[int, bool]:
    """The job root, opened (O_DIRECTORY | O_NOFOLLOW) and checked by that descriptor as ./clusterdoc.yaml is: a
    folder (not a link) that belongs to this user (or root) and that nobody else can write. Another user's
    folder, or one others can write (a shared `clusterdoc-jobs/` made mode 777), would hand them the job: its
    secret, its logs, its heartbeats. Made 0700 when missing, whatever the umask. (fd, made)."""
    where = printable(root)
    hint = "use a job root of your own: --folder DIR (or CLUSTERDOC_FOLDER), on a file system the nodes share"
    made = False
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(root, 0o700)
            made = True
        except FileExistsError:
            pass
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as err:
        link = err.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(root)
        what = "is a symbolic link (not followed)" if link else _reason(err)
        raise UsageError(f"cannot use the job root {where}: {what}", hint=hint) from None
    st = os.fstat(fd)
    me = os.geteuid()
    problem = None
    if st.st_uid not in (me, 0):
        problem = f"it belongs to {_user(st.st_uid)}, not to you ({_user(me)})"
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"others can write it (mode {stat.filemode(st.st_mode)})"
    if problem:
        os.close(fd)
        raise UsageError(
            f"refusing the job root {where}: {problem}; its jobs' secrets and logs would be theirs",
            hint=hint + (f", or make it yours alone: chmod go-w {where}" if st.st_uid == me else ""),
        )
    if made:
        os.fchmod(fd, 0o700)
    return fd, made


def _user(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def reserve_job_dir(root: Path, backend: str, job_id: str | None = None) -> JobDir:
    """A new, empty, private folder for one job, made (0700, whatever the umask) in the job root as opened and
    checked by open_root. mkdir is the lock: submits started in the same second (on any node of a shared file
    system) each get their own id; a given `job_id` that exists is an error."""
    root_fd, made_root = open_root(root)
    try:
        for _ in range(100):
            name = job_id or new_job_id(backend)
            path = root / name
            try:
                os.mkdir(name, 0o700, dir_fd=root_fd)
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root_fd)
                try:
                    os.fchmod(fd, 0o700)  # whatever the umask: a job's logs are its owner's
                finally:
                    os.close(fd)
                jd = JobDir(path)
                jd.made_root = made_root
                return jd
            except FileExistsError:
                if job_id:
                    raise UsageError(f"log folder already exists: {printable(path)}") from None
            except OSError as err:
                raise UsageError(
                    f"cannot create the log folder {printable(path)}: {_reason(err)}",
                    hint="choose a writable --folder (shared by all nodes for slurm and mpirun)",
                ) from None
    finally:
        os.close(root_fd)
    raise UsageError(f"no free job id in {printable(root)} after 100 tries")


def discard(jd: JobDir) -> None:
    """Remove a job folder that never ran (what reserve_job_dir / init_job_dir put there, nothing else)."""
    for p in (jd.record_path, jd.reserve_path):
        private.release(p)
    try:
        jd.path.rmdir()
        if jd.made_root:  # a job root we made for it alone: a refused submit leaves nothing behind
            jd.path.parent.rmdir()
    except OSError:
        pass


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError):
        return err.strerror or str(err)
    return str(err)


def find_job(job: str, folder: str | None) -> JobDir:
    """A job given as its log folder, its clusterdoc id, or its Slurm job id."""
    p = Path(job).expanduser()
    if (p / "job.json").exists():
        return JobDir(p.absolute())
    root = default_root(folder)
    if (root / job / "job.json").exists():
        return JobDir(root / job)
    if re.fullmatch(r"\d+", job) and root.is_dir():
        for rec in sorted(root.glob("*/job.json")):
            try:
                found = private.read_json(rec)
            except (OSError, ValueError):
                continue
            if isinstance(found, dict) and str(found.get("backend_id")) == job:
                return JobDir(rec.parent)
    raise UsageError(
        f"no job '{printable(job)}' in {printable(root)}",
        hint="give a job id printed by 'clusterdoc submit', its log folder, or --folder ROOT",
    )
