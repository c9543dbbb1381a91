"""The flake 'a healthy rank aborting at interpreter exit ("terminate called without an active exception", once in
~20 jobs)' (issue 38): what causes it, shown with torch's own TCPStore, and the shim's part in it closed.

A daemon thread still inside a torch call (the GIL released, C++ frames on its stack) when the interpreter
finalizes is ended by CPython's pthread_exit as it takes the GIL back; the forced unwind meets a noexcept C++
frame and std::terminate aborts the process, rc -6, whatever the script did. The shim's hang watchdog is such a
thread (its store calls wait up to 10 s); it used to be joined for 3 s at most at exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


ENV = {**os.environ, "CLUSTERDOC_JOB_SECRET": "s" * 32, "PYTHONUNBUFFERED": "1"}

# torch alone: a thread in TCPStore.wait while the interpreter finalizes (the store object going with the
# module's globals holds the teardown until the wait times out, inside the finalization)
TORCH_ONLY = """
import datetime, threading, time
import torch.distributed as dist
store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=30))
def blocked():
    try:
        store.wait(["never"], datetime.timedelta(seconds=1))
    except Exception:
        pass
threading.Thread(target=blocked, daemon=True).start()
time.sleep(0.2)
print("script done", flush=True)
"""

# a store that accepts and answers nothing for CLOSE_AFTER seconds, then hangs up (a stuck, then dead, rank 0): in
# its own process, as a Python thread of the rank cannot run while the rank finalizes
BLACK_HOLE = """
import socket, sys, time
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(16)
print(srv.getsockname()[1], flush=True)
srv.settimeout(0.05)
held, until = [], None
while until is None or time.monotonic() < until:
    try:
        held.append(srv.accept()[0])
        until = until or time.monotonic() + float(sys.argv[1])
    except socket.timeout:
        pass
for conn in held:
    conn.close()
srv.close()
time.sleep(30)
"""
CLOSE_AFTER = 2.0  # then torch's client tries to connect again (refused) until its 10 s timeout, and returns

# the shim's watchdog inside its store connect when the rank exits; the teardown takes 10 s (a global's __del__, as
# a store or a process group going with the module's globals): the window in which the connect returns
WATCHDOG_IN_A_STORE_CALL = """
import sys, time
from clusterdoc.shim import watch
from clusterdoc import run
if len(sys.argv) > 2:  # the code before the fix (by hand: 1 abort in 8 runs, a race): a 3 s join, then teardown
    watch.EXIT_JOIN = float(sys.argv[2])
    watch.still_in_torch = lambda: False
class SlowTeardown:
    def __del__(self, sleep=time.sleep):  # bound now: the module's globals are going when it runs
        sleep(10)
slow = SlowTeardown()
wd = watch.Watchdog(1, 2, "127.0.0.1", int(sys.argv[1]), 300.0, "abort", None, launcher=False)
watch._watchdog = wd
wd.start()
time.sleep(1.0)  # inside torch's TCPStore connect now (GIL released), which the store never answers
t0 = time.monotonic()
run._shutdown()
print(f"shutdown {time.monotonic() - t0:.1f}s alive={wd.is_alive()}", flush=True)
run.leave(0)
"""


def rank_with_a_stuck_watchdog(*args: str) -> subprocess.CompletedProcess:
    hole = subprocess.Popen([sys.executable, "-c", BLACK_HOLE, str(CLOSE_AFTER)], stdout=subprocess.PIPE, text=True)
    try:
        port = hole.stdout.readline().strip()
        return subprocess.run([sys.executable, "-c", WATCHDOG_IN_A_STORE_CALL, port, *args], capture_output=True,
                              text=True, timeout=90, env=ENV)
    finally:
        hole.kill()
        hole.wait()


def python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=ENV, cwd=os.getcwd())


@pytest.mark.slow
def test_torch_aborts_a_process_that_finalizes_with_a_thread_in_a_store_call():
    # the cause, without clusterdoc (not ours to fix: ours not to leave a thread there). It is torch's race with
    # the interpreter's teardown: it showed in 3 of 3 runs here, but CI once saw none, so the test asks for one
    # abort in 6 and skips (saying so) when the race does not show: it tests torch, not clusterdoc.
    aborted = 0
    for _ in range(6):
        res = python(TORCH_ONLY)
        assert "script done" in res.stdout and res.returncode in (0, -6), (res.returncode, res.stderr[-2000:])
        aborted += res.returncode == -6 and "terminate called without an active exception" in res.stderr
        if aborted:
            return
    pytest.skip("torch's exit race did not show in 6 runs on this machine (the cause is not re-shown this time)")


@pytest.mark.slow
def test_a_rank_whose_watchdog_is_in_a_store_call_at_exit_ends_0_every_time():
    for _ in range(3):
        res = rank_with_a_stuck_watchdog()
        assert res.returncode == 0 and "terminate called" not in res.stderr, res.stdout + res.stderr[-2000:]
        # shutdown waited for it to leave torch (a connect that takes longer than EXIT_JOIN is left by os._exit:
        # still 0, checked above, but not the common path, so it must not be what happens here)
        assert "alive=False" in res.stdout, res.stdout


HEALTHY = """
import clusterdoc.shim as shim
import torch, torch.distributed as dist
shim.init()
t = torch.ones(4)
for _ in range(3):
    dist.all_reduce(t)
print("ok", dist.get_rank(), float(t[0]), flush=True)
"""


@pytest.mark.slow
def test_healthy_two_rank_jobs_never_abort_at_exit(tmp_path):
    """The case CI saw, run many times: a healthy 2-rank job through the local backend (shim, hang watch on)."""
    script = tmp_path / "healthy.py"
    script.write_text(HEALTHY)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_"))}
    runs = int(os.environ.get("CLUSTERDOC_EXIT_RUNS", "8"))  # the race showed in 1 run of 3 before its fix
    bad = []
    for i in range(runs):
        res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "2",
                              "--no-preflight", "--folder", str(tmp_path / "jobs"), str(script)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
        if res.returncode != 0 or "terminate called" in res.stderr:
            bad.append(f"run {i}: rc {res.returncode}: {res.stderr[-1500:]}")
    assert not bad, "\n".join(bad)


# the launcher's side (CI, ci51): `clusterdoc submit`'s hang-watch thread inside torch's TCPStore connect (rank 0's
# exit cut the handshake; torch retried past close()'s join) as submit ended: rc -6 whatever the job's outcome. The
# CLI now leaves with os._exit, after a flush, while a closed watch's look is under way
LAUNCHER_IN_A_STORE_CALL = """
import sys, time
import torch.distributed as dist
from clusterdoc import cli
from clusterdoc.launch import watchthread
class SlowTeardown:
    def __del__(self, sleep=time.sleep):  # bound now: the module's globals are going when it runs
        sleep(10)
slow = SlowTeardown()
class Look:  # what WatchThread uses of HangWatch; its look: a connect the store never answers
    reported, on_hang, err = None, "abort", sys.stderr
    def poll(self, codes):
        import datetime
        dist.TCPStore("127.0.0.1", int(sys.argv[1]), is_master=False, wait_for_workers=False,
                      timeout=datetime.timedelta(seconds=10))
    def release(self):
        pass
wt = watchthread.WatchThread(Look())
wt.poll({0: None})
time.sleep(1.0)
wt.close(wait=0.5)
print(f"closed under_way={watchthread.look_under_way()}", flush=True)
cli._leave_if_a_look_is_under_way(3)
raise SystemExit(99)
"""


@pytest.mark.slow
def test_submit_leaves_with_its_code_while_its_watchs_look_is_in_a_store_call():
    for _ in range(3):
        hole = subprocess.Popen([sys.executable, "-c", BLACK_HOLE, str(CLOSE_AFTER)], stdout=subprocess.PIPE,
                                text=True)  # fmt: skip
        try:
            port = hole.stdout.readline().strip()
            res = subprocess.run([sys.executable, "-c", LAUNCHER_IN_A_STORE_CALL, port], capture_output=True,
                                 text=True, timeout=90, env=ENV)  # fmt: skip
        finally:
            hole.kill()
            hole.wait()
        assert "closed under_way=True" in res.stdout, (res.stdout, res.stderr[-2000:])
        assert res.returncode == 3 and "terminate called" not in res.stderr, (res.returncode, res.stderr[-2000:])


def test_a_closed_watch_with_no_look_under_way_leaves_the_exit_to_the_interpreter():
    from clusterdoc.launch import watchthread

    class Idle:
        reported, on_hang, err = None, "abort", sys.stderr

        def poll(self, codes):
            return False

        def release(self):
            pass

    wt = watchthread.WatchThread(Idle())
    wt.poll({0: None})
    wt.close()
    assert not watchthread.look_under_way()
