"""`clusterdoc why`'s catalogue of the CUDA driver's and runtime's error strings and cuBLAS/cuDNN statuses (session 29):
its rows come after every learned signature and cost the pre-check nothing, each string is read in the forms torch,
NCCL and the enum names print it and nowhere else, and the strings the field splits are candidates, never a verdict
(real lines from the corpus's threads: a GPU busy or not visible was the code's in one thread, the node's in another)."""

from __future__ import annotations

import pytest

from clusterdoc.why import candidates, logread, signatures
from clusterdoc.why.sigtable import (
    catalogue_cuda,
    code,
    desync,
    effect,
    environment,
    hang,
    network,
    node,
    oom,
    peer,
    scheduler,
)
from tests.why_helpers import fixture_log, judge_log, keys_without


def test_the_rows_come_after_the_learned_ones_and_keep_the_pre_check():
    sigs = catalogue_cuda.SIGNATURES
    assert 60 < len(sigs) <= 200
    tables = (code, desync, effect, environment, hang, network, node, oom, peer, scheduler)
    at = {id(s): i for i, s in enumerate(signatures.SIGNATURES)}
    mine = sorted(at[id(s)] for s in sigs)
    assert mine == list(range(mine[0], mine[0] + len(sigs)))  # one block, in the table's order
    assert max(at[id(s)] for t in tables for s in t.SIGNATURES) < mine[0]  # a fallback: every learned one first
    assert signatures._KEYS == keys_without(sigs + catalogue_cuda.UNNAMED)  # no line pays one more check
    assert signatures.SIGNATURES[-1] is catalogue_cuda.UNNAMED[0]  # a CUDA error of no kind a row names: last
    for s in sigs + catalogue_cuda.UNNAMED:
        assert s.name.startswith("cudacat-") and s.meaning and s.next_step and s.source.startswith("https://")
        assert not s.weak or len(candidates.for_signature(s)) >= 2, s.name  # a candidate names what decides
    learned = {n for t in tables for s in t.SIGNATURES for n in s.needles}
    assert not {s.needles[0] for s in sigs} & learned  # a row of its own only where no learned entry reads it


def _row_texts():
    return [(row, kind, text) for row, kind, _, _, text in catalogue_cuda.ROWS if text]


@pytest.mark.parametrize("row, kind, text", _row_texts())
def test_each_string_is_read_as_torch_nccl_and_cupy_print_it(row, kind, text):
    category, weak = catalogue_cuda.CLASSES[kind][:2]
    lines = [f"RuntimeError: CUDA error: {text}"]  # torch's c10/cuda/CUDAException's form
    if row not in catalogue_cuda.TORCH_FORM_ONLY:
        lines += [
            f"node1:12:34 [0] NCCL WARN Cuda failure '{text}'",  # NCCL's CUDACHECK
            f"cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorX: {text}",
        ]
    for line in lines:
        assert any(w.decode() in line for w in logread.WORDS), line  # a big log's prefilter keeps the line
        sig = signatures.match(line)
        assert sig is not None and sig.name.startswith(f"cudacat-{row}-"), (line, sig and sig.name)
        assert (sig.category, sig.weak) == (category, weak)


@pytest.mark.parametrize("row, kind, driver, runtime", [(r[0], r[1], r[2], r[3]) for r in catalogue_cuda.ROWS])
def test_each_enum_name_is_read_anywhere(row, kind, driver, runtime):
    for name in (driver, runtime):
        if name:
            sig = signatures.match(f"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: {name}: at stream.cc:12")
            assert sig is not None and sig.name.startswith(f"cudacat-{row}-"), (name, sig and sig.name)


@pytest.mark.parametrize(
    "line",
    [
        "Bus error: misaligned address",  # the kernel's SIGBUS text, not CUDA's
        "node1:1:1 [0] NCCL INFO NVLS multicast: Cuda failure 'operation not supported', falling back",
        "Epoch 3: the launch timed out and was terminated by the user's watchdog script",  # no CUDA on the line
    ],
)
def test_a_string_without_cuda_on_its_line_or_in_nccl_info_is_not_read(line):
    sig = signatures.match(line)
    assert sig is None or not sig.name.startswith("cudacat-"), sig.name


def _traceback(message: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    loss.backward()\n"
        f"RuntimeError: {message}\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
    )


@pytest.mark.parametrize(
    "message, category",
    [
        ("CUDA error: misaligned address", "code"),  # cudaErrorMisalignedAddress = 716: a kernel's access
        ("CUDA error: operation not permitted when stream is capturing", "code"),  # a CUDA graph's capture
        ("CUDA error: PTX JIT compiler library not found", "environment"),  # libnvidia-ptxjitcompiler not mounted
        ("CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server", "environment"),
        ("CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error", "node"),
    ],
)
def test_a_rank_that_raised_a_catalogued_cuda_error_is_named_by_its_class(message, category):
    # before the catalogue each of these was "a rank raised an exception whose cause may be outside the code"
    c = judge_log(_traceback(message))
    assert c.category == category, c.headline


@pytest.mark.parametrize(
    "message, first",
    [
        ("CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "oom"),
        ("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "oom"),
        ("CUDA error: too many resources requested for launch", "code"),
        ("CUDA error: no CUDA-capable device is detected", "environment"),
    ],
)
def test_a_cuda_error_the_field_splits_is_unknown_with_what_decides(message, first):
    c = judge_log(_traceback(message))
    assert c.category == "unknown", c.headline
    assert c.candidates[0].startswith(first + ":") and len(c.candidates) >= 2, c.candidates


# --- real logs of the corpus whose threads split the same strings (each folder's SOURCES.md has the thread) ---


def test_a_gpu_busy_or_unavailable_is_a_candidate_and_its_rank_s_node_is_named():
    # E3SM-Project/E3SM#8699: the node (nid004069 in every failed job); lattice/quda#606: two ranks on one GPU (the
    # launch's mapping): the same string, two causes; the node comes from Cray MPICH's abort line for that rank
    c = judge_log(fixture_log("real/e3sm-8699-pm-gpu-devices-unavailable-nid004069.log"))
    assert c.category == "unknown" and c.ranks == [2047] and c.nodes == ["nid004069"], (c.headline, c.nodes)
    assert any(k.startswith("node:") for k in c.candidates) and any(k.startswith("code:") for k in c.candidates)
    c = judge_log(fixture_log("heldout-fresh29b/quda-606-devices-busy-same-gpu.log"))
    assert c.category == "unknown" and "no GPU it may use" in c.headline, c.headline


def test_peer_access_not_supported_and_no_device_are_candidates_not_verdicts():
    # open-compass/VLMEvalKit#1036 (the code put both ranks on one GPU); twitter-archive/torch-ipc#11 (a bug of the
    # library's CPU path): environment lines in other threads, the code's in these
    for path in ("heldout-fresh30c/vlmevalkit-1036-nccl-peer-access-217.log",
                 "heldout-fresh6/torchipc-11-no-cuda-device-allreduce.log"):  # fmt: skip
        c = judge_log(fixture_log(path))
        assert c.category == "unknown" and "no GPU it may use" in c.headline, (path, c.headline)
        assert any(k.startswith("code:") for k in c.candidates), c.candidates
