"""Another user replays an earlier job of the same user into a new torchrun-style job (issue 38, High 1).

The earlier job's store held its sealed abort (what the hang watch puts in `ctl`); the stranger (a second Unix
user, made and removed here, tests/shim_jobs/replay_attacker.py) copies it, and, before the new job's ranks agree
on their secret, puts old values and planted counts on the new job's store, then keeps putting the old abort back.
The new job's secret comes from every rank's fresh part through its own process group (shim/secret.py): the old
abort never opens, the job completes with its hang watch on, and the replays are counted and said.
"""
import json
import os
import subprocess
import sys
import time

import pytest

from tests.shim_helpers import JOB, REPO, free_port, parse_results
from tests.test_store_security import stranger  # noqa: F401 - the fixture

ATTACKER = JOB.parent / "replay_attacker.py"
pytestmark = pytest.mark.slow


def start(home, port, *args, env=None):
    procs = []
    for rank in range(2):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMI_", "OMPI_", "CLUSTERDOC_"))}
        e.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=str(port), CLUSTERDOC_INIT_TIMEOUT="60", PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
                 OMP_NUM_THREADS="1", **(env or {}))
        procs.append(subprocess.Popen([sys.executable, str(JOB), "secret", f"{home},{home}", *args], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return procs


def finish(procs, timeout=180):
    outs = []
    for p in procs:
        try:
            text, _ = p.communicate(timeout=timeout)
        finally:
            if p.poll() is None:
                p.kill()
        outs.append((p.returncode, parse_results(text), text))
    return outs


def test_an_earlier_jobs_abort_replayed_by_another_user_never_stops_a_new_job(tmp_path, stranger):  # noqa: F811
    home, port_a, port_b = tmp_path / "home", free_port(), free_port()
    attacker = subprocess.Popen([sys.executable, str(ATTACKER), str(stranger.pw_uid), str(stranger.pw_gid),
                                 str(port_a), str(port_b)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = finish(start(home, port_a, "abort", "4", env={"CLUSTERDOC_HANG_TIMEOUT": "0"}))
        assert [(rc, len(res)) for rc, res, _ in first] == [(0, 1), (0, 1)], [t[-2000:] for _, _, t in first]
        t0 = time.monotonic()
        second = finish(start(home, port_b, "run", "6"))
        took = time.monotonic() - t0
        out, err = attacker.communicate(timeout=60)
    finally:
        if attacker.poll() is None:
            attacker.kill()
    seen = json.loads(out.splitlines()[-1]) if out.strip() else {"stderr": err[-2000:]}
    assert seen.get("uid") == stranger.pw_uid and "clusterdoc/hang//ctl" in seen["copied"], seen
    assert seen["wrote"] > 0, seen  # the old abort was put back on the new job's store while it ran
    texts = "\n".join(text for _, _, text in second)
    assert [rc for rc, _, _ in second] == [0, 0], texts[-4000:]
    found = [res[0] for _, res, _ in second]
    assert [r["agreed"] for r in found] == [True, True] and found[0]["digest"] == found[1]["digest"], texts
    assert found[0]["digest"] != first[0][1][0]["digest"]  # a fresh secret, not the earlier job's
    assert "stopped by the hang watch" not in texts and "hang watch off" not in texts, texts[-4000:]
    assert "FORGED" not in texts and "\x1b" not in texts, texts[-4000:]
    assert "ignored" in texts and "replayed" in texts, texts[-4000:]  # counted, said
    assert took < 55, took  # the planted count stalls nothing (the init timeout is 60 s)
