"""`clusterdoc why --log` round 5 (issue 41): classes of failure as a field engineer names them, each in the forms
the tools print (NCCL's CUDACHECK, the OFI and verbs plugins, Ray's death notices, Slurm's and the sites'
refusals, the MPI launchers' own help texts). Each case is a small excerpt of a real log (its thread is named
beside it: tests/fixtures/why/*/SOURCES.md) and a variant in another tool's or version's words.
"""

from __future__ import annotations

import pytest

from clusterdoc.why import foreign, verdict


def _judge(text: str) -> verdict.Cause:
    cause = verdict.judge(foreign.evidence_from_output(text, "1")).cause
    assert cause is not None
    return cause


# --- memory exhausted, however the error that carries it is worded ---
NCCL_CUDA_OOM = (  # peft-1703: NCCL 2.19's CUDACHECK puts the error's number first, as the ncclUnhandledCudaError's detail
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, unhandled cuda error (run with "
    "NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "Last error:\n"
    "Cuda failure 2 'out of memory'\n"
)


@pytest.mark.parametrize(
    "text",
    [
        NCCL_CUDA_OOM,
        # NCCL 2.18 and older: the WARN line (trtllm-1670)
        "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n",
        # mmdet-1767: spawned workers unpickling their arguments, their lines glued together
        "    self = reduction.pickle.load(from_parent)MemoryError\nMemoryErrorTraceback (most recent call last):\n",
        # Python's bare MemoryError at a traceback's end, and numpy's
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    x = load()\nMemoryError\n',
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 28.6 GiB for an array with shape (3840, 1000000)\n",
    ],
)
def test_memory_exhausted_inside_another_error_is_oom(text):
    assert _judge(text).category == "oom"


def test_a_cuda_failure_that_is_not_memory_is_not_oom():
    text = NCCL_CUDA_OOM.replace("Cuda failure 2 'out of memory'", "Cuda failure 700 'an illegal memory access'")
    assert _judge(text).category != "oom"
