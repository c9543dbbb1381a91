"""`status` and `logs` on a job folder someone shaped (issue 32): what they print from it is escaped, and a
job.json of an unexpected shape is a usage error naming the file, never a traceback."""

import json
import os
import subprocess
import sys

import pytest

from tests.test_shared_files import clean_env, make_job

ESC = "\x1b]0;pwned\x07\x1b[2J"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "clusterdoc", *map(str, args)], env=clean_env(), capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def edit(jd, change):
    rec = json.loads(jd.record_path.read_text())
    change(rec)
    jd.record_path.write_text(json.dumps(rec))


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(attempts=[{"n": 1, "script_args": 5, "outcome": None}]),
        lambda r: r.update(attempts={"n": 1}),
        lambda r: r.update(attempts=[{"n": 1, "script_args": [], "outcome": {"codes": []}}]),
        lambda r: r.update(outcome=["message"], state="FAILED"),
        lambda r: r["spec"].update(script_args={"a": 1}),
        lambda r: r["spec"].update(script=["a"]),
    ],
    ids=["args-int", "attempts-dict", "codes-list", "outcome-list", "script-args-dict", "script-list"],
)
def test_status_on_a_malformed_job_record_is_a_usage_error(tmp_path, change):
    jd = make_job(tmp_path)
    edit(jd, change)
    res = cli("status", jd.path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert "job.json: not a valid clusterdoc job record" in res.stderr, res.stderr


def test_status_and_logs_escape_what_the_folder_holds(tmp_path):
    jd = make_job(tmp_path)
    edit(jd, lambda r: r.update(state="FAILED", outcome={"message": "died " + ESC}, backend_id=ESC))
    jd.out(0).write_text("step 1\n" + ESC + "\n")
    jd.err(1).write_text("oops " + ESC + "\n")
    for argv in (["status", jd.path], ["logs", jd.path]):
        res = cli(*argv)
        assert "\x1b" not in res.stdout + res.stderr and "\x07" not in res.stdout, (argv, res.stdout)
        assert "\\x1b]0;pwned" in res.stdout, (argv, res.stdout)
        assert "Traceback" not in res.stderr
    logs = cli("logs", jd.path).stdout
    assert "[rank 0] step 1\n" in logs and "[rank 1] oops \\x1b" in logs
    assert os.path.getsize(jd.out(0)) > 0  # the file itself keeps its raw bytes
