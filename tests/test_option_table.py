"""`clusterdoc submit`'s options are one table (clusterdoc/optiontable.py, issue 37): each row is an option of the
submit parser, a config key and a CLUSTERDOC_<KEY> variable (when layered), a JobSpec field with the table's
default (when in the spec), a variable every rank gets (when to_ranks), a line of docs/submit.md; and nothing
spells an option's environment variable, or a spec default, outside the table."""

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from clusterdoc import cli, config, optiontable
from clusterdoc.launch import job as job_mod
from clusterdoc.launch.job import JobSpec
from clusterdoc.launch.options import SubmitOptions
from clusterdoc.launch.settings import build_spec
from clusterdoc.optiontable import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "clusterdoc"
DERIVED = {"backend", "tasks_per_node", "gpus_per_node", "hostfile", "ssh_config", "python", "srun_option"}  # build_spec


def sample(o: optiontable.Option) -> object:
    """A value for the row that is not its default, as the parser and a config file give it."""
    if o.type is bool:
        return not o.default if o.default is not None else True
    if o.choices:
        return next(c for c in o.choices if c != o.default)
    if o.type is int:
        return 2 if o.default != 2 else 3
    if o.pattern:
        return "64G"
    if o.repeat:
        return ["x-" + o.key.replace("_", "-")]
    return "x-" + o.key


def submit_parser():
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    return sub.choices["submit"]


def test_the_submit_parser_is_the_table_and_every_row_parses_into_its_field(tmp_path):
    parser = submit_parser()
    flags = {s for a in parser._actions for s in a.option_strings} - {"-h", "--help"}
    want = {o.flag for o in OPTIONS} | {o.short for o in OPTIONS if o.short} | {o.negative[0] for o in OPTIONS
                                                                                 if o.negative}
    assert flags == want  # no submit option is added outside the table
    for o in OPTIONS:
        value = sample(o)
        argv = [o.flag] if o.type is bool else [o.flag, str(value[0] if o.repeat else value)]
        if o.type is bool and value is False:
            argv = [o.negative[0]]
        ns = cli.build_parser().parse_args(["submit", *argv, "train.py", "--lr", "1"])
        given = optiontable.from_args(ns)
        assert given[o.attr] == o.to_field(value), o.key
        assert [k for k, v in given.items() if v is not None] == [o.attr]  # the others stay "not given"
        assert ns.script == "train.py" and ns.script_args == ["--lr", "1"]


def test_submit_options_has_one_field_per_row_each_not_given_by_default():
    fields = {f.name: f for f in dataclasses.fields(SubmitOptions)}
    assert set(fields) == {"script", "script_args"} | {o.attr for o in OPTIONS}
    for o in OPTIONS:
        assert fields[o.attr].default is None
        assert fields[o.attr].type == (f"list[{o.type.__name__}] | None" if o.repeat else f"{o.type.__name__} | None")
    # what the API's keywords give, by config key: preflight=False is no_preflight, None stays "not given"
    given = SubmitOptions(script="t.py", preflight=False, hang_timeout=0).flags()
    assert given["no_preflight"] is True and given["hang_timeout"] == 0 and given["nodes"] is None
    assert "config" not in given and SubmitOptions(script="t.py").flags()["no_preflight"] is None


def test_every_layered_row_is_a_config_key_and_an_environment_variable(tmp_path):
    assert list(config.SETTINGS) == [o.key for o in OPTIONS if o.layered]
    assert [o.key for o in OPTIONS if not o.layered] == ["config"]  # --config names the file: not a key of one
    home = tmp_path / "home"
    (home / ".config/clusterdoc").mkdir(parents=True)
    for o in OPTIONS:
        if not o.layered:
            continue
        value = sample(o)
        text = str(value).lower() if o.type is bool else str(value[0] if o.repeat else value)
        for spelling in (o.key.replace("_", "-"), o.key):
            (tmp_path / "clusterdoc.yaml").write_text(f"{spelling}: {text}\n")
            s, origin = config.resolve({}, environ={}, cwd=tmp_path, home=home)
            assert s[o.key] == value and origin[o.key].endswith("clusterdoc.yaml"), spelling
        (tmp_path / "clusterdoc.yaml").unlink()
        s, origin = config.resolve({}, environ={o.env: text}, cwd=tmp_path, home=home)
        assert s[o.key] == value and origin[o.key] == o.env == "CLUSTERDOC_" + o.key.upper()
        s, origin = config.resolve({}, environ={}, cwd=tmp_path, home=home)
        assert s[o.key] == o.default and origin[o.key] == "default"


def test_a_bad_value_names_the_file_the_key_and_what_was_expected(tmp_path):
    home = tmp_path / "home"
    (home / ".config/clusterdoc").mkdir(parents=True)
    (tmp_path / "clusterdoc.yaml").write_text("nodes: 2\nhang-timeout: soon\n")
    with pytest.raises(config.UsageError) as err:
        config.resolve({}, environ={}, cwd=tmp_path, home=home)
    assert "clusterdoc.yaml:2: key 'hang-timeout' must be an integer, not str ('soon')" in str(err.value)


def spec_for(tmp_path, flags: dict) -> JobSpec:
    script = tmp_path / "train.py"
    script.write_text("")
    home = tmp_path / "home"
    (home / ".config/clusterdoc").mkdir(parents=True, exist_ok=True)
    settings, _ = config.resolve(flags, environ={}, cwd=tmp_path, home=home)
    return build_spec(settings, str(script), ["--batch-size", "8"], "local")


def test_every_spec_row_is_a_jobspec_field_with_the_table_s_default(tmp_path):
    fields = {f.name: f for f in dataclasses.fields(JobSpec)}
    for o in OPTIONS:
        assert (o.attr in fields) is o.spec, o.key
        if o.spec and o.attr not in DERIVED - {"gpus_per_node", "hostfile", "ssh_config"}:
            assert fields[o.attr].default == o.to_field(o.default), o.key
    plain = spec_for(tmp_path, {})
    for o in OPTIONS:
        if o.spec and o.attr not in DERIVED:
            assert getattr(plain, o.attr) == o.to_field(o.default)


def test_a_value_given_reaches_the_spec(tmp_path):
    for o in OPTIONS:
        if not o.spec or o.attr in DERIVED:
            continue
        value = "batch-size:2" if o.key == "oom_retry" else sample(o)
        spec = spec_for(tmp_path, {o.key: value})
        assert getattr(spec, o.attr) == o.to_field(value), o.key


def defaults_spelled_in(cls_source: str, attrs: set[str]) -> list[str]:
    """The option fields of a dataclass's source whose default is not the table's (`default("key")`, or its
    opposite)."""
    out = []
    for node in ast.parse(cls_source).body[0].body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in attrs:
            value = node.value.operand if isinstance(node.value, ast.UnaryOp) else node.value
            ok = isinstance(value, ast.Call) and getattr(value.func, "id", "") == "default"
            if not ok:
                out.append(node.target.id)
    return out


def test_no_spec_default_is_spelled_outside_the_table():
    attrs = {o.attr for o in OPTIONS if o.spec} - {"backend", "tasks_per_node", "python"}  # resolved, not defaults
    assert defaults_spelled_in(inspect.getsource(JobSpec), attrs) == []
    planted = "class JobSpec:\n    hang_timeout: int = 300\n    trace: bool = default('trace')\n"
    assert defaults_spelled_in(planted, attrs) == ["hang_timeout"]


def env_literals(source: str, names: set[str]) -> list[str]:
    """The string constants of a module's code (not its docstrings: they are text) that are one of `names`."""
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names and id(n) not in docs]


ENV_NAMES = {o.env for o in OPTIONS if o.layered}


def test_no_option_s_variable_is_spelled_outside_the_table():
    """The launcher's side reads and sets CLUSTERDOC_<KEY> through the table. The shim is the rank's side: it reads
    the variables the spec sets (next test), as a contract, without loading the submit table."""
    found = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        if p.name == "optiontable.py" or "shim" in p.relative_to(PACKAGE).parts:
            continue
        hits = env_literals(p.read_text(), ENV_NAMES)
        if hits:
            found[str(p.relative_to(ROOT))] = hits
    assert found == {}
    planted = 'import os\n\ndef f():\n    """CLUSTERDOC_TRACE in a docstring is text."""\n' \
              '    return os.environ.get("CLUSTERDOC_HANG_TIMEOUT")\n'
    assert env_literals(planted, ENV_NAMES) == ["CLUSTERDOC_HANG_TIMEOUT"]


def test_every_variable_the_shim_reads_is_one_the_ranks_get():
    shim_reads = set()
    for p in sorted((PACKAGE / "shim").glob("*.py")):
        shim_reads |= set(env_literals(p.read_text(), ENV_NAMES))
    to_ranks = {o.env for o in OPTIONS if o.to_ranks}
    assert shim_reads == to_ranks  # the shim reads each, and no option it is not handed
    env = JobSpec(script="/x.py", script_args=[], backend="local", log_level="INFO").shim_env()
    assert to_ranks <= set(env)
    assert env["CLUSTERDOC_HANG_TIMEOUT"] == "300" and env["CLUSTERDOC_TRACE"] == "0"
    assert "CLUSTERDOC_LOG_LEVEL" not in JobSpec(script="/x.py", script_args=[], backend="local").shim_env()


def test_the_shim_s_own_defaults_are_the_table_s():
    """A job started without submit (torchrun, srun) gets no variables: the shim's defaults then are submit's."""
    from clusterdoc.shim import straggler, watch

    assert watch.DEFAULT_TIMEOUT == optiontable.default("hang_timeout")
    assert round(straggler.DEFAULT_THRESHOLD * 100) == optiontable.default("straggler")


def test_the_help_says_the_table_s_default_and_docs_name_every_option():
    for o in OPTIONS:
        assert "{" not in o.help_text() and (str(o.default) in o.help_text()) is ("{default}" in o.help)
    docs = (ROOT / "docs" / "submit.md").read_text()
    table = docs.split("| option | what it does |", 1)[1].split("\n\n", 1)[0]
    for o in OPTIONS:
        assert f"`{o.flag}" in table, o.flag
    helptext = submit_parser().format_help()
    assert "(default 300; 0: off)" in helptext and "(default ./clusterdoc-jobs)" in helptext
