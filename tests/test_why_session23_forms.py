"""`clusterdoc why --log`, session 23 (issue 41): forms that heldout-fresh13 (a new pool of threads, sha256 % 3 == 2)
showed after it was scored and opened, each written as the class the tool prints: Python's bare `Exception:` type, the
traceback Python prints under "Exception ignored in" (a destructor's, never what the process died of), a message that
says two installed versions disagree, a wrapper whose message goes on in the next line, Ray's silent worker death, and
libmlx5's completion error. The first three tests and the Ray one failed on the rules before (6d7eb95); the
wrapper's and libmlx5's are guards (what must stay as it was: they passed before and after)."""

from __future__ import annotations

from tests.why_helpers import judge_log

# DeepSpeed's own check of the CUDA toolkit against torch's (deepspeedai/DeepSpeed#1077), its traceback's head cut off
# as the reporter pasted it, then the destructor's traceback Python printed while the process went down
CUDA_MISMATCH = (
    '  File "/usr/local/lib/python3.7/dist-packages/deepspeed/ops/op_builder/builder.py", line 230, in jit_load\n'
    "    assert_no_cuda_mismatch()\n"
    '  File "/usr/local/lib/python3.7/dist-packages/deepspeed/ops/op_builder/builder.py", line 60, in '
    "assert_no_cuda_mismatch\n"
    '    f"Installed CUDA version {sys_cuda_version} does not match the "\n'
    "Exception: Installed CUDA version 11.0 does not match the version torch was compiled with 10.1, unable to compile "
    "cuda/cpp extensions without a matching cuda version.\n"
)
IGNORED = (
    "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f30c6ca0830>\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.7/dist-packages/deepspeed/ops/adam/cpu_adam.py", line 91, in __del__\n'
    "    self.ds_opt_adam.destroy_adam(self.opt_id)\n"
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n"
)


def test_a_bare_exception_that_says_two_installed_versions_disagree_is_the_environment_not_its_destructors_error():
    c = judge_log(CUDA_MISMATCH + IGNORED)
    assert c.category == "environment" and "versions disagree" in c.headline, (c.category, c.headline)


def test_a_traceback_python_ignored_is_never_the_cause_and_a_real_one_after_it_still_is():
    assert judge_log(IGNORED).category == "unknown"
    real = ("Traceback (most recent call last):\n  File \"/w/train.py\", line 3, in <module>\n    x = batch['label']\n"
            "KeyError: 'label'\n")
    c = judge_log(IGNORED + real)
    assert c.category == "code" and "KeyError" in c.headline, (c.category, c.headline)


def test_a_bare_exception_of_the_jobs_own_is_the_code():
    text = ("Traceback (most recent call last):\n  File \"/w/run.py\", line 3, in <module>\n"
            "    raise Exception('dataset shard 7 is empty')\nException: dataset shard 7 is empty\n")
    c = judge_log(text)
    assert c.category == "code" and "shard 7" in c.headline, (c.category, c.headline)


def test_a_wrappers_message_that_goes_on_in_the_next_line_is_what_that_line_says():
    # galaxyproject/pulsar's CI (tests/fixtures/why/real/pulsar-254-ci-sbatch-controller-unreachable.log): the bare
    # type is parsed since this session, and its message ends with ":" where sbatch's own error follows
    text = ("Traceback (most recent call last):\n"
            '  File "/home/runner/work/pulsar/pulsar/pulsar/managers/queued_cli.py", line 44, in launch\n'
            '    raise Exception("Failed to submit job, error was:\\n%s" % cmd_out.stderr)\n'
            "Exception: Failed to submit job, error was:\n"
            "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n")
    assert judge_log(text).category == "scheduler"


RAY_DIED = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
            "troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffffe0f12b8a4c5d1e "
            "Worker ID: "
            "d893621a96e2f86610a449412008b6be271a3f20fb114a86dc99951c Node ID: 8440b9 Worker IP address: 10.1.2.3 "
            "Worker port: 10003 Worker PID: 92234 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
            "unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) "
            "The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. "
            "(3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.\n")
MLX5 = "(RayWorkerWrapper pid=92234, ip=172.19.24.110) mlx5: host_unknown: got completion with error:\n"


def test_a_ray_worker_dead_without_a_word_is_the_oom_killer_unless_the_fabric_failed_beside_it():
    c = judge_log(RAY_DIED)
    assert c.category == "oom", (c.category, c.headline)
    assert judge_log(RAY_DIED + MLX5).category == "unknown"  # openrlhf-621: an IB error as likely


def test_libmlx5s_completion_error_alone_is_a_candidate_and_after_an_oom_kill_an_effect():
    c = judge_log(MLX5 + "00000000 00000000 00000000 00000000\n")
    assert c.category == "unknown" and any("network" in x for x in c.candidates), (c.category, c.candidates)
    kill = ("slurmstepd: error: Detected 1 oom-kill event(s) in step 74331.0 cgroup. Some of your processes may have "
            "been killed by the cgroup out-of-memory handler.\nmlx5: nid001058: got completion with error:\n")
    assert judge_log(kill).category == "oom"


# heldout-fresh14 (the same pool, after the rules above), scored once at 2ee1600, then opened: the loader's words in
# any exception's message, Slurm's ReqNodeNotAvail, HDF5's file lock, a Dask worker that never reached its scheduler,
# a library TensorFlow's coordinator could not load, pyxis's failure to import the image. Each failed on the rules
# before (2ee1600); the guards passed before and after.
def test_the_dynamic_loaders_words_in_any_exceptions_message_are_the_environment():
    # PaddlePaddle/ERNIE#786 (Paddle's own RuntimeError, not an OSError)
    text = ("Traceback (most recent call last):\n  File \"run_classifier.py\", line 40, in main\n"
            "    exe.run(startup_prog)\n"
            "RuntimeError: (PreconditionNotMet) The third-party dynamic library (libnccl.so) that Paddle depends on is "
            "not configured correctly. (error code is libnccl.so: cannot open shared object file: No such file or "
            "directory)\n")
    assert judge_log(text).category == "environment"


def test_a_plugin_nccl_did_not_find_is_no_failure_guard():
    text = ("fedora:2414:2414 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No "
            "such file or directory No plugin found (libnccl-net.so), using internal implementation\n")
    assert judge_log(text).category == "unknown"


def test_slurms_req_node_not_avail_hdf5s_lock_dasks_worker_a_missing_library_and_pyxis_import_are_named():
    cases = {
        "Reason: job blocked error: [jobid=807785] job cancelled because it was blocked due to a perhaps "
        "non-recoverable reason: ReqNodeNotAvail,  UnavailableNodes:nid00[003,033,420-423]\n": "scheduler",
        "HDF5-DIAG: Error detected in HDF5 (1.10.1) thread 0:\n  #000: H5F.c line 491 in H5Fcreate(): unable to "
        "create file\n    major: File accessibilty\n  #003: H5FDsec2.c line 940 in H5FD_sec2_lock(): unable to lock "
        "file, errno = 524, error message = 'Unknown error 524'\n": "environment",
        "distributed.nanny - ERROR - Timed out connecting Nanny '<Nanny: None, threads: 2>' to scheduler "
        "'tcp://10.33.12.15:45049'\n": "network",
        "INFO:tensorflow:Error reported to Coordinator: libnccl.so.2: cannot open shared object file: No such file or "
        "directory\n": "environment",
        "slurmstepd: pyxis: importing docker image ...\nslurmstepd: error: pyxis: child 12004 failed with error code: "
        "1\nslurmstepd: error: pyxis: failed to import docker image\n": "environment",
    }
    for text, category in cases.items():
        c = judge_log(text)
        assert c.category == category, (text, c.category, c.headline)


# heldout-fresh16 (the same pool, after every rule above), scored once at 2c1eba8, then opened: mpirun's SIGKILL line
# under another launcher name, a traceback whose head ran into another line, Ascend's HCCP start failure. Each failed
# on the rules before (2c1eba8).
def test_mpiruns_sigkill_line_under_any_launcher_name_names_the_rank_and_node_and_stays_a_candidate():
    text = ("mpirun.real noticed that process rank 1 with PID 39 on node mpi-test-2-mpijob-worker-1 exited on signal 9 "
            "(Killed).\n")
    c = judge_log(text)
    assert c.category == "unknown" and c.candidates[0].startswith("oom"), (c.category, c.candidates)
    assert c.nodes == ["mpi-test-2-mpijob-worker-1"] and c.ranks == [1], (c.nodes, c.ranks)


def test_a_bare_exception_after_its_raise_line_is_read_when_the_tracebacks_head_ran_into_another_line():
    # hiyouga/LlamaFactory#251: DeepSpeed's fp16 loss scaler gave up (the run's precision: the code's)
    text = ("Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.  File \"/usr/local/lib/"
            "python3.8/dist-packages/deepspeed/runtime/fp16/loss_scaler.py\", line 175, in update_scale\n"
            "    raise Exception(\n"
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n")
    c = judge_log(text)
    assert c.category == "code" and "loss scale" in c.headline, (c.category, c.headline)
    assert judge_log("Exception: something\n").category == "unknown"  # no raise line before it: another tool's word


def test_ascends_hccp_start_failure_is_the_environment():
    text = ("RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n"
            "[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.\n"
            "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training "
            "process is running.\n")
    assert judge_log(text).category == "environment"
