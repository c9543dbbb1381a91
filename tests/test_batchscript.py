"""A user's own batch script: told from Python, its #SBATCH lines read as sbatch reads them (every form in
../shared/sbatch-forms.md), the command line over the script, bad lines named by file and line; the start-up
hook's choice of which pythons are ranks."""

import importlib.util
from pathlib import Path

import pytest

from clusterdoc import optiontable
from clusterdoc.errors import UsageError
from clusterdoc.launch import batchscript as bs

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "clusterdoc" / "rankhook" / "sitecustomize.py"


def write(tmp_path, text, name="job.sbatch"):
    p = tmp_path / name
    p.write_text(text)
    return p


def req(tmp_path, text):
    return bs.request(write(tmp_path, text))


def test_told_from_python(tmp_path):
    assert bs.is_batch_script(write(tmp_path, "#!/bin/bash\necho hi\n", "a"))
    assert bs.is_batch_script(write(tmp_path, "#!/usr/bin/env bash\nsrun hostname\n", "b"))
    assert bs.is_batch_script(write(tmp_path, "#SBATCH --nodes=2\nsrun hostname\n", "c"))
    assert not bs.is_batch_script(write(tmp_path, "#!/usr/bin/env python3\nprint(1)\n", "d.py"))
    assert not bs.is_batch_script(write(tmp_path, "import torch\n# SBATCH --nodes=2\n", "e.py"))
    assert not bs.is_batch_script(write(tmp_path, "#SBATCH --nodes=2\nimport torch\n", "f.py"))
    assert not bs.is_batch_script(ROOT / "jobs" / "train_ddp.py")
    (tmp_path / "link.sbatch").symlink_to(tmp_path / "c")  # the user's own link to their script
    assert bs.is_batch_script(tmp_path / "link.sbatch")
    assert bs.request(tmp_path / "link.sbatch").settings == {"nodes": 2}


def test_long_forms_trailing_comments_and_header(tmp_path):
    r = req(tmp_path, (
        "#!/bin/bash\n# Copyright header\n#\n\n"
        "#SBATCH --job-name=train\n\n"
        "#SBATCH --nodes=4   # four nodes, the project's\n"
        "#SBATCH --ntasks-per-node=8\t\t# one per GPU\n"
        "#SBATCH --gres=gpu:8\n"
        "#SBATCH --time 100:00:00\n"          # space form (07)
        "#SBATCH --partition=train\n"
        "#SBATCH --account=project_465000144\n"
        "#SBATCH --qos=qos_gpu-gc\n"
        "#SBATCH --constraint=a100\n"
        "#SBATCH --exclusive\n"
        "#SBATCH --mem=0\t\t# all memory\n"
        "##SBATCH --nodes=99\n"
        "# SBATCH --nodes=98\n"
        "set -euo pipefail\n"
        "#SBATCH --nodes=97\n"                 # after the first command: sbatch ignores it
    ))
    assert r.settings == {"nodes": 4, "tasks_per_node": 8, "gpus_per_node": 8, "time": 6000, "partition": "train",
                          "account": "project_465000144", "qos": "qos_gpu-gc", "constraint": "a100",
                          "exclusive": True, "mem": "0"}
    assert r.where("nodes").endswith("job.sbatch:7")


def test_several_options_on_a_line_and_short_forms(tmp_path):
    # 05: nodes, tasks/node and gpus/node together; 06: the whole request on one line
    r = req(tmp_path, "#!/bin/bash\n#SBATCH -N 2 --ntasks-per-node=4 --gpus-per-node=4\n"
            "#SBATCH -t 0:10:00 --exclusive --mem=0 --overcommit -p gpu -A six@a100 -q high -C gpu -J x -o %x-%j.out\n")
    assert r.settings == {"nodes": 2, "tasks_per_node": 4, "gpus_per_node": 4, "time": 10, "partition": "gpu",
                          "account": "six@a100", "qos": "high", "constraint": "gpu", "exclusive": True, "mem": "0"}
    r = req(tmp_path, "#SBATCH -N2 -t60 --tasks-per-node 1 --cpus-per-task 32 -D .\n")
    assert r.settings == {"nodes": 2, "tasks_per_node": 1, "time": 60, "cpus_per_task": 32}


@pytest.mark.parametrize("value, minutes", [
    ("30", 30), ("0:10:00", 10), ("00:05:00", 5), ("01:59:00", 119), ("48:00:00", 2880), ("100:00:00", 6000),
    ("10:30", 11), ("1-0", 1440), ("1-2:30", 1590), ("2-00:00:01", 2881), ("UNLIMITED", 0), ("infinite", 0),
    ("0", 0), ("0:00:00", 0),
])
def test_time_formats(tmp_path, value, minutes):
    # a script's time limit as sbatch takes it (UNLIMITED and 0: no limit), through the flags' own reading
    assert req(tmp_path, f"#SBATCH --time={value}\n").settings["time"] == minutes
    assert optiontable.slurm_minutes(value, unlimited=True) == minutes


def test_gpus_forms(tmp_path):
    assert req(tmp_path, "#SBATCH --gres=gpu:a100:4\n").settings["gpus_per_node"] == 4
    assert req(tmp_path, "#SBATCH --gres=gpu\n").settings["gpus_per_node"] == 1
    assert req(tmp_path, "#SBATCH --gpus-per-node=a100:8\n").settings["gpus_per_node"] == 8
    # 01: 4 tasks x 8 GPUs per task over 4 nodes
    r = req(tmp_path, "#SBATCH --nodes=4\n#SBATCH --ntasks=4\n#SBATCH --gpus-per-task=8\n")
    assert (r.settings["tasks_per_node"], r.settings["gpus_per_node"]) == (1, 8)
    assert req(tmp_path, "#SBATCH --nodes=2-4\n").settings["nodes"] == 2


@pytest.mark.parametrize("line, said", [
    ("#SBATCH --nodes=two", "--nodes: 'two' is not a node count"),
    ("#SBATCH -N", "-N needs a value"),
    ("#SBATCH --time=soon", "is not a time limit"),
    ("#SBATCH --gres=gpu:a100:x", "is not a generic resource"),
    ("#SBATCH --account=<account>", "a placeholder left in the script"),
    ("#SBATCH --nodes=2 four", "expected an option"),
    ("#SBATCH -Z 3", "unknown option '-Z'"),
    ('#SBATCH --job-name="unbalanced', "unbalanced quotes"),
    ("#SBATCH --nodes=3 --ntasks=4", "Slurm would spread them unevenly"),
])
def test_bad_lines_name_file_and_line(tmp_path, line, said):
    with pytest.raises(UsageError) as e:
        req(tmp_path, f"#!/bin/bash\n# header\n{line}\nsrun true\n")
    assert said in e.value.message
    assert e.value.where.endswith("job.sbatch:3")


def test_command_line_overrides_the_script(tmp_path):
    r = req(tmp_path, "#SBATCH --nodes=4\n#SBATCH --partition=train\n#SBATCH --time=1:00:00\n")
    settings = {"nodes": 2, "partition": "debug", "time": 60, "tasks_per_node": None, "gpus_per_node": 2}
    origin = {"nodes": "flag", "partition": "/home/u/clusterdoc.yaml", "time": "default",
              "tasks_per_node": "default", "gpus_per_node": "CLUSTERDOC_GPUS_PER_NODE"}
    merged, args = bs.merge(settings, origin, r)
    # the flag and the variable win (on sbatch's command line); the script wins over a config file and a default
    assert (merged["nodes"], merged["partition"], merged["time"], merged["gpus_per_node"]) == (2, "train", 60, 2)
    assert args == ["--nodes=2", "--gpus-per-node=2"]
    # a config file fills what the script leaves unsaid, on sbatch's command line too (the job gets it)
    r = req(tmp_path, "#SBATCH --time=1:00:00\n")
    merged, args = bs.merge(settings, {**origin, "nodes": "/home/u/clusterdoc.yaml", "gpus_per_node": "default"}, r)
    assert (merged["nodes"], merged["partition"]) == (2, "debug")
    assert args == ["--nodes=2", "--partition=debug"]


def _hook():
    spec = importlib.util.spec_from_file_location("hook_under_test", HOOK)
    mod = importlib.util.module_from_spec(spec)
    src = HOOK.read_text().rsplit("try:  # the site's own first", 1)[0]  # the functions, not the start-up call
    exec(compile(src, str(HOOK), "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("argv, env, rank", [
    (["py", "train.py"], {"SLURM_STEP_ID": "0", "SLURM_PROCID": "3", "SLURM_NTASKS": "4"}, 3),  # srun python
    (["py", "serve.py"], {"SLURM_STEP_ID": "1", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, None),  # a 1-task step
    (["py", "t.py"], {"SLURM_STEP_ID": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "1", "RANK": "0"}, 0),
    (["py", "-u", "train.py", "--lr", "1"], {"RANK": "5", "SLURM_PROCID": "0"}, 5),  # torchrun's worker
    (["py", "-m", "pkg.train"], {"RANK": "1"}, 1),
    (["py", "-um", "pkg.train"], {"RANK": "1"}, 1),
    (["py", "-W", "ignore", "t.py"], {"RANK": "2"}, 2),
    (["py", "/v/bin/torchrun", "--nproc_per_node", "2", "t.py"], {"SLURM_STEP_ID": "0", "SLURM_PROCID": "0"}, None),
    (["py", "-m", "torch.distributed.run", "t.py"], {"SLURM_STEP_ID": "0", "SLURM_PROCID": "0"}, None),
    (["py", "/v/bin/accelerate", "launch", "t.py"], {"SLURM_STEP_ID": "0", "SLURM_PROCID": "1"}, None),
    (["py", "-c", "from multiprocessing.spawn import spawn_main"], {"RANK": "1"}, None),
    (["py", "t.py"], {"RANK": "1", "CLUSTERDOC_RANK_PID": "99"}, None),   # a rank's child
    (["py", "t.py"], {"SLURM_PROCID": "0"}, None),                        # the batch shell's own python
    (["py", "-m", "clusterdoc.launch.preflight"], {"SLURM_STEP_ID": "0", "SLURM_PROCID": "0"}, None),
])
def test_which_pythons_are_ranks(argv, env, rank):
    assert _hook().rank_of({"CLUSTERDOC_BATCH_DIR": "/j", **env}, argv) == rank
    assert _hook().rank_of(env, argv) is None  # not a clusterdoc job: nothing


def test_a_batch_script_on_a_backend_without_sbatch_is_a_usage_error_not_a_python_run(tmp_path):
    from clusterdoc.launch.options import SubmitOptions
    from clusterdoc.launch.settings import resolve

    script = write(tmp_path, "#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py\n")
    with pytest.raises(UsageError) as e:
        resolve(SubmitOptions(script=str(script), backend="local", config=None))
    assert "is a batch script" in e.value.message and "--backend slurm" in e.value.hint


def hook_env(tmp_path, **extra):
    import os
    import shutil

    hook = tmp_path / "pyhook"
    hook.mkdir(exist_ok=True)
    shutil.copy(HOOK, hook / "sitecustomize.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "RANK", "PMI_", "OMPI_"))}
    env.update(PYTHONPATH=f"{hook}{os.pathsep}{ROOT}", PYTHONWARNINGS="ignore", **extra)
    return env


def test_the_hook_runs_the_site_s_own_sitecustomize_and_nothing_else_outside_a_job(tmp_path):
    import subprocess
    import sys

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.stderr.write('site customized\\n')\n")
    env = hook_env(tmp_path)
    env["PYTHONPATH"] += f"{__import__('os').pathsep}{site}"
    res = subprocess.run([sys.executable, "-c", "print('main')"], env=env, capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (0, "main\n", "site customized\n")


@pytest.mark.slow
def test_a_rank_runs_under_the_shim_with_its_records_exit_code_and_atexit(tmp_path):
    import json
    import socket
    import subprocess
    import sys

    job = tmp_path / "job"
    job.mkdir(mode=0o700)
    (tmp_path / "train.py").write_text(
        "import atexit, sys\n"
        "import torch.distributed as dist\n"
        "atexit.register(lambda: print('atexit ran', flush=True))\n"
        "print('world', dist.get_world_size(), 'argv', sys.argv[1:], flush=True)\n"  # the shim made the group
        "sys.exit(int(sys.argv[1]))\n"
    )
    for code in (0, 3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = hook_env(tmp_path, CLUSTERDOC_BATCH_DIR=str(job), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0",
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        res = subprocess.run([sys.executable, "-u", "train.py", str(code)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=180)
        assert res.returncode == code, res.stderr
        out = (job / "rank0.out").read_text()
        assert f"world 1 argv ['{code}']" in out, out + (job / "rank0.err").read_text()
        assert out.count("world 1") == 1  # the script ran once, not again after the hook
        assert json.loads((job / "rank0.exit").read_text())["code"] == code
        assert json.loads((job / "rank0.start").read_text())["world"] == "1"
        assert ("atexit ran" in out) == (code == 0)  # a failed rank leaves at once, as under clusterdoc.run
        (job / "rank0.out").unlink()


def test_the_job_s_environment_drops_the_submitter_s_own_place_and_chains_bash_env(tmp_path):
    from clusterdoc.jobs.folder import JobDir
    from clusterdoc.launch import slurm
    from clusterdoc.launch.job import JobSpec

    jd = JobDir(tmp_path / "job")
    jd.path.mkdir(mode=0o700)
    spec = JobSpec(script=str(tmp_path / "job.sbatch"), script_args=[], backend="slurm", nodes=2)
    inside_a_step = {"SLURM_STEP_ID": "0", "SLURM_STEPID": "0", "SLURM_PROCID": "0", "SLURM_JOB_ID": "7",
                     "RANK": "0", "PYTHONPATH": "/mine", "BASH_ENV": "/usr/share/lmod/lmod/init/bash", "HOME": "/h"}
    slurm.batch_env(spec, jd, inside_a_step)
    env = slurm.batch_env(spec, jd, inside_a_step)  # each attempt (--retries) makes it again
    for name in ("SLURM_STEP_ID", "SLURM_STEPID", "SLURM_PROCID", "RANK"):
        assert name not in env
    assert (env["SLURM_JOB_ID"], env["HOME"], env["CLUSTERDOC_BATCH_DIR"]) == ("7", "/h", str(jd.path))
    assert env["PYTHONPATH"] == f"{jd.path / 'pyhook'}:/mine"
    assert (jd.path / "pyhook" / "sitecustomize.py").read_text() == HOOK.read_text()
    # clusterdoc alone, for a rank's python without it: the package, not the environment it is installed in
    assert env["CLUSTERDOC_PACKAGE_ROOT"] == str(jd.path / "pyhook" / "lib")
    assert [p.name for p in (jd.path / "pyhook" / "lib").iterdir()] == ["clusterdoc"]
    assert (jd.path / "pyhook" / "lib" / "clusterdoc" / "run.py").is_file()
    pre = (jd.path / "pyhook" / "preflight.sh").read_text()
    assert env["BASH_ENV"] == str(jd.path / "pyhook" / "preflight.sh")
    assert "--judge" in pre and "|| exit 3" in pre and pre.endswith(". /usr/share/lmod/lmod/init/bash\n")


def test_the_batch_script_job_sets_every_attribute_a_slurm_job_polls_with():
    """BatchScriptJob submits with sbatch itself, so it sets SlurmJob's state by hand: what SlurmJob.__init__ sets
    (now or after a change there), it must set too, or its poll fails half-way through a real job."""
    import ast
    import inspect
    import textwrap

    from clusterdoc.launch import slurm

    def assigned(cls):
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
        return {t.attr for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
                for t in (t.elts if isinstance(t, ast.Tuple) else [t])
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}

    assert assigned(slurm.SlurmJob) - assigned(slurm.BatchScriptJob) == set()
