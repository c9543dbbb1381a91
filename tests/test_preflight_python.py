"""Issue 12 item 5: the preflight judges the job's own interpreter, for every backend."""

import os
import sys

import pytest

from clusterdoc import doctor
from clusterdoc.doctor import facts as gather, payload
from clusterdoc.checks import FAIL, ssh
from clusterdoc.launch import preflight
from clusterdoc.launch.backend import backend_for
from clusterdoc.launch.job import JobSpec


def test_remote_probe_runs_under_the_given_python_quoted():
    cmd = payload.remote_command(3.0, None, python="/opt/my env/bin/python")
    assert "command -v '/opt/my env/bin/python'" in cmd and "exec '/opt/my env/bin/python' -" in cmd
    assert "exec python3 -" in payload.remote_command(3.0, None)  # no --python: python3 on PATH, as before


def test_missing_job_python_fails_the_node():
    out = ssh.check("node1", {"status": "ok"}, {"probe": "shell", "python_missing": "/venv/bin/python"})
    assert [f["status"] for f in out] == ["ok", FAIL] and "/venv/bin/python" in out[1]["message"]


@pytest.mark.parametrize("backend", ["local", "mpirun"])
def test_preflight_passes_the_job_python_to_the_doctor(monkeypatch, tmp_path, backend):
    seen = []

    def check(opts):
        seen.append(opts)
        return doctor.Report([], [], [], None)
    monkeypatch.setattr(doctor, "check", check)
    hf = tmp_path / "hosts"
    hf.write_text("node1\nnode2\n")
    spec = JobSpec(script="train.py", script_args=[], backend=backend, nodes=2, hostfile=str(hf),
                   python="/venv/bin/python")
    assert backend_for(backend).preflight(spec, "mpirun-20261123-120000-abcd")[0]
    assert seen[0].python == "/venv/bin/python"
    if backend == "mpirun":  # the port check listens on the job's own MASTER_PORT
        from clusterdoc.shim.env import port_from_job_id
        assert seen[0].port == port_from_job_id("mpirun-20261123-120000-abcd") and "port" in seen[0].selected()
    assert seen[0].local == (backend == "local") and seen[0].nodelist == ([] if backend == "local" else ["node1", "node2"])


SYSTEM_PY = "/usr/bin/python3"


@pytest.mark.skipif(not os.access(SYSTEM_PY, os.X_OK) or os.path.realpath(SYSTEM_PY) ==
                    os.path.realpath(sys.executable), reason="needs /usr/bin/python3 beside this python")
def test_local_check_probes_the_given_interpreter():
    facts = gather.gather_local(SYSTEM_PY, 20.0)
    assert facts["probe"] == "python" and facts["python"]["executable"] == SYSTEM_PY


def test_the_allocation_preflight_stops_a_job_on_a_node_that_lost_a_gpu(tmp_path):
    """Issue 24: the gpu and fabric checks run on the allocation's facts; a lost GPU fails the preflight."""
    from pathlib import Path

    facts = Path(__file__).parent / "facts"
    (tmp_path / "preflight").mkdir()
    for node, name in (("node1", "gpu_healthy"), ("node2", "gpu_healthy")):
        (tmp_path / "preflight" / f"{node}.json").write_text((facts / f"{name}.json").read_text())
    assert preflight.judge(tmp_path, 2) == 0
    (tmp_path / "preflight" / "node2.json").write_text((facts / "gpu_xid79_lost.json").read_text())
    assert preflight.judge(tmp_path, 2) == 1
    report = (tmp_path / "preflight.txt").read_text()
    assert "fell off the bus" in report and "FAILED: the job stops here" in report
