"""An installed DeepSpeed's compiled ops against the node's GPUs: what the probe reads from the .so files (their
.nv_fatbin, no manifest needed) and how the arch check judges it (from facts alone; the coverage rule itself
is clusterdoc/gpuarch.py's, tested in test_wheel_coverage.py).

tests/facts/fatbin/fused_adam_sm80_only.so is real nvcc 13.0 output (this machine's /usr/local/cuda-13.0), from a
one-kernel .cu: `nvcc -shared -Xcompiler -fPIC -cudart none -gencode arch=compute_80,code=sm_80 k.cu`, stripped.
"""

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

from clusterdoc import probe
from clusterdoc.checks import FAIL, OK, WARN, arch
from clusterdoc.doctor import payload
from clusterdoc.untrusted import clean_facts

FACTS = Path(__file__).parent / "facts"
SM80_ONLY = FACTS / "fatbin" / "fused_adam_sm80_only.so"
TWO = FACTS / "fatbin" / "sm80_sm90_ptx86_ptx90.so"
SO = "cpython-311-x86_64-linux-gnu.so"


def judge(facts):
    return arch.check("gpu07", facts, None, arch.needed_arch_list({"gpu07": facts}))


def test_op_built_for_sm80_only_fails_on_h100_naming_op_gpu_and_fix():
    facts = json.loads((FACTS / "deepspeed_sm80_on_h100.json").read_text())
    bad = [f for f in judge(facts) if f["status"] != OK]
    assert [(f["check"], f["status"]) for f in bad] == [("arch", FAIL)]
    f = bad[0]
    assert f["node"] == "gpu07"
    assert ("DeepSpeed op fused_adam (/usr/local/lib/python3.10/dist-packages/deepspeed/ops/adam/"
            "fused_adam_op.cpython-310-x86_64-linux-gnu.so) has sm_80 only and no PTX: nothing for this node's "
            "H100 (sm_90)") in f["message"]
    assert "no kernel image is available" in f["message"]
    assert f["fix"].endswith('clusterdoc build-wheel --arch-list "9.0+PTX" --install')


def test_ops_covered_by_sass_or_ptx():
    facts = json.loads((FACTS / "deepspeed_sm80_on_h100.json").read_text())
    fused = facts["deepspeed"]["binaries"][1]
    fused["sass"] = ["sm_80", "sm_90"]
    found = judge(facts)
    assert [f for f in found if f["status"] != OK] == []
    ok = "DeepSpeed's compiled ops: cpu_adam (host code); fused_adam (sm_80, sm_90); utils (host code)"
    assert ok in [f["message"] for f in found]
    fused["sass"], fused["ptx"] = ["sm_80"], ["compute_80"]
    bad = [f for f in judge(facts) if f["status"] != OK]
    assert [(f["status"], "PTX JIT" in f["message"]) for f in bad] == [(WARN, True)]


def test_a_jit_only_install_and_unread_extensions_are_said():
    facts = json.loads((FACTS / "deepspeed_sm80_on_h100.json").read_text())
    facts["deepspeed"]["binaries_left"] = 3
    assert any(f["message"].endswith("(3 more not read)") for f in judge(facts))
    facts["deepspeed"]["binaries"] = []
    found = judge(facts)
    assert [f for f in found if f["status"] != OK] == []
    assert any("no prebuilt op: each op is JIT-compiled on first use" in f["message"] for f in found)


def test_binaries_beat_the_manifest_and_unreadable_ones_warn():
    facts = json.loads((FACTS / "deepspeed_sm80_on_h100.json").read_text())
    facts["deepspeed"]["wheel_manifest"] = {"arch_list": "8.0"}  # would fail too: said once, from the binary
    assert [f["status"] for f in judge(facts) if f["status"] != OK] == [FAIL]
    facts["deepspeed"]["binaries"] = [{"file": "ops/adam/fused_adam_op.so", "op": "fused_adam", "error": "not an ELF"}]
    bad = [f for f in judge(facts) if f["status"] != OK]
    assert [f["status"] for f in bad] == [WARN, FAIL]  # the unreadable file; the manifest judged instead
    assert "cannot read the GPU code" in bad[0]["message"] and "built for 8.0" in bad[1]["message"]


def test_binaries_are_untrusted_facts():
    facts = json.loads((FACTS / "deepspeed_sm80_on_h100.json").read_text())
    facts["deepspeed"]["binaries"][1]["sass"] = ["sm_80\x1b[2J"]
    assert "\x1b" not in json.dumps(clean_facts(facts))
    facts["deepspeed"]["binaries"].append({"op": "x", "sass": ["sm_80"]})  # no file: the list is malformed
    clean = clean_facts(facts)
    assert clean["deepspeed"]["binaries"] is None and clean["deepspeed"]["version"] == "0.19.8"
    assert "deepspeed.binaries[3]" in [m["field"] for m in clean["malformed"]]


def fake_deepspeed(root: Path) -> Path:
    pkg = root / "deepspeed"
    (pkg / "ops" / "adam").mkdir(parents=True)
    (pkg / "ops" / "csrc").mkdir()
    (pkg / "__init__.py").write_text("")
    shutil.copy(SM80_ONLY, pkg / "ops" / "adam" / f"fused_adam_op.{SO}")
    shutil.copy(TWO, pkg / "ops" / f"transformer_inference_op.{SO}")
    (pkg / "ops" / f"utils_op.{SO}").write_bytes(Path("/bin/true").read_bytes())  # host code only
    (pkg / "ops" / "csrc" / "broken.so").write_text("not an ELF\n")
    return pkg


def test_probe_as_sent_reads_every_op_binary(tmp_path):
    """The payload the head sends (the fatbin reader inside it), run by this machine's python3 from stdin."""
    fake_deepspeed(tmp_path)
    sent = payload.probe_payload()
    reader = next(n.value.value for n in ast.parse(sent).body
                  if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "FATBIN_SOURCE")
    ast.parse(reader, feature_version=(3, 6))
    old = [p for p in ("/root/.pyenv/versions/3.6.15/bin/python3", "/usr/bin/python3.6") if os.path.exists(p)]
    for python in ["python3"] + old[:1]:  # the oldest python a node may have, when this machine has it
        p = subprocess.run([python, "-", "--timeout", "5"], input=sent, capture_output=True,
                           env=dict(os.environ, PYTHONPATH=str(tmp_path)), timeout=120)
        assert p.returncode == 0, p.stderr
        check_binaries(json.loads(p.stdout)["deepspeed"])


def check_binaries(ds):
    assert ds["binaries"] == [
        {"file": "ops/adam/fused_adam_op." + SO, "op": "fused_adam", "sass": ["sm_80"], "ptx": []},
        {"file": "ops/csrc/broken.so", "op": "broken", "error": "not an ELF file"},
        {"file": "ops/transformer_inference_op." + SO, "op": "transformer_inference", "sass": ["sm_80", "sm_90"],
         "ptx": ["compute_86", "compute_90"]},
        {"file": "ops/utils_op." + SO, "op": "utils", "sass": [], "ptx": []},
    ]
    assert ds["binaries_left"] == 0


def test_binaries_are_bounded(tmp_path, monkeypatch):
    pkg = fake_deepspeed(tmp_path)
    monkeypatch.setattr(probe.pyenv, "MAX_DS_BINARIES", 2)
    found, left = probe.deepspeed_binaries(str(pkg), 5.0)
    assert [b["op"] for b in found] == ["fused_adam", "broken"] and left == 2
    found, left = probe.deepspeed_binaries(str(pkg), -1.0)  # budget spent: nothing read, what was seen counted
    assert found == [] and left >= 1
