"""The check registry (clusterdoc/checks/registry.py): every check declares itself once, and every list, help text
and table that names checks comes from it, so a new entry shows up everywhere with no other edit."""

import json
import shutil
from pathlib import Path

import pytest

import clusterdoc.checks
from clusterdoc import cli
from clusterdoc.checks import ALL_CHECKS, MALFORMED_LABELS, PROBE_ERROR_CHECK, WARN, finding, registry
from clusterdoc.checks.spec import Check, Context
from clusterdoc.doctor import CheckOptions, Report, gather, judge
from clusterdoc.launch import preflight
from clusterdoc.untrusted import FIELD_CHECK

FACTS = Path(__file__).parent / "facts"
EXPECTED = ["ssh", "mesh", "net", "nccl", "port", "mpi", "kernel", "cuda", "arch", "gpu", "compute", "fabric",
            "resources", "clock", "files", "consistency", "comm", "perf"]  # fmt: skip


def check_help() -> str:
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    return next(a.help for a in sub.choices["check"]._actions if a.dest == "checks")


def two_nodes(tmp_path) -> Path:
    """Two nodes' saved facts (the recorded healthy node, twice) to judge."""
    for n in ("node1", "node2"):
        shutil.copyfile(FACTS / "healthy.json", tmp_path / f"{n}.json")
    return tmp_path


def test_the_registry_holds_every_check_in_column_order():
    assert list(ALL_CHECKS) == EXPECTED == list(registry.names())
    assert registry.default_off() == ("files", "comm", "perf")
    assert registry.not_local() == ("mesh", "port", "clock", "consistency", "perf")
    assert registry.ssh_only() == ("mesh", "port", "comm", "perf")
    assert preflight.ALLOCATION_CHECKS == ["nccl", "kernel", "cuda", "arch", "gpu", "compute", "fabric", "consistency"]
    assert PROBE_ERROR_CHECK["gcc"] == ("cuda", WARN) and MALFORMED_LABELS["kernel.release"] == "kernel release"


def test_every_check_is_in_the_help_the_defaults_and_the_table(tmp_path):
    helped = check_help()
    default = CheckOptions().selected()
    opts = CheckOptions(facts_dir=str(two_nodes(tmp_path)), checks=list(registry.names()), progress=False)
    g = gather(opts)
    header = Report.build(g, judge(g, opts)).render().splitlines()[0].split()
    for c in registry.registry():
        assert c.name in helped
        assert (c.name in default) == c.default, c.name
        if c.name in g.checks:  # saved facts: comm and perf were not run, so no column
            assert c.name in header, c.name


def test_what_the_node_sends_is_filed_under_a_check_that_reads_it():
    """untrusted.FIELD_CHECK (a malformed value's check) agrees with what each check declares it reads."""
    for fld, name in FIELD_CHECK.items():
        assert fld.split(".")[0] in registry.by_name(name).reads, (fld, name)
    for probe, (name, _) in PROBE_ERROR_CHECK.items():
        assert name in ALL_CHECKS, probe


def test_a_name_declared_twice_is_refused(monkeypatch):
    import importlib

    real = importlib.import_module

    def twice(name):
        mod = real(name)
        return type("M", (), {"CHECKS": mod.CHECKS * 2}) if name.endswith(".kernel") else mod

    registry.registry.cache_clear()
    monkeypatch.setattr(registry.importlib, "import_module", twice)
    try:
        with pytest.raises(RuntimeError, match="declared twice: kernel"):
            registry.registry()
    finally:
        monkeypatch.undo()
        registry.registry.cache_clear()
    assert "kernel" in registry.names()


def _dummy_node(c: Context) -> list:
    return [finding(c.node, "dummy", WARN, f"dummy saw host {c.facts.get('hostname')} with {len(c.nodes)} node(s)",
                    "nothing: a test's check")]  # fmt: skip


def _dummy_cluster(c: Context) -> list:
    return [finding(c.everyone, "dummy", WARN, f"dummy compared {len(c.answered)} nodes", "nothing", nodes=c.nodes)]


DUMMY = Check("dummy", 999, "a test's check", reads=("hostname",), probe_errors={"dummyprobe": WARN},
              node=_dummy_node, cluster=_dummy_cluster, cluster_order=999)  # fmt: skip


@pytest.fixture
def with_dummy(monkeypatch):
    real = registry.registry()
    monkeypatch.setattr(registry, "registry", lambda: (*real, DUMMY))


def test_a_new_entry_shows_up_everywhere(with_dummy, tmp_path, capsys):
    assert list(clusterdoc.checks.ALL_CHECKS) == [*EXPECTED, "dummy"]
    assert "dummy" in check_help() and "dummy" in CheckOptions().selected()
    assert "dummy" not in CheckOptions(skip="dummy").selected()
    folder = two_nodes(tmp_path)
    code = cli.main(["check", "--facts", str(folder), "--checks", "kernel,dummy", "--json"])
    doc = json.loads(capsys.readouterr().out)
    mine = [f for f in doc["findings"] if f["check"] == "dummy"]
    assert code == 0 and [f["node"] for f in mine] == ["node1", "node2", "node[1-2]"]  # warnings: exit 0
    assert mine[0]["message"] == "dummy saw host gpu01 with 2 node(s)"
    assert all(n["status"]["dummy"] == WARN for n in doc["nodes"])
    cli.main(["check", "--facts", str(folder), "--checks", "kernel,dummy"])
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[-1] == "dummy" and "[WARN] dummy node[1-2]: dummy compared 2 nodes" in text


def test_a_new_entrys_probe_errors_are_its_own(with_dummy):
    from clusterdoc.checks import probe_errors

    facts = {"errors": [{"probe": "dummyprobe", "message": "hung"}]}
    assert [f["check"] for f in probe_errors("n1", facts, "dummy")] == ["dummy"]
    assert probe_errors("n1", facts, "cuda") == []  # no longer an unclaimed probe (those are cuda's)


def test_a_crashing_entry_is_a_finding_not_a_lost_report(monkeypatch, tmp_path):
    real = registry.registry()
    boom = Check("boom", 998, "crashes", node=lambda c: 1 / 0)
    monkeypatch.setattr(registry, "registry", lambda: (*real, boom))
    opts = CheckOptions(facts_dir=str(two_nodes(tmp_path)), checks="kernel,boom", progress=False)
    g = gather(opts)
    crashed = [f for f in judge(g, opts) if f["check"] == "boom"]
    assert len(crashed) == 2 and "check boom crashed: ZeroDivisionError" in crashed[0]["message"]
