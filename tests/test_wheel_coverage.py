"""Which GPUs a wheel's binaries run on (clusterdoc/gpuarch.py): pure functions."""

import pytest

from clusterdoc import gpuarch as coverage

H100 = {"name": "NVIDIA H100 80GB HBM3", "capability": "9.0"}
A100 = {"name": "NVIDIA A100-SXM4-80GB", "capability": "8.0"}
A10 = {"name": "NVIDIA A10", "capability": "8.6"}
B200 = {"name": "NVIDIA B200", "capability": "10.0"}
ONLY_80 = {"deepspeed/ops/adam/fused_adam_op.so": {"sass": ["sm_80"], "ptx": []}}


@pytest.mark.parametrize(
    "cap, sass, ptx, expected",
    [
        ((8, 6), ["sm_80"], [], "sass"),  # same major, lower minor: the A10 runs A100 code
        ((8, 0), ["sm_86"], [], None),  # a higher minor does not run on a lower one
        ((9, 0), ["sm_80"], [], None),  # another major never
        ((9, 0), ["sm_80"], ["compute_80"], "ptx"),  # lower PTX is JIT-compiled
        ((8, 0), ["sm_90"], ["compute_90"], None),  # higher PTX is not
        ((10, 0), ["sm_80", "sm_90"], [], None),  # Blackwell: nothing of 10.x, no PTX
        ((10, 0), ["sm_80", "sm_90"], ["compute_90"], "ptx"),
        ((12, 0), ["sm_100"], [], None),
        ((10, 3), ["sm_100"], [], "sass"),
        ((10, 3), ["sm_100f"], [], "sass"),  # a family cubin runs within its family
        ((9, 0), ["sm_90a"], [], "sass"),  # an arch-specific cubin on its own GPU...
        ((10, 0), ["sm_90a"], ["compute_90a"], None),  # ...only; its PTX does not JIT forward either
        ((10, 3), [], ["compute_100f"], "ptx"),
        ((12, 0), [], ["compute_100f"], None),
        ((9, 0), ["sm_90"], ["compute_80"], "sass"),  # SASS first
    ],
)
def test_coverage_rule(cap, sass, ptx, expected):
    assert coverage.covered_by(cap, sass, ptx) == expected


def test_refusal_names_the_node_its_gpu_and_what_the_wheel_has():
    lines = coverage.refusals({"node7": [H100] * 8, "node1": [A100, A10]}, ONLY_80)
    assert lines == ["node7: H100 (sm_90) but the wheel has sm_80 only and no PTX: rebuild with --arch-list '8.0;9.0'"]


def test_no_refusal_when_ptx_or_sass_covers_every_gpu():
    with_ptx = {"x.so": {"sass": ["sm_80"], "ptx": ["compute_80"]}}
    assert coverage.refusals({"n1": [H100, A100], "n2": [B200]}, with_ptx) == []
    assert coverage.refusals({"n1": [A100, A10], "cpu": []}, ONLY_80) == []
    assert coverage.refusals({"n1": [H100]}, {"cpu_adam_op.so": {"sass": [], "ptx": []}}) == []  # no device code


def test_refusal_for_each_failing_gpu_kind_with_several_archs_and_ptx_named():
    exts = {"x.so": {"sass": ["sm_80", "sm_86"], "ptx": ["compute_120a"]}}
    lines = coverage.refusals({"n2": [B200, H100, {"name": "mystery", "capability": "?"}]}, exts)
    assert lines == [
        "n2: B200 (sm_100) but the wheel has sm_80 and sm_86 only and PTX for compute_120a only: "
        "rebuild with --arch-list '8.0;8.6;10.0'",
        "n2: H100 (sm_90) but the wheel has sm_80 and sm_86 only and PTX for compute_120a only: "
        "rebuild with --arch-list '8.0;8.6;9.0'",
    ]


@pytest.mark.parametrize(
    "name, short",
    [
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("Tesla V100-SXM2-32GB", "V100"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA RTX A6000", "A6000"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        (None, "GPU"),
    ],
)
def test_gpu_short_name(name, short):
    assert coverage.gpu_short_name(name) == short


def test_a_wheel_without_ptx_and_without_the_newest_arch_is_flagged():
    no_ptx = {"x.so": {"sass": ["sm_80", "sm_90"], "ptx": []}}
    note = coverage.future_note(no_ptx, (12, 1))
    assert note and "no PTX" in note and "sm_90" in note and "sm_121" in note and "'...;9.0+PTX'" in note
    assert coverage.future_note(no_ptx, None)  # the newest unknown: still flagged
    assert coverage.future_note(no_ptx, (9, 0)) is None  # it has the newest this nvcc can build
    assert coverage.future_note({"x.so": {"sass": ["sm_80"], "ptx": ["compute_80"]}}, (12, 1)) is None
    assert coverage.future_note({"cpu.so": {"sass": [], "ptx": []}}, (12, 1)) is None
