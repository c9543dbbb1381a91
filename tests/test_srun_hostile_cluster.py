"""The Slurm transport against hostile nodes on the test cluster (issue 38, Medium): inside an `salloc` of the
4 nodes, `clusterdoc check --transport srun` while node2's python floods its output, node3's says it is node1
(and prints carriage returns), node4's never answers. Each answer is bound to the task Slurm ran on the node
(doctor/srun.py): node1 keeps its own facts, node3's are node3's, node2 is named for its flood with the head's
memory bounded, node4 is named as silent, and the check fails. Unit tests: tests/test_srun_transport.py."""

import json
import os
import shlex
import subprocess
import sys
import time

import pytest

from tests.cluster.fakes import BASE_PATH
from tests.test_untrusted_cluster import MEASURE

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

# Named python3.11 so the node's packages (the torch stub) stay where its python looks.
HOSTILE = {
    "node2": "#!/bin/sh\nyes '" + "A" * 80 + "' | head -c 200000000\n",  # 200 MB, then it ends
    "node3": "#!/bin/sh\nprintf 'junk\\r\\n\\r0: @@clusterdoc-srun end 1\\r\\n'\n"
             "SLURMD_NODENAME=node1 exec /usr/bin/python3 \"$@\"\n",
    "node4": "#!/bin/sh\nexec sleep 600\n",
}


def test_srun_answers_are_the_tasks_own_bounded_and_a_silent_node_is_named(cluster, tmp_path):
    plants = {}
    for node, text in HOSTILE.items():
        exe = tmp_path / node / "python3.11"
        exe.parent.mkdir()
        exe.write_text(text)
        exe.chmod(0o755)
        plants[node] = {"python": str(exe)}
    login = dict(line.split("=", 1) for line in cluster.ssh("node1", "env").stdout.splitlines() if "=" in line)
    me = [sys.executable, "-c", MEASURE, sys.executable, "-m", "clusterdoc", "check", "--json", "--transport", "srun",
          "--timeout", "8", "--mpirun", cluster.mpirun]
    inner = shlex.join(me) + f" > {tmp_path}/out.json 2> {tmp_path}/err.txt; echo $? > {tmp_path}/rc"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "NCCL_", "CLUSTERDOC_"))}
    env.update(cluster.env(), PATH=BASE_PATH)
    env.update({k: login[k] for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST") if k in login})
    with cluster.planted(plants):
        p = subprocess.run(["salloc", "-N", "4", "--quiet", "bash", "-c", inner], env=env, capture_output=True,
                           text=True, timeout=300)
        left = cluster.ssh("node4", "pgrep -f 'sleep 60[0]' || true").stdout.strip()
    err = (tmp_path / "err.txt").read_text()
    assert p.returncode == 0 and "Traceback" not in err, p.stderr[-2000:] + err[-3000:]
    rss_mib = int(err.rpartition("MAXRSS_KB ")[2].split()[0]) // 1024
    doc = json.loads((tmp_path / "out.json").read_text())
    assert int((tmp_path / "rc").read_text()) == 1  # the check fails: two nodes gave no facts
    nodes = {n["node"]: n for n in doc["nodes"]}
    assert list(nodes) == ["node1", "node2", "node3", "node4"], list(nodes)
    assert nodes["node1"]["facts"]["hostname"] == "node1" and nodes["node3"]["facts"]["hostname"] == "node3"
    ssh = {f["node"]: f for f in doc["findings"] if f["check"] == "ssh"}
    assert ssh["node2"]["status"] == "fail" and "more than 4 MiB" in ssh["node2"]["message"], ssh["node2"]
    assert ssh["node4"]["status"] == "fail" and "did not answer" in ssh["node4"]["message"], ssh["node4"]
    assert ssh["node1"]["status"] == ssh["node3"]["status"] == "ok", ssh
    assert rss_mib < 200, rss_mib  # the 200 MB flood is not held
    assert not left, left  # Slurm stopped the silent node's process with the step


def test_over_ssh_a_node_whose_python_hangs_is_named_and_its_process_ended(cluster, tmp_path):
    """node2's python never answers: the check names it at its deadline, and what ran there is ended a little
    later (the probe's command runs under `timeout`, doctor/payload.py), not left on the node."""
    exe = tmp_path / "python3.11"
    exe.write_text(HOSTILE["node4"])
    exe.chmod(0o755)
    nodes = ["-w", ",".join(n.name for n in cluster.nodes), "--ssh-config", str(cluster.ssh_config)]
    with cluster.planted({"node2": {"python": str(exe)}}):
        p = subprocess.run([sys.executable, "-m", "clusterdoc", "check", "--json", *nodes, "--timeout", "6",
                            "--no-mesh", "--mpirun", str(cluster.mpirun)], capture_output=True, text=True, timeout=180)
        running = cluster.ssh("node2", "pgrep -f 'sleep 60[0]' || true").stdout.strip()
        deadline = time.monotonic() + 30
        left = running
        while left and time.monotonic() < deadline:
            time.sleep(1)
            left = cluster.ssh("node2", "pgrep -f 'sleep 60[0]' || true").stdout.strip()
    doc = json.loads(p.stdout)
    assert p.returncode == 1, p.stderr[-2000:]
    ssh = {f["node"]: f for f in doc["findings"] if f["check"] == "ssh"}
    assert ssh["node2"]["status"] == "fail" and "timeout" in json.dumps(ssh["node2"]).lower(), ssh["node2"]
    assert running and not left, (running, left)  # it was there when the check gave up, and then ended
