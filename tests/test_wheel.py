"""build-wheel's pure pieces: arch list, ops, environment, preflight rules, op verification, manifest.

No build and no node here (see test_wheel_build.py for those); a few tests run the real CLI in
--dry-run mode, which probes this machine but builds nothing.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clusterdoc.errors import UsageError
from clusterdoc.untrusted import clean_facts
from clusterdoc.wheel import archlist, build, manifest, preflight
from clusterdoc.wheel.command import derive_arch_list, runtime_notes, shell_value
from clusterdoc.wheel.nodes import judge_install, parse_sections

FACTS = Path(__file__).parent / "facts"
REPO = Path(__file__).resolve().parent.parent


def facts_with(*caps):
    return {"gpus": [{"index": i, "name": "GPU", "capability": c} for i, c in enumerate(caps)]}


# --- arch list -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["9.0;8.0", "8.0 9.0", "9.0+PTX;8.0", "8.0,9.0", " 8.0;;9.0 ", "9.0 8.0 8.0"])
def test_arch_list_is_sorted_deduplicated_with_ptx_on_the_highest(text):
    assert archlist.normalise_arch_list(text) == "8.0;9.0+PTX"


def test_arch_list_sorts_numerically_not_as_text():
    assert archlist.normalise_arch_list("10.0;9.0;8.6;12.0") == "8.6;9.0;10.0;12.0+PTX"


@pytest.mark.parametrize("entry, hint", [
    ("Ampere", '"8.0;8.6" for Ampere'),
    ("Hopper+PTX", '"9.0" for Hopper'),
    ("sm_90", '"9.0"'),
    ("90", '"9.0"'),
    ("9.0a", 'use "9.0"'),
    ("nine", "expected entries like 8.0"),
])
def test_named_and_malformed_entries_are_refused_with_a_replacement(entry, hint):
    with pytest.raises(UsageError) as err:
        archlist.parse_arch_list(f"8.0;{entry}")
    text = str(err.value)
    assert repr(entry) in text and hint in text and text.startswith("--arch-list:")


def test_empty_arch_list_is_refused():
    with pytest.raises(UsageError, match="empty"):
        archlist.parse_arch_list(" ; ")


def test_arch_list_from_every_nodes_gpus():
    facts = {"node1": facts_with("8.0", "8.0"), "node2": facts_with("9.0"), "node3": {"gpus": []},
             "node4": facts_with("8.6", "8.0")}
    archs, per_host, unknown = archlist.archs_from_facts(facts)
    assert archs == [(8, 0), (8, 6), (9, 0)] and unknown == {}
    assert per_host == {"node1": ["8.0", "8.0"], "node2": ["9.0"], "node3": [], "node4": ["8.6", "8.0"]}


def test_a_node_with_unknown_gpus_is_a_failure_naming_it_and_the_others_still_count():
    facts = {"node7": facts_with("8.0", "unknown"), "node8": facts_with("9.0"),
             "node9": clean_facts({"gpus": [None]})}  # what the edge makes of a node answering {"gpus": [null]}
    for given in (None, "9.0"):
        archs, _, per_host, findings = derive_arch_list(given, facts)
        assert archs == [(9, 0)] and per_host == {"node8": ["9.0"]}
        assert [(f.status, f.message.split(":")[0]) for f in findings] == [("fail", "node7"), ("fail", "node9")]
    assert "compute capability 'unknown'" in findings[0].message
    assert "malformed GPU facts (gpus[0]: null)" in findings[1].message


NVCC13 = {"version": "13.0", "home": "/usr/local/cuda-13.0", "arch_list": [
    "compute_75", "compute_80", "compute_86", "compute_87", "compute_88", "compute_89", "compute_90",
    "compute_100", "compute_110", "compute_103", "compute_120", "compute_121"]}


def test_archs_nvcc_cannot_build_are_refused_by_name():
    check = archlist.check_against_nvcc([(7, 0), (8, 0), (9, 0)], NVCC13)
    assert check.refused == ["7.0"]
    assert any("BF16" in w and "7.0" in w for w in check.warnings)


def test_old_nvcc_without_list_gpu_arch_falls_back_to_the_release_table():
    check = archlist.check_against_nvcc([(8, 0), (9, 0)], {"version": "11.4", "arch_list": None})
    assert check.refused == ["9.0"]  # sm_90 came with CUDA 11.8


def test_arch_7_5_warns_bf16_even_when_buildable():
    check = archlist.check_against_nvcc([(7, 5), (8, 0)], NVCC13)
    assert check.refused == [] and len(check.warnings) == 1 and "7.5" in check.warnings[0]


def test_without_nvcc_nothing_is_refused_but_it_is_said():
    check = archlist.check_against_nvcc([(8, 0)], None)
    assert check.refused == [] and "not checked" in check.warnings[0]


def test_gpus_are_described_in_capability_order():
    from clusterdoc.wheel.command import describe_gpus

    text = describe_gpus({"a": ["10.0"], "b": ["9.0", "9.0"], "c": [], "d": ["8.0", "8.6"], "e": ["9.0"]})
    assert text == "d: 8.0,8.6; b, e: 9.0; a: 10.0; c: no GPU"


def test_given_arch_list_must_cover_the_nodes_gpus():
    archs, source, per_host, findings = derive_arch_list("8.0", {"n1": facts_with("8.0"), "n2": facts_with("9.0")})
    assert archs == [(8, 0)] and source == "--arch-list"
    assert [f.status for f in findings] == ["warn"]  # 9.0 only through 8.0+PTX
    _, _, _, findings = derive_arch_list("9.0", {"n1": facts_with("8.0")})
    assert findings[0].status == "fail" and "n1" in findings[0].message and "8.0" in findings[0].message


# --- ops and environment --------------------------------------------------------------------------

def test_ops_accept_names_and_switch_suffixes():
    assert build.parse_ops("cpu_adam,UTILS") == ["cpu_adam", "utils"]
    assert build.parse_ops("aio deep_compile DS_BUILD_FUSED_ADAM") == ["async_io", "dc", "fused_adam"]
    assert build.parse_ops("cpu_adam", aio=True) == ["cpu_adam", "async_io"]


def test_unknown_op_is_refused_listing_the_known_ones():
    with pytest.raises(UsageError) as err:
        build.parse_ops("cpu_adam,flash")
    assert "'flash'" in str(err.value) and "cpu_adagrad" in str(err.value)


def test_build_env_switches_only_the_requested_ops():
    env = build.build_env("8.0;9.0+PTX", ["cpu_adam", "utils", "async_io"], 2, "cuda", base={})
    assert env == {"DS_BUILD_OPS": "0", "DS_BUILD_CPU_ADAM": "1", "DS_BUILD_UTILS": "1", "DS_BUILD_AIO": "1",
                   "DS_ACCELERATOR": "cuda", "TORCH_CUDA_ARCH_LIST": "8.0;9.0+PTX", "MAX_JOBS": "2",
                   "PYTHONUNBUFFERED": "1"}


def test_cuda_host_compiler_reaches_nvcc_as_nvcc_ccbin():
    env = build.build_env("8.0+PTX", ["utils"], 1, "cuda", base={"CUDA_HOST_COMPILER": "/usr/bin/gcc-12"})
    assert env["NVCC_CCBIN"] == "/usr/bin/gcc-12"
    env = build.build_env("8.0+PTX", ["utils"], 1, "cuda", base={"CUDA_HOST_COMPILER": "a", "NVCC_CCBIN": "b"})
    assert "NVCC_CCBIN" not in env  # the user's own NVCC_CCBIN stays in charge


def test_build_command_uses_the_jobs():
    cmd = build.build_command("/py", 3, Path("/d"))
    assert cmd == ["/py", "setup.py", "build_ext", "-j3", "bdist_wheel", "--dist-dir", "/d"]


def test_shell_values_are_quoted_only_when_needed():
    assert shell_value("1") == "1"
    assert shell_value("8.0;9.0+PTX") == '"8.0;9.0+PTX"'
    assert shell_value('a b"$') == '"a b\\"\\$"'


# --- source ---------------------------------------------------------------------------------------

def test_source_version_uses_the_cache(tmp_path):
    src = build.resolve_source("0.19.8", tmp_path)
    assert src.kind == "version" and src.path == tmp_path / "deepspeed-0.19.8.tar.gz"
    (tmp_path / "deepspeed-0.19.8.tar.gz").write_bytes(b"x")
    assert build.cached_sdist(tmp_path, "0.19.8") == tmp_path / "deepspeed-0.19.8.tar.gz"
    assert build.resolve_source("deepspeed==0.19.8", tmp_path).version == "0.19.8"


def test_source_checkout_and_sdist_are_recognised(tmp_path):
    (tmp_path / "ds" / "op_builder").mkdir(parents=True)
    (tmp_path / "ds" / "setup.py").write_text("")
    assert build.resolve_source(str(tmp_path / "ds"), tmp_path).kind == "checkout"
    sdist = tmp_path / "deepspeed-0.1.2.tar.gz"
    sdist.write_bytes(b"")
    src = build.resolve_source(str(sdist), tmp_path)
    assert (src.kind, src.version) == ("sdist", "0.1.2")


@pytest.mark.parametrize("spec", ["not-a-thing", "/nonexistent/dir/"])
def test_bad_source_is_a_usage_error(spec, tmp_path):
    with pytest.raises(UsageError, match="--source"):
        build.resolve_source(spec, tmp_path)


def test_a_directory_without_setup_py_is_refused(tmp_path):
    with pytest.raises(UsageError, match="not a DeepSpeed source tree"):
        build.resolve_source(str(tmp_path), tmp_path)


def test_cache_dir_follows_flag_then_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CLUSTERDOC_CACHE", str(tmp_path / "env"))
    assert build.cache_dir(None) == tmp_path / "env" / "deepspeed"
    assert build.cache_dir(str(tmp_path / "flag")) == tmp_path / "flag" / "deepspeed"


def test_checkout_copy_leaves_stale_build_output_behind(tmp_path):
    tree = tmp_path / "DeepSpeed"
    (tree / "op_builder").mkdir(parents=True)
    (tree / "setup.py").write_text("")
    (tree / "build" / "lib" / "deepspeed").mkdir(parents=True)
    (tree / "build" / "lib" / "deepspeed" / "old_op.so").write_text("")
    copy = build.prepare_tree(build.Source("checkout", tree, None), None, tmp_path / "work")
    assert (copy / "setup.py").exists() and not (copy / "build").exists()


# --- likely causes --------------------------------------------------------------------------------

@pytest.mark.parametrize("log, expected", [
    ("#error -- unsupported GNU version! gcc versions later than 12 are not supported!", "gcc is newer"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_70'", "cannot build compute_70"),
    ("fatal error: libaio.h: No such file or directory", "libaio-dev"),
    ("ModuleNotFoundError: No module named 'hjson'", "module hjson"),
    ("g++: fatal error: Killed signal terminated program cc1plus", "out of memory"),
    ("all fine\n", None),
])
def test_likely_cause_of_a_failed_build(log, expected):
    cause = build.likely_cause(log)
    assert (cause is None) if expected is None else (expected in cause)


# --- preflight rules ------------------------------------------------------------------------------

def test_cpu_only_torch_builds_host_ops_and_refuses_cuda_ops():
    facts = {"torch": {"version": "2.13.0+cpu", "cuda": None}, "python": {"executable": "/py"}}
    assert [f.status for f in preflight.torch_rules(facts, ["cpu_adam", "utils"])] == ["ok"]
    out = preflight.torch_rules(facts, ["cpu_adam", "fused_adam", "transformer"])
    assert out[1].status == "fail" and "fused_adam, transformer" in out[1].message and out[1].fix


def test_missing_torch_fails():
    out = preflight.torch_rules({"torch": None, "python": {"executable": "/py"}}, ["utils"])
    assert out[0].status == "fail" and "/py -m pip install torch" in out[0].fix


def test_nvcc_torch_mismatch_comes_from_the_doctors_cuda_check():
    from clusterdoc.checks import cuda

    facts = json.loads((FACTS / "healthy.json").read_text())
    facts["torch"]["cuda"] = "11.8"  # nvcc is 12.x on the healthy node
    out = preflight.cuda_rules(facts, cuda.check("build host", facts), ["cpu_adam"])
    assert any(f.status == "fail" and "11.8" in f.message for f in out)
    assert not [f for f in preflight.cuda_rules(json.loads((FACTS / "healthy.json").read_text()),
                                                cuda.check("b", json.loads((FACTS / "healthy.json").read_text())),
                                                ["cpu_adam"]) if f.status == "fail"]


def test_cuda_ops_without_nvcc_fail_but_host_ops_do_not():
    facts = {"torch": {"version": "2.3.1", "cuda": "12.1"}, "nvcc": None}
    assert preflight.cuda_rules(facts, [], ["cpu_adam", "utils"]) == []
    out = preflight.cuda_rules(facts, [], ["fused_adam"])
    assert out[0].status == "fail" and "CUDA 12.1 toolkit" in out[0].fix


def test_gcc_newer_than_host_config_fails_naming_all_three_fixes():
    nvcc = {"version": "12.1", "home": "/usr/local/cuda-12.1"}
    toolkits = [{"path": "/usr/local/cuda-12.1", "gcc_max": 12}]
    out = preflight.gcc_rule(nvcc, toolkits, "/opt/bin/gcc", "gcc on PATH", "13.2.0",
                             ["/usr/bin/gcc-14", "/usr/bin/gcc-12", "/usr/bin/gcc-11"])
    f = out[0]
    assert f.status == "fail" and "13.2.0" in f.message and "host_config.h" in f.message
    assert "CUDA_HOST_COMPILER=/usr/bin/gcc-12" in f.fix and "CC=/usr/bin/gcc-12 CXX=/usr/bin/g++-12" in f.fix
    assert "ln -s /usr/bin/gcc-12 /usr/local/cuda-12.1/bin/gcc" in f.fix


def test_gcc_limit_falls_back_to_the_table_and_accepts_supported():
    nvcc = {"version": "13.0", "home": "/x"}
    assert preflight.gcc_rule(nvcc, [], "/usr/bin/gcc", "gcc on PATH", "12.2.0", [])[0].status == "ok"
    out = preflight.gcc_rule(nvcc, [], "/usr/bin/gcc", "gcc on PATH", "16.1.0", [])
    assert out[0].status == "fail" and "gcc <= 15" in out[0].message and "apt-get install gcc-15" in out[0].fix


def test_gcc_limit_of_the_header_nvcc_includes_beats_toolkits_and_table():
    nvcc = {"version": "13.0", "home": "/usr/local/cuda-13.0", "gcc_max": 11, "host_config": "/h/crt/host_config.h"}
    toolkits = [{"path": "/usr/local/cuda-13.0", "gcc_max": 15}]
    out = preflight.gcc_rule(nvcc, toolkits, "/usr/bin/gcc", "gcc on PATH", "12.2.0", [])
    assert out[0].status == "fail" and "(gcc <= 11, from /h/crt/host_config.h)" in out[0].message


def test_no_nvcc_means_no_gcc_rule():
    assert preflight.gcc_rule(None, [], "/usr/bin/gcc", "PATH", "16.0.0", []) == []


def test_host_compiler_choice_follows_cc_then_nvcc_ccbin_then_toolkit_bin(tmp_path):
    kit = tmp_path / "cuda"
    (kit / "bin").mkdir(parents=True)
    path = tmp_path / "path"
    path.mkdir()
    for p in (kit / "bin" / "gcc", path / "gcc"):
        p.write_text("#!/bin/sh\n")
        p.chmod(0o755)
    env = {"PATH": str(path)}
    assert preflight.nvcc_host_compiler(env, str(kit)) == (str(kit / "bin" / "gcc"), f"{kit}/bin/gcc")
    assert preflight.nvcc_host_compiler(env, None) == (str(path / "gcc"), "gcc on PATH")
    assert preflight.nvcc_host_compiler(dict(env, CUDA_HOST_COMPILER="gcc"), str(kit))[1] == "CUDA_HOST_COMPILER"
    assert preflight.nvcc_host_compiler(dict(env, NVCC_CCBIN="x", CC="gcc"), str(kit))[1] == "CC"


def test_missing_libaio_names_both_package_families():
    out = preflight.aio_rule(False, "fatal error: libaio.h: No such file or directory", ("apt-get install -y libaio-dev",
                                                                                         "libaio-dev"))
    assert out[0].status == "fail" and "libaio-dev" in out[0].fix and "libaio-devel" in out[0].fix


def test_missing_ninja_fails_with_the_install_command():
    out = preflight.ninja_rule(None, "/venv/bin/python")
    assert out[0].status == "fail" and "/venv/bin/python -m pip install ninja" in out[0].fix


# --- verification and manifest --------------------------------------------------------------------

def make_wheel(path: Path, files: dict) -> Path:
    record = "deepspeed-0.19.8.dist-info/RECORD"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr(record, "".join(f"{n},sha256=x,1\n" for n in files) + f"{record},,\n")
    return path


SO = "deepspeed/ops/adam/cpu_adam_op.cpython-311-x86_64-linux-gnu.so"
INFO = ("version='0.19.8'\ninstalled_ops={'cpu_adam': 1, 'utils': False}\naccelerator_name='cuda'\n"
        "torch_info={'version': '2.13', 'cuda_version': '0.0'}\n")


def test_a_requested_op_missing_from_the_wheel_is_named(tmp_path):
    wheel = make_wheel(tmp_path / "deepspeed-0.19.8-cp311-cp311-linux_x86_64.whl",
                       {SO: "elf", "deepspeed/ops/adam/cpu_adam.py": "", "deepspeed/git_version_info_installed.py": INFO})
    found, missing = manifest.verify_ops(manifest.wheel_names(wheel), ["cpu_adam", "utils"])
    assert found == {"cpu_adam": SO} and missing == ["utils"]
    info = manifest.installed_info(wheel)
    assert info["accelerator_name"] == "cuda" and info["installed_ops"]["cpu_adam"] == 1


def test_skip_reason_quotes_deepspeeds_warning_or_explains_the_accelerator():
    log = "[WARNING] Skip pre-compile of incompatible async_io; One can disable async_io with DS_BUILD_AIO=0\n"
    assert "Skip pre-compile of incompatible async_io" in manifest.skip_reason("async_io", log, "cuda")
    assert "cpu accelerator" in manifest.skip_reason("utils", "", "cpu")


def test_manifest_is_embedded_with_a_valid_record_and_written_beside(tmp_path):
    wheel = make_wheel(tmp_path / "deepspeed-0.19.8-cp311-cp311-linux_x86_64.whl",
                       {SO: "elf", "deepspeed/git_version_info_installed.py": INFO})
    record = manifest.make_manifest(
        wheel=wheel, arch_list="8.0;9.0+PTX", arch_source="nodes", gpus={"n1": ["8.0"], "n2": ["9.0"]},
        ops=["cpu_adam"], built={"cpu_adam": SO}, info=manifest.installed_info(wheel),
        build_host={"hostname": "b", "torch_version": "2.13.0", "torch_cuda": None}, jobs=2, source="x")
    manifest.embed(wheel, record)
    manifest.embed(wheel, record)  # idempotent: no duplicate entries
    assert manifest.read_embedded(wheel) == record
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        rows = z.read("deepspeed-0.19.8.dist-info/RECORD").decode().splitlines()
        data = z.read("deepspeed/clusterdoc-wheel.json")
    assert names.count("deepspeed/clusterdoc-wheel.json") == 1
    row = [r for r in rows if r.startswith("deepspeed/clusterdoc-wheel.json,")]
    assert len(row) == 1 and row[0].endswith(f",{len(data)}") and manifest._record_hash(data) in row[0]
    beside = json.loads(manifest.write_beside(wheel, record).read_text())
    assert beside["sha256"] == manifest.sha256(wheel) and beside["arch_list"] == "8.0;9.0+PTX"
    assert beside["accelerator"] == "cuda" and beside["deepspeed_version"] == "0.19.8" and beside["bf16"] is True


def test_manifest_readable_by_the_doctors_probe_and_arch_check(tmp_path):
    """The probe reads <deepspeed>/clusterdoc-wheel.json; the arch check compares its arch_list to the GPUs."""
    from clusterdoc import probe
    from clusterdoc.checks import arch

    pkg = tmp_path / "site" / "deepspeed"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "clusterdoc-wheel.json").write_text(json.dumps({"arch_list": "8.0+PTX"}))
    sys.path.insert(0, str(tmp_path / "site"))
    try:
        ds = probe.probe_deepspeed(5)
    finally:
        sys.path.remove(str(tmp_path / "site"))
    assert ds["wheel_manifest"] == {"arch_list": "8.0+PTX"}
    facts = dict(facts_with("7.5"), deepspeed=ds)  # PTX for 8.0 cannot run on a 7.5 GPU
    assert any(f["status"] == "fail" and "built for 8.0+PTX" in f["message"] for f in arch.check("n1", facts))


# --- install report -------------------------------------------------------------------------------

def test_install_sections_are_judged_per_step():
    expected = {"arch_list": "8.0+PTX"}
    ok = ("@@pip\n@@rc 0\n@@import\n" + json.dumps({"version": "0.19.8", "ops": ["cpu_adam"], "manifest": expected})
          + "\n@@rc 0\n@@ds_report\n@@rc 0\n")
    res = judge_install("n1", "/py", ok, expected)
    assert res.ok and res.ops == ["cpu_adam"] and res.ds_report == "ok"
    bad = "@@pip\nERROR: nope\n@@rc 1\n"
    res = judge_install("n1", "/py", bad, expected)
    assert not res.ok and "ERROR: nope" in res.message
    other = ok.replace('"8.0+PTX"', '"7.0+PTX"')
    res = judge_install("n1", "/py", other, expected)
    assert not res.ok and "another build" in res.message
    assert parse_sections("@@a\nx\n@@rc 3\n") == {"a": ("3", ["x"])}
    shared = judge_install("n2", "/py", ok.replace("@@pip\n@@rc 0", "@@pip\nalready\n@@rc skip"), expected)
    assert shared.ok and shared.shared


def test_runtime_notes_for_a_node_whose_torch_differs():
    record = {"torch": {"version": "2.13.0+cpu"}, "accelerator": "cuda"}
    notes = runtime_notes({"torch": {"version": "2.3.1", "cuda": None}}, record)
    assert any("2.3.1 here vs 2.13.0+cpu" in n for n in notes) and any("CPU-only" in n for n in notes)
    assert runtime_notes({"torch": {"version": "2.13.1", "cuda": "12.1"}}, record) == []


# --- the CLI, dry run (probes this machine, builds nothing) ---------------------------------------

def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "build-wheel", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env=env)


def test_dry_run_prints_the_exact_environment(tmp_path):
    res = cli("--dry-run", "--arch-list", "9.0;8.0", "--out", str(tmp_path / "dist"), "--cache", str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert 'export TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"' in lines
    assert "export DS_BUILD_CPU_ADAM=1" in lines and "export DS_BUILD_UTILS=1" in lines
    assert "export DS_BUILD_OPS=0" in lines and "export DS_BUILD_AIO=1" not in lines
    assert any("pip download --no-deps --no-binary :all: deepspeed==0.19.8" in l for l in lines)
    assert any(l.endswith(f"> {tmp_path}/dist/build.log 2>&1") and "bdist_wheel" in l for l in lines)
    assert not (tmp_path / "dist").exists()  # nothing built, nothing written


def test_cli_refuses_a_named_arch_with_exit_2():
    res = cli("--dry-run", "--arch-list", "Ampere")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "'Ampere'" in res.stderr and '"8.0;8.6"' in res.stderr


def test_cli_needs_nodes_or_an_arch_list():
    res = cli("--dry-run")
    assert res.returncode == 2 and "--hostfile" in res.stderr


def test_cli_install_needs_nodes():
    res = cli("--install", "--arch-list", "8.0")
    assert res.returncode == 2 and "--install needs the nodes" in res.stderr


def test_dry_run_without_ptx_keeps_the_list_as_given(tmp_path):
    res = cli("--dry-run", "--arch-list", "9.0;8.0", "--no-ptx", "--out", str(tmp_path / "dist"), "--cache", str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'export TORCH_CUDA_ARCH_LIST="8.0;9.0"' in res.stdout.splitlines()


def test_cli_wheel_to_install_must_be_a_build_wheel_wheel(tmp_path):
    res = cli("--wheel", str(tmp_path / "x.whl"), "-w", "node1")
    assert res.returncode == 2 and "add --install" in res.stderr
    foreign = tmp_path / "deepspeed-0.19.8-py3-none-any.whl"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("deepspeed/__init__.py", "")
    res = cli("--install", "--wheel", str(foreign), "-w", "node1")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "carries no deepspeed/clusterdoc-wheel.json: it was not made by clusterdoc build-wheel" in res.stderr
    res = cli("--install", "--wheel", str(tmp_path / "missing.whl"), "-w", "node1")
    assert res.returncode == 2 and "missing.whl: not a wheel file" in res.stderr


@pytest.mark.skipif(not os.path.exists("/usr/local/cuda-13.0/bin/nvcc"), reason="needs this machine's CUDA 13.0 nvcc")
def test_cli_refuses_an_arch_nvcc_cannot_build(tmp_path):
    res = cli("--dry-run", "--arch-list", "7.0;8.0", "--out", str(tmp_path))
    assert res.returncode == 1
    assert "nvcc 13.0 (/usr/local/cuda-13.0) cannot build 7.0" in res.stdout and "BF16" in res.stdout


def test_cli_refuses_gcc_newer_than_nvcc_accepts(tmp_path):
    if not os.path.exists("/usr/local/cuda-13.0/bin/nvcc"):
        pytest.skip("needs this machine's CUDA 13.0 nvcc")
    fake = tmp_path / "bin" / "gcc"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in -dumpfullversion|-dumpversion) echo 16.1.0; exit 0;;'
                    ' esac; done\nexec /usr/bin/gcc "$@"\n')
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}")
    res = cli("--dry-run", "--arch-list", "8.0", "--out", str(tmp_path), env=env)
    assert res.returncode == 1, res.stdout
    assert f"{fake} is gcc 16.1.0 (gcc on PATH), newer than nvcc 13.0 accepts (gcc <= 15" in res.stdout
    assert "CUDA_HOST_COMPILER=/usr/bin/gcc-12" in res.stdout and "/usr/local/cuda-13.0/bin/gcc" in res.stdout


def test_cli_refuses_aio_without_libaio(tmp_path):
    if preflight.libaio_links()[0]:
        pytest.skip("libaio is installed here")
    res = cli("--dry-run", "--arch-list", "8.0", "--aio", "--out", str(tmp_path))
    assert res.returncode == 1
    assert "--aio: libaio is missing" in res.stdout and "libaio-dev" in res.stdout and "libaio-devel" in res.stdout


# --- the long build's log and progress line -------------------------------------------------------

class FakeTTY:
    def __init__(self, tty):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, text):
        self.text += text

    def flush(self):
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_build_output_goes_whole_to_the_log_and_progress_only_to_a_terminal(tmp_path, tty):
    stream = FakeTTY(tty)
    log = tmp_path / "build.log"
    cmd = ["sh", "-c", "echo 'gcc -c csrc/adam/cpu_adam_impl.cpp -o x.o'; sleep 2; echo done; exit 3"]
    code = build.run_logged(cmd, tmp_path, dict(os.environ), log, "building DeepSpeed", stream=stream)
    assert code == 3
    assert log.read_text().splitlines()[1:] == ["gcc -c csrc/adam/cpu_adam_impl.cpp -o x.o", "done"]
    if tty:
        assert "\r\033[Kbuilding DeepSpeed 0:0" in stream.text and "  compiling cpu_adam_impl.cpp" in stream.text
        assert stream.text.endswith("\r\033[K")  # the line is cleared at the end
    else:
        assert stream.text == ""


def test_a_torch_probe_error_is_reported_once_not_as_missing_torch():
    from clusterdoc.checks import cuda

    facts = {"torch": None, "python": {"executable": "/py"}, "nvcc": None,
             "errors": [{"probe": "torch", "message": "importing torch did not finish in 12s"}]}
    assert preflight.torch_rules(facts, ["utils"]) == []
    out = preflight.cuda_rules(facts, cuda.check("build host", facts), ["utils"])
    assert [f.status for f in out] == ["fail"] and "did not finish in 12s" in out[0].message


def test_a_terminated_build_takes_its_whole_process_group_down(tmp_path):
    """clusterdoc killed mid-build must not leave the compiler running for minutes."""
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        f"from clusterdoc.wheel import build\n"
        f"build.run_logged(['sh', '-c', 'sleep 300 & echo $! > {pidfile}; wait'], '.', None, "
        f"__import__('pathlib').Path('{tmp_path}/log'), 'x')\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        __import__("time").sleep(0.05)
    grandchild = int(pidfile.read_text())
    proc.terminate()
    assert proc.wait(timeout=30) == 128 + 15
    for _ in range(100):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        __import__("time").sleep(0.05)
    else:
        os.kill(grandchild, 9)
        pytest.fail("the build's child outlived clusterdoc")


def test_archs_asked_for_are_checked_in_the_binaries(tmp_path, capsys):
    """The real nvcc fixture (sm_80, sm_90; PTX compute_86, compute_90) inside a wheel, as after a build."""
    from clusterdoc.wheel.command import check_binary_archs

    wheel = tmp_path / "deepspeed-0.19.8-cp311-cp311-linux_x86_64.whl"
    so = Path(__file__).parent / "facts" / "fatbin" / "sm80_sm90_ptx86_ptx90.so"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(so, "deepspeed/ops/adam/fused_adam_op.cpython-311-x86_64-linux-gnu.so")
        z.writestr("deepspeed/ops/adam/cpu_adam_op.cpython-311-x86_64-linux-gnu.so", b"\x7fELF not really")
        z.writestr("deepspeed/__init__.py", "")
    archs = {"sass": ["sm_80", "sm_90"], "ptx": ["compute_86", "compute_90"]}
    assert check_binary_archs(wheel, [(8, 0), (9, 0)], [(12, 1)]) is None  # the broken .so is a FAIL
    assert "cpu_adam_op.cpython-311-x86_64-linux-gnu.so: the binary: not an ELF file" in capsys.readouterr().out
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(so, "deepspeed/ops/adam/fused_adam_op.cpython-311-x86_64-linux-gnu.so")
    assert check_binary_archs(wheel, [(8, 0), (9, 0)], [(12, 1)]) == {
        "deepspeed/ops/adam/fused_adam_op.cpython-311-x86_64-linux-gnu.so": archs
    }
    assert "  archs fused_adam_op: SASS sm_80, sm_90; PTX compute_86, compute_90" in capsys.readouterr().out
    assert check_binary_archs(wheel, [(8, 0), (10, 0)], [(12, 1)]) is None
    assert "asked for but not in the binary: deepspeed/ops/adam/fused_adam_op" in capsys.readouterr().out
