"""Rank 0's store goes with it, so its clients let go first (shim/watch.py's shutdown order). CI met the one client
rank 0 did not wait for: submit's launcher, whose first connect was under way as rank 0 left; torch's client then
printed a 20-frame C++ backtrace on the console of a healthy job (test_store_security.py's 4-run test, 1 run in
~100). A launcher that watches marks the job folder before any connect, and rank 0 waits for its bye."""

from __future__ import annotations

import datetime
import io
import json
import threading
import time

import pytest
import torch.distributed as dist

from clusterdoc.hang import channel, seal
from clusterdoc.launch.hangwatch import HangWatch
from clusterdoc.launch.job import JobDir
from clusterdoc.shim import watch as shim_watch


@pytest.fixture
def job(tmp_path):
    """A job folder as submit and rank 0 leave it (secret, watch.json), rank 0's store, and rank 0's client."""
    server = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=10), wait_for_workers=False)
    seal.write_secret(tmp_path)
    (tmp_path / "watch.json").write_text(json.dumps({"addr": "127.0.0.1", "port": server.port}))
    secret = seal.read_secret(tmp_path)
    rank0 = channel.connect("127.0.0.1", server.port, timeout=10.0, secret=secret)
    onlooker = channel.connect("127.0.0.1", server.port, timeout=10.0, secret=secret)  # a client blocks per call
    yield tmp_path, rank0, onlooker
    del rank0, onlooker, server


def test_rank0_waits_for_a_watching_launcher_that_had_not_connected_yet(job, capfd):
    folder, rank0, onlooker = job
    launcher = HangWatch(JobDir(folder), 2, "abort", io.StringIO())  # marks the folder; no connect yet
    assert (folder / channel.WATCHER_FILE).exists()
    clients, wait = shim_watch.leaving_order(2, 0.05, folder, rank0)
    assert clients == ["rank1", "launcher"] and wait >= shim_watch.LAUNCHER_BYE
    channel.bye(rank0, "rank1")  # the other rank let go already
    started = time.monotonic()
    leaving = threading.Thread(target=channel.close, args=(rank0, clients, wait))
    leaving.start()
    deadline = time.monotonic() + 10
    while not channel.closing(onlooker) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert leaving.is_alive()  # rank 0 said it is going, and waits
    launcher.poll({0: None, 1: None})  # its first look: connects, sees rank 0 going, says bye
    assert launcher.left and launcher.store is None
    leaving.join(timeout=30)
    assert not leaving.is_alive() and time.monotonic() - started < wait  # on the bye, not on its bound
    launcher.release()
    assert not (folder / channel.WATCHER_FILE).exists()
    printed = capfd.readouterr().err
    assert "frame #" not in printed and "TCPStore" not in printed, printed


def test_without_a_watching_launcher_rank0_waits_only_for_the_ranks(job, tmp_path):
    folder, rank0, _ = job
    assert shim_watch.leaving_order(2, 0.05, folder, rank0) == (["rank1"], pytest.approx(1.6))
    assert shim_watch.leaving_order(2, 0.05, None, rank0)[0] == ["rank1"]  # not told of a launcher
    channel.put(rank0, "hello/launcher", True)  # one connected all the same: it is waited for
    assert shim_watch.leaving_order(2, 0.05, None, rank0)[0] == ["rank1", "launcher"]
    empty = tmp_path / "no-secret"
    empty.mkdir()
    HangWatch(JobDir(empty), 2, "abort", io.StringIO())  # no secret: it never connects, so it marks nothing
    assert not (empty / channel.WATCHER_FILE).exists()
