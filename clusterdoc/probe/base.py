"""What every part of the probe uses: running a command with a timeout, reading a file, bounded threads.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import os
import re
import signal
import subprocess
import threading
import time

SCHEMA = 1
DEFAULT_TIMEOUT = 8.0


def run(argv, timeout, env=None, stdout=subprocess.PIPE):
    """Run argv; return (exit_code, stdout, stderr). Raises OSError (not found) or
    subprocess.TimeoutExpired after killing the whole process group (a hung child that
    forked must not keep our pipes open). stdout=subprocess.DEVNULL: not kept (stdout is "")."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.communicate(timeout=2)
        except Exception:
            pass
        raise
    return proc.returncode, (out or b"").decode("utf-8", "replace"), err.decode("utf-8", "replace")


def listdir_prefix(dirpath, prefix):
    """Paths in dirpath whose name starts with prefix, sorted (glob without importing glob: the probe
    runs on every node at every check, so its start-up time counts)."""
    try:
        names = os.listdir(dirpath)
    except OSError:
        return []
    return sorted(os.path.join(dirpath, n) for n in names if n.startswith(prefix))


def which(name, path=None):
    for d in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not d:
            continue
        cand = os.path.join(d, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except (OSError, IOError):
        return None


def _ver_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:3])


def _parallel(funcs, width=16):
    """Run callables in threads, at most `width` at once; wait for all."""
    sem = threading.Semaphore(width)

    def wrap(f):
        try:
            f()
        finally:
            sem.release()

    threads = []
    for f in funcs:
        sem.acquire()
        t = threading.Thread(target=wrap, args=(f,))
        t.daemon = True
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


def _bounded(funcs, limit, width=8):
    """Run callables in `width` daemon worker threads; wait at most `limit` seconds in all (a resolver that
    hangs on DNS must not hold the probe). Returns the number not finished by then. (A thread per callable
    cost a node more than its lookups when it resolves every peer of a large cluster.)"""
    import collections

    todo = collections.deque(funcs)
    total, done = len(todo), [0]
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                f = todo.popleft()
            try:
                f()
            finally:
                with lock:
                    done[0] += 1

    threads = []
    for _ in range(min(width, total)):
        t = threading.Thread(target=worker)
        t.daemon = True
        t.start()
        threads.append(t)
    end = time.time() + limit
    for t in threads:
        t.join(max(0.0, end - time.time()))
    with lock:
        return total - done[0]
