"""Issue 32, the probe's side: what a hostile node or another user can put where the GPU probe reads (its XID state
file, the kernel log, the facts it sends) ends in seconds, bounded, judged as that input's own finding."""

import json
import os
import subprocess
import sys
import threading
import time

from clusterdoc import probe
from clusterdoc.checks import FAIL, gpuhealth
from clusterdoc.probe import gpuhealth as probe_health
from clusterdoc.untrusted import clean_facts


def in_seconds(func, limit=5.0):
    """func()'s result, or fail when it takes longer than `limit` (a blocked open must not hang the test run)."""
    box = []
    t = threading.Thread(target=lambda: box.append(func()), daemon=True)
    start = time.monotonic()
    t.start()
    t.join(limit)
    assert box, f"still blocked after {limit}s"
    return box[0], time.monotonic() - start


def test_a_fifo_as_the_xid_state_file_does_not_block_the_probe(tmp_path):
    path = tmp_path / "gpu-n1.json"
    os.mkfifo(path)
    (new, since), took = in_seconds(lambda: probe.xid_state(3, str(path)))
    assert (new, since) == (3, None) and took < 2
    assert path.is_file() and not path.is_symlink() and json.loads(path.read_text())["xids"] == 3  # replaced


def test_a_link_to_dev_zero_or_a_huge_file_is_not_read_without_bound(tmp_path):
    link = tmp_path / "gpu-n1.json"
    link.symlink_to("/dev/zero")
    (new, since), took = in_seconds(lambda: probe.xid_state(2, str(link)))
    assert (new, since) == (2, None) and took < 2 and not link.is_symlink()  # not followed, replaced
    huge = tmp_path / "gpu-n2.json"
    huge.write_text('{"xids": ' + "1" * (8 << 20) + "}")
    (new, since), took = in_seconds(lambda: probe.xid_state(2, str(huge)))
    assert (new, since) == (2, None) and took < 2


def test_the_state_files_temp_file_follows_no_link(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    path = tmp_path / "state" / "gpu-n1.json"
    path.parent.mkdir()
    monkeypatch.setattr(probe_health.os, "urandom", lambda n: b"\x00" * n)
    tmp = f"{path}.{os.getpid()}.{'00' * 4}.tmp"
    os.symlink(victim, tmp)  # another user guessed the temp name
    assert probe.xid_state(1, str(path)) == (1, None)  # the run goes on
    assert victim.read_text() == "precious\n" and not path.exists()
    os.unlink(tmp)
    assert probe.xid_state(1, str(path)) == (1, None) and oct(path.stat().st_mode & 0o777) == "0o600"


def test_another_drivers_line_that_contains_an_xid_is_not_counted():
    log = "\n".join([
        "[  12.345678] mydrv: relaying NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        "6,100,200,-;evil: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        "Jan 15 01:48:25 host kernel: [  12.3] other: NVRM: Xid (PCI:0000:3b:00): 48, x",
        "Jan 15 01:48:25 host sshd[1]: NVRM: Xid (PCI:0000:3b:00): 79, a user's log line",
        "12,101,201,-;NVRM: Xid (PCI:0000:3b:00): 79, a program's write to /dev/kmsg (facility user)",
        "syslog:err   : 2025-05-27T04:18:56,089671+00:00 NVRM: Xid (PCI:0000:04:00): 79, GPU has fallen off the bus",
        "[  13.000000] NVRM: Xid (PCI:0000:5e:00): 13, Graphics Exception",  # the driver's own
    ])
    xids = probe.parse_xids(log)
    assert [(e["bus"], e["xid"]) for e in xids["events"]] == [("0000:5e:00", 13)] and xids["total"] == 1


def test_a_5000_digit_xid_number_loses_only_its_line():
    log = ("6,1,2,-;NVRM: Xid (PCI:0000:3b:00): " + "9" * 5000 + ", pid=1, x\n"
           "6,2,3,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE\n")
    xids = probe.parse_xids(log)
    assert [(e["xid"], e["text"]) for e in xids["events"]] == [(48, "pid=1, DBE")]
    facts = clean_facts({"gpu_health": {"smi": {"gpus": []}, "lost": [], "xid": {
        "source": "/dev/kmsg", "events": xids["events"], "counts": xids["counts"], "total": 1, "new": 1}}})
    assert facts["malformed"] == []
    assert [f["status"] for f in gpuhealth.check("n1", facts) if f["message"].startswith("XID 48")] == [FAIL]
    # and from a node that sends such a number anyway: that value is malformed, the node's GPU health stays
    sent = clean_facts({"gpu_health": {"smi": {"driver": "550.54.14", "gpus": []}, "xid": {
        "events": [{"bus": "0000:3b:00", "xid": 10**5000 if sys.version_info < (3, 11) else 2**70, "text": "x"}]}}})
    assert sent["gpu_health"]["smi"]["driver"] == "550.54.14" and sent["malformed"]


FAKE_PYTHON = """#!/bin/sh
# the job's "python" on a node that answers with a malformed GPU entry (the probe's source on stdin is ignored)
cat >/dev/null
echo '{facts}'
"""


def test_check_local_with_another_python_names_a_malformed_gpu_entry(tmp_path):
    """`check --local --python X`: the facts are cleaned once; a malformed GPU entry is a `malformed` finding of
    the node, never a silent "no GPU"."""
    facts = {"schema": 1, "probe": "python", "hostname": "n1",
             "gpus": [{"index": 0, "name": "\x1b]0;owned\x07", "capability": "9.0", "memory_mib": 81559,
                       "driver": "550.54.14"}, None]}
    fake = tmp_path / "python3"
    fake.write_text(FAKE_PYTHON.format(facts=json.dumps(facts)))
    fake.chmod(0o755)
    out = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--local", "--python", str(fake), "--json",
                          "--checks", "arch"], capture_output=True, text=True, timeout=60)
    doc = json.loads(out.stdout)
    messages = [f["message"] for f in doc["findings"]]
    assert "the node sent a malformed GPU entry: null (not trusted, not judged)" in messages
    assert any("malformed GPU name: '\\x1b]0;owned\\x07'" in m for m in messages), messages  # escaped
    assert not any("no GPU" in m for m in messages), messages


def test_clean_facts_is_idempotent_on_clean_facts():
    facts = clean_facts({"gpu_health": {"smi": {"driver": "550.54.14", "cuda": "Not Found", "gpus": []}}})
    again = clean_facts(json.loads(json.dumps(facts)))
    assert again["gpu_health"] == facts["gpu_health"]


def test_the_kernel_log_file_is_read_bounded_and_a_fifo_there_is_skipped(tmp_path, monkeypatch):
    fifo = tmp_path / "kern.log"
    os.mkfifo(fifo)
    messages = tmp_path / "messages"
    messages.write_bytes(b"x" * (9 << 20) + b"\nkernel: Linux version 6.8.0\nkernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE\n")
    monkeypatch.setattr(probe_health, "KERNEL_LOG_FILES", (str(fifo), str(messages)))
    (source, text), took = in_seconds(lambda: probe_health.read_kernel_log(str(tmp_path / "no-kmsg")))
    assert source == str(messages) and took < 2 and text.startswith("kernel: Linux version")
    assert [e["xid"] for e in probe.parse_xids(text)["events"]] == [48]
