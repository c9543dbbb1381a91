"""`clusterdoc why --log`, session 27 (issue 41): forms read in heldout-fresh31 after it was scored. Each test failed
on the rules before it (08ce740); each also checks what must stay."""

from __future__ import annotations

from tests.why_helpers import fixture_log as _log
from tests.why_helpers import judge_log


def _tb(*lines: str) -> str:
    return 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n' + "\n".join(lines) + "\n"


def test_apex_without_its_cuda_extensions_is_the_install_not_the_code():
    # gpt-neox#1165: apex's own RuntimeError, raised in site-packages under the code's get_optimizer
    c = judge_log(_log("heldout-fresh31b/gpt-neox-1165-apex-without-cuda-extensions.log"))
    assert c.category == "environment" and "apex" in c.headline, (c.category, c.headline)
    for kind in ("FusedLAMB", "FusedSGD"):  # apex's other fused optimizers print the same
        assert judge_log(_tb(f"RuntimeError: apex.optimizers.{kind} requires cuda extensions")).category == "environment"
    # a RuntimeError of the code's own that says nothing of extensions stays the code's
    assert judge_log(_tb("RuntimeError: the optimizer requires a learning rate")).category == "code"


def test_mpich_out_of_communicators_is_the_program_that_never_frees_them():
    c = judge_log(_log("heldout-fresh31e/dla-future-712-too-many-communicators.log"))
    assert c.category == "code" and "communicators" in c.headline, (c.category, c.headline)
    assert "MPI_Comm_free" in c.next_step


def test_hpe_mpt_of_another_version_than_the_programs_build_is_the_environment():
    c = judge_log(_log("heldout-fresh31e/cime-3028-mpt-version-mismatch.log"))
    assert c.category == "environment" and "MPT" in c.headline, (c.category, c.headline)


def test_ucx_ud_timeout_is_the_link_or_the_peers_node_never_one_of_them_alone():
    c = judge_log(_log("heldout-fresh31e/noresm-558-ucx-ud-endpoint-timeout.log"))
    assert c.category == "unknown", (c.category, c.headline)
    assert [x.split(":")[0] for x in c.candidates] == ["network", "node"], c.candidates
    assert c.nodes == ["b5270"], c.nodes  # UCX's prefix [host:pid:thread:tid] names the node that printed it


def test_torch_distributed_launch_reporting_a_rank_sigkilled_is_the_oom_killer_as_torchruns():
    c = judge_log(_log("heldout-fresh31f/mmsegmentation-1181-repeatdataset-sigkill.log"))
    assert c.category == "oom", (c.category, c.headline)
    # a time limit in the same log: the scheduler's kill, so no longer the OOM killer's alone
    limit = "slurmstepd: error: *** JOB 123 ON n1 CANCELLED AT 2021-05-01T10:00:00 DUE TO TIME LIMIT ***\n"
    text = _log("heldout-fresh31f/mmsegmentation-1181-repeatdataset-sigkill.log") + limit
    assert judge_log(text).category != "oom"


def test_lightning_asking_gpus_it_cannot_see_is_a_candidate_and_its_misuse_the_code():
    c = judge_log(_log("heldout-fresh31f/ray-lightning-64-cpu-head-gpu-workers-misconfig.log"))
    assert c.category == "unknown", (c.category, c.headline)
    assert [x.split(":")[0] for x in c.candidates] == ["environment", "code"], c.candidates
    # any other MisconfigurationException is a misuse of Lightning's API: the code's (not a library's own type)
    misuse = _tb(
        "lightning_fabric.utilities.exceptions.MisconfigurationException: `Trainer(val_check_interval=2.0)` was "
        "passed a float greater than 1.0"
    )
    assert judge_log(misuse).category == "code"


def test_aws_libfabric_plugin_without_a_fabric_device_or_registering_memory_is_the_environment():
    # heldout-fresh32b: EFA not passed to the container (aws-ofi-nccl#1020); the libfabric of an old EFA installer
    # under NCCL 2.19+ (aws-ofi-nccl#584, awsome-distributed-training#203)
    c = judge_log(_log("heldout-fresh32b/aws-ofi-nccl-1020-fi-getinfo-no-efa-devices-in-container.log"))
    assert c.category == "environment" and "ip-172-31-3-90" in c.headline, (c.category, c.headline)
    for f in ("aws-ofi-nccl-584-ofi-register-mr-nccl219-old-libfabric", "awsome-distributed-ai-203-ofi-register-mr-efa-installer"):
        c = judge_log(_log(f"heldout-fresh32b/{f}.log"))
        assert c.category == "environment" and "EFA installer" in c.next_step, (f, c.category, c.headline)
    # the plugin's own words when no provider works (aws/aws-ofi-nccl src/nccl_ofi_net.cpp)
    line = "ip-10-0-0-1:12:12 [0] NCCL WARN NET/OFI Unable to find a protocol that worked.  Failing initialization.\n"
    assert judge_log(line).category == "environment"
    # a transfer the fabric could not deliver stays the network's
    line = "NCCL WARN NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE).\n"
    assert judge_log(line).category == "network"


def test_cudas_illegal_instruction_is_the_gpu_or_a_kernel_a_candidate():
    c = judge_log(_log("heldout-fresh32c/darknet-5547-cuda-illegal-instruction-bad-gpu.log"))
    assert c.category == "unknown", (c.category, c.headline)
    assert [x.split(":")[0] for x in c.candidates] == ["node", "code"], c.candidates
    # an illegal memory access stays the code's
    assert judge_log("RuntimeError: CUDA error: an illegal memory access was encountered\n").category == "code"


def test_an_extensions_gpu_op_built_without_cuda_is_the_install():
    # mmcv's ops (ConsistentTeacher#24: fixed by rebuilding mmcv), DCNv2's "Not compiled with GPU support"
    for msg in (
        "RuntimeError: DeformConv is not compiled with GPU support",
        "RuntimeError: Not compiled with GPU support",
        "RuntimeError: modulated deform conv is not compiled with GPU support (modulated_deform_conv_forward at "
        "basicsr/models/ops/dcn/src/deform_conv_ext.cpp:120)",
    ):
        assert judge_log(_tb(msg)).category == "environment", msg
    # an op the code calls on the wrong device says so otherwise, and stays the code's
    assert judge_log(_tb("RuntimeError: DeformConv is not implemented on CPU")).category == "code"


def test_an_exception_that_asks_for_a_package_is_the_install_whatever_its_type():
    # HunyuanWorld-Voyager#5 (heldout-fresh33b): an AssertionError of the code's own frame, its words a missing package
    c = judge_log(_log("heldout-fresh33b/hunyuanworld-voyager-5-xfuser-missing.log"))
    assert c.category == "environment" and "package" in c.next_step, (c.category, c.headline)
    for msg in (
        "RuntimeError: flash_attn is not installed. Run pip install flash-attn --no-build-isolation",
        "ValueError: This model needs the bitsandbytes library. Please install it.",
        "AssertionError: Ring attention requires the yunchang package",
    ):
        assert judge_log(_tb(msg)).category == "environment", msg
    # the same types with other words stay the code's: "required" and "package" alone say nothing of an install
    for msg in (
        "AssertionError: a package of 3 items is required",
        "ValueError: the tokenizer requires a pad token",
        "KeyError: 'install_dir'",
    ):
        assert judge_log(_tb(msg)).category == "code", msg


def test_transformers_older_than_the_model_and_cudnn_of_another_version_are_the_install():
    # transformers' Auto classes not knowing the tokenizer or the architecture: settled by upgrading transformers
    # (hyn2028/llm-cxr#8, transformers#22222) or installing sentencepiece (transformers#9250)
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/home/sxjiang/project/InternVL/test_chat.py", line 13, in <module>\n'
        "    tokenizer = AutoTokenizer.from_pretrained(path)\n"
        '  File "/home/sxjiang/miniconda3/envs/internvl/lib/python3.9/site-packages/transformers/models/auto/'
        'tokenization_auto.py", line 784, in from_pretrained\n'
        "    raise ValueError(\n"
        "ValueError: Tokenizer class InternLM2Tokenizer does not exist or is not currently imported.\n"
    )
    assert judge_log(tb).category == "environment"
    for msg in (
        "ValueError: The checkpoint you are trying to load has model type `qwen2` but Transformers does not recognize "
        "this architecture. This could be because of an issue with the checkpoint, or because your version of "
        "Transformers is out of date.",
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime "
        "version (8, 5, 0).",
        "AssertionError: libcuda.so cannot found!",
    ):
        assert judge_log(_tb(msg)).category == "environment", msg
    # CUDA's errors through Triton, and cuDNN finding no algorithm, are candidates as torch's CUDA errors are
    for msg in (
        "RuntimeError: Triton Error [CUDA]: invalid device context",
        "RuntimeError: GET was unable to find an engine to execute this computation",
    ):
        assert judge_log(_tb(msg)).category == "unknown", msg
    # a KeyError of the model type alone says nothing of which transformers: the code's, as any KeyError
    assert judge_log(_tb("KeyError: 'qwen2'")).category == "code"
