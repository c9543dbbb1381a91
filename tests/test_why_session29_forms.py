"""Forms `clusterdoc why` learned in session 29 from the sealed sets heldout-fresh38{a-h} after their score was
reported (issue 41): each line is real, from the thread beside it; each test failed on the rules before it."""

from __future__ import annotations

from clusterdoc.why import prefix, signatures
from tests.why_helpers import fixture_log, judge_log


def test_a_traceback_under_ray_s_local_worker_prefix_is_read():
    # ray-project/ray#15388 (RLlib's torch_policy passes a float num_gpus to range()): Ray 1.x prints a local
    # worker's lines under "(pid=N) " (no ip); the partial traceback under it was read as no failure
    assert prefix.split("(pid=329) TypeError: 'float' object cannot be interpreted as an integer") == (
        None, None, "TypeError: 'float' object cannot be interpreted as an integer")  # fmt: skip
    assert prefix.split("(RolloutWorker pid=329) Traceback (most recent call last):")[2].startswith("Traceback")
    c = judge_log(fixture_log("heldout-fresh38d/ray-15388-fractional-num-gpus-typeerror.log"))
    assert c.category == "code" and "TypeError: 'float' object" in c.headline, c.headline


def test_transformers_lazy_import_failure_is_the_environment():
    # chaidiscovery/chai-lab#337 (settled in #138: a transformers newer than the installed torch)
    c = judge_log(
        "RuntimeError: Failed to import transformers.models.esm.modeling_esm because of the following error \n"
        "(look up to see its traceback):\n"
        "module 'torch.library' has no attribute 'register_fake'\n"
    )
    assert c.category == "environment", c.headline


def test_a_torch_build_without_libuv_is_the_environment():
    # cocktailpeanut/fluxgym#82 (Windows wheels of torch have no libuv; the TCPStore of a multi-GPU launch asks it)
    c = judge_log(
        "Traceback (most recent call last):\n"
        '  File "torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py", line 55, in next_rendezvous\n'
        "    self._store = TCPStore(  # type: ignore[call-arg]\n"
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n"
    )
    assert c.category == "environment", c.headline


def test_submitit_s_job_that_ran_out_of_time_is_the_scheduler_s():
    # facebookincubator/submitit#1775: the exception states it (timed out, not checkpointable, not requeued)
    c = judge_log(fixture_log("heldout-fresh38b/submitit-1775-array-job-timed-out.log"))
    assert c.category == "scheduler" and "time limit" in c.headline, c.headline


def test_nvrtc_without_the_toolkit_s_headers_is_the_environment_and_the_assert_after_it_an_effect():
    # microsoft/Tutel#163 (CUDA installed outside /usr/local/cuda; CUDA_HOME decides)
    c = judge_log(fixture_log("heldout-fresh38e/tutel-163-nvrtc-cuda-runtime-h-not-found.log"))
    assert c.category == "environment" and "header" in c.headline, c.headline


def test_srun_s_unspecified_task_launch_failure_is_a_candidate():
    # NVIDIA-NeMo/Speech#14829 (--mpi=pmix failed in the cluster's containers; pmi2 worked): SLURM_ERROR's text
    c = judge_log("srun: StepId=<id>.0 aborted before step completely launched.\n"
                  "srun: error: task 0 launch failed: Unspecified error\n")  # fmt: skip
    assert c.category == "unknown", c.headline
    assert [k.split(":")[0] for k in c.candidates] == ["environment", "node"], c.candidates
    assert signatures.match("srun: error: task 3 launch failed: Plugin initialization failed") is None or (
        signatures.match("srun: error: task 3 launch failed: Plugin initialization failed").name
        != "srun-task-launch-unspecified"
    )


def test_specfem_s_exit_mpi_is_the_application_s_own_stop():
    # SPECFEM/specfem2d#1170 (a parameter the maintainer named: IMAIN with simultaneous runs)
    c = judge_log(fixture_log("heldout-fresh38a/specfem2d-1170-simultaneous-runs-imain-abort.log"))
    assert c.category == "code" and "exit_MPI" in c.headline, c.headline


def test_mpi_abort_after_a_cuda_error_without_its_kind_is_not_the_code_for_sure():
    # SPECFEM/specfem3d#1679 (the maintainer: the model is too big for the card): the abort alone is the code's, but
    # here the application aborted on a CUDA error whose kind it did not print
    c = judge_log(fixture_log("heldout-fresh38a/specfem3d-1679-cuda-oom-mpi-abort.log"))
    assert c.category == "unknown", c.headline
    assert {"oom", "code", "node"} <= {k.split(":")[0] for k in c.candidates}, c.candidates


def test_cuda_s_operation_not_supported_is_a_candidate_of_the_node_and_the_code():
    # ggml-org/llama.cpp#3951 (a tensor split that disabled a GPU hit a bug of llama.cpp's, fixed by that PR)
    c = judge_log(fixture_log("heldout-fresh38c/llama.cpp-3951-tensor-split-1-0-cuda-error-801.log"))
    assert c.category == "unknown", c.headline
    assert [k.split(":")[0] for k in c.candidates][:2] == ["environment", "code"], c.candidates
