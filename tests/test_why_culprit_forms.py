"""The forms a log names a failure's culprit in (issue 41, item 2; docs/why.md "Culprit forms (session 20)"): one
small excerpt per form, in the printing tool's own words (its source in a comment), and beside each a line of the
same form that names no culprit (another rank's info line, a device index, a host that only ran `cat`)."""

from __future__ import annotations

from tests.why_helpers import judge_log

OOM = (
    "CUDA out of memory. Tried to allocate 824.00 MiB (GPU 0; 7.93 GiB total capacity; 4.71 GiB already allocated; "
    "362.38 MiB free; 5.77 GiB reserved in total by PyTorch)"
)


def test_determined_rank_prefix():
    # Determined's launch wrapper prefixes each worker's line "[rank=N] " (after its container tag, here empty):
    # determined-ai/determined#5418 (tests/fixtures/why/real/determined-5418-rank0-cuda-oom-8gb.log)
    c = judge_log(f"[] [rank=0] RuntimeError: {OOM}\n")
    assert (c.category, c.ranks) == ("oom", [0])
    c = judge_log(f"[rank=3] || RuntimeError: {OOM}\n")
    assert c.ranks == [3]


def test_torch_rank_prefix_with_its_bracket_cut():
    # torch's "[rank1]: " with the "[" lost at the line's start (huggingface/diffusers#7897)
    c = judge_log("rank1]: torch.cuda.OutOfMemoryError: " + OOM + "\n")
    assert (c.category, c.ranks) == ("oom", [1])
    # inside a word it is no prefix
    assert judge_log("xrank1]: torch.cuda.OutOfMemoryError: " + OOM + "\n").ranks == []


TB5 = (
    "[rank5]: Traceback (most recent call last):\n"
    '[rank5]:   File "/w/pretrain_qwen.py", line 278, in <module>\n'
    "[rank5]:     pretrain(\n"
    '[rank5]:   File "/w/megatron/training/training.py", line 600, in setup_model_and_optimizer\n'
)


def test_exception_line_takes_the_one_rank_whose_traceback_is_next_to_it():
    # an unprefixed copy of the error above [rank5]'s traceback (alibaba/Pai-Megatron-Patch#409)
    c = judge_log("torch.OutOfMemoryError: " + OOM + "\n\n" + TB5)
    assert (c.category, c.ranks) == ("oom", [5])


def test_exception_line_takes_no_rank_where_two_ranks_have_tracebacks_or_the_traceback_is_far():
    two = TB5 + TB5.replace("rank5", "rank6")
    assert judge_log("torch.OutOfMemoryError: " + OOM + "\n" + two).ranks == []
    far = "torch.OutOfMemoryError: " + OOM + "\n" + "step 9 loss 0.1\n" * 12 + TB5
    assert judge_log(far).ranks == []
    # a rank's info lines are no traceback: the line stays without a rank
    info = "[rank0]: step 9 loss 0.1\n[rank0]: step 10 loss 0.1\ntorch.OutOfMemoryError: " + OOM + "\n"
    assert judge_log(info).ranks == []


END = "slurmstepd: error: *** {} ON a02-10 CANCELLED AT 2024-10-24T05:31:53 DUE TO TIME LIMIT ***\n"


def test_slurmstepd_time_limit_names_its_node():
    # slurmstepd's end line (src/slurmd/slurmstepd/req.c: "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***"),
    # harvardinformatics/snparcher#227; the step's line alone, and the job's
    c = judge_log(END.format("STEP 26605857.0"))
    assert (c.category, c.nodes) == ("scheduler", ["a02-10"])
    c = judge_log(END.format("STEP 26605857.0") + END.format("JOB 26605857"))
    assert (c.category, c.nodes) == ("scheduler", ["a02-10"])


GPU_LOST = "Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error\n"


def test_node_fault_printed_at_a_hosts_prompt_names_that_host():
    # nvidia-smi run at the node's own shell prompt (lyulyul/shine-cluster#171; rwth-i6/returnn#1486, zsh's prompt)
    c = judge_log("(htranstrack) wangcui@hoth:~/shared/STGTrack$ nvidia-smi\n" + GPU_LOST)
    assert (c.category, c.nodes) == ("node", ["hoth"])
    c = judge_log("zeyer@cn-234 ~ % nvidia-smi\n" + GPU_LOST)
    assert (c.category, c.nodes) == ("node", ["cn-234"])
    c = judge_log("[user@gpu3 ~]$ nvidia-smi -q\n" + GPU_LOST)  # bash's default prompt on RHEL
    assert (c.category, c.nodes) == ("node", ["gpu3"])


def test_a_prompt_before_another_command_names_no_node():
    # the output of `cat` (a job's log read on a login node) is not the login node's
    c = judge_log("user@login1:~$ cat slurm-1.out\n" + GPU_LOST)
    assert (c.category, c.nodes) == ("node", [])
    # a later prompt with another command ends the host command's output
    c = judge_log("user@gpu3:~$ nvidia-smi\nok\nuser@gpu3:~$ ssh gpu4 cat /tmp/x.log\n" + GPU_LOST)
    assert c.nodes == []


def test_slurm_prolog_failure_names_its_node():
    # salloc's and srun's own line when the node's prolog fails (AMDResearch/hpcfund#69)
    c = judge_log(
        "salloc: Prolog failure on node k003-006\nsalloc: Job allocation 235454 has been revoked.\n"
        "salloc: error: Job allocation 235454 has been revoked\n"
    )
    assert (c.category, c.nodes) == ("node", ["k003-006"])


def test_open_mpi_peer_host_is_the_node_lost_not_the_local_host():
    # Open MPI's help-mpi-btl-tcp.txt [peer hung up] (horovod/horovod#1950): the peer named, not the printer
    c = judge_log(
        "An MPI communication peer process has unexpectedly disconnected.  This\n"
        "usually indicates a failure in the peer process (e.g., a crash or\n"
        "otherwise exiting without calling MPI_FINALIZE first).\n\n"
        "  Local host: reco-zl-c4-reco313\n  Local PID:  7720\n  Peer host:  reco-zl-c4-reco316\n"
    )
    assert c.nodes == ["reco-zl-c4-reco316"]


def test_memory_kill_takes_mpiruns_signal_9_rank_and_node():
    # Open MPI's mpirun then slurmstepd's oom_kill count (chombo-discharge/chombo-discharge#501)
    c = judge_log(
        "mpirun noticed that process rank 18596 with PID 1035144 on node b3168 exited on signal 9 (Killed).\n"
        "256 total processes killed (some possibly by mpirun during cleanup)\n"
        "slurmstepd: error: Detected 88 oom_kill events in StepId=1103245.batch. Some of the step tasks have been "
        "OOM Killed.\n"
    )
    assert (c.category, c.ranks, c.nodes) == ("oom", [18596], ["b3168"])
    # another signal on mpirun's line is no memory kill's rank
    c = judge_log(
        "mpirun noticed that process rank 3 with PID 1 on node b1 exited on signal 11 (Segmentation fault).\n"
        "slurmstepd: error: Detected 1 oom_kill event in StepId=1.batch. Some of the step tasks have been "
        "OOM Killed.\n"
    )
    assert 3 not in c.ranks


def test_mp_spawn_process_exited_names_its_process():
    # torch/multiprocessing/spawn.py: "process %d terminated with signal %s" (Megvii-BaseDetection/YOLOX#76)
    c = judge_log(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 130, in join\n'
        "    raise ProcessExitedException(\n"
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n"
    )
    assert (c.category, c.ranks) == ("oom", [1])


def test_nccls_device_index_is_no_rank():
    # NCCL's "host:pid:tid [dev]": the [3] is a device (the host is named, no rank)
    c = judge_log("gpu-7:1234:1290 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n")
    assert c.ranks == []


def test_mpich_pmi_client_abort_names_its_rank():
    # MPICH's simple PMI client: PMIU_printf's "[cli_N]: " (its PMI rank) before "aborting job:" (rokko/rokko#257)
    stack = (
        "Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:\n"
        "PMPI_Comm_rank(110): MPI_Comm_rank(comm=0x0, rank=0x654928) failed\n"
        "PMPI_Comm_rank(68).: Invalid communicator\n"
    )
    assert judge_log(stack + "[cli_3]: aborting job:\n" + stack).ranks == [3]
    # the error stack alone names no rank (the comm and rank fields are pointers, not ranks)
    assert judge_log(stack).ranks == []
