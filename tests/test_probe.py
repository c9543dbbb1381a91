"""The probe's parsers, its timeouts, and its output on this machine (no SSH)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from clusterdoc import probe
from clusterdoc.doctor import payload

FACTS = Path(__file__).parent / "facts"
PROBE = payload.probe_payload()  # the one script the nodes run, joined from clusterdoc/probe/


def test_parse_nvidia_smi():
    out = "0, NVIDIA H100 80GB HBM3, 9.0, 81559, 550.54.14\n1, NVIDIA H100 80GB HBM3, 9.0, 81559, 550.54.14\n"
    gpus = probe.parse_nvidia_smi(out)
    assert gpus[1] == {"index": 1, "name": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_mib": 81559,
                       "driver": "550.54.14"}
    old = probe.parse_nvidia_smi("0, Tesla V100-SXM2-32GB, 32510, 470.82.01", has_cap=False)
    assert old[0]["capability"] == "7.0"


def test_gcc_limit_from_host_config():
    text = ("#if defined(__GNUC__)\n#if __GNUC__ > 12\n#error -- unsupported GNU version! gcc versions later "
            "than 12 are not supported!\n#endif\n")
    assert probe.parse_gcc_limit(text) == 12
    real = Path("/usr/local/cuda-13.0/include/crt/host_config.h")
    if real.exists():
        assert probe.parse_gcc_limit(real.read_text()) == 15


def test_nvcc_host_config_is_found_along_its_profile(tmp_path):
    # a toolkit: bin/nvcc.profile -> $(TOP)/$(_TARGET_DIR_)/include, _TARGET_DIR_ = targets/<platform>
    kit = tmp_path / "cuda-12.4"
    (kit / "bin").mkdir(parents=True)
    (kit / "bin" / "nvcc.profile").write_text('TOP = $(_HERE_)/..\nINCLUDES +=  "-I$(TOP)/$(_TARGET_DIR_)/include" '
                                              "$(_SPACE_)\n")
    header = kit / "targets" / "x86_64-linux" / "include" / "crt" / "host_config.h"
    header.parent.mkdir(parents=True)
    header.write_text("#if __GNUC__ > 13\n#error -- unsupported GNU version! gcc versions later than 13\n")
    nvcc = str(kit / "bin" / "nvcc")
    assert probe.nvcc_host_config(nvcc, nvcc, str(kit)) == str(header)
    # pip's nvidia-cuda-nvcc: $(TOP)/include, and headers elsewhere named by a profile beside a symlinked nvcc
    other = tmp_path / "cu11" / "include" / "crt" / "host_config.h"
    other.parent.mkdir(parents=True)
    other.write_text("")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc.profile").write_text(f'INCLUDES += "-I{tmp_path}/none" "-I{tmp_path}/cu11/include"\n')
    assert probe.nvcc_host_config(str(tmp_path / "bin" / "nvcc"), nvcc, str(kit)) == str(other)
    # no profile: <home>/include
    (kit / "bin" / "nvcc.profile").unlink()
    (kit / "include").symlink_to("targets/x86_64-linux/include")
    assert probe.nvcc_host_config(nvcc, nvcc, str(kit)) == str(kit / "include" / "crt" / "host_config.h")
    assert probe.nvcc_host_config(nvcc, nvcc, None) is None


def test_mpirun_flavours():
    assert probe.parse_mpirun_version("HYDRA build details:\n    Version:    4.0.2\n") == ("mpich", "4.0.2")
    assert probe.parse_mpirun_version("mpirun (Open MPI) 4.1.4\n\nReport bugs") == ("openmpi", "4.1.4")
    # Debian's mpirun.openmpi (v4, called by that name) names ORTE instead
    assert probe.parse_mpirun_version("mpirun.openmpi (OpenRTE) 4.1.4\n\nReport bugs") == ("openmpi", "4.1.4")


def test_shell_fallback_output_parses():
    facts = probe.parse_shell_output((FACTS / "shell_probe_output.txt").read_text())
    assert facts["probe"] == "shell" and facts["python"] is None
    assert facts["kernel"]["release"] and facts["hostname"]
    assert facts["nvcc"]["version"] == "13.0"
    assert {e["probe"] for e in facts["errors"]} >= {"python3", "gpus"}  # the fixture's nvidia-smi hung


def test_shell_probe_runs_under_sh():
    out = subprocess.run(["sh", "-c", probe.shell_probe(3)], stdout=subprocess.PIPE, timeout=30).stdout.decode()
    facts = probe.parse_shell_output(out)
    assert facts["kernel"]["release"] == open("/proc/sys/kernel/osrelease").read().strip()


def test_hanging_and_failing_commands_become_errors(tmp_path):
    (tmp_path / "nvidia-smi").write_text("#!/bin/sh\nsleep 60 & sleep 60\n")
    (tmp_path / "gcc").write_text("#!/bin/sh\necho broken >&2; exit 3\n")
    for f in tmp_path.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    p = subprocess.run([sys.executable, "-", "--timeout", "1"], input=PROBE, stdout=subprocess.PIPE,
                       env=env, timeout=30)
    facts = json.loads(p.stdout)
    errors = {e["probe"]: e["message"] for e in facts["errors"]}
    assert "did not answer in 1s" in errors["gpus"]
    assert "exited 3: broken" in errors["gcc"]
    assert facts["kernel"]["release"] and facts["nvcc"]  # the rest still came out


def test_probe_parses_on_python36_syntax():
    import ast

    ast.parse(PROBE.decode(), feature_version=(3, 6))
    for module in Path(probe.__file__).parent.glob("*.py"):
        ast.parse(module.read_text(), feature_version=(3, 6))


def test_deepspeed_facts_and_wheel_manifest_without_importing_it(tmp_path):
    ds = tmp_path / "deepspeed"
    ds.mkdir()
    (ds / "__init__.py").write_text("raise SystemExit('deepspeed must not be imported by the probe')\n")
    (ds / "git_version_info_installed.py").write_text(
        "version = '0.19.8'\ninstalled_ops = {'cpu_adam': True, 'fused_adam': False}\n"
        "compatible_ops = {'cpu_adam': True, 'fused_adam': True}\n"
        "torch_info = {'version': '2.3', 'cuda_version': '12.1', 'nccl_version': '2.20'}\n")
    (ds / "clusterdoc-wheel.json").write_text(json.dumps({"schema": 1, "arch_list": "8.0;8.6+PTX"}))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run([sys.executable, "-", "--timeout", "5"], input=PROBE, stdout=subprocess.PIPE,
                       env=env, timeout=60)
    facts = json.loads(p.stdout)
    d = facts["deepspeed"]
    assert (d["version"], d["cuda_version"]) == ("0.19.8", "12.1")
    assert d["ops_installed"] == {"cpu_adam": True, "fused_adam": False}
    assert d["wheel_manifest"]["arch_list"] == "8.0;8.6+PTX"

    from clusterdoc.checks import arch

    h100 = json.loads((FACTS / "h100_outside_arch_list.json").read_text())
    h100["env"]["TORCH_CUDA_ARCH_LIST"] = "9.0"
    h100["deepspeed"] = d
    out = arch.check("n1", h100, None, "9.0+PTX")
    assert [(f["status"], "PTX JIT" in f["message"]) for f in out if f["status"] != "ok"] == [("warn", True)]
    d["wheel_manifest"]["arch_list"] = "8.0;8.6"
    out = arch.check("n1", h100, None, "9.0+PTX")
    bad = [f for f in out if f["status"] != "ok"]
    assert [f["status"] for f in bad] == ["fail"] and "not for this node's 9.0" in bad[0]["message"]
    assert "cpu_adam" in " ".join(f["message"] for f in out)


def test_payload_sent_to_nodes_is_the_probe_without_head_only_parts():
    import ast

    from clusterdoc.doctor import payload as doctor

    payload = doctor.PROBE_SOURCE.decode()
    ast.parse(payload, feature_version=(3, 6))
    assert "parse_shell_output" not in payload and "def gather(" in payload
    olds = [p for p in ("/root/.pyenv/versions/3.6.15/bin/python3", "/usr/bin/python3.6") if os.path.exists(p)]
    for py in [sys.executable] + olds[:1]:  # an old python when this machine has one (pyenv shims are not enough)
        p = subprocess.run([py, "-", "--timeout", "5"], input=doctor.PROBE_SOURCE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        assert p.returncode == 0, p.stderr
        facts = json.loads(p.stdout)
        assert facts["schema"] == 1 and facts["kernel"]["release"]


def test_payload_is_kept_between_runs_only_in_a_private_folder(tmp_path, monkeypatch):
    """probe/payload.py keeps the payload in the user's cache (named after the sources), not in a folder others
    can write to; what it sends is the payload made from the sources either way."""
    from clusterdoc.probe import payload

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    payload.probe_source.cache_clear()
    made = payload.probe_source()
    (cached,) = (tmp_path / "clusterdoc").glob("probe-*.py")
    assert cached.read_bytes() == made == payload.probe_payload() and cached.stat().st_mode & 0o077 == 0
    cached.write_bytes(made.replace(b"def main(", b"def main_cached("))  # what a later run reads back
    payload.probe_source.cache_clear()
    assert b"def main_cached(" in payload.probe_source()
    (tmp_path / "clusterdoc").chmod(0o777)  # others could have written it: not read
    payload.probe_source.cache_clear()
    assert payload.probe_source() == made
    payload.probe_source.cache_clear()
