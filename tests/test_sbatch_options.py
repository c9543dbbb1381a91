"""The sbatch options a site needs (issue 42): the option table's rows with an sbatch name reach the batch script
through one generic route (optiontable.sbatch_options -> slurm.submitit_parameters -> submitit's script), sbatch's
own SBATCH_* variables are a layer of the settings and never overrule a flag, --sbatch-option / --srun-option are
checked, --setup lines run before the preflight and the ranks, and sbatch's refusals say what to do. The refusal
texts are Slurm 22.05's own, as sbatch printed them on the site test cluster."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from submitit.slurm.slurm import _make_sbatch_string

from clusterdoc import cli, config, optiontable
from clusterdoc.errors import UsageError
from clusterdoc.launch import refusal, setup, slurm
from clusterdoc.launch.settings import build_spec


def settings_for(tmp_path, flags=None, environ=None, yaml_text=None):
    home = tmp_path / "home"
    (home / ".config/clusterdoc").mkdir(parents=True, exist_ok=True)
    if yaml_text is not None:
        (tmp_path / "clusterdoc.yaml").write_text(yaml_text)
    return config.resolve(flags or {}, environ=environ or {}, cwd=tmp_path, home=home)


def spec_for(tmp_path, backend="slurm", **kw):
    script = tmp_path / "train.py"
    script.write_text("")
    settings, _ = settings_for(tmp_path, kw.pop("flags", kw), kw.pop("environ", None))
    return build_spec(settings, str(script), [], backend)


class FakeJobDir:
    def __init__(self, path: Path):
        self.path = path


def batch_script(tmp_path, spec, preflight=True) -> tuple[str, list[str]]:
    jd = tmp_path / "job"
    jd.mkdir(exist_ok=True)
    params, unset = slurm.batch_parameters(spec, FakeJobDir(jd), preflight)
    return _make_sbatch_string(command="RANK-COMMAND", folder=str(tmp_path / "sub"), **params), unset


def test_the_site_options_parse_on_the_command_line_with_sbatch_s_short_letters():
    ns = cli.build_parser().parse_args(
        ["submit", "-A", "proj1", "-q", "normal", "-C", "a100&ib", "-c", "8", "--mem", "0", "--exclusive",
         "--sbatch-option", "mail-type=END", "--sbatch-option", "requeue", "--srun-option=--mpi=pmix",
         "--setup", "module load cuda/12.4", "--setup", "export A=1", "train.py"]
    )  # fmt: skip
    given = optiontable.from_args(ns)
    assert (given["account"], given["qos"], given["constraint"], given["cpus_per_task"]) == ("proj1", "normal",
                                                                                              "a100&ib", 8)
    assert given["exclusive"] is True and given["mem"] == "0"
    assert given["sbatch_option"] == ["mail-type=END", "requeue"] and given["srun_option"] == ["--mpi=pmix"]
    assert given["setup"] == ["module load cuda/12.4", "export A=1"]


def test_every_sbatch_row_reaches_the_batch_script_through_one_route(tmp_path):
    spec = spec_for(tmp_path, account="proj1", qos="normal", constraint="fast", mem="64G", mem_per_gpu="8G",
                    exclusive=True, cpus_per_task=4, reservation="maint", partition="gpu", nodes=2, gpus_per_node=2,
                    sbatch_option=["mail-type=END", "--requeue"], srun_option=["--mpi=pmix", "container-image=img"])
    text, _ = batch_script(tmp_path, spec)
    lines = text.splitlines()
    for line in ("--account=proj1", "--qos=normal", "--constraint=fast", "--mem=64G", "--mem-per-gpu=8G",
                 "--exclusive", "--cpus-per-task=4", "--reservation=maint", "--partition=gpu", "--nodes=2",
                 "--ntasks-per-node=2", "--gpus-per-node=2", "--time=60", "--mail-type=END", "--requeue",
                 "--signal=B:USR1@90"):
        assert lines.count(f"#SBATCH {line}") == 1, (line, text)
    # every row with an sbatch name is one the script gets: nothing but the table says which option is which
    for o in optiontable.OPTIONS:
        if o.sbatch:
            assert any(ln.startswith(f"#SBATCH --{o.sbatch}") for ln in lines), o.key
    srun = [ln for ln in lines if ln.startswith("srun ")]
    assert srun and srun[0].endswith("--kill-on-bad-exit=1 --mpi=pmix --container-image=img RANK-COMMAND")
    # the preflight's probe gets the ranks' srun options too
    (pre,) = [ln for ln in lines if "clusterdoc.launch.preflight" in ln]
    assert "--srun-option=--mpi=pmix --srun-option=--container-image=img || exit 3" in pre


def test_nothing_asked_writes_nothing_and_no_gpus_write_no_gpu_option(tmp_path):
    text, _ = batch_script(tmp_path, spec_for(tmp_path), preflight=False)
    for name in ("account", "qos", "constraint", "mem", "exclusive", "cpus-per-task", "reservation", "gpus-per-node",
                 "partition"):
        assert f"#SBATCH --{name}" not in text, name


def test_submitit_parameters_uses_submitit_s_names_and_passes_the_rest():
    params = slurm.submitit_parameters({"nodes": 2, "ntasks-per-node": 4, "account": "a", "exclusive": True,
                                        "reservation": "r", "mail-type": "END"})
    assert params["nodes"] == 2 and params["ntasks_per_node"] == 4  # submitit counts the tasks from these
    assert params["account"] == "a" and params["exclusive"] is True
    assert params["mail_type"] == "END" and params["additional_parameters"] == {"reservation": "r"}


@pytest.mark.parametrize(
    "given, refused, fix",
    [
        ("nodes=3", "clusterdoc sets sbatch's --nodes itself", "use --nodes"),
        ("--output=x.log", "sets sbatch's --output itself", "--folder"),
        ("exclude=node3", "sets sbatch's --exclude itself", "--retries"),
        ("tasks-per-node=2", "sets sbatch's --ntasks-per-node itself", "--tasks-per-node"),
        ("account=proj1", "sbatch's --account is a submit option of its own", "use --account proj1"),
        ("exclusive", "sbatch's --exclusive is a submit option of its own", "use --exclusive"),
        ("mail type=END", "expected KEY=VALUE", "mail-type=END"),
        ("-A=x", "expected KEY=VALUE", ""),
        ("=x", "expected KEY=VALUE", ""),
    ],
)
def test_a_bad_sbatch_option_is_refused_with_the_fix(tmp_path, given, refused, fix):
    with pytest.raises(UsageError) as err:
        spec_for(tmp_path, sbatch_option=[given])
    assert refused in err.value.message and fix in err.value.hint, str(err.value)


def test_no_setting_can_add_a_line_to_the_batch_script(tmp_path):
    for key, value in (("comment=x\ntouch pwned #", "sbatch_option"), ("proj1\ntouch pwned", "account")):
        with pytest.raises(UsageError, match="must be one line"):
            spec_for(tmp_path, **{value: [key] if value == "sbatch_option" else key})
    with pytest.raises(UsageError, match="CLUSTERDOC_ACCOUNT must be one line"):
        settings_for(tmp_path, environ={"CLUSTERDOC_ACCOUNT": "a\rb"})


def test_srun_options_are_checked_and_refused_where_no_srun_starts_the_ranks(tmp_path):
    assert optiontable.srun_option("mpi=pmix") == "--mpi=pmix" and optiontable.srun_option("-l") == "-l"
    for bad, said in (("--output=x", "sets the ranks' srun --output itself"), ("--kill-on-bad-exit=0", "itself"),
                      ("--", "expected an srun option")):
        with pytest.raises(UsageError, match=said):
            optiontable.srun_option(bad)
    (tmp_path / "hosts").write_text("node1\n")
    for backend, extra in (("local", {}), ("mpirun", {"hostfile": str(tmp_path / "hosts")})):
        with pytest.raises(UsageError, match=f"the {backend} backend starts no srun"):
            spec_for(tmp_path, backend=backend, srun_option=["--mpi=pmix"], **extra)


def test_sbatch_s_own_variables_are_a_layer_below_ours_and_above_the_files(tmp_path):
    env = {"SBATCH_ACCOUNT": "envacct", "SBATCH_TIMELIMIT": "1:30:00", "SBATCH_EXCLUSIVE": "",
           "SBATCH_MEM_PER_NODE": "32G", "SBATCH_CONSTRAINT": "fast", "SBATCH_PARTITION": "gpu", "SBATCH_QOS": "hi",
           "SBATCH_RESERVATION": "r1", "SBATCH_MEM_PER_GPU": "8G", "SBATCH_GPUS_PER_NODE": "2"}
    s, origin = settings_for(tmp_path, environ=env, yaml_text="account: fromfile\ntime: 5\n")
    assert (s["account"], origin["account"]) == ("envacct", "SBATCH_ACCOUNT")
    assert (s["time"], origin["time"]) == (90, "SBATCH_TIMELIMIT")  # not the default 60, not the file's 5
    assert s["exclusive"] is True and s["mem"] == "32G" and s["constraint"] == "fast" and s["partition"] == "gpu"
    assert (s["qos"], s["reservation"], s["mem_per_gpu"], s["gpus_per_node"]) == ("hi", "r1", "8G", 2)
    s, origin = settings_for(tmp_path, environ={**env, "CLUSTERDOC_ACCOUNT": "ours"})
    assert (s["account"], origin["account"]) == ("ours", "CLUSTERDOC_ACCOUNT")
    s, origin = settings_for(tmp_path, flags={"account": "flag"}, environ=env)
    assert (s["account"], origin["account"]) == ("flag", "flag")
    s, _ = settings_for(tmp_path, environ={"SBATCH_EXCLUSIVE": "user"})  # a form our switch cannot say: sbatch's
    assert s["exclusive"] is False
    # what clusterdoc cannot read is sbatch's to judge: left to it, not an error here (nor in a rank)
    for name, value in (("SBATCH_TIMELIMIT", "UNLIMITED"), ("SBATCH_TIMELIMIT", "soon"), ("SBATCH_MEM_PER_NODE", "x")):
        s, origin = settings_for(tmp_path, environ={name: value})
        assert "SBATCH" not in " ".join(origin.values())
        assert slurm.unset_for_sbatch({"time": 60}, {name: value}) == []  # the default does not overrule it
    assert slurm.unset_for_sbatch({"time": 30}, {"SBATCH_TIMELIMIT": "UNLIMITED"}) == ["SBATCH_TIMELIMIT"]


def test_sbatch_runs_without_the_variables_that_would_overrule_the_script(tmp_path, monkeypatch):
    monkeypatch.setenv("SBATCH_ACCOUNT", "envacct")
    monkeypatch.setenv("SBATCH_OUTPUT", "/elsewhere/%j.out")
    monkeypatch.setenv("SBATCH_QOS", "hi")
    monkeypatch.delenv("SBATCH_RESERVATION", raising=False)
    spec = spec_for(tmp_path, account="flagacct", environ=dict(os.environ))
    text, unset = batch_script(tmp_path, spec)
    assert "#SBATCH --account=flagacct" in text and "#SBATCH --qos=hi" in text  # the flag, then SBATCH_QOS
    assert unset == ["SBATCH_ACCOUNT", "SBATCH_OUTPUT", "SBATCH_QOS"]
    ex = slurm._Executor(folder=tmp_path / "sub", python="python3")
    ex.unset = unset
    argv = ex._make_submission_command(tmp_path / "x.sh")
    assert argv[:4] == ["env", "--unset=SBATCH_ACCOUNT", "--unset=SBATCH_OUTPUT", "--unset=SBATCH_QOS"]
    assert argv[-2:] == ["sbatch", str(tmp_path / "x.sh")]
    # what clusterdoc read as a layer goes even where its value is not written (CLUSTERDOC_EXCLUSIVE=0 wins);
    # a form left to sbatch stays
    assert slurm.unset_for_sbatch({}, {"SBATCH_EXCLUSIVE": "", "HOME": "/"}) == ["SBATCH_EXCLUSIVE"]
    assert slurm.unset_for_sbatch({}, {"SBATCH_EXCLUSIVE": "user"}) == []
    # and `env --unset` really leaves the variable out
    out = subprocess.run([*argv[:4], "sh", "-c", 'echo "${SBATCH_ACCOUNT-unset}"'], capture_output=True, text=True)
    assert out.stdout.strip() == "unset"


@pytest.mark.parametrize(
    "text, minutes",
    [("90", 90), ("0:30", 1), ("10:00", 10), ("1:30:00", 90), ("00:10:00", 10), ("2-0", 2880), ("1-2:30", 1590),
     ("1-00:00:30", 1441), ("48:00:00", 2880)],
)
def test_slurm_time_forms_in_minutes(text, minutes):
    assert optiontable.slurm_minutes(text) == minutes


def test_slurm_time_refuses_what_has_no_minutes():
    for bad in ("UNLIMITED", "1h", "", "1:2:3:4", "-5"):
        with pytest.raises(ValueError):
            optiontable.slurm_minutes(bad)


def test_a_batch_script_s_options_map_to_the_same_settings():
    got = optiontable.from_sbatch({"-A": "proj1", "--qos": "high", "-C": "a100", "--time": "48:00:00", "-N": "4",
                                   "--ntasks-per-node": "8", "--exclusive": True, "--mem": "0", "-c": "6",
                                   "--mail-type": "END", "--output": "%x-%j.out", "--requeue": True,
                                   "--tasks-per-node": "8"})
    assert got == {"account": "proj1", "qos": "high", "constraint": "a100", "time": 2880, "nodes": 4,
                   "tasks_per_node": 8, "exclusive": True, "mem": "0", "cpus_per_task": 6,
                   "sbatch_option": ["mail-type=END", "requeue"]}
    assert optiontable.from_sbatch({"--gpus-per-node": "a100:4"}) == {"gpus_per_node": 4}
    with pytest.raises(ValueError):
        optiontable.from_sbatch({"--nodes": "2-4"})  # a range: no one count


def test_repeatable_settings_from_yaml_lists_and_lines_of_the_variable(tmp_path):
    s, origin = settings_for(tmp_path, yaml_text="setup:\n  - module load cuda/12.4\n  - export A=1\n"
                                                 "srun-option: --mpi=pmix\n")
    assert s["setup"] == ["module load cuda/12.4", "export A=1"] and s["srun_option"] == ["--mpi=pmix"]
    s, origin = settings_for(tmp_path, environ={"CLUSTERDOC_SETUP": "module load a\n\nmodule load b\n"})
    assert s["setup"] == ["module load a", "module load b"] and origin["setup"] == "CLUSTERDOC_SETUP"
    with pytest.raises(UsageError, match=r"clusterdoc.yaml:1: key 'setup' must be a list of strings"):
        settings_for(tmp_path, yaml_text="setup:\n  - {a: 1}\n")
    with pytest.raises(UsageError, match=r"clusterdoc.yaml:1: key 'account' must be a string, not a list"):
        settings_for(tmp_path, yaml_text="account: [a, b]\n")


# --- setup lines ---------------------------------------------------------------------------------------------


def run_wrapped(lines, program):
    return subprocess.run(setup.wrap_argv(lines, program), capture_output=True, text=True, timeout=30,
                          env={**os.environ, "BASH_ENV": ""})


def test_setup_lines_run_before_the_program_in_its_own_process():
    res = run_wrapped(["export A=1 # a comment does not hide the check", "B=$((A + 1)); export B"],
                      [sys.executable, "-c", "import os; print(os.environ['A'], os.environ['B'], os.getpid())"])
    assert res.returncode == 0, res.stderr
    a, b, _pid = res.stdout.split()
    assert (a, b) == ("1", "2")


def test_a_failing_setup_line_stops_before_the_program_and_says_which():
    res = run_wrapped(["true", "false # comment", "echo never"], ["sh", "-c", "echo ran"])
    assert res.returncode == setup.SETUP_FAILED and "ran" not in res.stdout and "never" not in res.stdout
    assert "clusterdoc: --setup line 2 failed (exit 1): false # comment" in res.stderr


def test_a_user_line_is_run_as_written_and_never_mixed_with_the_job_s_values(tmp_path):
    odd = tmp_path / "it's $(touch pwned) a dir"
    odd.mkdir()
    res = run_wrapped(["X='a b'; export X"], ["sh", "-c", 'echo "$X|$0"', str(odd)])
    assert res.stdout.strip() == f"a b|{odd}" and not (Path.cwd() / "pwned").exists()


def test_module_init_only_where_a_line_uses_module():
    assert setup.script_lines(["export A=1"])[0].startswith("eval ")
    assert "lmod/init/bash" in setup.script_lines(["module load cuda/12.4"])[0]
    assert "lmod/init/bash" in setup.script_lines(["ml purge"])[0]
    assert "lmod/init/bash" not in setup.script_lines(["export MODULE=1; echo modules"])[0]
    assert all("\n" not in ln for ln in setup.script_lines(["module load a", "export B=2"]))


@pytest.mark.parametrize("line, said", [("if true; then", "not a complete shell command"),
                                        ("echo 'open", "not a complete shell command"),
                                        ("a\nb", "must be one line")])
def test_an_incomplete_setup_line_is_refused_before_anything_is_submitted(tmp_path, line, said):
    with pytest.raises(UsageError, match=said):
        spec_for(tmp_path, backend="local", setup=[line])


def test_slurm_runs_the_setup_lines_before_the_preflight_and_the_ranks_and_local_ranks_after_them(tmp_path):
    spec = spec_for(tmp_path, setup=["module load cuda/12.4"])
    lines = batch_script(tmp_path, spec)[0].splitlines()
    at = {k: next(i for i, ln in enumerate(lines) if k in ln) for k in ("lmod/init", "eval 'module load cuda/12.4'",
                                                                       "clusterdoc.launch.preflight", "srun()", "srun ")}
    assert list(at.values()) == sorted(at.values()), at
    assert spec.rank_command(tmp_path, setup=False)[0] == spec.python  # Slurm: the batch script ran them
    local = spec_for(tmp_path, backend="local", setup=["export A=1"])
    argv = local.rank_command(tmp_path)
    assert argv[:2] == ["bash", "-c"] and argv[3] == setup.NAME and argv[4:6] == [local.python, "-m"]


# --- sbatch's refusals, with the fix ----------------------------------------------------------------------------

ACCOUNT = "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified"
FEATURE = "sbatch: error: Batch job submission failed: Invalid feature specification"
QOS_POLICY = ("sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, "
              "user's size and/or time limits)")
QOS = "sbatch: error: Batch job submission failed: Invalid qos specification"
UNKNOWN = "sbatch: unrecognized option '--nosuch-opt=1'\nTry \"sbatch --help\" for more information"


@pytest.fixture
def site(monkeypatch):
    from clusterdoc.jobs import slurmcmd

    from clusterdoc.launch.accounting import Assoc

    monkeypatch.setattr(refusal.accounting, "associations", lambda user=None: [
        Assoc("site", "proj1", "", ("normal", "short")), Assoc("site", "root", "", ("normal",))])
    monkeypatch.setattr(slurmcmd, "node_features", lambda: {"fast": "node[1-2]", "slow": "node3"})
    monkeypatch.setattr(slurmcmd, "qos_limits", lambda name: {"MaxWall": "00:10:00", "MaxTRESPerJob": "node=1"})


def test_sbatch_s_refusals_say_what_to_do(tmp_path, site):
    spec = spec_for(tmp_path, account="proj2", constraint="nosuch", qos="short", nodes=2)
    err = refusal.sbatch_refused(ACCOUNT, spec)
    assert "Invalid account" in err.message and "(--account proj2)" in err.message
    assert err.hint == "your accounts: proj1, root; pass one with --account (-A)"
    err = refusal.sbatch_refused(FEATURE, spec)
    assert "(--constraint nosuch)" in err.message
    assert err.hint == "the nodes' features: fast: node[1-2]; slow: node3; pass one of them with --constraint (-C)"
    err = refusal.sbatch_refused(QOS_POLICY, spec)
    assert err.message.endswith("(--qos short): --nodes 2 is over its MaxTRESPerJob node=1; "
                                "--time 60 is over its MaxWall 00:10:00 (10 min)")
    assert err.hint.startswith("the QOS your associations allow: normal, short;")
    err = refusal.sbatch_refused(QOS, spec)
    assert "Invalid qos specification (--qos short)" in err.message and ": --nodes" not in err.message
    err = refusal.sbatch_refused(UNKNOWN, spec)
    assert err.message == "sbatch refused the job: sbatch: unrecognized option '--nosuch-opt=1'"
    assert "--sbatch-option" in err.hint


def test_a_refusal_without_accounting_or_features_still_says_what_to_do(tmp_path, monkeypatch):
    from clusterdoc.jobs import slurmcmd

    monkeypatch.setattr(refusal.accounting, "associations", lambda user=None: None)
    monkeypatch.setattr(slurmcmd, "node_features", lambda: {})
    spec = spec_for(tmp_path, constraint="a100")
    assert "sacctmgr show assoc user=$USER" in refusal.sbatch_refused(ACCOUNT, spec).hint
    assert refusal.sbatch_refused(FEATURE, spec).hint.startswith("no node has a feature")


def test_qos_limits_exceeded_in_words():
    limits = {"MaxWall": "1-00:00:00", "MaxTRESPerJob": "cpu=64,node=4"}
    assert refusal.qos_exceeded(limits, 4, 1440) == []
    assert refusal.qos_exceeded(limits, 5, 1441) == ["--nodes 5 is over its MaxTRESPerJob node=4",
                                                   "--time 1441 is over its MaxWall 1-00:00:00 (1440 min)"]
    assert refusal.qos_exceeded({}, 100, 100000) == []


def test_a_request_no_set_of_nodes_fits_names_the_features_and_their_counts(tmp_path, site):
    config_refused = "sbatch: error: Batch job submission failed: Requested node configuration is not available"
    err = refusal.sbatch_refused(config_refused, spec_for(tmp_path, nodes=3, constraint="fast"))
    assert err.message.endswith("Requested node configuration is not available (--nodes 3, --constraint fast)")
    assert err.hint.startswith("the nodes' features: fast: node[1-2] (2); slow: node3 (1); ask for no more nodes")
    err = refusal.sbatch_refused(config_refused, spec_for(tmp_path, nodes=1, mem="900G"))
    assert err.hint.startswith("compare --nodes, --gpus-per-node, --mem, --cpus-per-task with sinfo")


def test_a_refused_reservation_points_at_the_reservations(tmp_path, site):
    said = "sbatch: error: Batch job submission failed: Requested reservation is invalid"
    err = refusal.sbatch_refused(said, spec_for(tmp_path, reservation="nosuch"))
    assert err.message.endswith("Requested reservation is invalid (--reservation nosuch)")
    assert "scontrol show reservation" in err.hint


@pytest.mark.slow
def test_local_ranks_and_their_preflight_run_after_the_setup_lines(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import os\nprint('setup:', os.environ.get('SETUPX'), os.environ.get('CLUSTERDOC_ATTEMPT'))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "SBATCH_"))}
    env.update(HOME=str(tmp_path), BASH_ENV="")
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "2",
                          "--setup", "export SETUPX=yes # set by the user's line", str(script)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert sorted(re.findall(r"\[rank (\d)\] setup: (\S+) (\S+)", out)) == [("0", "yes", "1"), ("1", "yes", "1")], out
    assert "preflight (this machine):" in out
    # the preflight's probe runs under the same lines: one that fails there stops the job before any rank
    marker = tmp_path / "not-here"
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--setup",
                          f"test -e {marker}", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert res.returncode == 2 and "[rank" not in res.stdout + res.stderr, res.stderr
    assert f"the preflight stopped at a setup line: --setup line 1 failed (exit 1): test -e {marker}" in res.stderr
