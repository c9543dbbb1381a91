"""shim.init() under the real cluster launchers on the one-machine test cluster: srun (real Slurm), MPICH's
mpirun and Open MPI's mpirun, one rank per node, no rank variable and no secret set by the test.

Each job (tests/shim_jobs/launched.py all): an all_reduce over four nodes, in-order logging, trigger sync, an
OOM retry, the hang watch on with the job's secret derived from the user's secret file (HOME: a fresh folder,
shared by the nodes as an NFS home is). And under srun: one rank skipping a collective is named in the hang
report, printed by the rank that saw the stall (no `clusterdoc submit` around it).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_shim_launchers import LAUNCHER_VARS
from tests.shim_helpers import parse_results

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "tests" / "shim_jobs" / "launched.py"
HANG = ROOT / "jobs" / "hang.py"
OPENMPI = "/usr/bin/mpirun.openmpi"
pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def clean_env(cluster, home, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARS)}
    env.update(cluster.env(), HOME=str(home), PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               **extra)
    return env


def check_four(proc, launcher):
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    found = sorted(parse_results(proc.stdout), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == [0, 1, 2, 3], text[-4000:]
    for r in found:
        assert (r["launcher"], r["world"], r["sum"], r["trigger"], r["batch"]) == (launcher, 4, 10.0, 2, 64), r
        assert r["watch"] and r["secret"], r
    # in order: each rank writes message i after the rank before it (the ranks' streams reach us through
    # separate connections, so the order shows in the lines' times, not in the merged output)
    logged = re.findall(r"(\d\d:\d\d:\d\d,\d{3}) INFO launched .*in-order message (\d) from rank (\d)", text)
    assert sorted((i, r) for _, i, r in logged) == [(str(i), str(r)) for i in range(2) for r in range(4)], logged
    times = [t for t, _, _ in sorted(logged, key=lambda m: (m[1], m[2]))]
    assert times == sorted(times), logged
    assert "hang watch off" not in text


def srun(*args):
    return ["srun", "-N", "4", "--ntasks-per-node=1", sys.executable, *map(str, args)]


def test_srun(cpu_cluster, tmp_path):
    proc = subprocess.run(srun(JOB, "all"), capture_output=True, text=True, timeout=300,
                          env=clean_env(cpu_cluster, tmp_path))
    check_four(proc, "slurm")


def mpich(cluster, *args):
    return cluster.mpirun_cmd("-n", "4", "-ppn", "1", sys.executable, *map(str, args))


@pytest.mark.parametrize("launcher", ["srun", "mpich"])
def test_a_rank_skipping_a_collective_is_named(cpu_cluster, tmp_path, launcher):
    cmd = srun(HANG, "--scenario", "skip", "--rank", 2) if launcher == "srun" else \
        mpich(cpu_cluster, HANG, "--scenario", "skip", "--rank", 2)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env=clean_env(cpu_cluster, tmp_path, CLUSTERDOC_HANG_TIMEOUT="4"))
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and text.count("clusterdoc: job stalled") == 1, text[-4000:]
    assert re.search(r"rank 2 +in barrier #4 +hang\.py:\d+ in skip +<- differs", text), text[-4000:]


@pytest.mark.parametrize("launcher", ["srun", "mpich"])
def test_debug_mode_fails_fast_naming_both_shapes(cpu_cluster, tmp_path, launcher):
    cmd = srun(JOB, "mismatch") if launcher == "srun" else mpich(cpu_cluster, JOB, "mismatch")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env=clean_env(cpu_cluster, tmp_path, CLUSTERDOC_DEBUG="1"))
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "RESULT" not in proc.stdout, text[-4000:]
    assert "the ranks' tensors do not agree" in text and "[4, 3]" in text and "[5, 3]" in text, text[-4000:]


def test_mpich_mpirun(cpu_cluster, tmp_path):
    proc = subprocess.run(mpich(cpu_cluster, JOB, "all"), capture_output=True, text=True, timeout=300, env=clean_env(cpu_cluster, tmp_path))
    check_four(proc, "mpich")


@pytest.mark.skipif(not (os.access(OPENMPI, os.X_OK) and shutil.which("orted")), reason="Open MPI not installed")
def test_open_mpi_mpirun(cpu_cluster, tmp_path):
    """Open MPI forwards only what -x names; the nodes' mpi4py is bound to Open MPI's library (planted)."""
    libmpi = {"env": {"MPI4PY_LIBMPI": "/usr/lib/x86_64-linux-gnu/libmpi.so.40"}}
    env = clean_env(cpu_cluster, tmp_path, MPI4PY_LIBMPI=libmpi["env"]["MPI4PY_LIBMPI"])
    cmd = [OPENMPI, "--allow-run-as-root", "--mca", "plm_rsh_agent", str(cpu_cluster.ssh_wrapper), "--hostfile",
           str(cpu_cluster.hostfile("openmpi")), "-np", "4", "--map-by", "ppr:1:node"]
    for k in ("HOME", "PYTHONPATH", "PYTHONWARNINGS", "OMP_NUM_THREADS", "MPI4PY_LIBMPI", "PATH"):
        cmd += ["-x", k]
    with cpu_cluster.planted({n.name: libmpi for n in cpu_cluster.nodes}):
        proc = subprocess.run([*cmd, sys.executable, str(JOB), "all"], capture_output=True, text=True, timeout=300,
                              env=env)
    check_four(proc, "openmpi")


def test_torchrun_c10d_rendezvous_across_two_nodes(cpu_cluster, tmp_path):
    """One torchrun per node (started over ssh, as a user does), meeting at node1 through the c10d rendezvous:
    four ranks, the agents' store joined as clients, and the hang report naming a rank on the other node."""
    from tests.shim_helpers import free_port

    def on_both(script_args, **extra):
        env = " ".join(f"{k}={v}" for k, v in dict(HOME=tmp_path, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore",
                                                    OMP_NUM_THREADS=1, **extra).items())
        cmd = (f"cd {tmp_path} && env {env} timeout 120 {Path(sys.executable).parent / 'torchrun'} --nnodes 2 "
               f"--nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint node1:{free_port()} --rdzv-id job "
               f"{script_args}")
        procs = [subprocess.Popen(["ssh", "-F", str(cpu_cluster.ssh_config), node, cmd], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for node in ("node1", "node2")]
        outs = [p.communicate(timeout=180)[0] for p in procs]
        return [p.returncode for p in procs], "".join(outs)

    codes, text = on_both(f"{JOB} all")
    assert codes == [0, 0], text[-4000:]
    found = sorted(parse_results(text), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == [0, 1, 2, 3], text[-4000:]
    assert all(r["launcher"] == "torchrun" and r["sum"] == 10.0 and r["watch"] and r["batch"] == 64 for r in found)
    assert "Address already in use" not in text and "hang watch off" not in text

    codes, text = on_both(f"{HANG} --scenario skip --rank 3", CLUSTERDOC_HANG_TIMEOUT=4)
    assert codes != [0, 0] and text.count("clusterdoc: job stalled") == 1, text[-4000:]
    assert re.search(r"rank 3 +in barrier #4 +hang\.py:\d+ in skip +<- differs", text), text[-4000:]


DEEPSPEED = "0.19.8"
# DeepSpeed's runtime requirements less torch and numpy (the venv's): pip names
DEEPSPEED_DEPS = ["einops", "hjson", "msgpack", "ninja", "packaging>=20.0", "psutil", "py-cpuinfo", "pydantic>=2.0.0",
                  "tqdm"]
PIP_TIMEOUT = 300  # each pip step; the sdist's build (python only, DS_BUILD_OPS=0) is cached by pip after the first


@pytest.fixture(scope="session")
def deepspeed_path():
    """DeepSpeed's launcher in a folder of its own under the repo's ignored .cache/ (reused by later runs), for
    PYTHONPATH: never in .venv, where it would shadow the wheel that tests/test_wheel_build.py builds and imports.
    Fails, saying why, when the install does."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    target = Path(os.environ.get("CLUSTERDOC_CACHE") or ROOT / ".cache") / f"deepspeed-launcher-{DEEPSPEED}-{tag}"
    done = target / ".clusterdoc-installed"
    if done.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(tmp)]
    env = dict(os.environ, DS_BUILD_OPS="0", PIP_NO_INPUT="1")
    steps = [
        # the sdist built against the venv's torch (no build isolation: it would fetch torch); no deps: torch
        [*pip, "--no-deps", "--no-build-isolation", f"deepspeed=={DEEPSPEED}"],
        [*pip, *DEEPSPEED_DEPS],
        [sys.executable, "-c", "import deepspeed.launcher.runner, deepspeed.launcher.launch"],
    ]
    for cmd in steps:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT, cwd=ROOT,
                               env=dict(env, PYTHONPATH=str(tmp)) if cmd[1] == "-c" else env)
        except subprocess.TimeoutExpired:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.fail(f"installing DeepSpeed {DEEPSPEED} into {tmp}: {' '.join(cmd)} ran past {PIP_TIMEOUT} s")
        if p.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.fail(f"installing DeepSpeed {DEEPSPEED} into {tmp} failed: {' '.join(cmd)} (exit "
                        f"{p.returncode}):\n{(p.stdout + p.stderr)[-4000:]}")
    done_tmp = tmp / done.name
    done_tmp.write_text(f"deepspeed {DEEPSPEED} for {sys.executable}\n")
    try:
        tmp.rename(target)  # atomic; loses to a run that got there first (then its folder is as good)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not done.exists():
            raise
    return target


def test_deepspeed_launcher_with_a_hostfile(cpu_cluster, deepspeed_path, tmp_path):
    """DeepSpeed's `deepspeed` over two nodes (pdsh over the cluster's ssh; its `ssh node hostname` check uses the
    cluster's ssh wrapper on PATH): rank 0 hosts the store, as under srun (whose test shows the hang report: the
    same path; left out here, DeepSpeed's start is slow)."""
    from tests.shim_helpers import free_port

    (tmp_path / "hostfile").write_text("node1 slots=2\nnode2 slots=2\n")
    pythonpath = f"{ROOT}:{deepspeed_path}"
    env = clean_env(cpu_cluster, tmp_path, **cpu_cluster.pdsh_env(),
                    PATH=f"{cpu_cluster.ssh_wrapper.parent}:{os.environ['PATH']}")
    env["PYTHONPATH"] = pythonpath

    def deepspeed(*args, **extra):
        # .deepspeed_env: DeepSpeed's way to pass variables to every node
        (tmp_path / ".deepspeed_env").write_text("".join(f"{k}={v}\n" for k, v in dict(
            HOME=tmp_path, PYTHONPATH=pythonpath, PYTHONWARNINGS="ignore", OMP_NUM_THREADS=1, **extra).items()))
        cmd = [sys.executable, "-m", "deepspeed.launcher.runner", "--hostfile", str(tmp_path / "hostfile"),
               "--master_addr", "node1", "--master_port", str(free_port()), *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)

    proc = deepspeed(JOB, "all")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    found = sorted(parse_results(text), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == [0, 1, 2, 3], text[-4000:]
    assert all(r["sum"] == 10.0 and r["watch"] and r["secret"] and r["trigger"] == 2 for r in found), found
    assert "hang watch off" not in text

