"""Logging order, trigger and OOM agreement on real gloo process groups."""
import pytest

from clusterdoc.shim.oom import find_executable_batch_size, is_oom_error
from tests.shim_helpers import results, run_ranks


def ordered_lines(text, needle):
    return [line for line in text.splitlines() if needle in line]


def test_in_order_logs_come_out_in_rank_order(tmp_path):
    outs = run_ranks("log", "INFO,INFO,INFO", n=3, shared=tmp_path / "out.txt")
    results(outs)
    text = outs[0][2]
    for i in range(3):
        lines = ordered_lines(text, f"in-order message {i}")
        assert [line.split("[rank ")[1][:3] for line in lines] == ["0/3", "1/3", "2/3"], text
    # main-process-only message once; the all-ranks one from every rank; rank tag with host on each
    assert len(ordered_lines(text, "main only")) == 1 and "[rank 0/3 " in ordered_lines(text, "main only")[0]
    assert len(ordered_lines(text, "every rank")) == 3


def test_in_order_with_different_levels_does_not_deadlock(tmp_path):
    outs = run_ranks("log", "INFO,WARNING,INFO", n=3, shared=tmp_path / "out.txt")
    assert [r["done"] for r in results(outs)] == [True] * 3
    lines = ordered_lines(outs[0][2], "in-order message 2")
    assert [line.split("[rank ")[1][:3] for line in lines] == ["0/3", "2/3"]


def test_must_show_trigger_on_rank_1_stops_both_at_the_same_step():
    found = results(run_ranks("trigger", 1, 3, n=2))
    assert [(r["step"], r["who"], r["next"]) for r in found] == [(3, [1], False)] * 2


def test_without_a_job_secret_the_hang_watch_is_off_and_says_so_once():
    """No CLUSTERDOC_JOB_SECRET and no user secret file to be had (HOME is not a folder): nothing goes through
    the store; rank 0 says once, in one line, why and what to do; the job runs."""
    outs = run_ranks("trigger", 1, 3, n=2, env={"CLUSTERDOC_JOB_SECRET": "", "HOME": "/dev/null"})
    assert [(r["step"], r["who"]) for r in results(outs)] == [(3, [1])] * 2
    said = [[line for line in text.splitlines() if "hang watch off" in line] for _, _, text in outs]
    assert [len(lines) for lines in said] == [1, 0], [text[-1500:] for _, _, text in outs]
    assert "cannot use /dev/null/.config/clusterdoc/job-secret" in said[0][0], said
    assert "export CLUSTERDOC_JOB_SECRET=" in said[0][0]


@pytest.mark.parametrize("kind", ["torch", "cuda_error", "nccl"])
def test_must_show_only_rank_1_oom_both_end_on_the_same_batch(kind):
    found = results(run_ranks("oom", "plain", 100, n=2, env={"OOM_KIND": kind}))
    assert found[0]["result"] == found[1]["result"] == 97  # 256 * 0.9^k until <= 100
    assert found[0]["tried"] == found[1]["tried"]


def test_oom_probe_search_then_one_real_run_and_accumulation():
    found = results(run_ranks("oom", "probe", 100, n=2))
    for r in found:
        assert r["result"] == 100 and r["tried"] == [100]
        assert r["probed"][:3] == [256, 128, 64] and len(r["probed"]) <= 13
    found = results(run_ranks("oom", "accum", 100, n=2))
    for r in found:
        size, steps = r["result"]
        assert size <= 100 and size * steps >= 256 and r["tried"][0] == [256, 1]


def test_oom_at_the_minimum_is_a_clear_error_on_every_rank():
    found = results(run_ranks("oom", "minimum", 10, n=2, env={"OOM_KIND": "mps"}))
    for r in found:
        assert "minimum batch size 64" in r["error"] and "rank(s) [1]" in r["error"]
        assert r["tried"][-1] == 64


# ---- single process: recognising OOM and the search itself

class Fake(RuntimeError):
    pass


@pytest.mark.parametrize("message", [
    "CUDA out of memory. Tried to allocate 20.00 MiB",
    "CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported",
    "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
    "cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
    "[enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 8",
    "MPS backend out of memory (MPS allocated: 18.00 GB, other allocations: 1.00 MB)",
    "XPU out of memory. Tried to allocate 2.00 GiB",
    "NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled cuda error, NCCL version 2.18.1\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 2 'out of memory'",
])
def test_oom_messages_are_recognised(message):
    assert is_oom_error(Fake(message))
    assert is_oom_error(ValueError("wrapped"), ) is False
    try:
        try:
            raise Fake(message)
        except Fake as inner:
            raise ValueError("step failed") from inner
    except ValueError as outer:
        assert is_oom_error(outer)


def test_other_errors_are_not_oom_and_propagate():
    assert not is_oom_error(RuntimeError("CUDA error: an illegal memory access was encountered"))

    @find_executable_batch_size(starting_batch_size=8)
    def train(batch_size):
        raise KeyError("bug")

    with pytest.raises(KeyError):
        train()


def run_search(start, limit, **kw):
    calls = []

    def step(bs):
        calls.append(bs)
        if bs > limit:
            raise Fake("CUDA out of memory.")

    fn = find_executable_batch_size(lambda bs: step(bs) or bs, starting_batch_size=start,
                                    probe=step if kw.pop("with_probe", False) else None, **kw)
    return fn(), calls


def test_backoff_is_geometric_like_accelerate():
    size, calls = run_search(128, 50)
    assert calls == [128, 115, 103, 92, 82, 73, 65, 58, 52, 46] and size == 46
    size, calls = run_search(128, 50, factor=0.5)
    assert calls == [128, 64, 32] and size == 32


def test_probe_search_finds_98_percent_in_few_attempts():
    for start, limit in [(1024, 300), (256, 255), (4096, 7), (64, 64), (1000, 1)]:
        size, calls = run_search(start, limit, with_probe=True)
        assert limit * 0.98 <= size <= limit and len(calls) <= 14, (start, limit, calls)
        assert calls[-1] == size  # the real run, once


def test_decorator_refuses_a_batch_size_argument():
    @find_executable_batch_size(starting_batch_size=8)
    def train(batch_size, model):
        return batch_size

    with pytest.raises(TypeError, match="Batch size was passed"):
        train(4, "model")
    assert train("model") == 8


def test_flight_recorder_names_follow_the_torch_that_reads_them():
    """torch >= 2.8 reads TORCH_FR_* and warns on each old TORCH_NCCL_* name (seen on a real H100, torch 2.11)."""
    from clusterdoc.shim import watch

    new = watch.flight_recorder_env("nccl", "/jobs/x", environ={}, torch_version="2.11.0+cu130")
    assert new == {"TORCH_FR_BUFFER_SIZE": "2000", "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
                   "TORCH_FR_DUMP_TEMP_FILE": "/jobs/x/nccl_trace_rank_"}
    old = watch.flight_recorder_env("nccl", None, environ={}, torch_version="2.4.1")
    assert old == {"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000", "TORCH_NCCL_DUMP_ON_TIMEOUT": "1"}
    # the user's own setting, under either name, is kept
    mine = watch.flight_recorder_env("nccl", None, environ={"TORCH_NCCL_TRACE_BUFFER_SIZE": "50"}, torch_version="2.11")
    assert mine == {"TORCH_NCCL_DUMP_ON_TIMEOUT": "1"}
