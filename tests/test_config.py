"""clusterdoc.config: layers (flag > env > file > default) and errors that name the key and the file."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterdoc import config
from clusterdoc.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]


def resolve(tmp_path, flags=None, env=None, cwd_yaml=None, home_yaml=None, explicit=None):
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir(exist_ok=True)
    (home / ".config/clusterdoc").mkdir(parents=True, exist_ok=True)
    if cwd_yaml is not None:
        (cwd / "clusterdoc.yaml").write_text(cwd_yaml)
    if home_yaml is not None:
        (home / ".config/clusterdoc/config.yaml").write_text(home_yaml)
    return config.resolve(flags or {}, explicit_config=explicit, environ=env or {}, cwd=cwd, home=home)


def test_defaults_when_nothing_is_set(tmp_path):
    settings, origin = resolve(tmp_path)
    assert settings["nodes"] == 1 and settings["debug"] is False and settings["backend"] == "auto"
    assert set(origin.values()) == {"default"}


def test_precedence_flag_over_env_over_file_over_default(tmp_path):
    home = "nodes: 2\ndebug: true\nlog-level: debug\npartition: home\n"
    cwd = "nodes: 3\npartition: cwd\n"
    settings, origin = resolve(tmp_path, home_yaml=home, cwd_yaml=cwd,
                               env={"CLUSTERDOC_NODES": "5", "CLUSTERDOC_DEBUG": "0"},
                               flags={"nodes": 7, "debug": None, "log_level": None})
    assert settings["nodes"] == 7 and origin["nodes"] == "flag"             # flag beats env and files
    assert settings["debug"] is False and origin["debug"] == "CLUSTERDOC_DEBUG"  # env beats files
    assert settings["partition"] == "cwd"                                    # ./clusterdoc.yaml beats ~/.config
    assert settings["log_level"] == "DEBUG" and origin["log_level"].endswith("config.yaml")
    assert settings["time"] == 60 and origin["time"] == "default"


def test_explicit_config_beats_the_other_files_and_loses_to_env(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("nodes: 9\ntasks_per_node: 2\n")
    settings, origin = resolve(tmp_path, cwd_yaml="nodes: 3\ntasks-per-node: 4\n", explicit=str(extra),
                               env={"CLUSTERDOC_TASKS_PER_NODE": "8"})
    assert settings["nodes"] == 9 and origin["nodes"] == str(extra)
    assert settings["tasks_per_node"] == 8


def test_unknown_key_names_key_file_and_line(tmp_path):
    with pytest.raises(UsageError) as err:
        resolve(tmp_path, cwd_yaml="nodes: 2\n\ndebgu: true\n")
    msg = str(err.value)
    assert "unknown key 'debgu'" in msg and "clusterdoc.yaml:3" in msg and "debug" in msg


@pytest.mark.parametrize("text,needle", [
    ("nodes: four\n", "key 'nodes' must be an integer, not str"),
    ("debug: 3\n", "key 'debug' must be true or false"),
    ("nodes: [1, 2]\n", "not a list or mapping"),
    ("backend: pbs\n", "must be one of auto, local, slurm, mpirun"),
    ("nodes: 0\n", "must be at least 1"),
    ("- nodes\n", "expected a mapping"),
    ("nodes: 2\n  debug: [\n", "not valid YAML"),
])
def test_wrong_types_and_bad_yaml_are_usage_errors(tmp_path, text, needle):
    with pytest.raises(UsageError) as err:
        resolve(tmp_path, home_yaml=text)
    assert needle in str(err.value) and "config.yaml:" in str(err.value)


def test_bad_env_values_name_the_variable(tmp_path):
    with pytest.raises(UsageError, match="CLUSTERDOC_DEBUG must be 1/true"):
        resolve(tmp_path, env={"CLUSTERDOC_DEBUG": "maybe"})
    with pytest.raises(UsageError, match="CLUSTERDOC_NODES must be an integer"):
        resolve(tmp_path, env={"CLUSTERDOC_NODES": "x"})


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(UsageError, match="config file not found"):
        resolve(tmp_path, explicit=str(tmp_path / "nope.yaml"))


def _cli(args, cwd, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLUSTERDOC_")}
    env.update(HOME=str(cwd), **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "clusterdoc", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


def test_cli_bad_config_exits_2_without_traceback(tmp_path):
    (tmp_path / "clusterdoc.yaml").write_text("nodes: 2\nwait: sometimes\n")
    (tmp_path / "s.py").write_text("print('hi')\n")
    res = _cli(["submit", "s.py"], tmp_path)
    assert res.returncode == 2
    assert "clusterdoc.yaml:2: key 'wait' must be true or false" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("args,needle", [
    (["submit", "--backend", "pbs", "s.py"], "invalid choice: 'pbs'"),
    (["submit", "--nodes", "two", "s.py"], "invalid int value"),
    (["submit", "--nodes", "0", "s.py"], "--nodes must be at least 1"),
    (["submit", "missing.py"], "script not found: missing.py"),
    (["submit", "--oom-retry", "batch-size", "s.py"], "the script's arguments have no --batch-size"),
    (["submit", "--backend", "mpirun", "s.py"], "the mpirun backend needs --hostfile"),
    (["submit", "--hostfile", "nope", "s.py"], "--hostfile 'nope' does not exist"),
    (["submit", "--backend", "mpirun", "--hostfile", "hosts", "--nodes", "3", "s.py"],
     "hosts: --nodes 3 but the hostfile lists 2 host(s)"),
    (["submit", "--backend", "mpirun", "--hostfile", "badhosts", "s.py"], "badhosts:1"),
    (["status", "nosuchjob"], "no job 'nosuchjob'"),
    (["logs", "nosuchjob"], "no job 'nosuchjob'"),
])
def test_cli_bad_flags_exit_2_with_a_clear_message(tmp_path, args, needle):
    (tmp_path / "s.py").write_text("print('hi')\n")
    (tmp_path / "hosts").write_text("node1\nnode2\n")
    (tmp_path / "badhosts").write_text("node1 slots=x\n")
    res = _cli(args, tmp_path, {"CLUSTERDOC_NO_PREFLIGHT": "1"})
    assert res.returncode == 2, res.stderr
    assert needle in res.stderr and "Traceback" not in res.stderr
