"""The job's store is reachable by anyone who can reach its port: what another local user can do there.

A second Unix user (made and removed here) runs tests/shim_jobs/store_attacker.py against a running 2-rank
local job: it must not read the ranks' heartbeats or stacks, stop the job, get a forged report printed, or
crash `clusterdoc submit` with a malformed dump; and the local job's store listens on loopback only.
"""
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.test_hang_local import clean_env

ROOT = Path(__file__).resolve().parents[1]
HANG = ROOT / "jobs" / "hang.py"
ATTACKER = Path(__file__).parent / "shim_jobs" / "store_attacker.py"
pytestmark = pytest.mark.slow


@pytest.fixture
def stranger():
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("needs root and useradd to make a second user")
    name = "cdst" + uuid.uuid4().hex[:8]
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False)


def listening(port: int) -> list[str]:
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
    return [line.split()[3] for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("action", ["read_then_abort", "forged_stall", "malformed_dump"])
def test_another_user_cannot_read_stop_or_steer_a_job_through_its_store(tmp_path, stranger, action):
    folder = tmp_path / "jobs"
    submit = subprocess.Popen([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "2",
                               "--no-preflight", "--hang-timeout", "60", "--folder", str(folder), str(HANG),
                               "--scenario", "healthy", "--sleep", "30"],
                              cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not list(folder.glob("*/watch.json")) and time.monotonic() < deadline:
            time.sleep(0.2)
        (watch,) = folder.glob("*/watch.json")
        time.sleep(1.5)  # a heartbeat or two on the store
        port = json.loads(watch.read_text())["port"]
        bound = listening(port)
        attack = subprocess.run([sys.executable, str(ATTACKER), str(stranger.pw_uid), str(stranger.pw_gid), str(port),
                                 str(watch.parent), action], capture_output=True, text=True, timeout=120,
                                env=clean_env())
        out, err = submit.communicate(timeout=240)
    finally:
        if submit.poll() is None:
            submit.kill()
            submit.wait()
    assert attack.returncode == 0, attack.stderr[-3000:]
    seen = json.loads(attack.stdout.splitlines()[-1])
    assert seen["uid"] == stranger.pw_uid and seen["secret"].startswith("denied"), seen
    text = (out + err).decode("utf-8", "replace")
    record = json.loads((watch.parent / "job.json").read_text())
    assert submit.returncode == 0 and record["state"] == "COMPLETED", text[-4000:]  # not stopped, not LOST
    assert "Traceback" not in text and "\x1b" not in text and "FORGED" not in text and "stalled" not in text, text
    assert "error" not in json.dumps(seen), seen  # it reached the job while it ran
    if action == "read_then_abort":
        assert bound and all(a.startswith("127.0.0.1:") for a in bound), bound  # loopback only
        readable = json.dumps([seen["hb"], seen["dumps"]])
        assert not re.search(r"hang\.py|MainThread|frames|collectives|\"pid", readable), readable
        assert any(seen["hb"]), seen  # there was something there: sealed, not readable
        assert re.search(r"rank \d: ignored \d+ value\(s\) on the job's store", text), text  # counted, said
    else:  # the launcher read the forged values, ignored them and says so
        assert re.search(r"ignored \d+ value\(s\) on the job's store that failed authentication", text), text


def test_a_healthy_job_ends_without_a_store_backtrace(tmp_path):
    """Rank 0's store goes with it: every client (the other ranks' watchdogs, the launcher) lets go first, or
    torch prints a 20-frame C++ backtrace for the one that asked a store that was gone (1 run in 3 before)."""
    for run in range(4):
        res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "2",
                              "--no-preflight", "--folder", str(tmp_path / "jobs"), str(ROOT / "jobs" / "train_ddp.py"),
                              "--epochs", "1", "--samples", "512"],
                             cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=240)
        text = res.stdout + res.stderr
        assert res.returncode == 0, text[-3000:]
        assert "frame #" not in text and "TCPStore" not in text and "Exception raised from" not in text, (run, text)
