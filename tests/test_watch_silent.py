"""A job whose rank 0 is stopped (SIGSTOP, a frozen node): its store, which rank 0's process holds, stops
answering, the launcher's look at it waits for ever, and the ranks' own watchdogs cannot report (they report
through that store). The launcher says so and stops the job (issue 43's campaign: submit waited without end)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from clusterdoc.hang import seal
from clusterdoc.launch import watchthread
from clusterdoc.launch.hangwatch import HangWatch
from clusterdoc.launch.job import JobDir

# rank 0's store, as a job holds it: a real TCPStore in a process of its own (then SIGSTOPped, as rank 0 is)
STORE = """
import datetime, sys, time
import torch.distributed as dist
s = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=60))
print(s.port, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_store_that_stopped_answering_is_a_stall_said_and_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(watchthread, "SILENT", 3.0)
    proc = subprocess.Popen([sys.executable, "-c", STORE], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        seal.write_secret(tmp_path)
        (tmp_path / "watch.json").write_text(json.dumps({"addr": "127.0.0.1", "port": port}))
        os.kill(proc.pid, signal.SIGSTOP)
        err = io.StringIO()
        watch = watchthread.WatchThread(HangWatch(JobDir(tmp_path), 2, "abort", err), hang_timeout=2.0)
        deadline = time.monotonic() + 60
        stop = False
        while not stop and time.monotonic() < deadline:
            stop = watch.poll({0: None, 1: None})
            time.sleep(0.2)
        assert stop, err.getvalue()
        assert "the job's store on rank 0 has not answered for" in err.getvalue()
        assert watch.reported and "rank 0 stopped" in watch.reported
    finally:
        proc.kill()
        proc.wait()
    watch.close()


@pytest.mark.slow
def test_under_on_hang_report_the_silence_is_said_and_the_job_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(watchthread, "SILENT", 3.0)
    proc = subprocess.Popen([sys.executable, "-c", STORE], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        seal.write_secret(tmp_path)
        (tmp_path / "watch.json").write_text(json.dumps({"addr": "127.0.0.1", "port": port}))
        os.kill(proc.pid, signal.SIGSTOP)
        err = io.StringIO()
        watch = watchthread.WatchThread(HangWatch(JobDir(tmp_path), 2, "report", err), hang_timeout=2.0)
        deadline = time.monotonic() + 60
        while "has not answered" not in err.getvalue() and time.monotonic() < deadline:
            assert not watch.poll({0: None, 1: None})
            time.sleep(0.2)
        assert "has not answered" in err.getvalue() and not watch.poll({0: None, 1: None})
    finally:
        proc.kill()
        proc.wait()
    watch.close()
