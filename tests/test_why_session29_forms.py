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


# --- learned from heldout-fresh39{a-h} (35 logs: 15 right, 4 wrong when scored; 25 right, 1 wrong after) ---


def test_an_intel_fortran_traceback_of_unknown_routines_names_no_code():
    # QUICK#45 (the developer: 8 GB is too little for that basis on 4 cores): every forrtl frame "Unknown"
    c = judge_log(fixture_log("heldout-fresh39d/quick-45-mpi-segfault-host-memory.log"))
    assert c.category == "unknown" and "names no routine" in c.headline, c.headline
    assert "oom" in [k.split(":")[0] for k in c.candidates], c.candidates
    # E3SM#3085's frames name radar_simulator_ (the code's): still the code's
    assert judge_log(fixture_log("heldout/e3sm-3085-cosp-radar-segfault-rank2680.log")).category == "code"


def test_a_fabric_endpoint_s_enomem_is_not_the_host_s_memory_and_psm3_without_a_nic_is_the_environment():
    # mpi4py/shmem4py#28 (PSM3 in a container without its NIC; PSM3_DEVICES='self,shm' fixed it)
    c = judge_log(fixture_log("heldout-fresh39h/shmem4py-28-psm3-cant-open-nic-ofi-endpoint.log"))
    assert c.category == "environment" and "PSM3" in c.headline, c.headline
    line = "create_vni_context(982)..: OFI endpoint open failed (ofi_init.c:982:create_vni_context:Cannot allocate memory)"
    assert (signatures.match(line) or signatures.get("python-exception")).category != "oom"


def test_a_library_that_tells_its_caller_the_order_of_calls_is_the_code():
    # UniTraj#23 and SimpleTuner#304: wandb.log on ranks where only rank 0 called wandb.init
    c = judge_log(fixture_log("heldout-fresh39a/unitraj-23-wandb-log-nonzero-rank.log"))
    assert c.category == "code" and "wandb.init()" in c.headline, c.headline


def test_deepspeed_zero_s_refusal_is_the_code_s_request():
    # deepspeedai/DeepSpeed#3810 (a ZeRO checkpoint of 32 ranks loaded by 128: stas00, not supported)
    c = judge_log(fixture_log("heldout-fresh39b/deepspeed-3810-zero-world-size-change.log"))
    assert c.category == "code", c.headline


def test_torch_save_that_cannot_open_its_file_is_a_candidate():
    # ronin#51 (the disk was full): a directory never made reads the same
    c = judge_log(fixture_log("heldout-fresh39b/ronin-51-checkpoint-disk-full.log"))
    assert c.category == "unknown", c.headline


def test_an_invalid_device_ordinal_is_the_launch_s_or_the_code_s():
    # NVIDIA/nccl-tests#165 (more ranks than GPUs: the launch's arguments); cp2k/dbcsr#302 (DBCSR's device choice,
    # fixed in its code): the driver API's name for the same error
    for path in ("heldout-fresh39f/nccl-tests-165-invalid-device-ordinal-slots.log",
                 "heldout-fresh39d/dbcsr-302-cuda-invalid-device-4-ranks.log"):  # fmt: skip
        c = judge_log(fixture_log(path))
        assert c.category == "code" and "GPU index it cannot see" in c.headline, (path, c.headline)


def test_a_build_for_another_gpu_and_a_ucx_setting_no_transport_has_are_the_environment():
    # trilinos/Trilinos#7498 (nodes of another GPU); rapidsai/ucx-py#667 (UCX 1.10's new default); microsoft/CNTK#1047
    # (an old MS-MPI: Windows' delay-load exception)
    for path in ("heldout-fresh39c/trilinos-7498-ride-kokkos-cuda-arch-mismatch.log",
                 "heldout-fresh39g/ucx-py-667-ucx110-sockaddr-cm-enable.log",
                 "heldout-fresh39h/cntk-1047-win32-exception-old-msmpi.log"):  # fmt: skip
        c = judge_log(fixture_log(path))
        assert c.category == "environment", (path, c.headline)


def test_the_rapids_accelerator_s_retry_oom_is_oom():
    # NVIDIA spark-rapids#8090 (jlowe: the GPU ran out of memory; the thread was about the message not saying so)
    c = judge_log(fixture_log("heldout-fresh39g/cudf-spark-8090-splitandretryoom-gpu-oom.log"))
    assert c.category == "oom", c.headline


def test_ucx_s_segfault_handler_is_a_candidate_of_the_code_and_the_mpi_s_gpu_support():
    # hypre-space/hypre#1131 (hypre's GPU-aware MPI path, fixed in hypre); UCX#7845 (VASP's GPU buffers to a UCX
    # without CUDA support): the same handler's line
    c = judge_log(fixture_log("heldout-fresh39c/hypre-1131-struct-gpu-aware-mpi-segv.log"))
    assert c.category == "unknown", c.headline
    assert {"code", "environment"} <= {k.split(":")[0] for k in c.candidates}, c.candidates
