"""`clusterdoc why --log`, session 25 (issue 41): forms the opened sets showed where the category was right and the
culprit the log names was lost, then what heldout-fresh22, heldout-fresh23 and heldout-fresh24 showed after each was
scored and opened. Each test failed on the rules before it (148c6b2 for the first two, 7caa98d for heldout-fresh22's,
17daebc for heldout-fresh23's, dc82f93 for heldout-fresh24's, 3f49ebb for heldout-fresh25's); each also checks
what must stay."""

from __future__ import annotations

from tests.why_helpers import fixture_log as _log
from tests.why_helpers import judge_log


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
    # conda's own error alone is a candidate of the environment's (heldout-fresh25: the script goes on), not the code's
    alone = "CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.\n"
    c = judge_log(alone)
    assert c.category == "unknown" and c.candidates[0].startswith("environment"), (c.category, c.candidates)


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


def _cause(path: str):
    return judge_log(_log(path))


def test_a_name_that_did_not_resolve_and_a_failed_string_to_number_are_candidates_not_the_code():
    # the worker pod started before its master's service name resolved: the launch's timing, not the script
    c = _cause("heldout-fresh23d/pytorch-operator-125-worker-host-not-found.log")
    assert c.category == "unknown" and c.candidates, (c.category, c.headline)
    # ALCF's tile wrapper under DAOS's interception library: stoul read a value the log does not show
    c = _cause("heldout-fresh23h/alcfdocs-daos-gpu-tile-compact-stoul.log")
    assert c.category == "unknown", (c.category, c.headline)
    # a C++ exception that says what was wrong stays the code's
    own = "terminate called after throwing an instance of 'std::invalid_argument'\n  what():  bad mesh size -3\n"
    assert judge_log(own).category == "code"


def test_enomem_under_a_verbs_completion_queue_is_the_fabrics_setup_not_the_hosts_memory():
    c = _cause("heldout-fresh23f/ucx-551-cq-cqe-size.log")
    assert c.category == "unknown" and "completion queue" in c.headline, (c.category, c.headline)
    assert judge_log("OSError: [Errno 12] Cannot allocate memory\n").category == "oom"


def test_a_sigfpe_is_the_programs_arithmetic_and_spectres_block_names_its_rank_not_a_pe_slurm_ended():
    c = _cause("heldout-fresh23f/spectre-3565-fpe-no-terminate.log")
    assert (c.category, c.ranks) == ("code", [92]), (c.category, c.ranks, c.headline)


def test_a_python_warning_that_a_part_failed_to_load_is_no_environment_fault_the_oom_after_it_is():
    c = _cause("heldout-fresh23g/second-order-optim-cuda-oom.log")
    assert c.category == "oom", (c.category, c.headline)
    # the same undefined symbol raised (an ImportError) is the environment's
    raised = "ImportError: /x/image.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev\n"
    assert judge_log(raised).category == "environment"


def test_the_fabrics_and_nccls_setup_forms_of_heldout_fresh23():
    assert _cause("heldout-fresh23d/aws-ofi-nccl-663-insert-remote-address-av.log").category == "network"
    assert _cause("heldout-fresh23d/azhpc-images-327-ncv4-graph-file-dev-not-found.log").category == "environment"
    for log in ("nccl-379-topo-injection-cpu-arch.log", "aws-ofi-nccl-785-p5-static-topo-file.log"):
        c = _cause("heldout-fresh23d/" + log)  # an NCCL bug in one thread, the plugin's file in the other
        assert c.category == "unknown" and "topology" in c.headline, (log, c.category, c.headline)
    assert _cause("heldout-fresh23h/alcfdocs-sycl-free-memory-sysman.log").category == "environment"


def test_bash_unable_to_parse_the_batch_script_is_the_scripts_own_error_not_the_find_errors_before_it():
    c = _cause("heldout-fresh24h/congrads-slurm-script-syntax-error.log")
    assert c.category == "code" and "batch script" in c.headline, (c.category, c.headline)
    # the script's missing command stays the environment's
    missing = "/var/spool/slurm/d/job416385/slurm_script: line 4: _toil_worker: command not found\n"
    assert judge_log(missing).category == "environment"


def test_a_batch_scripts_shell_errors_before_slurms_time_limit_did_not_end_the_job():
    # conda's activate, then two hours of training: the time limit (two committed logs)
    assert _cause("heldout-fresh25e/smilesvae-train-timelimit.log").category == "scheduler"
    # a broken line continuation (`--batch_size: command not found`), then 47 epochs: the time limit
    assert _cause("heldout-fresh25g/animalclef-slurm-timelimit.log").category == "scheduler"
    # without a time limit after it, the script's missing command stays the environment's
    missing = "/var/spool/slurmd/job9/slurm_script: line 19: --batch_size: command not found\n"
    assert judge_log(missing).category == "environment"


def test_a_wrappers_exception_gives_way_to_the_workers_own_after_it():
    c = _cause("heldout-fresh25f/domainadaptation-dataparallel-cuda-oom.log")
    assert c.category == "oom", (c.category, c.headline)
    # the wrapper alone (its worker's traceback cut) stays the exception it names
    alone = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 9, in <module>\n'
        "    for batch in loader:\n"
        "KeyError: Caught KeyError in DataLoader worker process 0.\n"
    )
    assert judge_log(alone).category == "code"


def test_a_missing_variable_a_missing_output_folder_and_flash_attn_undefined_are_the_environments():
    c = _cause("heldout-fresh25h/modulardsca-env-keyerror.log")
    assert c.category == "environment" and "variable" in c.headline, (c.category, c.headline)
    assert _cause("heldout-fresh25f/quantizedae-mpirun-save-dir-missing.log").category == "environment"
    assert _cause("heldout-fresh25b/openchat-52-flash-attn-varlen-nameerror.log").category == "environment"
    # a KeyError of the code's own dict stays the code's
    own = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        '    lr = cfg["lr"]\n'
        "KeyError: 'lr'\n"
    )
    assert judge_log(own).category == "code"


def test_contested_lines_are_candidates_a_missing_script_an_illegal_access_in_nccls_watchdog_a_broken_download():
    for log in (
        "heldout-fresh25a/hunyuanvideo-102-parallel-script-missing.log",
        "real/romp-230-launch-module-as-file.log",
    ):
        c = _cause(log)  # three threads settled the tree it ran in, four the command
        assert c.category == "unknown" and [k.split(":")[0] for k in c.candidates[:2]] == ["code", "environment"], (
            log,
            c.candidates,
        )
    c = _cause("heldout-fresh25c/isaaclab-4011-nccl-illegal-memory-access.log")
    assert c.category == "unknown" and any(k.startswith("environment") for k in c.candidates), c.candidates
    assert _cause("heldout-fresh25f/modulerefinement-gprofiler-connection-broken.log").category == "unknown"
    # the illegal access in the code's own call stays the code's
    own = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert judge_log(own).category == "code"
