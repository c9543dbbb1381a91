"""Issue 41, round 9: a job stuck, and who is behind. Each excerpt is a real paste (its source beside it), trimmed
to the failing part; each failed on main's rules (0a4ac11). Look-alikes of the same shape stay unknown."""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# one process's own work (a checkpoint's save, an evaluation) was the last thing said before the others' wait timed
# out: that process kept them waiting
SAVE_THEN_WAIT = [
    # https://github.com/ai2cm/ace/issues/851: the save, then rank 7's watchdog 20 minutes (its timeout) later
    ("2026-02-18T10:28:25.497Z 2026-02-18 10:28:25,496 - root - INFO - Saving latest checkpoint model trained for 3 "
     "complete epochs and 36738 additional batches, or 369000 total batches, with best_validation_loss "
     "0.20325350761413574\n"
     "2026-02-18T10:48:25.681Z [rank7]:[E218 10:48:25.033625188 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=1512677, OpType=ALLREDUCE, NumelIn=306176, NumelOut=306176, "
     "Timeout(ms)=1200000) ran for 1200020 milliseconds before timing out.\n", 0),
]  # fmt: skip


@pytest.mark.parametrize("text, rank", SAVE_THEN_WAIT)
def test_a_save_or_an_evaluation_just_before_the_others_wait_is_a_hang_on_that_rank(text, rank):
    cause = judge_log(text)
    assert cause.category == "hang", cause.headline
    assert list(cause.ranks) == [rank], cause.ranks


# a data-preparation bar not at its end, and the store's socket wait giving up under it: the process preparing the
# data kept the others waiting (tqdm rounds 99.85 % up to "100%": the counts decide)
MEDICALGPT_425 = (  # https://github.com/shibing624/MedicalGPT/issues/425
    "Running tokenizer on dataset (num_proc=10): 100%|█████████▉| 1368806/1370895 [29:46<01:07, 30.89 examples/s]"
    "[rank3]:[W1001 13:40:02.778279096 socket.cpp:428] [c10d] While waitForInput, poolFD failed with (errno: 0 - "
    "Success).\n"
    "[rank1]:[W1001 13:40:02.817983009 socket.cpp:428] [c10d] While waitForInput, poolFD failed with (errno: 0 - "
    "Success).\n"
    "[rank3]: Traceback (most recent call last):\n"
    '[rank3]:     with training_args.main_process_first(desc="Dataset tokenization and grouping"):\n'
)


def test_the_store_socket_giving_up_under_an_unfinished_bar_is_a_hang_on_the_main_process():
    cause = judge_log(MEDICALGPT_425)
    assert cause.category == "hang", cause.headline
    assert list(cause.ranks) == [0], cause.ranks


def test_a_finished_bar_above_the_socket_wait_names_no_one():
    done = MEDICALGPT_425.replace("1368806/1370895", "1370895/1370895")
    assert judge_log(done).category != "hang"


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/xuyuzhuang11/OneBit/issues/8: the save says it finished, then a watchdog (the thread
        # settles nothing: "I think this problem is on specific GPU machine")
        "[torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step5000 is ready now!\n"
        "[rank6]:[E ProcessGroupNCCL.cpp:523] [Rank 6] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=12029440, OpType=_ALLGATHER_BASE, NumelIn=512, NumelOut=4096, Timeout(ms)=1800000) ran for "
        "1808499 milliseconds before timing out.\n",
    ],
)
def test_a_finished_save_before_a_wait_names_no_one(text):
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline


def test_jax_barrier_timeout_names_the_tasks_not_there_and_stays_open():
    # https://github.com/marin-community/levanter/issues/432: the coordination service lists the pending tasks
    # (xla coordination_service.cc); crashed, stuck or never launched is not in the log
    text = (
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
        "multihost_broadcast_sync0. Timed out task names:\n"
        "/job:jax_worker/replica:0/task:3\n"
        "/job:jax_worker/replica:0/task:0\n"
        "\n"
        "Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
        "/tensorflow.CoordinationService/Barrier:\n"
    )
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert sorted(cause.ranks) == [0, 3], cause.ranks
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith("hang: tasks 0, 3"), cause.candidates


def test_gloo_naming_the_rank_a_waiter_lost_names_it_and_stays_open():
    # https://github.com/QwenAudio/CosyVoice/issues/180 (rank 3's lines): gloo names rank 0; stuck, dead or its links
    # is not in these lines (pytorch#83289: the blame can go both ways)
    text = (
        "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting "
        "for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
        " Original exception: \n"
        "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 30000ms for recv operation "
        "to complete\n"
    )
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert list(cause.ranks) == [0], cause.ranks
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith("hang: rank 0"), cause.candidates


# a traceback cutting into a data bar that had run torch's default collective timeout (30 min): another process's
# wait ended there, while the bar's process was still preparing the data
TRANSFORMERS_17106 = (  # https://github.com/huggingface/transformers/issues/17106 (run_clm.py, 4 GPUs, 25 GB)
    "Running tokenizer on dataset:  38%|███▊      | 32066/85249 [32:12<53:25, 16.59ba/s]\n"
    "Running tokenizer on dataset:  38%|███▊      | 32068/85249 [32:13<53:59, 16.42ba/s]Traceback (most recent call "
    "last):\n"
)


def test_a_traceback_cutting_into_a_bar_that_ran_the_default_timeout_is_a_hang_on_the_main_process():
    cause = judge_log(TRANSFORMERS_17106)
    assert cause.category == "hang", cause.headline
    assert list(cause.ranks) == [0], cause.ranks


@pytest.mark.parametrize(
    "text",
    [
        # the same bar 13 s in (https://github.com/shibing624/MedicalGPT/issues/326's shape): the tokenizer's own error
        TRANSFORMERS_17106.replace("[32:", "[00:"),
        # the same traceback ending in an error of its own: that error is the failure, not a wait
        TRANSFORMERS_17106 + '  File "run_clm.py", line 480, in tokenize_function\n'
        "    output = tokenizer(examples[text_column_name])\nKeyError: 'text'\n",
    ],
)
def test_a_traceback_under_a_short_bar_or_with_an_error_of_its_own_is_no_hang(text):
    assert judge_log(text).category != "hang"


@pytest.mark.parametrize(
    "text, first",
    [
        # https://github.com/hiyouga/LlamaFactory/issues/2485: 1 of 8 arrived; the other 7 busy, dead or not started
        ("RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
         "store_based_barrier_key:2 (world_size=8, worker_count=1, timeout=0:30:00)\n", "hang: 7 rank(s)"),
        # https://github.com/AlibabaResearch/efficientteacher/issues/85: more workers than the world joined the store
        ("Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
         "(world_size=2, worker_count=4, timeout=1 day, 0:00:00)\n", "environment: another job"),
        # the TCPStore server's own count (torch TCPStore.cpp's message, as tests/test_why_real_logs.py quotes it)
        ("[rank3]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 3/4 clients "
         "joined.\n", "hang: 1 rank(s)"),
    ],
)  # fmt: skip
def test_the_store_based_barriers_counts_decide_the_candidates(text, first):
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith(first), cause.candidates


@pytest.mark.parametrize(
    "text, first",
    [
        # https://github.com/wenet-e2e/wenet/issues/2552 (and CosyVoice-180, yolov7_d2-66, DEIMv2-65 in the corpus)
        ("2024/06/05 12:08:28 [/opt/conda/conda-bld/pytorch_1702400366987/work/third_party/gloo/gloo/transport/tcp/"
         "unbound_buffer.cc:81] Timed out waiting 30000ms for recv operation to complete\n", "hang: the peer"),
        # https://github.com/AI-Hypercomputer/gpu-recipes/issues/2: the registration barrier, no task named
        ("Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. This "
         "usually happens because a task triggered the barrier too early or too slowly. Please look at the task logs "
         "(both timed out and first task) to debug further.\n", "hang: a task"),
    ],
)  # fmt: skip
def test_a_wait_that_ended_alone_stays_open_with_what_decides(text, first):
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith(first), cause.candidates
