"""build-wheel and why through the doctor's transports on the test cluster (issue 37): with the user's key removed
from the nodes (SSH refused, as pam_slurm_adopt refuses a user without a job there), `build-wheel --dry-run` given
the nodes reads their GPUs through srun inside an `salloc` and prints the arch list they need; `why` on a failed
Slurm job (a rank SIGKILLed: the nodes are worth asking) probes the job's nodes through srun. The same keys-removed
setup as tests/test_srun_transport_cluster.py."""

import json
import os
import shlex
import subprocess
import sys
from contextlib import contextmanager, nullcontext

import pytest

from tests.cluster.fakes import BASE_PATH
from tests.test_doctor_cluster import names

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

H100 = {"model": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559, "count": 8}
KILLED = """import os, signal, sys
print("rank", os.environ.get("RANK"), "on", os.uname().nodename, flush=True)
if os.environ.get("RANK") == "1":
    os.kill(os.getpid(), signal.SIGKILL)  # no exit record: why asks the nodes
"""


def env_for(cluster, home=None):
    """The shell srun passes on to the nodes: a login's PATH there (the fake nvidia-smi, the spec's toolkit)."""
    login = dict(line.split("=", 1) for line in cluster.ssh("node1", "env").stdout.splitlines() if "=" in line)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "NCCL_", "CLUSTERDOC_", "PMI_"))}
    env.update(cluster.env(), PATH=BASE_PATH)
    env.update({k: login[k] for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME") if k in login})
    if home:
        env["HOME"] = str(home)
    return env


@contextmanager
def ssh_refused(cluster):
    keys = cluster.dir / "authorized_keys"
    saved = keys.read_text()
    keys.write_text("")  # the user's key is gone from every node: sshd refuses the login
    try:
        yield
    finally:
        keys.write_text(saved)


def test_build_wheel_reads_the_nodes_gpus_through_srun_in_an_allocation(cluster, tmp_path):
    base = [
        sys.executable,
        "-m",
        "clusterdoc",
        "build-wheel",
        "-w",
        names(cluster),
        "--ssh-config",
        str(cluster.ssh_config),
        "--dry-run",
        "--timeout",
        "20",
        "--out",
        str(tmp_path / "dist"),
        "--cache",
        str(tmp_path / "cache"),
    ]
    inner = (
        shlex.join(base)
        + f" > {tmp_path}/auto.txt 2>&1; "
        + shlex.join(base + ["--transport", "srun"])
        + f" > {tmp_path}/srun.txt 2>&1; "
        + shlex.join(base + ["--transport", "ssh"])
        + f" > {tmp_path}/ssh.txt 2>&1; "
        + shlex.join([a for a in base if a not in ("-w", names(cluster))])  # no nodes named: the allocation's
        + f" > {tmp_path}/alloc.txt 2>&1; true"
    )
    with cluster.planted({"node3": {"gpus": [H100]}}):
        env = env_for(cluster)
        with ssh_refused(cluster):
            p = subprocess.run(
                ["salloc", "-N", "4", "--quiet", "bash", "-c", inner],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
    assert p.returncode == 0, p.stderr[-3000:]
    want = "arch list: 8.0;9.0+PTX  (from nodes; GPUs: node1, node2, node4: 8.0; node3: 9.0)"
    for name in ("auto", "srun", "alloc"):
        text = (tmp_path / f"{name}.txt").read_text()
        assert "Traceback" not in text, text
        assert "(through srun: no SSH to the nodes)" in text, text
        assert want in text, text
    # --transport ssh: no srun behind its back; every node's refusal is said, nothing is derived
    ssh = (tmp_path / "ssh.txt").read_text()
    assert "through srun" not in ssh and "arch list:" not in ssh, ssh
    assert ssh.count("  FAIL  node") == 4, ssh


def test_why_probes_a_failed_jobs_nodes_through_srun(cluster, tmp_path):
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    env = env_for(cluster, tmp_path)
    run = [sys.executable, "-m", "clusterdoc"]
    res = subprocess.run(
        run
        + [
            "submit",
            "--backend",
            "slurm",
            "--nodes",
            "2",
            "--no-preflight",
            "--wait",
            "--hang-timeout",
            "0",
            str(script),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 1, res.stdout + res.stderr[-3000:]
    (jd,) = (tmp_path / "clusterdoc-jobs").iterdir()
    ranks = {json.loads((jd / f"rank{r}.start").read_text())["host"] for r in range(2)}
    with ssh_refused(cluster):
        why = subprocess.run(
            run + ["why", jd.name, "--json", "--ssh-config", str(cluster.ssh_config)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        text = subprocess.run(
            run + ["why", jd.name, "--ssh-config", str(cluster.ssh_config)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert "Traceback" not in why.stderr + text.stderr, why.stderr + text.stderr
    ev = json.loads(why.stdout)["evidence"]
    assert ev["probed"] is True and ev["probed_through"] == "srun", ev
    assert ev["unreachable"] == [] and sorted(ev["health"]) == [], ev
    assert set(ev_nodes(ev)) == ranks
    assert f"probe     gpu check on {', '.join(sorted(ranks))} through srun after the failure: no GPU problem" in (
        text.stdout
    ), text.stdout


def ev_nodes(ev: dict) -> list[str]:
    return sorted({r["host"] for r in ev["ranks"] if r.get("host")})


def tiny_wheel(folder) -> tuple:
    """A deepspeed wheel as build-wheel leaves one (its manifest inside), with no binaries: what --install --wheel
    copies, pip-installs, imports and checks on each node."""
    import zipfile

    record = {"wheel": "deepspeed-0.0.1-py3-none-any.whl", "arch_list": "8.0+PTX", "ops": ["utils"], "sha256": None}
    files = {
        "deepspeed/__init__.py": '__version__ = "0.0.1"\n',
        "deepspeed/git_version_info.py": 'installed_ops = {"utils": True}\naccelerator_name = "cuda"\n',
        "deepspeed/clusterdoc-wheel.json": json.dumps(record),
        "deepspeed-0.0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: deepspeed\nVersion: 0.0.1\n",
        "deepspeed-0.0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files["deepspeed-0.0.1.dist-info/RECORD"] = (
        "".join(f"{n},,\n" for n in files) + "deepspeed-0.0.1.dist-info/RECORD,,\n"
    )
    wheel = folder / record["wheel"]
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return wheel, record


@pytest.mark.parametrize("route", ["srun", "ssh"])
def test_build_wheel_installs_through_the_transport(cluster, tmp_path, route):
    """Through srun with the keys removed; the same install over SSH (--transport ssh, keys in place) for the
    SSH transport's run and put (SFTP)."""
    from tests.test_wheel_build import layered_venv

    wheel, record = tiny_wheel(tmp_path)
    plant = {n.name: {"python": str(layered_venv(tmp_path / f"venv-{n.name}")), "torch": None} for n in cluster.nodes}
    cmd = [sys.executable, "-m", "clusterdoc", "build-wheel", "-w", names(cluster), "--ssh-config",
           str(cluster.ssh_config), "--timeout", "30", "--install", "--wheel", str(wheel)]  # fmt: skip
    with cluster.planted(plant):
        env = env_for(cluster)
        with ssh_refused(cluster) if route == "srun" else nullcontext():
            p = subprocess.run(
                [
                    "salloc",
                    "-N",
                    "4",
                    "--quiet",
                    "bash",
                    "-c",
                    shlex.join(cmd + (["--transport", "ssh"] if route == "ssh" else []))
                    + f" > {tmp_path}/out.txt 2>&1; true",
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=400,
            )
    assert p.returncode == 0, p.stderr[-3000:]
    text = (tmp_path / "out.txt").read_text()
    assert "Traceback" not in text and ("(through srun: no SSH to the nodes)" in text) == (route == "srun"), text
    assert "installed and imported on all 4 node(s)" in text, text
    for n in cluster.nodes:
        installed = list(
            (tmp_path / f"venv-{n.name}").glob("lib/python3*/site-packages/deepspeed/clusterdoc-wheel.json")
        )
        assert installed and json.loads(installed[0].read_text()) == record, n.name
