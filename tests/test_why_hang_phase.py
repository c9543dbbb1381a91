"""Issue 41, round 10: which rank was behind, from the phase the log shows the job in. Each excerpt is a real paste
(its source beside it), trimmed to the failing part; each case fails on main's rules (dbcac94). The look-alikes of the
same shape (a real paste each) must not change."""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# a rank whose wait timed out inside the block transformers' TrainingArguments.main_process_first runs: every rank but
# the main one waits at the block's barrier while the main process maps and tokenizes the data; the timeout says the
# main process was still in it
LLAMAFACTORY_1196 = (  # https://github.com/hiyouga/LlamaFactory/issues/1196 (labelled solved)
    '  File "/var/mntpkg/llama2/LLaMA-Efficient-Tuning-update/src/llmtuner/dsets/preprocess.py", line 209, in '
    "preprocess_dataset\n"
    '    with training_args.main_process_first(desc="dataset map pre-processing"):\n'
    '  File "/usr/lib/python3.10/contextlib.py", line 135, in __enter__\n'
    "        work = default_pg.barrier(opts=opts)return next(self.gen)\n"
    "\n"
    '  File "/home/chatgpt/.local/lib/python3.10/site-packages/transformers/training_args.py", line 2035, in '
    "main_process_first\n"
    "RuntimeError: [6] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by "
    "key '0', but store->get('0') got error: Socket Timeout\n"
    "Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:604 (most recent call first):\n"
)


def test_a_wait_timed_out_inside_main_process_first_is_a_hang_on_the_main_process():
    cause = judge_log(LLAMAFACTORY_1196)
    assert cause.category == "hang", cause.headline
    assert list(cause.ranks) == [0], cause.ranks


def test_the_same_wait_outside_main_process_first_stays_unknown_with_the_owner_first():
    # the round-8 reading of the wait alone: rank 0 named, hang first, the category left open
    text = LLAMAFACTORY_1196.replace("main_process_first", "setup_data")
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert cause.candidates[0].startswith("hang: rank 0"), cause.candidates


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/hiyouga/LlamaFactory/issues/7233: main_process_first's barrier failing on NCCL's system
        # error (the container's /dev/shm), no timeout: environment, never a hang
        "[rank1]:     with training_args.main_process_first(desc=\"load dataset\"):\n"
        '[rank1]:   File "/root/miniconda3/envs/llm_demo/lib/python3.10/contextlib.py", line 135, in __enter__\n'
        "[rank1]:     return next(self.gen)\n"
        '[rank1]:   File "/root/miniconda3/envs/llm_demo/lib/python3.10/site-packages/transformers/training_args.py", '
        "line 2496, in main_process_first\n"
        "[rank1]:     dist.barrier()\n"
        '[rank1]:   File "/root/miniconda3/envs/llm_demo/lib/python3.10/site-packages/torch/distributed/'
        'distributed_c10d.py", line 4551, in barrier\n'
        "[rank1]:     work = group.barrier(opts=opts)\n"
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:268, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
        "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
        "error. \n",
        # https://github.com/ultralytics/yolov5/issues/4480: YOLOv5's torch_distributed_zero_first calling a barrier
        # the installed torch does not have (a TypeError: the code and its torch, not a wait)
        "Traceback (most recent call last):\n"
        '  File "train.py", line 98, in train\n'
        "    with torch_distributed_zero_first(RANK):\n"
        '  File "/home/zyc/miniconda3/envs/yolov5/lib/python3.6/contextlib.py", line 81, in __enter__\n'
        "    return next(self.gen)\n"
        '  File "/home/zyc/competition/leaves/yolov53/utils/torch_utils.py", line 38, in torch_distributed_zero_first\n'
        "    dist.barrier(device_ids=[local_rank])\n"
        "TypeError: barrier() got an unexpected keyword argument 'device_ids'\n",
    ],
)
def test_a_main_process_first_block_that_failed_without_a_timeout_is_no_hang(text):
    assert judge_log(text).category != "hang"


# torch before 2.0 spells the ncclUniqueId wait "retreiving" (ChatGLM-6B-1232 and LlamaFactory-81 print it verbatim):
# the same wait, its owner named, hang first
CHATGLM6B_1232 = (  # https://github.com/zai-org/ChatGLM-6B/issues/1232 (open: nothing settled)
    "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store "
    "by key '0', but store->get('0') got error: Socket Timeout\n"
    "Exception raised from recvBytes at /opt/conda/conda-bld/pytorch_1670525552843/work/torch/csrc/distributed/c10d/"
    "Utils.hpp:594 (most recent call first):\n"
)


def test_the_older_spelling_of_the_ncclUniqueId_wait_names_its_owner_and_stays_unknown():
    cause = judge_log(CHATGLM6B_1232)
    assert cause.category == "unknown", cause.headline
    assert "ncclUniqueId" in cause.headline, cause.headline
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith("hang: rank 0"), cause.candidates


# py-spy's dump of a stuck rank, in its own header: where the rank waits, not why (a data iterator's queue, a
# broadcast, backward): unknown, hang first, and what decides (every rank's dump at the same moment)
@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/facebookresearch/fairseq/issues/4816: rank 0 waits in its data iterator's queue
        'Thread 0x7FA6E7C01740 (idle): "MainThread"\n'
        "    wait (threading.py:302)\n"
        "    get (queue.py:170)\n"
        "    __next__ (fairseq/data/iterators.py:648)\n"
        "    train (fairseq_cli/train.py:274)\n",
        # https://github.com/huggingface/transformers/issues/22363: DeepSpeed's model broadcast never returns
        'Thread 27321 (active): "MainThread"\n'
        "    broadcast (torch/distributed/distributed_c10d.py:1555)\n"
        "    wrapper (torch/distributed/distributed_c10d.py:1436)\n"
        "    _broadcast_model (deepspeed/runtime/engine.py:1105)\n",
    ],
)
def test_a_py_spy_dump_alone_is_unknown_with_hang_first(text):
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert "py-spy" in cause.headline, cause.headline
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith("hang: "), cause.candidates
