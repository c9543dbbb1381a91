"""A user's batch script and submit's site options as one design: the command line's sbatch options reach sbatch
through optiontable.sbatch_options, the script's #SBATCH lines are read through optiontable.from_sbatch, --setup
runs in the batch shell before the script's first line (and before the preflight), --srun-option is refused, and
the association check and sbatch's refusal see the script's account, QOS and partition."""

import os
import subprocess

import pytest

from clusterdoc.errors import UsageError
from clusterdoc.jobs.folder import JobDir
from clusterdoc.launch import batchscript as bs
from clusterdoc.launch import slurm
from clusterdoc.launch.job import JobSpec
from clusterdoc.launch.options import SubmitOptions
from clusterdoc.launch.settings import batch_spec
from tests.test_sbatch_options import settings_for

SCRIPT = "#!/bin/bash\n#SBATCH -A proj2 -N 2 --mem=1G\n#SBATCH --time=UNLIMITED\nsrun python train.py\n"


def spec_of(tmp_path, text=SCRIPT, **kw):
    script = tmp_path / "job.sbatch"
    script.write_text(text)
    settings, origin = settings_for(tmp_path, kw.get("flags"), kw.get("environ"), kw.get("yaml_text"))
    return batch_spec(settings, origin, SubmitOptions(script=str(script), config=None), "slurm")


def test_every_sbatch_option_of_the_command_line_reaches_sbatch_for_a_batch_script(tmp_path):
    flags = {
        "account": "proj1",
        "mem": "500M",
        "exclusive": True,
        "reservation": "maint",
        "cpus_per_task": 4,
        "sbatch_option": ["mail-type=END", "requeue"],
    }
    spec = spec_of(tmp_path, flags=flags)
    assert spec.sbatch_args == [
        "--account=proj1",
        "--mem=500M",
        "--exclusive",
        "--cpus-per-task=4",
        "--reservation=maint",
        "--mail-type=END",
        "--requeue",
    ]
    # what the job gets is what the preflight and the record see: the flags over the script, the script elsewhere
    assert (spec.account, spec.mem, spec.nodes, spec.time, spec.exclusive) == ("proj1", "500M", 2, 0, True)


def test_the_script_s_lines_win_over_a_config_file_and_sbatch_s_variables_over_the_script(tmp_path):
    spec = spec_of(tmp_path, yaml_text="account: cfg\nqos: short\n", environ={"SBATCH_MEM_PER_NODE": "2G"})
    # the config's account loses to the script's line (not passed); its QOS fills what the script leaves unsaid;
    # SBATCH_MEM_PER_NODE wins over the script's --mem as it does in sbatch
    assert (spec.account, spec.qos, spec.mem) == ("proj2", "short", "2G")
    assert spec.sbatch_args == ["--qos=short", "--mem=2G"]


def test_the_script_s_lines_are_the_flags_mapping(tmp_path):
    r = bs.request(
        bs_file(
            tmp_path,
            "#SBATCH --mem-per-gpu=80G --reservation=r1 -c 8 --exclusive=user -t 0\n"
            "#SBATCH --mail-type=END -J x --output=%j.out\n",
        )
    )
    assert r.settings == {"mem_per_gpu": "80G", "reservation": "r1", "cpus_per_task": 8, "exclusive": True, "time": 0}
    with pytest.raises(UsageError) as e:
        bs.request(bs_file(tmp_path, "#!/bin/bash\n#SBATCH --cpus-per-task=many\n"))
    assert "is not a CPU count" in e.value.message and e.value.where.endswith("job.sbatch:2")
    with pytest.raises(UsageError, match="is not a memory size"):
        bs.request(bs_file(tmp_path, "#SBATCH --mem=\n"))


def bs_file(tmp_path, text):
    p = tmp_path / "job.sbatch"
    p.write_text(text)
    return p


@pytest.mark.parametrize("where", ["flag", "config"])
def test_srun_option_with_a_batch_script_is_refused_with_exit_2(tmp_path, where, capsys):
    from clusterdoc.cli import main

    script = bs_file(tmp_path, SCRIPT)
    if where == "flag":
        with pytest.raises(UsageError) as e:
            spec_of(tmp_path, flags={"srun_option": ["--container-image=img"]})
        assert "writes its own srun lines" in e.value.message and "script's srun line" in e.value.hint
        cwd = os.getcwd()
        try:
            os.chdir(tmp_path)
            code = main(["submit", "--backend", "slurm", "--srun-option", "mpi=pmix", str(script)])
        finally:
            os.chdir(cwd)
        assert code == 2 and "writes its own srun lines" in capsys.readouterr().err
    else:
        with pytest.raises(UsageError, match=r"\(from .*clusterdoc.yaml\): .* writes its own srun lines"):
            spec_of(tmp_path, yaml_text="srun_option: [mpi=pmix]\n")


def test_setup_with_a_script_bash_does_not_start_is_refused(tmp_path):
    with pytest.raises(UsageError, match="bash does") as e:
        spec_of(tmp_path, text=SCRIPT.replace("#!/bin/bash", "#!/bin/sh"), flags={"setup": ["module load x"]})
    assert "#!/bin/bash" in e.value.hint
    assert spec_of(
        tmp_path, text=SCRIPT.replace("#!/bin/bash", "#!/usr/bin/env bash"), flags={"setup": ["true"]}
    ).setup == ["true"]


def prelude_run(tmp_path, setup, preflight=False):
    """The job's environment made by batch_env, and a bash batch script run in it as slurmd runs it."""
    jd = JobDir(tmp_path / "job")
    jd.path.mkdir(mode=0o700, exist_ok=True)
    script = bs_file(tmp_path, '#!/bin/bash\necho "script sees ${SITE_X:-nothing}"\n')
    spec = JobSpec(script=str(script), script_args=[], backend="slurm", setup=setup, preflight=preflight)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "BASH_ENV", "CLUSTERDOC_"))}
    env = slurm.batch_env(spec, jd, environ)
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60), jd


def test_setup_lines_run_before_the_script_s_first_line_and_before_the_preflight(tmp_path):
    res, jd = prelude_run(tmp_path, ["export SITE_X=loaded"])
    assert res.returncode == 0 and res.stdout == "script sees loaded\n"
    pre = (jd.path / "pyhook" / "preflight.sh").read_text()
    assert "--judge" not in pre  # --no-preflight: the setup lines alone
    _, jd = prelude_run(tmp_path, ["export SITE_X=loaded"], preflight=True)
    pre = (jd.path / "pyhook" / "preflight.sh").read_text()
    assert pre.index("SITE_X=loaded") < pre.index("--judge")
    res, _ = prelude_run(tmp_path, ["false"])
    assert res.returncode == 4 and res.stdout == ""  # SETUP_FAILED, before the script's first line
    assert "clusterdoc: --setup line 1 failed (exit 1): false" in res.stderr


def test_no_prelude_without_setup_or_preflight(tmp_path):
    res, jd = prelude_run(tmp_path, None)
    assert res.stdout == "script sees nothing\n" and not (jd.path / "pyhook" / "preflight.sh").exists()


def test_the_association_check_and_sbatch_s_refusal_see_the_script_s_account(tmp_path, monkeypatch):
    from clusterdoc.launch import accounting, backend

    spec = spec_of(tmp_path, yaml_text="partition: debug\n", flags={"qos": "short"})
    asked = []
    monkeypatch.setattr(accounting, "check_association", lambda *a: asked.append(a))
    backend.BACKENDS["slurm"].preflight(spec, "1")
    assert asked == [("proj2", "debug", "short")]
    # sbatch's own refusal, said with the job's values: a real sbatch's words from a stand-in on PATH
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "sbatch").write_text(
        "#!/bin/sh\necho 'sbatch: error: Batch job submission failed: Invalid account or "
        "account/partition combination specified' >&2\nexit 1\n"
    )
    (bin_ / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    jd = JobDir(tmp_path / "j")
    jd.path.mkdir(mode=0o700)
    with pytest.raises(UsageError) as e:
        slurm.BatchScriptJob(spec, jd, [])
    assert "Invalid account" in e.value.message and "(--account proj2, --partition debug)" in e.value.message
    assert "--account (-A)" in e.value.hint
