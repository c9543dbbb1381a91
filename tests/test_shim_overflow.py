"""inf/nan hooks: report contents, trace mode, gradients, global hooks, removal; rank files on 2 ranks."""
import pytest
import torch

from clusterdoc.shim.overflow import (DebugUnderflowOverflow, OverflowDetected, detect_overflow,
                                      enable_overflow_detection)
from tests.shim_helpers import results, run_ranks


def model_fp16():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8)).half()


def overflow(model):
    with torch.no_grad():
        model[0].weight.fill_(10.0)
        model[2].weight.fill_(1000.0)


X = torch.ones(2, 8, dtype=torch.float16)


def test_must_show_fp16_overflow_caught_with_the_module_named(capsys, tmp_path):
    model = model_fp16()
    dbg = DebugUnderflowOverflow(model, max_frames_to_save=2, report_dir=tmp_path)
    model(X)
    overflow(model)
    with pytest.raises(ValueError, match=r"output of 2 Linear \(batch_number=1\)"):
        model(X)
    out = capsys.readouterr().out
    assert "Detected inf/nan during batch_number=1" in out and "Last 2 forward frames:" in out
    assert "[rank " not in out  # one process: transformers' text as it is (rank tags only with several)
    lines = out.splitlines()
    assert "1.00e+03 1.00e+03 weight" in lines and "     inf      inf output" in lines
    assert "0 Linear" not in out  # only the last 2 frames: ReLU and the Linear that overflowed
    assert "inf      inf output" in (tmp_path / "overflow_rank0.txt").read_text()
    assert dbg.detected_overflow and len(dbg.frames) == 0


def test_finite_values_whose_sum_overflows_are_not_reported():
    model = torch.nn.Sequential(torch.nn.Identity())
    DebugUnderflowOverflow(model)
    model(torch.full((1000,), 3e38))  # float32 sum is inf, every value finite


def test_trace_mode_prints_chosen_batches_and_abort_after(capsys):
    model = model_fp16()
    dbg = DebugUnderflowOverflow(model, trace_batch_nums=[1], abort_after_batch_num=2)
    model(X)
    assert "Linear" not in capsys.readouterr().out
    model(X)
    traced = capsys.readouterr().out
    assert "0 Linear" in traced and "input[0]" in traced and len(dbg.frames) == 0
    with pytest.raises(ValueError, match="abort_after_batch_num=2"):
        model(X)


def test_remove_takes_the_hooks_off():
    model = model_fp16()
    dbg = DebugUnderflowOverflow(model)
    dbg.remove()
    overflow(model)
    assert not torch.isfinite(model(X)).all()  # no exception: nothing watches any more
    assert not model[0]._forward_hooks


def test_gradient_check_names_the_parameter(capsys):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    DebugUnderflowOverflow(model, check_gradients=True)
    loss = model(torch.ones(3, 4)).sum()
    loss.backward()  # fine
    loss = (model(torch.ones(3, 4)) * float("inf")).sum()
    with pytest.raises(OverflowDetected, match="gradient of"):
        loss.backward()
    assert "grad 1.weight" in capsys.readouterr().out


def test_global_hooks_watch_any_model_without_editing_it(capsys):
    handle = enable_overflow_detection()
    try:
        assert enable_overflow_detection() is handle
        model = model_fp16()  # built after switching on
        model(X)
        overflow(model)
        with pytest.raises(ValueError, match="2 Linear"):
            model(X)
        with pytest.raises(ValueError):  # a model only seen now is watched as well
            torch.nn.Sequential(torch.nn.Identity())(torch.tensor([float("nan")]))
    finally:
        handle.remove()
    torch.nn.Sequential(torch.nn.Identity())(torch.tensor([float("nan")]))  # off again


def test_detect_overflow_like_transformers(capsys):
    assert detect_overflow(torch.tensor([1.0, float("nan"), float("inf")]), "here")
    assert capsys.readouterr().out.splitlines() == ["here has nans", "here has infs"]
    assert not detect_overflow(torch.ones(3), "fine")


def test_two_ranks_only_rank_1_overflows_with_its_own_report_file(tmp_path):
    outs = run_ranks("overflow", "global", n=2, env={"REPORT_DIR": str(tmp_path)})
    found = results(outs)
    assert not found[0]["raised"] and found[1]["raised"] and "2 Linear" in found[1]["message"]
    assert "[rank 1/2 " in outs[1][2]
    assert [p.name for p in tmp_path.iterdir()] == ["overflow_rank1.txt"]
