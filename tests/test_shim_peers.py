"""The shim against its peers' own tests: what Accelerate's and transformers' test suites assert, run on the shim.

Ported (assertions kept, set-up adapted):
- Accelerate tests/test_logging.py and tests/test_memory_utils.py at
  huggingface/accelerate@16cb6eb80dd9aa8b4df1a63ef57863e455d53b83 (2026-07-24); the code they pin down:
  src/accelerate/logging.py, src/accelerate/utils/memory.py, same commit.
- transformers src/transformers/debug_utils.py (DebugUnderflowOverflow's docstring and format) at
  huggingface/transformers@3f7e3145ac52f6d3558b5cf1f20ca204aac697a3; transformers has no unit test of its own for it.

Where Accelerate is installed (the test extra) the same test also runs against it (`impl` "accelerate"): a port that
fails against the peer it copies is a wrong port. Deliberate differences are asserted as such and listed in
docs/shim.md#differences-from-accelerate-and-transformers.
"""

import gc
import inspect
import logging
import os
import socket
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn

from clusterdoc import shim
from clusterdoc.shim import oom

try:
    import accelerate  # noqa: F401

    HAVE_ACCELERATE = True
except ImportError:
    HAVE_ACCELERATE = False

needs_accelerate = pytest.mark.skipif(not HAVE_ACCELERATE, reason="accelerate not installed (pip install -e .[test])")
IMPLS = ["shim", pytest.param("accelerate", marks=needs_accelerate)]


# ---------------------------------------------------------------- logging (Accelerate tests/test_logging.py)


@pytest.fixture(autouse=True)
def root_logger_restored():
    """get_logger(log_level=...) sets the root logger's level too (as Accelerate's): not past this test."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.setLevel(level)
    root.handlers[:] = handlers


def current_lineno() -> int:
    # the line number of its call site (Accelerate's helper)
    caller_frame = inspect.currentframe().f_back
    return inspect.getframeinfo(caller_frame).lineno


class CustomLogger(logging.LoggerAdapter):
    # a user's own wrapper that sets stacklevel=3 (Accelerate's test): the adapter must respect it
    def log(self, level, msg, *args, **kwargs):
        kwargs["stacklevel"] = 3
        self.logger.log(level, msg, *args, **kwargs)


@pytest.fixture
def get_logger(request):
    """get_logger of the implementation under test; Accelerate's needs its state initialised first."""
    if request.param == "accelerate":
        from accelerate.logging import get_logger as theirs
        from accelerate.state import PartialState

        PartialState()
        yield theirs
        PartialState._reset_state()
    else:
        yield shim.get_logger


@pytest.mark.parametrize("get_logger", IMPLS, indirect=True)
def test_log_stack(caplog, get_logger):
    logger = get_logger(__name__)
    logging.basicConfig(format="%(filename)s:%(name)s:%(lineno)s:%(funcName)s - %(message)s")

    message = "Test"
    expected_message, _ = logger.process(message, {})
    lineno = current_lineno() + 1  # the next line is the actual call site
    logger.warning(message)

    assert len(caplog.records) == 1
    rec = caplog.records[0]
    assert rec.levelname == logging.getLevelName(logging.WARNING)
    assert rec.filename == os.path.basename(__file__)
    assert rec.name == __name__
    assert rec.lineno == lineno
    assert rec.funcName == test_log_stack.__name__
    assert rec.message == expected_message


@pytest.mark.parametrize("get_logger", IMPLS, indirect=True)
def test_custom_stacklevel(caplog, get_logger):
    wrapped_logger = get_logger(__name__)
    logger = CustomLogger(wrapped_logger, {})

    message = "Test"
    expected_message, _ = wrapped_logger.process(message, {})
    lineno = current_lineno() + 1
    logger.warning(message)

    # CustomLogger.log set stacklevel=3: the record names this test's line, not the wrapper's
    assert len(caplog.records) == 1
    rec = caplog.records[0]
    assert rec.filename == os.path.basename(__file__)
    assert rec.name == __name__
    assert rec.lineno == lineno
    assert rec.funcName == test_custom_stacklevel.__name__
    assert rec.message == expected_message


@pytest.mark.parametrize("get_logger", IMPLS, indirect=True)
def test_every_entry_point_names_the_caller(caplog, get_logger):
    """info/debug/log/exception and the keyword forms, at every level: the record's site is this file's line."""
    logger = get_logger(__name__, log_level="DEBUG")
    calls = [
        lambda: logger.info("i"),
        lambda: logger.debug("d", main_process_only=False),
        lambda: logger.log(logging.ERROR, "l %s", "arg"),
        lambda: logger.warning("w", in_order=True),
        lambda: logger.critical("c", main_process_only=True),
    ]
    for call in calls:
        call()
    assert [r.filename for r in caplog.records] == [os.path.basename(__file__)] * len(calls)
    assert [r.funcName for r in caplog.records] == ["<lambda>"] * len(calls)
    assert caplog.records[2].getMessage().endswith("l arg")


def test_warning_once_warns_once_from_the_callers_line(caplog):
    logger = shim.get_logger(__name__)
    for _ in range(3):
        lineno = current_lineno() + 1
        logger.warning_once("careful")
    logger.warning_once("careful", main_process_only=False)  # other arguments: another message, as lru_cache keys
    assert len(caplog.records) == 2
    assert (caplog.records[0].filename, caplog.records[0].lineno) == (os.path.basename(__file__), lineno)
    # Accelerate's warning_once names its own logging.py (it passes no stacklevel for its extra frame)


def test_in_order_logs_on_a_world_of_one_without_main_process_only(caplog):
    # Accelerate's docstring example: logger.info(letter_at_rank, in_order=True)
    shim.get_logger(__name__).info("a", in_order=True)
    assert [r.message.split("] ", 1)[1] for r in caplog.records] == ["a"]


def test_a_format_set_after_get_logger_is_kept(tmp_path):
    """Accelerate's examples call get_logger at import and logging.basicConfig(format=...) in main():
    the format must be the user's, with the caller's file and line."""
    import subprocess
    import sys

    script = tmp_path / "user_script.py"
    script.write_text(
        "import logging\n"
        "from clusterdoc import shim\n"
        "logger = shim.get_logger(__name__)\n"
        "def main():\n"
        "    logging.basicConfig(format='%(filename)s:%(lineno)d %(funcName)s %(message)s')\n"
        "    logger.info('hello')\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("user_script.py:6 main [rank 0/1 "), proc.stderr
    assert proc.stderr.rstrip().endswith("] hello"), proc.stderr


# ---------------------------------------------------------------- memory (Accelerate tests/test_memory_utils.py)


def raise_fake_out_of_memory():
    raise RuntimeError("CPU out of memory.")  # Accelerate's f"{torch_device.upper()} out of memory." on a CPU


@pytest.fixture
def fesb(request):
    """find_executable_batch_size of the implementation under test."""
    if request.param == "accelerate":
        from accelerate.utils.memory import find_executable_batch_size

        return find_executable_batch_size
    return shim.find_executable_batch_size


@pytest.fixture
def release(request):
    if request.param == "accelerate":
        from accelerate.utils.memory import release_memory

        return release_memory
    return shim.release_memory


@pytest.fixture
def gc_calls(monkeypatch):
    """gc.collect() counted, not run: a collection takes a good part of a second with torch loaded, on every
    attempt; what these tests compare is the sizes (test_release_memory runs the real one)."""
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    return calls


ACCELERATE_SEQUENCE = [128, 115, 103, 92, 82, 73, 65, 58, 52, 46, 41, 36, 32, 28, 25, 22, 19, 17, 15, 13, 11, 9, 8]


@pytest.mark.parametrize("fesb", IMPLS, indirect=True)
def test_memory_implicit(fesb, gc_calls):
    batch_sizes = []

    @fesb(starting_batch_size=128)
    def mock_training_loop_function(batch_size):
        batch_sizes.append(batch_size)
        if batch_size != 8:
            raise_fake_out_of_memory()

    mock_training_loop_function()
    assert batch_sizes == ACCELERATE_SEQUENCE
    assert len(gc_calls) == len(ACCELERATE_SEQUENCE)  # once per call, once after each out-of-memory attempt


@pytest.mark.parametrize("fesb", IMPLS, indirect=True)
def test_memory_explicit(fesb, gc_calls):
    batch_sizes = []

    @fesb(starting_batch_size=128)
    def mock_training_loop_function(batch_size, arg1):
        batch_sizes.append(batch_size)
        if batch_size != 8:
            raise_fake_out_of_memory()
        return batch_size, arg1

    bs, arg1 = mock_training_loop_function("hello")
    assert batch_sizes == ACCELERATE_SEQUENCE
    assert [bs, arg1] == [8, "hello"]


@pytest.mark.parametrize("fesb", IMPLS, indirect=True)
def test_start_zero(fesb, gc_calls):
    @fesb(starting_batch_size=0)  # no error when decorating
    def mock_training_loop_function(batch_size):
        pass

    with pytest.raises(RuntimeError) as info:
        mock_training_loop_function()
    assert "No executable batch size found, reached zero." in info.value.args[0]


@pytest.mark.parametrize("fesb", IMPLS, indirect=True)
def test_approach_zero(fesb, gc_calls):
    tried = []

    @fesb(starting_batch_size=16)
    def mock_training_loop_function(batch_size):
        tried.append(batch_size)
        if batch_size > 0:
            raise_fake_out_of_memory()

    with pytest.raises(RuntimeError) as info:
        mock_training_loop_function()
    assert "No executable batch size found, reached zero." in info.value.args[0]
    assert tried == [16, 14, 12, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    with pytest.raises(RuntimeError, match="reached zero"):  # the next call gives up at once, as Accelerate's
        mock_training_loop_function()
    assert len(tried) == 13


@pytest.mark.parametrize("fesb", IMPLS, indirect=True)
def test_verbose_guard(fesb, gc_calls):
    @fesb(starting_batch_size=128)
    def mock_training_loop_function(batch_size, arg1, arg2):
        if batch_size != 8:
            raise raise_fake_out_of_memory()

    with pytest.raises(TypeError) as info:
        mock_training_loop_function(128, "hello", "world")
    assert "Batch size was passed into `mock_training_loop_function`" in info.value.args[0]
    assert "`mock_training_loop_function(arg1=" in info.value.args[0]


def test_verbose_guard_shows_the_call_without_the_batch_size():
    # Accelerate's test (whose asserts sit after the raise) expects `f(arg1='hello', arg2='world')`
    @shim.find_executable_batch_size(starting_batch_size=128)
    def f(batch_size, arg1, arg2):
        pass

    with pytest.raises(TypeError) as info:
        f(128, "hello", "x" * 10_000)
    assert "Batch size was passed into `f`" in info.value.args[0]
    assert "`f(arg1='hello', arg2='xxxxxx" in info.value.args[0] and len(info.value.args[0]) < 300


@pytest.mark.parametrize("fesb", IMPLS, indirect=True)
def test_any_other_error(fesb, gc_calls):
    @fesb(starting_batch_size=16)
    def mock_training_loop_function(batch_size):
        raise ValueError("Oops, we had an error!")

    with pytest.raises(ValueError) as info:
        mock_training_loop_function()
    assert "Oops, we had an error!" in info.value.args[0]


class ModelForTest(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(3, 4)
        self.batchnorm = nn.BatchNorm1d(4)
        self.linear2 = nn.Linear(4, 5)

    def forward(self, x):
        return self.linear2(self.batchnorm(self.linear1(x)))


@pytest.mark.parametrize("release", IMPLS, indirect=True)
def test_release_memory(release):
    """Accelerate's test_release_memory needs a device (memory_allocated back to where it was); on the CPU:
    the list of Nones, nothing of the model kept once reassigned, and gc run by the call itself."""
    model = ModelForTest()
    alive = weakref.ref(model)
    garbage = ModelForTest()
    garbage.cycle = [garbage]  # only gc.collect() frees this
    dead = weakref.ref(garbage)
    del garbage
    gc.disable()
    try:
        model = release(model)
        assert model == [None]
        assert alive() is None and dead() is None
    finally:
        gc.enable()
    a, b = release(torch.ones(3), torch.ones(3))
    assert (a, b) == (None, None)
    assert release() == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (Accelerate's require_non_cpu)")
def test_release_memory_on_a_device():
    starting_memory = torch.cuda.memory_allocated()
    model = ModelForTest().to("cuda")
    assert torch.cuda.memory_allocated() > starting_memory
    model = shim.release_memory(model)
    assert model == [None] and torch.cuda.memory_allocated() == starting_memory


def accelerate_sizes(start, limit, reduce_fn=None):
    """(sizes tried, outcome) of Accelerate's own decorator on a step that runs out of memory above `limit`."""
    from accelerate.utils.memory import find_executable_batch_size

    return _sizes(lambda f: find_executable_batch_size(f, start, reduce_fn), limit)


def shim_sizes(start, limit, reduce_fn=None):
    return _sizes(lambda f: shim.find_executable_batch_size(f, start, reduce_fn), limit)


def _sizes(decorate, limit):
    tried = []

    def step(batch_size):
        tried.append(batch_size)
        if batch_size > limit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return batch_size

    try:
        return tried, decorate(step)()
    except RuntimeError as exc:
        return tried, str(exc)[:45]


@needs_accelerate
def test_the_same_sizes_as_accelerate_from_any_start(gc_calls):
    cases = [(s, lim) for s in (0, 1, 2, 3, 7, 10, 64, 100, 128, 1000, 4096) for lim in (0, 1, 5, 63, 64, 999)]
    for start, limit in cases:
        assert shim_sizes(start, limit) == accelerate_sizes(start, limit), (start, limit)


@needs_accelerate
def test_the_same_sizes_as_accelerate_with_a_reduce_batch_size_fn(gc_calls):
    def halving():
        state = {"size": 100}

        def reduce():
            state["size"] //= 2
            return state["size"]

        return reduce

    for limit in (0, 3, 30, 100):
        assert shim_sizes(100, limit, halving()) == accelerate_sizes(100, limit, halving()), limit


OOM_TEXTS = [
    "CUDA out of memory. Tried to allocate 20.00 MiB",  # torch.OutOfMemoryError's text
    "XPU out of memory. Tried to allocate 2.00 GiB",
    "CPU out of memory.",
    "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
    "[enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 8",
    "FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed",
]
# counted by the shim only (docs/shim.md: wrapped and other backends' out-of-memory errors)
OOM_TEXTS_SHIM_ONLY = [
    "CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported",
    "NCCL error: unhandled cuda error\nLast error:\nCuda failure 2 'out of memory'",
    "cuBLAS error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
]
NOT_OOM = ["CUDA error: an illegal memory access was encountered", "Oops, we had an error!", "shape mismatch"]


@needs_accelerate
def test_which_errors_count_as_out_of_memory():
    from accelerate.utils.memory import should_reduce_batch_size as theirs

    for text in OOM_TEXTS:
        assert theirs(RuntimeError(text)) and shim.should_reduce_batch_size(RuntimeError(text)), text
    assert theirs(torch.OutOfMemoryError("CUDA out of memory.")) and shim.should_reduce_batch_size(
        torch.OutOfMemoryError("CUDA out of memory.")
    )
    for text in OOM_TEXTS_SHIM_ONLY:
        assert not theirs(RuntimeError(text)) and shim.should_reduce_batch_size(RuntimeError(text)), text
    for text in NOT_OOM:
        assert not theirs(RuntimeError(text)) and not shim.should_reduce_batch_size(RuntimeError(text)), text


def test_the_retry_warning_names_the_callers_line(caplog, gc_calls):
    @shim.find_executable_batch_size(starting_batch_size=4)
    def train(batch_size):
        if batch_size > 2:
            raise_fake_out_of_memory()
        return batch_size

    lineno = current_lineno() + 1
    assert train() == 2
    sites = {(r.filename, r.lineno, r.funcName) for r in caplog.records}
    assert sites == {(os.path.basename(__file__), lineno, "test_the_retry_warning_names_the_callers_line")}
    assert "retrying with batch_size=3" in caplog.records[0].getMessage()


def test_the_probe_messages_name_the_callers_line_with_a_plain_logger(caplog, gc_calls):
    caplog.set_level(logging.INFO)
    log = logging.getLogger("plain")

    def probe(batch_size):
        if batch_size > 5:
            raise_fake_out_of_memory()

    fn = shim.find_executable_batch_size(lambda b: b, starting_batch_size=16, probe=probe, logger=log)
    lineno = current_lineno() + 1
    assert fn() == 5
    assert {(r.filename, r.lineno) for r in caplog.records} == {(os.path.basename(__file__), lineno)}


def test_a_negative_start_is_a_clear_error_when_decorating():
    with pytest.raises(ValueError, match="starting_batch_size"):
        shim.find_executable_batch_size(starting_batch_size=-1)(lambda b: b)
    assert oom._exhausted(4).startswith("No executable batch size found, reached the minimum batch size 4")


# ---------------------------------------------------------------- must show: a 2-rank job under the real torchrun

PEERS_JOB = Path(__file__).parent / "shim_jobs" / "peers.py"


def site(name: str) -> int:
    """Line number of the call marked `# site: NAME` in tests/shim_jobs/peers.py."""
    lines = PEERS_JOB.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.endswith(f"# site: {name}"))


@pytest.mark.slow
def test_must_show_two_ranks_under_torchrun_log_the_callers_line_in_rank_order(tmp_path):
    from tests.shim_helpers import parse_results
    from tests.test_shim_launchers import run, torchrun

    proc, _ = run(torchrun("--standalone", "--nproc-per-node", 2, PEERS_JOB), tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    lines = proc.stdout.splitlines()
    # main_process_only (the default): rank 0's line only, at the caller's file and line
    plain = [line for line in lines if "plain message" in line]
    assert plain == [f"peers.py:{site('plain')} main [rank 0/2 {socket.gethostname()}] plain message from rank 0"]
    # in_order=True: every rank, in rank order, each at the caller's line
    ordered = [line for line in lines if "in-order message" in line]
    assert [line.split()[0] for line in ordered] == [f"peers.py:{site('ordered')}"] * 2, ordered
    assert [line.rsplit(" ", 1)[1] for line in ordered] == ["0", "1"], ordered
    # the OOM retry's warning (rank 1 ran out of memory at 4): at the line that called the decorated function
    retry = [line for line in lines if "retrying with batch_size" in line]
    assert len(retry) == 1 and retry[0].startswith(f"peers.py:{site('retry')} main [rank 0/2 "), retry
    assert "on rank(s) [1]" in retry[0]
    found = sorted(parse_results(proc.stdout), key=lambda r: r["rank"])
    assert found == [{"rank": 0, "released": [None], "batch": 3}, {"rank": 1, "released": [None], "batch": 3}]


# ---------------------------------------------------------------- overflow (transformers debug_utils.py)
# The expected texts below are what transformers' DebugUnderflowOverflow (src/transformers/debug_utils.py @3f7e3145)
# prints for the same model and batches: checked side by side before being written here.

P = " " * 17  # transformers' self.prefix


def tiny_model():
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    with torch.no_grad():
        m[0].weight.copy_(torch.tensor([[0.5, -1.0], [2.0, 0.25]]))
        m[0].bias.fill_(0.125)
        m[2].weight.copy_(torch.tensor([[4.0, -0.5]]))
        m[2].bias.fill_(-2.0)
    return m


def batch_frames(n):
    return [
        "",
        "",
        f"{P} *** Starting batch number={n} ***",
        "abs min  abs max  metadata",
        f"{P} 0 Linear",
        "2.50e-01 2.00e+00 weight",
        "1.25e-01 1.25e-01 bias",
        "1.00e+00 2.00e+00 input[0]",
        "1.38e+00 2.62e+00 output",
        f"{P} 1 ReLU",
        "1.38e+00 2.62e+00 input[0]",
        "0.00e+00 2.62e+00 output",
        f"{P} 2 Linear",
        "5.00e-01 4.00e+00 weight",
        "2.00e+00 2.00e+00 bias",
        "0.00e+00 2.62e+00 input[0]",
        "3.31e+00 3.31e+00 output",
        f"{P}  Sequential",
        "1.00e+00 2.00e+00 input[0]",
        "3.31e+00 3.31e+00 output",
    ]


X2 = torch.tensor([[1.0, 2.0]])


def test_trace_batch_nums_prints_each_batch_with_its_start_line_and_header(capsys):
    """transformers' docstring, mode 2: `trace_batch_nums=[1,3]` traces those whole batches, 0-indexed, each
    beginning with `*** Starting batch number=N ***` and the `abs min  abs max  metadata` header."""
    model = tiny_model()
    shim.DebugUnderflowOverflow(model, trace_batch_nums=[1, 2])
    for _ in range(4):
        model(X2)
    assert capsys.readouterr().out.splitlines() == batch_frames(1) + batch_frames(2)


def test_a_nan_weight_is_reported_as_transformers_reports_it(capsys):
    model = tiny_model()
    shim.DebugUnderflowOverflow(model, max_frames_to_save=2)
    model(X2)
    with torch.no_grad():
        model[2].weight[0, 1] = float("nan")
    with pytest.raises(ValueError, match=r"in the weight of 2 Linear \(batch_number=1\)"):
        model(X2)
    assert capsys.readouterr().out == "\n".join(
        [
            "weight has nans",
            "output has nans",
            "",
            "Detected inf/nan during batch_number=1",
            "Last 2 forward frames:",
            "abs min  abs max  metadata",
            f"{P} 1 ReLU",
            "1.38e+00 2.62e+00 input[0]",
            "0.00e+00 2.62e+00 output",
            f"{P} 2 Linear",
            "     nan      nan weight",
            "2.00e+00 2.00e+00 bias",
            "0.00e+00 2.62e+00 input[0]",
            "     nan      nan output",
            "\n\n\n",
        ]
    )


def test_an_inf_input_is_reported_at_the_first_module_with_its_batch_start(capsys):
    model = tiny_model()
    shim.DebugUnderflowOverflow(model)
    model(X2)
    with pytest.raises(ValueError, match=r"in the input\[0\] of 0 Linear \(batch_number=1\)"):
        model(torch.tensor([[float("inf"), 2.0]]))
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["input[0] has infs", "output has infs"]
    assert f"{P} *** Starting batch number=1 ***" in out and "2.00e+00      inf input[0]" in out


def test_a_nan_weight_that_never_reaches_an_output_is_found():
    """transformers looks at "weight, input or output": a nan in an embedding row no token uses leaves every
    output finite, and is still found (check_weights=False, the cheaper setting, does not see it)."""
    model = nn.Sequential(nn.Embedding(10, 4))
    with torch.no_grad():
        model[0].weight[9] = float("nan")
    ids = torch.tensor([[0, 1, 2]])
    assert torch.isfinite(model(ids)).all()
    dbg = shim.DebugUnderflowOverflow(model)
    with pytest.raises(ValueError, match="in the weight of 0 Embedding"):
        model(ids)
    dbg.remove()
    shim.DebugUnderflowOverflow(model, check_weights=False)
    model(ids)


def test_a_nan_input_a_module_masks_is_found():
    class Masked(nn.Module):
        def forward(self, x):
            return torch.where(torch.isfinite(x), x, torch.zeros_like(x))

    model = nn.Sequential(Masked(), nn.Linear(2, 2))
    x = torch.tensor([[float("nan"), 1.0]])
    assert torch.isfinite(model(x)).all()
    shim.DebugUnderflowOverflow(model)
    with pytest.raises(ValueError, match=r"in the input\[0\] of 0 Masked"):
        model(x)
