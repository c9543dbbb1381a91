"""Issue 41, round 7: the ranks' disagreement in each library's own words (desync), and memory exhausted as the
kernel, MPI, compiled runtimes and GPU codes print it (oom). Each excerpt is the tool's own message (its source is
in the signature's entry); each class has look-alikes that must not match."""

from __future__ import annotations

import pytest

from clusterdoc.why import foreign, logread, signatures, verdict
from tests.why_helpers import judge_log

@pytest.mark.parametrize(
    "text, ranks",
    [
        # torch's ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL), its second line alone (the first wrapped off)
        ("[rank1]:   Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST\n", [1]),
        # DDP's verify_params_across_processes: rank 1 built a wider layer than rank 0
        (
            'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'
            "    model = DDP(model, device_ids=[rank])\nRuntimeError: [1]: params[0] in this process with sizes "
            "[96, 32] appears not to match sizes of the same param in process 0.\n",
            [1],
        ),
        # DDP's _verify_param_shape_across_processes: a different number of parameters
        (
            "[rank0]: RuntimeError: DDP expects same model across all ranks, but Rank 0 has 162 params, while rank 1 "
            "has inconsistent 161 params.\n",
            [0],
        ),
        # DeepSpeed's assert_ints_same_as_other_ranks (ZeRO's partition counts): a RuntimeError, not the code's bug
        (
            '[rank3]: Traceback (most recent call last):\n[rank3]:   File "deepspeed/runtime/zero/utils.py", line 60, '
            "in assert_ints_same_as_other_ranks\n[rank3]: RuntimeError: disagreement between rank0 and rank3: rank0: "
            "[1024, 4], rank3: [1020, 4]\n",
            [3],
        ),
        # gloo's pair.cc: a message larger than the receiving rank expected
        (
            "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n  what():  [enforce fail at "
            "/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 6232 vs 4\n",
            [],
        ),
        # Open MPI's error class (salilab/imp#758) and MPICH's text (madness#113)
        (
            "[udp012400uds:91098] *** An error occurred in MPI_Recv\n[udp012400uds:91098] *** reported by process "
            "[3691035461887983617,0]\n[udp012400uds:91098] *** on communicator MPI_COMM_WORLD\n"
            "[udp012400uds:91098] *** MPI_ERR_TRUNCATE: message truncated\n",
            [],
        ),
        (
            "Fatal error in MPI_Irecv: Message truncated, error stack:\nMPIDI_CH3U_Request_unpack_uebuf(611): Message "
            "truncated; 16 bytes received but buffer size is 8\n",
            [],
        ),
        ("mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated\n", []),
    ],
)
def test_the_ranks_disagreement_in_each_librarys_words_is_desync(text, ranks):
    cause = judge_log(text)
    assert (cause.category, list(cause.ranks)) == ("desync", ranks), cause.headline


@pytest.mark.parametrize(
    "text, rank",
    [
        ("RuntimeError: disagreement between rank0 and rank5: rank0: [1024, 4], rank5: [1020, 4]\n", 5),
        ("RuntimeError: [2]: params[0] in this process with sizes [96, 32] appears not to match sizes of the same "
         "param in process 0.\n", 2),
    ],
)  # fmt: skip
def test_the_rank_a_consistency_check_names_is_the_culprit(text, rank):
    cause = judge_log(text)
    assert (cause.category, cause.ranks) == ("desync", [rank]), cause.headline


def test_ddp_reading_zero_params_from_a_rank_is_a_candidate_the_rank_behind_first():
    """'inconsistent 0 params': the rank never joined DDP's check (behind in its data setup, or a backend that
    passed nothing) as often as it built no model: unknown, hang first, desync among the candidates."""
    cause = judge_log("RuntimeError: DDP expects same model across all ranks, but Rank 1 has 338 params, while rank 0 "
                   "has inconsistent 0 params.\n")  # fmt: skip
    assert cause.category == "unknown"
    assert cause.candidates[0].startswith("hang") and any(c.startswith("desync") for c in cause.candidates)


@pytest.mark.parametrize(
    "text",
    [
        # Horovod's stall inspector: the same rank missing from every op (horovod-534's form)
        (
            "[1,1]<stderr>:[2018-10-01 10:45:55.141569: W horovod/common/operations.cc:621] One or more tensors were "
            "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
            "ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors "
            "or that only subset of ranks is submitting tensors, which will cause deadlock.\n"
            "[1,1]<stderr>:Stalled ops:\n[1,1]<stderr>:HorovodBroadcast_fc_weights_0 [missing ranks: 0]\n"
            "[1,1]<stderr>:HorovodBroadcast_fc_biases_0 [missing ranks: 0]\n"
        ),
    ],
)
def test_horovods_missing_ranks_name_the_rank_and_leave_hang_or_desync_open(text):
    """Horovod's own warning says the missing ranks are behind or submit other tensors; its list cannot tell."""
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.ranks == [0], cause.headline
    assert cause.candidates[0].startswith("hang") and cause.candidates[1].startswith("desync")


@pytest.mark.parametrize(
    "text",
    [
        "Out of memory: Kill process 41528 (python) score 913 or sacrifice child\n",
        "Memory cgroup out of memory: Kill process 2217 (python3) score 1000 or sacrifice child\n",
        "[12345.678] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,task=python,"
        "pid=1234,uid=1000\n",
        "[12345.679] oom_reaper: reaped process 1234 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n",
        "[node01:01234] *** MPI_ERR_NO_MEM: out of memory\n",
        "Operating system error: Cannot allocate memory\nAllocation would exceed memory limit\n",
        "cudaMalloc failed: out of memory\n",
        "amrex::Abort::0::Out of gpu memory. Free: 0 Asking: 1073741824 Bytes !!!\n",
        # the forms round 5 and 6 learned, in other schedulers' and runtimes' words
        "=>> PBS: job killed: vmem 47483621376b exceeded limit 42949672960b\n",
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\n",
        'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n',
        "ERROR: LoadError: OutOfMemoryError()\n",
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n",
    ],
)
def test_memory_exhausted_in_the_hpc_fields_words_is_oom(text):
    assert judge_log(text).category == "oom"


def test_cray_mpichs_out_of_memory_names_the_rank_from_its_srun_label():
    """E3SM-1217 on Cori: ROMIO's allocation check under cray-mpich, behind srun's label; MPI_Abort after it."""
    text = ("129: MOSART decomp info proc =       129 begr =    174151 endr =    175500 numr =      1350\n"
            "129: Out of memory in file /notbackedup/tmp/ulib/mpt_base/mpich2/src/mpi/romio/adio/ad_cray/"
            "ad_cray_write_coll.c, line 486\n129: Rank 129 [Thu Jan 12 17:19:30 2017] [c9-0c1s7n3] application called "
            "MPI_Abort(MPI_COMM_WORLD, 1) - process 129\n129: forrtl: error (76): Abort trap signal\n")  # fmt: skip
    cause = judge_log(text)
    assert (cause.category, cause.ranks) == ("oom", [129]), cause.headline


@pytest.mark.parametrize(
    "text",
    [
        "Exited with exit code 137.\n",  # LSF's report of a SIGKILL: a memory limit, the OOM killer or a kill -9
        "exit_status  137\n",  # SGE's qacct
    ],
)
def test_exit_code_137_is_a_candidate_with_the_oom_killer_first(text):
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates[0].startswith("oom"), cause.headline


@pytest.mark.parametrize(
    "text, not_category",
    [
        # hints and warnings a healthy job prints: not a verdict
        ("#$ -l h_vmem=4G\n", "oom"),
        ("WARNING: this job may run out of memory with --batch-size 64\n", "oom"),
        ("malloc(): corrupted top size\n", "oom"),  # glibc's heap corruption: the code's, not memory exhausted
        ("exit_status  0\n", "oom"),
        ("Exited with exit code 1.\n", "oom"),
        # Open MPI's openib BTL: the locked-memory limit (ulimit -l), not memory exhausted
        ("The OpenFabrics (openib) BTL failed to initialize while trying to\nallocate some locked memory.\n", "oom"),
        # NCCL's socket transport's own truncation stays its entry; a log line about truncated output is nothing
        ("WARNING: the output was truncated to 1000 lines\n", "desync"),
        ("[rank0]: DDP expects same model across all ranks\n", "code"),
    ],
)
def test_look_alikes_are_not_that_class(text, not_category):
    cause = verdict.judge(foreign.evidence_from_output(text, "1")).cause
    assert cause is None or cause.category != not_category


def test_round_7s_words_pass_the_big_logs_prefilter():
    names = ("torch-collectives-differ", "ddp-param-sizes", "ddp-param-count", "deepspeed-rank-disagreement",
        "gloo-size-mismatch", "mpi-truncate", "mpich-truncate", "kernel-oom-kill-process",
        "kernel-oom-constraint", "kernel-oom-reaper", "mpi-err-no-mem", "mpich-out-of-memory-in-file",
        "gfortran-alloc", "cudamalloc-oom", "amrex-gpu-oom", "exit-code-137", "sge-exit-137")  # fmt: skip
    by_name = {s.name: s for s in signatures.SIGNATURES}
    for name in names:
        line = by_name[name].learned.encode()
        assert any(w in line for w in logread.WORDS), name
