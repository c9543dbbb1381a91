"""`clusterdoc why --log`, session 25 (issue 41): forms the opened sets showed where the category was right and the
culprit the log names was lost, then what heldout-fresh22 showed after it was scored and opened. Each test failed
on the rules before it (148c6b2 for the first); each also checks what must stay."""

from __future__ import annotations

from tests.why_helpers import judge_log

FIX = "tests/fixtures/why/"


def _log(path: str) -> str:
    with open(FIX + path, encoding="utf-8", errors="replace") as f:
        return f.read()


def test_open_mpis_signal_handler_after_a_crash_names_the_node_where_no_launcher_names_a_rank():
    c = judge_log(_log("heldout-fresh18d/hpcnlp-mpi-badalloc.log"))
    assert (c.category, c.nodes) == ("oom", ["hpb0205"]), (c.category, c.nodes, c.headline)
    # mpirun's own line names the rank and node: it wins over the handler's node alone
    both = (
        "terminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\n"
        "[cn01:4242] *** Process received signal ***\n"
        "[cn01:4242] Signal: Aborted (6)\n"
        "[cn01:4242] *** End of error message ***\n"
        "mpirun noticed that process rank 7 with PID 4242 on node cn01 exited on signal 6 (Aborted).\n"
    )
    c = judge_log(both)
    assert (c.category, c.ranks, c.nodes) == ("oom", [7], ["cn01"]), (c.category, c.ranks, c.nodes, c.headline)


def test_a_cuda_oom_on_one_node_names_the_rank_by_its_device_and_not_where_the_job_spans_nodes():
    c = judge_log(_log("heldout-fresh8/llamafactory-6800-dpo-cuda-oom-gpu3.log"))
    assert (c.category, c.ranks) == ("oom", [3]), (c.category, c.ranks, c.headline)
    assert judge_log(_log("heldout-fresh7/ultralytics-19699-ddp-inference-cuda-oom.log")).ranks == [0]
    # rank 11 of a second node holds its node's GPU 3: a rank tag beyond one node's GPUs, no device index taken
    two = (
        "[rank11]: Traceback (most recent call last):\n"
        '[rank11]:   File "train.py", line 9, in <module>\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
        "79.15 GiB of which 1.02 GiB is free.\n"
    )
    c = judge_log(two)
    assert c.category == "oom" and 3 not in c.ranks, (c.category, c.ranks, c.headline)


def test_an_exception_line_the_jobs_progress_bar_went_on_after_is_survived_and_slurms_time_limit_ends_it():
    # conda's activate failing in the batch script; the training then ran two hours into the time limit
    c = judge_log(_log("heldout-fresh22c/polymergnn-soap-timelimit.log"))
    assert c.category == "scheduler" and "time limit" in c.headline, (c.category, c.headline)
    # tqdm's one redraw as the exception ends the job is no progress: the exception stays the cause
    assert judge_log(_log("heldout-fresh16d/llamafactory-251-fp16-loss-scale.log")).category == "code"
    # conda's own error alone is the environment's, not the code's
    alone = "CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.\n"
    assert judge_log(alone).category == "environment"


def test_h5pys_hdf5_back_trace_reads_hdf5s_own_message_under_its_c_frames():
    c = judge_log(_log("heldout-fresh22d/bcbio-nextgen-2707-hdf5-file-locking.log"))
    assert c.category == "environment" and "lock" in c.headline, (c.category, c.headline)
    # a Python frame's source line is still code, not a message: a raise of a CUDA error's words stays the code's
    py = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        '    raise ValueError("file locking disabled on this file system")\n'
        "ValueError: bad input\n"
    )
    assert judge_log(py).category == "code"


def test_kokkos_built_for_another_gpu_amber_past_its_residues_and_mpich_given_mpi_comm_null():
    for log in ("lammps-2086-kokkos-arch-mismatch.log", "kokkos-6092-athenapk-volta72-mismatch.log"):
        c = judge_log(_log("heldout-fresh22d/" + log))
        assert c.category == "environment" and "Kokkos" in c.headline, (log, c.category, c.headline)
    assert judge_log(_log("heldout-fresh22d/radicalpilot-621-sander-more-residues.log")).category == "code"
    c = judge_log(_log("heldout-fresh22d/cime-3247-null-communicator-bcast.log"))
    assert c.category == "code" and "MPI_COMM_NULL" in c.headline, (c.category, c.headline)
    # MPICH's invalid communicator without the null one stays a candidate (another MPI's handle, a header mismatch)
    other = (
        "Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:\nPMPI_Comm_rank(110): Invalid communicator\n"
    )
    assert judge_log(other).category == "unknown"
